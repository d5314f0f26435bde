//! The repository tier, below the model: the files and documents as read, their
//! classification, what a run keeps of them (`retention`, declared by their readers) and the
//! Helm values tree (YAML with spans). It knows no rule and no deployer's facts; the model
//! computes those from it.

pub mod document;
pub mod memory;
pub mod retention;
pub mod values;

pub use document::{
    DocKind, Document, Field, KUSTOMIZATION_FILE_NAMES, KeptValues, classify, is_argocd_kind,
    is_kustomization_kind, is_values_file_name,
};

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::PathBuf;

use crate::source::{FileId, SourceDb, SourceFile};
use values::Values;

/// The repository as read: every file and document, indexed by kind and by file. The model
/// builds its facts from it (kustomize's graph and patches included: see `model::Repository`).
pub struct Documents {
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
    /// Files under `root` on disk that this revision does not have (`diff`'s base made from
    /// the working tree: the files the change added): nothing looks for them there.
    pub absent: std::collections::BTreeSet<String>,
    by_kind: BTreeMap<DocKind, Vec<usize>>,
    by_file: Vec<std::ops::Range<usize>>,
    /// Indexes in [`Documents::docs`] of Argo CD documents that kustomizations deploy with
    /// different results: kept as written, though Argo CD may read something else.
    pub ambiguously_patched: HashSet<usize>,
    /// Indexes in [`Documents::docs`] of documents kustomize's transformations changed (their
    /// tree, or their kind for a patch file's documents): not as their file's parse gave them.
    pub transformed: HashSet<usize>,
    /// The trees as written of the documents whose tree kustomize's transformations replaced:
    /// what a kustomize build starts from.
    pub written: HashMap<usize, std::sync::Arc<crate::yaml::Node>>,
}

impl Documents {
    #[must_use]
    pub fn new(root: PathBuf, sources: SourceDb, mut docs: Vec<Document>) -> Self {
        docs.sort_by_key(|d| (d.file, d.index));
        let mut by_file = vec![0..0; sources.files().len()];
        for (i, d) in docs.iter().enumerate() {
            let r = &mut by_file[d.file.0 as usize];
            if r.start == r.end {
                *r = i..i + 1;
            } else {
                r.end = i + 1;
            }
        }
        let mut repository = Documents {
            root,
            sources,
            docs,
            git_origin: None,
            on_disk: false,
            absent: std::collections::BTreeSet::new(),
            by_kind: BTreeMap::new(),
            by_file,
            ambiguously_patched: HashSet::new(),
            transformed: HashSet::new(),
            written: HashMap::new(),
        };
        repository.index_kinds();
        repository
    }

    /// Indexes the documents by kind again, after a transformation changed some kinds.
    pub fn index_kinds(&mut self) {
        let mut by_kind: BTreeMap<DocKind, Vec<usize>> = BTreeMap::new();
        for (i, d) in self.docs.iter().enumerate() {
            by_kind.entry(d.kind).or_default().push(i);
        }
        self.by_kind = by_kind;
    }

    /// Indexes in [`Documents::docs`] of one file's documents.
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
    pub fn restore_trees(&mut self, files: &[FileId]) -> bool {
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

    /// Whether kustomize's transformations changed this document (see [`Documents::transformed`]).
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

    /// Whether the file at `rel` (root-relative) may be looked for on disk: the files are there
    /// and this revision has it (see [`Documents::absent`]).
    #[must_use]
    pub fn on_disk_at(&self, rel: &str) -> bool {
        self.on_disk && !self.absent.contains(rel)
    }

    #[must_use]
    pub fn file_by_path(&self, rel: &str) -> Option<&SourceFile> {
        self.sources.by_path(rel)
    }
}
