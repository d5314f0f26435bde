//! One integration-test binary (fast linking): fixtures, registry, CLI.

mod argocd_schema;
mod cli;
mod fix;
mod fixtures;
mod formats;
mod hostile;
mod integrations;
mod policies;
mod registry;
mod security;
mod support;
