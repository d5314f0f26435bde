//! The built-in Rust rules, one file per rule with its Markdown docs beside it. A rule is a
//! pure function of a document (or of the whole repository) that returns findings; the engine
//! stamps ids and severities and applies suppressions.
//!
//! Adding a rule: the rule file (and its `.md`), a fixtures folder under
//! `testdata/rules/<group>/<name>/`, and one line in its group's `rule_group!` list.

/// Declares a group's rule modules and its sorted list of rules: one line per rule.
macro_rules! rule_group {
    ($($module:ident :: $rule:ident),* $(,)?) => {
        $(pub mod $module;)*
        /// This group's rules, sorted by id (a test keeps it so).
        pub static RULES: &[&dyn crate::rule::Rule] = &[$(&$module::$rule),*];
    };
}

pub mod argocd;
pub mod ci;
pub mod internal;

pub use crate::rule::{
    Context, FixAvailability, OptionKind, Rule, RuleMeta, RuleOption, RuleOptions,
};
