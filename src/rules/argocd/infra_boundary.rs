//! `argocd/infra-boundary`: an Application deploys infrastructure (CRDs, infrastructure
//! namespaces, charts or folders).

use crate::diagnostic::{Finding, Severity};
use crate::model::Field;
use crate::model::resolve::{Location, SourceKind};
use crate::rules::argocd::bounds;
use crate::rules::{Context, FixAvailability, Rule, RuleMeta};
use crate::source::Span;
use crate::yaml::Node;

pub struct InfraBoundary;

static META: RuleMeta = RuleMeta {
    id: "argocd/infra-boundary",
    summary: "an Application deploys infrastructure: CRDs, infrastructure namespaces, charts or folders",
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    applies_to: &[],
    options: &[],
    docs: include_str!("infra_boundary.md"),
};

pub const DEFAULT_NAMESPACES: &[&str] = &[
    "kube-system",
    "kube-public",
    "kube-node-lease",
    "cert-manager",
    "cilium",
    "rook-ceph",
    "metallb-system",
    "ingress-nginx",
    "gateway-system",
];

/// API groups served by Kubernetes itself (not by CRDs).
const BUILTIN_GROUPS: &[&str] = &[
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
];

fn is_builtin(api_version: &str) -> bool {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    BUILTIN_GROUPS.contains(&group)
}

const HELP: &str = "Install the infrastructure outside Argo CD (CRDs and operators with Ansible), and keep only its custom resources in GitOps.";

impl Rule for InfraBoundary {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let model = cx.model.argocd();
        let project = cx.project;
        let conf = &cx.settings.argocd;
        let namespaces: Vec<&str> = match &conf.infra_namespaces {
            Some(list) => list.iter().map(String::as_str).collect(),
            None => DEFAULT_NAMESPACES.to_vec(),
        };
        let mut items = Vec::new();
        for (i, app) in model.apps.iter().enumerate() {
            if !app.live {
                continue;
            }
            if let Some(ns) = app
                .destination
                .as_ref()
                .and_then(|d| d.namespace.as_ref())
                .filter(|_| !bounds::template_patched(project, app, "destination"))
            {
                if let Some(v) = bounds::concrete(ns) {
                    if namespaces.contains(&v) {
                        items.push((
                            i,
                            Finding::new(
                                format!("Application `{}` deploys into the infrastructure namespace `{v}`", app.name),
                                ns.span,
                            )
                            .with_help(HELP),
                        ));
                    }
                }
            }
            for src in &app.sources {
                let mut found: Vec<(String, Span)> = Vec::new();
                if let Some(chart) = src.chart.as_ref().and_then(bounds::concrete) {
                    let short = chart.rsplit('/').next().unwrap_or(chart);
                    if conf.infra_charts.iter().any(|c| c == chart || c == short) {
                        found.push((
                            format!("the infrastructure chart `{short}`"),
                            src.chart.as_ref().map_or(src.span, |f| f.span),
                        ));
                    }
                }
                for (name, span) in bounds::chart_names(project, src) {
                    if conf.infra_charts.iter().any(|c| c == name) {
                        found.push((format!("the infrastructure chart `{name}`"), span));
                    }
                }
                if let Location::InRepo(dir) = &src.location {
                    if let Some(p) = conf.infra_paths.iter().find(|p| bounds::under(dir, p)) {
                        found.push((
                            format!("`{p}` (config `argocd.infra_paths`)"),
                            bounds::source_span(src),
                        ));
                    }
                }
                for d in bounds::deployed(project, src) {
                    let name = d.doc.name().unwrap_or("");
                    let name_span = d
                        .doc
                        .root
                        .path(&["metadata", "name"])
                        .map_or(d.doc.anchor_span(), |n| n.span);
                    if d.kind == "CustomResourceDefinition"
                        && d.api_version.starts_with("apiextensions.k8s.io/")
                    {
                        // Argo CD's own CRDs are `argocd/self-managed`'s.
                        if d.doc.root.path(&["spec", "group"]).and_then(Node::as_str)
                            != Some("argoproj.io")
                        {
                            found.push((format!("CustomResourceDefinition `{name}`"), name_span));
                        }
                    } else if d.kind == "Namespace"
                        && d.api_version == "v1"
                        && namespaces.contains(&name)
                    {
                        found.push((format!("the infrastructure namespace `{name}`"), name_span));
                    } else if let Some(ns) =
                        d.doc.root.path(&["metadata", "namespace"]).filter(|n| {
                            // Custom resources of the operators are applications.
                            is_builtin(d.api_version)
                                && n.as_str().is_some_and(|s| namespaces.contains(&s))
                        })
                    {
                        found.push((
                            format!(
                                "{} `{name}` in the infrastructure namespace `{}`",
                                d.kind,
                                ns.as_str().unwrap_or("")
                            ),
                            ns.span,
                        ));
                    }
                }
                if src.kind == SourceKind::Kustomize {
                    for k in bounds::kustomizations(cx.model, src) {
                        for h in &k.helm_charts {
                            if let Some(n) = Field::text(&h.name)
                                .filter(|n| conf.infra_charts.iter().any(|c| c == n))
                            {
                                found.push((format!("the infrastructure chart `{n}`"), h.span));
                            }
                        }
                    }
                }
                let Some((first, _)) = found.first() else {
                    continue;
                };
                let more = if found.len() > 1 {
                    format!(" and {} more", found.len() - 1)
                } else {
                    String::new()
                };
                let mut f = Finding::new(
                    format!(
                        "Application `{}` deploys infrastructure: {first}{more}",
                        app.name
                    ),
                    bounds::source_span(src),
                )
                .with_help(HELP);
                for (what, span) in found.iter().take(3) {
                    if *span != bounds::source_span(src) {
                        f = f.with_label(*span, what.clone());
                    }
                }
                items.push((i, f));
            }
        }
        bounds::merge_by_span(model, items)
    }
}
