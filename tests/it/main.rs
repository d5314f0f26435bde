//! One integration-test binary (fast linking): fixtures, registry, CLI.

mod architecture;
mod argocd_schema;
mod bench_generator;
mod cli;
mod config;
mod diff;
mod diff_comment;
mod docs_site;
mod fix;
mod fixtures;
mod formats;
mod graph_html;
mod helm_charts;
mod hostile;
mod integrations;
mod kustomize;
mod lsp;
mod policies;
mod registry;
mod relint;
mod scope;
mod security;
mod support;
