//! The lines a change touched, file by file: at head the lines it added or rewrote, at base
//! the lines it removed or rewrote. Found by comparing the two revisions' files as read (a
//! file only one revision has is wholly changed), so uncommitted edits count and no git
//! output is parsed.

use std::collections::{BTreeMap, BTreeSet};

use similar::{DiffOp, TextDiff};

use crate::model::Repository;
use crate::source::SourceFile;

/// Changed lines (1-based) by repository-relative path, at each revision.
#[derive(Debug, Default, Clone)]
pub struct ChangedLines {
    pub head: BTreeMap<String, BTreeSet<usize>>,
    pub base: BTreeMap<String, BTreeSet<usize>>,
}

impl ChangedLines {
    /// Compares every file (YAML files and chart templates) the two repositories read. A file
    /// whose two revisions share one text (the base made from the head's load) is not read.
    #[must_use]
    pub fn between(base: &Repository, head: &Repository) -> ChangedLines {
        fn files(r: &Repository) -> BTreeMap<String, &SourceFile> {
            r.sources
                .all()
                .filter(|f| f.unreadable.is_none())
                .map(|f| (f.path.clone(), f))
                .collect()
        }
        let (old, new) = (files(base), files(head));
        let mut out = ChangedLines::default();
        let all = |t: &str| (1..=t.lines().count().max(1)).collect::<BTreeSet<usize>>();
        for (path, n) in &new {
            match old.get(path) {
                None => {
                    out.head.insert(path.clone(), all(n.text()));
                }
                Some(o) if o.shares_text_with(n) => {}
                Some(o) if o.text() != n.text() => {
                    let (b, h) = line_changes(o.text(), n.text());
                    if !b.is_empty() {
                        out.base.insert(path.clone(), b);
                    }
                    if !h.is_empty() {
                        out.head.insert(path.clone(), h);
                    }
                }
                Some(_) => {}
            }
        }
        for (path, o) in &old {
            if !new.contains_key(path) {
                out.base.insert(path.clone(), all(o.text()));
            }
        }
        out
    }

    /// Marks `paths` (repository-relative) changed, with no line known, unless a revision's
    /// lines of them are: files the repositories do not read as YAML (a kustomize generator's
    /// input, a file a chart reads through `.Files`), so that the Applications reading them
    /// count as affected.
    pub fn touch<'a>(&mut self, paths: impl IntoIterator<Item = &'a String>) {
        for p in paths {
            if !self.head.contains_key(p) && !self.base.contains_key(p) {
                self.head.insert(p.clone(), BTreeSet::new());
            }
        }
    }

    /// Whether `line` of `path` changed at this revision.
    #[must_use]
    pub fn contains(&self, at_base: bool, path: &str, line: usize) -> bool {
        let side = if at_base { &self.base } else { &self.head };
        side.get(path).is_some_and(|l| l.contains(&line))
    }

    /// The changed lines of `path` in `lines` (inclusive), at this revision.
    #[must_use]
    pub fn within(&self, at_base: bool, path: &str, lines: (usize, usize)) -> Vec<usize> {
        let side = if at_base { &self.base } else { &self.head };
        side.get(path).map_or_else(Vec::new, |l| {
            l.range(lines.0..=lines.1.max(lines.0)).copied().collect()
        })
    }
}

/// The removed lines of `old` and the added lines of `new` (1-based).
fn line_changes(old: &str, new: &str) -> (BTreeSet<usize>, BTreeSet<usize>) {
    let diff = TextDiff::from_lines(old, new);
    let (mut b, mut h) = (BTreeSet::new(), BTreeSet::new());
    for op in diff.ops() {
        match *op {
            DiffOp::Delete {
                old_index, old_len, ..
            } => b.extend(old_index + 1..=old_index + old_len),
            DiffOp::Insert {
                new_index, new_len, ..
            } => h.extend(new_index + 1..=new_index + new_len),
            DiffOp::Replace {
                old_index,
                old_len,
                new_index,
                new_len,
            } => {
                b.extend(old_index + 1..=old_index + old_len);
                h.extend(new_index + 1..=new_index + new_len);
            }
            DiffOp::Equal { .. } => {}
        }
    }
    (b, h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaced_lines_count_on_both_sides() {
        let (b, h) = line_changes("a\nb\nc\n", "a\nB\nc\nd\n");
        assert_eq!(b.into_iter().collect::<Vec<_>>(), [2]);
        assert_eq!(h.into_iter().collect::<Vec<_>>(), [2, 4]);
    }
}
