//! gitops-lint: a fast, exact policy/lint static analyzer for GitOps repositories.
//!
//! Modules depend one way: `engine → rules → model → yaml/source`; `report` renders an
//! engine [`engine::Report`]; only the binary writes to the terminal.

#![deny(clippy::print_stdout, clippy::print_stderr)]

pub mod config;
pub mod diagnostic;
pub mod engine;
pub mod fix;
pub mod fixer;
pub mod model;
pub mod policy;
pub mod registry;
pub mod repo;

pub mod report;
pub mod rule;
pub mod rules;
pub mod source;
pub mod suppress;
pub mod yaml;

pub const VERSION: &str = env!("CARGO_PKG_VERSION");
