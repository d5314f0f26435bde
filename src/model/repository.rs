//! The repository with kustomize applied: the kustomization graph, read once, and the Argo CD
//! documents as kustomize's patches and transformers make them (see [`super::patch`]). The
//! documents themselves are [`Documents`], below the model.

use std::path::PathBuf;

use crate::repo::{Document, Documents};
use crate::source::SourceDb;

pub struct Repository {
    documents: Documents,
    /// The kustomization graph, read once here to apply kustomize's transformations to the
    /// Argo CD documents (see [`super::patch`]); [`super::Model::kustomize`] returns it.
    pub(crate) kustomize: super::kustomize::Kustomizations,
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
        let mut project = Repository {
            documents: Documents::new(root, sources, docs),
            kustomize: super::kustomize::Kustomizations::default(),
        };
        project.kustomize = super::kustomize::build(&project);
        // Kustomize reads the files it references as manifests or patches: a values-named
        // one among them gets its tree back (see `Document::kept`).
        let referenced = project.kustomize.referenced_files();
        if project.documents.restore_trees(&referenced) {
            project.kustomize = super::kustomize::build(&project);
        }
        // Argo CD documents are what kustomize makes of them: every rule, the resolver and
        // the Rego view read the patched trees.
        let mut patched = super::patch::apply(&project, &project.kustomize);
        project.documents.ambiguously_patched = std::mem::take(&mut patched.ambiguous);
        project.documents.transformed = patched
            .roots
            .keys()
            .chain(&patched.patch_docs)
            .copied()
            .collect();
        if !patched.roots.is_empty() || !patched.patch_docs.is_empty() {
            super::patch::apply_to(&mut project.documents.docs, patched);
            project.documents.index_kinds();
        }
        project
    }

    /// The repository's files and documents, below the model.
    #[must_use]
    pub fn documents(&self) -> &Documents {
        &self.documents
    }
}
