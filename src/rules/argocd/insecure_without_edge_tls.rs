//! `argocd/insecure-without-edge-tls`: argocd-server serves plain HTTP (`server.insecure`)
//! while nothing in the repository terminates TLS in front of it.
//!
//! Two halves: every place that makes argocd-server insecure ([`Insecure`]), and every edge
//! that routes to its Service ([`Edges`]): Gateway API routes resolved to their Gateway
//! listeners, Ingresses, OpenShift Routes, Istio VirtualServices and the argo-cd chart's own
//! Ingress/HTTPRoute/Route values.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::diagnostic::{Finding, Severity};
use crate::model::repo::{self, join};
use crate::model::resolve::{Location, SourceKind};
use crate::model::values::Values;
use crate::model::{DocKind, Document, is_values_file_name};
use crate::project::Project;
use crate::rules::{Context, FixAvailability, Rule, RuleMeta};
use crate::source::{FileId, Span};
use crate::yaml::Node;

pub struct InsecureWithoutEdgeTls;

static META: RuleMeta = RuleMeta {
    id: "argocd/insecure-without-edge-tls",
    summary: "an insecure argocd-server (`server.insecure`) has no edge in the repository that terminates TLS in front of it",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    applies_to: &[],
    options: &[],
    docs: include_str!("insecure_without_edge_tls.md"),
};

const PARAMS_CM: &str = "argocd-cmd-params-cm";
const GATEWAY_API: &str = "gateway.networking.k8s.io";
const ISTIO: &str = "networking.istio.io";
const ARGO_CD_CHART: &str = "argo-cd";

impl Rule for InsecureWithoutEdgeTls {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        // TLS ends outside the repository: the text report prints the configured reason.
        if cx.config.argocd.edge_tls.is_some() {
            return Vec::new();
        }
        let service = cx.config.argocd.server_service();
        let objs = Objects::new(cx.project);
        let settings = find_insecure(cx, &objs, service);
        let mut by_span: BTreeMap<Span, Vec<(&Insecure, Verdict)>> = BTreeMap::new();
        for s in &settings {
            let verdict = edge_for(s, &objs);
            by_span.entry(s.span).or_default().push((s, verdict));
        }
        let mut out = Vec::new();
        for (_, contexts) in by_span {
            // A setting several Applications deploy must be safe in each of them.
            let Some((s, Verdict::Rejected(reasons))) = contexts
                .into_iter()
                .find(|(_, v)| matches!(v, Verdict::Rejected(_)))
            else {
                continue;
            };
            out.push(finding(s, reasons));
        }
        out
    }
}

fn finding(s: &Insecure, reasons: Vec<(Span, String)>) -> Finding {
    let services = format!("`{}`", s.services.join("` or `"));
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
            "Route {services} through an edge that terminates TLS (an HTTPRoute attached to a Gateway listener with `protocol: HTTPS` and `certificateRefs`, an Ingress with `tls`, an OpenShift Route with `tls.termination: edge`), or, if TLS ends outside the repository, set `argocd.edge_tls: {{mode: external, reason: ...}}` in .gitops-lint.yaml."
        )
    } else {
        "Make the edge terminate TLS: attach the route to a Gateway listener with `protocol: HTTPS`, `tls.mode: Terminate` and `certificateRefs` whose hostname matches the route, or add `tls` for the host to the Ingress; if TLS ends outside the repository, set `argocd.edge_tls: {mode: external, reason: ...}` in .gitops-lint.yaml.".to_string()
    };
    let mut f = Finding::new(message, s.span).with_help(help);
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

// ---------------------------------------------------------------------------------------------
// Objects of the repository

/// A Kubernetes object with its API group and effective namespace.
struct Obj<'p> {
    doc: &'p Document,
    kind: &'p str,
    name: &'p str,
    ns: Option<String>,
}

impl Obj<'_> {
    fn spec(&self) -> Option<&Node> {
        self.doc.root.get("spec")
    }
}

struct Objects<'p> {
    objs: Vec<Obj<'p>>,
    /// `group/kind` → indexes in `objs`.
    by_kind: HashMap<String, Vec<usize>>,
}

fn group_of(api_version: &str) -> &str {
    api_version.rsplit_once('/').map_or("", |(g, _)| g)
}

impl<'p> Objects<'p> {
    fn new(project: &'p Project) -> Self {
        let kust_ns = kustomize_namespaces(project);
        let mut objs = Vec::new();
        let mut by_kind: HashMap<String, Vec<usize>> = HashMap::new();
        for doc in project.docs_of(DocKind::K8sObject) {
            let (Some(api), Some(kind)) = (doc.api_version(), doc.k8s_kind()) else {
                continue;
            };
            let group = group_of(api);
            let ns = match kust_ns.get(&doc.file) {
                Some(ns) => ns.clone(),
                None => doc.namespace().map(str::to_string),
            };
            by_kind
                .entry(format!("{group}/{kind}"))
                .or_default()
                .push(objs.len());
            objs.push(Obj {
                doc,
                kind,
                name: doc.name().unwrap_or(""),
                ns,
            });
        }
        Objects { objs, by_kind }
    }

    fn of<'s>(
        &'s self,
        group: &str,
        kind: &str,
    ) -> impl Iterator<Item = &'s Obj<'p>> + use<'s, 'p> {
        self.by_kind
            .get(&format!("{group}/{kind}"))
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|&i| &self.objs[i])
    }

    /// Objects of a kind in any of several groups (Ingress: `networking.k8s.io`,
    /// `extensions`).
    fn of_groups<'s>(
        &'s self,
        groups: &'s [&'s str],
        kind: &'s str,
    ) -> impl Iterator<Item = &'s Obj<'p>> + 's {
        groups.iter().flat_map(move |g| self.of(g, kind))
    }
}

/// `namespace:` of kustomizations, applied to the files they list (an including
/// kustomization's namespace wins over an included one's; `None` when two kustomizations
/// disagree).
fn kustomize_namespaces(project: &Project) -> HashMap<FileId, Option<String>> {
    struct K<'a> {
        ns: Option<&'a str>,
        files: Vec<FileId>,
        dirs: Vec<String>,
    }
    let mut ks: Vec<K<'_>> = Vec::new();
    let mut by_dir: HashMap<String, usize> = HashMap::new();
    for doc in project.docs_of(DocKind::Kustomization) {
        let path = &project.source(doc.file).path;
        let dir = repo::parent(path).to_string();
        let mut k = K {
            ns: doc.root.get_str("namespace"),
            files: Vec::new(),
            dirs: Vec::new(),
        };
        for key in ["resources", "bases", "components", "patchesStrategicMerge"] {
            for item in doc.root.get(key).into_iter().flat_map(Node::items) {
                let Some(raw) = item.as_str() else { continue };
                if repo::is_remote(raw) {
                    continue;
                }
                let Some(rel) = join(&dir, raw) else { continue };
                match project.file_by_path(&rel) {
                    Some(f) => k.files.push(f.id),
                    None => k.dirs.push(rel),
                }
            }
        }
        by_dir.insert(dir, ks.len());
        ks.push(k);
    }
    let included: HashSet<usize> = ks
        .iter()
        .flat_map(|k| k.dirs.iter().filter_map(|d| by_dir.get(d).copied()))
        .collect();
    let mut out: HashMap<FileId, Option<String>> = HashMap::new();
    let mut stack: Vec<(usize, Option<&str>, usize)> = (0..ks.len())
        .filter(|i| !included.contains(i))
        .map(|i| (i, None, 0))
        .collect();
    while let Some((i, outer, depth)) = stack.pop() {
        let k = &ks[i];
        let ns = outer.or(k.ns);
        if let Some(ns) = ns {
            for &f in &k.files {
                match out.get(&f) {
                    Some(Some(prev)) if prev != ns => {
                        out.insert(f, None);
                    }
                    Some(None) => {}
                    _ => {
                        out.insert(f, Some(ns.to_string()));
                    }
                }
            }
        }
        if depth < 32 {
            for d in &k.dirs {
                if let Some(&j) = by_dir.get(d) {
                    stack.push((j, ns, depth + 1));
                }
            }
        }
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Where argocd-server is made insecure

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

fn is_true(text: &str) -> bool {
    // Argo CD reads `ARGOCD_SERVER_INSECURE` with `strings.EqualFold(val, "true")`.
    text.trim().eq_ignore_ascii_case("true")
}

/// `--insecure`, `--insecure=true` (Go `strconv.ParseBool`).
fn is_insecure_flag(arg: &str) -> bool {
    match arg.trim().split_once('=') {
        None => arg.trim() == "--insecure",
        Some((flag, v)) => {
            flag == "--insecure" && matches!(v, "1" | "t" | "T" | "true" | "TRUE" | "True")
        }
    }
}

fn find_insecure(cx: &Context<'_>, objs: &Objects<'_>, service: &str) -> Vec<Insecure> {
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

fn value_text(n: &Node) -> String {
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
fn workload(o: &Obj<'_>, service: &str, add: &mut dyn FnMut(Span, String)) {
    workload_node(o.kind, o.name, &o.doc.root, service, add);
}

fn workload_node(
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

struct WorkloadName<'a> {
    kind: &'a str,
    name: &'a str,
}

const WORKLOAD_KINDS: [&str; 5] = [
    "Deployment",
    "StatefulSet",
    "DaemonSet",
    "ReplicaSet",
    "Pod",
];

/// kustomize inline patches (`patches`, `patchesStrategicMerge`, `patchesJson6902`) that make
/// argocd-server insecure: a strategic merge of the ConfigMap or the workload, or JSON 6902
/// operations on them.
fn kustomize_patches(
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
        for root in crate::model::resolve::parse_embedded(text, body) {
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
fn json6902(
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
fn chart_service(values: &Values, release: &str) -> String {
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
fn chart_insecure(
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
fn argo_cd_values<'v>(chart: &Node, values: &'v Values) -> Option<&'v Values> {
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

fn chart_doc<'p>(project: &'p Project, dir: &str) -> Option<&'p Document> {
    ["Chart.yaml", "Chart.yml"]
        .iter()
        .filter_map(|n| join(dir, n))
        .find_map(|p| project.file_by_path(&p))
        .and_then(|f| project.file_docs(f.id).first())
}

fn depends_on_argo_cd(chart: &Node) -> bool {
    chart.get_str("name") == Some(ARGO_CD_CHART)
        || chart
            .get("dependencies")
            .into_iter()
            .flat_map(Node::items)
            .any(|d| d.get_str("name") == Some(ARGO_CD_CHART))
}

/// argo-cd chart values that Applications deploy, and those of in-repository wrapper charts no
/// Application deploys (installed by another tool).
fn chart_values(cx: &Context<'_>, service: &str, out: &mut Vec<Insecure>) {
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
                (SourceKind::Chart, _) if src.chart.as_deref() == Some(ARGO_CD_CHART) => {
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
fn dir_files<'p>(project: &'p Project, dir: &str) -> Vec<&'p crate::source::SourceFile> {
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
fn kustomize_helm_charts(
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

// ---------------------------------------------------------------------------------------------
// Edges in front of argocd-server

enum Verdict {
    /// An edge terminates TLS.
    Accepted,
    /// Why each candidate does not count (empty: no candidate).
    Rejected(Vec<(Span, String)>),
}

type Check = Result<String, (Span, String)>;

fn edge_for(s: &Insecure, objs: &Objects<'_>) -> Verdict {
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
fn candidates(s: &Insecure, objs: &Objects<'_>) -> Vec<Check> {
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

fn ns_compatible(a: Option<&str>, b: Option<&str>) -> bool {
    match (a, b) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    }
}

fn backend_matches(s: &Insecure, name: &str, ns: Option<&str>) -> bool {
    s.services.iter().any(|n| n == name) && ns_compatible(ns, s.namespace.as_deref())
}

/// Do two hostnames (each possibly `*.suffix`) intersect, as Gateway API defines it?
fn hostnames_intersect(a: &str, b: &str) -> bool {
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
struct ParentRef {
    group: String,
    kind: String,
    name: String,
    namespace: Option<String>,
    section: Option<String>,
    port: Option<String>,
    span: Span,
}

struct RouteInfo<'a> {
    /// "HTTPRoute `argocd-server`".
    label: String,
    kind: &'a str,
    ns: Option<&'a str>,
    hostnames: Vec<String>,
}

fn parent_from_node(n: &Node) -> Option<ParentRef> {
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

fn parent_from_values(v: &Values, fallback: Span) -> Option<ParentRef> {
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

fn gateway_api_routes(s: &Insecure, objs: &Objects<'_>, checks: &mut Vec<Check>) {
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
fn granted(objs: &Objects<'_>, from: (&str, &str, &str), to: (&str, &str, &str, &str)) -> bool {
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
fn attach(route: &RouteInfo<'_>, p: &ParentRef, objs: &Objects<'_>) -> Check {
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

fn gateway_listeners(
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
        format!(
            "{who} attaches to listener `{lname}` of Gateway `{gname}` (`sectionName`), which {why}"
        )
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
fn listener_terminates(
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

fn ingresses(s: &Insecure, objs: &Objects<'_>, checks: &mut Vec<Check>) {
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
fn ingress_host_covers(tls_host: &str, host: &str) -> bool {
    if tls_host.eq_ignore_ascii_case(host) {
        return true;
    }
    match (tls_host.strip_prefix("*."), host.split_once('.')) {
        (Some(suffix), Some((_, rest))) => rest.eq_ignore_ascii_case(suffix),
        _ => false,
    }
}

fn openshift_routes(s: &Insecure, objs: &Objects<'_>, checks: &mut Vec<Check>) {
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
fn istio_host_matches(s: &Insecure, host: &str, vs_ns: Option<&str>) -> bool {
    let mut parts = host.split('.');
    let name = parts.next().unwrap_or("");
    let ns = parts.next().or(vs_ns);
    backend_matches(s, name, ns)
}

fn istio(s: &Insecure, objs: &Objects<'_>, checks: &mut Vec<Check>) {
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

fn istio_gateway(who: &str, vs_hosts: &[&str], gw: &Obj<'_>, span: Span) -> Check {
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
fn chart_edges(s: &Insecure, v: &Values, objs: &Objects<'_>, checks: &mut Vec<Check>) {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// Every candidate edge of every insecure setting of a file, described.
    fn edges(text: &str) -> Vec<Result<String, String>> {
        let report =
            crate::engine::check_texts(&[("x.yaml", text)], crate::config::Config::default());
        let cx = Context {
            project: &report.project,
            config: &report.config,
        };
        let objs = Objects::new(cx.project);
        find_insecure(&cx, &objs, "argocd-server")
            .iter()
            .flat_map(|s| candidates(s, &objs))
            .map(|c| c.map_err(|(_, m)| m))
            .collect()
    }

    const CM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cmd-params-cm\n  namespace: argocd\ndata:\n  server.insecure: \"true\"\n---\n";

    #[test]
    fn describes_the_accepted_edge() {
        let gw = "apiVersion: gateway.networking.k8s.io/v1\nkind: Gateway\nmetadata:\n  name: edge\n  namespace: argocd\nspec:\n  listeners:\n    - {name: http, protocol: HTTP, port: 80}\n    - name: https\n      protocol: HTTPS\n      port: 443\n      hostname: '*.example.com'\n      tls: {certificateRefs: [{name: wildcard}]}\n---\napiVersion: gateway.networking.k8s.io/v1\nkind: HTTPRoute\nmetadata:\n  name: argocd\n  namespace: argocd\nspec:\n  parentRefs: [{name: edge}]\n  hostnames: [argocd.example.com]\n  rules:\n    - backendRefs: [{name: argocd-server, port: 80}]\n";
        assert_eq!(
            edges(&format!("{CM}{gw}")),
            vec![Ok("HTTPRoute `argocd` -> Gateway `edge` listener `https` (HTTPS, certificate `wildcard`)".to_string())]
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
