//! Helpers shared by the integration tests.

use std::path::Path;
use std::process::Command;

/// `BLESS=1 cargo test` writes every golden file that differs (fixture `.fixed`/`.messages`
/// files, format snapshots, generated docs and diagrams) instead of failing: review the diff.
pub fn bless() -> bool {
    std::env::var_os("BLESS").is_some_and(|v| v != "0")
}

/// Runs git in `dir` and fails the test if git fails.
pub fn git(dir: &Path, args: &[&str]) {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// Makes `dir` a git repository with one commit of everything in it.
pub fn git_init_commit(dir: &Path, message: &str) {
    git(dir, &["init", "-q"]);
    git(dir, &["config", "user.email", "t@example.com"]);
    git(dir, &["config", "user.name", "t"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", message]);
}

/// Runs git in `dir` and returns its trimmed standard output.
pub fn git_output(dir: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}");
    String::from_utf8_lossy(&o.stdout).trim().to_string()
}

/// A temporary repository holding `files` (`(relative path, text)`).
pub fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, t) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, t).unwrap();
    }
    dir
}
