//! The built-in Rust rules, one file per rule with its Markdown docs beside it. A rule is a
//! pure function of a document (or of the whole repository) that returns findings; the engine
//! stamps ids and severities and applies suppressions.
//!
//! Adding a rule: the rule file (and its `.md`), a fixtures folder under
//! `testdata/rules/<group>/<name>/`, a `pub mod` line and a
//! `RULES` entry in its group's `mod.rs`.

pub mod argocd;
pub mod ci;
pub mod diff;
pub mod internal;

pub use crate::rule::{
    Context, FixAvailability, OptionKind, Options, Payload, Reads, Rule, RuleMeta, RuleOption,
    RuleOptions,
};
