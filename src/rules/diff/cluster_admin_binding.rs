//! `diff/cluster-admin-binding`: the change binds a subject to `cluster-admin` cluster-wide.

use crate::diagnostic::{Finding, Severity};
use crate::model::diff::{Change, Changes};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::yaml::Node;

pub struct ClusterAdminBinding;

static META: RuleMeta = RuleMeta {
    id: "diff/cluster-admin-binding",
    summary: "the change adds a ClusterRoleBinding to `cluster-admin`",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("cluster_admin_binding.md"),
};

fn binds_cluster_admin(n: &Node) -> bool {
    super::at(n, &["roleRef", "name"]).and_then(Node::as_str) == Some("cluster-admin")
        && super::at(n, &["roleRef", "kind"]).and_then(Node::as_str) == Some("ClusterRole")
}

impl Rule for ClusterAdminBinding {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_diff(&self, changes: &Changes, _cx: &Context<'_>) -> Vec<Finding> {
        let mut out = Vec::new();
        for app in &changes.apps {
            for o in &app.objects {
                if o.key.kind != "ClusterRoleBinding" || o.change == Change::Removed {
                    continue;
                }
                let Some(h) = &o.head else { continue };
                if !binds_cluster_admin(&h.node)
                    || o.base
                        .as_ref()
                        .is_some_and(|b| binds_cluster_admin(&b.node))
                {
                    continue;
                }
                let span = super::at(&h.node, &["roleRef", "name"]).map_or(h.node.span, |n| n.span);
                let subjects: Vec<String> = super::at(&h.node, &["subjects"])
                    .and_then(Node::as_seq)
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(|s| {
                        let kind = s.get("kind").and_then(Node::as_str)?;
                        let name = s.get("name").and_then(Node::as_str)?;
                        Some(format!("{kind} `{name}`"))
                    })
                    .collect();
                out.push(
                    Finding::new(
                        format!(
                            "this change grants `cluster-admin` on the whole cluster to {} through {} (Application `{}`)",
                            if subjects.is_empty() { "no listed subject".to_string() } else { subjects.join(", ") },
                            super::describe(&o.key),
                            app.name
                        ),
                        span,
                    )
                    .with_help(
                        "bind a ClusterRole that lists only the verbs and resources needed, or a RoleBinding in one namespace.",
                    ),
                );
            }
        }
        out
    }
}
