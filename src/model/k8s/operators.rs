//! Operators among the objects an Application deploys: a Deployment whose ServiceAccount a
//! `ClusterRoleBinding` binds to a `ClusterRole` that writes cluster-scoped kinds or
//! CustomResourceDefinitions. Such a controller changes the cluster for everyone (ADR 0022:
//! "CRDs + opérateurs = Ansible; les CR = GitOps"); a chart of custom resources, or an
//! application that only reads the cluster, has none.

use std::collections::HashMap;

use super::kinds::{KindScopes, group_of};
use crate::model::Document;
use crate::yaml::Node;

/// Verbs that change objects.
const WRITE_VERBS: &[&str] = &[
    "*",
    "create",
    "update",
    "patch",
    "delete",
    "deletecollection",
];

const RBAC: &str = "rbac.authorization.k8s.io";

const CLUSTER_ADMIN: &str = "cluster-admin";

/// An operator Deployment: its index in the objects given, and why it is one
/// (`ClusterRole `x` writes `namespaces``).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Operator {
    pub index: usize,
    pub why: String,
}

/// The operators among `objects` (`(kind, apiVersion, document)`), in their order. `scopes`
/// knows the kinds of Kubernetes, of common operators and of the repository's CRDs; the CRDs
/// among `objects` are read too. `skip` names Deployments that are another rule's (Argo CD's
/// own).
#[must_use]
pub fn operators(
    objects: &[(&str, &str, &Document)],
    scopes: &KindScopes,
    skip: &dyn Fn(&str) -> bool,
) -> Vec<Operator> {
    // Cluster-scoped kinds the objects' own CRDs declare: (group, plural).
    let declared: Vec<(&str, &str)> = objects
        .iter()
        .filter(|(kind, api, _)| {
            *kind == "CustomResourceDefinition" && api.starts_with("apiextensions.k8s.io/")
        })
        .filter_map(|(_, _, d)| {
            let spec = d.root.get("spec")?;
            (spec.get_str("scope") == Some("Cluster"))
                .then(|| {
                    Some((
                        spec.get_str("group")?,
                        spec.path(&["names", "plural"])?.as_str()?,
                    ))
                })
                .flatten()
        })
        .collect();
    let cluster_scoped = |group: &str, resource: &str| {
        scopes.resource_is_cluster_scoped(group, resource)
            || declared
                .iter()
                .any(|(g, r)| (group == "*" || group == *g) && (resource == "*" || resource == *r))
    };
    // ClusterRoles that write such kinds: name → what they write.
    let mut roles: HashMap<&str, String> = HashMap::new();
    for (kind, api, d) in objects {
        if *kind != "ClusterRole" || group_of(api) != RBAC {
            continue;
        }
        let Some(name) = d.name() else { continue };
        if let Some(what) = d
            .root
            .get("rules")
            .into_iter()
            .flat_map(Node::items)
            .find_map(|rule| writes(rule, &cluster_scoped))
        {
            roles.entry(name).or_insert(what);
        }
    }
    // Kubernetes' own `cluster-admin` writes everything.
    roles
        .entry(CLUSTER_ADMIN)
        .or_insert_with(|| "every resource (Kubernetes' own role)".to_string());
    // ServiceAccounts bound to them: (namespace, name, role).
    let mut bound: Vec<(Option<&str>, &str, &str)> = Vec::new();
    for (kind, api, d) in objects {
        if *kind != "ClusterRoleBinding" || group_of(api) != RBAC {
            continue;
        }
        let role = d.root.get("roleRef");
        let Some(role) = role
            .filter(|r| r.get_str("kind") == Some("ClusterRole"))
            .and_then(|r| r.get_str("name"))
            .filter(|r| roles.contains_key(r))
        else {
            continue;
        };
        for s in d.root.get("subjects").into_iter().flat_map(Node::items) {
            if s.get_str("kind") == Some("ServiceAccount")
                && let Some(name) = s.get_str("name")
            {
                bound.push((s.get_str("namespace"), name, role));
            }
        }
    }
    let mut out = Vec::new();
    for (i, (kind, api, d)) in objects.iter().enumerate() {
        if *kind != "Deployment" || group_of(api) != "apps" || d.name().is_some_and(skip) {
            continue;
        }
        let pod = d.root.path(&["spec", "template", "spec"]);
        let account = pod
            .and_then(|p| {
                p.get_str("serviceAccountName")
                    .or_else(|| p.get_str("serviceAccount"))
            })
            .unwrap_or("default");
        let namespace = d.namespace();
        if let Some((_, _, role)) = bound.iter().find(|(ns, name, _)| {
            *name == account && (ns.is_none() || namespace.is_none() || *ns == namespace)
        }) {
            out.push(Operator {
                index: i,
                why: format!("its ClusterRole `{role}` writes {}", roles[role]),
            });
        }
    }
    out
}

/// What an RBAC rule lets its holder write among cluster-scoped kinds and CRDs, if anything.
fn writes(rule: &Node, cluster_scoped: &dyn Fn(&str, &str) -> bool) -> Option<String> {
    let list = |key: &str| -> Vec<&str> {
        rule.get(key)
            .into_iter()
            .flat_map(Node::items)
            .filter_map(Node::as_str)
            .collect()
    };
    if !list("verbs").iter().any(|v| WRITE_VERBS.contains(v)) {
        return None;
    }
    let resources = list("resources");
    for group in list("apiGroups") {
        // A subresource (`nodes/status`) changes only the status of an object.
        for resource in resources.iter().filter(|r| !r.contains('/')) {
            let crds = (group == "apiextensions.k8s.io" || group == "*")
                && matches!(*resource, "customresourcedefinitions" | "*");
            if crds {
                return Some("CustomResourceDefinitions".to_string());
            }
            if cluster_scoped(group, resource) {
                return Some(if *resource == "*" {
                    format!(
                        "every resource of `{}`",
                        if group.is_empty() {
                            "the core group"
                        } else {
                            group
                        }
                    )
                } else {
                    format!("`{resource}`, a cluster-scoped kind")
                });
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Repository;

    fn docs(text: &str) -> Repository {
        Repository::in_memory(&[("chart.yaml", text)])
    }

    const OPERATOR: &str = "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: op, namespace: ops}\nspec:\n  template:\n    spec: {serviceAccountName: op}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRoleBinding\nmetadata: {name: op}\nroleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: op}\nsubjects: [{kind: ServiceAccount, name: op, namespace: ops}]\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata: {name: op}\nrules:\n";

    fn found(rules: &str) -> Vec<String> {
        let repo = docs(&format!("{OPERATOR}{rules}"));
        let objects: Vec<(&str, &str, &Document)> = repo
            .docs
            .iter()
            .filter_map(|d| Some((d.k8s_kind()?, d.api_version()?, d)))
            .collect();
        operators(&objects, &KindScopes::default(), &|_| false)
            .into_iter()
            .map(|o| o.why)
            .collect()
    }

    #[test]
    fn a_deployment_bound_to_a_role_writing_cluster_kinds_is_an_operator() {
        assert_eq!(
            found("  - {apiGroups: [\"\"], resources: [namespaces], verbs: [create, delete]}\n"),
            ["its ClusterRole `op` writes `namespaces`, a cluster-scoped kind"]
        );
        assert_eq!(
            found(
                "  - {apiGroups: [apiextensions.k8s.io], resources: [customresourcedefinitions], verbs: [\"*\"]}\n"
            ),
            ["its ClusterRole `op` writes CustomResourceDefinitions"]
        );
        // Reading the cluster, or writing namespaced kinds, is what applications do.
        assert!(found("  - {apiGroups: [\"\"], resources: [nodes, namespaces], verbs: [get, list, watch]}\n").is_empty());
        assert!(
            found("  - {apiGroups: [apps], resources: [deployments], verbs: [create, update]}\n")
                .is_empty()
        );
        assert!(
            found("  - {apiGroups: [\"\"], resources: [nodes/status], verbs: [patch]}\n")
                .is_empty()
        );
    }

    /// Bound to Kubernetes' own `cluster-admin`, which no chart writes.
    #[test]
    fn a_deployment_bound_to_cluster_admin_is_an_operator() {
        let text = OPERATOR.replace(
            "kind: ClusterRole, name: op}",
            "kind: ClusterRole, name: cluster-admin}",
        );
        let repo = docs(&text);
        let objects: Vec<(&str, &str, &Document)> = repo
            .docs
            .iter()
            .filter_map(|d| Some((d.k8s_kind()?, d.api_version()?, d)))
            .collect();
        let why: Vec<String> = operators(&objects, &KindScopes::default(), &|_| false)
            .into_iter()
            .map(|o| o.why)
            .collect();
        assert_eq!(
            why,
            ["its ClusterRole `cluster-admin` writes every resource (Kubernetes' own role)"]
        );
    }

    #[test]
    fn plurals() {
        use super::super::kinds::plural;
        assert_eq!(plural("Namespace"), "namespaces");
        assert_eq!(plural("IngressClass"), "ingressclasses");
        assert_eq!(plural("NetworkPolicy"), "networkpolicies");
        assert_eq!(plural("Gateway"), "gateways");
    }
}
