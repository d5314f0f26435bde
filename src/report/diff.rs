//! Unified diffs of fixes (`--diff` itself is `fixer::diff`, the dry run of `--fix`).

use crate::fix::{self, Edit, Fix};
use crate::source::{SourceDb, Span};

/// Lines around a fix's edits that are diffed: one more than the diff's context, so the
/// context lines are those of the whole file.
const MARGIN_LINES: usize = 4;

/// The diff of one fix alone. Only the lines around its edits are compared: a file with
/// thousands of fixable findings is not copied and diffed whole once per finding.
#[must_use]
pub fn fix_diff(fix: &Fix, sources: &SourceDb) -> String {
    let (Some(first), Some(lo), Some(hi)) = (
        fix.edits.first(),
        fix.edits.iter().map(|e| e.span.start as usize).min(),
        fix.edits.iter().map(|e| e.span.end as usize).max(),
    ) else {
        return String::new();
    };
    let src = sources.get(first.span.file);
    let text = src.text();
    let lines = src.lines();
    let first_line = lines.line_of(lo).saturating_sub(MARGIN_LINES);
    let start = if first_line == 0 {
        0
    } else {
        lines.line_start(first_line).min(text.len())
    };
    let end = lines
        .line_start(lines.line_of(hi) + MARGIN_LINES + 1)
        .min(text.len());
    if hi > end || !text.is_char_boundary(start) || !text.is_char_boundary(end) {
        return String::new();
    }
    let window = &text[start..end];
    let shifted = Fix {
        edits: fix
            .edits
            .iter()
            .map(|e| Edit {
                span: Span::new(
                    e.span.file,
                    e.span.start as usize - start,
                    e.span.end as usize - start,
                ),
                replacement: e.replacement.clone(),
            })
            .collect(),
        ..fix.clone()
    };
    let (new, _) = fix::apply_fixes(window, &[&shifted]);
    let diff = fix::unified_diff(&src.path, window, &new);
    if first_line == 0 {
        return diff;
    }
    diff.split_inclusive('\n')
        .map(|line| shift_hunk_header(line, first_line))
        .collect()
}

/// `@@ -a,b +c,d @@` with `lines` added to both starts; other lines unchanged.
fn shift_hunk_header(line: &str, lines: usize) -> std::borrow::Cow<'_, str> {
    let shifted = line.strip_prefix("@@ -").and_then(|rest| {
        let (ranges, tail) = rest.split_once(" @@")?;
        let (old, new) = ranges.split_once(" +")?;
        let shift = |range: &str| -> Option<String> {
            let (at, count) = match range.split_once(',') {
                Some((a, c)) => (a, Some(c)),
                None => (range, None),
            };
            let at = at.parse::<usize>().ok()? + lines;
            Some(match count {
                Some(c) => format!("{at},{c}"),
                None => at.to_string(),
            })
        };
        Some(format!("@@ -{} +{} @@{tail}", shift(old)?, shift(new)?))
    });
    shifted.map_or(std::borrow::Cow::Borrowed(line), std::borrow::Cow::Owned)
}

#[cfg(test)]
mod tests {
    use super::shift_hunk_header;

    #[test]
    fn hunk_headers_move_by_the_window_start() {
        assert_eq!(
            shift_hunk_header("@@ -2,5 +2,6 @@\n", 10),
            "@@ -12,5 +12,6 @@\n"
        );
        assert_eq!(shift_hunk_header("@@ -3 +3,2 @@\n", 1), "@@ -4 +4,2 @@\n");
        assert_eq!(shift_hunk_header(" @@ -2,5\n", 1), " @@ -2,5\n");
        assert_eq!(shift_hunk_header("+  a: b\n", 1), "+  a: b\n");
    }
}
