//! `--diff`: every available fix as one unified diff that `git apply` accepts from the root.

use std::collections::BTreeMap;

use crate::diagnostic::Diagnostic;
use crate::fix::{self, Fix};
use crate::source::{FileId, SourceDb};

/// Applies each file's fixes (skipping any that overlap an earlier one) and diffs the result.
#[must_use]
pub fn render(diagnostics: &[Diagnostic], sources: &SourceDb) -> String {
    let mut by_file: BTreeMap<FileId, Vec<&Fix>> = BTreeMap::new();
    for d in diagnostics {
        if let Some(f) = &d.fix {
            let file = f.edits.first().map_or(d.span.file, |e| e.span.file);
            by_file.entry(file).or_default().push(f);
        }
    }
    let mut out = String::new();
    for (file, fixes) in by_file {
        let src = sources.get(file);
        let (new, _) = fix::apply_fixes(&src.text, &fixes);
        out.push_str(&fix::unified_diff(&src.path, &src.text, &new));
    }
    out
}

/// The diff of one fix alone.
#[must_use]
pub fn fix_diff(fix: &Fix, sources: &SourceDb) -> String {
    let Some(first) = fix.edits.first() else {
        return String::new();
    };
    let src = sources.get(first.span.file);
    let (new, _) = fix::apply_fixes(&src.text, &[fix]);
    fix::unified_diff(&src.path, &src.text, &new)
}
