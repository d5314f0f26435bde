//! Rules about CI definitions (GitLab CI, GitHub Actions) that drive a GitOps repository.

pub mod script_not_string;
pub mod writeback_skip_ci;

/// This group's rules, sorted by id (a test keeps it so).
pub static RULES: &[&dyn crate::rule::Rule] = &[
    &script_not_string::ScriptNotString,
    &writeback_skip_ci::WritebackSkipCi,
];
