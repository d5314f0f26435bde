//! Argo CD's own installation: what its components are, and where the repository installs
//! Argo CD, if it does (the Argo CD whose AppProjects it would then define).

use super::kinds;
use crate::model::kustomize::EntryField;
use crate::model::template::is_unknown;
use crate::model::{DocKind, Document, Field, Model};
use crate::source::Span;
use crate::yaml::Node;

/// Workloads and configuration of an Argo CD installation.
pub const COMPONENTS: &[&str] = &[
    "argocd-application-controller",
    "argocd-applicationset-controller",
    "argocd-cm",
    "argocd-cmd-params-cm",
    "argocd-commit-server",
    "argocd-dex-server",
    "argocd-gpg-keys-cm",
    "argocd-notifications-cm",
    "argocd-notifications-controller",
    "argocd-rbac-cm",
    "argocd-redis",
    "argocd-redis-ha-server",
    "argocd-repo-server",
    "argocd-server",
    "argocd-ssh-known-hosts-cm",
    "argocd-tls-certs-cm",
];

/// Argo CD's Helm chart.
pub const CHART: &str = "argo-cd";

/// OLM packages of the operators that install Argo CD (OpenShift GitOps, argocd-operator).
pub const OPERATOR_PACKAGES: &[&str] = &["argocd-operator", "openshift-gitops-operator"];

/// A remote kustomize resource that is Argo CD's install manifests.
#[must_use]
pub fn is_install_url(s: &str) -> bool {
    let s = s.to_lowercase();
    s.contains("argoproj/argo-cd") && s.contains("manifests")
}

/// What in an object makes it part of an Argo CD installation, and where: a component
/// (`Deployment` `argocd-server`, `ConfigMap` `argocd-cm`), Argo CD's CRDs, an `ArgoCD`
/// instance of the operator, or an OLM Subscription to that operator.
#[must_use]
pub fn component(kind: &str, api_version: &str, doc: &Document) -> Option<(String, Span)> {
    let name = doc.name().unwrap_or("");
    let name_span = doc
        .root
        .path(&["metadata", "name"])
        .map_or(doc.anchor_span(), |n| n.span);
    if matches!(kind, "Deployment" | "StatefulSet" | "ConfigMap") && COMPONENTS.contains(&name) {
        return Some((format!("{kind} `{name}`"), name_span));
    }
    if kind == "CustomResourceDefinition"
        && doc.root.path(&["spec", "group"]).and_then(Node::as_str) == Some("argoproj.io")
    {
        return Some((format!("{kind} `{name}`"), name_span));
    }
    if kind == "ArgoCD" && kinds::group_of(api_version) == "argoproj.io" {
        // The operator turns this into a whole Argo CD installation.
        return Some((format!("the `ArgoCD` instance `{name}`"), name_span));
    }
    let pkg = kinds::olm_subscription_package(doc)?;
    let p = pkg.as_str().filter(|p| OPERATOR_PACKAGES.contains(p))?;
    Some((format!("the OLM Subscription to `{p}`"), pkg.span))
}

/// The first place, in file order, where the repository installs Argo CD: a component written
/// in a manifest, a kustomization that lists Argo CD's install manifests or its chart, a chart
/// that depends on `argo-cd`, or a live Application that deploys that chart.
#[must_use]
pub fn install_site(model: &Model<'_>) -> Option<(String, Span)> {
    let repo = model.repo;
    let mut found: Vec<(String, Span)> = Vec::new();
    for doc in &repo.docs {
        if doc.kind == DocKind::HelmChart {
            for dep in doc
                .root
                .get("dependencies")
                .into_iter()
                .flat_map(Node::items)
            {
                if let Some(n) = dep.get("name").filter(|n| n.as_str() == Some(CHART)) {
                    found.push((format!("the `{CHART}` chart, a dependency"), n.span));
                }
            }
            continue;
        }
        let (Some(kind), Some(api)) = (doc.k8s_kind(), doc.api_version()) else {
            continue;
        };
        found.extend(component(kind, api, doc));
    }
    for k in model.kustomize().nodes() {
        for r in &k.entries {
            if matches!(r.field, EntryField::Resources | EntryField::Bases)
                && !is_unknown(&r.raw)
                && is_install_url(&r.raw)
            {
                found.push(("Argo CD's install manifests".to_string(), r.span));
            }
        }
        for h in &k.helm_charts {
            if Field::text(&h.name) == Some(CHART) {
                found.push((format!("the `{CHART}` chart"), h.span));
            }
        }
    }
    for app in model.argocd().apps.iter().filter(|a| a.live) {
        for src in &app.sources {
            if let Some(chart) = src
                .chart
                .as_ref()
                .filter(|c| c.value == CHART || c.value.ends_with("/argo-cd"))
            {
                found.push((
                    format!(
                        "the `{CHART}` chart, deployed by Application `{}`",
                        app.name
                    ),
                    chart.span,
                ));
            }
        }
    }
    found
        .into_iter()
        .min_by_key(|(_, span)| (span.file, span.start))
}
