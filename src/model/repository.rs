//! The repository with kustomize applied: the kustomization graph, read once, and the
//! objects as kustomize builds them (see [`super::patch`]), with each overlay's build of one
//! that overlays build differently. The documents themselves are [`Documents`], below the
//! model.

use std::path::PathBuf;

use crate::repo::{Document, Documents};
use crate::source::SourceDb;

pub struct Repository {
    documents: Documents,
    /// The kustomization graph, read once here to apply kustomize's transformations to the
    /// objects (see [`super::patch`]); [`super::Model::kustomize`] returns it.
    pub(crate) kustomize: super::kustomize::Kustomizations,
    /// The builds of the documents that overlays build differently (a base patched
    /// per environment): each is judged as its overlay builds it, the written one not at all.
    variants: Vec<Variant>,
    /// The other objects that overlays build differently, each with the kustomizations that
    /// build it, in document order: built again when a rule judges them
    /// ([`super::deployed::object_variants`]).
    object_variants: Vec<(usize, Vec<usize>)>,
    /// Argo CD documents of patch files: a patch, not an object (their kind is `Other`).
    patch_docs: std::collections::HashSet<usize>,
    /// What kustomize rejects in each kustomization the model built (those nothing includes).
    build_errors: std::collections::HashMap<usize, Vec<super::kustomize::build::Problem>>,
}

/// One overlay's build of a written document that overlays build differently.
#[derive(Debug)]
pub struct Variant {
    /// The written document.
    pub doc: usize,
    /// The top-level kustomization (graph node) that builds it so.
    pub kustomization: usize,
    pub root: crate::yaml::Node,
}

impl std::ops::Deref for Repository {
    type Target = Documents;
    fn deref(&self) -> &Documents {
        &self.documents
    }
}

impl std::ops::DerefMut for Repository {
    fn deref_mut(&mut self) -> &mut Documents {
        &mut self.documents
    }
}

impl Repository {
    #[must_use]
    pub fn new(root: PathBuf, sources: SourceDb, docs: Vec<Document>) -> Self {
        Self::from_documents(Documents::new(root, sources, docs))
    }

    /// [`Repository::new`] for the files of a folder on disk: kustomize reads the files
    /// the walk does not list (generators' `envs` and `files`) from there.
    #[must_use]
    pub fn read_from_disk(root: PathBuf, sources: SourceDb, docs: Vec<Document>) -> Self {
        let mut documents = Documents::new(root, sources, docs);
        documents.on_disk = true;
        Self::from_documents(documents)
    }

    /// [`Repository::read_from_disk`] for a revision whose files are on disk but for
    /// `absent`, which the disk has and the revision does not (`diff`'s base made from the
    /// working tree).
    #[must_use]
    pub fn read_from_disk_without(
        root: PathBuf,
        sources: SourceDb,
        docs: Vec<Document>,
        absent: std::collections::BTreeSet<String>,
    ) -> Self {
        let mut documents = Documents::new(root, sources, docs);
        documents.on_disk = true;
        documents.absent = absent;
        Self::from_documents(documents)
    }

    /// In-memory files `(relative path, text)` as one repository (see [`crate::repo::memory`]).
    #[must_use]
    pub fn in_memory(files: &[(&str, &str)]) -> Self {
        Self::from_documents(crate::repo::memory::documents(
            files,
            PathBuf::from("."),
            false,
        ))
    }

    /// Files `(relative path, text)` written under a new temporary folder, as one repository
    /// on disk (the resolver then looks at the folder too); non-YAML files are not parsed, as
    /// discovery does not list them.
    #[cfg(test)]
    pub(crate) fn on_disk(files: &[(&str, &str)]) -> (tempfile::TempDir, Self) {
        let dir = tempfile::tempdir().expect("a temporary folder");
        for (rel, text) in files {
            let abs = dir.path().join(rel);
            std::fs::create_dir_all(abs.parent().expect("a file under the folder"))
                .expect("the file's folder");
            std::fs::write(&abs, text).expect("the file");
        }
        let listed: Vec<(&str, &str)> = files
            .iter()
            .copied()
            .filter(|(rel, _)| {
                rel.ends_with(".yaml") || rel.ends_with(".yml") || rel.contains("templates/")
            })
            .collect();
        let documents = crate::repo::memory::documents(&listed, dir.path().to_path_buf(), true);
        (dir, Self::from_documents(documents))
    }

    /// The documents with kustomize applied.
    #[must_use]
    pub fn from_documents(documents: Documents) -> Self {
        let mut repo = Repository {
            documents,
            kustomize: super::kustomize::Kustomizations::default(),
            variants: Vec::new(),
            object_variants: Vec::new(),
            patch_docs: std::collections::HashSet::new(),
            build_errors: std::collections::HashMap::new(),
        };
        repo.kustomize = super::kustomize::build(&repo);
        // Kustomize reads the files it references as manifests or patches: a values-named
        // one among them gets its tree back (see `Document::kept`).
        let referenced = repo.kustomize.referenced_files();
        if repo.documents.restore_trees(&referenced) {
            repo.kustomize = super::kustomize::build(&repo);
        }
        // Objects are what kustomize makes of them: every rule, the resolver and
        // the Rego view read the patched trees.
        let mut patched = super::patch::apply(&repo, &repo.kustomize);
        repo.documents.ambiguously_patched = std::mem::take(&mut patched.ambiguous);
        repo.variants = variants(std::mem::take(&mut patched.ambiguous_builds));
        repo.object_variants = std::mem::take(&mut patched.varied_objects)
            .into_iter()
            .collect();
        repo.object_variants.sort_unstable();
        repo.build_errors = std::mem::take(&mut patched.build_errors);
        repo.documents.transformed = patched
            .roots
            .keys()
            .chain(&patched.patch_docs)
            .copied()
            .collect();
        repo.patch_docs.clone_from(&patched.patch_docs);
        if !patched.roots.is_empty() || !patched.patch_docs.is_empty() {
            super::patch::apply_to(
                &mut repo.documents.docs,
                patched,
                &mut repo.documents.written,
            );
            repo.documents.index_kinds();
        }
        repo
    }

    /// The overlays' builds of the documents they build differently.
    #[must_use]
    pub fn variants(&self) -> &[Variant] {
        &self.variants
    }

    /// True when document `doc` is judged through its overlays' builds, not as written.
    #[must_use]
    pub fn is_varied(&self, doc: usize) -> bool {
        self.variants.binary_search_by_key(&doc, |v| v.doc).is_ok()
            || self
                .object_variants
                .binary_search_by_key(&doc, |(d, _)| *d)
                .is_ok()
    }

    /// True when document `doc` is an Argo CD object of a patch file: kustomize merges it
    /// into the objects it patches, and it is judged there, not as an object.
    #[must_use]
    pub fn is_patch(&self, doc: usize) -> bool {
        self.patch_docs.contains(&doc)
    }

    /// The objects other than Argo CD's that overlays build differently, each with the
    /// kustomizations (graph nodes) that build it, in document order.
    #[must_use]
    pub fn object_variants(&self) -> &[(usize, Vec<usize>)] {
        &self.object_variants
    }

    /// What kustomize rejects in kustomization `k`, and the `helmCharts` it does not inflate,
    /// when the model built it (nothing includes it and it reads objects).
    #[must_use]
    pub fn build_errors(&self, k: usize) -> Option<&[super::kustomize::build::Problem]> {
        self.build_errors.get(&k).map(Vec::as_slice)
    }

    /// The repository's files and documents, below the model.
    #[must_use]
    pub fn documents(&self) -> &Documents {
        &self.documents
    }
}

/// The builds of the ambiguously patched documents, in document order.
fn variants(
    builds: std::collections::HashMap<usize, Vec<(usize, crate::yaml::Node)>>,
) -> Vec<Variant> {
    let mut out: Vec<Variant> = builds
        .into_iter()
        .flat_map(|(doc, trees)| {
            trees.into_iter().map(move |(kustomization, root)| Variant {
                doc,
                kustomization,
                root,
            })
        })
        .collect();
    out.sort_by_key(|v| (v.doc, v.kustomization));
    out
}
