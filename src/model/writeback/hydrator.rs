//! Argo CD's source hydrator as a writer (argoproj/argo-cd: `pkg/apis/application/v1alpha1/
//! types.go` for `spec.sourceHydrator` and `GetHydrateToSource`, `util/settings/settings.go`
//! for the `sourceHydrator.commitMessageTemplate`, `commit.author.name` and
//! `commit.author.email` keys of `argocd-cm` and the default template, `commitserver/commit/
//! commit.go` for the default author).
//!
//! The hydrator renders `drySource` and commits the manifests to `syncSource.path` of the
//! dry source's repository, on `hydrateTo.targetBranch` when set, else on
//! `syncSource.targetBranch`. Its default message copies the dry commit's subject and body.

use super::Config;
use super::{Bot, Here, branch_of};
use crate::model::argocd::resolve::{App, ArgoModel};
use crate::model::{Repository, paths};
use crate::yaml::Node;

const TOOL: &str = "Argo CD's source hydrator";
/// `CommitMessageTemplate` in `util/settings/settings.go`.
pub const DEFAULT_MESSAGE: &str = "{{.metadata.drySha | trunc 7}}: {{ .metadata.subject }}\n{{- if .metadata.body }}\n\n{{ .metadata.body }}\n{{- end }}\n{{ range $ref := .metadata.references }}\n{{- if and $ref.commit $ref.commit.author }}\nCo-authored-by: {{ $ref.commit.author }}\n{{- end }}\n{{- end }}\n{{- if .metadata.author }}\nCo-authored-by: {{ .metadata.author }}\n{{- end }}\n";
/// The commit server's author when `argocd-cm` names none.
const DEFAULT_AUTHOR: (&str, &str) = ("Argo CD", "argo-cd@example.com");

/// The settings ConfigMap's message template (with its span) and author.
fn config(repo: &Repository) -> Config {
    super::bot_config(
        repo,
        crate::model::argocd::ARGOCD_CM,
        "sourceHydrator.commitMessageTemplate",
        ("commit.author.name", "commit.author.email"),
        DEFAULT_AUTHOR,
    )
}

/// The hydrators the Applications configure, one per written `sourceHydrator` (the
/// Applications of one ApplicationSet share their template).
pub(super) fn bots(repo: &Repository, argo: &ArgoModel, here: &Here) -> Vec<Bot> {
    let cfg = config(repo);
    let mut out: Vec<Bot> = Vec::new();
    for app in argo.apps.iter().filter(|a| a.live) {
        if let Some(b) = hydrator(repo, app, here, &cfg) {
            if !out.iter().any(|o| o.span == b.span) {
                out.push(b);
            }
        }
    }
    out
}

fn hydrator(repo: &Repository, app: &App, here: &Here, cfg: &Config) -> Option<Bot> {
    let spec = app
        .generated_spec
        .as_ref()
        .or_else(|| repo.docs.get(app.doc)?.root.get("spec"))?;
    let h = spec.get("sourceHydrator")?;
    let sync = h.get("syncSource")?;
    // The branch it commits to: `hydrateTo`'s, else the sync source's.
    let target = h
        .path(&["hydrateTo", "targetBranch"])
        .or_else(|| sync.get("targetBranch"))
        .filter(|n| n.as_str().is_some_and(|b| !b.trim().is_empty()))?;
    let url = h.path(&["drySource", "repoURL"]).and_then(Node::as_str);
    let path = sync.get_str("path").unwrap_or("");
    let files = paths::join("", path).filter(|p| !p.is_empty()).map(|p| {
        ["manifest.yaml", "hydrator.metadata", "README.md"]
            .iter()
            .filter_map(|f| paths::join(&p, f))
            .collect()
    });
    let (message, message_span) = match &cfg.message {
        Some((m, s)) => (m.clone(), Some(*s)),
        None => (DEFAULT_MESSAGE.to_string(), None),
    };
    // A template that prints the dry commit's message says what that commit says.
    let message_complete =
        !message.contains(".metadata.subject") && !message.contains(".metadata.body");
    Some(Bot {
        tool: TOOL,
        name: app.name.clone(),
        span: target.span,
        here: url.and_then(|u| here.is(u)),
        branch: branch_of(target.as_str()),
        message,
        message_complete,
        message_span,
        author: cfg.author.clone(),
        images: Vec::new(),
        files,
        fed_by: Some(branch_of(
            h.path(&["drySource", "targetRevision"])
                .and_then(Node::as_str),
        )),
    })
}
