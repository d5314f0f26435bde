//! Edges in front of argocd-server: Gateway API routes resolved to their listeners,
//! Ingresses, OpenShift Routes, Istio VirtualServices and the argo-cd chart's own objects.

use super::insecure::{Insecure, is_true};
use super::{GATEWAY_API, ISTIO, Obj, Objects};
use crate::model::values::Values;
use crate::source::Span;
use crate::yaml::Node;

pub(super) enum Verdict {
    /// An edge terminates TLS.
    Accepted,
    /// Why each candidate does not count (empty: no candidate).
    Rejected(Vec<(Span, String)>),
}

pub(super) type Check = Result<String, (Span, String)>;

pub(super) fn edge_for(s: &Insecure, objs: &Objects<'_>) -> Verdict {
    let mut rejected = Vec::new();
    for c in candidates(s, objs) {
        match c {
            Ok(_) => return Verdict::Accepted,
            Err(r) => rejected.push(r),
        }
    }
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
        return Verdict::Rejected(rejected);
    }
    Verdict::Rejected(rejected)
}

/// Every edge routing to argocd-server, each accepted or with why it does not count.
pub(super) fn candidates(s: &Insecure, objs: &Objects<'_>) -> Vec<Check> {
    let mut checks: Vec<Check> = Vec::new();
    gateway_api_routes(s, objs, &mut checks);
    ingresses(s, objs, &mut checks);
    openshift_routes(s, objs, &mut checks);
    istio(s, objs, &mut checks);
    if let Some(values) = &s.chart {
        chart_edges(s, values, objs, &mut checks);
    }
    checks
}

pub(super) fn ns_compatible(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

pub(super) fn backend_matches(s: &Insecure, name: &str, ns: Option<&str>) -> bool {
    s.services.iter().any(|n| n == name) && ns_compatible(ns, s.namespace.as_deref())
}

/// Do two hostnames (each possibly `*.suffix`) intersect, as Gateway API defines it?
pub(super) fn hostnames_intersect(a: &str, b: &str) -> bool {
    let a = a.to_ascii_lowercase();
    let b = b.to_ascii_lowercase();
    if a == b || a == "*" || b == "*" {
        return true;
    }
    let covers = |wild: &str, other: &str| {
        wild.strip_prefix("*.").is_some_and(|suffix| {
            other
                .strip_suffix(suffix)
                .is_some_and(|head| head.ends_with('.') && head.len() > 1)
        })
    };
    covers(&a, &b) || covers(&b, &a)
}

/// A route's reference to its parent, from a manifest or from chart values.
pub(super) struct ParentRef {
    pub(super) group: String,
    pub(super) kind: String,
    pub(super) name: String,
    pub(super) namespace: Option<String>,
    pub(super) section: Option<String>,
    pub(super) port: Option<String>,
    pub(super) span: Span,
}

pub(super) struct RouteInfo<'a> {
    /// "HTTPRoute `argocd-server`".
    pub(super) label: String,
    pub(super) kind: &'a str,
    pub(super) ns: Option<&'a str>,
    pub(super) hostnames: Vec<String>,
}

pub(super) fn parent_from_node(n: &Node) -> Option<ParentRef> {
    Some(ParentRef {
        group: n.get_str("group").unwrap_or(GATEWAY_API).to_string(),
        kind: n.get_str("kind").unwrap_or("Gateway").to_string(),
        name: n.get_str("name")?.to_string(),
        namespace: n.get_str("namespace").map(str::to_string),
        section: n.get_str("sectionName").map(str::to_string),
        port: n
            .get("port")
            .and_then(Node::scalar_text)
            .map(str::to_string),
        span: n.span,
    })
}

pub(super) fn parent_from_values(v: &Values, fallback: Span) -> Option<ParentRef> {
    let text = |k: &str| v.get(k).and_then(Values::text).map(str::to_string);
    Some(ParentRef {
        group: text("group").unwrap_or_else(|| GATEWAY_API.to_string()),
        kind: text("kind").unwrap_or_else(|| "Gateway".to_string()),
        name: text("name")?,
        namespace: text("namespace"),
        section: text("sectionName"),
        port: text("port"),
        span: v.get("name").and_then(Values::span).unwrap_or(fallback),
    })
}

pub(super) fn gateway_api_routes(s: &Insecure, objs: &Objects<'_>, checks: &mut Vec<Check>) {
    for kind in ["HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute"] {
        for r in objs.of(GATEWAY_API, kind) {
            let Some(spec) = r.spec() else { continue };
            let backend = spec
                .get("rules")
                .into_iter()
                .flat_map(Node::items)
                .flat_map(|rule| rule.get("backendRefs").into_iter().flat_map(Node::items))
                .find(|b| {
                    b.get_str("group").unwrap_or("").is_empty()
                        && b.get_str("kind").unwrap_or("Service") == "Service"
                        && b.get_str("name").is_some_and(|n| {
                            let ns = b.get_str("namespace").or(r.ns.as_deref());
                            backend_matches(s, n, ns)
                        })
                });
            let Some(backend) = backend else { continue };
            // A backend in another namespace needs a ReferenceGrant there.
            if let (Some(to_ns), Some(from_ns)) = (backend.get_str("namespace"), r.ns.as_deref()) {
                let name = backend.get_str("name").unwrap_or("");
                if to_ns != from_ns
                    && !granted(
                        objs,
                        (GATEWAY_API, kind, from_ns),
                        ("", "Service", to_ns, name),
                    )
                {
                    checks.push(Err((
                        backend.span,
                        format!(
                            "{kind} `{}` in namespace `{from_ns}` routes to Service `{to_ns}/{name}`, but no ReferenceGrant in `{to_ns}` allows it",
                            r.name
                        ),
                    )));
                    continue;
                }
            }
            let info = RouteInfo {
                label: format!("{kind} `{}`", r.name),
                kind,
                ns: r.ns.as_deref(),
                hostnames: spec
                    .get("hostnames")
                    .into_iter()
                    .flat_map(Node::items)
                    .filter_map(Node::as_str)
                    .map(str::to_string)
                    .collect(),
            };
            let parents: Vec<ParentRef> = spec
                .get("parentRefs")
                .into_iter()
                .flat_map(Node::items)
                .filter_map(parent_from_node)
                .collect();
            if parents.is_empty() {
                let span = r
                    .doc
                    .root
                    .entry("kind")
                    .map_or(r.doc.anchor_span(), |e| e.value.span);
                checks.push(Err((
                    span,
                    format!(
                        "{} has no `parentRefs`: it attaches to no Gateway",
                        info.label
                    ),
                )));
            }
            for p in &parents {
                checks.push(attach(&info, p, objs));
            }
        }
    }
}

/// Is a reference from `(group, kind, namespace)` to `(group, kind, namespace, name)` in
/// another namespace allowed by a ReferenceGrant of the target namespace?
pub(super) fn granted(
    objs: &Objects<'_>,
    from: (&str, &str, &str),
    to: (&str, &str, &str, &str),
) -> bool {
    objs.of(GATEWAY_API, "ReferenceGrant")
        .filter(|g| g.ns.as_deref().is_none_or(|ns| ns == to.2))
        .filter_map(Obj::spec)
        .any(|spec| {
            let from_ok = spec.get("from").into_iter().flat_map(Node::items).any(|f| {
                f.get_str("group").unwrap_or("") == from.0
                    && f.get_str("kind") == Some(from.1)
                    && f.get_str("namespace") == Some(from.2)
            });
            let to_ok = spec.get("to").into_iter().flat_map(Node::items).any(|t| {
                t.get_str("group").unwrap_or("") == to.0
                    && t.get_str("kind") == Some(to.1)
                    && t.get_str("name").is_none_or(|n| n == to.3)
            });
            from_ok && to_ok
        })
}

/// Does the route, through this parent reference, reach a listener that terminates TLS?
pub(super) fn attach(route: &RouteInfo<'_>, p: &ParentRef, objs: &Objects<'_>) -> Check {
    let who = &route.label;
    if p.group != GATEWAY_API || p.kind != "Gateway" {
        return Err((
            p.span,
            format!(
                "{who} attaches to {} `{}` ({}), which gitops-lint does not resolve",
                p.kind, p.name, p.group
            ),
        ));
    }
    let ns = p.namespace.as_deref().or(route.ns);
    let gateways: Vec<&Obj<'_>> = objs
        .of(GATEWAY_API, "Gateway")
        .filter(|g| g.name == p.name && ns_compatible(g.ns.as_deref(), ns))
        .collect();
    let shown = match ns {
        Some(ns) => format!("{ns}/{}", p.name),
        None => p.name.clone(),
    };
    if gateways.is_empty() {
        if let Some(istio) = objs.of(ISTIO, "Gateway").find(|g| g.name == p.name) {
            return Err((
                p.span,
                format!(
                    "{who} attaches to Gateway `{shown}`, but the only Gateway `{}` in the repository is an Istio `{}` Gateway, not a Gateway API (`{GATEWAY_API}`) one",
                    p.name,
                    istio.doc.api_version().unwrap_or(ISTIO)
                ),
            ));
        }
        if let Some(other) = objs.of(GATEWAY_API, "Gateway").find(|g| g.name == p.name) {
            return Err((
                p.span,
                format!(
                    "{who} attaches to Gateway `{shown}`, but the Gateway `{}` of the repository is in namespace `{}`",
                    p.name,
                    other.ns.as_deref().unwrap_or("")
                ),
            ));
        }
        return Err((
            p.span,
            format!(
                "{who} attaches to Gateway `{shown}`, which is not in the repository: cannot verify that it terminates TLS"
            ),
        ));
    }
    let mut last = None;
    for g in gateways {
        match gateway_listeners(route, p, g, objs) {
            Ok(edge) => return Ok(edge),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or((p.span, String::new())))
}

pub(super) fn gateway_listeners(
    route: &RouteInfo<'_>,
    p: &ParentRef,
    g: &Obj<'_>,
    objs: &Objects<'_>,
) -> Check {
    let who = &route.label;
    let gname = g.name;
    let listeners: Vec<&Node> = g
        .spec()
        .and_then(|s| s.get("listeners"))
        .into_iter()
        .flat_map(Node::items)
        .collect();
    let selected: Vec<&Node> = listeners
        .iter()
        .copied()
        .filter(|l| {
            p.section
                .as_deref()
                .is_none_or(|s| l.get_str("name") == Some(s))
        })
        .filter(|l| {
            p.port
                .as_deref()
                .is_none_or(|port| l.get("port").and_then(Node::scalar_text) == Some(port))
        })
        .collect();
    if selected.is_empty() {
        let what = match (&p.section, &p.port) {
            (Some(s), _) => format!("no listener `{s}`"),
            (None, Some(port)) => format!("no listener on port {port}"),
            _ => "no listeners".to_string(),
        };
        return Err((
            p.span,
            format!("{who} attaches to Gateway `{gname}`, which has {what}"),
        ));
    }
    let mut reasons = Vec::new();
    for l in &selected {
        let lname = l.get_str("name").unwrap_or("?");
        match listener_terminates(route, g, l, objs) {
            Ok(()) => {
                let cert = l
                    .path(&["tls", "certificateRefs"])
                    .and_then(|c| c.items().next())
                    .and_then(|c| c.get_str("name"))
                    .unwrap_or("?");
                return Ok(format!(
                    "{who} -> Gateway `{}` listener `{lname}` ({}, certificate `{cert}`)",
                    gname,
                    l.get_str("protocol").unwrap_or("?")
                ));
            }
            Err(why) => reasons.push((lname, why)),
        }
    }
    let msg = if p.section.is_some() {
        let (lname, why) = &reasons[0];
        // Another listener of the same Gateway would do: say which.
        let better = listeners
            .iter()
            .filter(|l| l.get_str("name") != Some(lname))
            .find(|l| listener_terminates(route, g, l, objs).is_ok())
            .and_then(|l| l.get_str("name"));
        match better {
            Some(b) => format!(
                "{who} attaches to listener `{lname}` of Gateway `{gname}` (`sectionName`), which {why}; listener `{b}` terminates TLS: use `sectionName: {b}`"
            ),
            None => format!(
                "{who} attaches to listener `{lname}` of Gateway `{gname}` (`sectionName`), which {why}"
            ),
        }
    } else if listeners.len() == 1 {
        let (lname, why) = &reasons[0];
        format!("{who} attaches to Gateway `{gname}`, whose only listener `{lname}` {why}")
    } else {
        let list: Vec<String> = reasons.iter().map(|(n, w)| format!("`{n}` {w}")).collect();
        format!(
            "{who} attaches to Gateway `{gname}`, but none of its listeners terminates TLS for it: {}",
            list.join("; ")
        )
    };
    Err((p.span, msg))
}

/// `Ok` when the listener accepts the route and terminates TLS; else why not ("is plain HTTP").
pub(super) fn listener_terminates(
    route: &RouteInfo<'_>,
    g: &Obj<'_>,
    l: &Node,
    objs: &Objects<'_>,
) -> Result<(), String> {
    let protocol = l.get_str("protocol").unwrap_or("");
    // Which routes it accepts: its namespaces and kinds.
    let from = l
        .path(&["allowedRoutes", "namespaces", "from"])
        .and_then(Node::as_str)
        .unwrap_or("Same");
    match from {
        "None" => return Err("admits no routes (`allowedRoutes.namespaces.from: None`)".into()),
        "Same" if !ns_compatible(g.ns.as_deref(), route.ns) => {
            return Err(format!(
                "only admits routes from namespace `{}` (`allowedRoutes.namespaces.from: Same`)",
                g.ns.as_deref().unwrap_or("")
            ));
        }
        "Selector" => {
            let labels = l.path(&["allowedRoutes", "namespaces", "selector", "matchLabels"]);
            if let (Some(want), Some(ns)) = (
                labels.and_then(|m| m.get_str("kubernetes.io/metadata.name")),
                route.ns,
            ) {
                if want != ns {
                    return Err(format!(
                        "only admits routes from namespace `{want}` (`allowedRoutes.namespaces.selector`)"
                    ));
                }
            }
        }
        _ => {}
    }
    let kinds: Vec<&str> = l
        .path(&["allowedRoutes", "kinds"])
        .into_iter()
        .flat_map(Node::items)
        .filter_map(|k| k.get_str("kind"))
        .collect();
    let accepts = if kinds.is_empty() {
        match protocol {
            "HTTP" | "HTTPS" => matches!(route.kind, "HTTPRoute" | "GRPCRoute"),
            "TLS" => route.kind == "TLSRoute",
            "TCP" => route.kind == "TCPRoute",
            _ => true,
        }
    } else {
        kinds.contains(&route.kind)
    };
    if !accepts {
        return Err(format!(
            "(protocol {protocol}) does not accept a {}",
            route.kind
        ));
    }
    if let Some(h) = l.get_str("hostname") {
        if !route.hostnames.is_empty() && !route.hostnames.iter().any(|r| hostnames_intersect(h, r))
        {
            return Err(format!(
                "has hostname `{h}`, which matches none of the route's hostnames ({})",
                route.hostnames.join(", ")
            ));
        }
    }
    match protocol {
        "HTTPS" | "TLS" => {}
        "HTTP" => return Err("is plain HTTP".into()),
        other => {
            return Err(format!(
                "has protocol `{other}`, which does not terminate TLS"
            ));
        }
    }
    let mode = l
        .path(&["tls", "mode"])
        .and_then(Node::as_str)
        .unwrap_or("Terminate");
    if mode == "Passthrough" {
        return Err(
            "passes TLS through (`tls.mode: Passthrough`) to a backend that serves plain HTTP"
                .into(),
        );
    }
    let certs: Vec<&Node> = l
        .path(&["tls", "certificateRefs"])
        .into_iter()
        .flat_map(Node::items)
        .collect();
    if certs.is_empty() {
        return Err("has no `tls.certificateRefs`".into());
    }
    // A certificate in another namespace needs a ReferenceGrant there.
    let usable = |c: &&Node| match (c.get_str("namespace"), g.ns.as_deref()) {
        (Some(ns), Some(gw_ns)) if ns != gw_ns => granted(
            objs,
            (GATEWAY_API, "Gateway", gw_ns),
            (
                c.get_str("group").unwrap_or(""),
                c.get_str("kind").unwrap_or("Secret"),
                ns,
                c.get_str("name").unwrap_or(""),
            ),
        ),
        _ => true,
    };
    if !certs.iter().any(usable) {
        let c = certs[0];
        return Err(format!(
            "uses certificate `{}/{}` of another namespace, and no ReferenceGrant there allows it",
            c.get_str("namespace").unwrap_or(""),
            c.get_str("name").unwrap_or("")
        ));
    }
    Ok(())
}

pub(super) fn ingresses(s: &Insecure, objs: &Objects<'_>, checks: &mut Vec<Check>) {
    for ing in objs.of_groups(&["networking.k8s.io", "extensions"], "Ingress") {
        let Some(spec) = ing.spec() else { continue };
        if !ns_compatible(ing.ns.as_deref(), s.namespace.as_deref()) {
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
                checks.push(Err((
                    span,
                    format!("Ingress `{}` has no `tls` for host {shown}", ing.name),
                )));
            }
        }
    }
}

/// An Ingress TLS host covers a rule host: equal, or a wildcard for one label.
pub(super) fn ingress_host_covers(tls_host: &str, host: &str) -> bool {
    if tls_host.eq_ignore_ascii_case(host) {
        return true;
    }
    match (tls_host.strip_prefix("*."), host.split_once('.')) {
        (Some(suffix), Some((_, rest))) => rest.eq_ignore_ascii_case(suffix),
        _ => false,
    }
}

pub(super) fn openshift_routes(s: &Insecure, objs: &Objects<'_>, checks: &mut Vec<Check>) {
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
                        .is_some_and(|n| backend_matches(s, n, r.ns.as_deref()))
            });
        if !targets {
            continue;
        }
        let termination = spec.path(&["tls", "termination"]).and_then(Node::as_str);
        let span = spec
            .path(&["tls", "termination"])
            .or_else(|| spec.get("to"))
            .map_or(r.doc.anchor_span(), |n| n.span);
        checks.push(match termination {
            Some(t @ ("edge" | "reencrypt")) => Ok(format!("OpenShift Route `{}` (`tls.termination: {t}`)", r.name)),
            Some(t) => Err((span, format!("OpenShift Route `{}` has `tls.termination: {t}`: argocd-server would have to terminate TLS itself", r.name))),
            None => Err((span, format!("OpenShift Route `{}` has no `tls`: it serves plain HTTP", r.name))),
        });
    }
}

/// `argocd-server`, `argocd-server.argocd`, `argocd-server.argocd.svc.cluster.local`.
pub(super) fn istio_host_matches(s: &Insecure, host: &str, vs_ns: Option<&str>) -> bool {
    let mut parts = host.split('.');
    let name = parts.next().unwrap_or("");
    let ns = parts.next().or(vs_ns);
    backend_matches(s, name, ns)
}

pub(super) fn istio(s: &Insecure, objs: &Objects<'_>, checks: &mut Vec<Check>) {
    for vs in objs.of(ISTIO, "VirtualService") {
        let Some(spec) = vs.spec() else { continue };
        let vs_ns = vs.ns.as_deref();
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
            let found: Vec<&Obj<'_>> = objs
                .of(ISTIO, "Gateway")
                .filter(|o| o.name == gname && ns_compatible(o.ns.as_deref(), gns))
                .collect();
            if found.is_empty() {
                let msg = if objs.of(GATEWAY_API, "Gateway").any(|o| o.name == gname) {
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
                checks.push(istio_gateway(&who, &hosts, gw, g.span));
            }
        }
    }
}

pub(super) fn istio_gateway(who: &str, vs_hosts: &[&str], gw: &Obj<'_>, span: Span) -> Check {
    let mut reasons = Vec::new();
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
                return Ok(format!(
                    "{who} -> Istio Gateway `{}` port {port} (`tls.mode: {m}`)",
                    gw.name
                ));
            }
            Some(m) => reasons.push(format!(
                "port {port} has `tls.mode: {m}`, which does not terminate TLS"
            )),
            None if redirect => reasons.push(format!("port {port} only redirects to HTTPS")),
            None => reasons.push(format!("port {port} is plain HTTP")),
        }
    }
    if reasons.is_empty() {
        reasons.push("has no servers".into());
    }
    Err((
        span,
        format!(
            "{who} is bound to Istio Gateway `{}`, where {}",
            gw.name,
            reasons.join("; ")
        ),
    ))
}

/// The argo-cd chart's own Ingress, HTTPRoute, GRPCRoute and OpenShift Route.
pub(super) fn chart_edges(s: &Insecure, v: &Values, objs: &Objects<'_>, checks: &mut Vec<Check>) {
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
            checks.push(Err((span, msg)));
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
            ns: s.namespace.as_deref(),
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
            checks.push(attach(&info, p, objs));
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
