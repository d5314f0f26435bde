//! The command parameters of Argo CD's components (`argocd-cmd-params-cm`) as the repository
//! declares them: in the ConfigMap itself, or in the argo-cd chart's `configs.params` values
//! (also under `argo-cd:` in a chart that depends on it).

use super::server::{PARAMS_CM, is_true};
use crate::model::{DocKind, Repository};
use crate::repo::retention::{Payload, Reads};
use crate::source::Span;
use crate::yaml::Node;

/// Progressive syncs (`RollingSync`) run only when the ApplicationSet controller has them on.
pub const PROGRESSIVE_SYNCS: &str = "applicationsetcontroller.enable.progressive.syncs";

/// The ApplicationSet controller's git files generator globs with doublestar (`*` stops at
/// `/`) instead of `git ls-files` pathspecs.
pub const NEW_GIT_FILE_GLOBBING: &str = "applicationsetcontroller.enable.new.git.file.globbing";

/// The namespaces outside its own whose Applications Argo CD reconciles (comma-separated
/// names, globs and `/regex/`).
pub const APPLICATION_NAMESPACES: &str = "application.namespaces";

/// What reading the parameters keeps beyond every document: the chart's `configs` trees and
/// the ConfigMap's values of these keys.
pub const READS: Reads = Reads {
    payloads: &[Payload::Keys(&[
        PROGRESSIVE_SYNCS,
        NEW_GIT_FILE_GLOBBING,
        APPLICATION_NAMESPACES,
    ])],
    values_keys: &["configs", "argo-cd"],
    ..Reads::NONE
};

/// One parameter as the repository sets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Declared {
    pub on: bool,
    /// Where: the value, or the ConfigMap's name when it leaves the key unset.
    pub span: Span,
    /// "ConfigMap `argocd-cmd-params-cm`" or "the argo-cd chart's `configs.params`".
    pub origin: &'static str,
}

/// A list parameter as the repository sets it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredList {
    /// The comma-separated items; empty when unset.
    pub items: Vec<String>,
    pub span: Span,
    pub origin: &'static str,
}

/// The parameters the rules read. `None`: the repository does not say (Argo CD may be
/// installed from elsewhere).
#[derive(Debug, Default)]
pub struct Params {
    pub progressive_syncs: Option<Declared>,
    pub new_git_file_globbing: Option<Declared>,
    pub application_namespaces: Option<DeclaredList>,
}

const CM_ORIGIN: &str = "ConfigMap `argocd-cmd-params-cm`";
const CHART_ORIGIN: &str = "the argo-cd chart's `configs.params`";

/// Where the repository sets a parameter: `(value, origin)`, or the ConfigMap's name with no
/// value when a ConfigMap leaves it unset (the component's default then applies).
fn declarations<'r>(
    repo: &'r Repository,
    key: &str,
) -> Vec<(Option<&'r Node>, Span, &'static str)> {
    let mut out = Vec::new();
    for doc in repo.docs_of(DocKind::K8sObject) {
        if doc.k8s_kind() != Some("ConfigMap") || doc.name() != Some(PARAMS_CM) {
            continue;
        }
        match doc.root.path(&["data", key]) {
            Some(v) => out.push((Some(v), v.span, CM_ORIGIN)),
            None => out.push((
                None,
                doc.root
                    .path(&["metadata", "name"])
                    .map_or(doc.anchor_span(), |n| n.span),
                CM_ORIGIN,
            )),
        }
    }
    for doc in repo.docs_of(DocKind::HelmValues) {
        let root = doc.root.get("argo-cd").unwrap_or(&doc.root);
        if let Some(v) = root.path(&["configs", "params", key]) {
            out.push((Some(v), v.span, CHART_ORIGIN));
        }
    }
    out
}

/// A boolean parameter: the chart quotes values into the ConfigMap; unset is the
/// controller's default, off. One declaration that turns it on wins: that Argo CD runs so.
fn flag(repo: &Repository, key: &str) -> Option<Declared> {
    let found: Vec<Declared> = declarations(repo, key)
        .into_iter()
        .map(|(v, span, origin)| Declared {
            on: v.and_then(Node::scalar_text).is_some_and(is_true),
            span,
            origin,
        })
        .collect();
    found
        .iter()
        .find(|d| d.on)
        .or_else(|| found.first())
        .cloned()
}

#[must_use]
pub fn read(repo: &Repository) -> Params {
    let progressive_syncs = flag(repo, PROGRESSIVE_SYNCS);
    let new_git_file_globbing = flag(repo, NEW_GIT_FILE_GLOBBING);
    let lists: Vec<DeclaredList> = declarations(repo, APPLICATION_NAMESPACES)
        .into_iter()
        .map(|(v, span, origin)| DeclaredList {
            items: v
                .and_then(Node::scalar_text)
                .unwrap_or("")
                .split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .collect(),
            span,
            origin,
        })
        .collect();
    // A set list wins over a ConfigMap that leaves it unset.
    let application_namespaces = lists
        .iter()
        .find(|l| !l.items.is_empty())
        .or_else(|| lists.first())
        .cloned();
    Params {
        progressive_syncs,
        new_git_file_globbing,
        application_namespaces,
    }
}
