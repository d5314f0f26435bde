//! What a run reports on when files or folders are given.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use crate::model::{self, Model};
use crate::source::FileId;
use crate::source::walk;

/// What a run reports on when files or folders are given: findings located there, findings
/// with a label there, and findings in the files their Applications read (values files,
/// kustomizations, manifests) and in their AppProjects: what pre-commit must see when a staged
/// file breaks another one.
pub(crate) struct Scope {
    files: HashSet<String>,
    /// Root-relative folders, with a trailing `/`.
    folders: Vec<String>,
}

impl Scope {
    pub(super) fn new(root: &Path, paths: &[PathBuf]) -> Scope {
        let (dirs, files): (Vec<&PathBuf>, Vec<&PathBuf>) = paths.iter().partition(|f| f.is_dir());
        Scope {
            files: files.iter().map(|f| walk::relative(root, f)).collect(),
            folders: dirs
                .iter()
                .map(|d| format!("{}/", walk::relative(root, d)))
                .collect(),
        }
    }

    pub(super) fn contains(&self, path: &str) -> bool {
        self.files.contains(path) || self.folders.iter().any(|f| path.starts_with(f.as_str()))
    }

    /// Files that the Applications defined in scope read, and their AppProjects' files.
    pub(super) fn related_files(&self, model: &Model<'_>) -> HashSet<FileId> {
        let repo = model.repo;
        let mut related = HashSet::new();
        let mut projects = HashSet::new();
        for app in &model.argocd().apps {
            let doc = &repo.docs[app.doc];
            if !self.contains(&repo.source(doc.file).path) {
                continue;
            }
            for s in &app.sources {
                related.extend(s.files.iter().copied());
            }
            if let Some(p) = &app.project {
                projects.insert(p.value.clone());
            }
        }
        for d in repo.docs_of(model::DocKind::AppProject) {
            if d.name().is_some_and(|n| projects.contains(n)) {
                related.insert(d.file);
            }
        }
        related
    }
}
