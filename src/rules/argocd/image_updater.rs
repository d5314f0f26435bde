//! `argocd/image-updater`: Argo CD Image Updater configured so that its updates are undone,
//! fail, or follow an image the Application does not deploy.

use rustc_hash::FxHashSet;

use crate::diagnostic::{Finding, Severity};
use crate::model::argocd::resolve::{Location, SourceKind};
use crate::model::writeback::{Annotated, annotated_apps, image_name};
use crate::model::{DocKind, Repository};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::yaml::Node;

pub struct ImageUpdater;

static META: RuleMeta = RuleMeta {
    id: "argocd/image-updater",
    summary: "an Argo CD Image Updater set-up whose updates are undone, cannot be pushed, or follow an image the Application does not deploy",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("image_updater.md"),
};

impl Rule for ImageUpdater {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let argo = cx.model.argocd();
        let mut out = Vec::new();
        for a in annotated_apps(cx.repo, argo) {
            out.extend(overwritten(&a));
            out.extend(no_branch(&a));
            out.extend(untracked(cx.repo, &a));
        }
        out
    }
}

/// The `argocd` method on an Application an ApplicationSet generates: the ApplicationSet
/// controller puts the template's spec back, and the parameter overrides with it.
fn overwritten(a: &Annotated<'_>) -> Option<Finding> {
    let set = a.appset?;
    if a.git() || ignores_source_differences(set) {
        return None;
    }
    let name = set
        .path(&["metadata", "name"])
        .and_then(Node::as_str)
        .unwrap_or("?");
    let span = a.method.map_or(a.image_list.span, |m| m.span);
    let how = if a.method.is_some() {
        "the `argocd` write-back method"
    } else {
        "the `argocd` write-back method (the default)"
    };
    Some(
        Finding::new(
            format!("updates that Image Updater makes with {how} are undone: ApplicationSet `{name}` generates these Applications and puts their spec back on its next reconcile"),
            span,
        )
        .with_help("Write back with Git (`argocd-image-updater.argoproj.io/write-back-method: git`), or list the overridden fields in the ApplicationSet's `spec.ignoreApplicationDifferences`."),
    )
}

/// Whether an ApplicationSet leaves its Applications' sources alone
/// (`ignoreApplicationDifferences` on `/spec/source...`).
fn ignores_source_differences(set: &Node) -> bool {
    set.path(&["spec", "ignoreApplicationDifferences"])
        .into_iter()
        .flat_map(Node::items)
        .any(|d| {
            let pointers = d
                .get("jsonPointers")
                .into_iter()
                .flat_map(Node::items)
                .filter_map(Node::as_str)
                .any(|p| p.starts_with("/spec/source"));
            let jq = d
                .get("jqPathExpressions")
                .into_iter()
                .flat_map(Node::items)
                .filter_map(Node::as_str)
                .any(|p| p.starts_with(".spec.source"));
            pointers || jq
        })
}

/// Git write-back to a source whose `targetRevision` is a tag or a commit: Image Updater
/// checks it out and pushes to it as a branch (`HEAD` resolves to the default branch).
fn no_branch(a: &Annotated<'_>) -> Option<Finding> {
    if !a.git()
        || a.git_branch
            .and_then(Node::scalar_text)
            .is_some_and(|b| !b.split(':').next().unwrap_or("").trim().is_empty())
    {
        return None;
    }
    let rev = a.target_revision?;
    let text = rev.scalar_text()?.trim();
    let what = revision_kind(text)?;
    Some(
        Finding::new(
            format!("`{text}` is a {what}, not a branch: the Git write-back of Image Updater for Application `{}` cannot push to it", a.app.name),
            rev.span,
        )
        .with_help("Name the branch to write with `argocd-image-updater.argoproj.io/git-branch`, or point `targetRevision` at a branch."),
    )
}

/// "tag" for a version (`v1.2.3`), "commit" for a SHA; `None` for what may be a branch.
fn revision_kind(rev: &str) -> Option<&'static str> {
    let r = rev.strip_prefix("refs/tags/").unwrap_or(rev);
    if r != rev {
        return Some("tag");
    }
    let hex = r.len() >= 7 && r.len() <= 40 && r.chars().all(|c| c.is_ascii_hexdigit());
    if hex && r.chars().any(|c| c.is_ascii_digit()) {
        return Some("commit");
    }
    let v = r.strip_prefix('v').unwrap_or(r);
    let mut parts = v.split(['-', '+']).next().unwrap_or("").split('.');
    let numeric = parts.clone().count() >= 2
        && parts.all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()));
    numeric.then_some("tag")
}

/// Tracked images that no source of the Application deploys, where every source is a folder
/// or kustomization of this repository (what else deploys is not seen).
fn untracked(repo: &Repository, a: &Annotated<'_>) -> Option<Finding> {
    let sources = &a.app.sources;
    let seen = !sources.is_empty()
        && sources.iter().all(|s| {
            matches!(s.location, Location::InRepo(_))
                && matches!(s.kind, SourceKind::Directory | SourceKind::Kustomize)
        });
    if !seen {
        return None;
    }
    let mut deployed: FxHashSet<String> = FxHashSet::default();
    for s in sources {
        for f in s.files.iter() {
            for d in repo.file_docs(*f) {
                collect_images(&d.root, d.kind == DocKind::Kustomization, &mut deployed);
            }
        }
    }
    if deployed.is_empty() {
        return None;
    }
    let missing: Vec<&str> = a
        .images()
        .into_iter()
        .filter(|i| !deployed.iter().any(|d| same_image(d, i)))
        .collect();
    let first = missing.first()?;
    Some(
        Finding::new(
            format!("`{first}` is not deployed by Application `{}`: Image Updater tracks it and never updates anything", a.app.name),
            a.image_list.span,
        )
        .with_severity(Severity::Warning)
        .with_help("Name an image the Application's workloads or kustomization `images:` use, or map it with `<alias>.kustomize.image-name`."),
    )
}

/// The images a manifest or a kustomization names: `image:` values, and a kustomization's
/// `images[].name` and `newName`.
fn collect_images(root: &Node, kustomization: bool, out: &mut FxHashSet<String>) {
    if kustomization {
        for i in root.get("images").into_iter().flat_map(Node::items) {
            for k in ["name", "newName"] {
                if let Some(n) = i.get_str(k) {
                    out.insert(image_name(n).to_string());
                }
            }
        }
        return;
    }
    for n in root.descendants() {
        for e in n.entries() {
            if e.key.scalar_text() == Some("image")
                && let Some(v) = e.value.as_str()
            {
                out.insert(image_name(v).to_string());
            }
        }
    }
}

/// Whether two image names are one image: equal, or equal once Docker Hub's implicit
/// `docker.io/` and `library/` are added.
fn same_image(a: &str, b: &str) -> bool {
    fn full(s: &str) -> String {
        let first = s.split('/').next().unwrap_or("");
        let has_registry = s.contains('/') && (first.contains('.') || first.contains(':'));
        match (has_registry, s.contains('/')) {
            (true, _) => s.to_string(),
            (false, true) => format!("docker.io/{s}"),
            (false, false) => format!("docker.io/library/{s}"),
        }
    }
    a == b || full(a) == full(b)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_and_images() {
        assert_eq!(revision_kind("v1.2.3"), Some("tag"));
        assert_eq!(revision_kind("1.2"), Some("tag"));
        assert_eq!(revision_kind("refs/tags/release"), Some("tag"));
        assert_eq!(revision_kind("3f2c1e9"), Some("commit"));
        assert_eq!(revision_kind("main"), None);
        assert_eq!(revision_kind("HEAD"), None);
        assert_eq!(revision_kind("release-1.2"), None);
        assert!(same_image("nginx", "docker.io/library/nginx"));
        assert!(!same_image("ghcr.io/a/b", "ghcr.io/a/c"));
    }
}
