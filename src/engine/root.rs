//! Where the repository is: found upward from the first path (or the current directory), as ruff
//! and git do, so `check apps` from anywhere analyses the whole repository and reports what is
//! under `apps` ([`discover`], used by the command line and the language server). Library
//! callers that give no root ([`resolve_root`]) point at a repository: a directory argument is
//! the root itself.

use std::path::{Component, Path, PathBuf};

use super::Error;
use crate::config;
use crate::source::walk;

/// The repository root and the paths to report on, all absolute and normalised.
#[derive(Debug)]
pub struct Target {
    pub root: PathBuf,
    pub paths: Vec<PathBuf>,
    /// The root as seen from the current directory, ending with `/` (empty when they are the
    /// same), put in front of root-relative paths in human output.
    pub base: String,
}

/// `--root` if given, else the nearest folder, from the first path (or the current directory)
/// upward, that holds a `.gitops-lint.yaml` or `.git`; else that starting folder.
pub fn discover(cwd: &Path, paths: &[PathBuf], root: Option<&Path>) -> Result<Target, String> {
    let paths: Vec<PathBuf> = paths.iter().map(|p| absolute(cwd, p)).collect();
    let root = match root {
        Some(r) => {
            let r = absolute(cwd, r);
            if !r.is_dir() {
                return Err(format!("--root {}: not a directory", r.display()));
            }
            r
        }
        None => {
            let start = match paths.first() {
                Some(p) if p.is_dir() => p.clone(),
                Some(p) => p
                    .parent()
                    .map_or_else(|| cwd.to_path_buf(), Path::to_path_buf),
                None => cwd.to_path_buf(),
            };
            find_root(&start)
        }
    };
    for p in &paths {
        if !p.starts_with(&root) {
            return Err(format!(
                "{} is outside the repository root {}: check one repository at a time, or pass --root",
                p.display(),
                root.display()
            ));
        }
    }
    let base = relative_to(cwd, &root);
    Ok(Target { root, paths, base })
}

/// The repository root for `paths` when the caller gives none: a directory is the root; for
/// files, the nearest ancestor holding `.gitops-lint.yaml` or `.git`. Also returns the paths
/// to report on (empty: all).
pub fn resolve_root(paths: &[PathBuf]) -> Result<(PathBuf, Vec<PathBuf>), Error> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::Usage(format!("cannot read the current directory: {e}")))?;
    for p in paths {
        std::fs::metadata(absolute(&cwd, p))
            .map_err(|e| Error::Usage(format!("{}: {e}", p.display())))?;
    }
    let first = paths.first().map(|p| absolute(&cwd, p));
    let given = first.as_deref().filter(|p| p.is_dir());
    let target = discover(&cwd, paths, given).map_err(Error::Usage)?;
    let root = target.root;
    let report_on = target.paths.into_iter().filter(|p| *p != root).collect();
    Ok((root, report_on))
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
            Component::CurDir => {}
            Component::ParentDir => {
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

/// How to write `root/…` from `cwd`: `""`, `"deploy/"`, `"../../"`; an absolute path when they
/// share no ancestor.
pub fn relative_to(cwd: &Path, root: &Path) -> String {
    let cwd: Vec<Component> = cwd.components().collect();
    let root_parts: Vec<Component> = root.components().collect();
    let common = cwd
        .iter()
        .zip(&root_parts)
        .take_while(|(a, b)| a == b)
        .count();
    if common <= 1 && root.is_absolute() && cwd.len() > 1 {
        return format!("{}/", root.display());
    }
    let mut out = String::new();
    for _ in common..cwd.len() {
        out.push_str("../");
    }
    for c in &root_parts[common..] {
        out.push_str(&c.as_os_str().to_string_lossy());
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_from_the_current_directory_to_the_root() {
        assert_eq!(relative_to(Path::new("/r"), Path::new("/r")), "");
        assert_eq!(
            relative_to(Path::new("/r"), Path::new("/r/deploy")),
            "deploy/"
        );
        assert_eq!(relative_to(Path::new("/r/a/b"), Path::new("/r")), "../../");
        assert_eq!(relative_to(Path::new("/r/a"), Path::new("/r/b")), "../b/");
        assert_eq!(relative_to(Path::new("/x"), Path::new("/r")), "/r/");
    }

    #[test]
    fn root_is_found_upward_from_the_first_path() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        std::fs::write(root.join(".gitops-lint.yaml"), "").unwrap();
        std::fs::create_dir_all(root.join("apps/a")).unwrap();
        let t = discover(&root.join("apps"), &[PathBuf::from("a")], None).unwrap();
        assert_eq!(t.root, root);
        assert_eq!(t.paths, vec![root.join("apps/a")]);
        assert_eq!(t.base, "../");
        let t = discover(&root.join("apps"), &[], Some(Path::new("a"))).unwrap();
        assert_eq!(t.root, root.join("apps/a"));
        assert!(discover(&root, &[PathBuf::from("apps")], Some(Path::new("apps/a"))).is_err());
    }
}
