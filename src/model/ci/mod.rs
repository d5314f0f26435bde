//! CI definitions as the runner sees them, assembled once per run ([`crate::model::Model::ci`]):
//!
//! - [`gitlab`]: GitLab CI pipelines, a root file with the local files it includes, and their
//!   jobs with `extends`, YAML anchors, `!reference`, `default:` and variables resolved;
//! - [`github`]: GitHub Actions workflows, their jobs and steps with the environment and
//!   working directory each step runs with;
//! - [`shell`]: the commands of a script; [`git`]: what a job does to Git repositories
//!   (clones, commits, pushes and where they go).
//!
//! Script lines and variable values are the YAML nodes of the repository (cloned, never
//! re-serialised), so each keeps its span for findings and fixes. `ci/writeback-skip-ci` and
//! the Rego `data.gitops.ci` view read this same structure.

pub mod git;
pub mod github;
pub mod gitlab;
pub mod images;
pub mod shell;
pub mod trigger;

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

/// Assembles the CI model of a repository; `projects` maps GitLab projects that
/// `include: project:` reads to paths of the repository (`ci.projects`).
#[must_use]
pub fn build(repo: &Repository, projects: &[(String, String)]) -> CiModel {
    CiModel {
        gitlab: gitlab::pipelines(repo, projects),
        github: github::workflows(repo),
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
