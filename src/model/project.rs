//! The repository as read: every file and document, indexed by kind and by file. The facts
//! computed from it live in [`super::Model`].

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::helm::values::Values;
use super::{DocKind, Document, KeptValues};
use crate::source::{FileId, SourceDb, SourceFile};

pub struct Project {
    /// Absolute repository root.
    pub root: PathBuf,
    pub sources: SourceDb,
    /// All documents, ordered by file then index.
    pub docs: Vec<Document>,
    /// The `url` of the root's git `origin` remote, if it has one.
    pub git_origin: Option<String>,
    /// True when the files are on disk under `root` (false for in-memory checks): the
    /// resolver may then look for files that were not discovered (non-YAML, excluded).
    pub on_disk: bool,
    by_kind: BTreeMap<DocKind, Vec<usize>>,
    by_file: Vec<std::ops::Range<usize>>,
    /// The kustomization graph, read once here to apply kustomize's transformations to the
    /// Argo CD documents (see [`super::patch`]); [`super::Model::kustomize`] returns it.
    pub(crate) kustomize: super::kustomize::Kustomizations,
    /// Indexes in [`Project::docs`] of Argo CD documents that kustomizations deploy with
    /// different results: kept as written, though Argo CD may read something else.
    pub ambiguously_patched: std::collections::HashSet<usize>,
    /// Indexes in [`Project::docs`] of documents kustomize's transformations changed (their
    /// tree, or their kind for a patch file's documents): not as their file's parse gave them.
    pub transformed: std::collections::HashSet<usize>,
}

impl Project {
    #[must_use]
    pub fn new(root: PathBuf, sources: SourceDb, mut docs: Vec<Document>) -> Self {
        docs.sort_by_key(|d| (d.file, d.index));
        let mut by_kind: BTreeMap<DocKind, Vec<usize>> = BTreeMap::new();
        let mut by_file = vec![0..0; sources.files().len()];
        for (i, d) in docs.iter().enumerate() {
            by_kind.entry(d.kind).or_default().push(i);
            let r = &mut by_file[d.file.0 as usize];
            if r.start == r.end {
                *r = i..i + 1;
            } else {
                r.end = i + 1;
            }
        }
        let mut project = Project {
            root,
            sources,
            docs,
            git_origin: None,
            on_disk: false,
            by_kind,
            by_file,
            kustomize: super::kustomize::Kustomizations::default(),
            ambiguously_patched: std::collections::HashSet::new(),
            transformed: std::collections::HashSet::new(),
        };
        project.kustomize = super::kustomize::build(&project);
        // Kustomize reads the files it references as manifests or patches: a values-named
        // one among them gets its tree back (see `Document::kept`).
        if project.restore_trees(&project.kustomize.referenced_files()) {
            project.kustomize = super::kustomize::build(&project);
        }
        // Argo CD documents are what kustomize makes of them: every rule, the resolver and
        // the Rego view read the patched trees.
        let mut patched = super::patch::apply(&project, &project.kustomize);
        project.ambiguously_patched = std::mem::take(&mut patched.ambiguous);
        project.transformed = patched
            .roots
            .keys()
            .chain(&patched.patch_docs)
            .copied()
            .collect();
        if !patched.roots.is_empty() || !patched.patch_docs.is_empty() {
            super::patch::apply_to(&mut project.docs, patched);
            let mut by_kind: BTreeMap<DocKind, Vec<usize>> = BTreeMap::new();
            for (i, d) in project.docs.iter().enumerate() {
                by_kind.entry(d.kind).or_default().push(i);
            }
            project.by_kind = by_kind;
        }
        project
    }

    /// Indexes in [`Project::docs`] of one file's documents.
    #[must_use]
    pub fn file_doc_range(&self, file: FileId) -> std::ops::Range<usize> {
        self.by_file.get(file.0 as usize).cloned().unwrap_or(0..0)
    }

    /// Documents of one kind, in file order.
    pub fn docs_of(&self, kind: DocKind) -> impl Iterator<Item = &Document> {
        self.by_kind
            .get(&kind)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|&i| &self.docs[i])
    }

    /// A document's tree. A Helm values document may be loaded without one (its `root` an
    /// empty map, see [`Document::kept`]); its tree is parsed again from its file for the few
    /// readers that need one (a fingerprint, a key's span, `argocd/schema`'s checks).
    #[must_use]
    pub fn tree(&self, doc: &Document) -> std::sync::Arc<crate::yaml::Node> {
        if doc.kept.is_none() {
            return doc.root.clone();
        }
        crate::yaml::parse(doc.file, self.source(doc.file).text())
            .docs
            .into_iter()
            .find(|d| d.index == doc.index)
            .map_or_else(|| doc.root.clone(), |d| std::sync::Arc::new(d.root))
    }

    /// The document as Helm values: kept while loaded, made from its tree otherwise, or (for
    /// one loaded as image tags only) from its tree parsed again.
    #[must_use]
    pub fn helm_values(&self, doc: &Document) -> Values {
        match &doc.kept {
            Some(KeptValues::Values(v)) => v.clone(),
            Some(KeptValues::ImageTags(_)) => Values::from_node(&self.tree(doc), None),
            None => Values::from_node(&doc.root, None),
        }
    }

    /// Gives the documents of `files` that were loaded as values only their trees back; true
    /// when there was one.
    fn restore_trees(&mut self, files: &[FileId]) -> bool {
        let mut restored = false;
        for f in files {
            for i in self.file_doc_range(*f) {
                if self.docs[i].kept.is_some() {
                    self.docs[i].root = self.tree(&self.docs[i]);
                    self.docs[i].kept = None;
                    restored = true;
                }
            }
        }
        restored
    }

    /// Whether kustomize's transformations changed this document (see [`Project::transformed`]).
    #[must_use]
    pub fn is_transformed(&self, doc: &Document) -> bool {
        !self.transformed.is_empty()
            && self
                .file_doc_range(doc.file)
                .any(|i| self.docs[i].index == doc.index && self.transformed.contains(&i))
    }

    /// Documents of one file.
    #[must_use]
    pub fn file_docs(&self, file: FileId) -> &[Document] {
        self.by_file
            .get(file.0 as usize)
            .map_or(&[][..], |r| &self.docs[r.clone()])
    }

    #[must_use]
    pub fn source(&self, file: FileId) -> &SourceFile {
        self.sources.get(file)
    }

    #[must_use]
    pub fn file_by_path(&self, rel: &str) -> Option<&SourceFile> {
        self.sources.by_path(rel)
    }
}
