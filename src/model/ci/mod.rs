//! CI definitions as the runner sees them, assembled once per run ([`crate::model::Model::ci`]):
//!
//! - [`gitlab`]: GitLab CI pipelines, a root file with the local files it includes, and their
//!   jobs with `extends`, YAML anchors, `!reference`, `default:` and variables resolved;
//! - [`github`]: GitHub Actions workflows, their jobs and steps with the environment and
//!   working directory each step runs with;
//! - [`shell`]: the commands of a script; [`git`]: what a job does to Git repositories
//!   (clones, commits, pushes and where they go).
//!
//! Script lines and variable values are the YAML nodes of the project (cloned, never
//! re-serialised), so each keeps its span for findings and fixes. `ci/writeback-skip-ci` and
//! the Rego `data.gitops.ci` view read this same structure.

pub mod git;
pub mod github;
pub mod gitlab;
pub mod shell;

use crate::model::Repository;
use crate::yaml::Node;

pub use github::{GithubJob, GithubStep, GithubWorkflow};
pub use gitlab::{GitlabJob, GitlabPipeline};

/// Every CI definition of the repository.
#[derive(Debug, Default)]
pub struct CiModel {
    /// GitLab pipelines, one per GitLab CI file that no other GitLab CI file includes, in
    /// file order.
    pub gitlab: Vec<GitlabPipeline>,
    /// GitHub workflows, one per workflow document, in document order.
    pub github: Vec<GithubWorkflow>,
}

/// Assembles the CI model of a project.
#[must_use]
pub fn build(project: &Repository) -> CiModel {
    CiModel {
        gitlab: gitlab::pipelines(project),
        github: github::workflows(project),
    }
}

/// The text of a CI variable's value: a scalar, or GitLab's `{value: ..., description: ...}`.
#[must_use]
pub fn variable_value(node: &Node) -> Option<&Node> {
    if node.as_scalar().is_some() {
        return Some(node);
    }
    node.get("value").filter(|v| v.as_scalar().is_some())
}

/// A project of in-memory files, for tests of the CI model and of what reads it.
#[cfg(test)]
pub(crate) fn test_project(files: &[(&str, &str)]) -> Repository {
    use crate::model::{Document, classify};
    use crate::source::{FileId, SourceDb, SourceFile};
    let mut files = files.to_vec();
    files.sort_unstable();
    let mut sources = Vec::new();
    let mut docs = Vec::new();
    for (i, (path, text)) in files.into_iter().enumerate() {
        let id = FileId(u32::try_from(i).expect("few files"));
        for d in crate::yaml::parse(id, text).docs {
            docs.push(Document {
                file: id,
                index: d.index,
                span: d.span,
                kind: classify(path, &d.root),
                kept: None,
                root: d.root.into(),
            });
        }
        sources.push(SourceFile::new(
            id,
            path.to_string(),
            std::path::PathBuf::from(path),
            text.to_string(),
        ));
    }
    Repository::new(std::path::PathBuf::from("."), SourceDb::new(sources), docs)
}
