//! Gateway API: routes to a Service resolved to the Gateway listeners they attach to, with
//! Gateway API's hostname, namespace and ReferenceGrant rules.

use super::tunnels::tunnel_gateway_controller;
use super::{Backend, Candidates, Check, GATEWAY_API, ISTIO, backend_matches};
use crate::model::helm::values::Values;
use crate::model::k8s::{Object, Objects, namespaces_may_match};
use crate::source::Span;
use crate::yaml::Node;

/// Do two hostnames (each possibly `*.suffix`) intersect, as Gateway API defines it?
pub fn hostnames_intersect(a: &str, b: &str) -> bool {
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
pub struct ParentRef {
    pub group: String,
    pub kind: String,
    pub name: String,
    pub namespace: Option<String>,
    pub section: Option<String>,
    pub port: Option<String>,
    pub span: Span,
}

pub struct RouteInfo<'a> {
    /// "HTTPRoute `argocd-server`".
    pub label: String,
    pub kind: &'a str,
    pub ns: Option<&'a str>,
    pub hostnames: Vec<String>,
}

pub fn parent_from_node(n: &Node) -> Option<ParentRef> {
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

pub fn parent_from_values(v: &Values, fallback: Span) -> Option<ParentRef> {
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

pub fn gateway_api_routes(s: &Backend<'_>, objs: Objects<'_>, checks: &mut Candidates) {
    for kind in ["HTTPRoute", "GRPCRoute", "TLSRoute", "TCPRoute"] {
        for r in objs.of(GATEWAY_API, kind) {
            let Some(spec) = r.spec() else { continue };
            let backend = spec
                .get("rules")
                .into_iter()
                .flat_map(Node::items)
                .filter(|rule| !redirects_to_https(rule))
                .flat_map(|rule| rule.get("backendRefs").into_iter().flat_map(Node::items))
                .find(|b| {
                    b.get_str("group").unwrap_or("").is_empty()
                        && b.get_str("kind").unwrap_or("Service") == "Service"
                        && b.get_str("name").is_some_and(|n| {
                            let ns = b.get_str("namespace").or(r.namespace);
                            backend_matches(s, n, ns)
                        })
                });
            let Some(backend) = backend else { continue };
            // A backend in another namespace needs a ReferenceGrant there.
            if let (Some(to_ns), Some(from_ns)) = (backend.get_str("namespace"), r.namespace) {
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
                ns: r.namespace,
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
                attach_all(&info, p, objs, checks);
            }
        }
    }
}

/// A rule that answers with a redirect to HTTPS (`RequestRedirect` with `scheme: https`)
/// forwards nothing to its backends.
fn redirects_to_https(rule: &Node) -> bool {
    rule.get("filters")
        .into_iter()
        .flat_map(Node::items)
        .any(|f| {
            f.get_str("type") == Some("RequestRedirect")
                && f.path(&["requestRedirect", "scheme"])
                    .and_then(Node::as_str)
                    .is_some_and(|s| s.eq_ignore_ascii_case("https"))
        })
}

/// The route through this parent: the edge that terminates TLS, or why none does; and every
/// plain HTTP listener it also attaches to.
pub fn attach_all(
    route: &RouteInfo<'_>,
    p: &ParentRef,
    objs: Objects<'_>,
    checks: &mut Candidates,
) {
    let ns = p.namespace.as_deref().or(route.ns);
    let plain: Vec<(&str, &str)> = if p.group == GATEWAY_API && p.kind == "Gateway" {
        objs.find(GATEWAY_API, "Gateway", ns, &p.name)
            .filter(|g| tunnel_gateway(g, objs).is_none())
            .flat_map(|g| {
                selected_listeners(p, &g)
                    .into_iter()
                    .filter(move |l| {
                        l.get_str("protocol") == Some("HTTP")
                            && listener_admits(route, &g, l).is_ok()
                    })
                    .map(move |l| (g.name, l.get_str("name").unwrap_or("?")))
            })
            .collect()
    } else {
        Vec::new()
    };
    match attach(route, p, objs) {
        Ok(edge) => {
            checks.push(Ok(edge));
            for (gname, lname) in plain {
                checks.plain(
                    p.span,
                    format!(
                        "{} also attaches to listener `{lname}` of Gateway `{gname}`, which is plain HTTP: attach it to the HTTPS listener only (`sectionName`)",
                        route.label
                    ),
                );
            }
        }
        Err((span, why)) if !plain.is_empty() => checks.plain(span, why),
        Err(e) => checks.push(Err(e)),
    }
}

/// Why Gateway `g` is a tunnel (its GatewayClass's controller), if it is one.
fn tunnel_gateway(g: &Object<'_>, objs: Objects<'_>) -> Option<&'static str> {
    let class = g.spec()?.get_str("gatewayClassName")?;
    objs.named(GATEWAY_API, "GatewayClass", class)
        .filter_map(|c| c.spec()?.get_str("controllerName"))
        .find_map(tunnel_gateway_controller)
}

/// The listeners of Gateway `g` a parent reference selects (`sectionName`, `port`).
fn selected_listeners<'g>(p: &ParentRef, g: &Object<'g>) -> Vec<&'g Node> {
    g.spec()
        .and_then(|s| s.get("listeners"))
        .into_iter()
        .flat_map(Node::items)
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
        .collect()
}

/// Is a reference from `(group, kind, namespace)` to `(group, kind, namespace, name)` in
/// another namespace allowed by a ReferenceGrant of the target namespace?
pub fn granted(objs: Objects<'_>, from: (&str, &str, &str), to: (&str, &str, &str, &str)) -> bool {
    objs.of(GATEWAY_API, "ReferenceGrant")
        .filter(|g| g.namespace.is_none_or(|ns| ns == to.2))
        .filter_map(|g| g.spec())
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
pub fn attach(route: &RouteInfo<'_>, p: &ParentRef, objs: Objects<'_>) -> Check {
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
    let gateways: Vec<Object<'_>> = objs.find(GATEWAY_API, "Gateway", ns, &p.name).collect();
    let shown = match ns {
        Some(ns) => format!("{ns}/{}", p.name),
        None => p.name.clone(),
    };
    if gateways.is_empty() {
        if let Some(istio) = objs.named(ISTIO, "Gateway", &p.name).next() {
            return Err((
                p.span,
                format!(
                    "{who} attaches to Gateway `{shown}`, but the only Gateway `{}` in the repository is an Istio `{}` Gateway, not a Gateway API (`{GATEWAY_API}`) one",
                    p.name,
                    istio.doc.api_version().unwrap_or(ISTIO)
                ),
            ));
        }
        if let Some(other) = objs.named(GATEWAY_API, "Gateway", &p.name).next() {
            return Err((
                p.span,
                format!(
                    "{who} attaches to Gateway `{shown}`, but the Gateway `{}` of the repository is in namespace `{}`",
                    p.name,
                    other.namespace.unwrap_or("")
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
        match gateway_listeners(route, p, &g, objs) {
            Ok(edge) => return Ok(edge),
            Err(e) => last = Some(e),
        }
    }
    Err(last.unwrap_or((p.span, String::new())))
}

pub fn gateway_listeners(
    route: &RouteInfo<'_>,
    p: &ParentRef,
    g: &Object<'_>,
    objs: Objects<'_>,
) -> Check {
    let who = &route.label;
    let gname = g.name;
    let listeners: Vec<&Node> = g
        .spec()
        .and_then(|s| s.get("listeners"))
        .into_iter()
        .flat_map(Node::items)
        .collect();
    let selected = selected_listeners(p, g);
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
                if let Some(why) = tunnel_gateway(g, objs) {
                    return Ok(format!(
                        "{who} -> Gateway `{gname}` listener `{lname}` ({why})"
                    ));
                }
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
pub fn listener_terminates(
    route: &RouteInfo<'_>,
    g: &Object<'_>,
    l: &Node,
    objs: Objects<'_>,
) -> Result<(), String> {
    listener_admits(route, g, l)?;
    if tunnel_gateway(g, objs).is_some() {
        return Ok(());
    }
    let protocol = l.get_str("protocol").unwrap_or("");
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
    let usable = |c: &&Node| match (c.get_str("namespace"), g.namespace) {
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

/// `Ok` when the listener admits the route: its namespace, its kind and its hostnames.
fn listener_admits(route: &RouteInfo<'_>, g: &Object<'_>, l: &Node) -> Result<(), String> {
    let protocol = l.get_str("protocol").unwrap_or("");
    // Which routes it accepts: its namespaces and kinds.
    let from = l
        .path(&["allowedRoutes", "namespaces", "from"])
        .and_then(Node::as_str)
        .unwrap_or("Same");
    match from {
        "None" => return Err("admits no routes (`allowedRoutes.namespaces.from: None`)".into()),
        "Same" if !namespaces_may_match(g.namespace, route.ns) => {
            return Err(format!(
                "only admits routes from namespace `{}` (`allowedRoutes.namespaces.from: Same`)",
                g.namespace.unwrap_or("")
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
    Ok(())
}
