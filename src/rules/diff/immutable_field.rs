//! `diff/immutable-field`: the change edits a field the API server refuses to change on an
//! existing object, so Argo CD's sync fails with `field is immutable`.

use crate::diagnostic::{Finding, Severity};
use crate::model::diff::{Change, Changes};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct ImmutableField;

static META: RuleMeta = RuleMeta {
    id: "diff/immutable-field",
    summary: "the change edits a field Kubernetes does not allow to change on an existing object",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("immutable_field.md"),
};

/// The immutable fields of each kind (as the API server's validation of an update has them).
fn immutable(kind: &str) -> &'static [&'static [&'static str]] {
    match kind {
        "Deployment" | "DaemonSet" | "ReplicaSet" => &[&["spec", "selector"]],
        "StatefulSet" => &[
            &["spec", "selector"],
            &["spec", "serviceName"],
            &["spec", "volumeClaimTemplates"],
            &["spec", "podManagementPolicy"],
        ],
        "Job" => &[
            &["spec", "selector"],
            &["spec", "template"],
            &["spec", "completionMode"],
        ],
        "Service" => &[&["spec", "clusterIP"]],
        "PersistentVolumeClaim" => &[
            &["spec", "storageClassName"],
            &["spec", "accessModes"],
            &["spec", "volumeName"],
            &["spec", "selector"],
        ],
        _ => &[],
    }
}

impl Rule for ImmutableField {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_diff(&self, changes: &Changes, _cx: &Context<'_>) -> Vec<Finding> {
        let mut out = Vec::new();
        for app in &changes.apps {
            for o in app.objects.iter().filter(|o| o.change == Change::Modified) {
                let (Some(b), Some(h)) = (&o.base, &o.head) else {
                    continue;
                };
                for path in immutable(&o.key.kind) {
                    let (old, new) = (super::at(&b.node, path), super::at(&h.node, path));
                    let (Some(old), Some(new)) = (old, new) else {
                        continue;
                    };
                    // A Service's clusterIP may be set where it was empty (allocated).
                    if o.key.kind == "Service" && old.as_str().is_none_or(str::is_empty) {
                        continue;
                    }
                    let Some(changed) = super::first_difference(old, new) else {
                        continue;
                    };
                    out.push(
                        Finding::new(
                            format!(
                                "this change edits `{}` of {} (Application `{}`), which Kubernetes does not allow to change: the sync fails with `field is immutable`",
                                path.join("."),
                                super::describe(&o.key),
                                app.name
                            ),
                            changed.span,
                        )
                        .with_help(
                            "give the object a new name, or let Argo CD replace it (`argocd.argoproj.io/sync-options: Replace=true`, which deletes and recreates it).",
                        ),
                    );
                }
            }
        }
        out
    }
}
