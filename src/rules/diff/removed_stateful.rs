//! `diff/removed-stateful`: the change removes an object whose deletion loses data or
//! everything in it (a PersistentVolumeClaim, a StatefulSet, a Namespace, a CRD).

use crate::diagnostic::{Finding, Severity};
use crate::model::diff::{Change, Changes};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct RemovedStateful;

static META: RuleMeta = RuleMeta {
    id: "diff/removed-stateful",
    summary: "the change removes a PersistentVolumeClaim, StatefulSet, Namespace or CustomResourceDefinition that Argo CD deploys",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("removed_stateful.md"),
};

/// What deleting each kind takes with it.
fn loses(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "PersistentVolumeClaim" => "its volume's data (with the default `Delete` reclaim policy)",
        "StatefulSet" => {
            "its pods, and its volumes when `persistentVolumeClaimRetentionPolicy` deletes them"
        }
        "Namespace" => "every object in the namespace",
        "CustomResourceDefinition" => "every custom resource of that kind, in every namespace",
        _ => return None,
    })
}

impl Rule for RemovedStateful {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_diff(&self, changes: &Changes, cx: &Context<'_>) -> Vec<Finding> {
        let mut out = Vec::new();
        for app in &changes.apps {
            // An Application removed without a cascading finalizer leaves what it deployed.
            if app.head.is_none() && !app.base.as_ref().is_some_and(|b| b.cascade) {
                continue;
            }
            let Some(anchor) = super::app_anchor(changes, app, cx) else {
                continue;
            };
            for o in app.objects.iter().filter(|o| o.change == Change::Removed) {
                let Some(loss) = loses(&o.key.kind) else {
                    continue;
                };
                let origin = o.base.as_ref().map_or("", |b| b.origin.as_str());
                let when = match &app.head {
                    Some(h) if h.prune => "on its next sync (automated prune)",
                    Some(_) => "when it is synced with pruning",
                    None => "as the Application is deleted (resources finalizer)",
                };
                out.push(
                    Finding::new(
                        format!(
                            "this change removes {} from Application `{}`: Argo CD deletes it {when}, and with it {loss}",
                            super::describe(&o.key),
                            app.name
                        ),
                        anchor,
                    )
                    .with_help(format!(
                        "it was deployed from {origin}; if it must survive, keep it, or annotate it `argocd.argoproj.io/sync-options: Prune=false` before removing it."
                    )),
                );
            }
        }
        out
    }
}
