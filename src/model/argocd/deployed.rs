//! What an Application's source deploys: the Kubernetes objects of the files it reads and
//! of the charts it renders, the kustomizations it reads, and its chart's names.

use super::rendered::RenderedMeta;
use super::resolve::{Location, ResolvedSource, SourceKind};
use crate::model::kustomize::Kustomization;
use crate::model::{DocKind, Document, Model, Repository};
use crate::source::Span;
use crate::yaml::Node;

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
