//! `argocd/infra-boundary`: an Application deploys infrastructure (CRDs, infrastructure
//! namespaces, charts or folders).

use crate::diagnostic::{Finding, Severity};
use crate::model::Field;
use crate::model::argocd::deployed::{PerDeployed, chart_names};
use crate::model::argocd::projects::{concrete, template_patched};
use crate::model::argocd::resolve::Location;
use crate::model::k8s::argocd_install::COMPONENTS;
use crate::model::k8s::kinds;
use crate::model::k8s::operators::operators;
use crate::rule::rule_options;
use crate::rules::argocd::bounds;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::source::Span;
use crate::yaml::Node;

pub struct InfraBoundary;

static META: RuleMeta = RuleMeta {
    id: "argocd/infra-boundary",
    summary: "an Application deploys infrastructure: CRDs, infrastructure namespaces, charts or folders",
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: Options::DECLARED,
    docs: include_str!("infra_boundary.md"),
};

rule_options! {
    /// The `argocd:` section's keys of this rule.
    pub struct Options {
        /// `argocd.infra_namespaces`: namespaces of the infrastructure; `None`:
        /// [`DEFAULT_NAMESPACES`].
        pub infra_namespaces: Option<Vec<String>>,
        /// `argocd.infra_charts`: Helm charts and OLM packages of the infrastructure; `None`:
        /// [`DEFAULT_CHARTS`].
        pub infra_charts: Option<Vec<String>>,
        /// `argocd.infra_paths`: folders or files of the infrastructure.
        pub infra_paths: Vec<String>,
    }
}

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

/// Helm charts and OLM packages of well-known operators and cluster add-ons: what installs
/// CRDs, controllers or node agents the platform needs. Charts of their custom resources
/// (`rook-ceph-cluster`, a CNPG `cluster` chart) are applications and are not listed.
pub const DEFAULT_CHARTS: &[&str] = &[
    // Certificates.
    "cert-manager",
    "openshift-cert-manager-operator",
    "trust-manager",
    // Networking: CNI, load balancers, ingress and gateways, service meshes.
    "calico",
    "cilium",
    "contour",
    "gateway-helm",
    "ingress-nginx",
    "istio-base",
    "istio-cni",
    "istiod",
    "kube-vip",
    "kubernetes-nmstate-operator",
    "linkerd-cni",
    "linkerd-control-plane",
    "linkerd-crds",
    "linkerd2",
    "metallb",
    "metallb-operator",
    "nginx-ingress",
    "sailoperator",
    "servicemeshoperator",
    "servicemeshoperator3",
    "tigera-operator",
    "traefik",
    "ztunnel",
    // Storage.
    "csi-driver-nfs",
    "local-storage-operator",
    "longhorn",
    "lvms-operator",
    "odf-operator",
    "openebs",
    "rook-ceph",
    "snapshot-controller",
    // Operators of databases and platform services.
    "cloudnative-pg",
    "crossplane",
    "gpu-operator",
    "gpu-operator-certified",
    "keda",
    // Policy and secrets.
    "external-secrets",
    "external-secrets-operator",
    "gatekeeper",
    "kyverno",
    "sealed-secrets",
    // Monitoring stacks that install the Prometheus operator and its CRDs.
    "kube-prometheus-stack",
    "metrics-server",
    "prometheus-operator-crds",
];

const HELP: &str = "Install the infrastructure outside Argo CD (CRDs and operators with Ansible), and keep only its custom resources in GitOps.";

impl Rule for InfraBoundary {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let model = cx.model.argocd();
        let repo = cx.repo;
        let conf = cx.options::<Options>();
        let namespaces: Vec<&str> = match &conf.infra_namespaces {
            Some(list) => list.iter().map(String::as_str).collect(),
            None => DEFAULT_NAMESPACES.to_vec(),
        };
        let charts: Vec<&str> = match &conf.infra_charts {
            Some(list) => list.iter().map(String::as_str).collect(),
            None => DEFAULT_CHARTS.to_vec(),
        };
        // Without a list of its own, name patterns of CRD and operator charts count too (but
        // Argo CD's own operator, which is `argocd/self-managed`'s).
        let patterns = conf.infra_charts.is_none();
        let is_infra_chart = |name: &str| {
            charts.contains(&name)
                || patterns
                    && (name.ends_with("-crds") || name.ends_with("-operator"))
                    && !name.starts_with("argocd-")
        };
        let mut items = Vec::new();
        let mut memo = PerDeployed::default();
        let scopes = kinds::KindScopes::of(repo);
        for (i, app) in model.apps.iter().enumerate() {
            if !app.live {
                continue;
            }
            // The destination namespace, when it is the infrastructure's: a finding of its own,
            // or a label of the source finding when a source deploys infrastructure too.
            let infra_ns = app
                .destination
                .as_ref()
                .and_then(|d| d.namespace.as_ref())
                .filter(|_| !template_patched(repo, app, "destination"))
                .and_then(|ns| Some((concrete(ns)?, ns.span)))
                .filter(|(v, _)| namespaces.contains(v));
            let mut source_reported = false;
            for (s, src) in app.sources.iter().enumerate() {
                let mut found: Vec<(String, Span)> = Vec::new();
                if let Some(chart) = src.chart.as_ref().and_then(concrete) {
                    let short = chart.rsplit('/').next().unwrap_or(chart);
                    // Istio publishes its CRD chart as `base`.
                    let istio_base = patterns
                        && short == "base"
                        && src.repo_url.as_deref().is_some_and(|u| u.contains("istio"));
                    if is_infra_chart(chart) || is_infra_chart(short) || istio_base {
                        found.push((
                            format!("the infrastructure chart `{short}`"),
                            src.chart.as_ref().map_or(src.span, |f| f.span),
                        ));
                    }
                }
                for (name, span) in chart_names(repo, src) {
                    if is_infra_chart(name) {
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
                let judged = memo.judge(cx.model, i, s, src, |objects, kusts| {
                    let mut found: Vec<(String, Span)> = Vec::new();
                    for d in objects {
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
                                found.push((
                                    d.describe(format!("CustomResourceDefinition `{name}`")),
                                    name_span,
                                ));
                            }
                        } else if d.kind == "Namespace"
                            && d.api_version == "v1"
                            && namespaces.contains(&name)
                        {
                            found.push((
                                d.describe(format!("the infrastructure namespace `{name}`")),
                                name_span,
                            ));
                        } else if let Some(what) =
                            kinds::infrastructure_kind(kinds::group_of(d.api_version), d.kind)
                        {
                            found.push((
                                d.describe(format!("{what} {} `{name}`", d.kind)),
                                name_span,
                            ));
                        } else if let Some(pkg) = kinds::olm_subscription_package(d.doc)
                            // Every OLM Subscription installs an operator; a list of the
                            // configuration's own names only those.
                            .filter(|p| p.as_str().is_some_and(|p| patterns || is_infra_chart(p)))
                        {
                            found.push((
                                d.describe(format!(
                                    "the OLM Subscription to the operator `{}`",
                                    pkg.as_str().unwrap_or_default()
                                )),
                                pkg.span,
                            ));
                        } else if let Some(ns) =
                            d.doc.root.path(&["metadata", "namespace"]).filter(|n| {
                                // Custom resources of the operators are applications; a chart's
                                // objects in its release namespace are the destination's.
                                kinds::is_builtin_group(kinds::group_of(d.api_version))
                                    && n.as_str().is_some_and(|s| namespaces.contains(&s))
                                    && d.rendered
                                        .is_none_or(|m| n.as_str() != Some(&m.release_namespace))
                            })
                        {
                            found.push((
                                d.describe(format!(
                                    "{} `{name}` in the infrastructure namespace `{}`",
                                    d.kind,
                                    ns.as_str().unwrap_or("")
                                )),
                                ns.span,
                            ));
                        }
                    }
                    // Operators: a Deployment bound to a ClusterRole that writes cluster-scoped
                    // kinds or CRDs (Argo CD's own is `argocd/self-managed`'s).
                    let triples: Vec<_> = objects
                        .iter()
                        .map(|d| (d.kind, d.api_version, d.doc))
                        .collect();
                    for op in operators(&triples, &scopes, &|n| COMPONENTS.contains(&n)) {
                        let d = &objects[op.index];
                        let name = d.doc.name().unwrap_or("");
                        let name_span = d
                            .doc
                            .root
                            .path(&["metadata", "name"])
                            .map_or(d.doc.anchor_span(), |n| n.span);
                        found.push((
                            d.describe(format!("the operator Deployment `{name}` ({})", op.why)),
                            name_span,
                        ));
                    }
                    for k in kusts {
                        for h in &k.helm_charts {
                            if let Some(n) = Field::text(&h.name).filter(|n| is_infra_chart(n)) {
                                found.push((format!("the infrastructure chart `{n}`"), h.span));
                            }
                        }
                    }
                    found
                });
                found.extend(judged);
                // A wrapper chart named after its dependency is one chart.
                let mut seen = std::collections::HashSet::new();
                found.retain(|(what, _)| seen.insert(what.clone()));
                let Some((first, _)) = found.first() else {
                    continue;
                };
                let more = if found.len() > 1 {
                    format!(" and {} more", found.len() - 1)
                } else {
                    String::new()
                };
                // The destination namespace, when it is the infrastructure's, is where the
                // finding points (the most direct breach); the source's reasons are labels.
                let into = infra_ns.filter(|_| !source_reported);
                let (primary, into_text) = match into {
                    Some((v, span)) => (span, format!(", into the infrastructure namespace `{v}`")),
                    None => (bounds::source_span(src), String::new()),
                };
                let mut f = Finding::new(
                    format!(
                        "Application `{}` deploys infrastructure: {first}{more}{into_text}",
                        app.name
                    ),
                    primary,
                )
                .with_help(HELP);
                for (what, span) in found.iter().take(3) {
                    if *span != primary {
                        f = f.with_label(*span, what.clone());
                    }
                }
                source_reported = true;
                items.push((i, f));
            }
            if let Some((v, span)) = infra_ns.filter(|_| !source_reported) {
                items.push((
                    i,
                    Finding::new(
                        format!(
                            "Application `{}` deploys into the infrastructure namespace `{v}`",
                            app.name
                        ),
                        span,
                    )
                    .with_help(HELP),
                ));
            }
        }
        bounds::merge_by_span(model, items)
    }
}
