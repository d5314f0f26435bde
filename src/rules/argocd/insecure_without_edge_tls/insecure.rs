//! Where argocd-server is made insecure: the params ConfigMap, kustomize generators and
//! patches, argocd-server containers, and the argo-cd chart's values (`chart.rs`).

use super::Insecure;
use super::chart::{chart_values, kustomize_helm_charts};
use crate::model::Field;
use crate::model::argocd::server::{PARAMS_CM, is_insecure_flag, is_true};
use crate::model::k8s::{Object, Objects};
use crate::model::kustomize::{GeneratorKind, Kustomization, PatchBody};
use crate::rules::Context;
use crate::source::Span;
use crate::yaml::Node;

pub(super) fn find_insecure(cx: &Context<'_>, objs: Objects<'_>, service: &str) -> Vec<Insecure> {
    let repo = cx.repo;
    let mut out = Vec::new();
    let plain = |span: Span, what: String, namespace: Option<String>| Insecure {
        span,
        what,
        namespace,
        services: vec![service.to_string()],
        chart: None,
        context: None,
    };
    // An object of the repository, or rendered from one of its charts: then the Application
    // that renders it, and the Service names that chart gives argocd-server, are known.
    let of_object = |o: &Object<'_>, span: Span, what: String| {
        let mut s = plain(span, what, o.namespace.map(str::to_string));
        if let Some((label, services)) = rendered_context(cx, o) {
            s.context = Some(label);
            for name in services {
                if !s.services.contains(&name) {
                    s.services.push(name);
                }
            }
        }
        s
    };
    // The argocd-cmd-params-cm ConfigMap.
    for cm in objs.named("", "ConfigMap", PARAMS_CM) {
        if let Some(e) = cm
            .doc
            .root
            .get("data")
            .and_then(|d| d.entry("server.insecure"))
            .filter(|e| e.value.scalar_text().is_some_and(is_true))
        {
            // A rendered entry's key and value may come from different files.
            let span = if e.key.span.file == e.value.span.file {
                e.key.span.cover(e.value.span)
            } else {
                e.value.span
            };
            out.push(of_object(
                &cm,
                span,
                format!(
                    "`server.insecure: {}` in ConfigMap `{PARAMS_CM}`",
                    value_text(&e.value)
                ),
            ));
        }
    }
    // argocd-server containers: `--insecure` or `ARGOCD_SERVER_INSECURE`.
    for kind in ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"] {
        for o in objs.of("apps", kind) {
            workload(&o, service, &mut |span, what| {
                out.push(of_object(&o, span, what));
            });
        }
    }
    for o in objs.of("", "Pod") {
        workload(&o, service, &mut |span, what| {
            out.push(of_object(&o, span, what));
        });
    }
    // kustomize: configMapGenerator literals, helmCharts and inline patches.
    for k in cx.model.kustomize().nodes() {
        let k_ns = Field::text(&k.namespace);
        let generators = k.generators.iter().filter(|g| {
            g.kind == GeneratorKind::ConfigMap && Field::text(&g.name) == Some(PARAMS_CM)
        });
        for g in generators {
            let ns = Field::text(&g.namespace).or(k_ns);
            for lit in &g.literals {
                if lit.key == "server.insecure" && is_true(&lit.value) {
                    out.push(plain(
                        lit.span,
                        format!(
                            "kustomize configMapGenerator literal `{}` for `{PARAMS_CM}`",
                            lit.text
                        ),
                        ns.map(str::to_string),
                    ));
                }
            }
        }
        kustomize_helm_charts(repo, k, service, &mut out);
        kustomize_patches(k, service, &mut |span, what, ns| {
            out.push(plain(span, what, ns));
        });
    }
    chart_values(cx, service, &mut out);
    out
}

/// For an object rendered from a chart: "rendered from `templates/x.yaml:N` by Application `a`"
/// at its first line, and the Services of that rendering that front argocd-server (the chart
/// names them after the release: `<release>-argocd-server`).
fn rendered_context(cx: &Context<'_>, o: &Object<'_>) -> Option<((Span, String), Vec<String>)> {
    let rendered = cx.model.rendered();
    let meta = rendered
        .meta
        .get(o.doc_index.checked_sub(cx.repo.docs.len())?)?;
    let services = rendered
        .of_source(meta.app, meta.source)
        .iter()
        .filter(|d| d.api_version() == Some("v1") && d.k8s_kind() == Some("Service"))
        .filter_map(|d| {
            let name = d.name()?;
            let component = d
                .root
                .path(&["metadata", "labels", "app.kubernetes.io/component"])
                .and_then(Node::as_str);
            (name.ends_with("-server") && (name.contains("argocd") || component == Some("server")))
                .then(|| name.to_string())
        })
        .collect();
    Some(((o.doc.span, meta.label.clone()), services))
}

pub(super) fn value_text(n: &Node) -> String {
    let t = n.scalar_text().unwrap_or("");
    if n.as_str().is_some()
        && n.as_scalar()
            .is_some_and(|s| s.style != crate::yaml::ScalarStyle::Plain)
    {
        format!("\"{t}\"")
    } else {
        t.to_string()
    }
}

/// A workload's argocd-server container: `--insecure` and `ARGOCD_SERVER_INSECURE`.
pub(super) fn workload(o: &Object<'_>, service: &str, add: &mut dyn FnMut(Span, String)) {
    workload_node(o.kind, o.name, &o.doc.root, service, add);
}

pub(super) fn workload_node(
    kind: &str,
    name: &str,
    root: &Node,
    service: &str,
    add: &mut dyn FnMut(Span, String),
) {
    let o = WorkloadName { kind, name };
    let pod = if kind == "Pod" {
        root.get("spec")
    } else {
        root.path(&["spec", "template", "spec"])
    };
    let Some(pod) = pod else { return };
    for c in pod.get("containers").into_iter().flat_map(Node::items) {
        let cname = c.get_str("name").unwrap_or("");
        let runs_server = c
            .get("command")
            .into_iter()
            .chain(c.get("args"))
            .flat_map(Node::items)
            .filter_map(Node::scalar_text)
            .any(|a| a.trim_end().ends_with("argocd-server"));
        let is_server = runs_server
            || cname == "argocd-server"
            || (o.name == service || o.name == "argocd-server") && cname.contains("server");
        if !is_server {
            continue;
        }
        for key in ["command", "args"] {
            for a in c.get(key).into_iter().flat_map(Node::items) {
                if a.scalar_text().is_some_and(is_insecure_flag) {
                    add(
                        a.span,
                        format!(
                            "`{}` in the `{key}` of container `{cname}` of {} `{}`",
                            a.scalar_text().unwrap_or("").trim(),
                            o.kind,
                            o.name
                        ),
                    );
                }
            }
        }
        for env in c.get("env").into_iter().flat_map(Node::items) {
            if env.get_str("name") != Some("ARGOCD_SERVER_INSECURE") {
                continue;
            }
            if let Some(v) = env
                .entry("value")
                .filter(|e| e.value.scalar_text().is_some_and(is_true))
            {
                add(
                    v.key.span.cover(v.value.span),
                    format!(
                        "env `ARGOCD_SERVER_INSECURE={}` of container `{cname}` of {} `{}`",
                        v.value.scalar_text().unwrap_or(""),
                        o.kind,
                        o.name
                    ),
                );
            }
        }
    }
}

pub(super) struct WorkloadName<'a> {
    kind: &'a str,
    name: &'a str,
}

pub(super) const WORKLOAD_KINDS: [&str; 5] = [
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Pod",
];

/// kustomize inline patches (`patches`, `patchesStrategicMerge`, `patchesJson6902`) that make
/// argocd-server insecure: a strategic merge of the ConfigMap or the workload, or JSON 6902
/// operations on them. (Patch files are manifests of the repository: they are read as such.)
pub(super) fn kustomize_patches(
    k: &Kustomization,
    service: &str,
    add: &mut dyn FnMut(Span, String, Option<String>),
) {
    let k_ns = Field::text(&k.namespace);
    for patch in &k.patches {
        let PatchBody::Inline { docs, .. } = &patch.body else {
            continue;
        };
        let target = patch.target.as_ref();
        let t_kind = target.and_then(|t| Field::text(&t.kind));
        let t_name = target.and_then(|t| Field::text(&t.name));
        let t_ns = target.and_then(|t| Field::text(&t.namespace));
        for root in docs {
            if root.as_seq().is_some() {
                json6902(root, t_kind, t_name, service, &mut |span, what| {
                    add(span, what, t_ns.or(k_ns).map(str::to_string));
                });
                continue;
            }
            let kind = root.get_str("kind").or(t_kind).unwrap_or("");
            let name = root
                .path(&["metadata", "name"])
                .and_then(Node::as_str)
                .or(t_name)
                .unwrap_or("");
            let ns = root
                .path(&["metadata", "namespace"])
                .and_then(Node::as_str)
                .or(t_ns)
                .or(k_ns)
                .map(str::to_string);
            if kind == "ConfigMap" && name == PARAMS_CM {
                if let Some(e) = root
                    .get("data")
                    .and_then(|d| d.entry("server.insecure"))
                    .filter(|e| e.value.scalar_text().is_some_and(is_true))
                {
                    add(
                        e.key.span.cover(e.value.span),
                        format!(
                            "`server.insecure: {}` in a kustomize patch of ConfigMap `{PARAMS_CM}`",
                            value_text(&e.value)
                        ),
                        ns,
                    );
                }
            } else if WORKLOAD_KINDS.contains(&kind) {
                workload_node(kind, name, root, service, &mut |span, what| {
                    add(span, format!("{what}, in a kustomize patch"), ns.clone());
                });
            }
        }
    }
}

/// JSON 6902 operations on the params ConfigMap or an argocd-server workload.
pub(super) fn json6902(
    ops: &Node,
    kind: Option<&str>,
    name: Option<&str>,
    service: &str,
    add: &mut dyn FnMut(Span, String),
) {
    let (Some(kind), Some(name)) = (kind, name) else {
        return;
    };
    let server = WORKLOAD_KINDS.contains(&kind) && (name == service || name == "argocd-server");
    let cm = kind == "ConfigMap" && name == PARAMS_CM;
    if !server && !cm {
        return;
    }
    for op in ops.items() {
        if !matches!(op.get_str("op"), Some("add" | "replace")) {
            continue;
        }
        let (Some(path), Some(value)) = (op.get_str("path"), op.get("value")) else {
            continue;
        };
        let path = path.replace("~1", "/").replace("~0", "~");
        if cm {
            if path == "/data/server.insecure" && value.scalar_text().is_some_and(is_true) {
                add(
                    value.span,
                    format!(
                        "a kustomize JSON patch setting `server.insecure: {}` in ConfigMap `{PARAMS_CM}`",
                        value.scalar_text().unwrap_or("")
                    ),
                );
            }
            continue;
        }
        let last = path
            .rsplit('/')
            .find(|seg| !seg.chars().all(|c| c.is_ascii_digit() || c == '-'));
        match last {
            Some(key @ ("args" | "command")) => {
                let flags = value
                    .scalar_text()
                    .map(|_| value)
                    .into_iter()
                    .chain(value.items())
                    .filter(|v| v.scalar_text().is_some_and(is_insecure_flag));
                for f in flags {
                    add(
                        f.span,
                        format!(
                            "`{}` added to the `{key}` of {kind} `{name}` by a kustomize JSON patch",
                            f.scalar_text().unwrap_or("").trim()
                        ),
                    );
                }
            }
            Some("env") => {
                let vars = std::iter::once(value).chain(value.items());
                for v in vars {
                    if v.get_str("name") == Some("ARGOCD_SERVER_INSECURE") {
                        if let Some(val) = v
                            .get("value")
                            .filter(|x| x.scalar_text().is_some_and(is_true))
                        {
                            add(
                                val.span,
                                format!(
                                    "env `ARGOCD_SERVER_INSECURE={}` added to {kind} `{name}` by a kustomize JSON patch",
                                    val.scalar_text().unwrap_or("")
                                ),
                            );
                        }
                    }
                }
            }
            _ => {}
        }
    }
}
