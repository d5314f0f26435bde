//! `diff/large-change`: the change touches more deployed objects than a reviewer can follow.

use crate::diagnostic::{Finding, Severity};
use crate::model::diff::Changes;
use crate::rule::rule_options;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct LargeChange;

static META: RuleMeta = RuleMeta {
    id: "diff/large-change",
    summary: "the change adds, removes or modifies more deployed objects than `max_objects`",
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: Options::DECLARED,
    docs: include_str!("large_change.md"),
};

rule_options! {
    /// The options of [`META`].
    pub struct Options {
        /// The most objects a change may touch (default 50).
        pub max_objects: Option<u64> =>
            "the most deployed objects one change may add, remove or modify (default: 50)",
    }
}

impl Rule for LargeChange {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_diff(&self, changes: &Changes, cx: &Context<'_>) -> Vec<Finding> {
        let max = cx.options::<Options>().max_objects.unwrap_or(50);
        let n = changes.changed_objects();
        if u64::try_from(n).unwrap_or(u64::MAX) <= max {
            return Vec::new();
        }
        let apps = changes
            .apps
            .iter()
            .filter(|a| !a.objects.is_empty())
            .count();
        let Some(first) = changes.apps.iter().find(|a| !a.objects.is_empty()) else {
            return Vec::new();
        };
        let Some(anchor) = super::app_anchor(changes, first, cx) else {
            return Vec::new();
        };
        vec![
            Finding::new(
                format!(
                    "this change touches {n} deployed objects in {apps} Application{} (more than {max})",
                    if apps == 1 { "" } else { "s" }
                ),
                anchor,
            )
            .with_help("split it into changes a reviewer can follow, or raise `max_objects` for this repository."),
        ]
    }
}
