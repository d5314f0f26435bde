//! Kustomize's transformations applied to Argo CD objects, in-process: strategic merge and
//! JSON 6902 patches (inline or from files, with `target` selectors), `namespace`,
//! `namePrefix` and `nameSuffix`, through nested overlays and components in kustomize's
//! order. The result is a tree of our own nodes: a value a patch sets keeps the patch's span,
//! the rest keep their own, so a finding on a patched value points at the patch line.
//!
//! Only `Application`, `ApplicationSet` and `AppProject` objects are transformed (the rules
//! read no other patched object); `replacements`, labels and annotations transformers are not
//! applied. A document that several kustomizations deploy with different results keeps its
//! text as written: the model holds one tree per document.

use std::collections::{HashMap, HashSet};

use super::is_argocd_kind;
use super::kustomize::build::{json6902, select, smp};
use super::kustomize::{
    EntryField, Kustomization, Kustomizations, Patch, PatchBody, PatchField, PatchKind, Reference,
};
use super::{Document, Repository};
use crate::source::Span;
use crate::yaml::{Entry, Node, ScalarStyle, Value, edit_items};

/// Kustomizations entered at most per build (overlay stacks are shallow; this bounds a
/// repository of many overlays sharing deep bases).
const DEPTH_LIMIT: usize = 32;

/// Kustomizations entered and objects held at most by one build: a graph that includes a
/// folder twice at every level would otherwise grow exponentially.
const STEP_BUDGET: usize = 100_000;
const OBJECT_LIMIT: usize = 100_000;

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
    /// The top-level kustomizations (graph nodes) that build each ambiguous document.
    pub ambiguous_builds: HashMap<usize, Vec<usize>>,
}

/// One object of a build: a document and its current tree.
#[derive(Clone)]
struct Obj {
    doc: usize,
    root: Node,
    /// The name before any prefix or suffix (kustomize matches patches on either).
    original_name: Option<String>,
    /// The namespace before any `namespace:` transformer.
    original_namespace: Option<String>,
    changed: bool,
}

impl Obj {
    fn ident(&self) -> select::Ident<'_> {
        select::Ident {
            root: &self.root,
            original_name: self.original_name.as_deref(),
            original_namespace: self.original_namespace.as_deref(),
        }
    }
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
    // Nothing to do unless some kustomization transforms something.
    if !nodes.iter().any(transforms) {
        return out;
    }
    let builder = Builder {
        repo,
        ks,
        memo: std::cell::RefCell::new(HashMap::new()),
        steps: std::cell::Cell::new(STEP_BUDGET),
    };
    // Document → the trees the builds of top-level kustomizations give it (`None`: unchanged).
    let mut variants: HashMap<usize, Vec<Option<Node>>> = HashMap::new();
    let mut starts: HashMap<usize, Vec<usize>> = HashMap::new();
    for (start, _) in included.iter().enumerate().filter(|(_, inc)| !**inc) {
        for obj in builder.build(start, &mut Vec::new()) {
            starts.entry(obj.doc).or_default().push(start);
            variants
                .entry(obj.doc)
                .or_default()
                .push(obj.changed.then_some(obj.root));
        }
    }
    for (doc, trees) in variants {
        let Some(Some(first)) = trees.first() else {
            if trees.iter().any(Option::is_some) {
                out.ambiguous.insert(doc);
                out.ambiguous_builds
                    .insert(doc, starts.remove(&doc).unwrap_or_default());
            }
            continue;
        };
        let json = first.to_json();
        let alike = trees[1..]
            .iter()
            .all(|t| t.as_ref().is_some_and(|t| t.to_json() == json));
        if alike {
            out.roots.insert(doc, first.clone());
        } else {
            out.ambiguous.insert(doc);
            out.ambiguous_builds
                .insert(doc, starts.remove(&doc).unwrap_or_default());
        }
    }
    out
}

/// True when a kustomization may change an object.
fn transforms(k: &Kustomization) -> bool {
    !k.patches.is_empty()
        || k.namespace.is_some()
        || k.name_prefix.is_some()
        || k.name_suffix.is_some()
        || k.entries.iter().any(|e| e.field == EntryField::Components)
}

struct Builder<'a> {
    repo: &'a Repository,
    ks: &'a Kustomizations,
    /// Kustomization → the objects its build gives.
    memo: std::cell::RefCell<HashMap<usize, Vec<Obj>>>,
    /// Kustomizations this run may still enter.
    steps: std::cell::Cell<usize>,
}

impl Builder<'_> {
    /// The Argo CD objects `kustomize build` of kustomization `k` gives.
    fn build(&self, k: usize, stack: &mut Vec<usize>) -> Vec<Obj> {
        if let Some(done) = self.memo.borrow().get(&k) {
            return done.clone();
        }
        let mut objs = Vec::new();
        self.accumulate(k, &mut objs, stack);
        self.memo.borrow_mut().insert(k, objs.clone());
        objs
    }

    /// Adds what kustomization `k` lists to `objs`, then applies its components and its own
    /// transformations to all of them (a component transforms what its parent accumulated).
    fn accumulate(&self, k: usize, objs: &mut Vec<Obj>, stack: &mut Vec<usize>) {
        if stack.contains(&k) || stack.len() >= DEPTH_LIMIT || self.steps.get() == 0 {
            return;
        }
        self.steps.set(self.steps.get() - 1);
        stack.push(k);
        let node = self.ks.node(k);
        for e in node
            .entries
            .iter()
            .filter(|e| e.field != EntryField::Components)
        {
            match e.reference {
                Reference::File(f) => {
                    for i in self.repo.file_doc_range(f) {
                        let d = &self.repo.docs[i];
                        if is_argocd_kind(d.kind) && objs.len() < OBJECT_LIMIT {
                            objs.push(Obj {
                                doc: i,
                                root: Node::clone(&d.root),
                                original_name: d.name().map(str::to_string),
                                original_namespace: d.namespace().map(str::to_string),
                                changed: false,
                            });
                        }
                    }
                }
                Reference::Kustomization(n) if !stack.contains(&n) => {
                    let sub = self.build(n, stack);
                    let room = OBJECT_LIMIT.saturating_sub(objs.len());
                    objs.extend(sub.into_iter().take(room));
                }
                _ => {}
            }
        }
        for e in node
            .entries
            .iter()
            .filter(|e| e.field == EntryField::Components)
        {
            if let Reference::Kustomization(n) = e.reference {
                self.accumulate(n, objs, stack);
            }
        }
        self.transform(node, objs);
        stack.pop();
    }

    /// Kustomize's order: strategic merge and `patches`, `namespace`, `namePrefix` and
    /// `nameSuffix`, then `patchesJson6902`.
    fn transform(&self, k: &Kustomization, objs: &mut [Obj]) {
        if objs.is_empty() {
            return;
        }
        for p in k
            .patches
            .iter()
            .filter(|p| p.field != PatchField::PatchesJson6902)
        {
            self.apply_patch(p, objs);
        }
        if let Some(ns) = &k.namespace {
            for o in objs.iter_mut() {
                let node = scalar(&ns.value, ns.span);
                if set_metadata(&mut o.root, "namespace", node, ns.span) {
                    o.changed = true;
                }
            }
        }
        if k.name_prefix.is_some() || k.name_suffix.is_some() {
            let prefix = k.name_prefix.as_ref().map_or("", |f| f.value.as_str());
            let suffix = k.name_suffix.as_ref().map_or("", |f| f.value.as_str());
            for o in objs.iter_mut() {
                let Some(name_node) = o.root.path(&["metadata", "name"]) else {
                    continue;
                };
                let Some(name) = name_node.as_str() else {
                    continue;
                };
                let renamed = scalar(&format!("{prefix}{name}{suffix}"), name_node.span);
                let span = name_node.span;
                if set_metadata(&mut o.root, "name", renamed, span) {
                    o.changed = true;
                }
            }
        }
        for p in k
            .patches
            .iter()
            .filter(|p| p.field == PatchField::PatchesJson6902)
        {
            self.apply_patch(p, objs);
        }
    }

    fn apply_patch(&self, p: &Patch, objs: &mut [Obj]) {
        let file_docs = |f| self.repo.file_docs(f);
        let docs: Vec<&Node> = p.docs(&file_docs);
        let patterns = p
            .target
            .as_ref()
            .map(select::Patterns::of)
            .unwrap_or_default();
        match p.kind {
            PatchKind::StrategicMerge => {
                for d in docs.into_iter().filter(|d| d.as_map().is_some()) {
                    for o in objs.iter_mut() {
                        let hit = match &p.target {
                            Some(t) => select::selects(t, &patterns, &o.ident()),
                            None => select::patch_names(d, &o.ident()),
                        };
                        if !hit {
                            continue;
                        }
                        let merged = smp::merge(&o.root, &select::without_identity(d), None);
                        if let Some(merged) = merged {
                            o.root = merged;
                            o.changed = true;
                        }
                    }
                }
            }
            PatchKind::Json6902 => {
                let (Some(target), Some(ops)) = (&p.target, docs.first()) else {
                    return;
                };
                let Some(ops) = ops.as_seq() else { return };
                for o in objs
                    .iter_mut()
                    .filter(|o| select::selects(target, &patterns, &o.ident()))
                {
                    let mut root = o.root.clone();
                    if json6902::apply(&mut root, ops).is_some() {
                        o.root = root;
                        o.changed = true;
                    }
                }
            }
        }
    }
}

/// A plain scalar at `span`.
fn scalar(text: &str, span: Span) -> Node {
    let style = if text.is_empty() {
        ScalarStyle::DoubleQuoted
    } else {
        ScalarStyle::Plain
    };
    Node::scalar(span, text.into(), style)
}

/// Sets `metadata.<key>`; false when it already has that value.
fn set_metadata(root: &mut Node, key: &str, value: Node, key_span: Span) -> bool {
    let Value::Map(entries) = &mut root.value else {
        return false;
    };
    let meta = match entries
        .iter()
        .rposition(|e| e.key.scalar_text() == Some("metadata"))
    {
        Some(i) => &mut entries[i].value,
        None => {
            edit_items(entries, |entries| {
                entries.push(Entry::new(
                    scalar("metadata", key_span),
                    Node::new(key_span, Value::Map(Box::default())),
                ));
            });
            let last = entries.len() - 1;
            &mut entries[last].value
        }
    };
    if meta.is_null() {
        meta.value = Value::Map(Box::default());
    }
    let Value::Map(meta) = &mut meta.value else {
        return false;
    };
    match meta.iter().rposition(|e| e.key.scalar_text() == Some(key)) {
        Some(i) if meta[i].value.scalar_text() == value.scalar_text() => false,
        Some(i) => {
            meta[i].value = value;
            true
        }
        None => {
            edit_items(meta, |meta| {
                meta.push(Entry::new(scalar(key, key_span), value))
            });
            true
        }
    }
}

/// The documents of `project` with the outcome applied: patched trees and patch documents
/// classified as such.
pub(crate) fn apply_to(docs: &mut [Document], patched: Patched) {
    for (i, root) in patched.roots {
        if let Some(d) = docs.get_mut(i) {
            d.root = std::sync::Arc::new(root);
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
