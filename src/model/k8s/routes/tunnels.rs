//! Tunnels: objects that carry traffic from an outside edge, which terminates TLS, to a
//! Service of the cluster without any listener of the cluster in between.
//!
//! - `cloudflared` ingress rules (`ingress: [{hostname, service: http://svc.ns:80}]`) in a
//!   ConfigMap's `config.yaml`/`config.yml`, in Helm values (the cloudflare-tunnel charts keep
//!   them under `cloudflare.ingress`, community charts under other keys, and app-template
//!   charts write the whole `config.yaml`), and in an Application's inline Helm values;
//! - `TunnelBinding` objects of the Cloudflare operator (`networking.cfargotunnel.com`);
//! - Ingress classes whose controller serves only HTTPS at an outside edge (Tailscale, ngrok,
//!   the Cloudflare tunnel ingress controller), by their default class names.

use crate::model::k8s::Objects;
use crate::model::{DocKind, Repository};
use crate::repo::retention::{Payload, Reads, TextsWhen};
use crate::source::Span;
use crate::yaml::Node;
use crate::yaml::embedded::parse_embedded;

/// API group of the Cloudflare operator's `Tunnel`, `ClusterTunnel` and `TunnelBinding`.
pub const CLOUDFLARE_OPERATOR: &str = "networking.cfargotunnel.com";

/// One route of a tunnel to a Service.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TunnelRoute {
    /// What carries it: "cloudflared ingress rule in ConfigMap `cloudflared` (`config.yaml`)".
    pub via: String,
    /// The public hostname, when written.
    pub hostname: Option<String>,
    /// The Service's name.
    pub service: String,
    /// The Service's namespace, when known.
    pub namespace: Option<String>,
    /// Where the route names the Service.
    pub span: Span,
}

/// Ingress classes whose controller serves the Ingress only over HTTPS, with a certificate
/// it provisions, at an edge outside the cluster, and why.
#[must_use]
pub fn tls_only_ingress_class(class: &str) -> Option<&'static str> {
    match class {
        // tailscale.com/docs/kubernetes-operator: "Ingress resources only support TLS, and
        // are only exposed over HTTPS using a MagicDNS name".
        "tailscale" => Some("the Tailscale operator serves it over HTTPS only"),
        // ngrok.com/docs/k8s/guides/how-to/terminate-tls: "HTTPS endpoints are created by
        // default, and ngrok automatically terminates TLS".
        "ngrok" => Some("ngrok terminates TLS at its edge"),
        // STRRL/cloudflare-tunnel-ingress-controller: rules become Cloudflare tunnel routes.
        "cloudflare-tunnel" => Some("a Cloudflare tunnel: TLS ends at Cloudflare's edge"),
        _ => None,
    }
}

/// Gateway API controllers (a GatewayClass's `controllerName`) that program a tunnel: TLS
/// ends at the tunnel provider's edge whatever the listener's protocol.
#[must_use]
pub fn tunnel_gateway_controller(controller: &str) -> Option<&'static str> {
    match controller {
        "github.com/pl4nty/cloudflare-kubernetes-gateway"
        | "github.com/geebee/k8s-gateway-cloudflare" => {
            Some("a Cloudflare tunnel: TLS ends at Cloudflare's edge")
        }
        _ => None,
    }
}

/// The Service a tunnel's origin URL names: `http://argocd-server.argocd.svc:80` is
/// `("argocd-server", Some("argocd"))`; `http://argocd-server` is in `default_ns`. `None` for
/// other schemes (`http_status:404`, `unix:`, `tcp://`) and for IP addresses.
#[must_use]
pub fn service_of_origin(url: &str, default_ns: Option<&str>) -> Option<(String, Option<String>)> {
    let (scheme, rest) = url.trim().split_once("://")?;
    if !matches!(
        scheme.to_ascii_lowercase().as_str(),
        "http" | "https" | "h2c"
    ) {
        return None;
    }
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let host = host.split(':').next().unwrap_or("").trim_end_matches('.');
    let mut labels = host.split('.');
    let name = labels.next().filter(|n| !n.is_empty())?;
    if name.chars().all(|c| c.is_ascii_digit()) {
        return None;
    }
    let namespace = labels.next().or(default_ns).map(str::to_string);
    Some((name.to_ascii_lowercase(), namespace))
}

/// Every tunnel route of the repository.
#[must_use]
pub fn tunnel_routes(repo: &Repository, objs: Objects<'_>) -> Vec<TunnelRoute> {
    let mut out = Vec::new();
    for cm in objs.of("", "ConfigMap") {
        for data in ["data", "stringData"]
            .into_iter()
            .filter_map(|k| cm.doc.root.get(k))
        {
            for e in data.entries() {
                let Some(key) = e.key.as_str().filter(|k| is_cloudflared_config(k)) else {
                    continue;
                };
                let via = format!(
                    "cloudflared ingress rule in ConfigMap `{}` (`{key}`)",
                    cm.name
                );
                // Read here, not per ConfigMap: most ConfigMaps' texts are released after the
                // load (see `SourceFile::release_text`).
                let text = repo.source(cm.doc.file).text();
                for root in parse_embedded(text, &e.value) {
                    cloudflared_config(&root, &via, cm.namespace, &mut out);
                }
            }
        }
    }
    for b in objs.of(CLOUDFLARE_OPERATOR, "TunnelBinding") {
        let tunnel = b
            .doc
            .root
            .path(&["tunnelRef", "name"])
            .and_then(Node::as_str)
            .unwrap_or("?");
        let via = format!("TunnelBinding `{}` (Cloudflare tunnel `{tunnel}`)", b.name);
        for subject in b.doc.root.get("subjects").into_iter().flat_map(Node::items) {
            let hostname = subject
                .path(&["spec", "fqdn"])
                .and_then(Node::as_str)
                .map(str::to_string);
            // `spec.target` overrides the URL the operator derives from the Service's name.
            let target = subject.path(&["spec", "target"]);
            let found = match target.and_then(Node::as_str) {
                Some(url) => service_of_origin(url, b.namespace).map(|s| (s, target)),
                None => subject.get("name").and_then(|n| {
                    let name = n.as_str()?;
                    Some(((name.to_string(), b.namespace.map(str::to_string)), Some(n)))
                }),
            };
            if let Some(((service, namespace), Some(node))) = found {
                out.push(TunnelRoute {
                    via: via.clone(),
                    hostname,
                    service,
                    namespace,
                    span: node.span,
                });
            }
        }
    }
    for doc in repo.docs.iter().filter(|d| {
        matches!(
            d.kind,
            DocKind::HelmValues
                | DocKind::Application
                | DocKind::ApplicationSet
                | DocKind::Kustomization
        )
    }) {
        let source = repo.source(doc.file);
        // A released file was seen to hold none (see `READS`): its text is not read again.
        if source.text_was_released() || !text_may_hold_routes(source.text()) {
            continue;
        }
        let text = source.text();
        let path = &source.path;
        values_routes(&doc.root, text, path, &mut out);
    }
    out
}

/// Whether a file's text can hold a cloudflared route: a `hostname` key (`hostname:`, quoted,
/// in an embedded string, or an explicit `? hostname` key), a `config.yaml` or `config.yml`
/// key, or a `\x`, `\u` or `\U` escape, the only ones that could spell such a key in a
/// double-quoted string. `topologyKey: kubernetes.io/hostname` is not a key. Most values files
/// have none of these: they are not walked, and their text and tree are not kept.
pub fn text_may_hold_routes(text: &str) -> bool {
    use memchr::memmem::{find, find_iter};
    let t = text.as_bytes();
    let hostname_key = find_iter(t, b"hostname").any(|at| {
        t[at + "hostname".len()..]
            .iter()
            .find(|b| !matches!(b, b' ' | b'\t' | b'\r' | b'\n' | b'"' | b'\'' | b'\\'))
            == Some(&b':')
    });
    hostname_key
        || find(t, b"config.y").is_some()
        || [b"\\x", b"\\u", b"\\U"]
            .iter()
            .any(|e| find(t, *e).is_some())
}

/// The keys cloudflared's configuration file is mounted from (a ConfigMap's, or a values
/// string).
pub const CONFIG_KEYS: [&str; 2] = ["config.yaml", "config.yml"];

/// What the tunnel routes read beyond what every document keeps: cloudflared configurations
/// in any ConfigMap, and the texts of values files and Argo CD objects that may hold a route
/// (their embedded values are parsed from them, see [`tunnel_routes`]).
pub const READS: Reads = Reads {
    payloads: &[Payload::Keys(&CONFIG_KEYS)],
    texts_when: Some(TextsWhen {
        kinds: &[
            DocKind::HelmValues,
            DocKind::Application,
            DocKind::ApplicationSet,
        ],
        test: text_may_hold_routes,
    }),
    ..Reads::NONE
};

pub(crate) fn is_cloudflared_config(key: &str) -> bool {
    CONFIG_KEYS.contains(&key)
}

/// The `ingress` rules of a cloudflared configuration file.
fn cloudflared_config(root: &Node, via: &str, namespace: Option<&str>, out: &mut Vec<TunnelRoute>) {
    for rule in root.get("ingress").into_iter().flat_map(Node::items) {
        push_rule(rule, via, namespace, out);
    }
}

fn push_rule(rule: &Node, via: &str, namespace: Option<&str>, out: &mut Vec<TunnelRoute>) {
    let Some(service) = rule.get("service") else {
        return;
    };
    let Some((name, ns)) = service
        .as_str()
        .and_then(|u| service_of_origin(u, namespace))
    else {
        return;
    };
    out.push(TunnelRoute {
        via: via.to_string(),
        hostname: rule.get_str("hostname").map(str::to_string),
        service: name,
        namespace: ns,
        span: service.span,
    });
}

/// cloudflared ingress rules anywhere in Helm values (a chart's values file, an Application's
/// `valuesObject` or `values: |`, a kustomization's `valuesInline`): a list item with
/// `hostname` and an origin `service`, or a whole `config.yaml` written as a string.
fn values_routes(root: &Node, text: &str, path: &str, out: &mut Vec<TunnelRoute>) {
    let via = format!("cloudflared ingress rule in Helm values ({path})");
    for node in root.descendants() {
        for e in node.entries() {
            let Some(key) = e.key.as_str() else { continue };
            if e.value.as_str().is_none() {
                continue;
            }
            if is_cloudflared_config(key) {
                for cfg in parse_embedded(text, &e.value) {
                    cloudflared_config(&cfg, &via, None, out);
                }
            } else if key == "values" {
                // An Application's `helm.values: |`.
                for values in parse_embedded(text, &e.value) {
                    values_routes(&values, text, path, out);
                }
            }
        }
        for item in node.items() {
            if item.get("hostname").is_some() {
                push_rule(item, &via, None, out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texts_that_may_hold_a_route() {
        for text in [
            "- hostname: a.example.com\n  service: http://web:80\n",
            "{\"hostname\": \"a\"}",
            "values: \"{\\\"hostname\\\": 1}\"",
            "? hostname\n: a\n",
            "config.yaml: |\n  ingress: []\n",
            "k: \"\\x68ostname\"",
        ] {
            assert!(text_may_hold_routes(text), "{text}");
        }
        for text in [
            "topologyKey: kubernetes.io/hostname\n",
            "re: \"^a\\\\.b$\"\n",
            "image: {tag: v1}\n",
        ] {
            assert!(!text_may_hold_routes(text), "{text}");
        }
    }

    #[test]
    fn origins_name_services() {
        let svc = |u| service_of_origin(u, Some("tunnel"));
        assert_eq!(
            svc("http://argocd-server.argocd.svc.cluster.local:80"),
            Some(("argocd-server".into(), Some("argocd".into())))
        );
        assert_eq!(
            svc("https://argocd-server.argocd.svc:443/"),
            Some(("argocd-server".into(), Some("argocd".into())))
        );
        assert_eq!(
            svc("http://argocd-server"),
            Some(("argocd-server".into(), Some("tunnel".into())))
        );
        assert_eq!(svc("http_status:404"), None);
        assert_eq!(svc("tcp://argocd-server:22"), None);
        assert_eq!(svc("http://10.0.0.1:80"), None);
    }
}
