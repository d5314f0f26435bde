//! Strings that remember where each of their byte ranges came from.

use std::ops::Range;
use std::rc::Rc;
use std::sync::Arc;

/// An opaque handle the caller attaches to a value (e.g. an index into its table of values-file
/// spans). The engine only copies it into the output's segments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Origin(pub u64);

/// Where a byte range of rendered text came from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    /// Literal text of a template: the template's name (its file) and the byte range in it.
    Template { name: Arc<str>, range: Range<usize> },
    /// The text of one value the caller supplied.
    Value(Origin),
}

/// A segment: a byte range of some text and its source.
pub type Segment = (Range<usize>, Source);

/// An immutable string with provenance segments (sorted, non-overlapping; gaps are unknown).
#[derive(Clone, Debug, Default)]
pub struct Text {
    s: Rc<str>,
    segs: Rc<[Segment]>,
}

impl Text {
    #[must_use]
    pub fn plain(s: &str) -> Self {
        Self {
            s: Rc::from(s),
            segs: Rc::from(Vec::new()),
        }
    }

    #[must_use]
    pub fn with_source(s: &str, source: Source) -> Self {
        let segs: Vec<Segment> = if s.is_empty() {
            Vec::new()
        } else {
            vec![(0..s.len(), source)]
        };
        Self {
            s: Rc::from(s),
            segs: Rc::from(segs),
        }
    }

    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.s
    }

    #[must_use]
    pub fn segments(&self) -> &[Segment] {
        &self.segs
    }

    /// A copy of this text where every byte without a source gets `fallback`.
    #[must_use]
    pub fn or_source(&self, fallback: &Source) -> Text {
        let mut b = TextBuf::default();
        b.push_text_or(self, fallback);
        b.finish()
    }
}

impl PartialEq for Text {
    fn eq(&self, other: &Self) -> bool {
        self.s == other.s
    }
}

/// A growing string with provenance.
#[derive(Clone, Debug, Default)]
pub struct TextBuf {
    pub(crate) s: String,
    pub(crate) segs: Vec<Segment>,
}

impl TextBuf {
    pub fn len(&self) -> usize {
        self.s.len()
    }

    pub fn is_empty(&self) -> bool {
        self.s.is_empty()
    }

    pub fn as_str(&self) -> &str {
        &self.s
    }

    pub fn push_plain(&mut self, s: &str) {
        self.s.push_str(s);
    }

    pub fn push_source(&mut self, s: &str, source: Source) {
        if s.is_empty() {
            return;
        }
        let start = self.s.len();
        self.s.push_str(s);
        self.add_seg(start..self.s.len(), source);
    }

    fn add_seg(&mut self, range: Range<usize>, source: Source) {
        // Merge with the previous segment when it continues the same template range.
        if let Some((prev, Source::Template { name, range: r })) = self.segs.last_mut() {
            if let Source::Template {
                name: n2,
                range: r2,
            } = &source
            {
                // Only literal copies merge: their output and template ranges have equal lengths.
                let literal = prev.len() == r.len() && range.len() == r2.len();
                if literal && prev.end == range.start && name == n2 && r.end == r2.start {
                    prev.end = range.end;
                    r.end = r2.end;
                    return;
                }
            }
        }
        self.segs.push((range, source));
    }

    pub fn push_text(&mut self, t: &Text) {
        self.push_text_range(t, 0..t.s.len());
    }

    /// Appends `t`, giving `fallback` to the bytes `t` has no source for.
    pub fn push_text_or(&mut self, t: &Text, fallback: &Source) {
        let mut at = 0;
        for (r, src) in t.segs.iter() {
            if r.start > at {
                self.push_source(&t.s[at..r.start], fallback_at(fallback, at..r.start));
            }
            self.push_source(&t.s[r.clone()], src.clone());
            at = r.end;
        }
        if at < t.s.len() {
            self.push_source(&t.s[at..], fallback_at(fallback, at..t.s.len()));
        }
    }

    /// Appends `t[range]` with the matching parts of its segments.
    pub fn push_text_range(&mut self, t: &Text, range: Range<usize>) {
        let base = self.s.len();
        self.s.push_str(&t.s[range.clone()]);
        for (r, src) in t.segs.iter() {
            let start = r.start.max(range.start);
            let end = r.end.min(range.end);
            if start >= end {
                continue;
            }
            let src = match src {
                Source::Template { name, range: tr } => Source::Template {
                    name: name.clone(),
                    range: tr.start + (start - r.start)..tr.start + (end - r.start),
                },
                Source::Value(o) => Source::Value(*o),
            };
            self.add_seg(base + start - range.start..base + end - range.start, src);
        }
    }

    pub fn finish(self) -> Text {
        Text {
            s: Rc::from(self.s),
            segs: Rc::from(self.segs),
        }
    }

    pub fn into_parts(self) -> (String, Vec<Segment>) {
        (self.s, self.segs)
    }
}

/// A whole-action fallback source stays whole: a template range is not sliced by position.
fn fallback_at(fallback: &Source, _range: Range<usize>) -> Source {
    fallback.clone()
}
