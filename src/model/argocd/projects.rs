//! The repository's AppProjects (written, rendered, global, patched), the namespaces the
//! control plane may run in, and the clusters its cluster secrets declare.

use std::collections::{BTreeMap, HashMap, HashSet};

use super::ARGOCD_CM;
use super::appproject::{AppDest, ProjectDest};
use super::resolve::App;
use crate::model::Field;
use crate::model::template::is_unknown;
use crate::model::{DocKind, Document, Model, Repository};
use crate::repo::retention::{Payload, Reads};
use crate::source::FileId;
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
    for d in model.repo.docs_of(DocKind::AppProject).chain(rendered) {
        if let Some(name) = d.name() {
            out.entry(name).or_default().push(d);
        }
    }
    out
}

/// The namespaces the Argo CD control plane may run in: those the AppProjects state (Argo CD
/// reads AppProjects only from its own namespace). Empty when no AppProject states one (they are
/// applied with `-n`): the control plane's namespace is then unknown.
pub fn controller_namespaces(repo: &Repository) -> Vec<&str> {
    let mut out = Vec::new();
    for d in repo.docs_of(DocKind::AppProject) {
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

/// The label of Argo CD's cluster and repository Secrets.
pub const SECRET_TYPE_LABEL: &str = "argocd.argoproj.io/secret-type";

/// What these facts read of the payloads: the cluster Secrets ([`Clusters`]) and `argocd-cm`
/// ([`global_projects`]).
pub const READS: Reads = Reads {
    payloads: &[
        Payload::Labelled(SECRET_TYPE_LABEL),
        Payload::Named(&[ARGOCD_CM]),
    ],
    ..Reads::NONE
};

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
                .path(&["metadata", "labels", SECRET_TYPE_LABEL])
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

/// AppProjects that kustomizations deploy with different patches (the model keeps them as
/// written): their `sourceRepos` and `destinations` are not known. Projects one
/// kustomization patches are read patched and checked.
pub fn patched_projects(model: &Model<'_>) -> HashSet<(FileId, usize)> {
    let repo = model.repo;
    repo.ambiguously_patched
        .iter()
        .filter_map(|&i| repo.docs.get(i))
        .filter(|d| d.kind == DocKind::AppProject)
        .map(|d| (d.file, d.index))
        .collect()
}

/// True when the ApplicationSet that generates `app` has a `templatePatch` (a Go template the
/// model does not evaluate) that mentions `key`: the generated value may differ.
#[must_use]
pub fn template_patched(repo: &Repository, app: &App, key: &str) -> bool {
    app.appset.is_some()
        && repo.docs[app.doc]
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
    let repo = model.repo;
    let mut names: Vec<String> = Vec::new();
    for cm in model.k8s().named("", "ConfigMap", ARGOCD_CM) {
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
    repo.docs_of(DocKind::AppProject)
        .filter(|d| d.name().is_some_and(|n| names.iter().any(|x| x == n)))
        .collect()
}
