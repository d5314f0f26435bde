//! Ingresses, OpenShift Routes, Istio VirtualServices and the argo-cd chart's own objects in
//! front of a Service.

use super::gateway::{ParentRef, RouteInfo, attach_all, hostnames_intersect, parent_from_values};
use super::tunnels::tls_only_ingress_class;
use super::{Backend, Candidates, GATEWAY_API, ISTIO, backend_matches};
use crate::model::argocd::server::is_true;
use crate::model::helm::values::Values;
use crate::model::k8s::{Object, Objects, namespaces_may_match};
use crate::source::Span;
use crate::yaml::Node;

pub fn ingresses(s: &Backend<'_>, objs: Objects<'_>, checks: &mut Candidates) {
    for ing in ["networking.k8s.io", "extensions"]
        .into_iter()
        .flat_map(|group| objs.of(group, "Ingress"))
    {
        let Some(spec) = ing.spec() else { continue };
        if !namespaces_may_match(ing.namespace, s.namespace) {
            continue;
        }
        let backend_name = |b: &Node| -> Option<String> {
            b.path(&["service", "name"])
                .or_else(|| b.get("serviceName"))
                .and_then(Node::as_str)
                .map(str::to_string)
        };
        let targets = |b: &Node| backend_name(b).is_some_and(|n| s.services.contains(&n));
        // (host, span) of every rule routing to argocd-server; `None`: any host.
        let mut hosts: Vec<(Option<&str>, Span)> = Vec::new();
        for key in ["defaultBackend", "backend"] {
            if let Some(b) = spec.get(key).filter(|b| targets(b)) {
                hosts.push((None, b.span));
            }
        }
        for rule in spec.get("rules").into_iter().flat_map(Node::items) {
            let hit = rule
                .path(&["http", "paths"])
                .into_iter()
                .flat_map(Node::items)
                .filter_map(|p| p.get("backend"))
                .any(targets);
            if hit {
                let host = rule.get_str("host");
                let span = rule.get("host").map_or(rule.span, |h| h.span);
                hosts.push((host, span));
            }
        }
        if hosts.is_empty() {
            continue;
        }
        let passthrough = ing
            .doc
            .root
            .path(&[
                "metadata",
                "annotations",
                "nginx.ingress.kubernetes.io/ssl-passthrough",
            ])
            .and_then(Node::scalar_text)
            .is_some_and(is_true);
        let class = spec.get_str("ingressClassName").or_else(|| {
            ing.doc
                .root
                .path(&["metadata", "annotations", "kubernetes.io/ingress.class"])
                .and_then(Node::as_str)
        });
        if let Some((class, why)) = class.and_then(|c| Some((c, tls_only_ingress_class(c)?))) {
            checks.push(Ok(format!(
                "Ingress `{}` of class `{class}` ({why})",
                ing.name
            )));
            continue;
        }
        let tls: Vec<&Node> = spec.get("tls").into_iter().flat_map(Node::items).collect();
        for (host, span) in hosts {
            if passthrough {
                checks.push(Err((span, format!("Ingress `{}` passes TLS through (`nginx.ingress.kubernetes.io/ssl-passthrough`), so argocd-server would have to terminate it", ing.name))));
                continue;
            }
            let covered = tls.iter().any(|t| {
                let th: Vec<&str> = t
                    .get("hosts")
                    .into_iter()
                    .flat_map(Node::items)
                    .filter_map(Node::as_str)
                    .collect();
                match host {
                    None => true,
                    Some(h) => th.is_empty() || th.iter().any(|x| ingress_host_covers(x, h)),
                }
            });
            let shown = host.unwrap_or("*");
            if covered {
                checks.push(Ok(format!(
                    "Ingress `{}` with `tls` for host {shown}",
                    ing.name
                )));
            } else {
                checks.plain(
                    span,
                    format!("Ingress `{}` has no `tls` for host {shown}", ing.name),
                );
            }
        }
    }
}

/// An Ingress TLS host covers a rule host: equal, or a wildcard for one label.
pub fn ingress_host_covers(tls_host: &str, host: &str) -> bool {
    if tls_host.eq_ignore_ascii_case(host) {
        return true;
    }
    match (tls_host.strip_prefix("*."), host.split_once('.')) {
        (Some(suffix), Some((_, rest))) => rest.eq_ignore_ascii_case(suffix),
        _ => false,
    }
}

pub fn openshift_routes(s: &Backend<'_>, objs: Objects<'_>, checks: &mut Candidates) {
    for r in objs.of("route.openshift.io", "Route") {
        let Some(spec) = r.spec() else { continue };
        let targets = spec
            .get("to")
            .into_iter()
            .chain(
                spec.get("alternateBackends")
                    .into_iter()
                    .flat_map(Node::items),
            )
            .any(|t| {
                t.get_str("kind").unwrap_or("Service") == "Service"
                    && t.get_str("name")
                        .is_some_and(|n| backend_matches(s, n, r.namespace))
            });
        if !targets {
            continue;
        }
        let termination = spec.path(&["tls", "termination"]).and_then(Node::as_str);
        let span = spec
            .path(&["tls", "termination"])
            .or_else(|| spec.get("to"))
            .map_or(r.doc.anchor_span(), |n| n.span);
        match termination {
            Some(t @ ("edge" | "reencrypt")) => {
                checks.push(Ok(format!("OpenShift Route `{}` (`tls.termination: {t}`)", r.name)));
                // `Allow` serves the same host over plain HTTP too.
                if let Some(allow) = spec
                    .path(&["tls", "insecureEdgeTerminationPolicy"])
                    .filter(|p| p.as_str() == Some("Allow"))
                {
                    checks.plain(allow.span, format!("OpenShift Route `{}` also serves plain HTTP (`insecureEdgeTerminationPolicy: Allow`)", r.name));
                }
            }
            Some(t) => checks.push(Err((span, format!("OpenShift Route `{}` has `tls.termination: {t}`: argocd-server would have to terminate TLS itself", r.name)))),
            None => checks.plain(span, format!("OpenShift Route `{}` has no `tls`: it serves plain HTTP", r.name)),
        }
    }
}

/// `argocd-server`, `argocd-server.argocd`, `argocd-server.argocd.svc.cluster.local`.
pub fn istio_host_matches(s: &Backend<'_>, host: &str, vs_ns: Option<&str>) -> bool {
    let mut parts = host.split('.');
    let name = parts.next().unwrap_or("");
    let ns = parts.next().or(vs_ns);
    backend_matches(s, name, ns)
}

pub fn istio(s: &Backend<'_>, objs: Objects<'_>, checks: &mut Candidates) {
    for vs in objs.of(ISTIO, "VirtualService") {
        let Some(spec) = vs.spec() else { continue };
        let vs_ns = vs.namespace;
        let hit = spec
            .get("http")
            .into_iter()
            .flat_map(Node::items)
            .flat_map(|h| h.get("route").into_iter().flat_map(Node::items))
            .filter_map(|r| r.path(&["destination", "host"]).and_then(Node::as_str))
            .any(|h| istio_host_matches(s, h, vs_ns));
        if !hit {
            continue;
        }
        let who = format!("VirtualService `{}`", vs.name);
        let hosts: Vec<&str> = spec
            .get("hosts")
            .into_iter()
            .flat_map(Node::items)
            .filter_map(Node::as_str)
            .collect();
        let gateways: Vec<&Node> = spec
            .get("gateways")
            .into_iter()
            .flat_map(Node::items)
            .collect();
        let anchor = spec
            .get("gateways")
            .or_else(|| spec.get("hosts"))
            .map_or(vs.doc.anchor_span(), |n| n.span);
        if gateways.iter().all(|g| g.as_str() == Some("mesh")) {
            checks.push(Err((
                anchor,
                format!("{who} is bound to no gateway (mesh traffic only)"),
            )));
            continue;
        }
        for g in gateways {
            let Some(gref) = g.as_str().filter(|g| *g != "mesh") else {
                continue;
            };
            let (gns, gname) = match gref.split_once('/') {
                Some((ns, n)) => (Some(ns), n),
                None => (vs_ns, gref),
            };
            let found: Vec<Object<'_>> = objs.find(ISTIO, "Gateway", gns, gname).collect();
            if found.is_empty() {
                let msg = if objs.named(GATEWAY_API, "Gateway", gname).next().is_some() {
                    format!(
                        "{who} is bound to Istio Gateway `{gref}`, but the only Gateway `{gname}` in the repository is a Gateway API (`{GATEWAY_API}`) one, not an Istio (`{ISTIO}`) one"
                    )
                } else {
                    format!(
                        "{who} is bound to Istio Gateway `{gref}`, which is not in the repository: cannot verify that it terminates TLS"
                    )
                };
                checks.push(Err((g.span, msg)));
                continue;
            }
            for gw in found {
                istio_gateway(&who, &hosts, &gw, g.span, checks);
            }
        }
    }
}

pub fn istio_gateway(
    who: &str,
    vs_hosts: &[&str],
    gw: &Object<'_>,
    span: Span,
    checks: &mut Candidates,
) {
    let mut reasons = Vec::new();
    let mut tls = None;
    let mut plain_ports = Vec::new();
    for server in gw
        .spec()
        .and_then(|s| s.get("servers"))
        .into_iter()
        .flat_map(Node::items)
    {
        let shosts: Vec<&str> = server
            .get("hosts")
            .into_iter()
            .flat_map(Node::items)
            .filter_map(Node::as_str)
            .map(|h| h.split_once('/').map_or(h, |(_, h)| h))
            .collect();
        let port = server
            .path(&["port", "number"])
            .and_then(Node::scalar_text)
            .unwrap_or("?");
        let matches = vs_hosts.is_empty()
            || shosts
                .iter()
                .any(|sh| vs_hosts.iter().any(|vh| hostnames_intersect(sh, vh)));
        if !matches {
            reasons.push(format!(
                "port {port} serves other hosts ({})",
                shosts.join(", ")
            ));
            continue;
        }
        let mode = server.path(&["tls", "mode"]).and_then(Node::as_str);
        let redirect = server
            .path(&["tls", "httpsRedirect"])
            .and_then(Node::as_bool)
            == Some(true);
        match mode {
            Some(m @ ("SIMPLE" | "MUTUAL" | "OPTIONAL_MUTUAL")) => {
                tls.get_or_insert(format!(
                    "{who} -> Istio Gateway `{}` port {port} (`tls.mode: {m}`)",
                    gw.name
                ));
            }
            Some(m) => reasons.push(format!(
                "port {port} has `tls.mode: {m}`, which does not terminate TLS"
            )),
            None if redirect => reasons.push(format!("port {port} only redirects to HTTPS")),
            None => {
                reasons.push(format!("port {port} is plain HTTP"));
                plain_ports.push(port);
            }
        }
    }
    if let Some(edge) = tls {
        checks.push(Ok(edge));
        for port in plain_ports {
            checks.plain(
                span,
                format!(
                    "{who} is bound to Istio Gateway `{}`, which also serves it as plain HTTP on port {port}",
                    gw.name
                ),
            );
        }
        return;
    }
    if reasons.is_empty() {
        reasons.push("has no servers".into());
    }
    let msg = format!(
        "{who} is bound to Istio Gateway `{}`, where {}",
        gw.name,
        reasons.join("; ")
    );
    if plain_ports.is_empty() {
        checks.push(Err((span, msg)));
    } else {
        checks.plain(span, msg);
    }
}

/// The argo-cd chart's own Ingress, HTTPRoute, GRPCRoute and OpenShift Route.
pub fn chart_edges(s: &Backend<'_>, v: &Values, objs: Objects<'_>, checks: &mut Candidates) {
    let server = v.get("server");
    let get = |path: &[&str]| server.and_then(|sv| sv.path(path));
    if let Some(enabled) = get(&["ingress", "enabled"]).filter(|e| e.is_truthy()) {
        let tls = get(&["ingress", "tls"]).is_some_and(Values::is_truthy)
            || get(&["ingress", "extraTls"]).is_some_and(|t| !t.items().is_empty());
        let controller = get(&["ingress", "controller"])
            .and_then(Values::text)
            .unwrap_or("generic");
        if tls {
            checks.push(Ok(
                "the argo-cd chart's Ingress (`server.ingress.tls`)".into()
            ));
        } else if let Some(span) = enabled.span() {
            let msg = if controller == "generic" {
                "the argo-cd chart's Ingress (`server.ingress.enabled`) has no TLS: neither `server.ingress.tls` nor `server.ingress.extraTls` is set".to_string()
            } else {
                format!(
                    "the argo-cd chart's `{controller}` Ingress has no TLS in the repository (`server.ingress.tls`, `extraTls`)"
                )
            };
            checks.plain(span, msg);
        }
    }
    for (key, kind) in [("httproute", "HTTPRoute"), ("grpcroute", "GRPCRoute")] {
        let Some(enabled) = get(&[key, "enabled"]).filter(|e| e.is_truthy()) else {
            continue;
        };
        let fallback = enabled.span().unwrap_or(s.span);
        let info = RouteInfo {
            label: format!("the argo-cd chart's {kind} (`server.{key}`)"),
            kind,
            ns: s.namespace,
            hostnames: get(&[key, "hostnames"])
                .map_or(&[][..], Values::items)
                .iter()
                .filter_map(Values::text)
                .map(str::to_string)
                .collect(),
        };
        let parents: Vec<ParentRef> = get(&[key, "parentRefs"])
            .map_or(&[][..], Values::items)
            .iter()
            .filter_map(|p| parent_from_values(p, fallback))
            .collect();
        if parents.is_empty() {
            checks.push(Err((
                fallback,
                format!("{} has no `parentRefs`", info.label),
            )));
        }
        for p in &parents {
            attach_all(&info, p, objs, checks);
        }
    }
    if let Some(enabled) = get(&["route", "enabled"]).filter(|e| e.is_truthy()) {
        let t = get(&["route", "termination_type"])
            .and_then(Values::text)
            .unwrap_or("passthrough");
        let span = get(&["route", "termination_type"])
            .and_then(Values::span)
            .or(enabled.span())
            .unwrap_or(s.span);
        checks.push(match t {
            "edge" | "reencrypt" => Ok(format!("the argo-cd chart's OpenShift Route (`termination_type: {t}`)")),
            _ => Err((span, format!("the argo-cd chart's OpenShift Route has `termination_type: {t}`: argocd-server would have to terminate TLS itself"))),
        });
    }
}
