//! The command line's view of where the repository is: [`discover`] (the engine's one root
//! discovery), and paths as the user sees them from the current directory.

use std::path::Path;

pub use gitops_lint::engine::{absolute, discover, find_root, relative_to};

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
