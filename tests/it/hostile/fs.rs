//! Hostile repositories against the file system (issue #32): nothing outside the root is read
//! or written, only regular files are read, and `--fix` says what it could not write. Each
//! case is a repository `repo/` beside an `outside/` folder whose marker files must stay unread
//! and unwritten.
#![cfg(unix)]

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// What a file outside the repository holds: never shown.
const SECRET: &str = "SECRET_TOKEN=hunter2\n";

/// An Application whose only finding has a safe fix (`selfHeal: true` added).
fn fixable(name: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name},\n  finalizers: [resources-finalizer.argocd.argoproj.io]}}\nspec:\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated:\n      prune: true\n# gitops-lint: disable-file=argocd/schema -- a minimal Application for another rule\n"
    )
}

struct Case {
    _dir: tempfile::TempDir,
    repo: PathBuf,
    outside: PathBuf,
}

/// `repo/` (a git checkout, holding the canary Application) beside `outside/` (holding
/// `secret`, `secret.rego` and `marker`).
fn case() -> Case {
    let dir = tempfile::tempdir().unwrap();
    let repo = dir.path().join("repo");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(repo.join("canary.yaml"), super::BAD_APP).unwrap();
    for name in ["secret", "secret.rego", "marker"] {
        std::fs::write(outside.join(name), SECRET).unwrap();
    }
    Case {
        _dir: dir,
        repo,
        outside,
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    assert!(Command::new("mkfifo").arg(path).status().unwrap().success());
}

struct Run {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

/// Runs gitops-lint in `cwd` with a time limit and a memory ceiling, so a read that blocks or
/// never ends fails the test instead of hanging it or exhausting the machine.
fn run(cwd: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new("sh");
    cmd.args(["-c", "ulimit -v 4194304 && exec \"$0\" \"$@\""])
        .arg(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(args)
        .current_dir(cwd)
        .env("NO_COLOR", "1");
    let o = super::run_bounded(cmd, Duration::from_secs(60));
    Run {
        code: o.status.code(),
        stdout: String::from_utf8_lossy(&o.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&o.stderr).into_owned(),
    }
}

/// Exit code 2, `expected` on standard error, and no secret anywhere.
fn assert_refused(r: &Run, expected: &str) {
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(expected),
        "expected {expected:?} in:\n{}",
        r.stderr
    );
    assert!(
        !r.stderr.contains("hunter2") && !r.stdout.contains("hunter2"),
        "a file outside the root is shown:\n{}{}",
        r.stdout,
        r.stderr
    );
}

fn assert_marker_untouched(c: &Case) {
    for name in ["secret", "secret.rego", "marker"] {
        assert_eq!(
            std::fs::read_to_string(c.outside.join(name)).unwrap(),
            SECRET
        );
    }
}

/// Item 1: links planted at the names of `--fix`'s temporary files (`.<file>.gitops-lint-<pid>.tmp`
/// before) lead to a git hook: the fix is written, the hook is not created.
#[test]
fn fix_never_writes_through_a_link_planted_at_a_temporary_name() {
    let c = case();
    std::fs::remove_file(c.repo.join("canary.yaml")).unwrap();
    let hook = c.outside.join("post-commit");
    // In this process, whose id is the one a temporary name used.
    let app = c.repo.join("app.yaml");
    write(&app, "old\n");
    let planted = c
        .repo
        .join(format!(".app.yaml.gitops-lint-{}.tmp", std::process::id()));
    symlink(&hook, &planted).unwrap();
    gitops_lint::fixer::write_if_unchanged(&app, "old\n", "new\n").unwrap();
    assert!(
        !hook.exists(),
        "the fix was written through the planted link"
    );
    assert!(std::fs::symlink_metadata(&app).unwrap().is_file());
    assert_eq!(std::fs::read_to_string(&app).unwrap(), "new\n");
    assert!(
        std::fs::symlink_metadata(&planted)
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // And from the command line, with links for the process ids it is likely to get.
    write(&app, &fixable("app"));
    let last = std::fs::read_to_string("/proc/sys/kernel/ns_last_pid")
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
        .unwrap_or(0);
    for pid in last + 1..=last + 50 {
        let _ = symlink(
            &hook,
            c.repo.join(format!(".app.yaml.gitops-lint-{pid}.tmp")),
        );
    }
    let r = run(
        &c.repo,
        &["check", "--fix", "--select", "argocd/sync-policy"],
    );
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(!hook.exists(), "the fix was written through a planted link");
    assert!(
        std::fs::read_to_string(&app)
            .unwrap()
            .contains("selfHeal: true")
    );
    assert!(std::fs::symlink_metadata(&app).unwrap().is_file());
}

/// Item 2: a configuration or policy linked out of the root, or named outside it by the
/// configuration, is refused with a located message, and its content never shown.
#[test]
fn configuration_and_policies_outside_the_root_are_refused_unread() {
    let c = case();
    symlink(c.outside.join("secret"), c.repo.join(".gitops-lint.yaml")).unwrap();
    let r = run(&c.repo, &["check"]);
    assert_refused(
        &r,
        ".gitops-lint.yaml: cannot read the configuration: a symbolic link to a place outside the repository root",
    );

    let c = case();
    write(&c.repo.join(".gitops-lint.yaml"), "policies: [policy]\n");
    std::fs::create_dir(c.repo.join("policy")).unwrap();
    symlink(c.outside.join("secret.rego"), c.repo.join("policy/x.rego")).unwrap();
    let r = run(&c.repo, &["check"]);
    assert_refused(
        &r,
        "x.rego: cannot read the policy: a symbolic link to a place outside the repository root",
    );

    let c = case();
    let named = c.outside.join("secret.rego");
    write(
        &c.repo.join(".gitops-lint.yaml"),
        &format!("policies: [{:?}]\n", named.display().to_string()),
    );
    let r = run(&c.repo, &["check"]);
    assert_refused(
        &r,
        "cannot read the policy path: outside the repository root",
    );
    assert_marker_untouched(&c);
}

/// Item 4: a report or `init` never writes through a link that leads out of the root; a link
/// inside it is written through and stays a link.
#[test]
fn reports_and_init_never_write_through_a_link_out_of_the_root() {
    let c = case();
    symlink(
        c.outside.join("marker"),
        c.repo.join("gl-code-quality.json"),
    )
    .unwrap();
    let r = run(
        &c.repo,
        &[
            "check",
            "--fail-on",
            "never",
            "--output",
            "gitlab=gl-code-quality.json",
        ],
    );
    assert_refused(
        &r,
        "cannot write gl-code-quality.json: a symbolic link to a place outside the repository root",
    );
    assert_marker_untouched(&c);

    write(&c.repo.join("reports/r.json"), "old\n");
    symlink("reports/r.json", c.repo.join("inside.json")).unwrap();
    let r = run(
        &c.repo,
        &[
            "check",
            "--fail-on",
            "never",
            "--output",
            "gitlab=inside.json",
        ],
    );
    assert_eq!(r.code, Some(0), "{}", r.stderr);
    assert!(
        std::fs::read_to_string(c.repo.join("reports/r.json"))
            .unwrap()
            .starts_with('[')
    );
    assert!(
        std::fs::symlink_metadata(c.repo.join("inside.json"))
            .unwrap()
            .file_type()
            .is_symlink()
    );

    // A link to a file that does not exist yet: writing through it would create it.
    let created = c.outside.join("created.yaml");
    symlink(&created, c.repo.join(".gitops-lint.yaml")).unwrap();
    let r = run(&c.repo, &["init"]);
    assert_refused(&r, "error: .gitops-lint.yaml already exists");
    let r = run(&c.repo, &["init", "--force"]);
    assert_refused(&r, "cannot write .gitops-lint.yaml: a broken symbolic link");
    assert!(!created.exists(), "init wrote outside the root");
}

/// Item 5: a FIFO or a device as a policy or a baseline is refused at once, with a located
/// message, instead of blocking or reading until memory runs out.
#[test]
fn fifos_and_devices_as_policies_and_baselines_are_refused() {
    let c = case();
    write(&c.repo.join(".gitops-lint.yaml"), "policies: [policy]\n");
    mkfifo(&c.repo.join("policy/x.rego"));
    let r = run(&c.repo, &["check"]);
    assert_refused(
        &r,
        "x.rego: cannot read the policy: not a regular file (a FIFO, socket or device)",
    );

    let c = case();
    write(&c.repo.join(".gitops-lint.yaml"), "policies: [policy]\n");
    std::fs::create_dir(c.repo.join("policy")).unwrap();
    symlink("/dev/zero", c.repo.join("policy/x.rego")).unwrap();
    let r = run(&c.repo, &["check"]);
    assert_refused(
        &r,
        "x.rego: cannot read the policy: a symbolic link to a place outside the repository root",
    );

    let c = case();
    symlink("/dev/zero", c.repo.join("baseline.json")).unwrap();
    mkfifo(&c.repo.join("pipe.json"));
    let r = run(&c.repo, &["check", "--baseline", "baseline.json"]);
    assert_refused(
        &r,
        "cannot read baseline baseline.json: a symbolic link to a place outside the repository root",
    );
    let r = run(&c.repo, &["check", "--baseline", "pipe.json"]);
    assert_refused(
        &r,
        "cannot read baseline pipe.json: not a regular file (a FIFO, socket or device)",
    );
    // Named by the user outside the root: the user's own, still only a regular file.
    let r = run(&c.repo, &["check", "--baseline", "/dev/zero"]);
    assert_refused(
        &r,
        "cannot read baseline /dev/zero: not a regular file (a FIFO, socket or device)",
    );
}

/// A minimal LSP client over the server's standard input and output.
struct Server {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    messages: std::sync::mpsc::Receiver<serde_json::Value>,
}

impl Server {
    fn start(cwd: &Path, home: &Path) -> Server {
        let mut child = Command::new("sh")
            .args(["-c", "ulimit -v 4194304 && exec \"$0\" \"$@\""])
            .arg(env!("CARGO_BIN_EXE_gitops-lint"))
            .arg("server")
            .current_dir(cwd)
            .env("HOME", home)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, messages) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = 0;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        len = n.parse().unwrap();
                    }
                }
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                if tx.send(serde_json::from_slice(&body).unwrap()).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take().unwrap();
        Server {
            child,
            stdin,
            messages,
        }
    }

    fn send(&mut self, message: &serde_json::Value) {
        let body = message.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        self.stdin.flush().unwrap();
    }

    fn open(&mut self, uri: &str, text: &str) {
        self.send(&serde_json::json!({"jsonrpc": "2.0", "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}}));
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Item 6: a file with no repository above it but `/` or the home folder is checked alone:
/// the server neither walks the file system nor the home folder.
#[test]
fn the_server_checks_a_lone_file_instead_of_the_root_or_the_home_folder() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let app = |name: &str| super::BAD_APP.replace("canary", name);
    std::fs::write(home.join("zz.yaml"), app("zz")).unwrap();
    // Another file of the home folder: it must not be read.
    std::fs::write(home.join("other.yaml"), app("other")).unwrap();
    let mut server = Server::start(dir.path(), &home);
    server.send(
        &serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"processId": null, "rootUri": null, "capabilities": {}}}),
    );
    server.send(&serde_json::json!({"jsonrpc": "2.0", "method": "initialized", "params": {}}));
    let in_home = format!("file://{}", home.join("zz.yaml").display());
    // A file at the file-system root that is not on disk: only its text exists.
    let at_root = format!("file:///gitops-lint-lone-{}.yaml", std::process::id());
    server.open(&in_home, &app("zz"));
    server.open(&at_root, &app("lone"));
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut pending = vec![in_home.clone(), at_root.clone()];
    let mut published = Vec::new();
    while !pending.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(m) = server.messages.recv_timeout(left) else {
            panic!("no diagnostics for {pending:?} in time; got {published:?}");
        };
        if m["method"] != "textDocument/publishDiagnostics" {
            continue;
        }
        let uri = m["params"]["uri"].as_str().unwrap().to_string();
        let rules: Vec<String> = m["params"]["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["code"].as_str().unwrap_or("").to_string())
            .collect();
        if rules.iter().any(|r| r == "argocd/sync-policy") {
            pending.retain(|p| *p != uri);
        }
        published.push(uri);
    }
    assert!(
        !published.iter().any(|u| u.ends_with("/other.yaml")),
        "the home folder was checked as a repository: {published:?}"
    );
}

/// Items 13 and 14: a fix that cannot be written (a read-only file) exits with 2, keeps the
/// finding, says which file and why, and the summary counts only the files written.
#[test]
fn a_fix_that_cannot_be_written_exits_2_and_keeps_its_finding() {
    let c = case();
    std::fs::remove_file(c.repo.join("canary.yaml")).unwrap();
    let ro = c.repo.join("ro.yaml");
    write(&ro, &fixable("ro"));
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    write(&c.repo.join("ok.yaml"), &fixable("ok"));
    let r = run(&c.repo, &["check", "--fix", "--format", "json"]);
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr
            .contains("error: ro.yaml: fixes not written: it is read-only"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("fixed 1 finding in 1 file"),
        "{}",
        r.stderr
    );
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let left: Vec<(&str, &str, u64)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap(),
                d["rule"].as_str().unwrap(),
                d["range"]["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        left,
        [
            ("ro.yaml", "argocd/sync-policy", 8),
            ("ro.yaml", "lint/fix-failed", 8)
        ]
    );
    assert_eq!(std::fs::read_to_string(&ro).unwrap(), fixable("ro"));
    assert_eq!(std::fs::metadata(&ro).unwrap().mode() & 0o777, 0o444);
    assert!(
        std::fs::read_to_string(c.repo.join("ok.yaml"))
            .unwrap()
            .contains("selfHeal")
    );
}

/// Item 13: a hard-linked file is not fixed apart from its other name.
#[test]
fn a_hard_linked_file_is_refused_not_separated_from_its_other_name() {
    let c = case();
    let app = c.repo.join("app.yaml");
    write(&app, &fixable("app"));
    std::fs::hard_link(&app, c.outside.join("app.yaml")).unwrap();
    let r = run(
        &c.repo,
        &["check", "--fix", "--select", "argocd/sync-policy"],
    );
    assert_eq!(r.code, Some(2), "{}{}", r.stdout, r.stderr);
    assert!(
        r.stderr.contains(
            "error: app.yaml: fixes not written: it has 2 hard links, which a rewrite would separate"
        ),
        "{}",
        r.stderr
    );
    assert!(r.stdout.contains("argocd/sync-policy"), "{}", r.stdout);
    let (a, b) = (
        std::fs::metadata(&app).unwrap(),
        std::fs::metadata(c.outside.join("app.yaml")).unwrap(),
    );
    assert_eq!(a.ino(), b.ino(), "the link was broken");
    assert_eq!(std::fs::read_to_string(&app).unwrap(), fixable("app"));
}

/// Items 13 and #36: a fixed file keeps its symbolic link (inside the root), its mode and its
/// owner.
#[test]
fn a_fixed_file_keeps_its_link_mode_and_owner() {
    let c = case();
    std::fs::remove_file(c.repo.join("canary.yaml")).unwrap();
    let real = c.repo.join("apps/real.yaml");
    write(&real, &fixable("app"));
    symlink("apps/real.yaml", c.repo.join("app.yaml")).unwrap();
    std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
    // As root, the file is given to another user and group, which a rewrite must keep.
    let as_root = std::fs::metadata(&c.repo).unwrap().uid() == 0
        && Command::new("chown")
            .args(["65534:65534"])
            .arg(&real)
            .status()
            .is_ok_and(|s| s.success());
    let owner = std::fs::metadata(&real).unwrap();
    let r = run(
        &c.repo,
        &["check", "--fix", "--select", "argocd/sync-policy"],
    );
    assert_eq!(r.code, Some(0), "{}{}", r.stdout, r.stderr);
    assert!(
        std::fs::symlink_metadata(c.repo.join("app.yaml"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link became a regular file"
    );
    assert!(
        std::fs::read_to_string(&real)
            .unwrap()
            .contains("selfHeal: true")
    );
    let after = std::fs::metadata(&real).unwrap();
    assert_eq!(after.mode() & 0o7777, 0o640);
    assert_eq!((after.uid(), after.gid()), (owner.uid(), owner.gid()));
    if as_root {
        assert_eq!((after.uid(), after.gid()), (65534, 65534));
    }
}

/// Item 13: two names that differ only in bytes that are not UTF-8 are two files, each checked
/// and fixed.
#[test]
fn names_that_differ_only_in_invalid_bytes_are_each_checked_and_fixed() {
    use std::os::unix::ffi::OsStrExt;
    let c = case();
    let e9 = c.repo.join(std::ffi::OsStr::from_bytes(b"caf\xe9.yaml"));
    let e8 = c.repo.join(std::ffi::OsStr::from_bytes(b"caf\xe8.yaml"));
    std::fs::write(&e9, fixable("e9")).unwrap();
    std::fs::write(&e8, fixable("e8")).unwrap();
    let r = run(
        &c.repo,
        &[
            "check",
            "--format",
            "concise",
            "--select",
            "argocd/sync-policy",
        ],
    );
    assert!(
        r.stdout.contains("caf\\xE9.yaml:8:5") && r.stdout.contains("`e9`"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("caf\\xE8.yaml:8:5") && r.stdout.contains("`e8`"),
        "{}",
        r.stdout
    );
    let r = run(
        &c.repo,
        &["check", "--fix", "--select", "argocd/sync-policy"],
    );
    assert!(
        r.stderr.contains("fixed 2 findings in 2 files"),
        "{}",
        r.stderr
    );
    for p in [&e9, &e8] {
        assert!(
            std::fs::read_to_string(p)
                .unwrap()
                .contains("selfHeal: true")
        );
    }
}

/// Item 5, in Git's own files: `.git/config` as a FIFO or a link to `/dev/zero` (read for the
/// repository's origin URL) neither blocks the run nor fills memory.
#[test]
fn a_fifo_or_device_as_git_config_does_not_stop_the_run() {
    let c = case();
    mkfifo(&c.repo.join(".git/config"));
    let r = run(&c.repo, &["check", "--format", "concise"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("canary.yaml:8:14: error[argocd/sync-policy]"),
        "{}",
        r.stdout
    );

    let c = case();
    symlink("/dev/zero", c.repo.join(".git/config")).unwrap();
    let r = run(&c.repo, &["check", "--format", "concise"]);
    assert_eq!(r.code, Some(1), "{}", r.stderr);
    assert!(
        r.stdout
            .contains("canary.yaml:8:14: error[argocd/sync-policy]"),
        "{}",
        r.stdout
    );
}
