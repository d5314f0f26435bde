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

/// Headless Chromium opening local pages, each run with the same fresh profile and nothing
/// fetched in the background.
pub struct Chromium {
    profile: tempfile::TempDir,
}

impl Chromium {
    /// Whether `chromium` runs here.
    pub fn installed() -> bool {
        Command::new("chromium")
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success())
    }

    pub fn new() -> Self {
        Chromium {
            profile: tempfile::tempdir().unwrap(),
        }
    }

    /// Runs Chromium on `page` with `extra` arguments and returns its standard output.
    pub fn run(&self, page: &Path, extra: &[&str]) -> String {
        let o = Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
            ])
            .arg(format!("--user-data-dir={}", self.profile.path().display()))
            .args(extra)
            .arg(format!("file://{}", page.display()))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).into_owned()
    }

    /// The DOM of `page` after its scripts ran.
    pub fn dom(&self, page: &Path) -> String {
        self.run(page, &["--dump-dom"])
    }

    /// A 1280×900 screenshot of `page` written to `shot`, checked to be a PNG of that size and
    /// of a size no blank page has.
    pub fn screenshot(&self, page: &Path, shot: &Path) {
        let _ = std::fs::remove_file(shot);
        self.run(
            page,
            &[
                &format!("--screenshot={}", shot.display()),
                "--window-size=1280,900",
            ],
        );
        let png = std::fs::read(shot).unwrap();
        assert_eq!(&png[1..4], b"PNG", "{}", page.display());
        // Width and height from the IHDR chunk.
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert_eq!((width, height), (1280, 900), "{}", page.display());
        assert!(
            png.len() > 20_000,
            "{}: a {} byte screenshot is blank",
            page.display(),
            png.len()
        );
    }
}
