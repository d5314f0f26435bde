//! `--new-since REV`: lint the repository as it was at a git revision, in a temporary
//! worktree, and return the fingerprints of its findings.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use gitops_lint::engine::{self, Options};
use gitops_lint::report::fingerprint::fingerprints;

/// Removes the temporary worktree however the check ends.
struct Worktree {
    repo: PathBuf,
    path: PathBuf,
}

impl Drop for Worktree {
    fn drop(&mut self) {
        let _ = git(
            &self.repo,
            &[
                "worktree",
                "remove",
                "--force",
                &self.path.to_string_lossy(),
            ],
        );
        let _ = std::fs::remove_dir_all(&self.path);
        let _ = git(&self.repo, &["worktree", "prune"]);
    }
}

fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

pub fn fingerprints_at(root: &Path, rev: &str, opts: &Options) -> Result<HashSet<String>, String> {
    let top = PathBuf::from(git(root, &["rev-parse", "--show-toplevel"])?);
    let commit = git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .map_err(|_| format!("unknown revision `{rev}` (is the history fetched?)"))?;
    let root_canon = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let top_canon = top.canonicalize().unwrap_or(top);
    let prefix = root_canon
        .strip_prefix(&top_canon)
        .unwrap_or(Path::new(""))
        .to_path_buf();
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = std::env::temp_dir().join(format!("gitops-lint-{}-{nanos}", std::process::id()));
    git(
        &top_canon,
        &[
            "worktree",
            "add",
            "--detach",
            "--quiet",
            &path.to_string_lossy(),
            &commit,
        ],
    )?;
    let tree = Worktree {
        repo: top_canon,
        path,
    };
    let old_root = tree.path.join(&prefix);
    if !old_root.is_dir() {
        // The repository root did not exist then: everything is new.
        return Ok(HashSet::new());
    }
    let old_opts = Options {
        paths: vec![old_root],
        ..opts.clone()
    };
    let report = engine::run(&old_opts).map_err(|e| e.to_string())?;
    Ok(fingerprints(&report.project, &report.diagnostics)
        .into_iter()
        .collect())
}
