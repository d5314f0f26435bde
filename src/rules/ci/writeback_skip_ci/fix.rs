//! The fix: append ` [skip ci]` where the message is written (a message literal in a script,
//! the variable it comes from, or an action input), in the file's text.

use super::{Job, SKIP, has_marker};
use crate::fix::{Edit, Fix};
use crate::model::ci::git::{MessageSource, Var};
use crate::model::ci::shell::{self, Word};
use crate::source::Span;
use crate::yaml::{self, Node, ScalarStyle};

impl<'a> Job<'a> {
    /// Whether `text` (a message or a variable's value) expands to a text with a skip marker.
    fn skips_with(&self, text: &str, literal: Option<&[bool]>) -> bool {
        has_marker(
            &shell::expand_text(text, literal, &|n| self.trace.lookup(n)).text,
            self.github,
        )
    }

    /// Whether the word, with ` [skip ci]` appended, expands to a text with a skip marker.
    fn word_skips_with_suffix(&self, w: &Word) -> bool {
        let mut literal = w.literal.clone();
        literal.resize(w.text.len() + SKIP.len(), false);
        self.skips_with(&format!("{}{SKIP}", w.text), Some(&literal))
    }

    pub(super) fn fix(&self, src: &MessageSource<'a>) -> Option<Fix> {
        let (node, edits) = match src {
            MessageSource::Shell { node, words } => {
                let w = words.first()?;
                // Offer the fix only if the edited text really expands to a skip marker: an
                // unterminated `${` in the value, say, would swallow what we append, and the
                // fix would repeat forever.
                match w.sole_variable().and_then(|v| self.trace.vars.get(v)) {
                    Some(Var::Yaml(n) | Var::Env(n)) => {
                        if !self.skips_with(&format!("{}{SKIP}", n.scalar_text()?), None) {
                            return None;
                        }
                        (*n, self.append_to_scalar(n)?)
                    }
                    Some(Var::Shell { node, word, .. }) => {
                        if !self.word_skips_with_suffix(word) {
                            return None;
                        }
                        (*node, self.append_to_word(node, word)?)
                    }
                    None if w.sole_variable().is_some() => return None,
                    None => {
                        if !self.word_skips_with_suffix(w) {
                            return None;
                        }
                        (*node, self.append_to_word(node, w)?)
                    }
                }
            }
            MessageSource::Input(n) => (*n, self.append_to_scalar(n)?),
            _ => return None,
        };
        // The edited file must still parse.
        let text = self.text(node.span.file);
        if !keeps_structure(text, node, &edits) && !yaml::edit::keeps_yaml_valid(text, &edits) {
            return None;
        }
        Fix::safe("append ` [skip ci]` to the commit message", edits)
    }

    /// Edits that append ` [skip ci]` to the value of a shell word inside a script scalar.
    fn append_to_word(&self, node: &Node, w: &Word) -> Option<Vec<Edit>> {
        let text = self.text(node.span.file);
        let map = self.scalar_offsets(node)?;
        let style = node.as_scalar()?.style;
        let file = node.span.file;
        let at = |i: usize| map.get(i).copied();
        if let Some(i) = w.append_at {
            return Some(vec![Edit {
                span: Span::empty(file, at(i)?),
                replacement: escape(style, SKIP),
            }]);
        }
        if w.quoted || w.text.is_empty() {
            return None;
        }
        // An unquoted word: quote it.
        let start = at(w.start)?;
        let last = at(w.end.checked_sub(1)?)?;
        let end = last + text[last..].chars().next()?.len_utf8();
        Some(vec![
            Edit {
                span: Span::empty(file, start),
                replacement: escape(style, "\""),
            },
            Edit {
                span: Span::empty(file, end),
                replacement: escape(style, &format!("{SKIP}\"")),
            },
        ])
    }

    /// Edits that append ` [skip ci]` to a YAML scalar's value.
    fn append_to_scalar(&self, node: &Node) -> Option<Vec<Edit>> {
        let map = self.scalar_offsets(node)?;
        let s = node.as_scalar()?;
        let i = s.text.trim_end_matches('\n').len();
        let style = s.style;
        if style == ScalarStyle::Plain && s.text.is_empty() {
            return None;
        }
        Some(vec![Edit {
            span: Span::empty(node.span.file, *map.get(i)?),
            replacement: escape(style, SKIP),
        }])
    }
}

/// Whether inserting these edits (` [skip ci]`, and quotes around a word, escaped for the
/// scalar's style, never a line break) into `node` cannot change the YAML around it, so the
/// document need not be parsed again: a job of thousands of commits is not parsed once per
/// commit. True inside a block scalar's content and inside a quoted scalar; in a plain scalar,
/// only after its first character when it is a block sequence item (`- ` before it on its
/// line, which YAML allows only in block context, where `[`, `]` and `"` are plain text).
fn keeps_structure(text: &str, node: &Node, edits: &[Edit]) -> bool {
    let Some(scalar) = node.as_scalar() else {
        return false;
    };
    let (start, end) = (node.span.start, node.span.end);
    let inside = edits.iter().all(|e| {
        e.span.is_empty()
            && e.span.start > start
            && e.span.start <= end
            && !e.replacement.contains(['\n', '\r', '#', ':'])
    });
    if !inside {
        return false;
    }
    match scalar.style {
        ScalarStyle::Literal
        | ScalarStyle::Folded
        | ScalarStyle::SingleQuoted
        | ScalarStyle::DoubleQuoted => true,
        ScalarStyle::Plain => {
            let line_start = yaml::edit::line_start(text, start as usize);
            let before = text.get(line_start..start as usize).unwrap_or("");
            let mut markers = before.split_whitespace().peekable();
            markers.peek().is_some() && markers.all(|m| m == "-") && before.ends_with([' ', '\t'])
        }
    }
}

/// `s` as it must be written inside a YAML scalar of this style.
fn escape(style: ScalarStyle, s: &str) -> String {
    match style {
        ScalarStyle::DoubleQuoted => s.replace('\\', "\\\\").replace('"', "\\\""),
        ScalarStyle::SingleQuoted => s.replace('\'', "''"),
        _ => s.to_string(),
    }
}
