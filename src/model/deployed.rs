//! The deployed view: documents the deployers apply that no file holds as they are applied.
//! These are the Argo CD objects that live Applications render from this repository's Helm
//! charts (app-of-apps charts and `argocd-apps` values), and the builds of a document
//! (an Argo CD object or a workload) that overlays build differently (a base patched per
//! environment), one per overlay, judged in place of the written document. The engine offers them to every
//! per-document rule and policy after the written documents (see `engine::dispatch`), so an
//! Application a chart writes is judged like one written by hand.

use super::argocd::rendered::RenderedObjects;
use super::argocd::resolve::ArgoModel;
use super::{DocKind, Document, Repository};
use crate::source::Span;

/// What the deployers apply beyond the written documents.
#[derive(Default)]
pub struct Deployed {
    pub docs: Vec<DeployedDoc>,
}

/// One deployed document and where it comes from.
pub struct DeployedDoc {
    /// The document, [`Document::rendered`]: its nodes point at the values lines that set
    /// them, else at the document that deploys it.
    pub doc: Document,
    /// "Application `web`, rendered from `templates/apps.yaml:12` by Application `root`": it
    /// names the object, since one finding at a template line stands for every object
    /// rendered there.
    pub origin: String,
    /// Where it was made: the template line when the template is one of the repository's
    /// files, else the deploying document's anchor.
    pub origin_span: Span,
}

/// The deployed view of the repository, from what Argo CD's resolver rendered.
#[must_use]
pub fn build(repo: &Repository, argocd: &ArgoModel) -> Deployed {
    let docs = argocd
        .rendered
        .iter()
        .filter(|o| {
            matches!(
                o.kind,
                DocKind::Application | DocKind::ApplicationSet | DocKind::AppProject
            ) && !o.standalone
                && argocd.live.contains(&o.manager_doc)
        })
        .map(|o| {
            let template = if o.chart_dir.is_empty() {
                o.template.clone()
            } else {
                format!("{}/{}", o.chart_dir, o.template)
            };
            let origin_span = repo
                .sources
                .template_by_path(&template)
                .filter(|_| o.builtin.is_none() && o.line >= 1)
                .and_then(|f| {
                    let text = f.text();
                    (o.line <= f.lines().line_count()).then(|| {
                        let r = f.lines().line_range(text, o.line - 1);
                        Span::new(f.id, r.start, r.end)
                    })
                })
                .or_else(|| repo.docs.get(o.manager_doc).map(Document::anchor_span))
                .unwrap_or(o.root.span);
            DeployedDoc {
                doc: Document {
                    file: o.root.span.file,
                    index: 0,
                    span: o.root.span,
                    root: o.root.clone().into(),
                    kind: o.kind,
                    kept: None,
                    rendered: true,
                },
                origin: format!("{} `{}`, {}", kind_name(o.kind), o.name, o.label()),
                origin_span,
            }
        })
        .collect::<Vec<_>>();
    let mut docs = docs;
    docs.extend(variants(repo));
    Deployed { docs }
}

/// The other objects live Applications render from this repository's charts (workloads,
/// ConfigMaps, Services...: what `argocd::rendered` keeps), for the rules and policies that
/// judge Kubernetes objects. A finding on one lands at the values node that set the value,
/// else at the template line, labelled with the object and where it was rendered.
#[must_use]
pub fn objects(repo: &Repository, rendered: &RenderedObjects) -> Deployed {
    let docs = rendered
        .docs
        .iter()
        .zip(&rendered.meta)
        .map(|(d, meta)| DeployedDoc {
            doc: d.clone(),
            origin: format!(
                "{} `{}`, {}",
                d.k8s_kind().unwrap_or("object"),
                d.name().unwrap_or(""),
                meta.label
            ),
            origin_span: line_of(repo, d.span),
        })
        .collect();
    Deployed { docs }
}

/// The whole line `span` starts on.
fn line_of(repo: &Repository, span: Span) -> Span {
    let f = repo.source(span.file);
    let r = f
        .lines()
        .line_range(f.text(), f.lines().line_of(span.start as usize));
    Span::new(span.file, r.start, r.end)
}

/// The overlays' builds of the Argo CD documents they build differently: each judged as its
/// overlay builds it, labelled with the overlay.
fn variants(repo: &Repository) -> impl Iterator<Item = DeployedDoc> + '_ {
    repo.variants()
        .iter()
        .filter_map(|v| variant(repo, v.doc, v.kustomization, v.root.clone()))
}

/// The overlays' builds of the other objects they build differently, for the documents
/// `needed` (those a rule judges; see [`Repository::object_variants`]): each kustomization
/// that builds one is built again, on all threads.
#[must_use]
pub fn object_variants(repo: &Repository, needed: &[usize]) -> Deployed {
    use rayon::prelude::*;
    let all = repo.object_variants();
    let mut by_kustomization: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for &doc in needed {
        if let Ok(i) = all.binary_search_by_key(&doc, |(d, _)| *d) {
            for &k in &all[i].1 {
                by_kustomization.entry(k).or_default().push(doc);
            }
        }
    }
    let by_kustomization: Vec<(usize, Vec<usize>)> = by_kustomization.into_iter().collect();
    let mut docs: Vec<(usize, usize, DeployedDoc)> = by_kustomization
        .par_iter()
        .flat_map_iter(|(k, wanted)| {
            super::kustomize::build::build_as_loaded(repo, &repo.kustomize, *k)
                .objects
                .into_iter()
                .filter_map(move |o| {
                    let doc = o.doc.filter(|d| wanted.contains(d))?;
                    Some((doc, *k, variant(repo, doc, *k, o.root)?))
                })
        })
        .collect();
    docs.sort_by_key(|(doc, k, _)| (*doc, *k));
    Deployed {
        docs: docs.into_iter().map(|(_, _, d)| d).collect(),
    }
}

/// Written document `doc` as kustomization `k` builds it.
fn variant(
    repo: &Repository,
    doc: usize,
    k: usize,
    root: crate::yaml::Node,
) -> Option<DeployedDoc> {
    let written = repo.docs.get(doc)?;
    let node = repo.kustomize.node(k);
    let file = repo.source(node.file);
    let name = root
        .path(&["metadata", "name"])
        .and_then(crate::yaml::Node::as_str)
        .unwrap_or("")
        .to_string();
    let origin = format!(
        "{} `{name}`, as `{}` builds it",
        object_kind(written.kind, &root),
        file.path
    );
    let line = file.lines().line_range(file.text(), 0);
    Some(DeployedDoc {
        doc: Document {
            file: written.file,
            index: written.index,
            span: written.span,
            root: root.into(),
            kind: written.kind,
            kept: None,
            rendered: true,
        },
        origin,
        origin_span: Span::new(node.file, line.start, line.end),
    })
}

/// The kind a label names: Argo CD's, else the object's own `kind`.
fn object_kind(kind: DocKind, root: &crate::yaml::Node) -> &str {
    match kind {
        DocKind::K8sObject => root.get_str("kind").unwrap_or("object"),
        _ => kind_name(kind),
    }
}

fn kind_name(kind: DocKind) -> &'static str {
    match kind {
        DocKind::ApplicationSet => "ApplicationSet",
        DocKind::AppProject => "AppProject",
        _ => "Application",
    }
}
