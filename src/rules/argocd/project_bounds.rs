//! `argocd/project-bounds`: an AppProject that bounds nothing.

use crate::diagnostic::{Finding, Severity};
use crate::model::DocKind;
use crate::model::argocd::appproject::filepath_match;
use crate::model::argocd::projects::project_destinations;
use crate::model::k8s::kinds::{KindScopes, Reach};
use crate::rule::rule_options;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::yaml::Node;

pub struct ProjectBounds;

static META: RuleMeta = RuleMeta {
    id: "argocd/project-bounds",
    summary: "an AppProject allows every destination, every repository or cluster-scoped kinds beyond `argocd.cluster_resources_allowed`",
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[DocKind::AppProject],
    options: Options::DECLARED,
    docs: include_str!("project_bounds.md"),
};

rule_options! {
    /// The `argocd:` section's key of this rule.
    pub struct Options {
        /// `argocd.cluster_resources_allowed`: cluster-scoped kinds a project may whitelist, as
        /// `group/Kind` or `Kind` (core group); `None`: only `Namespace`.
        pub cluster_resources_allowed: Option<Vec<String>>,
    }
}

/// `group/Kind` (or `Kind` for the core group) as `(group, kind)`.
fn parse_allowed(s: &str) -> (&str, &str) {
    s.rsplit_once('/').unwrap_or(("", s))
}

const HELP_CLUSTER: &str = "Whitelist only the cluster-scoped kinds in `argocd.cluster_resources_allowed` (by default `Namespace`); cluster-wide objects belong to the infrastructure.";

const HELP_UNKNOWN: &str = "If it is cluster-scoped, list it in `argocd.cluster_resources_allowed` or remove it; add its CustomResourceDefinition to the repository so its scope is known.";

impl Rule for ProjectBounds {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, doc: &crate::model::Document, cx: &Context<'_>) -> Vec<Finding> {
        let name = doc.name().unwrap_or("<unnamed>");
        let mut out = Vec::new();
        for (d, node) in project_destinations(doc) {
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
        let allowed = cx
            .options::<Options>()
            .cluster_resources_allowed
            .as_ref()
            .unwrap_or(&default_allowed);
        let is_allowed = |group: &str, kind: &str| {
            allowed.iter().any(|a| {
                let (ag, ak) = parse_allowed(a);
                filepath_match(ag, group) && filepath_match(ak, kind)
            })
        };
        let mut scopes: Option<KindScopes> = None;
        for item in doc
            .root
            .path(&["spec", "clusterResourceWhitelist"])
            .into_iter()
            .flat_map(Node::items)
        {
            let group = item.get_str("group").unwrap_or("");
            let kind = item.get_str("kind").unwrap_or("");
            if is_allowed(group, kind) {
                continue;
            }
            let scopes = scopes.get_or_insert_with(|| KindScopes::of(cx.repo));
            let shown = if group.is_empty() {
                kind.to_string()
            } else {
                format!("{group}/{kind}")
            };
            match scopes.whitelist_reach(group, kind, is_allowed) {
                Reach::Nothing => {}
                Reach::ClusterScoped(_) => out.push(
                    Finding::new(
                        format!(
                            "project `{name}` lets its Applications create cluster-scoped `{shown}`"
                        ),
                        item.span,
                    )
                    .with_help(HELP_CLUSTER),
                ),
                Reach::Unknown => out.push(
                    Finding::new(
                        format!("project `{name}` whitelists `{shown}`, whose scope is unknown"),
                        item.span,
                    )
                    .with_help(HELP_UNKNOWN)
                    .with_severity(Severity::Info),
                ),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::diagnostic::Severity;
    use crate::engine::check_texts;

    const PROJECT: &str = "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: p, namespace: argocd}\nspec:\n  clusterResourceWhitelist:\n";

    fn severities(entries: &str) -> Vec<Severity> {
        let text = format!("{PROJECT}{entries}");
        check_texts(&[("p.yaml", &text)], Config::default())
            .diagnostics
            .into_iter()
            .filter(|d| d.rule == "argocd/project-bounds")
            .map(|d| d.severity)
            .collect()
    }

    #[test]
    fn unknown_scope_is_info_and_cluster_scope_a_warning() {
        assert_eq!(
            severities("    - {group: widgets.example.com, kind: Widget}\n"),
            [Severity::Info]
        );
        assert_eq!(
            severities("    - {group: cert-manager.io, kind: ClusterIssuer}\n"),
            [Severity::Warning]
        );
        assert!(severities("    - {group: tuned.openshift.io, kind: Tuned}\n").is_empty());
    }
}
