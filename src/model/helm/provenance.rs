//! Where rendered text came from: a byte of a manifest back to the values node or the template
//! range that printed it, and a rendered node's span in the repository's files.

use std::collections::BTreeMap;

use gotmpl::{Origin, Source};

use super::render::{Manifest, Rendered};
use crate::source::{SourceFile, Span};
use crate::yaml::{self, Node};

/// Where a byte of a rendered manifest came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderOrigin {
    /// A values node.
    Value(Span),
    /// A template file (repository-relative) and the byte range in it.
    Template {
        path: String,
        start: usize,
        end: usize,
    },
}

impl Rendered {
    /// The origin of byte `offset` of `manifest`.
    #[must_use]
    pub fn origin_at(&self, manifest: &Manifest, offset: usize) -> Option<RenderOrigin> {
        let i = manifest.segments.partition_point(|(r, _)| r.end <= offset);
        let (r, src) = manifest
            .segments
            .get(i)
            .filter(|(r, _)| r.start <= offset)?;
        Some(match src {
            Source::Value(Origin(n)) => RenderOrigin::Value(*self.origins.get(*n as usize)?),
            Source::Template { name, range } => {
                let path = self
                    .paths
                    .get(&**name)
                    .cloned()
                    .unwrap_or_else(|| name.to_string());
                // A literal copy maps byte for byte; an action's span is kept whole.
                let literal = r.len() == range.len();
                let (start, end) = if literal {
                    let at = range.start + (offset - r.start);
                    (at, at)
                } else {
                    (range.start, range.end)
                };
                RenderOrigin::Template { path, start, end }
            }
        })
    }

    /// The span of the first value printed within `range` of `manifest` (a quoted scalar's
    /// quotes come from the template, its text from the value).
    #[must_use]
    pub fn value_within(&self, manifest: &Manifest, range: std::ops::Range<usize>) -> Option<Span> {
        let i = manifest
            .segments
            .partition_point(|(r, _)| r.end <= range.start);
        manifest.segments[i..]
            .iter()
            .take_while(|(r, _)| r.start < range.end)
            .find_map(|(_, src)| match src {
                Source::Value(Origin(n)) => self.origins.get(*n as usize).copied(),
                Source::Template { .. } => None,
            })
    }

    /// The 1-based line of `offset` in the template file `path`.
    #[must_use]
    pub fn template_line(&self, path: &str, offset: usize) -> usize {
        self.texts.get(path).map_or(0, |t| {
            t.get(..offset.min(t.len()))
                .map_or(0, |before| before.matches('\n').count() + 1)
        })
    }
}

/// Where rendered text comes from, as spans of the repository's files: the template files'
/// ids are looked up in `sources` (see `SourceDb::templates`).
pub(super) struct Locator<'a> {
    pub(super) rendered: &'a Rendered,
    /// The rendering's template (and `crds/`) files by repository-relative path.
    pub(super) files: BTreeMap<&'a str, &'a SourceFile>,
    pub(super) anchor: Span,
}

impl Locator<'_> {
    pub(super) fn template_span(&self, path: &str, start: usize, end: usize) -> Option<Span> {
        let f = self.files.get(path)?;
        let end = end.max(start).min(f.text().len());
        Some(Span::new(f.id, start.min(end), end))
    }

    /// The origin of `range` of manifest `m`: the values node when the text is one value's,
    /// else the template text that wrote it (a literal copy byte for byte, an action whole,
    /// several pieces of one template covered), else `anchor`.
    pub(super) fn span_of(&self, m: &Manifest, range: std::ops::Range<usize>) -> Span {
        let segs = &m.segments;
        let i = segs.partition_point(|(r, _)| r.end <= range.start);
        let n = segs[i..]
            .iter()
            .take_while(|(r, _)| r.start < range.end.max(range.start + 1))
            .count();
        let within = &segs[i..i + n];
        // One value's text, or text built from values and template literals (`printf`, a
        // `repository:tag` pair): the first value, where the author sets it.
        if let Some(span) = within.iter().find_map(|(_, src)| match src {
            Source::Value(Origin(n)) => self.rendered.origins.get(*n as usize),
            Source::Template { .. } => None,
        }) {
            return *span;
        }
        let mut pieces = within.iter().filter_map(|(r, src)| match src {
            Source::Template { name, range: tr } => {
                let path = self.rendered.paths.get(&**name)?;
                // The part of the segment inside `range`: exact for a literal copy.
                let (a, b) = if r.len() == tr.len() {
                    let a = tr.start + range.start.saturating_sub(r.start);
                    let hi = range.end.min(r.end).max(r.start);
                    let b = tr.start + (hi - r.start);
                    (a, b.max(a))
                } else {
                    (tr.start, tr.end)
                };
                Some((path.as_str(), a, b))
            }
            Source::Value(_) => None,
        });
        let Some((path, a, b)) = pieces.next() else {
            return self.anchor;
        };
        // Pieces of the same template after the first extend it (an action between literals).
        let end = pieces
            .take_while(|(p, s, _)| *p == path && *s >= a)
            .last()
            .map_or(b, |(_, _, e)| e.max(b));
        self.template_span(path, a, end).unwrap_or(self.anchor)
    }

    /// The template text that wrote `range`: a literal copy byte for byte; when values were
    /// printed in it, the template line that prints them (from its first non-blank character).
    /// `anchor` when no template text is in it (one value's text, printed by `toYaml`).
    pub(super) fn written_at(&self, m: &Manifest, range: std::ops::Range<usize>) -> Span {
        let segs = &m.segments;
        let i = segs.partition_point(|(r, _)| r.end <= range.start);
        let n = segs[i..]
            .iter()
            .take_while(|(r, _)| r.start < range.end)
            .count();
        let within = &segs[i..i + n];
        let with_values = within.iter().any(|(_, s)| matches!(s, Source::Value(_)));
        let mut pieces = within.iter().filter_map(|(r, src)| match src {
            Source::Template { name, range: tr } => {
                let path = self.rendered.paths.get(&**name)?;
                if r.len() == tr.len() {
                    let lo = range.start.max(r.start);
                    let hi = range.end.min(r.end).max(lo);
                    Some((path, tr.start + (lo - r.start)..tr.start + (hi - r.start)))
                } else {
                    Some((path, tr.clone()))
                }
            }
            Source::Value(_) => None,
        });
        let Some((path, first)) = pieces.next() else {
            return self.anchor;
        };
        let (mut start, mut end) = (first.start, first.end);
        for (p, r) in pieces {
            if p != path || r.start < start {
                break;
            }
            end = end.max(r.end);
        }
        if with_values {
            if let Some(t) = self.rendered.texts.get(path) {
                let line_start = t
                    .get(..start)
                    .and_then(|b| b.rfind('\n'))
                    .map_or(0, |i| i + 1);
                let line_end = t
                    .get(start..)
                    .and_then(|a| a.find('\n'))
                    .map_or(t.len(), |i| start + i);
                let line = t.get(line_start..line_end).unwrap_or("");
                start = line_start + (line.len() - line.trim_start().len());
                end = line_start + line.trim_end().len();
            }
        }
        self.template_span(path, start, end).unwrap_or(self.anchor)
    }

    pub(super) fn remap(&self, node: &mut Node, m: &Manifest) {
        let (start, end) = (node.span.start as usize, node.span.end as usize);
        node.span = match &node.value {
            yaml::Value::Scalar(_) => {
                // A quoted scalar's quotes are the template's; its text may be one value.
                let quoted = matches!(
                    node.style(),
                    yaml::ScalarStyle::SingleQuoted | yaml::ScalarStyle::DoubleQuoted
                ) && end >= start + 2;
                let content = if quoted {
                    start + 1..end - 1
                } else {
                    start..end
                };
                if content.is_empty() {
                    self.span_of(m, start..end)
                } else {
                    self.span_of(m, content)
                }
            }
            // A collection: where its first byte was written.
            _ => self.span_of(m, start..start),
        };
        match &mut node.value {
            yaml::Value::Scalar(_) => {}
            yaml::Value::Seq(items) => items.iter_mut().for_each(|n| self.remap(n, m)),
            yaml::Value::Map(entries) => {
                for e in entries {
                    self.remap(&mut e.key, m);
                    self.remap(&mut e.value, m);
                }
            }
        }
    }
}
