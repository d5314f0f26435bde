//! `argocd/project-bounds`: an AppProject that bounds nothing.

use crate::diagnostic::{Finding, Severity};
use crate::model::DocKind;
use crate::model::appproject::filepath_match;
use crate::rules::argocd::bounds;
use crate::rules::{Context, FixAvailability, Rule, RuleMeta};
use crate::yaml::Node;

pub struct ProjectBounds;

static META: RuleMeta = RuleMeta {
    id: "argocd/project-bounds",
    summary: "an AppProject allows every destination, every repository or cluster-scoped kinds beyond `argocd.cluster_resources_allowed`",
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    applies_to: &[DocKind::AppProject],
    options: &[],
    docs: include_str!("project_bounds.md"),
};

/// `group/Kind` (or `Kind` for the core group) as `(group, kind)`.
fn parse_allowed(s: &str) -> (&str, &str) {
    s.rsplit_once('/').unwrap_or(("", s))
}

/// Namespaced built-in kinds: Argo CD checks the cluster whitelist only for cluster-scoped
/// objects, so these entries grant nothing.
const NAMESPACED: &[&str] = &[
    "ConfigMap",
    "CronJob",
    "DaemonSet",
    "Deployment",
    "Endpoints",
    "HorizontalPodAutoscaler",
    "Ingress",
    "Job",
    "LimitRange",
    "NetworkPolicy",
    "PersistentVolumeClaim",
    "Pod",
    "PodDisruptionBudget",
    "ReplicaSet",
    "ResourceQuota",
    "Role",
    "RoleBinding",
    "Secret",
    "Service",
    "ServiceAccount",
    "StatefulSet",
];

/// An entry that matches no cluster-scoped kind: a namespaced built-in kind, or a literal that
/// is not a Kind at all (`configmaps`: Kinds are CamelCase).
fn grants_nothing(kind: &str) -> bool {
    let literal = !kind.contains(['*', '?', '[', '\\']);
    literal && (NAMESPACED.contains(&kind) || kind.chars().next().is_some_and(char::is_lowercase))
}

impl Rule for ProjectBounds {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, doc: &crate::model::Document, cx: &Context<'_>) -> Vec<Finding> {
        let name = doc.name().unwrap_or("<unnamed>");
        let mut out = Vec::new();
        for (d, node) in bounds::project_destinations(doc) {
            if (d.server == "*" || d.name == "*") && d.namespace == "*" {
                out.push(
                    Finding::new(
                        format!("project `{name}` allows every namespace of every cluster"),
                        node.span,
                    )
                    .with_help("List the clusters and namespaces (globs such as `team-a-*`) the project's Applications may deploy to."),
                );
            }
        }
        for r in doc
            .root
            .path(&["spec", "sourceRepos"])
            .into_iter()
            .flat_map(Node::items)
        {
            if r.as_str() == Some("*") {
                out.push(
                    Finding::new(
                        format!("project `{name}` allows every source repository"),
                        r.span,
                    )
                    .with_help("List the repositories (or a glob of your Git group) the project's Applications may deploy from."),
                );
            }
        }
        let default_allowed = vec!["Namespace".to_string()];
        let allowed = cx.settings.argocd
            .cluster_resources_allowed
            .as_ref()
            .unwrap_or(&default_allowed);
        for item in doc
            .root
            .path(&["spec", "clusterResourceWhitelist"])
            .into_iter()
            .flat_map(Node::items)
        {
            let group = item.get_str("group").unwrap_or("");
            let kind = item.get_str("kind").unwrap_or("");
            let covered = allowed.iter().any(|a| {
                let (ag, ak) = parse_allowed(a);
                filepath_match(ag, group) && filepath_match(ak, kind)
            });
            if covered || grants_nothing(kind) {
                continue;
            }
            let shown = if group.is_empty() {
                kind.to_string()
            } else {
                format!("{group}/{kind}")
            };
            out.push(
                Finding::new(
                    format!("project `{name}` lets its Applications create cluster-scoped `{shown}`"),
                    item.span,
                )
                .with_help("Whitelist only the cluster-scoped kinds in `argocd.cluster_resources_allowed` (by default `Namespace`); cluster-wide objects belong to the infrastructure."),
            );
        }
        out
    }
}
