//! Control characters in names, paths and file contents never reach a terminal or a CI log
//! raw: the human formats show them as Rust escapes (`\n`, `\x1b`), so a repository cannot
//! forge a GitHub workflow command (`::add-mask::`) or rewrite a terminal line; JSON keeps the
//! exact text.

use std::path::Path;
use std::time::Duration;

use super::linear::run_limited;

/// An Application whose name (YAML escapes in a double-quoted string) holds line breaks that
/// start workflow commands, an escape sequence that erases the line, and a carriage return.
const EVIL: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: \"evil\\n::warning file=x::forged\\n::add-mask::x\\e[2K\\rall good\"\nspec:\n  syncPolicy:\n    automated:\n      prune: true\n";

/// The shown form of the name.
const SHOWN: &str = "evil\\n::warning file=x::forged\\n::add-mask::x\\x1b[2K\\rall good";

/// A file name with an escape sequence and a line break that starts a workflow command.
const ODD_NAME: &str = "odd\x1b[1mname\n::error::x.yaml";

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &[u8]| std::fs::write(dir.path().join(rel), text).unwrap();
    write("app.yaml", EVIL.as_bytes());
    // Raw ESC in a file: YAML rejects it, and the code frame shows the line.
    write("raw.yaml", b"a: \x1b[31mred\nb: 1\n");
    write(ODD_NAME, b"a: 1\na: 2\n");
    dir
}

fn run(dir: &Path, args: &[&str]) -> String {
    run_limited(args, dir, Duration::from_secs(60)).1
}

/// No raw control character but the line break, and no line that starts a workflow command
/// other than the annotations themselves.
fn assert_inert(out: &str, format: &str) {
    assert!(
        !out.chars().any(|c| c.is_control() && c != '\n'),
        "{format}: raw control character in {out:?}"
    );
    for line in out.lines() {
        let command = line.trim_start().starts_with("::");
        let annotation = ["::error ", "::warning ", "::notice "]
            .iter()
            .any(|a| line.starts_with(a));
        assert!(!command || annotation, "{format}: forged line {line:?}");
    }
}

#[test]
fn names_paths_and_source_lines_are_escaped_in_human_formats() {
    let dir = repo();
    for format in ["text", "concise", "github"] {
        let out = run(dir.path(), &["check", ".", "--format", format]);
        assert_inert(&out, format);
        assert!(out.contains(SHOWN), "{format}: {out}");
        // A command property also escapes `:` (`%3A`).
        let path = if format == "github" {
            "odd\\x1b[1mname\\n%3A%3Aerror%3A%3Ax.yaml"
        } else {
            "odd\\x1b[1mname\\n::error::x.yaml"
        };
        assert!(out.contains(path), "{format}: {out}");
    }
    let text = run(dir.path(), &["check", "."]);
    // The code frame keeps the file's columns: one `?` for the one-byte ESC.
    assert!(text.contains("│ a: ?[31mred"), "{text}");
    let graph = run(dir.path(), &["graph", "."]);
    assert_inert(&graph, "graph");
    assert!(graph.contains(SHOWN), "{graph}");
    let dot = run(dir.path(), &["graph", ".", "--format", "dot"]);
    assert_inert(&dot, "dot");
}

#[test]
fn github_keeps_its_own_line_breaks_escaped() {
    let dir = repo();
    let out = run(dir.path(), &["check", ".", "--format", "github"]);
    let line = out
        .lines()
        .find(|l| l.contains("argocd/sync-policy"))
        .unwrap();
    // The name's line break is user text (`\n`); the one before the help is the
    // annotation's (`%0A`).
    assert!(
        line.contains(&format!("Application `{SHOWN}` syncs")),
        "{line}"
    );
    assert!(
        line.contains("`selfHeal`%0ASet `spec.syncPolicy.automated`"),
        "{line}"
    );
}

#[test]
fn json_keeps_the_exact_text() {
    let dir = repo();
    let out = run(dir.path(), &["check", ".", "--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let messages: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["message"].as_str().unwrap())
        .collect();
    assert!(
        messages
            .iter()
            .any(|m| m.contains("evil\n::warning file=x::forged\n::add-mask::x\x1b[2K\rall good")),
        "{messages:?}"
    );
    assert!(
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["file"] == ODD_NAME)
    );
}

#[test]
fn fixed_findings_on_standard_error_are_escaped() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("odd\x1b[1m\n::error::app.yaml"), EVIL).unwrap();
    let o = super::bin()
        .args(["check", ".", "--fix", "--show-fixes"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8(o.stderr).unwrap();
    assert!(
        err.contains("fixed: odd\\x1b[1m\\n::error::app.yaml:7:5: argocd/sync-policy"),
        "{err}"
    );
    assert_inert(&err, "--show-fixes");
}

/// A finding past column 65,535 of one line: miette pads a code frame with format widths,
/// which cannot pass 65,535, and the text report panicked (exit 101). The frame is left out
/// and the location printed; an invalid policy with such a line is reported the same way.
#[test]
fn a_finding_on_a_very_long_line_is_located_without_a_frame() {
    let dir = tempfile::tempdir().unwrap();
    let keys: String = (0..12_000).map(|i| format!("k{i}: 1, ")).collect();
    std::fs::write(dir.path().join("wide.yaml"), format!("{{{keys}k0: 2}}\n")).unwrap();
    let mut cmd = super::bin();
    cmd.arg("check").arg(dir.path()).args(["--format", "text"]);
    let out = super::run_bounded(cmd, Duration::from_secs(60));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("yaml/duplicate-key"), "{stdout}");
    assert!(stdout.contains("wide.yaml:1:"), "{stdout}");

    std::fs::create_dir(dir.path().join("policy")).unwrap();
    let wide = format!("package x\n\nx := {{{}\n", "\"a\": 1, ".repeat(10_000));
    std::fs::write(dir.path().join("policy/wide.rego"), wide).unwrap();
    std::fs::write(dir.path().join(".gitops-lint.yaml"), "policies: [policy]\n").unwrap();
    let mut cmd = super::bin();
    cmd.arg("check").arg(dir.path()).args(["--format", "text"]);
    let out = super::run_bounded(cmd, Duration::from_secs(60));
    assert_eq!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("wide.rego"));
}
