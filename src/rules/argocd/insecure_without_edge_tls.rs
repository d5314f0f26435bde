//! `argocd/insecure-without-edge-tls`: argocd-server serves plain HTTP (`server.insecure`)
//! while nothing in the repository terminates TLS in front of it.
//!
//! Two halves: every place that makes argocd-server insecure (`insecure.rs`, the argo-cd
//! chart's values in `chart.rs`), and every edge that routes to its Service, found by the
//! model (`model::k8s::routes`: Gateway API routes resolved to their Gateway listeners,
//! Ingresses, OpenShift Routes, Istio VirtualServices, tunnels and the argo-cd chart's own
//! Ingress/HTTPRoute/Route values). The verdict over those edges is this file's. Objects are
//! found through the model's index (`Model::k8s`), kustomizations through its graph
//! (`Model::kustomize`).

mod chart;
mod insecure;

use std::collections::{BTreeMap, HashSet};

use crate::diagnostic::{Finding, Severity};
use crate::model::argocd::server::PARAMS_CM;
use crate::model::helm::ARGO_CD_CHART;
use crate::model::helm::values::Values;
use crate::model::k8s::Objects;
use crate::model::k8s::routes::tunnels::{TunnelRoute, tunnel_routes};
use crate::model::k8s::routes::{Backend, Candidate, GATEWAY_API, candidates};
use crate::rule::rule_options;
use crate::rules::{Context, FixAvailability, Payload, Reads, Rule, RuleMeta};
use crate::source::Span;
use crate::yaml::Node;
use insecure::find_insecure;

pub struct InsecureWithoutEdgeTls;

static META: RuleMeta = RuleMeta {
    id: "argocd/insecure-without-edge-tls",
    summary: "an insecure argocd-server (`server.insecure`) has no edge in the repository that terminates TLS in front of it",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    // `server.insecure` and the rest of argocd-server's parameters (`insecure.rs`); the routes
    // to it are the model's (`model::READS`).
    reads: Reads {
        payloads: &[Payload::Named(&[PARAMS_CM])],
        ..Reads::NONE
    },
    applies_to: &[],
    options: Options::DECLARED,
    docs: include_str!("insecure_without_edge_tls.md"),
};

rule_options! {
    /// The `argocd:` section's keys of this rule.
    pub struct Options {
        /// `argocd.server_service`: the Service of argocd-server (default `argocd-server`).
        pub server_service: Option<String>,
        /// `argocd.edge_tls`: where TLS in front of argocd-server is terminated.
        pub edge_tls: Option<EdgeTls>,
    }
}

/// `argocd.edge_tls: {mode: external, reason: "..."}`: TLS in front of argocd-server is
/// terminated outside the repository (a cloud load balancer, a tunnel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeTls {
    /// Why plain HTTP to argocd-server is safe; printed in `--format text`.
    pub reason: String,
}

impl Options {
    /// The Service name of argocd-server.
    #[must_use]
    pub fn server_service(&self) -> &str {
        self.server_service.as_deref().unwrap_or("argocd-server")
    }
}

/// One place that makes argocd-server serve plain HTTP.
struct Insecure {
    span: Span,
    /// What sets it, for the message: "`server.insecure: \"true\"` in ConfigMap ...".
    what: String,
    /// Namespace of argocd-server, when known.
    namespace: Option<String>,
    /// Service names of argocd-server.
    services: Vec<String>,
    /// The argo-cd chart's values, when the chart deploys argocd-server.
    chart: Option<Values>,
    /// An Application that deploys it.
    context: Option<(Span, String)>,
}

impl Insecure {
    /// The Service routes must reach.
    fn backend(&self) -> Backend<'_> {
        Backend {
            span: self.span,
            namespace: self.namespace.as_deref(),
            services: &self.services,
            chart: self.chart.as_ref(),
        }
    }
}

impl Rule for InsecureWithoutEdgeTls {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    /// `argocd.edge_tls: {mode: external}` replaces the check by a declaration: say so, with
    /// its reason, every time.
    fn notes(&self, cx: &Context<'_>) -> Vec<String> {
        let Some(edge) = &cx.options::<Options>().edge_tls else {
            return Vec::new();
        };
        let file = cx
            .settings
            .config_file
            .as_deref()
            .unwrap_or(".gitops-lint.yaml");
        vec![format!(
            "TLS in front of argocd-server is declared terminated outside the repository (`argocd.edge_tls: {{mode: external}}` in {file}): {}",
            edge.reason
        )]
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        // TLS ends outside the repository: the note above says so.
        let options = cx.options::<Options>();
        if options.edge_tls.is_some() {
            return Vec::new();
        }
        let service = options.server_service();
        let objs = cx.model.k8s();
        let tunnels = tunnel_routes(cx.repo, objs);
        let settings = find_insecure(cx, objs, service);
        let mut by_span: BTreeMap<Span, Vec<(&Insecure, Verdict)>> = BTreeMap::new();
        for s in &settings {
            let verdict = edge_for(s, objs, &tunnels);
            by_span.entry(s.span).or_default().push((s, verdict));
        }
        let mut out = Vec::new();
        for (_, contexts) in by_span {
            // A setting several Applications deploy must be safe in each of them.
            let rank = |v: &Verdict| match v {
                Verdict::Rejected(_) => 0,
                Verdict::Exposed(_) => 1,
                Verdict::Accepted => 2,
            };
            let Some((s, verdict)) = contexts.into_iter().min_by_key(|(_, v)| rank(v)) else {
                continue;
            };
            match verdict {
                Verdict::Rejected(reasons) => out.push(finding(s, reasons)),
                Verdict::Exposed(routes) => out.push(exposed(s, routes)),
                Verdict::Accepted => {}
            }
        }
        out
    }
}

enum Verdict {
    /// Every route terminates TLS.
    Accepted,
    /// No edge terminates TLS: why each candidate does not count (empty: no candidate).
    Rejected(Vec<(Span, String)>),
    /// An edge terminates TLS, but these routes reach argocd-server without TLS.
    Exposed(Vec<(Span, String)>),
}

fn edge_for(s: &Insecure, objs: Objects<'_>, tunnels: &[TunnelRoute]) -> Verdict {
    let all = candidates(&s.backend(), objs, tunnels);
    let tls = all.iter().any(|c| matches!(c, Candidate::Tls(_)));
    let plain: Vec<(Span, String)> = all
        .iter()
        .filter_map(|c| match c {
            Candidate::Plain(span, why) => Some((*span, why.clone())),
            _ => None,
        })
        .collect();
    if tls {
        return if plain.is_empty() {
            Verdict::Accepted
        } else {
            Verdict::Exposed(plain)
        };
    }
    let mut rejected: Vec<(Span, String)> = all
        .into_iter()
        .filter_map(|c| match c {
            Candidate::Plain(span, why) | Candidate::Rejected(span, why) => Some((span, why)),
            Candidate::Tls(_) => None,
        })
        .collect();
    if rejected.is_empty() {
        // Nothing routes to argocd-server: point at Gateways that could.
        for g in objs.of(GATEWAY_API, "Gateway").take(3) {
            let tls = g
                .spec()
                .and_then(|s| s.get("listeners"))
                .into_iter()
                .flat_map(Node::items)
                .find(|l| {
                    matches!(l.get_str("protocol"), Some("HTTPS" | "TLS"))
                        && l.path(&["tls", "mode"]).and_then(Node::as_str) != Some("Passthrough")
                });
            if let Some(l) = tls {
                rejected.push((
                    l.get("name").map_or(l.span, |n| n.span),
                    format!(
                        "Gateway `{}` terminates TLS on listener `{}`, but no route attaches argocd-server to it",
                        g.name,
                        l.get_str("name").unwrap_or("?")
                    ),
                ));
            }
        }
    }
    Verdict::Rejected(rejected)
}

/// An edge terminates TLS, but other routes reach argocd-server without it.
fn exposed(s: &Insecure, routes: Vec<(Span, String)>) -> Finding {
    let services = format!("`{}`", s.services.join("` or `"));
    let message = format!(
        "argocd-server serves plain HTTP ({}), and not every route to it terminates TLS",
        s.what
    );
    let help = format!(
        "Terminate TLS on every route to {services}: attach HTTPRoutes to HTTPS listeners only (`sectionName`), give every Ingress `tls` for its hosts, and leave plain HTTP listeners to a redirect (a `RequestRedirect` filter with `scheme: https` and no `backendRefs`)."
    );
    labelled(Finding::new(message, s.span).with_help(help), s, routes)
}

fn labelled(mut f: Finding, s: &Insecure, reasons: Vec<(Span, String)>) -> Finding {
    let mut seen = HashSet::new();
    for (span, msg) in reasons {
        if seen.insert((span, msg.clone())) {
            f = f.with_label(span, msg);
        }
    }
    if let Some((span, msg)) = &s.context {
        f = f.with_label(*span, msg.clone());
    }
    f
}

fn finding(s: &Insecure, reasons: Vec<(Span, String)>) -> Finding {
    let mut services = format!("`{}`", s.services.join("` or `"));
    // Several instances may live in one repository: name the one without a route.
    if let Some(ns) = &s.namespace {
        services.push_str(&format!(" in namespace `{ns}`"));
    }
    let message = if reasons.is_empty() {
        format!(
            "argocd-server serves plain HTTP ({}), and no route to {services} was found in the repository",
            s.what
        )
    } else {
        format!(
            "argocd-server serves plain HTTP ({}), and no edge in the repository terminates TLS in front of it",
            s.what
        )
    };
    let help = if reasons.is_empty() {
        format!(
            "Route {services} through an edge that terminates TLS (an HTTPRoute attached to a Gateway listener with `protocol: HTTPS` and `certificateRefs`, an Ingress with `tls`, an OpenShift Route with `tls.termination: edge`, a Cloudflare tunnel), or, if TLS ends outside the repository, set `argocd.edge_tls: {{mode: external, reason: ...}}` in .gitops-lint.yaml."
        )
    } else {
        "Make the edge terminate TLS: attach the route to a Gateway listener with `protocol: HTTPS`, `tls.mode: Terminate` and `certificateRefs` whose hostname matches the route, or add `tls` for the host to the Ingress (or IngressRoute, HTTPProxy); if TLS ends outside the repository, set `argocd.edge_tls: {mode: external, reason: ...}` in .gitops-lint.yaml.".to_string()
    };
    labelled(Finding::new(message, s.span).with_help(help), s, reasons)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::argocd::server::{is_insecure_flag, is_true};
    use crate::model::k8s::routes::gateway::hostnames_intersect;
    use crate::model::k8s::routes::ingress::ingress_host_covers;

    /// Every candidate edge of every insecure setting of a file, described.
    fn edges(text: &str) -> Vec<Result<String, String>> {
        let report =
            crate::engine::check_texts(&[("x.yaml", text)], crate::config::Config::default());
        let model = crate::model::Model::new(&report.repo, report.config.settings());
        let options = crate::rule::RuleOptions::default();
        let cx = Context::new(&model, &options);
        let objs = cx.model.k8s();
        let tunnels = tunnel_routes(cx.repo, objs);
        find_insecure(&cx, objs, "argocd-server")
            .iter()
            .flat_map(|s| candidates(&s.backend(), objs, &tunnels))
            .map(|c| match c {
                Candidate::Tls(edge) => Ok(edge),
                Candidate::Plain(_, why) => Err(format!("plain: {why}")),
                Candidate::Rejected(_, why) => Err(why),
            })
            .collect()
    }

    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cmd-params-cm\n  namespace: argocd\ndata:\n  server.insecure: \"true\"\n---\n";

    #[test]
    fn describes_the_accepted_edge() {
        let gw = "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: edge\n  namespace: argocd\nspec:\n  listeners:\n    - {name: http, protocol: HTTP, port: 80}\n    - name: https\n      protocol: HTTPS\n      port: 443\n      hostname: '*.example.com'\n      tls: {certificateRefs: [{name: wildcard}]}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: argocd\n  namespace: argocd\nspec:\n  parentRefs: [{name: edge}]\n  hostnames: [argocd.example.com]\n  rules:\n    - backendRefs: [{name: argocd-server, port: 80}]\n";
        assert_eq!(
            edges(&format!("{CM}{gw}")),
            vec![
                Ok("HTTPRoute `argocd` -> Gateway `edge` listener `https` (HTTPS, certificate `wildcard`)".to_string()),
                // No `sectionName`, and the `http` listener admits routes of its namespace.
                Err("plain: HTTPRoute `argocd` also attaches to listener `http` of Gateway `edge`, which is plain HTTP: attach it to the HTTPS listener only (`sectionName`)".to_string()),
            ]
        );
        // The same route to an argocd-server of another namespace is no candidate.
        let other = gw.replace(
            "backendRefs: [{name: argocd-server, port: 80}]",
            "backendRefs: [{name: argocd-server, namespace: web, port: 80}]",
        );
        assert!(edges(&format!("{CM}{other}")).is_empty());
        // Istio and Gateway API kinds are not confused, either way.
        let vs = "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata:\n  name: argocd\n  namespace: argocd\nspec:\n  hosts: [argocd.example.com]\n  gateways: [edge]\n  http:\n    - route: [{destination: {host: argocd-server}}]\n";
        let gw_only = gw.split("---").next().unwrap();
        assert_eq!(
            edges(&format!("{CM}{gw_only}---\n{vs}")),
            vec![Err("VirtualService `argocd` is bound to Istio Gateway `edge`, but the only Gateway `edge` in the repository is a Gateway API (`gateway.networking.k8s.io`) one, not an Istio (`networking.istio.io`) one".to_string())]
        );
    }

    #[test]
    fn hostnames_intersect_like_gateway_api() {
        assert!(hostnames_intersect("test.example.com", "test.example.com"));
        assert!(hostnames_intersect("test.example.com", "*.example.com"));
        assert!(hostnames_intersect("*.example.com", "foo.test.example.com"));
        assert!(hostnames_intersect("*.example.com", "*.example.com"));
        assert!(!hostnames_intersect("*.example.com", "example.com"));
        assert!(!hostnames_intersect("test.example.com", "test.example.net"));
        assert!(!hostnames_intersect(
            "argocd.example.com",
            "grafana.example.com"
        ));
    }

    #[test]
    fn flags_and_truthiness_follow_argo_cd() {
        assert!(is_insecure_flag("--insecure"));
        assert!(is_insecure_flag("--insecure=true"));
        assert!(is_insecure_flag("--insecure=1"));
        assert!(!is_insecure_flag("--insecure=false"));
        assert!(!is_insecure_flag("--insecure-skip-verify"));
        assert!(is_true("TRUE"));
        assert!(!is_true("1"));
        assert!(!is_true("yes"));
        assert!(ingress_host_covers("*.example.com", "argocd.example.com"));
        assert!(!ingress_host_covers("*.example.com", "a.b.example.com"));
    }
}
