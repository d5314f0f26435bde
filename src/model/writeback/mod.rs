//! Bots that commit to Git repositories: what each writes, where, as whom and with which
//! message, read from the objects that configure them.
//!
//! - **Argo CD Image Updater** (`image_updater.rs`): the legacy annotations of an Application
//!   or an ApplicationSet's template (`argocd-image-updater.argoproj.io/image-list`,
//!   `write-back-method: git[:secret]`, `git-branch` with `base:target`, `git-repository`,
//!   `write-back-target`) and the `ImageUpdater` resource of v1.x; the message and the author
//!   from the `argocd-image-updater-config` ConfigMap (`git.commit-message-template`,
//!   `git.user`, `git.email`), else the defaults of `pkg/common/constants.go`.
//! - **Argo CD's source hydrator** (`hydrator.rs`): `spec.sourceHydrator` of an Application
//!   (`hydrateTo.targetBranch`, else `syncSource.targetBranch`, of the `drySource` repository),
//!   its message from `argocd-cm` `sourceHydrator.commitMessageTemplate` (the default copies
//!   the dry commit's subject and body) and its author from `commit.author.name`/`.email`.
//! - **Flux** (`flux.rs`): `ImageUpdateAutomation` (`git.commit.messageTemplate`,
//!   `git.commit.author`, `git.push.branch`, `git.checkout.ref.branch`, `sourceRef`) with the
//!   `GitRepository` it writes to and the images of the repository's `ImageRepository` objects.
//!
//! Rules judge what the writes do; nothing here decides what is wrong.

mod flux;
mod hydrator;
mod image_updater;

pub use image_updater::{Annotated, READS, annotated_apps};

use rustc_hash::FxHashSet;

use crate::model::argocd::resolve::{ArgoModel, Location};
use crate::model::ci::git::Branch;
pub use crate::model::ci::images::image_name;
use crate::model::{Repository, paths};
use crate::source::Span;

/// Every bot that writes to a Git repository, in document order.
#[derive(Debug, Default)]
pub struct Writers {
    pub bots: Vec<Bot>,
}

/// One bot's writes.
#[derive(Clone, Debug)]
pub struct Bot {
    /// "Argo CD Image Updater", "Argo CD's source hydrator", "Flux image automation".
    pub tool: &'static str,
    /// The Application or the automation object.
    pub name: String,
    /// Where the write-back is configured (the annotation or field).
    pub span: Span,
    /// Whether it writes to this repository (`None`: not known).
    pub here: Option<bool>,
    pub branch: Branch,
    /// The commit message's template.
    pub message: String,
    /// The template says the whole message; false when it prints another commit's message
    /// (the hydrator copies the dry commit's subject and body), which may say anything.
    pub message_complete: bool,
    /// Where the template is written, if not the tool's default.
    pub message_span: Option<Span>,
    /// `Name <email>`.
    pub author: String,
    /// The images it tracks, without tag or digest.
    pub images: Vec<String>,
    /// The files it writes, from the repository's root, when known.
    pub files: Option<Vec<String>>,
    /// The branch whose new commits make it write again (the hydrator's dry source), when
    /// it is not every write to the repository.
    pub fed_by: Option<Branch>,
}

/// Reads every bot of the repository.
#[must_use]
pub fn build(repo: &Repository, argo: &ArgoModel, repo_urls: &[String]) -> Writers {
    let here = Here::new(repo, argo, repo_urls);
    let mut bots = image_updater::bots(repo, argo, &here);
    bots.extend(hydrator::bots(repo, argo, &here));
    bots.extend(flux::bots(repo, &here));
    Writers { bots }
}

/// The URLs of this repository: configured, the origin, and those of the Applications'
/// sources found here.
pub(crate) struct Here {
    urls: FxHashSet<String>,
}

impl Here {
    fn new(repo: &Repository, argo: &ArgoModel, repo_urls: &[String]) -> Here {
        let mut urls: FxHashSet<String> =
            paths::this_repository_urls(repo_urls, repo.git_origin.as_deref())
                .into_iter()
                .collect();
        for app in &argo.apps {
            for s in &app.sources {
                if let (Location::InRepo(_), Some(u)) = (&s.location, &s.repo_url) {
                    urls.insert(paths::normalize_url(u));
                }
            }
        }
        Here { urls }
    }

    /// Whether a repository URL is this repository (`None` when it is a template).
    fn is(&self, url: &str) -> Option<bool> {
        if url.contains("{{") || url.contains("${") || url.trim().is_empty() {
            return None;
        }
        Some(self.urls.contains(&paths::normalize_url(url)))
    }
}

/// The branch of a `git-branch` value or a `targetRevision`: `base:target` writes `target`;
/// `HEAD` or nothing is the default branch, taken to be `main`.
fn branch_of(value: Option<&str>) -> Branch {
    let v = value.map(str::trim).unwrap_or("");
    let v = v.rsplit_once(':').map_or(v, |(_, t)| t);
    if v.contains("{{") || v.contains("${") {
        Branch::Unknown(v.to_string())
    } else if v.is_empty() || v == "HEAD" {
        Branch::Named("main".to_string())
    } else {
        Branch::Named(v.trim_start_matches("refs/heads/").to_string())
    }
}

/// A bot's commit settings, as the repository's settings ConfigMap gives them.
struct Config {
    /// The commit message template, with its span.
    message: Option<(String, Span)>,
    /// `name <email>`.
    author: String,
}

/// The commit message template at `message_key` of ConfigMap `config_map`, and the author from
/// `author_keys` (name, email), each defaulting to `default_author`'s; an empty value is unset.
fn bot_config(
    repo: &Repository,
    config_map: &str,
    message_key: &str,
    author_keys: (&str, &str),
    default_author: (&str, &str),
) -> Config {
    let cm = repo.docs_of(crate::model::DocKind::K8sObject).find(|d| {
        d.root.get_str("kind") == Some("ConfigMap")
            && d.root
                .path(&["metadata", "name"])
                .and_then(crate::yaml::Node::as_str)
                == Some(config_map)
    });
    let data = cm.and_then(|d| d.root.get("data"));
    let get = |k: &str| {
        data.and_then(|d| d.get(k))
            .filter(|n| n.scalar_text().is_some_and(|t| !t.is_empty()))
    };
    let message = get(message_key).and_then(|n| Some((n.scalar_text()?.to_string(), n.span)));
    let text = |k: &str| get(k).and_then(crate::yaml::Node::scalar_text);
    Config {
        message,
        author: format!(
            "{} <{}>",
            text(author_keys.0).unwrap_or(default_author.0),
            text(author_keys.1).unwrap_or(default_author.1)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn image_names_and_branches() {
        assert_eq!(image_name("ghcr.io/org/app:1.2"), "ghcr.io/org/app");
        assert_eq!(image_name("reg:5000/app@sha256:abc"), "reg:5000/app");
        assert_eq!(image_name("reg:5000/app"), "reg:5000/app");
        assert_eq!(
            branch_of(Some("main:image-updater")),
            Branch::Named("image-updater".into())
        );
        assert_eq!(branch_of(None), Branch::Named("main".into()));
        assert!(matches!(
            branch_of(Some("main:iu-{{.SHA256}}")),
            Branch::Unknown(_)
        ));
    }
}
