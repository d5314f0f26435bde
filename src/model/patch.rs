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
use std::sync::{Mutex, PoisonError};

use rayon::prelude::*;

use super::is_argocd_kind;
use super::kustomize::build;
use super::kustomize::{Flow, Kustomizations, PatchBody, Reference, Step};
use super::{DocKind, Document, Repository};
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
    /// Objects other than Argo CD's that kustomizations build differently: the
    /// kustomizations that build each (their trees are built again when a rule judges them).
    pub varied_objects: HashMap<usize, Vec<usize>>,
    /// What kustomize rejects in each kustomization built here (nothing includes it), and the
    /// `helmCharts` it does not inflate.
    pub build_errors: HashMap<usize, Vec<build::Problem>>,
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
    // Argo CD documents keep each build's tree (the deployed pass judges each); other objects
    // keep one tree, and only while every build agrees: the builds' trees would otherwise be
    // alive at once, and a workload that overlays build differently is built again only when
    // a rule judges it (`Repository::object_variants`).
    let seen: Mutex<HashMap<usize, ObjectSeen>> = Mutex::default();
    let builds: Vec<Built> = starts
        .par_iter()
        .map(|&start| {
            // As loaded: ConfigMap and Secret payloads that loading emptied stay empty (no
            // reader kept them), so an unchanged one compares equal and nothing grows.
            let built = build::build_as_loaded_on_all_threads(repo, ks, start);
            let mut argo = Vec::new();
            for o in built.objects {
                let Some(doc) = o.doc else { continue };
                let kind = repo.docs[doc].kind;
                if is_argocd_kind(kind) {
                    argo.push((doc, o.root));
                } else if kind == DocKind::K8sObject {
                    see_object(&seen, repo, doc, start, o.root);
                }
            }
            // What the resolver reports: errors, and the charts not inflated.
            let errors = built
                .problems
                .into_iter()
                .filter(|p| p.kind == build::ProblemKind::Error || p.chart)
                .collect();
            (start, argo, errors)
        })
        .collect();
    for (doc, s) in seen.into_inner().unwrap_or_else(PoisonError::into_inner) {
        if s.agree {
            if let Some((_, root)) = s.tree {
                out.roots.insert(doc, root);
            }
        } else {
            let mut starts = s.starts;
            starts.sort_unstable();
            out.ambiguous.insert(doc);
            out.varied_objects.insert(doc, starts);
        }
    }
    // Document → each build's tree of it and that tree's fingerprint (`None`: as written).
    let mut variants: HashMap<usize, Vec<BuiltTree>> = HashMap::new();
    let mut written: HashMap<usize, u64> = HashMap::new();
    for (start, objects, errors) in builds {
        out.build_errors.insert(start, errors);
        for (doc, root) in objects {
            let as_written = *written
                .entry(doc)
                .or_insert_with(|| fingerprint(&repo.docs[doc].root));
            let fp = fingerprint(&root);
            variants
                .entry(doc)
                .or_default()
                .push((start, (fp != as_written).then_some((fp, root))));
        }
    }
    for (doc, trees) in variants {
        let first = trees[0].1.as_ref().map(|(fp, _)| *fp);
        let alike = trees[1..]
            .iter()
            .all(|(_, t)| t.as_ref().map(|(fp, _)| *fp) == first);
        if alike {
            if let Some((_, Some((_, root)))) = trees.into_iter().next() {
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
                .map(|(start, t)| (start, t.map_or_else(as_written, |(_, root)| root)))
                .collect(),
        );
    }
    out
}

/// One build's tree of an Argo CD document, with its fingerprint (`None`: as written).
type BuiltTree = (usize, Option<(u64, Node)>);

/// A kustomization's build: its Argo CD documents' trees, and what kustomize rejects.
type Built = (usize, Vec<(usize, Node)>, Vec<build::Problem>);

/// What the builds made so far of one object that is not Argo CD's.
struct ObjectSeen {
    /// Fingerprints of its tree as written and as the first build made it.
    written: u64,
    first: u64,
    /// Every build so far made the same tree.
    agree: bool,
    /// While they agree and changed it: the tree of the first kustomization (graph order)
    /// that builds it, so the spans do not depend on which thread finished first.
    tree: Option<(usize, Node)>,
    /// The kustomizations that build it.
    starts: Vec<usize>,
}

fn see_object(
    seen: &Mutex<HashMap<usize, ObjectSeen>>,
    repo: &Repository,
    doc: usize,
    start: usize,
    root: Node,
) {
    let fp = fingerprint(&root);
    let mut seen = seen.lock().unwrap_or_else(PoisonError::into_inner);
    let s = seen.entry(doc).or_insert_with(|| ObjectSeen {
        written: fingerprint(&repo.docs[doc].root),
        first: fp,
        agree: true,
        tree: None,
        starts: Vec::new(),
    });
    s.starts.push(start);
    if fp != s.first {
        s.agree = false;
        s.tree = None;
    } else if s.agree && fp != s.written && s.tree.as_ref().is_none_or(|(k, _)| start < *k) {
        s.tree = Some((start, root));
    }
}

/// A tree's value as JSON sees it, spans and key order aside, without making the JSON.
fn fingerprint(node: &Node) -> u64 {
    use crate::yaml::{Resolved, Value};
    use std::hash::{Hash, Hasher};
    let mut h = rustc_hash::FxHasher::default();
    match &node.value {
        Value::Scalar(_) => match node.resolve() {
            Some(Resolved::Null) | None => 0u8.hash(&mut h),
            Some(Resolved::Bool(b)) => (1u8, b).hash(&mut h),
            Some(Resolved::Int(i)) => (2u8, i).hash(&mut h),
            Some(Resolved::Float(f)) => (3u8, f.to_bits()).hash(&mut h),
            Some(Resolved::Str(s)) => (4u8, s).hash(&mut h),
        },
        Value::Seq(items) => {
            (5u8, items.len()).hash(&mut h);
            for i in items.iter() {
                fingerprint(i).hash(&mut h);
            }
        }
        Value::Map(entries) => {
            // JSON objects have no order: the entries' hashes are summed.
            let sum = entries.iter().fold(0u64, |acc, e| {
                let mut eh = rustc_hash::FxHasher::default();
                (fingerprint(&e.key), fingerprint(&e.value)).hash(&mut eh);
                acc.wrapping_add(eh.finish())
            });
            (6u8, entries.len(), sum).hash(&mut h);
        }
    }
    h.finish()
}

/// A Kubernetes object: what a kustomize build transforms.
fn is_object(kind: DocKind) -> bool {
    is_argocd_kind(kind) || kind == DocKind::K8sObject
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
            let as_written = std::mem::replace(&mut d.root, std::sync::Arc::new(root));
            // Argo CD documents keep their tree as written (the resolver's builds read it);
            // the other objects, many more, are parsed again when a build reads their file.
            if is_argocd_kind(d.kind) {
                written.insert(i, as_written);
            }
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
