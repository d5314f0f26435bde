//! Argo CD Image Updater as a writer (argoproj-labs/argocd-image-updater:
//! `pkg/common/constants.go` for the annotations and the default message,
//! `api/v1alpha1/imageupdater_types.go` for the `ImageUpdater` resource of v1.x,
//! `docs/basics/update-methods.md` for the write-back methods and the ConfigMap keys).

use super::Config;
use super::{Bot, Here, branch_of, image_name};
use crate::model::argocd::appproject::glob;
use crate::model::argocd::resolve::{App, ArgoModel, Location};
use crate::model::{DocKind, Repository, paths};
use crate::repo::retention::{Payload, Reads};
use crate::yaml::Node;

const PREFIX: &str = "argocd-image-updater.argoproj.io/";
const CONFIG_MAP: &str = "argocd-image-updater-config";

/// The ConfigMap's message template may be long: it is kept whatever its size.
pub const READS: Reads = Reads {
    payloads: &[Payload::Named(&[CONFIG_MAP])],
    ..Reads::NONE
};
const TOOL: &str = "Argo CD Image Updater";
/// `DefaultGitCommitMessage` in `pkg/common/constants.go`.
pub const DEFAULT_MESSAGE: &str = "build: automatic update of {{ .AppName }}\n\n{{ range .AppChanges -}}\nupdates image {{ .Image }} tag '{{ .OldTag }}' to '{{ .NewTag }}'\n{{ end -}}\n";
/// The `--git-commit-user` and `--git-commit-email` defaults.
const DEFAULT_AUTHOR: (&str, &str) = ("argocd-image-updater", "noreply@argoproj.io");

/// The settings ConfigMap's message template (with its span) and author.
fn config(repo: &Repository) -> Config {
    super::bot_config(
        repo,
        CONFIG_MAP,
        "git.commit-message-template",
        ("git.user", "git.email"),
        DEFAULT_AUTHOR,
    )
}

/// The bots the Applications' annotations and the `ImageUpdater` resources configure.
pub(super) fn bots(repo: &Repository, argo: &ArgoModel, here: &Here) -> Vec<Bot> {
    let cfg = config(repo);
    let mut out = Vec::new();
    for app in &argo.apps {
        if let Some(b) = annotated(repo, app, here, &cfg) {
            // One per place: the Applications of one ApplicationSet share their template.
            if !out.iter().any(|o: &Bot| o.span == b.span) {
                out.push(b);
            }
        }
    }
    for d in repo.docs_of(DocKind::K8sObject) {
        let root = &d.root;
        let is_crd = root.get_str("kind") == Some("ImageUpdater")
            && root
                .get_str("apiVersion")
                .is_some_and(|v| v.starts_with("argocd-image-updater.argoproj.io/"));
        if is_crd {
            out.extend(resource(root, argo, here, &cfg));
        }
    }
    out
}

/// An Application's annotations: on it, or on its ApplicationSet's template.
fn annotations<'r>(repo: &'r Repository, app: &App) -> Option<&'r Node> {
    let doc = repo.docs.get(app.doc)?;
    match doc.kind {
        DocKind::Application => doc.root.path(&["metadata", "annotations"]),
        DocKind::ApplicationSet => doc
            .root
            .path(&["spec", "template", "metadata", "annotations"]),
        _ => None,
    }
}

/// The spec of an Application: written, or generated.
fn spec<'r>(repo: &'r Repository, app: &'r App) -> Option<&'r Node> {
    app.generated_spec
        .as_ref()
        .or_else(|| repo.docs.get(app.doc)?.root.get("spec"))
}

/// An Application's first source of this repository: its path and `targetRevision`.
fn source_here<'r>(repo: &'r Repository, app: &'r App) -> Option<(String, Option<&'r str>)> {
    let (i, s) = app
        .sources
        .iter()
        .enumerate()
        .find(|(_, s)| matches!(s.location, Location::InRepo(_)))?;
    let Location::InRepo(path) = &s.location else {
        return None;
    };
    let rev = spec(repo, app)
        .map(crate::model::argocd::sources)
        .and_then(|srcs| srcs.get(i).copied())
        .and_then(|n| n.get_str("targetRevision"));
    Some((path.clone(), rev))
}

/// The file a write-back target names, from the repository's root: `kustomization[:path]`,
/// `helmvalues:path`, else `.argocd-source-<app>.yaml` in the source's folder.
fn target_file(target: Option<&str>, source_path: &str, app: &str) -> Option<String> {
    let t = target.map(str::trim).unwrap_or("");
    let (kind, path) = t.split_once(':').unwrap_or((t, ""));
    let file = match kind {
        "kustomization" => {
            let dir = paths::join(source_path, path)?;
            paths::join(&dir, "kustomization.yaml")?
        }
        "helmvalues" if !path.is_empty() => paths::join(source_path, path)?,
        "" => paths::join(source_path, &format!(".argocd-source-{app}.yaml"))?,
        _ => return None,
    };
    (!file.contains("{{")).then_some(file)
}

fn annotated(repo: &Repository, app: &App, here: &Here, cfg: &Config) -> Option<Bot> {
    let ann = annotations(repo, app)?;
    let get = |k: &str| ann.get(&format!("{PREFIX}{k}"));
    let list = get("image-list")?.scalar_text()?;
    let method = get("write-back-method");
    if !method
        .and_then(Node::scalar_text)
        .is_some_and(|m| m.trim().starts_with("git"))
    {
        return None;
    }
    let method = method?;
    let source = source_here(repo, app);
    let here = match get("git-repository").and_then(Node::scalar_text) {
        Some(url) => here.is(url),
        None if source.is_some() => Some(true),
        None => None,
    };
    let branch = branch_of(
        get("git-branch")
            .and_then(Node::scalar_text)
            .or_else(|| source.as_ref().and_then(|s| s.1)),
    );
    let images = list
        .split(',')
        .map(|i| i.split_once('=').map_or(i, |(_, img)| img))
        .map(|i| image_name(i).to_string())
        .filter(|i| !i.is_empty())
        .collect();
    let files = source.as_ref().and_then(|(path, _)| {
        let t = get("write-back-target").and_then(Node::scalar_text);
        target_file(t, path, &app.name).map(|f| vec![f])
    });
    Some(Bot {
        tool: TOOL,
        name: app.name.clone(),
        span: method.span,
        here,
        branch,
        message: cfg
            .message
            .as_ref()
            .map_or(DEFAULT_MESSAGE, |(m, _)| m.as_str())
            .to_string(),
        fed_by: None,
        message_complete: true,
        message_span: cfg.message.as_ref().map(|(_, s)| *s),
        author: cfg.author.clone(),
        images,
        files,
    })
}

/// An `ImageUpdater` resource: one bot per application reference that writes with Git.
fn resource(root: &Node, argo: &ArgoModel, here: &Here, cfg: &Config) -> Vec<Bot> {
    let spec = root.get("spec");
    let top = spec.and_then(|s| s.get("writeBackConfig"));
    let mut out = Vec::new();
    for r in spec
        .and_then(|s| s.get("applicationRefs"))
        .into_iter()
        .flat_map(Node::items)
    {
        let wb = r.get("writeBackConfig");
        let pick = |k: &str| {
            wb.and_then(|w| w.get(k))
                .or_else(|| top.and_then(|t| t.get(k)))
        };
        let git = |k: &str| {
            wb.and_then(|w| w.path(&["gitConfig", k]))
                .or_else(|| top.and_then(|t| t.path(&["gitConfig", k])))
                .and_then(Node::scalar_text)
        };
        let Some(method) =
            pick("method").filter(|m| m.scalar_text().is_some_and(|t| t.trim().starts_with("git")))
        else {
            continue;
        };
        let pattern = r.get_str("namePattern").unwrap_or("*");
        let apps: Vec<&App> = argo
            .apps
            .iter()
            .filter(|a| glob(pattern, &a.name, None))
            .collect();
        let source = apps.iter().find_map(|a| {
            a.sources.iter().find_map(|s| match &s.location {
                Location::InRepo(p) => Some(p.clone()),
                _ => None,
            })
        });
        let is_here = match git("repository") {
            Some(url) => here.is(url),
            None if source.is_some() => Some(true),
            None => None,
        };
        let images = r
            .get("images")
            .into_iter()
            .flat_map(Node::items)
            .filter_map(|i| i.get_str("imageName"))
            .map(|i| image_name(i).to_string())
            .collect();
        let files = source.as_ref().and_then(|p| {
            let name = apps.first().map_or(pattern, |a| a.name.as_str());
            target_file(git("writeBackTarget"), p, name).map(|f| vec![f])
        });
        out.push(Bot {
            tool: TOOL,
            name: root
                .path(&["metadata", "name"])
                .and_then(Node::as_str)
                .unwrap_or(pattern)
                .to_string(),
            span: method.span,
            here: is_here,
            branch: branch_of(git("branch")),
            message: cfg
                .message
                .as_ref()
                .map_or(DEFAULT_MESSAGE, |(m, _)| m.as_str())
                .to_string(),
            fed_by: None,
            message_complete: true,
            message_span: cfg.message.as_ref().map(|(_, s)| *s),
            author: cfg.author.clone(),
            images,
            files,
        });
    }
    out
}

/// An Application that Image Updater's annotations configure, as written.
#[derive(Debug)]
pub struct Annotated<'r> {
    pub app: &'r App,
    /// `image-list`.
    pub image_list: &'r Node,
    /// `write-back-method` (`None`: the default, `argocd`).
    pub method: Option<&'r Node>,
    /// `git-branch`.
    pub git_branch: Option<&'r Node>,
    /// The `targetRevision` of the source it writes to (the first source).
    pub target_revision: Option<&'r Node>,
    /// The ApplicationSet that generates it.
    pub appset: Option<&'r Node>,
}

impl Annotated<'_> {
    /// Whether it writes back with Git (`git`, `git:secret:...`).
    #[must_use]
    pub fn git(&self) -> bool {
        self.method
            .and_then(Node::scalar_text)
            .is_some_and(|m| m.trim().starts_with("git"))
    }

    /// The tracked images, without tags.
    #[must_use]
    pub fn images(&self) -> Vec<&str> {
        self.image_list
            .scalar_text()
            .unwrap_or("")
            .split(',')
            .map(|i| i.split_once('=').map_or(i, |(_, img)| img))
            .map(image_name)
            .filter(|i| !i.is_empty())
            .collect()
    }
}

/// Every Application with an `image-list` annotation, once per place it is written (the
/// Applications of one ApplicationSet share their template).
#[must_use]
pub fn annotated_apps<'r>(repo: &'r Repository, argo: &'r ArgoModel) -> Vec<Annotated<'r>> {
    let mut out: Vec<Annotated<'r>> = Vec::new();
    for app in &argo.apps {
        let Some(ann) = annotations(repo, app) else {
            continue;
        };
        let get = |k: &str| ann.get(&format!("{PREFIX}{k}"));
        let Some(image_list) = get("image-list") else {
            continue;
        };
        if out.iter().any(|a| a.image_list.span == image_list.span) {
            continue;
        }
        let target_revision = spec(repo, app)
            .map(crate::model::argocd::sources)
            .and_then(|s| s.first().copied())
            .and_then(|s| s.get("targetRevision"));
        let appset = app
            .appset
            .as_ref()
            .and_then(|_| repo.docs.get(app.doc))
            .filter(|d| d.kind == DocKind::ApplicationSet)
            .map(|d| &*d.root);
        out.push(Annotated {
            app,
            image_list,
            method: get("write-back-method"),
            git_branch: get("git-branch"),
            target_revision,
            appset,
        });
    }
    out
}
