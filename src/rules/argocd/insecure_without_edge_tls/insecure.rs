//! Where argocd-server is made insecure: the params ConfigMap, kustomize generators and
//! patches, argocd-server containers, and the argo-cd chart's values.

use std::collections::HashSet;

use super::{ARGO_CD_CHART, Obj, Objects, PARAMS_CM};
use crate::model::repo::{self, join};
use crate::model::resolve::{Location, SourceKind};
use crate::model::values::Values;
use crate::model::{DocKind, Document, is_values_file_name};
use crate::project::Project;
use crate::rules::Context;
use crate::source::Span;
use crate::yaml::Node;

/// One place that makes argocd-server serve plain HTTP.
pub(super) struct Insecure {
    pub(super) span: Span,
    /// What sets it, for the message: "`server.insecure: \"true\"` in ConfigMap ...".
    pub(super) what: String,
    /// Namespace of argocd-server, when known.
    pub(super) namespace: Option<String>,
    /// Service names of argocd-server.
    pub(super) services: Vec<String>,
    /// The argo-cd chart's values, when the chart deploys argocd-server.
    pub(super) chart: Option<Values>,
    /// An Application that deploys it.
    pub(super) context: Option<(Span, String)>,
}

pub(super) fn is_true(text: &str) -> bool {
    // Argo CD reads `ARGOCD_SERVER_INSECURE` with `strings.EqualFold(val, "true")`.
    text.trim().eq_ignore_ascii_case("true")
}

/// `--insecure`, `--insecure=true` (Go `strconv.ParseBool`).
pub(super) fn is_insecure_flag(arg: &str) -> bool {
    match arg.trim().split_once('=') {
        None => arg.trim() == "--insecure",
        Some((flag, v)) => {
            flag == "--insecure" && matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True")
        }
    }
}

pub(super) fn find_insecure(cx: &Context<'_>, objs: &Objects<'_>, service: &str) -> Vec<Insecure> {
    let project = cx.project;
    let mut out = Vec::new();
    let plain = |span: Span, what: String, namespace: Option<String>| Insecure {
        span,
        what,
        namespace,
        services: vec![service.to_string()],
        chart: None,
        context: None,
    };
    // The argocd-cmd-params-cm ConfigMap.
    for cm in objs.of("", "ConfigMap").filter(|o| o.name == PARAMS_CM) {
        if let Some(e) = cm
            .doc
            .root
            .get("data")
            .and_then(|d| d.entry("server.insecure"))
            .filter(|e| e.value.scalar_text().is_some_and(is_true))
        {
            out.push(plain(
                e.key.span.cover(e.value.span),
                format!(
                    "`server.insecure: {}` in ConfigMap `{PARAMS_CM}`",
                    value_text(&e.value)
                ),
                cm.ns.clone(),
            ));
        }
    }
    // argocd-server containers: `--insecure` or `ARGOCD_SERVER_INSECURE`.
    for kind in ["Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"] {
        for o in objs.of("apps", kind) {
            workload(o, service, &mut |span, what| {
                out.push(plain(span, what, o.ns.clone()));
            });
        }
    }
    for o in objs.of("", "Pod") {
        workload(o, service, &mut |span, what| {
            out.push(plain(span, what, o.ns.clone()));
        });
    }
    // kustomize: configMapGenerator literals and helmCharts.
    for doc in project.docs_of(DocKind::Kustomization) {
        let k_ns = doc.root.get_str("namespace").map(str::to_string);
        for g in doc
            .root
            .get("configMapGenerator")
            .into_iter()
            .flat_map(Node::items)
        {
            if g.get_str("name") != Some(PARAMS_CM) {
                continue;
            }
            let ns = g.get_str("namespace").map(str::to_string).or(k_ns.clone());
            for lit in g.get("literals").into_iter().flat_map(Node::items) {
                let Some(text) = lit.scalar_text() else {
                    continue;
                };
                let Some((k, v)) = text.split_once('=') else {
                    continue;
                };
                let v = v.trim().trim_matches('"').trim_matches('\'');
                if k.trim() == "server.insecure" && is_true(v) {
                    out.push(plain(
                        lit.span,
                        format!(
                            "kustomize configMapGenerator literal `{}` for `{PARAMS_CM}`",
                            text.trim()
                        ),
                        ns.clone(),
                    ));
                }
            }
        }
        kustomize_helm_charts(project, doc, k_ns.as_deref(), service, &mut out);
        kustomize_patches(
            project,
            doc,
            k_ns.as_deref(),
            service,
            &mut |span, what, ns| {
                out.push(plain(span, what, ns));
            },
        );
    }
    chart_values(cx, service, &mut out);
    out
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
pub(super) fn workload(o: &Obj<'_>, service: &str, add: &mut dyn FnMut(Span, String)) {
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
/// operations on them.
pub(super) fn kustomize_patches(
    project: &Project,
    doc: &Document,
    k_ns: Option<&str>,
    service: &str,
    add: &mut dyn FnMut(Span, String, Option<String>),
) {
    let text = &project.source(doc.file).text;
    let mut patches: Vec<(&Node, Option<&Node>)> = Vec::new();
    for key in ["patches", "patchesJson6902"] {
        for p in doc.root.get(key).into_iter().flat_map(Node::items) {
            if let Some(body) = p.get("patch").filter(|b| b.as_str().is_some()) {
                patches.push((body, p.get("target")));
            }
        }
    }
    for p in doc
        .root
        .get("patchesStrategicMerge")
        .into_iter()
        .flat_map(Node::items)
    {
        if p.as_str().is_some_and(|s| s.contains('\n')) {
            patches.push((p, None));
        }
    }
    for (body, target) in patches {
        let t_kind = target.and_then(|t| t.get_str("kind"));
        let t_name = target.and_then(|t| t.get_str("name"));
        let t_ns = target.and_then(|t| t.get_str("namespace"));
        for root in crate::yaml::embedded::parse_embedded(text, body) {
            if root.as_seq().is_some() {
                json6902(&root, t_kind, t_name, service, &mut |span, what| {
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
                workload_node(kind, name, &root, service, &mut |span, what| {
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

/// The Service name the argo-cd chart gives argocd-server for a release.
pub(super) fn chart_service(values: &Values, release: &str) -> String {
    if let Some(fo) = values
        .get("fullnameOverride")
        .and_then(Values::text)
        .filter(|s| !s.is_empty())
    {
        return format!("{fo}-server");
    }
    // The chart's default `nameOverride` is `argocd`.
    let name = values
        .get("nameOverride")
        .and_then(Values::text)
        .filter(|s| !s.is_empty())
        .unwrap_or("argocd");
    let name = if values
        .get("nameOverride")
        .is_some_and(|v| v.text() == Some(""))
    {
        ARGO_CD_CHART
    } else {
        name
    };
    if release.contains(name) {
        format!("{release}-server")
    } else {
        format!("{release}-{name}-server")
    }
}

/// Insecure settings in the argo-cd chart's values `root`.
pub(super) fn chart_insecure(
    root: &Values,
    origin: &str,
    namespace: Option<&str>,
    release: &str,
    service: &str,
    context: Option<(Span, String)>,
    out: &mut Vec<Insecure>,
) {
    let mut found: Vec<(Span, String)> = Vec::new();
    let params = root.path(&["configs", "params"]);
    let shown = |text: &str, is_str: bool| {
        if is_str {
            format!("\"{text}\"")
        } else {
            text.to_string()
        }
    };
    if let Some(Values::Scalar { text, span, is_str }) =
        params.and_then(|p| p.get("server.insecure"))
    {
        if is_true(text) {
            found.push((
                *span,
                format!(
                    "`configs.params.\"server.insecure\": {}` in {origin}",
                    shown(text, *is_str)
                ),
            ));
        }
    }
    if let Some(Values::Scalar { text, span, is_str }) =
        params.and_then(|p| p.path(&["server", "insecure"]))
    {
        if is_true(text) {
            found.push((
                *span,
                format!(
                    "`configs.params.server.insecure: {}` in {origin}",
                    shown(text, *is_str)
                ),
            ));
        }
    }
    for a in root
        .path(&["server", "extraArgs"])
        .map_or(&[][..], Values::items)
    {
        if let Values::Scalar { text, span, .. } = a {
            if is_insecure_flag(text) {
                found.push((*span, format!("`server.extraArgs: [{text}]` in {origin}")));
            }
        }
    }
    for e in root.path(&["server", "env"]).map_or(&[][..], Values::items) {
        if e.get("name").and_then(Values::text) == Some("ARGOCD_SERVER_INSECURE") {
            if let Some(Values::Scalar { text, span, .. }) = e.get("value") {
                if is_true(text) {
                    found.push((
                        *span,
                        format!("`server.env` `ARGOCD_SERVER_INSECURE={text}` in {origin}"),
                    ));
                }
            }
        }
    }
    let mut services = vec![service.to_string()];
    let own = chart_service(root, release);
    if !services.contains(&own) {
        services.push(own);
    }
    for (span, what) in found {
        out.push(Insecure {
            span,
            what,
            namespace: namespace.map(str::to_string),
            services: services.clone(),
            chart: Some(root.clone()),
            context: context.clone(),
        });
    }
}

/// The argo-cd values inside a chart's values: the chart itself, or a dependency on it.
pub(super) fn argo_cd_values<'v>(chart: &Node, values: &'v Values) -> Option<&'v Values> {
    if chart.get_str("name") == Some(ARGO_CD_CHART) {
        return Some(values);
    }
    let dep = chart
        .get("dependencies")
        .into_iter()
        .flat_map(Node::items)
        .find(|d| d.get_str("name") == Some(ARGO_CD_CHART))?;
    let key = dep.get_str("alias").unwrap_or(ARGO_CD_CHART);
    values.get(key)
}

pub(super) fn chart_doc<'p>(project: &'p Project, dir: &str) -> Option<&'p Document> {
    ["Chart.yaml", "Chart.yml"]
        .iter()
        .filter_map(|n| join(dir, n))
        .find_map(|p| project.file_by_path(&p))
        .and_then(|f| project.file_docs(f.id).first())
}

pub(super) fn depends_on_argo_cd(chart: &Node) -> bool {
    chart.get_str("name") == Some(ARGO_CD_CHART)
        || chart
            .get("dependencies")
            .into_iter()
            .flat_map(Node::items)
            .any(|d| d.get_str("name") == Some(ARGO_CD_CHART))
}

/// argo-cd chart values that Applications deploy, and those of in-repository wrapper charts no
/// Application deploys (installed by another tool).
pub(super) fn chart_values(cx: &Context<'_>, service: &str, out: &mut Vec<Insecure>) {
    let project = cx.project;
    let model = project.argocd(&cx.config.resolve_options());
    let mut deployed_dirs: HashSet<&str> = HashSet::new();
    for app in model.apps.iter().filter(|a| a.live) {
        let doc = &project.docs[app.doc];
        let spec = crate::model::argocd::application_specs(doc)
            .into_iter()
            .next();
        let dest_ns = spec
            .and_then(|s| s.path(&["destination", "namespace"]))
            .and_then(Node::as_str)
            .filter(|s| !s.contains("{{"))
            .map(str::to_string);
        for src in &app.sources {
            if let Location::InRepo(dir) = &src.location {
                if src.kind == SourceKind::Helm {
                    deployed_dirs.insert(dir.as_str());
                }
            }
            let Some(values) = &src.values else { continue };
            let root = match (&src.kind, &src.location) {
                (SourceKind::Chart, _)
                    if src.chart.as_ref().map(|c| c.value.as_str()) == Some(ARGO_CD_CHART) =>
                {
                    Some(values)
                }
                (SourceKind::Helm, Location::InRepo(dir)) => {
                    chart_doc(project, dir).and_then(|c| argo_cd_values(&c.root, values))
                }
                _ => None,
            };
            let Some(root) = root else { continue };
            let ns = root
                .get("namespaceOverride")
                .and_then(Values::text)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .or(dest_ns.clone());
            let label = match &app.appset {
                Some(set) => format!(
                    "deployed by Application `{}` (generated by ApplicationSet `{set}`)",
                    app.name
                ),
                None => format!("deployed by Application `{}`", app.name),
            };
            // `helm.releaseName`, else the Application's name.
            let release = spec
                .map(crate::model::argocd::sources)
                .unwrap_or_default()
                .into_iter()
                .find(|n| n.span == src.span)
                .and_then(|n| n.path(&["helm", "releaseName"]))
                .and_then(Node::as_str)
                .filter(|r| !r.contains("{{"))
                .unwrap_or(&app.name);
            chart_insecure(
                root,
                &format!("the argo-cd chart values of Application `{}`", app.name),
                ns.as_deref(),
                release,
                service,
                Some((app.name_span, label)),
                out,
            );
        }
    }
    // Wrapper charts nothing in the repository deploys: their values files as they are.
    for chart in project.docs_of(DocKind::HelmChart) {
        if !depends_on_argo_cd(&chart.root) {
            continue;
        }
        let dir = repo::parent(&project.source(chart.file).path);
        if deployed_dirs.contains(dir) {
            continue;
        }
        let release = chart.root.get_str("name").unwrap_or(ARGO_CD_CHART);
        for f in dir_files(project, dir) {
            let name = f.path.rsplit('/').next().unwrap_or("");
            if !is_values_file_name(name) {
                continue;
            }
            let Some(doc) = project.file_docs(f.id).first() else {
                continue;
            };
            let values = Values::from_node(&doc.root, None);
            let Some(root) = argo_cd_values(&chart.root, &values) else {
                continue;
            };
            chart_insecure(
                root,
                &format!("values file `{}` of chart `{release}`", f.path),
                None,
                release,
                service,
                None,
                out,
            );
        }
    }
}

/// Files directly in a folder.
pub(super) fn dir_files<'p>(project: &'p Project, dir: &str) -> Vec<&'p crate::source::SourceFile> {
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let files = project.sources.files();
    let start = files.partition_point(|f| f.path.as_str() < prefix.as_str());
    files[start..]
        .iter()
        .take_while(|f| f.path.starts_with(prefix.as_str()))
        .filter(|f| !f.path[prefix.len()..].contains('/'))
        .collect()
}

/// kustomize `helmCharts:` inflating the argo-cd chart.
pub(super) fn kustomize_helm_charts(
    project: &Project,
    doc: &Document,
    k_ns: Option<&str>,
    service: &str,
    out: &mut Vec<Insecure>,
) {
    let dir = repo::parent(&project.source(doc.file).path);
    for hc in doc.root.get("helmCharts").into_iter().flat_map(Node::items) {
        if hc.get_str("name") != Some(ARGO_CD_CHART) {
            continue;
        }
        let mut values = Values::Map(Vec::new());
        let mut origin = "kustomize helmCharts `argo-cd`".to_string();
        if let Some(vf) = hc.get_str("valuesFile") {
            if let Some(f) = join(dir, vf).and_then(|p| project.file_by_path(&p)) {
                if let Some(d) = project.file_docs(f.id).first() {
                    values.merge(Values::from_node(&d.root, None));
                    origin = format!("values file `{}` of kustomize helmCharts `argo-cd`", f.path);
                }
            }
        }
        if let Some(inline) = hc.get("valuesInline").filter(|n| n.as_map().is_some()) {
            values.merge(Values::from_node(inline, None));
        }
        let ns = hc.get_str("namespace").or(k_ns);
        let release = hc.get_str("releaseName").unwrap_or(ARGO_CD_CHART);
        chart_insecure(&values, &origin, ns, release, service, None, out);
    }
}
