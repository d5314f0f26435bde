//! Shared by the AppProject and boundary rules: the repository's AppProjects, its cluster
//! secrets, and what each Application's sources deploy.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::diagnostic::Finding;
use crate::model::appproject::{AppDest, ProjectDest};
use crate::model::kustomize::Kustomization;
use crate::model::rendered::RenderedMeta;
use crate::model::resolve::{App, ArgoModel, Field, ResolvedSource};
use crate::model::template::is_unknown;
use crate::model::{DocKind, Document};
use crate::model::{Model, Project};
use crate::rule::Context;
use crate::source::{FileId, Span};
use crate::yaml::Node;

pub const IN_CLUSTER_SERVER: &str = "https://kubernetes.default.svc";
pub const IN_CLUSTER_NAME: &str = "in-cluster";

/// A value the repository fixes (not templated, not from an unexpandable generator).
#[must_use]
pub fn concrete(f: &Field) -> Option<&str> {
    let v = f.value.trim();
    (!is_unknown(v) && !v.contains("{{") && !v.contains("${")).then_some(v)
}

/// The project an Application uses: `spec.project`, with an empty or missing one meaning
/// `default` as in Argo CD; `None` when the name is templated or unknown.
#[must_use]
pub fn app_project_name(project: Option<&Field>) -> Option<&str> {
    match project {
        Some(f) => match concrete(f)? {
            "" => Some("default"),
            n => Some(n),
        },
        None => Some("default"),
    }
}

/// AppProjects of the repository by name (a name may be defined more than once, e.g. per
/// cluster overlay), written or rendered from a chart.
pub fn projects<'m>(model: &'m Model<'_>) -> BTreeMap<&'m str, Vec<&'m Document>> {
    let mut out: BTreeMap<&str, Vec<&Document>> = BTreeMap::new();
    let rendered = &model.argocd().rendered_projects;
    for d in model.project.docs_of(DocKind::AppProject).chain(rendered) {
        if let Some(name) = d.name() {
            out.entry(name).or_default().push(d);
        }
    }
    out
}

/// The namespaces the Argo CD control plane may run in: those the AppProjects state (Argo CD
/// reads AppProjects only from its own namespace). Empty when no AppProject states one (they are
/// applied with `-n`): the control plane's namespace is then unknown.
pub fn controller_namespaces(project: &Project) -> Vec<&str> {
    let mut out = Vec::new();
    for d in project.docs_of(DocKind::AppProject) {
        if let Some(ns) = d.namespace() {
            if !out.contains(&ns) {
                out.push(ns);
            }
        }
    }
    out
}

/// `spec.destinations` of an AppProject.
pub fn project_destinations(doc: &Document) -> Vec<(ProjectDest, &Node)> {
    doc.root
        .path(&["spec", "destinations"])
        .into_iter()
        .flat_map(Node::items)
        .map(|d| {
            let s = |k: &str| d.get_str(k).unwrap_or("").to_string();
            (
                ProjectDest {
                    server: s("server"),
                    name: s("name"),
                    namespace: s("namespace"),
                },
                d,
            )
        })
        .collect()
}

/// Names and servers of clusters declared by Argo CD cluster secrets in the repository.
#[derive(Default)]
pub struct Clusters {
    by_name: HashMap<String, String>,
    by_server: HashMap<String, String>,
}

impl Clusters {
    pub fn of(model: &Model<'_>) -> Self {
        let mut c = Clusters::default();
        for secret in model.k8s().of("", "Secret") {
            let d = secret.doc;
            if d.root
                .path(&["metadata", "labels", "argocd.argoproj.io/secret-type"])
                .and_then(Node::as_str)
                != Some("cluster")
            {
                continue;
            }
            let (Some(name), Some(server)) = (
                d.root.path(&["stringData", "name"]).and_then(Node::as_str),
                d.root
                    .path(&["stringData", "server"])
                    .and_then(Node::as_str),
            ) else {
                continue;
            };
            // Argo CD trims a trailing `/` from cluster servers.
            let server = server.trim_end_matches('/');
            c.by_name.insert(name.to_string(), server.to_string());
            c.by_server.insert(server.to_string(), name.to_string());
        }
        c
    }

    /// The destination cluster as Argo CD resolves it; `None` when it is not decidable (both
    /// `server` and `name`, neither, or a templated value).
    pub fn app_dest(&self, app: &App) -> Option<AppDest> {
        let d = app.destination.as_ref()?;
        let namespace = match &d.namespace {
            Some(f) => concrete(f)?.to_string(),
            None => String::new(),
        };
        let server = d.server.as_ref().map(concrete);
        let name = d.name.as_ref().map(concrete);
        match (server, name) {
            (Some(Some(s)), None) if !s.is_empty() => {
                let s = s.trim_end_matches('/').to_string();
                let name = self
                    .by_server
                    .get(&s)
                    .cloned()
                    .or_else(|| (s == IN_CLUSTER_SERVER).then(|| IN_CLUSTER_NAME.to_string()));
                Some(AppDest {
                    server: Some(s),
                    name,
                    namespace,
                })
            }
            (None, Some(Some(n))) if !n.is_empty() => {
                let server = self
                    .by_name
                    .get(n)
                    .cloned()
                    .or_else(|| (n == IN_CLUSTER_NAME).then(|| IN_CLUSTER_SERVER.to_string()));
                Some(AppDest {
                    server,
                    name: Some(n.to_string()),
                    namespace,
                })
            }
            _ => None,
        }
    }
}

/// One Kubernetes object an Application's source deploys: a manifest of the repository, or an
/// object rendered from one of its charts.
pub struct Deployed<'p> {
    pub doc: &'p Document,
    pub kind: &'p str,
    pub api_version: &'p str,
    /// For a rendered object: where it comes from.
    pub rendered: Option<&'p RenderedMeta>,
}

impl Deployed<'_> {
    /// `what`, with "rendered from `templates/x.yaml:N`" for a rendered object (its nodes may
    /// point at a values file).
    #[must_use]
    pub fn describe(&self, what: String) -> String {
        match self.rendered {
            Some(m) => format!("{what} rendered from `{}`", m.template),
            None => what,
        }
    }
}

/// The Kubernetes objects source `source` of Application `app` deploys: those in the files a
/// directory or kustomize source reads, and those a Helm chart of this repository renders.
pub fn deployed<'p>(
    model: &'p Model<'_>,
    app: usize,
    source: usize,
    src: &ResolvedSource,
) -> Vec<Deployed<'p>> {
    use crate::model::resolve::{Location, SourceKind};
    let project = model.project;
    let mut out = Vec::new();
    let object = |d: &'p Document, rendered: Option<&'p RenderedMeta>| {
        let (Some(kind), Some(api_version)) = (d.k8s_kind(), d.api_version()) else {
            return None;
        };
        Some(Deployed {
            doc: d,
            kind,
            api_version,
            rendered,
        })
    };
    match (src.kind, &src.location) {
        (SourceKind::Directory | SourceKind::Kustomize, _) => {
            for &f in &src.files {
                for d in project.file_docs(f) {
                    if matches!(d.kind, DocKind::K8sObject) {
                        out.extend(object(d, None));
                    }
                }
            }
        }
        (SourceKind::Helm, Location::InRepo(_)) => {
            for (d, meta) in model.rendered().with_meta(app, source) {
                out.extend(object(d, Some(meta)));
            }
        }
        _ => {}
    }
    out
}

/// Kustomizations a kustomize source reads.
pub fn kustomizations<'m>(model: &'m Model<'_>, src: &ResolvedSource) -> Vec<&'m Kustomization> {
    let graph = model.kustomize();
    src.files.iter().filter_map(|&f| graph.of_file(f)).collect()
}

/// The chart name and dependency names of an in-repository Helm chart source.
pub fn chart_names<'p>(project: &'p Project, src: &ResolvedSource) -> Vec<(&'p str, Span)> {
    use crate::model::resolve::{Location, SourceKind};
    let (SourceKind::Helm, Location::InRepo(dir)) = (src.kind, &src.location) else {
        return Vec::new();
    };
    let path = if dir.is_empty() {
        "Chart.yaml".to_string()
    } else {
        format!("{dir}/Chart.yaml")
    };
    let Some(file) = project.file_by_path(&path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in project.file_docs(file.id) {
        if let Some(n) = d.root.get("name").filter(|n| n.as_str().is_some()) {
            out.push((n.as_str().unwrap_or(""), n.span));
        }
        for dep in d.root.get("dependencies").into_iter().flat_map(Node::items) {
            if let Some(n) = dep.get("name").filter(|n| n.as_str().is_some()) {
                out.push((n.as_str().unwrap_or(""), n.span));
            }
        }
    }
    out
}

/// True when `path` is `prefix` or inside it (both relative to the root).
#[must_use]
pub fn under(path: &str, prefix: &str) -> bool {
    let prefix = prefix.trim_start_matches("./").trim_matches('/');
    if prefix.is_empty() {
        return true;
    }
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Where a source-level finding points: `path`, else `chart`, else `repoURL`, else the source.
#[must_use]
pub fn source_span(src: &ResolvedSource) -> Span {
    src.path
        .as_ref()
        .or(src.chart.as_ref())
        .or(src.repo_url_field.as_ref())
        .map_or(src.span, |f| f.span)
}

/// Groups findings that several Applications share (one ApplicationSet template), labelling
/// the Applications when there are several or when they are in another file.
pub fn merge_by_span(model: &ArgoModel, items: Vec<(usize, Finding)>) -> Vec<Finding> {
    let mut by: BTreeMap<(Span, String), (Finding, Vec<usize>)> = BTreeMap::new();
    for (app, f) in items {
        let e = by
            .entry((f.span, f.message.clone()))
            .or_insert_with(|| (f, Vec::new()));
        if !e.1.contains(&app) {
            e.1.push(app);
        }
    }
    let mut out = Vec::new();
    for ((span, _), (mut f, apps)) in by {
        for &a in apps.iter().take(5) {
            let app = &model.apps[a];
            if app.name_span.file != span.file || apps.len() > 1 {
                let msg = match &app.appset {
                    Some(set) => format!(
                        "Application `{}` (generated by ApplicationSet `{set}`)",
                        app.name
                    ),
                    None => format!("Application `{}`", app.name),
                };
                f = f.with_label(app.name_span, msg);
            }
        }
        out.push(f);
    }
    out
}

/// AppProjects that kustomizations deploy with different patches (the model keeps them as
/// written): their `sourceRepos` and `destinations` are not known. Projects one
/// kustomization patches are read patched and checked.
pub fn patched_projects(model: &Model<'_>) -> HashSet<(FileId, usize)> {
    let project = model.project;
    project
        .ambiguously_patched
        .iter()
        .filter_map(|&i| project.docs.get(i))
        .filter(|d| d.kind == DocKind::AppProject)
        .map(|d| (d.file, d.index))
        .collect()
}

/// True when the ApplicationSet that generates `app` has a `templatePatch` (a Go template the
/// model does not evaluate) that mentions `key`: the generated value may differ.
#[must_use]
pub fn template_patched(project: &Project, app: &App, key: &str) -> bool {
    app.appset.is_some()
        && project.docs[app.doc]
            .root
            .path(&["spec", "templatePatch"])
            .and_then(Node::scalar_text)
            .is_some_and(|p| p.contains(key))
}

/// The AppProjects named as global projects in an `argocd-cm` ConfigMap of the repository
/// (`data.globalProjects`). Argo CD appends their `destinations` and `sourceRepos` to the
/// projects their label selector matches; the selector is not evaluated here, so callers merge
/// their allow entries (not their denials) into every project: that can only hide findings.
pub fn global_projects<'p>(model: &Model<'p>) -> Vec<&'p Document> {
    let project = model.project;
    let mut names: Vec<String> = Vec::new();
    for cm in model.k8s().named("", "ConfigMap", "argocd-cm") {
        let d = cm.doc;
        let Some(text) = d
            .root
            .path(&["data", "globalProjects"])
            .and_then(Node::scalar_text)
        else {
            continue;
        };
        let parsed = crate::yaml::parse(d.file, text);
        for doc in &parsed.docs {
            for gp in doc.root.items() {
                if let Some(n) = gp.get_str("projectName") {
                    names.push(n.to_string());
                }
            }
        }
    }
    project
        .docs_of(DocKind::AppProject)
        .filter(|d| d.name().is_some_and(|n| names.iter().any(|x| x == n)))
        .collect()
}

/// Each live Application with the definitions of its AppProject, for rules that check an
/// Application against its project's bounds: skipped when the project is unknown here (that is
/// `argocd/unknown-project`'s), when kustomize overlays patch it in ways that disagree, or when
/// an ApplicationSet `templatePatch` (not evaluated) may set one of `keys`.
pub fn apps_with_projects<'m>(
    cx: &'m Context<'_>,
    keys: &'m [&'m str],
) -> impl Iterator<Item = (usize, &'m App, &'m str, Vec<&'m Document>)> + 'm {
    let projects = projects(cx.model);
    let patched = patched_projects(cx.model);
    cx.model
        .argocd()
        .apps
        .iter()
        .enumerate()
        .filter_map(move |(i, app)| {
            if !app.live {
                return None;
            }
            let name = app_project_name(app.project.as_ref())?;
            let defs = projects.get(name)?;
            if keys.iter().any(|k| template_patched(cx.project, app, k))
                || defs.iter().any(|d| patched.contains(&(d.file, d.index)))
            {
                return None;
            }
            Some((i, app, name, defs.clone()))
        })
}
