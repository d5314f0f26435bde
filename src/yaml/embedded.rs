//! YAML written inside a string node (a kustomize inline `patch: |`, Argo CD's
//! `helm.values: |`), parsed with spans that point into the enclosing file.

use super::{Node, ScalarStyle, Value, parse};
use crate::source::{FileId, Span};

/// Parses YAML written in a string node: the documents' roots, with spans mapped back into the
/// file when the node is a literal block scalar that can be located, else every node at the
/// string's span. Nothing when it does not parse.
#[must_use]
pub fn parse_embedded(file_text: &str, node: &Node) -> Vec<Node> {
    let Some(text) = node.scalar_text() else {
        return Vec::new();
    };
    let parsed = parse(node.span.file, text);
    if !parsed.errors.is_empty() {
        return Vec::new();
    }
    let map = block_offsets(file_text, node, text);
    parsed
        .docs
        .into_iter()
        .map(|d| {
            let mut root = d.root;
            match &map {
                Some(m) => remap(&mut root, m, node.span.file),
                None => pin(&mut root, node.span),
            }
            root
        })
        .collect()
}

/// Gives every node of a tree the same span (where text parsed from a string cannot be
/// located more precisely).
fn pin(node: &mut Node, span: Span) {
    node.span = span;
    match &mut node.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter_mut().for_each(|n| pin(n, span)),
        Value::Map(entries) => {
            for e in entries {
                pin(&mut e.key, span);
                pin(&mut e.value, span);
            }
        }
    }
}

/// For a literal block scalar `node` whose content is `text`, the file offset of each byte
/// of `text` (plus one past the end), or `None` when it cannot be located exactly.
#[must_use]
pub fn block_offsets(file_text: &str, node: &Node, text: &str) -> Option<Vec<usize>> {
    let s = node.as_scalar()?;
    if s.style != ScalarStyle::Literal {
        return None;
    }
    // The span starts at the first content character; take its whole line.
    let start = node.span.start as usize;
    let line_start = file_text.get(..start)?.rfind('\n').map_or(0, |i| i + 1);
    let body = file_text.get(line_start..node.span.end as usize)?;
    let indent = body
        .lines()
        .find(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start_matches(' ').len())?;
    let mut map = Vec::with_capacity(text.len() + 1);
    let mut rebuilt = String::with_capacity(text.len());
    let mut offset = line_start;
    for line in body.split_inclusive('\n') {
        let content_start = if line.trim().is_empty() {
            line.len() - usize::from(line.ends_with('\n'))
        } else {
            indent.min(line.len())
        };
        let content = &line[content_start..];
        for i in 0..content.len() {
            map.push(offset + content_start + i);
        }
        rebuilt.push_str(content);
        offset += line.len();
    }
    // Chomping may drop or keep trailing newlines; the prefix must match exactly.
    if !rebuilt.starts_with(text) {
        return None;
    }
    map.truncate(text.len());
    map.push(map.last().map_or(offset, |&l| l + 1));
    Some(map)
}

/// Moves the spans of a tree parsed from a string to the file offsets `map` gives
/// ([`block_offsets`]).
pub fn remap(node: &mut Node, map: &[usize], file: FileId) {
    let at = |o: u32| {
        map.get(o as usize)
            .copied()
            .unwrap_or(*map.last().unwrap_or(&0))
    };
    node.span = Span::new(file, at(node.span.start), at(node.span.end));
    match &mut node.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter_mut().for_each(|n| remap(n, map, file)),
        Value::Map(entries) => {
            for e in entries {
                remap(&mut e.key, map, file);
                remap(&mut e.value, map, file);
            }
        }
    }
}
