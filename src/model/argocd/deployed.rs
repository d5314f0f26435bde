//! What an Application's source deploys: the Kubernetes objects of the files it reads and
//! of the charts it renders, the kustomizations it reads, and its chart's names.

use super::rendered::RenderedMeta;
use super::resolve::{Location, ResolvedSource, SourceKind};
use crate::model::kustomize::Kustomization;
use crate::model::{DocKind, Document, Model, Repository};
use crate::source::Span;
use crate::yaml::Node;
use rustc_hash::FxHashMap;

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
    let repo = model.repo;
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
            for &f in src.files.iter() {
                for d in repo.file_docs(f) {
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

/// A rule's verdict on what each source deploys, judged once per file list: the directory and
/// kustomize sources of thousands of Applications of one folder share one list, and judging each
/// would walk (Applications × files). A Helm source's rendered objects are its own.
pub struct PerDeployed<T> {
    /// Keyed by the address of the shared list, which the model holds for the whole run, and
    /// whether kustomizations are judged too.
    by_files: FxHashMap<(usize, bool), T>,
}

impl<T> Default for PerDeployed<T> {
    fn default() -> Self {
        Self {
            by_files: FxHashMap::default(),
        }
    }
}

impl<T: Clone> PerDeployed<T> {
    /// `judge` of what source `source` of Application `app` deploys, or the verdict already
    /// given for its file list. `judge` must depend only on the objects and, for a kustomize
    /// source, its kustomizations.
    pub fn judge<'p>(
        &mut self,
        model: &'p Model<'_>,
        app: usize,
        source: usize,
        src: &ResolvedSource,
        judge: impl FnOnce(&[Deployed<'p>], &[&'p Kustomization]) -> T,
    ) -> T {
        // Empty lists have no address of their own, and nothing to judge.
        let shared = (matches!(src.kind, SourceKind::Directory | SourceKind::Kustomize)
            && !src.files.is_empty())
        .then(|| {
            (
                src.files.as_ptr() as usize,
                src.kind == SourceKind::Kustomize,
            )
        });
        if let Some(v) = shared.and_then(|key| self.by_files.get(&key)) {
            return v.clone();
        }
        let kustomizations = if src.kind == SourceKind::Kustomize {
            kustomizations(model, src)
        } else {
            Vec::new()
        };
        let v = judge(&deployed(model, app, source, src), &kustomizations);
        if let Some(key) = shared {
            self.by_files.insert(key, v.clone());
        }
        v
    }
}

/// Kustomizations a kustomize source reads.
pub fn kustomizations<'m>(model: &'m Model<'_>, src: &ResolvedSource) -> Vec<&'m Kustomization> {
    let graph = model.kustomize();
    src.files.iter().filter_map(|&f| graph.of_file(f)).collect()
}

/// The chart name and dependency names of an in-repository Helm chart source.
pub fn chart_names<'p>(repo: &'p Repository, src: &ResolvedSource) -> Vec<(&'p str, Span)> {
    let (SourceKind::Helm, Location::InRepo(dir)) = (src.kind, &src.location) else {
        return Vec::new();
    };
    let path = if dir.is_empty() {
        "Chart.yaml".to_string()
    } else {
        format!("{dir}/Chart.yaml")
    };
    let Some(file) = repo.file_by_path(&path) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for d in repo.file_docs(file.id) {
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
