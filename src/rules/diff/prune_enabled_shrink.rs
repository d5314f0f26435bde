//! `diff/prune-enabled-shrink`: the change turns on automated pruning of an Application in the
//! same change that removes objects from it.

use crate::diagnostic::{Finding, Severity};
use crate::model::diff::{Change, Changes};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct PruneEnabledShrink;

static META: RuleMeta = RuleMeta {
    id: "diff/prune-enabled-shrink",
    summary: "the change turns on automated pruning of an Application while removing objects from it",
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("prune_enabled_shrink.md"),
};

impl Rule for PruneEnabledShrink {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_diff(&self, changes: &Changes, _cx: &Context<'_>) -> Vec<Finding> {
        let mut out = Vec::new();
        for app in &changes.apps {
            let (Some(b), Some(h)) = (&app.base, &app.head) else {
                continue;
            };
            if b.prune || !h.prune {
                continue;
            }
            let removed: Vec<String> = app
                .objects
                .iter()
                .filter(|o| o.change == Change::Removed)
                .map(|o| super::describe(&o.key))
                .collect();
            if removed.is_empty() {
                continue;
            }
            out.push(
                Finding::new(
                    format!(
                        "this change turns on automated pruning of Application `{}` while {} ({}): Argo CD deletes {} on the next sync",
                        app.name,
                        if removed.len() == 1 {
                            "1 object leaves it".to_string()
                        } else {
                            format!("{} objects leave it", removed.len())
                        },
                        removed.join(", "),
                        if removed.len() == 1 { "it" } else { "them" }
                    ),
                    h.name_span,
                )
                .with_help(
                    "turn pruning on in a change of its own, once the Application is in sync, so that what it deletes is reviewed.",
                ),
            );
        }
        out
    }
}
