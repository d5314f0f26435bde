//! Reporters render an [`engine::Report`](crate::engine::Report) to text; only the binary
//! writes what they return.

pub mod baseline;
pub mod changes;
pub mod changes_html;
pub mod diff;
pub mod escape;
pub mod fingerprint;
pub mod github;
pub mod gitlab;
pub mod graph;
pub mod html;
pub mod json;
pub mod junit;
pub mod render;
pub mod rules;
pub mod sarif;
pub mod text;

use crate::source::{SourceDb, Span};

/// A 1-based line/column range plus byte offsets, as the JSON contract carries it.
#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct Range {
    pub start: crate::source::LineCol,
    pub end: crate::source::LineCol,
}

#[must_use]
pub fn range(sources: &SourceDb, span: Span) -> Range {
    let f = sources.get(span.file);
    Range {
        start: f.line_col(span.start as usize),
        end: f.line_col(span.end as usize),
    }
}
