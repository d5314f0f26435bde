//! Hostile repositories: every case gives a located diagnostic or a clean skip with a reason,
//! the other files are still checked, nothing hangs or panics, and the exit code stays truthful.

mod fs;
mod graph;
mod rego;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

mod escape;
mod linear;
mod render;
mod silence;

const BAD_APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: canary\nspec:\n  syncPolicy:\n    automated:\n      prune: false\n      selfHeal: true\n";

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gitops-lint"));
    c.env("NO_COLOR", "1");
    c
}

/// Runs `cmd` with a time limit, so a hang fails the test instead of blocking it: its output
/// is read as it comes (a large one does not block the child), and a child that outlives
/// `limit` is killed and the test fails.
fn run_bounded(mut cmd: Command, limit: Duration) -> std::process::Output {
    use std::io::Read as _;
    let mut child = cmd
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let drain = |mut pipe: Box<dyn std::io::Read + Send>| {
        std::thread::spawn(move || {
            let mut out = Vec::new();
            pipe.read_to_end(&mut out).unwrap();
            out
        })
    };
    let stdout = drain(Box::new(child.stdout.take().unwrap()));
    let stderr = drain(Box::new(child.stderr.take().unwrap()));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{cmd:?} did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    std::process::Output {
        status,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// Runs a check with a time limit (see [`run_bounded`]): its exit code and JSON report.
fn check_json(dir: &Path, limit: Duration) -> (Option<i32>, serde_json::Value) {
    let mut cmd = bin();
    cmd.args(["check", "--format", "json"]).arg(dir);
    let o = run_bounded(cmd, limit);
    let v = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), v)
}

fn findings(v: &serde_json::Value) -> Vec<(String, String, u64)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["rule"].as_str().unwrap().to_string(),
                d["range"]["start"]["line"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The canary Application is still checked next to the hostile files.
fn assert_canary(v: &serde_json::Value) {
    assert!(
        findings(v)
            .iter()
            .any(|(f, r, l)| f == "canary.yaml" && r == "argocd/sync-policy" && *l == 8),
        "{:?}",
        findings(v)
    );
}

fn repo(files: &[(&str, &[u8])]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("canary.yaml"), BAD_APP).unwrap();
    for (name, bytes) in files {
        let p = dir.path().join(name);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, bytes).unwrap();
    }
    dir
}

#[test]
fn malformed_yaml_of_every_kind_is_located() {
    let cases: &[(&str, &[u8], &str, u64)] = &[
        (
            "unclosed-double.yaml",
            b"a: 1\nb: \"open\nc: 2\n",
            "yaml/syntax",
            2,
        ),
        ("unclosed-single.yaml", b"a: 'open\n", "yaml/syntax", 1),
        (
            "unclosed-flow-seq.yaml",
            b"a: [1, 2\nb: 3\n",
            "yaml/syntax",
            2,
        ),
        ("unclosed-flow-map.yaml", b"a: {b: 1\n", "yaml/syntax", 1),
        (
            "bad-indent.yaml",
            b"a:\n    b: 1\n  c: 2\n",
            "yaml/syntax",
            3,
        ),
        ("tab-indent.yaml", b"a:\n\tb: 1\n", "yaml/syntax", 2),
        (
            "bad-escape.yaml",
            b"a: \"bad \\q escape\"\n",
            "yaml/syntax",
            1,
        ),
        (
            "two-yaml-directives.yaml",
            b"%YAML 1.2\n%YAML 1.2\n---\na: 1\n",
            "yaml/syntax",
            2,
        ),
        ("unknown-anchor.yaml", b"a: *nowhere\n", "yaml/syntax", 1),
        ("duplicate.yaml", b"a: 1\na: 2\n", "yaml/duplicate-key", 2),
    ];
    let files: Vec<(&str, &[u8])> = cases.iter().map(|(n, b, _, _)| (*n, *b)).collect();
    let dir = repo(&files);
    // Valid forms that must not be reported: unknown local tags and a %YAML 1.1 directive.
    std::fs::write(
        dir.path().join("tags.yaml"),
        "a: !custom value\nb: !!binary aGVsbG8=\n",
    )
    .unwrap();
    std::fs::write(dir.path().join("yaml11.yaml"), "%YAML 1.1\n---\na: yes\n").unwrap();
    let (code, v) = check_json(dir.path(), Duration::from_secs(30));
    assert_eq!(code, Some(1));
    assert_canary(&v);
    let got = findings(&v);
    for (name, _, rule, line) in cases {
        assert!(
            got.iter()
                .any(|(f, r, l)| f == name && r == rule && l == line),
            "{name}: expected {rule} on line {line}, got {got:?}"
        );
    }
    assert!(
        !got.iter()
            .any(|(f, _, _)| f == "tags.yaml" || f == "yaml11.yaml"),
        "{got:?}"
    );
}

#[test]
fn binary_and_non_utf8_files_are_unreadable_and_counted() {
    let dir = repo(&[
        ("binary.yaml", b"\x7fELF\x02\x01\x01\x00\x00\x00"),
        ("latin1.yaml", b"name: caf\xe9\n"),
        ("utf16.yaml", b"\xff\xfea\x00:\x00 \x001\x00"),
    ]);
    let (code, v) = check_json(dir.path(), Duration::from_secs(30));
    assert_eq!(code, Some(1));
    assert_canary(&v);
    let got = findings(&v);
    for name in ["binary.yaml", "latin1.yaml", "utf16.yaml"] {
        assert!(
            got.iter()
                .any(|(f, r, _)| f == name && r == "io/unreadable"),
            "{name}: {got:?}"
        );
    }
    assert_eq!(
        v["summary"]["unreadable"], 3,
        "the summary says the run did not see everything"
    );
}

#[test]
fn an_alias_bomb_is_bounded() {
    let mut bomb = String::from("a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
    let names: Vec<String> = (b'b'..=b'z').map(|c| (c as char).to_string()).collect();
    let mut prev = "a".to_string();
    for n in &names {
        bomb.push_str(&format!(
            "{n}: &{n} [{}]\n",
            vec![format!("*{prev}"); 10].join(", ")
        ));
        prev.clone_from(n);
    }
    let dir = repo(&[("bomb.yaml", bomb.as_bytes())]);
    let (code, v) = check_json(dir.path(), Duration::from_secs(30));
    assert_eq!(code, Some(1));
    assert_canary(&v);
    assert!(
        findings(&v)
            .iter()
            .any(|(f, r, _)| f == "bomb.yaml" && r == "yaml/resource-limit")
    );
}

#[test]
fn deep_nesting_is_capped_without_a_stack_overflow() {
    let flow = format!("a: {}1{}\n", "[".repeat(20_000), "]".repeat(20_000));
    let maps = format!("a: {}1{}\n", "{k: ".repeat(20_000), "}".repeat(20_000));
    let mut block = String::new();
    for i in 0..20_000 {
        block.push_str(&"  ".repeat(i % 2000));
        block.push_str(if i % 2000 == 1999 { "k: 1\n" } else { "k:\n" });
    }
    let dir = repo(&[
        ("flow.yaml", flow.as_bytes()),
        ("maps.yaml", maps.as_bytes()),
        ("block.yaml", block.as_bytes()),
    ]);
    let (code, v) = check_json(dir.path(), Duration::from_secs(60));
    assert_eq!(code, Some(1));
    assert_canary(&v);
    let got = findings(&v);
    for name in ["flow.yaml", "maps.yaml", "block.yaml"] {
        assert!(
            got.iter()
                .any(|(f, r, _)| f == name && r == "yaml/resource-limit"),
            "{name}: {got:?}"
        );
    }
}

/// A 100 MB values file is checked in streaming mode (syntax and keys, no tree): peak memory
/// stays near the file's size. The bound asserted: under 2.5 × the file size.
#[test]
fn a_100_mb_values_file_is_streamed_within_bounded_memory() {
    let dir = repo(&[]);
    let mut text = String::with_capacity(101 * 1024 * 1024);
    text.push_str("image:\n  repository: registry.example.com/big\n  tag: \"1.0\"\nitems:\n");
    let mut i = 0;
    while text.len() < 100 * 1024 * 1024 {
        text.push_str(&format!(
            "  - name: item-{i}\n    value: \"some text value number {i}\"\n    enabled: true\n"
        ));
        i += 1;
    }
    text.push_str("items: duplicate\n");
    std::fs::write(dir.path().join("values.yaml"), &text).unwrap();
    let time = Path::new("/usr/bin/time");
    let out = if time.exists() {
        Command::new(time)
            .args(["-f", "%M"])
            .arg(env!("CARGO_BIN_EXE_gitops-lint"))
            .args(["check", "--format", "json"])
            .arg(dir.path())
            .output()
            .unwrap()
    } else {
        bin()
            .args(["check", "--format", "json"])
            .arg(dir.path())
            .output()
            .unwrap()
    };
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_canary(&v);
    let got = findings(&v);
    assert!(
        got.iter()
            .any(|(f, r, _)| f == "values.yaml" && r == "yaml/resource-limit"),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|(f, r, _)| f == "values.yaml" && r == "yaml/duplicate-key"),
        "keys are still checked: {got:?}"
    );
    if time.exists() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let peak_kb: u64 = stderr
            .lines()
            .last()
            .and_then(|l| l.trim().parse().ok())
            .unwrap_or_else(|| panic!("{stderr}"));
        let bound_kb = (text.len() as u64 * 5 / 2) / 1024;
        assert!(
            peak_kb < bound_kb,
            "peak {peak_kb} KB is over the {bound_kb} KB bound"
        );
    }
}

#[test]
fn a_hundred_thousand_small_files() {
    let dir = repo(&[]);
    for d in 0..100 {
        let sub = dir.path().join(format!("apps/a{d}"));
        std::fs::create_dir_all(&sub).unwrap();
        for f in 0..1000 {
            std::fs::write(
                sub.join(format!("v{f}.yaml")),
                format!("image:\n  tag: \"{d}.{f}\"\n"),
            )
            .unwrap();
        }
    }
    let (code, v) = check_json(dir.path(), Duration::from_secs(120));
    assert_eq!(code, Some(1));
    assert_canary(&v);
    assert_eq!(v["summary"]["files"], 100_001);
}

#[cfg(unix)]
#[test]
fn filesystem_oddities() {
    use std::os::unix::ffi::OsStrExt;
    let dir = repo(&[]);
    let p = dir.path();
    // A symlink loop between two files, and a directory link back up (not followed).
    std::os::unix::fs::symlink(p.join("loop-b.yaml"), p.join("loop-a.yaml")).unwrap();
    std::os::unix::fs::symlink(p.join("loop-a.yaml"), p.join("loop-b.yaml")).unwrap();
    std::fs::create_dir(p.join("sub")).unwrap();
    std::os::unix::fs::symlink(p, p.join("sub/up")).unwrap();
    // A FIFO named like YAML: reading it would block forever.
    let fifo = Command::new("mkfifo")
        .arg(p.join("pipe.yaml"))
        .status()
        .unwrap();
    assert!(fifo.success());
    // A file name that is not UTF-8.
    let odd = std::ffi::OsStr::from_bytes(b"caf\xe9.yaml");
    std::fs::write(p.join(odd), BAD_APP.replace("canary", "odd-name")).unwrap();
    let (code, v) = check_json(p, Duration::from_secs(30));
    assert_eq!(code, Some(1));
    assert_canary(&v);
    let got = findings(&v);
    assert!(
        got.iter()
            .any(|(f, r, _)| f == "loop-a.yaml" && r == "io/unreadable"),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|(f, r, _)| f == "pipe.yaml" && r == "io/unreadable"),
        "{got:?}"
    );
    assert!(
        got.iter()
            .any(|(f, r, _)| f == "caf\u{fffd}.yaml" && r == "argocd/sync-policy"),
        "a non-UTF-8 name is read and shown lossily: {got:?}"
    );
    assert!(
        !got.iter().any(|(f, _, _)| f.starts_with("sub/")),
        "directory links are not followed: {got:?}"
    );
}

/// A file the process may not read. As root, the check runs as `nobody` (setpriv), since root
/// reads everything.
#[cfg(unix)]
#[test]
fn a_file_without_read_permission() {
    use std::os::unix::fs::PermissionsExt;
    let dir = repo(&[("secret.yaml", b"a: 1\n")]);
    let p = dir.path();
    std::fs::set_permissions(p, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(
        p.join("canary.yaml"),
        std::fs::Permissions::from_mode(0o644),
    )
    .unwrap();
    std::fs::set_permissions(
        p.join("secret.yaml"),
        std::fs::Permissions::from_mode(0o000),
    )
    .unwrap();
    let uid = Command::new("id").arg("-u").output().unwrap();
    let root = String::from_utf8_lossy(&uid.stdout).trim() == "0";
    let out = if root {
        Command::new("setpriv")
            .args(["--reuid=65534", "--regid=65534", "--clear-groups"])
            .arg(env!("CARGO_BIN_EXE_gitops-lint"))
            .args(["check", "--format", "json"])
            .arg(p)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    } else {
        bin()
            .args(["check", "--format", "json"])
            .arg(p)
            .output()
            .unwrap()
    };
    let v: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    assert_eq!(out.status.code(), Some(1));
    assert_canary(&v);
    let d = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["file"] == "secret.yaml")
        .expect("secret.yaml is reported");
    assert_eq!(d["rule"], "io/unreadable");
    assert!(
        d["message"].as_str().unwrap().contains("permission denied"),
        "{d}"
    );
    assert_eq!(v["summary"]["unreadable"], 1);
}

/// Inputs that crashed a fuzz target once (`fuzz/regressions/<target>/`), replayed through
/// the same property: check, apply the safe fixes, check again; no panic, fixed files parse.
#[test]
fn fuzz_regressions_stay_fixed() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/fix_apply");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let bytes = std::fs::read(entry.unwrap().path()).unwrap();
        // libfuzzer's `(bool, &str)`: the first byte is the flag, the rest the text.
        let (flag, rest) = bytes.split_first().unwrap();
        // arbitrary's `&str` is the longest valid UTF-8 prefix of the rest.
        let valid = std::str::from_utf8(rest).map_or_else(|e| e.valid_up_to(), str::len);
        let text = std::str::from_utf8(&rest[..valid]).unwrap();
        let name = if flag & 1 == 1 {
            ".gitlab-ci.yml"
        } else {
            "app.yaml"
        };
        let report = gitops_lint::engine::check_texts(
            &[(name, text)],
            gitops_lint::config::Config::default(),
        );
        assert!(
            !report
                .diagnostics
                .iter()
                .any(|d| d.message.contains("internal error")),
            "{:?}",
            report.diagnostics
        );
        // Fixing until stable takes at most 10 passes.
        let mut current = text.to_string();
        let mut stable = false;
        for _ in 0..10 {
            let report = gitops_lint::engine::check_texts(
                &[(name, &current)],
                gitops_lint::config::Config::default(),
            );
            let fixes: Vec<&gitops_lint::fix::Fix> = report
                .diagnostics
                .iter()
                .filter_map(|d| d.fix.as_ref())
                .collect();
            let (fixed, _) = gitops_lint::fix::apply_fixes(&current, &fixes);
            let syntax = |t: &str| {
                gitops_lint::yaml::parse(gitops_lint::source::FileId(0), t)
                    .errors
                    .iter()
                    .any(|e| e.kind == gitops_lint::yaml::YamlErrorKind::Syntax)
            };
            assert!(
                syntax(&current) || !syntax(&fixed),
                "a fix broke the file:\n{current}\n---\n{fixed}"
            );
            if fixed == current {
                stable = true;
                break;
            }
            current = fixed;
        }
        assert!(stable, "fixes did not converge on:\n{text}");
        n += 1;
    }
    assert!(n > 0, "no regression inputs in {}", dir.display());
}
