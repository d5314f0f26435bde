//! The files a plain directory source reads.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::model::Repository;
use crate::source::FileId;

/// The files of folder `dir` (relative to the root, `""` for the root): its own files, or every
/// file below it when `recurse`; a file is kept when its path below `dir` or its name matches
/// `include` (when set) and neither matches `exclude`.
#[must_use]
pub fn directory_files(
    repo: &Repository,
    dir: &str,
    recurse: bool,
    include: Option<&str>,
    exclude: Option<&str>,
) -> Vec<FileId> {
    let include = include.and_then(glob_set);
    let exclude = exclude.and_then(glob_set);
    let prefix = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    let files = repo.sources.files();
    let start = files.partition_point(|f| f.path.as_str() < prefix.as_str());
    let mut out = Vec::new();
    for f in &files[start..] {
        let Some(rel) = f.path.strip_prefix(&prefix) else {
            break;
        };
        if !recurse && rel.contains('/') {
            continue;
        }
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let matches = |g: &GlobSet| g.is_match(rel) || g.is_match(name);
        if include.as_ref().is_some_and(|g| !matches(g)) {
            continue;
        }
        if exclude.as_ref().is_some_and(matches) {
            continue;
        }
        out.push(f.id);
    }
    out
}

fn glob_set(patterns: &str) -> Option<GlobSet> {
    let mut b = GlobSetBuilder::new();
    // Argo CD accepts `{a,b}` and comma-free single globs.
    let g = GlobBuilder::new(patterns.trim())
        .literal_separator(false)
        .build()
        .ok()?;
    b.add(g);
    b.build().ok()
}
