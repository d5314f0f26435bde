//! Argo CD, the deployer: thin views over its documents (here), AppProject matching
//! (`appproject.rs`), ApplicationSet generators (`appset.rs`), what each Application deploys
//! (`resolve/`: the [`resolve::ArgoModel`]), the objects live Applications render
//! (`rendered.rs`), the repository's AppProjects and clusters (`projects.rs`), what a source
//! deploys (`deployed.rs`), argocd-server's settings (`server.rs`) and Argo CD's schema.

pub mod appproject;
pub mod appset;
pub mod deployed;
pub mod manifests;
pub mod params;
pub mod projects;
mod render_cache;
pub mod rendered;
pub mod resolve;
pub mod schema;
pub mod schema_options;
pub mod server;
pub mod source_overrides;

use super::{DocKind, Document};
use crate::yaml::Node;

/// The ConfigMap of Argo CD's settings (`url`, `globalProjects`, ...).
pub const ARGOCD_CM: &str = "argocd-cm";

/// The Application specs a document defines: an Application's `spec`, or an ApplicationSet's
/// `spec.template.spec` (plus `templatePatch` is not evaluated here).
#[must_use]
pub fn application_specs(doc: &Document) -> Vec<&Node> {
    match doc.kind {
        DocKind::Application => doc.root.get("spec").into_iter().collect(),
        DocKind::ApplicationSet => doc
            .root
            .path(&["spec", "template", "spec"])
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}

/// The sources of an Application spec, as Argo CD renders them: a `sourceHydrator`'s
/// `drySource` (Argo CD then ignores `source` and `sources`, and deploys what the hydrator
/// renders from it), else the items of `sources` when it is a non-empty list (Argo CD then
/// ignores `source`), else `source`.
#[must_use]
pub fn sources(spec: &Node) -> Vec<&Node> {
    if let Some(dry) = dry_source(spec) {
        return vec![dry];
    }
    if let Some(items) = spec.get("sources").and_then(Node::as_seq) {
        if !items.is_empty() {
            return items.iter().collect();
        }
    }
    spec.get("source")
        .filter(|s| s.as_map().is_some())
        .into_iter()
        .collect()
}

/// The `sourceHydrator.drySource` of an Application spec: what the hydrator renders and
/// commits to `syncSource.path` of `syncSource.targetBranch`, the manifests Argo CD deploys.
/// That branch is not the one linted, so the dry source stands for them.
#[must_use]
pub fn dry_source(spec: &Node) -> Option<&Node> {
    spec.path(&["sourceHydrator", "drySource"])
        .filter(|s| s.as_map().is_some())
}

/// A non-empty, non-null mapping or scalar at `key` (Argo CD treats `helm: {}` as set).
#[must_use]
pub fn is_set(node: &Node, key: &str) -> bool {
    node.get(key).is_some_and(|v| !v.is_null())
}

/// The first identity field (`metadata`, `spec.project`, source and destination coordinates)
/// holding a `{{ ... }}` template action; Helm values strings are left alone.
#[must_use]
pub fn templated_field(root: &Node) -> Option<&Node> {
    let is_template = |n: &&Node| {
        n.as_str()
            .is_some_and(|s| s.contains("{{") && s.contains("}}"))
    };
    let metadata = root.get("metadata").into_iter().flat_map(|m| {
        ["name", "namespace"]
            .into_iter()
            .filter_map(move |k| m.get(k))
    });
    let spec = root.get("spec");
    let repo = spec.and_then(|s| s.get("project"));
    let sources = spec.into_iter().flat_map(|s| {
        s.get("source")
            .into_iter()
            .chain(s.get("sources").into_iter().flat_map(Node::items))
    });
    let coords = sources.flat_map(|s| {
        ["repoURL", "path", "targetRevision", "chart"]
            .into_iter()
            .filter_map(move |k| s.get(k))
    });
    let dest = spec
        .and_then(|s| s.get("destination"))
        .into_iter()
        .flat_map(|d| {
            ["server", "name", "namespace"]
                .into_iter()
                .filter_map(move |k| d.get(k))
        });
    metadata
        .chain(repo)
        .chain(coords)
        .chain(dest)
        .find(is_template)
}
