//! The command parameters of Argo CD's components (`argocd-cmd-params-cm`) as the repository
//! declares them: in the ConfigMap itself, or in the argo-cd chart's `configs.params` values
//! (also under `argo-cd:` in a chart that depends on it).

use super::server::{PARAMS_CM, is_true};
use crate::model::{DocKind, Repository};
use crate::repo::retention::{Payload, Reads};
use crate::source::Span;

/// Progressive syncs (`RollingSync`) run only when the ApplicationSet controller has them on.
pub const PROGRESSIVE_SYNCS: &str = "applicationsetcontroller.enable.progressive.syncs";

/// What reading the parameters keeps beyond every document: the chart's `configs` trees (a
/// ConfigMap's short values are always kept; these are short).
pub const READS: Reads = Reads {
    payloads: &[Payload::Keys(&[PROGRESSIVE_SYNCS])],
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

/// The parameters the rules read. `None`: the repository does not say (Argo CD may be
/// installed from elsewhere).
#[derive(Debug, Default)]
pub struct Params {
    pub progressive_syncs: Option<Declared>,
}

#[must_use]
pub fn read(repo: &Repository) -> Params {
    let mut found: Vec<Declared> = Vec::new();
    for doc in repo.docs_of(DocKind::K8sObject) {
        if doc.k8s_kind() != Some("ConfigMap") || doc.name() != Some(PARAMS_CM) {
            continue;
        }
        let origin = "ConfigMap `argocd-cmd-params-cm`";
        match doc.root.path(&["data", PROGRESSIVE_SYNCS]) {
            Some(v) => found.push(Declared {
                on: v.scalar_text().is_some_and(is_true),
                span: v.span,
                origin,
            }),
            // Unset is off: the controller's default.
            None => found.push(Declared {
                on: false,
                span: doc
                    .root
                    .path(&["metadata", "name"])
                    .map_or(doc.anchor_span(), |n| n.span),
                origin,
            }),
        }
    }
    for doc in repo.docs_of(DocKind::HelmValues) {
        let root = doc.root.get("argo-cd").unwrap_or(&doc.root);
        if let Some(v) = root.path(&["configs", "params", PROGRESSIVE_SYNCS]) {
            found.push(Declared {
                // The chart quotes the value into the ConfigMap.
                on: v.scalar_text().is_some_and(is_true),
                span: v.span,
                origin: "the argo-cd chart's `configs.params`",
            });
        }
    }
    // One declaration that turns them on wins: that Argo CD runs them.
    let progressive_syncs = found
        .iter()
        .find(|d| d.on)
        .or_else(|| found.first())
        .cloned();
    Params { progressive_syncs }
}
