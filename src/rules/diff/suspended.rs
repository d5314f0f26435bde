//! `diff/suspended`: the change stops what ran by itself: a CronJob's schedule or a Job
//! (`spec.suspend: true`), or an Application's automated sync.

use crate::diagnostic::{Finding, Severity};
use crate::model::diff::{Change, Changes};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct Suspended;

static META: RuleMeta = RuleMeta {
    id: "diff/suspended",
    summary: "the change suspends a CronJob or a Job, or turns off an Application's automated sync",
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("suspended.md"),
};

impl Rule for Suspended {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_diff(&self, changes: &Changes, _cx: &Context<'_>) -> Vec<Finding> {
        let suspended = |n: &crate::yaml::Node| {
            super::at(n, &["spec", "suspend"]).and_then(crate::yaml::Node::as_bool) == Some(true)
        };
        let mut out = Vec::new();
        for app in &changes.apps {
            if let (Some(b), Some(h)) = (&app.base, &app.head)
                && b.auto_sync
                && !h.auto_sync
            {
                out.push(
                    Finding::new(
                        format!(
                            "this change turns off automated sync of Application `{}`: Argo CD no longer applies what is merged to it, nor undoes drift, until someone syncs it by hand",
                            app.name
                        ),
                        h.sync_policy_span.unwrap_or(h.name_span),
                    )
                    .with_help(
                        "if the pause is intended, say how long in the merge request; otherwise keep `syncPolicy.automated`.",
                    ),
                );
            }
            for o in app.objects.iter().filter(|o| o.change == Change::Modified) {
                if o.key.group != "batch" || !matches!(o.key.kind.as_str(), "CronJob" | "Job") {
                    continue;
                }
                let (Some(b), Some(h)) = (&o.base, &o.head) else {
                    continue;
                };
                let Some(node) = super::at(&h.node, &["spec", "suspend"]) else {
                    continue;
                };
                if !suspended(&h.node) || suspended(&b.node) {
                    continue;
                }
                let what = if o.key.kind == "CronJob" {
                    "no Job is started on its schedule until it is resumed"
                } else {
                    "its running Pods are deleted and none is started until it is resumed"
                };
                out.push(
                    Finding::new(
                        format!(
                            "this change suspends {} (Application `{}`): {what}",
                            super::describe(&o.key),
                            app.name
                        ),
                        node.span,
                    )
                    .with_help(
                        "if the pause is intended, say how long in the merge request; otherwise set `suspend: false`.",
                    ),
                );
            }
        }
        out
    }
}
