//! The fix: append ` [skip ci]` where the message is written (a message literal in a script,
//! the variable it comes from, or an action input), in the file's text.

use super::{Job, SKIP, has_marker};
use crate::fix::{Edit, Fix};
use crate::model::ci::git::{MessageSource, Var};
use crate::model::ci::shell::{self, Word};
use crate::source::Span;
use crate::yaml::{self, Node, ScalarStyle, locate};

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
        let edits = match src {
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
                        self.append_to_scalar(n)?
                    }
                    Some(Var::Shell { node, word, .. }) => {
                        if !self.word_skips_with_suffix(word) {
                            return None;
                        }
                        self.append_to_word(node, word)?
                    }
                    None if w.sole_variable().is_some() => return None,
                    None => {
                        if !self.word_skips_with_suffix(w) {
                            return None;
                        }
                        self.append_to_word(node, w)?
                    }
                }
            }
            MessageSource::Input(n) => self.append_to_scalar(n)?,
            _ => return None,
        };
        // The edited file must still parse.
        let file = edits.first()?.span.file;
        let text = self.text(file);
        let refs: Vec<&Edit> = edits.iter().collect();
        let (new, n) = crate::fix::apply_edits(text, &refs);
        if n != edits.len() {
            return None;
        }
        let before = yaml::parse(file, text);
        let after = yaml::parse(file, &new);
        if after.errors.len() > before.errors.len() || after.docs.len() != before.docs.len() {
            return None;
        }
        Fix::safe("append ` [skip ci]` to the commit message", edits)
    }

    /// Edits that append ` [skip ci]` to the value of a shell word inside a script scalar.
    fn append_to_word(&self, node: &Node, w: &Word) -> Option<Vec<Edit>> {
        let text = self.text(node.span.file);
        let map = locate::scalar_offsets(text, node)?;
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
        let text = self.text(node.span.file);
        let map = locate::scalar_offsets(text, node)?;
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

/// `s` as it must be written inside a YAML scalar of this style.
fn escape(style: ScalarStyle, s: &str) -> String {
    match style {
        ScalarStyle::DoubleQuoted => s.replace('\\', "\\\\").replace('"', "\\\""),
        ScalarStyle::SingleQuoted => s.replace('\'', "''"),
        _ => s.to_string(),
    }
}
