//! `diff/scaled-to-zero`: the change sets `replicas: 0` on a workload that ran.

use crate::diagnostic::{Finding, Severity};
use crate::model::diff::{Change, Changes};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct ScaledToZero;

static META: RuleMeta = RuleMeta {
    id: "diff/scaled-to-zero",
    summary: "the change scales a workload to zero replicas",
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("scaled_to_zero.md"),
};

impl Rule for ScaledToZero {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_diff(&self, changes: &Changes, _cx: &Context<'_>) -> Vec<Finding> {
        let replicas = |n: &crate::yaml::Node| {
            super::at(n, &["spec", "replicas"]).and_then(|r| r.to_json().as_i64())
        };
        let mut out = Vec::new();
        for app in &changes.apps {
            for o in app.objects.iter().filter(|o| o.change == Change::Modified) {
                let (Some(b), Some(h)) = (&o.base, &o.head) else {
                    continue;
                };
                let Some(node) = super::at(&h.node, &["spec", "replicas"]) else {
                    continue;
                };
                // Absent replicas mean 1 for the workload kinds that have the field.
                if replicas(&h.node) != Some(0) || replicas(&b.node).unwrap_or(1) == 0 {
                    continue;
                }
                out.push(
                    Finding::new(
                        format!(
                            "this change scales {} (Application `{}`) to zero replicas",
                            super::describe(&o.key),
                            app.name
                        ),
                        node.span,
                    )
                    .with_help(
                        "if the outage is intended, say so in the merge request; otherwise restore the replica count.",
                    ),
                );
            }
        }
        out
    }
}
