//! Byte spans and the mapping from byte offsets to 1-based line/column.

/// Index of a file in the [`super::SourceDb`].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FileId(pub u32);

/// Half-open byte range `[start, end)` in one file. The only position type rules see.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub file: FileId,
    pub start: u32,
    pub end: u32,
}

impl Span {
    #[must_use]
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        Span {
            file,
            start: u32::try_from(start).unwrap_or(u32::MAX),
            end: u32::try_from(end.max(start)).unwrap_or(u32::MAX),
        }
    }

    #[must_use]
    pub fn empty(file: FileId, at: usize) -> Self {
        Span::new(file, at, at)
    }

    #[must_use]
    pub fn range(&self) -> std::ops::Range<usize> {
        self.start as usize..self.end as usize
    }

    #[must_use]
    pub fn len(&self) -> usize {
        (self.end - self.start) as usize
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }

    /// The smallest span covering both (same file assumed).
    #[must_use]
    pub fn cover(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// A position for humans: 1-based line, 1-based column counted in Unicode scalar values,
/// and the 0-based byte offset it came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
pub struct LineCol {
    pub line: usize,
    pub column: usize,
    pub offset: usize,
}

/// Line starts of one text. Line breaks are `\n`, `\r\n` and a lone `\r`, as in YAML.
/// A UTF-8 byte order mark is not counted as a column of line 1.
#[derive(Clone, Debug, Default)]
pub struct LineIndex {
    starts: Vec<u32>,
    bom: bool,
}

impl LineIndex {
    #[must_use]
    pub fn new(text: &str) -> Self {
        let bytes = text.as_bytes();
        let bom = text.starts_with('\u{feff}');
        let mut starts = vec![if bom { 3 } else { 0 }];
        // A line ends at `\n`, or at a `\r` not followed by `\n`.
        for i in memchr::memchr2_iter(b'\n', b'\r', bytes) {
            if bytes[i] == b'\n' || bytes.get(i + 1) != Some(&b'\n') {
                starts.push(u32::try_from(i + 1).unwrap_or(u32::MAX));
            }
        }
        LineIndex { starts, bom }
    }

    #[must_use]
    pub fn has_bom(&self) -> bool {
        self.bom
    }

    #[must_use]
    pub fn line_count(&self) -> usize {
        self.starts.len()
    }

    /// 0-based line number holding `offset`.
    #[must_use]
    pub fn line_of(&self, offset: usize) -> usize {
        let off = u32::try_from(offset).unwrap_or(u32::MAX);
        match self.starts.binary_search(&off) {
            Ok(i) => i,
            Err(i) => i.saturating_sub(1),
        }
    }

    /// Byte offset where 0-based `line` starts (after the BOM on line 0).
    #[must_use]
    pub fn line_start(&self, line: usize) -> usize {
        self.starts.get(line).copied().unwrap_or(u32::MAX) as usize
    }

    /// Byte range of 0-based `line` without its line break.
    #[must_use]
    pub fn line_range(&self, text: &str, line: usize) -> std::ops::Range<usize> {
        let start = self.line_start(line).min(text.len());
        let mut end = self
            .starts
            .get(line + 1)
            .map_or(text.len(), |&s| s as usize);
        let bytes = text.as_bytes();
        while end > start && matches!(bytes[end - 1], b'\n' | b'\r') {
            end -= 1;
        }
        start..end
    }

    /// Line/column of a byte offset; an offset inside a multi-byte character or a line break
    /// is clamped to the character or line end it belongs to.
    #[must_use]
    pub fn line_col(&self, text: &str, offset: usize) -> LineCol {
        let offset = offset.min(text.len());
        let line = self.line_of(offset);
        let start = self.line_start(line).min(offset);
        let mut column = 1;
        if let Some(prefix) = text.get(start..offset) {
            column += prefix.chars().count();
        } else {
            // Not on a char boundary: count whole characters before it.
            column += text[start..]
                .char_indices()
                .take_while(|(i, _)| start + i < offset)
                .count()
                .saturating_sub(1);
        }
        LineCol {
            line: line + 1,
            column,
            offset,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lf_crlf_and_lone_cr() {
        let text = "a: 1\r\nbb: 2\nc: é\rd";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_count(), 4);
        assert_eq!(idx.line_col(text, 0).line, 1);
        let bb = text.find("bb").unwrap();
        assert_eq!(
            idx.line_col(text, bb),
            LineCol {
                line: 2,
                column: 1,
                offset: bb
            }
        );
        let after_e = text.find('é').unwrap() + 'é'.len_utf8();
        let lc = idx.line_col(text, after_e);
        assert_eq!((lc.line, lc.column), (3, 5));
        let d = text.find('d').unwrap();
        assert_eq!(
            (idx.line_col(text, d).line, idx.line_col(text, d).column),
            (4, 1)
        );
        assert_eq!(&text[idx.line_range(text, 0)], "a: 1");
    }

    #[test]
    fn bom_is_not_a_column() {
        let text = "\u{feff}key: v\n";
        let idx = LineIndex::new(text);
        assert!(idx.has_bom());
        let lc = idx.line_col(text, 3);
        assert_eq!((lc.line, lc.column), (1, 1));
        let v = text.find('v').unwrap();
        assert_eq!(idx.line_col(text, v).column, 6);
    }

    #[test]
    fn offset_inside_char_is_clamped() {
        let text = "é";
        let idx = LineIndex::new(text);
        assert_eq!(idx.line_col(text, 1).column, 1);
        assert_eq!(idx.line_col(text, 99).offset, 2);
    }
}
