//! Maps the processed text of a scalar (after quote, escape and folding processing) back to
//! byte offsets in the source, so rules can point inside a scalar (a line of a `run: |` block)
//! and fixes can insert text at the right byte.
//!
//! The mapping is rebuilt from the source and checked against the parser's text: when the two
//! disagree (an unusual layout), `None` is returned and callers fall back to the whole node.

use super::node::{Node, ScalarStyle, Value};

/// For each byte of the scalar's text, its offset in `src`; one more entry at the end gives
/// where the content ends (the closing quote, or the end of the last content line). `None`
/// when the node is not a scalar or its layout is not understood.
#[must_use]
pub fn scalar_offsets(src: &str, node: &Node) -> Option<Vec<usize>> {
    let Value::Scalar(s) = &node.value else {
        return None;
    };
    let (start, end) = (node.span.start as usize, node.span.end as usize);
    if end > src.len() || start > end || !src.is_char_boundary(start) || !src.is_char_boundary(end)
    {
        return None;
    }
    let (text, map) = match node.style() {
        ScalarStyle::Plain => flow(src, start, end, Quote::None)?,
        ScalarStyle::SingleQuoted => flow(src, start, end, Quote::Single)?,
        ScalarStyle::DoubleQuoted => flow(src, start, end, Quote::Double)?,
        ScalarStyle::Literal => block(src, start, end, false)?,
        ScalarStyle::Folded => block(src, start, end, true)?,
    };
    (text == *s && map.len() == text.len() + 1).then_some(map)
}

#[derive(Copy, Clone, PartialEq, Eq)]
enum Quote {
    None,
    Single,
    Double,
}

struct Out {
    text: String,
    map: Vec<usize>,
}

impl Out {
    fn push(&mut self, c: char, at: usize) {
        self.text.push(c);
        for _ in 0..c.len_utf8() {
            self.map.push(at);
        }
    }
}

fn flow(src: &str, start: usize, end: usize, quote: Quote) -> Option<(String, Vec<usize>)> {
    let (from, to) = match quote {
        Quote::None => (start, end),
        Quote::Single => {
            let raw = &src[start..end];
            if raw.len() < 2 || !raw.starts_with('\'') || !raw.ends_with('\'') {
                return None;
            }
            (start + 1, end - 1)
        }
        Quote::Double => {
            let raw = &src[start..end];
            if raw.len() < 2 || !raw.starts_with('"') || !raw.ends_with('"') {
                return None;
            }
            (start + 1, end - 1)
        }
    };
    let body = &src[from..to];
    let b = body.as_bytes();
    let mut out = Out {
        text: String::with_capacity(body.len()),
        map: Vec::with_capacity(body.len() + 1),
    };
    let mut pending_ws: Vec<(char, usize)> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = body[i..].chars().next()?;
        let at = from + i;
        match c {
            ' ' | '\t' => {
                pending_ws.push((c, at));
                i += 1;
            }
            '\n' | '\r' => {
                // Fold: drop trailing white space, count the line breaks, skip indentation.
                pending_ws.clear();
                let first_break = at;
                let mut breaks = 0;
                loop {
                    if b.get(i) == Some(&b'\r') {
                        i += 1;
                        if b.get(i) == Some(&b'\n') {
                            i += 1;
                        }
                        breaks += 1;
                    } else if b.get(i) == Some(&b'\n') {
                        i += 1;
                        breaks += 1;
                    } else {
                        break;
                    }
                    while matches!(b.get(i), Some(b' ' | b'\t')) {
                        i += 1;
                    }
                }
                if breaks == 1 {
                    out.push(' ', first_break);
                } else {
                    for _ in 1..breaks {
                        out.push('\n', first_break);
                    }
                }
            }
            _ => {
                for (w, wat) in pending_ws.drain(..) {
                    out.push(w, wat);
                }
                match (quote, c) {
                    (Quote::Single, '\'') => {
                        if b.get(i + 1) != Some(&b'\'') {
                            return None;
                        }
                        out.push('\'', at);
                        i += 2;
                    }
                    (Quote::Double, '\\') => {
                        let e = body[i + 1..].chars().next()?;
                        i += 1 + e.len_utf8();
                        let simple = match e {
                            '0' => Some('\0'),
                            'a' => Some('\u{7}'),
                            'b' => Some('\u{8}'),
                            't' | '\t' => Some('\t'),
                            'n' => Some('\n'),
                            'v' => Some('\u{b}'),
                            'f' => Some('\u{c}'),
                            'r' => Some('\r'),
                            'e' => Some('\u{1b}'),
                            ' ' => Some(' '),
                            '"' => Some('"'),
                            '/' => Some('/'),
                            '\\' => Some('\\'),
                            'N' => Some('\u{85}'),
                            '_' => Some('\u{a0}'),
                            'L' => Some('\u{2028}'),
                            'P' => Some('\u{2029}'),
                            _ => None,
                        };
                        if let Some(ch) = simple {
                            out.push(ch, at);
                            continue;
                        }
                        match e {
                            'x' | 'u' | 'U' => {
                                let n = match e {
                                    'x' => 2,
                                    'u' => 4,
                                    _ => 8,
                                };
                                let hex = body.get(i..i + n)?;
                                let v = u32::from_str_radix(hex, 16).ok()?;
                                out.push(char::from_u32(v)?, at);
                                i += n;
                            }
                            '\r' | '\n' => {
                                // An escaped line break: no space, skip the next indentation.
                                if e == '\r' && b.get(i) == Some(&b'\n') {
                                    i += 1;
                                }
                                while matches!(b.get(i), Some(b' ' | b'\t')) {
                                    i += 1;
                                }
                            }
                            _ => return None,
                        }
                    }
                    _ => {
                        out.push(c, at);
                        i += c.len_utf8();
                    }
                }
            }
        }
    }
    if quote != Quote::None {
        for (w, wat) in pending_ws.drain(..) {
            out.push(w, wat);
        }
    }
    out.map.push(to);
    Some((out.text, out.map))
}

fn block(src: &str, start: usize, end: usize, folded: bool) -> Option<(String, Vec<usize>)> {
    // The span starts at the content; the header (`|`, `>-`, ...) ends the line holding the
    // indicator, above the content and any leading empty lines.
    let bytes = src.as_bytes();
    let mut line = super::edit::line_start(src, start);
    let (header_end, indicators) = loop {
        if line == 0 {
            return None;
        }
        let mut prev_end = line - 1;
        if bytes[prev_end] == b'\n' && prev_end > 0 && bytes[prev_end - 1] == b'\r' {
            prev_end -= 1;
        }
        let prev_start = super::edit::line_start(src, prev_end);
        let l = &src[prev_start..prev_end];
        let l = l.find(" #").map_or(l, |i| &l[..i]).trim_end();
        if let Some(i) = l.rfind(['|', '>']) {
            let ind = &l[i + 1..];
            if ind.chars().all(|c| matches!(c, '-' | '+' | '0'..='9')) {
                break (prev_end, ind);
            }
            return None;
        }
        if !l.trim().is_empty() {
            return None;
        }
        line = prev_start;
    };
    if indicators.chars().any(|c| c.is_ascii_digit()) {
        return None;
    }
    let chomp = if indicators.contains('-') {
        '-'
    } else if indicators.contains('+') {
        '+'
    } else {
        ' '
    };
    // Lines after the header: (content start, content end excluding the break, break offset).
    let mut lines: Vec<(usize, usize)> = Vec::new();
    let mut i = header_end;
    let limit = end.max(header_end);
    while i < limit {
        // Step over the line break ending the previous line.
        if bytes.get(i) == Some(&b'\r') {
            i += 1;
        }
        if bytes.get(i) == Some(&b'\n') {
            i += 1;
        }
        if i >= limit {
            break;
        }
        let line_end = src[i..]
            .find(['\n', '\r'])
            .map_or(src.len(), |j| i + j)
            .min(limit);
        lines.push((i, line_end));
        i = line_end;
    }
    let indent = lines
        .iter()
        .map(|&(s, e)| &src[s..e])
        .find(|l| !l.trim().is_empty())
        .map_or(0, |l| l.len() - l.trim_start_matches(' ').len());
    let mut out = Out {
        text: String::new(),
        map: Vec::new(),
    };
    // Content of each line after the indentation, or None for an empty line.
    let content: Vec<Option<(usize, usize)>> = lines
        .iter()
        .map(|&(s, e)| {
            let l = &src[s..e];
            if l.trim().is_empty() && l.len() <= indent {
                None
            } else if l.len() >= indent && l[..indent].bytes().all(|c| c == b' ') {
                Some((s + indent, e))
            } else if l.trim().is_empty() {
                None
            } else {
                Some((usize::MAX, usize::MAX))
            }
        })
        .collect();
    if content
        .iter()
        .any(|c| c.is_some_and(|(s, _)| s == usize::MAX))
    {
        return None;
    }
    let mut prev: Option<(bool, usize)> = None; // (more indented, break offset)
    let mut breaks: Vec<usize> = Vec::new(); // break offsets since the last content line
    let mut last_content_end = header_end;
    for (k, c) in content.iter().enumerate() {
        let line_break_at = lines[k].1;
        match c {
            None => breaks.push(line_break_at),
            Some((s, e)) => {
                let text = &src[*s..*e];
                let more = text.starts_with([' ', '\t']);
                match prev {
                    None => {
                        for &b in &breaks {
                            out.push('\n', b);
                        }
                    }
                    Some((prev_more, prev_break)) => {
                        if folded && !prev_more && !more {
                            if breaks.is_empty() {
                                out.push(' ', prev_break);
                            } else {
                                for &b in &breaks {
                                    out.push('\n', b);
                                }
                            }
                        } else {
                            out.push('\n', prev_break);
                            for &b in &breaks {
                                out.push('\n', b);
                            }
                        }
                    }
                }
                breaks.clear();
                for (j, ch) in text.char_indices() {
                    out.push(ch, s + j);
                }
                last_content_end = *e;
                prev = Some((more, line_break_at));
            }
        }
    }
    // Chomping: what follows the last content line.
    if let Some((_, prev_break)) = prev {
        match chomp {
            '-' => {}
            '+' => {
                out.push('\n', prev_break);
                for &b in &breaks {
                    out.push('\n', b);
                }
            }
            _ => out.push('\n', prev_break),
        }
    } else if chomp == '+' {
        for &b in &breaks {
            out.push('\n', b);
        }
    }
    out.map.push(last_content_end);
    Some((out.text, out.map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn check(src: &str) {
        let parsed = crate::yaml::parse(FileId(0), src);
        let root = &parsed.docs[0].root;
        let v = root
            .get("k")
            .or_else(|| root.get("s")?.items().next()?.get("k"))
            .unwrap();
        let map = scalar_offsets(src, v).unwrap_or_else(|| panic!("no map for {src:?}"));
        let text = v.scalar_text().unwrap();
        // Every plain character maps onto itself in the source.
        for (i, c) in text.char_indices() {
            if c.is_alphanumeric() {
                assert_eq!(src[map[i]..].chars().next(), Some(c), "{src:?} at {i}");
            }
        }
    }

    #[test]
    fn maps_every_style() {
        check("k: plain text\n");
        check("k: plain\n  folded  text\n\n  more\n");
        check("k: 'it''s \"x\"'\n");
        check("k: \"a\\\"b\\n c\\\n   d\"\n");
        check("k: |\n  line one\n    more\n\n  two\n");
        check("k: |-\r\n  one\r\n  two\r\n");
        check("k: >\n  folded one\n  two\n\n  three\n    indented\n  four\n");
        check("k: |+\n  keep\n\n");
        check("s:\r\n  - k: |\r\n      echo hi\r\n  - uses: x\r\n");
    }

    #[test]
    fn literal_lines_map_to_their_source_lines() {
        let src = "k: |\r\n  echo a\r\n  git commit -m x\r\n";
        let parsed = crate::yaml::parse(FileId(0), src);
        let v = parsed.docs[0].root.get("k").unwrap();
        let map = scalar_offsets(src, v).unwrap();
        let text = v.scalar_text().unwrap();
        let i = text.find("git").unwrap();
        assert_eq!(&src[map[i]..map[i] + 3], "git");
        assert_eq!(map[text.len()], src.len() - 2);
    }
}
