//! Routes to a Service from outside the cluster, judged by whether they terminate TLS:
//! Gateway API routes resolved to their Gateway listeners (`gateway.rs`), Ingresses,
//! OpenShift Routes, Istio VirtualServices and the argo-cd chart's own objects (`ingress.rs`),
//! Traefik IngressRoutes and Contour HTTPProxies (`proxies.rs`), and tunnels that end TLS at
//! an outside edge (`tunnels.rs`).

pub mod gateway;
pub mod ingress;
pub mod proxies;
pub mod tunnels;

use super::{Objects, namespaces_may_match};
use crate::model::helm::values::Values;
use crate::source::Span;
use gateway::gateway_api_routes;
use ingress::{chart_edges, ingresses, istio, openshift_routes};
use tunnels::TunnelRoute;

/// API group of the Gateway API.
pub const GATEWAY_API: &str = "gateway.networking.k8s.io";
/// API group of Istio's networking objects.
pub const ISTIO: &str = "networking.istio.io";

/// The Service routes are looked for: its names, its namespace when known, and the argo-cd
/// chart's values when that chart deploys it (its own Ingress, HTTPRoute and Route).
pub struct Backend<'a> {
    /// Where a route without a place of its own points.
    pub span: Span,
    pub namespace: Option<&'a str>,
    pub services: &'a [String],
    pub chart: Option<&'a Values>,
}

/// One edge through one parent: `Ok` describes an edge that terminates TLS.
pub type Check = Result<String, (Span, String)>;

/// An edge in front of argocd-server, judged.
#[derive(Debug, PartialEq, Eq)]
pub enum Candidate {
    /// It terminates TLS.
    Tls(String),
    /// It reaches argocd-server over plain HTTP.
    Plain(Span, String),
    /// It does not count (passes TLS through, unresolved, mesh only...), and why.
    Rejected(Span, String),
}

#[derive(Default)]
pub struct Candidates(pub Vec<Candidate>);

impl Candidates {
    pub fn push(&mut self, c: Check) {
        self.0.push(match c {
            Ok(edge) => Candidate::Tls(edge),
            Err((span, why)) => Candidate::Rejected(span, why),
        });
    }

    pub fn plain(&mut self, span: Span, why: String) {
        self.0.push(Candidate::Plain(span, why));
    }
}

/// Every edge routing to argocd-server, judged.
pub fn candidates(s: &Backend<'_>, objs: Objects<'_>, tunnels: &[TunnelRoute]) -> Vec<Candidate> {
    let mut checks = Candidates::default();
    gateway_api_routes(s, objs, &mut checks);
    ingresses(s, objs, &mut checks);
    openshift_routes(s, objs, &mut checks);
    istio(s, objs, &mut checks);
    proxies::traefik(s, objs, &mut checks);
    proxies::contour(s, objs, &mut checks);
    if let Some(values) = s.chart {
        chart_edges(s, values, objs, &mut checks);
    }
    for t in tunnels {
        if backend_matches(s, &t.service, t.namespace.as_deref()) {
            let host = t
                .hostname
                .as_deref()
                .map_or(String::new(), |h| format!(" for `{h}`"));
            checks.push(Ok(format!("{}{host}", t.via)));
        }
    }
    checks.0
}

pub fn backend_matches(s: &Backend<'_>, name: &str, ns: Option<&str>) -> bool {
    s.services.iter().any(|n| n == name) && namespaces_may_match(ns, s.namespace)
}
