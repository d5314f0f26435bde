//! Ingress controllers' own route kinds in front of a Service: Traefik's `IngressRoute`
//! (`traefik.io`, and `traefik.containo.us` before Traefik 3) and Contour's `HTTPProxy`
//! (`projectcontour.io`).

use super::{Backend, Candidates, backend_matches};
use crate::model::k8s::{Object, Objects};
use crate::source::Span;
use crate::yaml::Node;

/// API groups of Traefik's custom resources, current and legacy.
pub const TRAEFIK: [&str; 2] = ["traefik.io", "traefik.containo.us"];
/// API group of Contour's custom resources.
pub const CONTOUR: &str = "projectcontour.io";

/// The service names of `services` items (`kind: Service`, the default) routing to the
/// backend, with their span. `default_ns`: the route's namespace.
fn targets<'n>(
    s: &Backend<'_>,
    services: impl Iterator<Item = &'n Node>,
    default_ns: Option<&str>,
) -> Vec<Span> {
    services
        .filter(|svc| svc.get_str("kind").is_none_or(|k| k == "Service"))
        .filter_map(|svc| {
            let name = svc.get("name")?;
            let ns = svc.get_str("namespace").or(default_ns);
            backend_matches(s, name.as_str()?, ns).then_some(name.span)
        })
        .collect()
}

/// The `services` of every item of `routes` (Traefik's IngressRoute and IngressRouteTCP,
/// Contour's HTTPProxy).
fn route_services(spec: &Node) -> impl Iterator<Item = &Node> {
    spec.get("routes")
        .into_iter()
        .flat_map(Node::items)
        .flat_map(|route| route.get("services").into_iter().flat_map(Node::items))
}

/// Traefik terminates TLS for an `IngressRoute` with `tls` (a secret, a certificate
/// resolver, or `{}` for the default certificate). Without it, the route is served on its
/// entry points as they are: plain HTTP on `web`, and on any entry point when it names none.
/// TLS that Traefik's static configuration sets on an entry point is not in the repository.
pub fn traefik(s: &Backend<'_>, objs: Objects<'_>, checks: &mut Candidates) {
    for r in TRAEFIK.into_iter().flat_map(|g| objs.of(g, "IngressRoute")) {
        let Some(spec) = r.spec() else { continue };
        let hits = targets(s, route_services(spec), r.namespace);
        let Some(&span) = hits.first() else { continue };
        if spec.get("tls").is_some_and(|t| !t.is_null()) {
            checks.push(Ok(format!("Traefik IngressRoute `{}` with `tls`", r.name)));
            continue;
        }
        let entry_points: Vec<&str> = spec
            .get("entryPoints")
            .into_iter()
            .flat_map(Node::items)
            .filter_map(Node::as_str)
            .collect();
        if entry_points.is_empty() {
            checks.plain(
                span,
                format!(
                    "Traefik IngressRoute `{}` has no `tls` and no `entryPoints`: it serves plain HTTP on every entry point",
                    r.name
                ),
            );
        } else if let Some(web) = entry_points.iter().find(|e| matches!(**e, "web" | "http")) {
            checks.plain(
                span,
                format!(
                    "Traefik IngressRoute `{}` has no `tls`: it serves plain HTTP on entry point `{web}`",
                    r.name
                ),
            );
        } else {
            checks.push(Err((
                span,
                format!(
                    "Traefik IngressRoute `{}` has no `tls`: TLS on entry point `{}` would come from Traefik's static configuration, which is not in the repository",
                    r.name,
                    entry_points.join("`, `")
                ),
            )));
        }
    }
    for r in TRAEFIK
        .into_iter()
        .flat_map(|g| objs.of(g, "IngressRouteTCP"))
    {
        let Some(spec) = r.spec() else { continue };
        let hits = targets(s, route_services(spec), r.namespace);
        let Some(&span) = hits.first() else { continue };
        let tls = spec.get("tls").filter(|t| !t.is_null());
        match tls {
            Some(t) if t.get("passthrough").and_then(Node::as_bool) == Some(true) => {
                checks.push(Err((span, format!("Traefik IngressRouteTCP `{}` passes TLS through, so argocd-server would have to terminate it", r.name))));
            }
            Some(_) => checks.push(Ok(format!(
                "Traefik IngressRouteTCP `{}` with `tls`",
                r.name
            ))),
            None => checks.plain(
                span,
                format!(
                    "Traefik IngressRouteTCP `{}` has no `tls`: it forwards plain TCP",
                    r.name
                ),
            ),
        }
    }
}

/// Contour terminates TLS for an `HTTPProxy` whose `virtualhost.tls` names a secret, and then
/// redirects plain HTTP to HTTPS unless a route sets `permitInsecure: true`. A proxy without a
/// `virtualhost` is served by the root proxies that `include` it.
pub fn contour(s: &Backend<'_>, objs: Objects<'_>, checks: &mut Candidates) {
    let proxies: Vec<Object<'_>> = objs.of(CONTOUR, "HTTPProxy").collect();
    for p in &proxies {
        let Some(spec) = p.spec() else { continue };
        let routes: Vec<&Node> = spec
            .get("routes")
            .into_iter()
            .flat_map(Node::items)
            .collect();
        let http = targets(s, route_services(spec), p.namespace);
        let tcp = targets(
            s,
            spec.path(&["tcpproxy", "services"])
                .into_iter()
                .flat_map(Node::items),
            p.namespace,
        );
        let Some(&span) = http.first().or(tcp.first()) else {
            continue;
        };
        // The proxies whose virtual host serves these routes.
        let hosts: Vec<&Object<'_>> = if spec.get("virtualhost").is_some() {
            vec![p]
        } else {
            proxies
                .iter()
                .filter(|root| root.spec().is_some_and(|r| includes(r, root, p)))
                .collect()
        };
        if hosts.is_empty() {
            checks.push(Err((span, format!("Contour HTTPProxy `{}` has no `virtualhost`, and no root HTTPProxy in the repository includes it", p.name))));
            continue;
        }
        for host in hosts {
            let tls = host
                .spec()
                .and_then(|h| h.path(&["virtualhost", "tls"]))
                .filter(|t| !t.is_null());
            let shown = if host.name == p.name {
                format!("Contour HTTPProxy `{}`", p.name)
            } else {
                format!(
                    "Contour HTTPProxy `{}` (included by `{}`)",
                    p.name, host.name
                )
            };
            match tls {
                Some(t) if t.get("passthrough").and_then(Node::as_bool) == Some(true) => {
                    checks.push(Err((span, format!("{shown} passes TLS through, so argocd-server would have to terminate it"))));
                }
                Some(_) => {
                    checks.push(Ok(format!("{shown} with `virtualhost.tls`")));
                    for insecure in routes
                        .iter()
                        .filter_map(|r| r.get("permitInsecure"))
                        .filter(|v| v.as_bool() == Some(true))
                    {
                        checks.plain(
                            insecure.span,
                            format!("{shown} also serves plain HTTP (`permitInsecure: true`)"),
                        );
                    }
                }
                None => checks.plain(
                    span,
                    format!("{shown} has no `virtualhost.tls`: it serves plain HTTP"),
                ),
            }
        }
    }
}

/// Whether root proxy `root` (with spec `spec`) includes `child`: by name, in the namespace
/// the include names or else the root's own.
fn includes(spec: &Node, root: &Object<'_>, child: &Object<'_>) -> bool {
    spec.get("virtualhost").is_some()
        && spec
            .get("includes")
            .into_iter()
            .flat_map(Node::items)
            .any(|i| {
                i.get_str("name") == Some(child.name)
                    && i.get_str("namespace").or(root.namespace) == child.namespace
            })
}
