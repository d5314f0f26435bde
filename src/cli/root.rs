//! Where the repository is: found upward from the current directory or the first path, as ruff
//! and git do, so `check apps` from anywhere analyses the whole repository and reports what is
//! under `apps`.

use std::path::{Component, Path, PathBuf};

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

pub use gitops_lint::engine::{absolute, find_root};

/// `path` as seen from `cwd` (`apps/x.yaml`, `../x.yaml`), for messages.
pub fn shown(cwd: &Path, path: &Path) -> String {
    let abs = absolute(cwd, path);
    let rel = relative_to(cwd, &abs);
    match rel.trim_end_matches('/') {
        "" => ".".to_string(),
        r => r.to_string(),
    }
}

/// The file named by `--stdin-filename` must be one the repository can hold: inside the
/// repository of the current directory (when that is in one), and in a folder that exists, so
/// that a path given relative to the wrong folder is not checked as a phantom file.
pub fn check_stdin_filename(cwd: &Path, file: &Path) -> Result<(), (String, String)> {
    let shown_file = shown(cwd, file);
    let marked = |d: &Path| {
        gitops_lint::config::FILE_NAMES
            .iter()
            .any(|n| d.join(n).is_file())
            || d.join(".git").exists()
    };
    if let Some(repo) = cwd.ancestors().find(|d| marked(d)) {
        if !file.starts_with(repo) {
            return Err((
                format!(
                    "`--stdin-filename {shown_file}` is outside the repository root `{}`",
                    shown(cwd, repo)
                ),
                "Give the file's path in this repository, relative to the current directory."
                    .into(),
            ));
        }
    }
    let folder = file.parent().unwrap_or(file);
    if !folder.is_dir() {
        return Err((
            format!(
                "`--stdin-filename {shown_file}`: the folder `{}` does not exist",
                shown(cwd, folder)
            ),
            "Give the file's path relative to the current directory.".into(),
        ));
    }
    Ok(())
}

/// How to write `root/…` from `cwd`: `""`, `"deploy/"`, `"../../"`; an absolute path when they
/// share no ancestor.
fn relative_to(cwd: &Path, root: &Path) -> String {
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
