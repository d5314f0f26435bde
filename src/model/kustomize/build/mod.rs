//! `kustomize build`, in-process: the objects one kustomization gives, as kustomize v5 makes
//! them (`api/internal/target/kusttarget.go`):
//!
//! 1. resources (files, folders with a kustomization, built on their own first), then the
//!    generators (`configMapGenerator`, `secretGenerator`), then the components, each applied
//!    to what is accumulated so far;
//! 2. the transformers in kustomize's order: `patchesStrategicMerge`, `patches`, `namespace`,
//!    `namePrefix`, `nameSuffix`, labels, annotations, `patchesJson6902`, `replicas`, `images`,
//!    `replacements`;
//! 3. at the top only: generated names get their content hash, then every reference to a
//!    renamed object is renamed (`nameReference`).
//!
//! Objects are span trees: a value a patch, a generator or a transformer sets points at the
//! kustomization line that set it, the rest at the manifest that wrote it. What kustomize
//! rejects is a [`Problem`] at the line that causes it; what it would fetch (a remote base, a
//! remote chart) is not built and says so; `helmCharts` of the repository are rendered in-process
//! (`helm.rs`) when Argo CD runs kustomize with `--enable-helm`.

pub mod json6902;
pub mod schema;
pub mod select;
pub mod smp;

mod generate;
pub use generate::is_hash as is_name_hash;
mod helm;
mod names;
mod replace;
mod transform;
mod tree;

use std::sync::atomic::{AtomicUsize, Ordering};

use super::{BuildOptions, EntryField, Kustomizations, Reference};
use crate::model::Repository;
use crate::source::Span;
use crate::yaml::{Node, ScalarStyle, Value};

/// Kustomizations one build enters at most (a graph that includes a folder twice at every
/// level grows exponentially), and objects it holds at most.
const STEP_BUDGET: usize = 10_000;
const OBJECT_LIMIT: usize = 100_000;

/// Largest file a generator or patch reads from the disk.
const FILE_LIMIT: u64 = 1 << 20;

/// What `kustomize build` of one kustomization gives.
#[derive(Debug, Default)]
pub struct Build {
    pub objects: Vec<Object>,
    pub problems: Vec<Problem>,
}

impl Build {
    /// True when kustomize itself would fail this build.
    #[must_use]
    pub fn failed(&self) -> bool {
        self.problems.iter().any(|p| p.kind == ProblemKind::Error)
    }
}

/// One object of a build.
#[derive(Debug, Clone)]
pub struct Object {
    pub root: Node,
    /// The repository document it was read from; `None` for a generated object.
    pub doc: Option<usize>,
    /// Every name it had, the first as written (name references match any of them).
    pub names: Vec<String>,
    /// Its namespace as written.
    pub original_namespace: Option<String>,
    /// Made by a generator: whether its name takes the content hash.
    pub generated: Option<Generated>,
    /// Rendered from the chart in this folder by a `helmCharts` item.
    pub chart: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Generated {
    pub hash: bool,
}

impl Object {
    #[must_use]
    pub fn api_version(&self) -> &str {
        self.root.get_str("apiVersion").unwrap_or("")
    }

    #[must_use]
    pub fn kind(&self) -> &str {
        self.root.get_str("kind").unwrap_or("")
    }

    #[must_use]
    pub fn name(&self) -> &str {
        self.root
            .path(&["metadata", "name"])
            .and_then(Node::as_str)
            .unwrap_or("")
    }

    #[must_use]
    pub fn namespace(&self) -> Option<&str> {
        self.root
            .path(&["metadata", "namespace"])
            .and_then(Node::as_str)
            .filter(|n| !n.is_empty())
    }

    /// `(group, version)`.
    #[must_use]
    pub fn group_version(&self) -> (&str, &str) {
        select::split_api_version(self.api_version())
    }

    fn ident(&self) -> select::Ident<'_> {
        select::Ident {
            root: &self.root,
            original_name: self.names.first().map(String::as_str),
            original_namespace: self.original_namespace.as_deref(),
        }
    }

    /// Kustomize's id of the object: group, kind, name, namespace (none is `default` for a
    /// namespaced kind).
    fn id(&self) -> Id {
        let (group, _) = self.group_version();
        let ns = if schema::is_cluster_scoped(self.api_version(), self.kind()) {
            String::new()
        } else {
            self.namespace().unwrap_or("default").to_string()
        };
        (
            group.to_string(),
            self.kind().to_string(),
            self.name().to_string(),
            ns,
        )
    }

    fn from_tree(root: Node, doc: Option<usize>) -> Object {
        let name = root
            .path(&["metadata", "name"])
            .and_then(Node::as_str)
            .unwrap_or("")
            .to_string();
        let original_namespace = root
            .path(&["metadata", "namespace"])
            .and_then(Node::as_str)
            .map(str::to_string);
        Object {
            root,
            doc,
            names: vec![name],
            original_namespace,
            generated: None,
            chart: None,
        }
    }
}

/// Kustomize's id of an object: group, kind, name, namespace.
type Id = (String, String, String, String);

/// What kustomize rejects, or what the build did not read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub span: Span,
    pub message: String,
    pub kind: ProblemKind,
    /// An error about objects the build should hold (a patch or replacement that finds none):
    /// not said when part of the build was not built, which may hold them.
    pub on_objects: bool,
    /// About a `helmCharts` item: a chart that is not inflated (remote, or not renderable
    /// here), or that kustomize refuses.
    pub chart: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProblemKind {
    /// `kustomize build` fails.
    Error,
    /// Not built here: a remote base, a Helm chart, a plugin.
    NotRendered,
}

/// Builds kustomization `k` of the repository's graph.
#[must_use]
pub fn build(repo: &Repository, ks: &Kustomizations, k: usize) -> Build {
    build_with(repo, ks, k, true)
}

/// What kustomize rejects in kustomization `k`: a build whose ConfigMap and Secret payloads
/// may be the ones loading emptied (no error depends on them, and reading them again is most
/// of a build's cost).
#[must_use]
pub fn problems(repo: &Repository, ks: &Kustomizations, k: usize) -> Vec<Problem> {
    build_with(repo, ks, k, false).problems
}

/// Builds kustomization `k` over the trees as loaded: the ConfigMap and Secret payloads that
/// loading emptied (no reader kept them) stay empty.
#[must_use]
pub fn build_as_loaded(repo: &Repository, ks: &Kustomizations, k: usize) -> Build {
    build_with(repo, ks, k, false)
}

/// [`build_as_loaded`], with the kustomizations that one includes built on rayon's threads (a
/// folder of bases that one kustomization lists is otherwise built on one thread). Only for
/// callers that are not inside a fact's first use: a rayon thread waiting here may take
/// another task, and one that waits for that fact would never end (see
/// `model::argocd::rendered`).
#[must_use]
pub fn build_as_loaded_on_all_threads(repo: &Repository, ks: &Kustomizations, k: usize) -> Build {
    build_with_options(repo, ks, k, false, ks.options, true)
}

fn build_with(repo: &Repository, ks: &Kustomizations, k: usize, whole: bool) -> Build {
    build_with_options(repo, ks, k, whole, ks.options, false)
}

fn build_with_options(
    repo: &Repository,
    ks: &Kustomizations,
    k: usize,
    whole: bool,
    options: BuildOptions,
    parallel: bool,
) -> Build {
    let mut b = Builder {
        repo,
        ks,
        options,
        steps: STEP_BUDGET,
        problems: Vec::new(),
        whole,
        parallel,
        shared_steps: None,
        ran_out: false,
    };
    let mut objects = Vec::new();
    b.accumulate(k, &mut objects, &mut vec![k]);
    if b.problems
        .iter()
        .any(|p| p.kind == ProblemKind::NotRendered)
    {
        b.problems.retain(|p| !p.on_objects);
    }
    if !b.failed() {
        generate::add_hashes(&mut objects);
        names::fix_references(&mut objects);
        for o in &mut objects {
            stringify_annotations(&mut o.root);
        }
        // `IgnoreLocal`: objects marked local configuration feed the build, not its output.
        objects.retain(|o| {
            o.root
                .path(&[
                    "metadata",
                    "annotations",
                    "config.kubernetes.io/local-config",
                ])
                .and_then(Node::scalar_text)
                != Some("true")
        });
    }
    Build {
        objects,
        problems: b.problems,
    }
}

struct Builder<'a> {
    repo: &'a Repository,
    ks: &'a Kustomizations,
    /// The flags kustomize runs with.
    options: BuildOptions,
    steps: usize,
    problems: Vec<Problem>,
    /// Payloads loading emptied are read again (see [`problems`]).
    whole: bool,
    /// Included kustomizations are built on rayon's threads (see
    /// [`build_as_loaded_on_all_threads`]).
    parallel: bool,
    /// For a build on another thread: the steps left to all of them together, so that their
    /// work stays within one build's budget however many there are.
    shared_steps: Option<&'a AtomicUsize>,
    /// The shared steps ran out: the outcome is not the in-order one.
    ran_out: bool,
}

/// What building one included kustomization on its own gave: its objects, its problems and
/// the steps it took.
type SubBuild = (Vec<Object>, Vec<Problem>, usize);

impl Builder<'_> {
    fn failed(&self) -> bool {
        self.problems.iter().any(|p| p.kind == ProblemKind::Error)
    }

    fn error(&mut self, span: Span, message: impl Into<String>) {
        self.push(span, message.into(), ProblemKind::Error, false);
    }

    /// An error that an object the build lacks causes (see [`Problem::on_objects`]).
    fn unmatched(&mut self, span: Span, message: impl Into<String>) {
        self.push(span, message.into(), ProblemKind::Error, true);
    }

    fn not_rendered(&mut self, span: Span, message: impl Into<String>) {
        self.push(span, message.into(), ProblemKind::NotRendered, false);
    }

    /// A `helmCharts` item this build does not inflate.
    fn chart_not_rendered(&mut self, span: Span, message: impl Into<String>) {
        self.push(span, message.into(), ProblemKind::NotRendered, false);
        if let Some(p) = self.problems.last_mut() {
            p.chart = true;
        }
    }

    fn push(&mut self, span: Span, message: String, kind: ProblemKind, on_objects: bool) {
        let p = Problem {
            span,
            message,
            kind,
            on_objects,
            chart: false,
        };
        if !self.problems.contains(&p) {
            self.problems.push(p);
        }
    }

    /// Kustomization `k`'s resources, generators, components and transformers over `objects`
    /// (what the caller accumulated: empty, or the resources a component applies to).
    fn accumulate(&mut self, k: usize, objects: &mut Vec<Object>, stack: &mut Vec<usize>) {
        let shared_left = self.shared_steps.is_none_or(|left| {
            left.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok()
        });
        if !shared_left {
            self.ran_out = true;
        }
        if self.steps == 0 || !shared_left {
            let span = self.kustomization_span(k);
            self.error(
                span,
                "build too large: kustomizations entered past the limit",
            );
            return;
        }
        self.steps -= 1;
        let node = self.ks.node(k);
        let tree = node.doc.map(|d| self.repo.docs[d].root.clone());
        // The ids of what is accumulated, kept as resources are added (a kustomization may
        // list thousands of files).
        let mut ids: rustc_hash::FxHashSet<Id> = objects.iter().map(Object::id).collect();
        match &tree {
            None => {
                let span = self.kustomization_span(k);
                self.error(span, "the kustomization is empty");
            }
            Some(t) => self.check_fields(t),
        }
        let mut built = self.build_included(k, stack);
        for (i, entry) in node.entries.iter().enumerate() {
            if entry.field == EntryField::Components {
                continue;
            }
            if let Some((sub, problems, steps)) = built.get_mut(&i).map(std::mem::take) {
                self.steps -= steps;
                for p in problems {
                    if !self.problems.contains(&p) {
                        self.problems.push(p);
                    }
                }
                self.absorb(objects, &mut ids, sub, entry.span);
                continue;
            }
            match &entry.reference {
                Reference::File(_) if !self.may_load(&node.dir, &entry.raw) => {
                    self.error(entry.span, outside_message(&entry.raw, &node.dir));
                }
                Reference::File(f) => {
                    let loaded = self.load_file(*f, entry.span);
                    self.absorb(objects, &mut ids, loaded, entry.span);
                }
                Reference::Kustomization(n) => {
                    if stack.contains(n) {
                        self.error(entry.span, format!("cycle detected: `{}`", entry.raw));
                        continue;
                    }
                    if self.is_component(*n) {
                        self.error(
                            entry.span,
                            format!("`{}` is a Component: list it under `components`", entry.raw),
                        );
                        continue;
                    }
                    let mut sub = Vec::new();
                    stack.push(*n);
                    self.accumulate(*n, &mut sub, stack);
                    stack.pop();
                    self.absorb(objects, &mut ids, sub, entry.span);
                }
                Reference::Remote => self.not_rendered(
                    entry.span,
                    format!("remote resource `{}` is not fetched", entry.raw),
                ),
                Reference::OutsideRoot => self.error(
                    entry.span,
                    format!("`{}` is outside the repository", entry.raw),
                ),
                Reference::Other(path) => {
                    self.error(entry.span, format!("resource `{path}` not found"));
                }
            }
        }
        if let Some(tree) = &tree {
            generate::run(self, k, tree, objects);
            // Charts come after the generators, added as resources are.
            let charts = helm::run(self, k, tree);
            if !charts.is_empty() {
                ids = objects.iter().map(Object::id).collect();
            }
            for (span, rendered) in charts {
                self.absorb(objects, &mut ids, rendered, span);
            }
        }
        for entry in node
            .entries
            .iter()
            .filter(|e| e.field == EntryField::Components)
        {
            match &entry.reference {
                Reference::Kustomization(n) if !self.is_component(*n) => self.error(
                    entry.span,
                    format!("`{}` is not a Component (`kind: Component`)", entry.raw),
                ),
                Reference::Kustomization(n) if !stack.contains(n) => {
                    stack.push(*n);
                    self.accumulate(*n, objects, stack);
                    stack.pop();
                }
                Reference::Kustomization(_) => {
                    self.error(entry.span, format!("cycle detected: `{}`", entry.raw));
                }
                Reference::Remote => self.not_rendered(
                    entry.span,
                    format!("remote component `{}` is not fetched", entry.raw),
                ),
                _ => self.error(entry.span, format!("component `{}` not found", entry.raw)),
            }
        }
        if let Some(tree) = &tree {
            transform::run(self, k, tree, objects);
            // `replacements` run last, after every builtin transformer.
            if let Some(list) = tree.get("replacements") {
                replace::run(self, k, list, objects);
            }
        }
    }

    /// The kustomizations that `k`'s resources include, each built on its own on rayon's
    /// threads, by entry index; empty unless the builder is parallel and there are several.
    /// The outcome is the one an in-order build gives: problems are merged in entry order by
    /// the caller, and when the included builds together take more steps than are left (an
    /// in-order build would stop part-way), none is kept and the caller builds in order.
    fn build_included(&self, k: usize, stack: &[usize]) -> rustc_hash::FxHashMap<usize, SubBuild> {
        use rayon::prelude::*;
        let mut out = rustc_hash::FxHashMap::default();
        if !self.parallel {
            return out;
        }
        let included: Vec<(usize, usize)> = self
            .ks
            .node(k)
            .entries
            .iter()
            .enumerate()
            .filter(|(_, e)| e.field != EntryField::Components)
            .filter_map(|(i, e)| match e.reference {
                Reference::Kustomization(n) if !stack.contains(&n) && !self.is_component(n) => {
                    Some((i, n))
                }
                _ => None,
            })
            .collect();
        if included.len() < 2 {
            return out;
        }
        // Every build on another thread, however deep, takes its steps from one count, so that
        // together they stay within one build's budget.
        let own = AtomicUsize::new(self.steps);
        let left = self.shared_steps.unwrap_or(&own);
        let built: Vec<(usize, SubBuild, bool)> = included
            .par_iter()
            .map(|&(i, n)| {
                let mut b = Builder {
                    repo: self.repo,
                    ks: self.ks,
                    options: self.options,
                    steps: self.steps,
                    problems: Vec::new(),
                    whole: self.whole,
                    parallel: true,
                    shared_steps: Some(left),
                    ran_out: false,
                };
                let mut chain = stack.to_vec();
                chain.push(n);
                let mut objects = Vec::new();
                b.accumulate(n, &mut objects, &mut chain);
                (i, (objects, b.problems, self.steps - b.steps), b.ran_out)
            })
            .collect();
        let steps: usize = built.iter().map(|(_, b, _)| b.2).sum();
        if steps <= self.steps && !built.iter().any(|b| b.2) {
            out.extend(built.into_iter().map(|(i, b, _)| (i, b)));
        }
        out
    }

    /// kustomize refuses a kustomization with a field it does not know, and a `patches` item
    /// with both `path` and `patch`.
    fn check_fields(&mut self, tree: &Node) {
        for e in tree.entries() {
            if let Some(key) = e
                .key
                .scalar_text()
                .filter(|k| !KUSTOMIZATION_FIELDS.contains(k))
            {
                self.error(
                    e.key.span,
                    format!("unknown field `{key}` in the kustomization"),
                );
            }
        }
        for p in tree.get("patches").into_iter().flat_map(Node::items) {
            if p.get("path").is_some() && p.get("patch").is_some() {
                self.error(p.span, "a patch takes `path` or `patch`, not both");
            }
        }
    }

    /// A generator's or patch's source file, relative to the kustomization's folder, inside the repository.
    fn read(&mut self, dir: &str, path: &str, at: Span) -> Option<String> {
        if !self.may_load(dir, path) {
            self.error(at, outside_message(path, dir));
            return None;
        }
        let Some(rel) = crate::model::paths::join(dir, path) else {
            self.error(at, format!("`{path}` is outside the repository"));
            return None;
        };
        if let Some(f) = self.repo.file_by_path(&rel) {
            return Some(f.text().to_string());
        }
        let abs = self.repo.root.join(&rel);
        if self.repo.on_disk_at(&rel) && abs.symlink_metadata().is_ok() {
            let root = crate::source::fs::Root::new(&self.repo.root);
            match root.read_text(&abs, crate::source::fs::Reach::Root, FILE_LIMIT) {
                Ok(text) => return Some(text),
                Err(e) => {
                    self.error(at, format!("cannot read `{path}`: {}", e.reason));
                    return None;
                }
            }
        }
        self.error(at, format!("`{path}` does not exist in this repository"));
        None
    }

    fn is_component(&self, k: usize) -> bool {
        let node = self.ks.node(k);
        node.doc
            .is_some_and(|d| self.repo.docs[d].root.get_str("kind") == Some("Component"))
    }

    fn kustomization_span(&self, k: usize) -> Span {
        let node = self.ks.node(k);
        node.doc
            .map_or_else(|| Span::new(node.file, 0, 0), |d| self.repo.docs[d].span)
    }

    /// A file's objects, as written (before any patch the model applied to Argo CD kinds).
    fn load_file(&mut self, file: crate::source::FileId, at: Span) -> Vec<Object> {
        let range = self.repo.file_doc_range(file);
        let mut out = Vec::new();
        let documents = self.repo.documents();
        // Payloads loading dropped are read again as written, and so are the objects whose
        // tree the model replaced with kustomize's build without keeping the written one.
        let reread_payloads = self.whole
            && range.clone().any(|i| {
                let doc = &self.repo.docs[i];
                matches!(doc.root.get_str("kind"), Some("ConfigMap" | "Secret"))
                    && doc.root.descendants().any(Node::dropped)
            });
        let rebuilt =
            |i: usize| documents.transformed.contains(&i) && !documents.written.contains_key(&i);
        let reparsed = (reread_payloads || range.clone().any(rebuilt))
            .then(|| crate::yaml::parse(file, self.repo.source(file).text()).docs);
        for i in range {
            let doc = &self.repo.docs[i];
            let root: Node = match (&reparsed, documents.written.get(&i)) {
                // Argo CD documents the model patched: as written.
                (_, Some(written)) => (**written).clone(),
                (Some(docs), None) if reread_payloads || rebuilt(i) => {
                    match docs.iter().find(|d| d.index == doc.index) {
                        Some(d) => d.root.clone(),
                        None => continue,
                    }
                }
                _ => (*self.repo.tree(doc)).clone(),
            };
            if root.is_null() || root.as_map().is_some_and(<[_]>::is_empty) {
                continue;
            }
            if root.as_map().is_none() {
                self.error(at, "a resource must be a mapping");
                continue;
            }
            if root
                .path(&["metadata", "name"])
                .and_then(Node::scalar_text)
                .is_none_or(str::is_empty)
                && root.get_str("kind") != Some("List")
            {
                self.error(at, "a resource needs `metadata.name`");
                continue;
            }
            if root.get_str("kind") == Some("List") {
                for item in root.get("items").map(Node::items).into_iter().flatten() {
                    out.push(Object::from_tree(item.clone(), Some(i)));
                }
                continue;
            }
            out.push(Object::from_tree(root, Some(i)));
        }
        out
    }

    /// Adds `new` to `objects`; an id already there is kustomize's "already registered id".
    fn absorb(
        &mut self,
        objects: &mut Vec<Object>,
        ids: &mut rustc_hash::FxHashSet<Id>,
        new: Vec<Object>,
        at: Span,
    ) {
        for o in new {
            if objects.len() >= OBJECT_LIMIT {
                self.error(at, "build too large: objects past the limit");
                return;
            }
            if !ids.insert(o.id()) {
                self.error(
                    at,
                    format!(
                        "may not add resource with an already registered id: {} `{}`",
                        o.kind(),
                        o.name()
                    ),
                );
                continue;
            }
            objects.push(o);
        }
    }
}

/// kustomize's load restrictor: a file it reads must be in or below the kustomization's folder
/// (a folder of another kustomization may be anywhere in the repository), unless Argo CD runs
/// kustomize without it.
impl Builder<'_> {
    fn may_load(&self, dir: &str, raw: &str) -> bool {
        self.options.unrestricted_loads || below(dir, raw)
    }
}

pub(crate) fn below(dir: &str, raw: &str) -> bool {
    match crate::model::paths::join(dir, raw) {
        Some(joined) => dir.is_empty() || joined.starts_with(&format!("{dir}/")),
        None => false,
    }
}

pub(crate) fn outside_message(raw: &str, dir: &str) -> String {
    let dir = if dir.is_empty() { "." } else { dir };
    format!(
        "`{raw}` is not in or below `{dir}`: kustomize refuses files outside the kustomization's folder"
    )
}

/// The fields of kustomize's `Kustomization` and `Component` (`api/types/kustomization.go`).
const KUSTOMIZATION_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "openapi",
    "namePrefix",
    "nameSuffix",
    "namespace",
    "commonLabels",
    "labels",
    "commonAnnotations",
    "patchesStrategicMerge",
    "patchesJson6902",
    "patches",
    "images",
    "imageTags",
    "replacements",
    "replicas",
    "vars",
    "sortOptions",
    "resources",
    "components",
    "crds",
    "bases",
    "configMapGenerator",
    "secretGenerator",
    "helmGlobals",
    "helmCharts",
    "helmChartInflationGenerator",
    "generatorOptions",
    "configurations",
    "generators",
    "transformers",
    "validators",
    "buildMetadata",
];

/// Annotations are strings once kustomize writes the object: it sets and removes its own
/// internal annotations on every object, which rewrites the mapping as strings (labels keep
/// their types).
fn stringify_annotations(root: &mut Node) {
    let Value::Map(entries) = &mut root.value else {
        return;
    };
    for e in entries.iter_mut() {
        if e.key.scalar_text() != Some("metadata") {
            continue;
        }
        let Value::Map(meta) = &mut e.value.value else {
            continue;
        };
        // An empty or null `annotations` is not written.
        crate::yaml::edit_items(meta, |meta| {
            meta.retain(|m| {
                m.key.scalar_text() != Some("annotations")
                    || !(m.value.is_null() || m.value.as_map().is_some_and(<[_]>::is_empty))
            });
        });
        for m in meta.iter_mut() {
            if m.key.scalar_text() != Some("annotations") {
                continue;
            }
            let Value::Map(pairs) = &mut m.value.value else {
                continue;
            };
            for p in pairs.iter_mut() {
                if let Some(text) = p.value.scalar_text().map(str::to_string) {
                    if !p.value.is_null() {
                        p.value = string(&text, p.value.span);
                    }
                }
            }
        }
    }
}

/// A plain scalar (a quoted one when empty or when YAML would read it as another type) at
/// `span`.
pub(crate) fn string(text: &str, span: Span) -> Node {
    let plain = Node::scalar(span, text.into(), ScalarStyle::Plain);
    let is_str = matches!(plain.resolve(), Some(crate::yaml::scalar::Resolved::Str(_)));
    let style = if text.is_empty() || !is_str {
        ScalarStyle::DoubleQuoted
    } else {
        ScalarStyle::Plain
    };
    Node::scalar(span, text.into(), style)
}

/// An empty mapping at `span`.
pub(crate) fn map(span: Span) -> Node {
    Node::new(span, Value::Map(Box::default()))
}

/// Builds the kustomization of folder `dir` (`""`: the root) of the repository, as
/// `kustomize build dir` would; `None` when the folder has none.
#[must_use]
pub fn build_folder(repo: &Repository, dir: &str) -> Option<Build> {
    let k = repo.kustomize.in_dir(dir)?;
    Some(build(repo, &repo.kustomize, k))
}

/// [`build_folder`] with other flags than those the repository sets for Argo CD (what
/// `kubectl kustomize --enable-helm` builds, say).
#[must_use]
pub fn build_folder_with(repo: &Repository, dir: &str, options: BuildOptions) -> Option<Build> {
    let k = repo.kustomize.in_dir(dir)?;
    Some(build_with_options(
        repo,
        &repo.kustomize,
        k,
        true,
        options,
        false,
    ))
}
