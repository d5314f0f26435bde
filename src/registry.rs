//! The rule registry: every rule the engine can run, Rust built-ins (`rules/`) and the shipped
//! Rego pack (`rules/*.rego`, compiled by `policy::pack`), with their metadata. `rules`,
//! `explain`, `init`, configuration, suppression and the reporters all read it, so Rust and
//! Rego rules need no special case anywhere.

use crate::rule::{Rule, RuleMeta};
use crate::rules;

/// Every built-in Rust rule, sorted by id (each group's list is sorted, and groups are
/// concatenated in id order; a test keeps it so).
pub fn builtin() -> impl Iterator<Item = &'static dyn Rule> {
    rules::argocd::RULES
        .iter()
        .chain(rules::ci::RULES)
        .chain(rules::diff::RULES)
        .chain(rules::internal::RULES)
        .copied()
}

/// The shipped Rego rules, sorted by id.
pub fn pack() -> impl Iterator<Item = &'static dyn Rule> {
    crate::policy::pack::get()
        .rules
        .iter()
        .map(|r| r as &'static dyn Rule)
}

/// Every registered rule, Rust and Rego, sorted by id.
#[must_use]
pub fn all() -> Vec<&'static dyn Rule> {
    let mut all: Vec<&'static dyn Rule> = builtin().chain(pack()).collect();
    all.sort_by_key(|r| r.meta().id);
    all
}

/// Metadata of every rule, sorted by id.
#[must_use]
pub fn all_meta() -> Vec<&'static RuleMeta> {
    all().into_iter().map(|r| r.meta()).collect()
}

#[must_use]
pub fn find(id: &str) -> Option<&'static RuleMeta> {
    builtin()
        .chain(pack())
        .map(|r| r.meta())
        .find(|m| m.id == id)
}

/// Ids of user policies (`policy/<package>/<rule>`, or any id a policy result names) are only
/// known at run time: configuration and suppressions accept them without checking.
#[must_use]
pub fn is_dynamic_policy_id(id: &str) -> bool {
    id.starts_with("policy/") && find(id).is_none()
}
