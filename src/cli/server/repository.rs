//! The repository of an open file: its root, whether it is one at all, what its walk checks,
//! and where its files are on disk.

use std::path::{Path, PathBuf};

use gitops_lint::source::walk;

/// The configuration's include and exclude globs (none when it does not load: the run then
/// reports why).
pub(super) fn walk_filter(root: &Path, config: Option<&Path>) -> walk::Filter {
    let path = config
        .map(Path::to_path_buf)
        .or_else(|| gitops_lint::config::find(root));
    let confined = gitops_lint::source::fs::Root::new(root);
    let rules = gitops_lint::registry::all_meta();
    path.and_then(|p| {
        gitops_lint::config::load_in(&confined, &p, confined.reach_of(&p), &rules).ok()
    })
    .and_then(|c| walk::Filter::new(&c.include, &c.exclude).ok())
    .unwrap_or_default()
}

/// Whether the repository walk would check this file, so an open document the check skips
/// (a Helm template, an excluded file, another tool's folder) is not checked either.
pub(super) fn is_checked(root: &Path, file: &Path, filter: &walk::Filter) -> bool {
    let Ok(rel) = file.strip_prefix(root) else {
        return false;
    };
    let name = file
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    if !walk::is_yaml_name(&name) || !filter.accepts(&walk::relative(root, file)) {
        return false;
    }
    let mut dir = root.to_path_buf();
    let folders: Vec<_> = rel
        .parent()
        .map(|p| p.components().collect())
        .unwrap_or_default();
    for c in folders {
        let segment = c.as_os_str().to_string_lossy().into_owned();
        let chart = dir.join("Chart.yaml").is_file() || dir.join("Chart.yml").is_file();
        dir.push(&segment);
        if segment == ".git"
            || filter.skips_tool_dir(&segment)
            || (segment == "templates" && chart)
            || filter.excludes_dir(&walk::relative(root, &dir))
        {
            return false;
        }
    }
    true
}

/// The repository root of a file, found as the command line finds it. It may be a folder that
/// is no repository ([`is_no_repository`]).
pub(super) fn root_of(file: &Path) -> Option<PathBuf> {
    let start = file.parent()?;
    super::super::root::discover(start, &[file.to_path_buf()], None)
        .ok()
        .map(|t| t.root)
}

/// Whether a root is the file-system root or the home folder: found for a file with no
/// repository above it (or a home folder under git), it is no repository to walk, and its open
/// files are checked alone.
pub(super) fn is_no_repository(root: &Path) -> bool {
    let same = |a: &Path, b: &Path| {
        a == b
            || a.canonicalize()
                .ok()
                .zip(b.canonicalize().ok())
                .is_some_and(|(a, b)| a == b)
    };
    root.parent().is_none() || std::env::home_dir().is_some_and(|home| same(root, &home))
}

/// Where a report's file is on disk: a file checked alone has its path relative to the root.
pub(super) fn on_disk(
    repo: &gitops_lint::model::Repository,
    file: &gitops_lint::source::SourceFile,
) -> PathBuf {
    let abs = file.abs();
    if abs.is_relative() {
        repo.root.join(abs)
    } else {
        abs.into_owned()
    }
}
