//! Helpers to build text edits against the original YAML text: indentation, line endings,
//! and inserting keys into block or flow mappings. Nothing here re-serialises YAML.

use super::node::Node;
use crate::fix::Edit;
use crate::source::Span;

/// The file's line ending: `\r\n` if its first line break is CRLF, else `\n`.
#[must_use]
pub fn line_ending(text: &str) -> &'static str {
    match text.find('\n') {
        Some(i) if i > 0 && text.as_bytes()[i - 1] == b'\r' => "\r\n",
        _ => "\n",
    }
}

/// `offset` moved back to the nearest character boundary (and into the text).
#[must_use]
pub fn floor_boundary(text: &str, offset: usize) -> usize {
    let mut o = offset.min(text.len());
    while !text.is_char_boundary(o) {
        o -= 1;
    }
    o
}

/// Byte offset where the line holding `offset` starts.
#[must_use]
pub fn line_start(text: &str, offset: usize) -> usize {
    let offset = floor_boundary(text, offset);
    text[..offset].rfind(['\n', '\r']).map_or(0, |i| i + 1)
}

/// Byte offset of the line break ending the line that holds `offset` (or the text's end).
#[must_use]
pub fn line_end(text: &str, offset: usize) -> usize {
    let offset = floor_boundary(text, offset);
    text[offset..]
        .find(['\n', '\r'])
        .map_or(text.len(), |i| offset + i)
}

/// Column (in bytes, spaces only) of `offset` within its line.
#[must_use]
pub fn column_of(text: &str, offset: usize) -> usize {
    let offset = floor_boundary(text, offset);
    let start = line_start(text, offset);
    text[start..offset].chars().count()
}

/// Indentation width of the line holding `offset`, excluding `- ` sequence markers.
#[must_use]
pub fn indent_of_line(text: &str, offset: usize) -> usize {
    let start = line_start(text, offset);
    text[start..].bytes().take_while(|&b| b == b' ').count()
}

/// Where the content of a block collection ends: the end of the line holding its last byte.
/// Inserting `"{eol}{indent}key: value"` there appends an entry after everything it holds.
#[must_use]
pub fn block_insertion_point(text: &str, node: &Node) -> usize {
    let end = node.span.end as usize;
    let last = end.saturating_sub(1).max(node.span.start as usize);
    // A block scalar's span may include its final line break: stay on its last content line.
    let mut at = floor_boundary(text, last);
    while at > node.span.start as usize && matches!(text.as_bytes().get(at), Some(b'\n' | b'\r')) {
        at -= 1;
    }
    line_end(text, at)
}

/// Column of a mapping's keys (the column of its first key), when the key starts its line
/// after indentation and `- ` markers only: an explicit `? key` cannot be followed by a plain
/// line at that column.
#[must_use]
pub fn map_key_column(text: &str, map: &Node) -> Option<usize> {
    let first = map.entries().find(|e| !e.merged())?;
    key_column(text, &first.key)
}

/// Column of a block mapping key, if only spaces and `- ` markers precede it on its line.
#[must_use]
pub fn key_column(text: &str, key: &Node) -> Option<usize> {
    let start = floor_boundary(text, key.span.start as usize);
    let prefix = &text[line_start(text, start)..start];
    prefix
        .chars()
        .all(|c| c == ' ' || c == '-')
        .then(|| prefix.chars().count())
}

/// Whether applying `edits` to `text` leaves as many documents and no more YAML errors: a
/// last check before a fix is offered. Only the documents the edits touch are parsed (from
/// the `---` line before the first edit to the one after the last), so checking one fix per
/// document of a file of thousands costs as much as parsing the file once.
#[must_use]
pub fn keeps_yaml_valid(text: &str, edits: &[Edit]) -> bool {
    let (Some(first), Some(last)) = (
        edits.iter().map(|e| e.span.start as usize).min(),
        edits.iter().map(|e| e.span.end as usize).max(),
    ) else {
        return true;
    };
    if last > text.len() {
        return false;
    }
    let start = documents_start(text, first);
    let end = documents_end(text, last);
    let region = &text[start..end];
    let shifted: Vec<Edit> = edits
        .iter()
        .map(|e| Edit {
            span: Span::new(
                e.span.file,
                e.span.start as usize - start,
                e.span.end as usize - start,
            ),
            replacement: e.replacement.clone(),
        })
        .collect();
    let refs: Vec<&Edit> = shifted.iter().collect();
    let (new, applied) = crate::fix::apply_edits(region, &refs);
    if applied != edits.len() {
        return false;
    }
    let file = crate::source::FileId(0);
    let before = super::parse(file, region);
    let after = super::parse(file, &new);
    after.errors.len() <= before.errors.len() && after.docs.len() == before.docs.len()
}

/// Whether the line starting at `at` is a document marker (`---` or `...`, alone or followed by
/// a blank): YAML forbids such a line inside a scalar, so documents can be split there.
fn is_document_marker(bytes: &[u8], at: usize) -> bool {
    let rest = &bytes[at.min(bytes.len())..];
    (rest.starts_with(b"---") || rest.starts_with(b"..."))
        && rest
            .get(3)
            .is_none_or(|b| matches!(b, b' ' | b'\t' | b'\r' | b'\n'))
}

/// The start of the document marker line last before `offset`, or 0.
fn documents_start(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    let mut end = offset.min(bytes.len());
    loop {
        let line = memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |i| i + 1);
        if line < offset && is_document_marker(bytes, line) {
            return line;
        }
        if line == 0 {
            return 0;
        }
        end = line - 1;
    }
}

/// The start of the first document marker line at or after `offset`, or the text's end.
fn documents_end(text: &str, offset: usize) -> usize {
    let bytes = text.as_bytes();
    let mut line = if offset == 0 || bytes.get(offset - 1) == Some(&b'\n') {
        offset
    } else {
        match memchr::memchr(b'\n', &bytes[offset..]) {
            Some(i) => offset + i + 1,
            None => return bytes.len(),
        }
    };
    while line < bytes.len() {
        if is_document_marker(bytes, line) {
            return line;
        }
        match memchr::memchr(b'\n', &bytes[line..]) {
            Some(i) => line += i + 1,
            None => break,
        }
    }
    bytes.len()
}

/// Edits that add `lines` (already rendered `key: value` strings) as entries of `map`.
/// Block maps get new lines at the keys' column; flow maps get `, key: value` before `}`.
/// `None` when the map's layout cannot be edited safely.
#[must_use]
pub fn append_to_map(text: &str, map: &Node, lines: &[String]) -> Option<Vec<Edit>> {
    if lines.is_empty() {
        return Some(Vec::new());
    }
    let file = map.span.file;
    if map.flow() {
        let end = map.span.end as usize;
        if end == 0 || text.as_bytes().get(end - 1) != Some(&b'}') {
            return None;
        }
        let close = end - 1;
        let empty = map.entries().next().is_none();
        let inner = lines.join(", ");
        let replacement = if empty { inner } else { format!(", {inner}") };
        // Insert right after the last entry (before any space and the `}`).
        let at = if empty {
            close
        } else {
            let last = map
                .entries()
                .map(|e| e.value.span.end.max(e.key.span.end))
                .max()? as usize;
            last.min(close)
        };
        return Some(vec![Edit {
            span: Span::empty(file, at),
            replacement,
        }]);
    }
    let column = map_key_column(text, map)?;
    let eol = line_ending(text);
    let at = block_insertion_point(text, map);
    let mut replacement = String::new();
    for l in lines {
        replacement.push_str(eol);
        replacement.push_str(&" ".repeat(column));
        replacement.push_str(l);
    }
    Some(vec![Edit {
        span: Span::empty(file, at),
        replacement,
    }])
}

/// Edits that give a key with an empty value (`key:`) or an empty flow map a block body of
/// `lines`, indented two spaces more than the key. `key_node` is the entry's key.
#[must_use]
pub fn fill_empty_value(
    text: &str,
    key_node: &Node,
    value: &Node,
    lines: &[String],
) -> Option<Vec<Edit>> {
    let file = key_node.span.file;
    let eol = line_ending(text);
    let indent = key_column(text, key_node)? + 2;
    let mut body = String::new();
    for l in lines {
        body.push_str(eol);
        body.push_str(&" ".repeat(indent));
        body.push_str(l);
    }
    if value.span.is_empty() {
        // `key:` with nothing after it: insert the block after the colon (and any comment).
        let at = line_end(text, key_node.span.end as usize);
        let colon_line = &text[key_node.span.end as usize..at];
        let (at, prefix) = match colon_line.find('#') {
            // Keep a trailing comment on the key's line.
            Some(_) => (at, ""),
            None => (key_node.span.end as usize + colon_line.trim_end().len(), ""),
        };
        return Some(vec![Edit {
            span: Span::empty(file, at),
            replacement: format!("{prefix}{body}"),
        }]);
    }
    // A flow value such as `{}` or `null` or `~`: replace it, and drop the space before it.
    let start = value.span.start as usize;
    let mut from = start;
    while from > key_node.span.end as usize && text.as_bytes()[from - 1] == b' ' {
        from -= 1;
    }
    Some(vec![Edit {
        span: Span::new(file, from, value.span.end as usize),
        replacement: body,
    }])
}
