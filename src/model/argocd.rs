//! Thin views over Argo CD documents.

use super::{DocKind, Document};
use crate::yaml::Node;

/// The Application specs a document defines: an Application's `spec`, or an ApplicationSet's
/// `spec.template.spec` (plus `templatePatch` is not evaluated here).
#[must_use]
pub fn application_specs(doc: &Document) -> Vec<&Node> {
    match doc.kind {
        DocKind::Application => doc.root.get("spec").into_iter().collect(),
        DocKind::ApplicationSet => doc
            .root
            .path(&["spec", "template", "spec"])
            .into_iter()
            .collect(),
        _ => Vec::new(),
    }
}
