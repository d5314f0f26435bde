//! Rules the engine itself reports: unreadable files, YAML problems, suppression hygiene.
//! They have metadata and docs like any rule, so they can be configured and explained.

use crate::diagnostic::Severity;
use crate::rule::{FixAvailability, Reads, Rule, RuleMeta};

macro_rules! internal_rule {
    ($ty:ident, $id:literal, $sev:expr, $summary:literal, $doc:literal) => {
        pub struct $ty;
        impl $ty {
            /// The rule's id, for the engine that reports it.
            pub const ID: &'static str = $id;
        }
        impl Rule for $ty {
            fn meta(&self) -> &'static RuleMeta {
                static META: RuleMeta = RuleMeta {
                    id: $id,
                    summary: $summary,
                    default_severity: $sev,
                    fix: FixAvailability::None,
                    reads: Reads::NONE,
                    applies_to: &[],
                    options: &[],
                    docs: include_str!(concat!("internal/", $doc)),
                };
                &META
            }
        }
    };
}

internal_rule!(
    IoUnreadable,
    "io/unreadable",
    Severity::Error,
    "a file could not be read as UTF-8 text, so it was not checked",
    "io_unreadable.md"
);
internal_rule!(
    LintFixFailed,
    "lint/fix-failed",
    Severity::Warning,
    "a fix could not be applied safely, so the finding it was for remains",
    "lint_fix_failed.md"
);
internal_rule!(
    LintUnusedSuppression,
    "lint/unused-suppression",
    Severity::Warning,
    "a suppression comment that suppresses nothing",
    "lint_unused_suppression.md"
);
internal_rule!(
    PolicyEvaluationError,
    "policy/evaluation-error",
    Severity::Error,
    "a Rego policy rule failed to evaluate (error, time limit, malformed result)",
    "policy_evaluation_error.md"
);
internal_rule!(
    YamlDuplicateKey,
    "yaml/duplicate-key",
    Severity::Error,
    "a mapping repeats a key; only the last value is used",
    "yaml_duplicate_key.md"
);
internal_rule!(
    YamlResourceLimit,
    "yaml/resource-limit",
    Severity::Error,
    "a file exceeds a parsing limit (alias expansion, nesting depth)",
    "yaml_resource_limit.md"
);
internal_rule!(
    YamlSyntax,
    "yaml/syntax",
    Severity::Error,
    "a file is not valid YAML",
    "yaml_syntax.md"
);

/// The engine's own rules, sorted by id.
pub static RULES: &[&dyn Rule] = &[
    &IoUnreadable,
    &LintFixFailed,
    &LintUnusedSuppression,
    &PolicyEvaluationError,
    &YamlDuplicateKey,
    &YamlResourceLimit,
    &YamlSyntax,
];
