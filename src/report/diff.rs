//! Unified diffs of fixes (`--diff` itself is `fixer::diff`, the dry run of `--fix`).

use crate::fix::{self, Fix};
use crate::source::SourceDb;

/// The diff of one fix alone.
#[must_use]
pub fn fix_diff(fix: &Fix, sources: &SourceDb) -> String {
    let Some(first) = fix.edits.first() else {
        return String::new();
    };
    let src = sources.get(first.span.file);
    let (new, _) = fix::apply_fixes(src.text(), &[fix]);
    fix::unified_diff(&src.path, src.text(), &new)
}
