//! Rules on what a change does to what Argo CD deploys: run by `gitops-lint diff` only
//! ([`crate::rule::Rule::check_diff`]), on [`crate::model::diff::Changes`]. A finding lands in
//! the head revision: at the node that sets the dangerous value (a values line, a template or
//! patch line), or, for what the change removes, at the Application that deployed it.

pub mod cascade_delete;
pub mod cluster_admin_binding;
pub mod immutable_field;
pub mod large_change;
pub mod mutable_image_tag;
pub mod prune_enabled_shrink;
pub mod removed_stateful;
pub mod scaled_to_zero;
pub mod suspended;

use crate::model::diff::{AppChange, Change, Changes, ObjectKey};
use crate::rules::Context;
use crate::source::{FileId, Span};
use crate::yaml::Node;

/// This group's rules, sorted by id (a test keeps it so).
pub static RULES: &[&dyn crate::rule::Rule] = &[
    &cascade_delete::CascadeDelete,
    &cluster_admin_binding::ClusterAdminBinding,
    &immutable_field::ImmutableField,
    &large_change::LargeChange,
    &mutable_image_tag::MutableImageTag,
    &prune_enabled_shrink::PruneEnabledShrink,
    &removed_stateful::RemovedStateful,
    &scaled_to_zero::ScaledToZero,
    &suspended::Suspended,
];

/// Where a finding about an Application goes at head: its `metadata.name`; for one the change
/// removes, the Application that deployed it (app-of-apps), else the start of the first file.
pub(crate) fn app_anchor(changes: &Changes, app: &AppChange, cx: &Context<'_>) -> Option<Span> {
    if let Some(h) = &app.head {
        return Some(h.name_span);
    }
    let parent = changes.apps.iter().find(|a| {
        a.head.is_some()
            && a.objects.iter().any(|o| {
                o.change == Change::Removed && o.key.kind == "Application" && o.key.name == app.name
            })
    });
    if let Some(p) = parent.and_then(|p| p.head.as_ref()) {
        return Some(p.name_span);
    }
    (!cx.repo.sources.files().is_empty()).then(|| Span::empty(FileId(0), 0))
}

/// "PersistentVolumeClaim `db/data`".
pub(crate) fn describe(key: &ObjectKey) -> String {
    if key.namespace.is_empty() {
        format!("{} `{}`", key.kind, key.name)
    } else {
        format!("{} `{}/{}`", key.kind, key.namespace, key.name)
    }
}

/// The node at `path` (keys) under `node`.
pub(crate) fn at<'n>(node: &'n Node, path: &[&str]) -> Option<&'n Node> {
    path.iter().try_fold(node, |n, k| n.get(k))
}

/// The pod template's spec of a workload: `spec.template.spec`, a CronJob's
/// `spec.jobTemplate.spec.template.spec`, a Pod's `spec`.
pub(crate) fn pod_spec<'n>(kind: &str, node: &'n Node) -> Option<&'n Node> {
    match kind {
        "Pod" => at(node, &["spec"]),
        "CronJob" => at(node, &["spec", "jobTemplate", "spec", "template", "spec"]),
        "Deployment"
        | "StatefulSet"
        | "DaemonSet"
        | "ReplicaSet"
        | "Job"
        | "ReplicationController" => at(node, &["spec", "template", "spec"]),
        _ => None,
    }
}

/// The first node of `new` that differs from `old` (in document order): a changed scalar, an
/// added key's value, or the collection that lost an entry. `None` when they are equal.
pub(crate) fn first_difference<'n>(old: &Node, new: &'n Node) -> Option<&'n Node> {
    if let (Some(o), Some(n)) = (old.as_map(), new.as_map()) {
        for e in n {
            let key = e.key.to_json();
            match o.iter().find(|x| x.key.to_json() == key) {
                Some(x) => {
                    if let Some(d) = first_difference(&x.value, &e.value) {
                        return Some(d);
                    }
                }
                None => return Some(&e.value),
            }
        }
        return (o.len() != n.len()).then_some(new);
    }
    if let (Some(o), Some(n)) = (old.as_seq(), new.as_seq()) {
        for (i, item) in n.iter().enumerate() {
            match o.get(i) {
                Some(x) => {
                    if let Some(d) = first_difference(x, item) {
                        return Some(d);
                    }
                }
                None => return Some(item),
            }
        }
        return (o.len() != n.len()).then_some(new);
    }
    (old.to_json() != new.to_json()).then_some(new)
}
