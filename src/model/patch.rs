//! What kustomize makes of the objects of the repository: each kustomization that nothing
//! includes is built in-process (`kustomize::build`: patches, generators, replacements,
//! namespaces, prefixes, images, labels... in kustomize's order), and a document every build
//! makes alike takes that tree: Argo CD objects and workloads alike (an `images:` digest, a
//! `namespace:`, a patched value are what rules and policies judge). Its nodes keep their spans: a value a patch or a replacement sets
//! points at the line that set it, so a finding on it lands there.
//!
//! A document that builds make differently is kept as written, with each build's tree beside
//! it (`Patched::ambiguous_builds`): the per-document rules judge those instead. Documents of
//! patch files that no kustomization lists as a resource are patches, not objects.

use std::collections::{HashMap, HashSet};

use rayon::prelude::*;

use super::is_argocd_kind;
use super::kustomize::build;
use super::kustomize::{Flow, Kustomizations, PatchBody, Reference, Step};
use super::{Document, Repository};
use crate::source::FileId;
use crate::yaml::Node;

/// What applying the repository's kustomizations changes.
#[derive(Debug, Default)]
pub struct Patched {
    /// Document index → its tree after kustomize's transformations (only changed documents
    /// that every kustomization deploying them transforms alike).
    pub roots: HashMap<usize, Node>,
    /// Argo CD documents of patch files that no kustomization lists as a resource: a patch,
    /// not an object.
    pub patch_docs: HashSet<usize>,
    /// Documents that kustomizations deploy with different results: kept as written, but
    /// what Argo CD reads is not known.
    pub ambiguous: HashSet<usize>,
    /// What each top-level kustomization (graph node) that builds an ambiguous document makes
    /// of it.
    pub ambiguous_builds: HashMap<usize, Vec<(usize, Node)>>,
}

/// Applies every kustomization of `project` to the Argo CD objects it deploys.
#[must_use]
pub fn apply(repo: &Repository, ks: &Kustomizations) -> Patched {
    let mut out = Patched::default();
    let nodes = ks.nodes();
    if nodes.is_empty() {
        return out;
    }
    let mut included = vec![false; nodes.len()];
    let mut resource_files = HashSet::new();
    for k in nodes {
        for e in &k.entries {
            match e.reference {
                Reference::Kustomization(n) => included[n] = true,
                Reference::File(f) => {
                    resource_files.insert(f);
                }
                _ => {}
            }
        }
    }
    // Patch files holding Argo CD kinds are patches, not objects.
    for k in nodes {
        for p in &k.patches {
            if let PatchBody::File {
                reference: Reference::File(f),
                ..
            } = &p.body
            {
                if resource_files.contains(f) {
                    continue;
                }
                for i in repo.file_doc_range(*f) {
                    if is_argocd_kind(repo.docs[i].kind) {
                        out.patch_docs.insert(i);
                    }
                }
            }
        }
    }
    // What the builds of the kustomizations nothing includes make of the objects they hold:
    // the whole of kustomize (patches, generators, replacements, labels...), each
    // kustomization on its own thread.
    let object_files: HashSet<FileId> = repo
        .docs
        .iter()
        .filter(|d| is_object(d.kind))
        .map(|d| d.file)
        .collect();
    if object_files.is_empty() {
        return out;
    }
    let starts: Vec<usize> = (0..nodes.len())
        .filter(|&k| !included[k] && reaches(ks, k, &object_files))
        .collect();
    let builds: Vec<(usize, Vec<(usize, Node)>)> = starts
        .par_iter()
        .map(|&start| {
            // As loaded: ConfigMap and Secret payloads that loading emptied stay empty (no
            // reader kept them), so an unchanged one compares equal and nothing grows.
            let objects = build::build_as_loaded(repo, ks, start)
                .objects
                .into_iter()
                .filter_map(|o| {
                    let doc = o.doc.filter(|&d| is_object(repo.docs[d].kind))?;
                    Some((doc, o.root))
                })
                .collect();
            (start, objects)
        })
        .collect();
    // Document → each build's tree of it (`None`: as written).
    let mut variants: HashMap<usize, Vec<(usize, Option<Node>)>> = HashMap::new();
    let mut written: HashMap<usize, serde_json::Value> = HashMap::new();
    for (start, objects) in builds {
        for (doc, root) in objects {
            let as_written = written
                .entry(doc)
                .or_insert_with(|| repo.docs[doc].root.to_json());
            let changed = root.to_json() != *as_written;
            variants
                .entry(doc)
                .or_default()
                .push((start, changed.then_some(root)));
        }
    }
    for (doc, trees) in variants {
        let first = trees[0].1.as_ref().map(Node::to_json);
        let alike = trees[1..]
            .iter()
            .all(|(_, t)| t.as_ref().map(Node::to_json) == first);
        if alike {
            if let Some((_, Some(root))) = trees.into_iter().next() {
                out.roots.insert(doc, root);
            }
            continue;
        }
        out.ambiguous.insert(doc);
        let as_written = || Node::clone(&repo.docs[doc].root);
        out.ambiguous_builds.insert(
            doc,
            trees
                .into_iter()
                .map(|(start, t)| (start, t.unwrap_or_else(as_written)))
                .collect(),
        );
    }
    out
}

/// A Kubernetes object: what a kustomize build transforms.
fn is_object(kind: super::DocKind) -> bool {
    is_argocd_kind(kind) || kind == super::DocKind::K8sObject
}

/// True when the build of kustomization `start` reads one of `files`.
fn reaches(ks: &Kustomizations, start: usize, files: &HashSet<FileId>) -> bool {
    let mut found = false;
    ks.walk(start, &mut |step| match step {
        Step::Entry { entry, .. } => {
            if let Reference::File(f) = entry.reference {
                found |= files.contains(&f);
            }
            if found { Flow::Skip } else { Flow::Into }
        }
        _ if found => Flow::Skip,
        _ => Flow::Into,
    });
    found
}

/// The documents of `project` with the outcome applied: patched trees and patch documents
/// classified as such.
pub(crate) fn apply_to(
    docs: &mut [Document],
    patched: Patched,
    written: &mut HashMap<usize, std::sync::Arc<Node>>,
) {
    for (i, root) in patched.roots {
        if let Some(d) = docs.get_mut(i) {
            written.insert(i, std::mem::replace(&mut d.root, std::sync::Arc::new(root)));
        }
    }
    for &i in &patched.patch_docs {
        if let Some(d) = docs.get_mut(i) {
            d.kind = super::DocKind::Other;
        }
    }
}

#[cfg(test)]
mod tests;
