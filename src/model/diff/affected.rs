//! Which Applications a change can affect, decided from what each one reads at either
//! revision, so that `diff` renders and compares only those. An Application is affected when
//! it exists (live) at one revision only, when its spec differs (a generated or rendered
//! Application's spec is its generator's output), when a file it reads or is defined in
//! changed, or when a changed file lies under one of its source folders (a chart's templates).
//! When in doubt, everything is affected: a changed AppProject, ApplicationSet with a git
//! generator, `argocd-cm` or `argocd-cmd-params-cm`, gitops-lint configuration, or a changed
//! chart, values file, kustomization or template that no Application is known to read.

use std::collections::{BTreeMap, BTreeSet};

use super::ChangedLines;
use crate::model::argocd::resolve::{App, Location};
use crate::model::{DocKind, Model, Repository};
use crate::yaml::Node;
use crate::yaml::emit::{self, Style};

/// The Applications to render and compare.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Affected {
    /// Every Application: the change may affect any of them.
    All,
    /// These Applications (by name); the others read nothing the change touched.
    Only(BTreeSet<String>),
}

impl Affected {
    #[must_use]
    pub fn contains(&self, name: &str) -> bool {
        match self {
            Affected::All => true,
            Affected::Only(names) => names.contains(name),
        }
    }
}

/// What one revision says of an Application.
#[derive(Default)]
struct Reads {
    /// Its spec as compared (keys sorted), per definition of that name.
    spec: Vec<String>,
    files: BTreeSet<String>,
    /// In-repository source folders, with a trailing `/` (`""`: the root).
    folders: BTreeSet<String>,
}

/// Argo CD's own settings, which change how every Application is read.
const ARGOCD_CONFIG_MAPS: &[&str] = &[
    crate::model::argocd::ARGOCD_CM,
    crate::model::argocd::server::PARAMS_CM,
];

fn spec_text(model: &Model<'_>, app: &App) -> String {
    let repo = model.repo;
    let doc = &repo.docs[app.doc];
    let tree = repo.tree(doc);
    let spec = app.generated_spec.as_ref().or_else(|| match doc.kind {
        DocKind::Application => tree.get("spec"),
        _ => None,
    });
    spec.map(|s| {
        emit::lines(
            s,
            &Style {
                sort_keys: true,
                skip: &|_| false,
            },
        )
        .into_iter()
        .map(|l| l.text + "\n")
        .collect()
    })
    .unwrap_or_default()
}

fn reads(model: &Model<'_>) -> BTreeMap<String, Reads> {
    let repo = model.repo;
    let mut out: BTreeMap<String, Reads> = BTreeMap::new();
    for app in model.argocd().apps.iter().filter(|a| a.live) {
        let r = out.entry(app.name.clone()).or_default();
        r.spec.push(spec_text(model, app));
        r.files
            .insert(repo.source(repo.docs[app.doc].file).path.clone());
        for s in &app.sources {
            r.files
                .extend(s.files.iter().map(|f| repo.source(*f).path.clone()));
            if let Location::InRepo(dir) = &s.location {
                let dir = dir.trim_end_matches('/');
                r.folders.insert(if dir.is_empty() {
                    String::new()
                } else {
                    format!("{dir}/")
                });
            }
        }
    }
    out
}

/// Whether a changed file, at this revision, makes every Application affected: it holds an
/// AppProject, Argo CD's settings or gitops-lint's configuration; or no Application is known
/// to read it and it may still be read (a chart, values, a kustomization, a template, an
/// Argo CD document, or a file a git generator may read).
fn affects_all(repo: &Repository, path: &str, read: bool, git_generators: bool) -> bool {
    let Some(file) = repo.sources.by_path(path) else {
        return false;
    };
    let docs = repo.file_docs(file.id);
    let settings = docs.iter().any(|d| {
        matches!(d.kind, DocKind::AppProject | DocKind::Config)
            || (d.k8s_kind() == Some("ConfigMap")
                && d.name().is_some_and(|n| ARGOCD_CONFIG_MAPS.contains(&n)))
    });
    if settings {
        return true;
    }
    if read {
        return false;
    }
    git_generators
        || docs.is_empty()
        || docs.iter().any(|d| {
            matches!(
                d.kind,
                DocKind::Kustomization
                    | DocKind::HelmChart
                    | DocKind::HelmValues
                    | DocKind::Application
                    | DocKind::ApplicationSet
            )
        })
}

/// Whether an ApplicationSet of the repository has a git generator (its files or folders may
/// be any file).
fn has_git_generator(repo: &Repository) -> bool {
    repo.docs_of(DocKind::ApplicationSet).any(|d| {
        repo.tree(d)
            .descendants()
            .any(|n| n.get("git").and_then(Node::as_map).is_some())
    })
}

/// Whether `path` is one of `files` or under one of `folders` (each with a trailing `/`,
/// `""` for the root).
fn reads_path(files: &BTreeSet<String>, folders: &BTreeSet<String>, path: &str) -> bool {
    files.contains(path)
        || folders.contains("")
        || path
            .match_indices('/')
            .any(|(i, _)| folders.contains(&path[..=i]))
}

/// The Applications of `base` and `head` that the change can affect.
#[must_use]
pub fn affected(base: &Model<'_>, head: &Model<'_>, changed: &ChangedLines) -> Affected {
    let paths: BTreeSet<&str> = changed
        .head
        .keys()
        .chain(changed.base.keys())
        .map(String::as_str)
        .collect();
    let (b, h) = (reads(base), reads(head));
    let (mut files, mut folders) = (BTreeSet::new(), BTreeSet::new());
    for r in b.values().chain(h.values()) {
        files.extend(r.files.iter().cloned());
        folders.extend(r.folders.iter().cloned());
    }
    let git = has_git_generator(base.repo) || has_git_generator(head.repo);
    for p in &paths {
        let read = reads_path(&files, &folders, p);
        if affects_all(base.repo, p, read, git) || affects_all(head.repo, p, read, git) {
            return Affected::All;
        }
    }
    // A changed file under a folder: the first changed path at or after the folder.
    let under = |folder: &str| {
        paths
            .range(folder..)
            .next()
            .is_some_and(|p| p.starts_with(folder))
    };
    let names: BTreeSet<&String> = b.keys().chain(h.keys()).collect();
    let mut only = BTreeSet::new();
    for name in names {
        let (Some(x), Some(y)) = (b.get(name), h.get(name)) else {
            only.insert(name.clone());
            continue;
        };
        let touched = x.spec != y.spec
            || [x, y].iter().any(|r| {
                r.files.iter().any(|f| paths.contains(f.as_str()))
                    || r.folders.iter().any(|f| under(f))
            });
        if touched {
            only.insert(name.clone());
        }
    }
    Affected::Only(only)
}
