//! Byte offsets ↔ LSP positions (UTF-16 code units, as LSP 3.16 requires by default), and
//! `file://` URIs ↔ paths.
//!
//! Line breaks are `\n`, `\r\n` and a lone `\r` (LSP and YAML agree). A UTF-8 byte order mark
//! is not a column: editors drop it from the buffer they show.

use std::path::{Path, PathBuf};

use lsp_types::{Position, Range, Uri};

/// Line starts of one text, for conversions in both directions.
pub struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    pub fn new(text: &'a str) -> Self {
        let bytes = text.as_bytes();
        let mut starts = vec![if text.starts_with('\u{feff}') { 3 } else { 0 }];
        for (i, b) in bytes.iter().enumerate() {
            match b {
                b'\n' => starts.push(i + 1),
                b'\r' if bytes.get(i + 1) != Some(&b'\n') => starts.push(i + 1),
                _ => {}
            }
        }
        Lines { text, starts }
    }

    /// The position of byte `offset`; an offset past the end or inside a character is clamped.
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        };
        let start = self.starts[line].min(offset);
        let character = self.text[start..offset].encode_utf16().count();
        Position::new(to_u32(line), to_u32(character))
    }

    pub fn range(&self, start: usize, end: usize) -> Range {
        Range::new(self.position(start), self.position(end))
    }

    /// The byte offset of `pos`; a column past the line's end is the line's end (before its
    /// break), a line past the end is the end of the text.
    pub fn offset(&self, pos: Position) -> usize {
        let Some(&start) = self.starts.get(pos.line as usize) else {
            return self.text.len();
        };
        let end = self.line_end(pos.line as usize);
        let mut units = 0u32;
        for (i, c) in self.text[start..end].char_indices() {
            if units >= pos.character {
                return start + i;
            }
            units += u32::try_from(c.len_utf16()).unwrap_or(2);
        }
        end
    }

    /// Byte offset where `line` ends, before its line break.
    pub fn line_end(&self, line: usize) -> usize {
        let start = self.starts.get(line).copied().unwrap_or(self.text.len());
        let mut end = self
            .starts
            .get(line + 1)
            .copied()
            .unwrap_or(self.text.len());
        let bytes = self.text.as_bytes();
        while end > start && matches!(bytes[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        end
    }

    /// Byte offset where `line` starts (after the BOM on line 0).
    pub fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(self.text.len())
    }

    pub fn line_of(&self, offset: usize) -> usize {
        match self.starts.binary_search(&offset) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// The local path of a `file://` URI.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file://host/path` names a remote host; only the local form is served.
    let path = rest.strip_prefix("localhost").unwrap_or(rest);
    if !path.starts_with('/') {
        return None;
    }
    let path = path.split(['?', '#']).next().unwrap_or(path);
    let bytes = percent_decode(path)?;
    let text = String::from_utf8(bytes).ok()?;
    Some(PathBuf::from(text))
}

fn percent_decode(s: &str) -> Option<Vec<u8>> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = s.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(out)
}

/// The `file://` URI of an absolute path, percent-encoding what RFC 3986 requires.
pub fn path_to_uri(path: &Path) -> Option<Uri> {
    let mut s = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_with_crlf_bom_and_wide_characters() {
        let text = "\u{feff}a: é\r\nb: 😀x\rc\n";
        let l = Lines::new(text);
        assert_eq!(l.position(3), Position::new(0, 0));
        let x = text.find('x').unwrap();
        // `b: ` is 3 units, the emoji 2.
        assert_eq!(l.position(x), Position::new(1, 5));
        assert_eq!(l.offset(Position::new(1, 5)), x);
        assert_eq!(l.position(text.find('c').unwrap()), Position::new(2, 0));
        // Inside the emoji: clamped to its start.
        let emoji = text.find('😀').unwrap();
        assert_eq!(l.position(emoji + 1), Position::new(1, 3));
        // Past the line's end: before `\r\n`.
        assert_eq!(l.offset(Position::new(0, 99)), text.find('\r').unwrap());
        assert_eq!(l.offset(Position::new(99, 0)), text.len());
        assert_eq!(l.position(text.len() + 5), Position::new(3, 0));
    }

    #[test]
    fn uris_round_trip() {
        let p = Path::new("/tmp/a b/é#.yaml");
        let uri = path_to_uri(p).unwrap();
        assert_eq!(uri.as_str(), "file:///tmp/a%20b/%C3%A9%23.yaml");
        assert_eq!(uri_to_path(&uri).unwrap(), p);
        assert!(uri_to_path(&"untitled:1".parse().unwrap()).is_none());
    }
}
