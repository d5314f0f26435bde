//! `--new-since REV`: lint the repository as it was at a git revision, in a temporary
//! worktree, and return the fingerprints of its findings. The one place that starts a
//! process: `git`, for this, for `diff`'s base (`base_tree.rs`) and its default base.

use std::collections::HashSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{Mutex, Once};

use gitops_lint::engine::{self, Options};
use gitops_lint::report::fingerprint::fingerprints;

/// Removes the temporary worktree however the check ends: on drop, and on Ctrl-C, SIGTERM or
/// SIGHUP through [`remove_on_interrupt`].
struct Worktree {
    repo: PathBuf,
    path: PathBuf,
}

impl Drop for Worktree {
    fn drop(&mut self) {
        if let Ok(mut live) = LIVE.lock() {
            *live = None;
        }
        remove(&self.repo, &self.path);
    }
}

fn remove(repo: &Path, path: &Path) {
    let _ = git(
        repo,
        &["worktree", "remove", "--force", &path.to_string_lossy()],
    );
    let _ = std::fs::remove_dir_all(path);
    let _ = git(repo, &["worktree", "prune"]);
}

/// The worktree that exists right now, for the signal handler: (repository, worktree).
static LIVE: Mutex<Option<(PathBuf, PathBuf)>> = Mutex::new(None);

/// Installs, once, a handler for Ctrl-C, SIGTERM and SIGHUP (the `ctrlc` crate with its
/// `termination` feature: one portable handler on its own thread, where Drop would never run
/// because the default action kills the process) that removes the live worktree, then exits
/// with 130 as a shell reports an interrupted command.
fn remove_on_interrupt() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            let live = LIVE.lock().ok().and_then(|mut l| l.take());
            if let Some((repo, path)) = live {
                remove(&repo, &path);
            }
            std::process::exit(130);
        });
    });
}

pub(crate) fn git(dir: &Path, args: &[&str]) -> Result<String, String> {
    git_bytes(dir, args).map(|out| String::from_utf8_lossy(&out).trim().to_string())
}

/// git's output for `args` in `dir`, as bytes (`-z` lists).
pub(crate) fn git_bytes(dir: &Path, args: &[&str]) -> Result<Vec<u8>, String> {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .map_err(|e| format!("cannot run git: {e}"))?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(out.stdout)
}

/// git started with `args` in `dir`, its output to collect with [`collect`]: two listings run
/// at once.
pub(crate) fn spawn(dir: &Path, args: &[&str]) -> Result<std::process::Child, String> {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))
}

pub(crate) fn collect(child: std::process::Child) -> Result<Vec<u8>, String> {
    let out = child.wait_with_output().map_err(|e| e.to_string())?;
    if !out.status.success() {
        return Err(String::from_utf8_lossy(&out.stderr).trim().to_string());
    }
    Ok(out.stdout)
}

/// git's output for `args` in `dir` given `input` on its standard input (written on a thread
/// of its own: git writes while it reads).
pub(crate) fn git_stdin(dir: &Path, args: &[&str], input: Vec<u8>) -> Result<Vec<u8>, String> {
    let mut child = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run git: {e}"))?;
    let mut stdin = child.stdin.take().ok_or("git's input")?;
    let writer = std::thread::spawn(move || stdin.write_all(&input));
    let mut out = Vec::new();
    child
        .stdout
        .take()
        .ok_or("git's output")?
        .read_to_end(&mut out)
        .map_err(|e| e.to_string())?;
    let status = child.wait().map_err(|e| e.to_string())?;
    let _ = writer.join();
    if !status.success() {
        let mut err = String::new();
        if let Some(mut e) = child.stderr.take() {
            let _ = e.read_to_string(&mut err);
        }
        return Err(err.trim().to_string());
    }
    Ok(out)
}

/// A checkout of a revision in a temporary worktree (outside the repository, removed on
/// drop and on interrupt): `root` is the repository root as it was then, `None` when that
/// folder did not exist at the revision.
pub(crate) struct Checkout {
    _tree: Worktree,
    pub(crate) root: Option<PathBuf>,
}

pub(crate) fn checkout(root: &Path, rev: &str) -> Result<Checkout, String> {
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
    remove_on_interrupt();
    if let Ok(mut live) = LIVE.lock() {
        *live = Some((top_canon.clone(), path.clone()));
    }
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
    Ok(Checkout {
        root: old_root.is_dir().then_some(old_root),
        _tree: tree,
    })
}

pub fn fingerprints_at(root: &Path, rev: &str, opts: &Options) -> Result<HashSet<String>, String> {
    let old = checkout(root, rev)?;
    let Some(old_root) = old.root.clone() else {
        // The repository root did not exist then: everything is new.
        return Ok(HashSet::new());
    };
    let old_opts = Options {
        root: Some(old_root),
        paths: Vec::new(),
        overlay: std::collections::BTreeMap::new(),
        ..opts.clone()
    };
    let report = engine::run(&old_opts).map_err(|e| e.to_string())?;
    Ok(fingerprints(&report.repo, &report.diagnostics)
        .into_iter()
        .collect())
}
