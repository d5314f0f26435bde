//! Fixes are text edits on the original file, never a re-serialisation of YAML, so comments
//! and formatting survive.

use crate::source::Span;

/// How safe a fix is to apply without review.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Applicability {
    DisplayOnly,
    Unsafe,
    Safe,
}

/// Replace the bytes of `span` with `replacement` (an insertion when the span is empty).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// Lowercase, no trailing period: "set `prune: true`".
    pub title: String,
    pub applicability: Applicability,
    /// Sorted by start and non-overlapping.
    pub edits: Vec<Edit>,
}

impl Fix {
    /// A fix from edits; `None` when the edits are empty or overlap.
    #[must_use]
    pub fn new(
        title: impl Into<String>,
        applicability: Applicability,
        mut edits: Vec<Edit>,
    ) -> Option<Fix> {
        edits.sort_by_key(|e| (e.span.file, e.span.start, e.span.end));
        let overlapping = edits
            .windows(2)
            .any(|w| w[0].span.file == w[1].span.file && w[0].span.end > w[1].span.start);
        if edits.is_empty() || overlapping {
            return None;
        }
        Some(Fix {
            title: title.into(),
            applicability,
            edits,
        })
    }

    #[must_use]
    pub fn safe(title: impl Into<String>, edits: Vec<Edit>) -> Option<Fix> {
        Fix::new(title, Applicability::Safe, edits)
    }

    /// First byte the fix touches, for ordering.
    #[must_use]
    pub fn start(&self) -> (crate::source::FileId, u32) {
        self.edits
            .first()
            .map_or((crate::source::FileId(0), 0), |e| {
                (e.span.file, e.span.start)
            })
    }
}

/// Applies edits (all in one file) to `text`. Edits that overlap an earlier one are skipped;
/// the return value says how many were applied.
#[must_use]
pub fn apply_edits(text: &str, edits: &[&Edit]) -> (String, usize) {
    let mut sorted: Vec<&Edit> = edits.to_vec();
    sorted.sort_by_key(|e| (e.span.start, e.span.end));
    let mut out = String::with_capacity(text.len() + 64);
    let mut last = 0usize;
    let mut applied = 0;
    for e in sorted {
        let (s, t) = (e.span.start as usize, e.span.end as usize);
        if s < last || t > text.len() || !text.is_char_boundary(s) || !text.is_char_boundary(t) {
            continue;
        }
        out.push_str(&text[last..s]);
        out.push_str(&e.replacement);
        last = t;
        applied += 1;
    }
    out.push_str(&text[last..]);
    (out, applied)
}

/// Applies whole fixes to one file's text: a fix is applied only if none of its edits
/// touches a previously applied fix (touching counts as overlapping). Returns the new text
/// and the indexes of the fixes applied.
#[must_use]
pub fn apply_fixes(text: &str, fixes: &[&Fix]) -> (String, Vec<usize>) {
    let mut order: Vec<usize> = (0..fixes.len()).collect();
    order.sort_by_key(|&i| fixes[i].start());
    let mut chosen: Vec<&Edit> = Vec::new();
    let mut ranges: Vec<(u32, u32)> = Vec::new();
    let mut applied = Vec::new();
    for i in order {
        let clashes = fixes[i].edits.iter().any(|e| {
            ranges
                .iter()
                .any(|&(s, t)| e.span.start <= t && s <= e.span.end)
        });
        if clashes {
            continue;
        }
        for e in &fixes[i].edits {
            ranges.push((e.span.start, e.span.end));
            chosen.push(e);
        }
        applied.push(i);
    }
    let (out, _) = apply_edits(text, &chosen);
    (out, applied)
}

/// A unified diff of `old` → `new` with `a/` and `b/` headers, as `git apply` takes it.
#[must_use]
pub fn unified_diff(path: &str, old: &str, new: &str) -> String {
    let diff = similar::TextDiff::from_lines(old, new);
    let mut out = diff
        .unified_diff()
        .context_radius(3)
        .header(&format!("a/{path}"), &format!("b/{path}"))
        .missing_newline_hint(true)
        .to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn edit(s: usize, e: usize, r: &str) -> Edit {
        Edit {
            span: Span::new(FileId(0), s, e),
            replacement: r.into(),
        }
    }

    #[test]
    fn overlapping_fix_is_deferred() {
        let a = Fix::safe("a", vec![edit(0, 1, "X")]).unwrap();
        let b = Fix::safe("b", vec![edit(1, 2, "Y")]).unwrap();
        let c = Fix::safe("c", vec![edit(3, 3, "Z")]).unwrap();
        let (out, applied) = apply_fixes("abcd", &[&a, &b, &c]);
        assert_eq!(out, "XbcZd");
        assert_eq!(applied, vec![0, 2]);
    }

    #[test]
    fn overlapping_edits_make_no_fix() {
        assert!(Fix::safe("x", vec![edit(0, 3, "a"), edit(2, 4, "b")]).is_none());
        assert!(Fix::safe("x", vec![]).is_none());
    }

    #[test]
    fn diff_has_git_headers() {
        let d = unified_diff("x/y.yaml", "a: 1\n", "a: 2\n");
        assert!(d.starts_with("--- a/x/y.yaml\n+++ b/x/y.yaml\n@@"));
    }
}
