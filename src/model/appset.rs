//! ApplicationSet expansion against this repository.

use super::Document;
use crate::project::Project;
use crate::source::Span;
use crate::yaml::Node;

/// One generated Application.
pub struct Generated {
    pub name: String,
    pub name_span: Option<Span>,
    /// The rendered `spec` (spans of the template's nodes).
    pub spec: Node,
}

#[derive(Default)]
pub struct Expansion {
    pub apps: Vec<Generated>,
    /// The first generator that cannot be expanded offline, and where it is.
    pub unexpandable: Option<(String, Span)>,
}

/// Expands an ApplicationSet document.
#[must_use]
pub fn expand(_project: &Project, _doc: &Document) -> Expansion {
    Expansion::default()
}
