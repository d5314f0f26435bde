//! Where the repository is, for library callers that give no root: a directory argument is the
//! root, a file's root is found upward (the command line finds it upward from the current
//! directory, `cli::root`, with [`find_root`] and [`absolute`] from here).

use std::path::{Path, PathBuf};

use super::Error;
use crate::config;
use crate::source::walk;

/// The repository root for `paths`: a directory is the root; for files, the nearest ancestor
/// holding `.gitops-lint.yaml` or `.git`. Also returns the files to report on (empty: all).
pub fn resolve_root(paths: &[PathBuf]) -> Result<(PathBuf, Vec<PathBuf>), Error> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::Usage(format!("cannot read the current directory: {e}")))?;
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let mut root: Option<PathBuf> = None;
    let mut files = Vec::new();
    for p in &paths {
        let abs = absolute(&cwd, p);
        let meta =
            std::fs::metadata(&abs).map_err(|e| Error::Usage(format!("{}: {}", p.display(), e)))?;
        let this_root = if meta.is_dir() {
            abs.clone()
        } else {
            files.push(abs.clone());
            find_root(abs.parent().unwrap_or(&abs))
        };
        match &root {
            None => root = Some(this_root),
            Some(r) if *r == this_root => {}
            Some(r) => {
                return Err(Error::Usage(format!(
                    "{} belongs to repository {}, not {}: check one repository at a time",
                    p.display(),
                    this_root.display(),
                    r.display()
                )));
            }
        }
    }
    let root = root.unwrap_or(cwd);
    Ok((root, files))
}

/// The existing files and folders of `paths` (absolute), to report on; the root itself means
/// everything.
pub(super) fn filters_under(
    root: &Path,
    paths: &[PathBuf],
    overlay: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<PathBuf>, Error> {
    let mut filters = Vec::new();
    for p in paths {
        if !overlay.contains_key(&walk::relative(root, p)) {
            std::fs::metadata(p).map_err(|e| Error::Usage(format!("{}: {e}", p.display())))?;
        }
        if p != root {
            filters.push(p.clone());
        }
    }
    Ok(filters)
}

/// `p` with `.` and `..` resolved against `cwd`, without following symlinks.
#[must_use]
pub fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    // Normalise `.` and `..` without resolving symlinks.
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The repository root for `start`: the nearest ancestor holding `.gitops-lint.yaml` or `.git`,
/// else `start` itself.
#[must_use]
pub fn find_root(start: &Path) -> PathBuf {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if config::FILE_NAMES.iter().any(|n| d.join(n).is_file()) || d.join(".git").exists() {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    start.to_path_buf()
}
