//! `check --fix`: fixes applied until stable, written atomically with line endings, BOM and
//! permissions kept, never over a file that changed meanwhile; `--fix --diff` writes nothing.

use std::path::Path;
use std::process::{Command, Output};

fn run(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg("check")
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

const CRLF: &str = "apiVersion: argoproj.io/v1alpha1\r\nkind: Application\r\nmetadata: {name: crlf,\r\n  finalizers: [resources-finalizer.argocd.argoproj.io]}\r\nspec:\r\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\r\n  syncPolicy:\r\n    automated:\r\n      prune: true\r\n# gitops-lint: disable-file=argocd/schema -- a minimal Application for another rule\r\n";
const BOM: &str = "\u{feff}apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: bom,\n  finalizers: [resources-finalizer.argocd.argoproj.io]}\nspec: # gitops-lint: disable=argocd/schema -- a minimal Application for another rule\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated:\n      prune: true\n";
const PAUSED: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: paused,\n  finalizers: [resources-finalizer.argocd.argoproj.io]}\nspec: # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated:\n      enabled: false\n      prune: true\n      selfHeal: true\n# gitops-lint: disable-file=argocd/schema -- a minimal Application for another rule\n";
const MULTI: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a,\n  finalizers: [resources-finalizer.argocd.argoproj.io]}\nspec: # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated: {prune: true}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: b,\n  finalizers: [resources-finalizer.argocd.argoproj.io]}\nspec: # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated:\n      prune: false\n# gitops-lint: disable-file=argocd/schema -- a minimal Application for another rule\n";

fn repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (name, text) in [
        ("crlf.yaml", CRLF),
        ("bom.yaml", BOM),
        ("paused.yaml", PAUSED),
        ("multi.yaml", MULTI),
    ] {
        std::fs::write(dir.path().join(name), text).unwrap();
    }
    dir
}

fn read(dir: &Path, name: &str) -> String {
    std::fs::read_to_string(dir.join(name)).unwrap()
}

#[test]
fn fix_applies_safe_fixes_and_keeps_line_endings_bom_and_permissions() {
    let dir = repo();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            dir.path().join("crlf.yaml"),
            std::fs::Permissions::from_mode(0o640),
        )
        .unwrap();
    }
    let o = run(dir.path(), &["--fix", "--format", "json"]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("fixed 3 findings in 3 files"), "{err}");
    // The paused Application and `prune: false` need unsafe fixes, so they remain, and the exit
    // code says so.
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let left: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert_eq!(left, ["multi.yaml", "paused.yaml"]);

    let crlf = read(dir.path(), "crlf.yaml");
    assert_eq!(
        crlf,
        CRLF.replace(
            "      prune: true\r\n",
            "      prune: true\r\n      selfHeal: true\r\n"
        )
    );
    let bom = read(dir.path(), "bom.yaml");
    assert!(
        bom.starts_with('\u{feff}')
            && bom.ends_with(
                "  syncPolicy:\n    automated:\n      prune: true\n      selfHeal: true\n"
            ),
        "{bom:?}"
    );
    assert_eq!(
        read(dir.path(), "multi.yaml"),
        MULTI.replace(
            "automated: {prune: true}",
            "automated: {prune: true, selfHeal: true}"
        )
    );
    assert_eq!(read(dir.path(), "paused.yaml"), PAUSED);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("crlf.yaml"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o640);
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "no temporary files are left behind");

    // Fixing again changes nothing.
    let again = run(dir.path(), &["--fix"]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("fixed 0 findings in 0 files"));

    let o = run(dir.path(), &["--fix", "--unsafe-fixes"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    assert!(read(dir.path(), "paused.yaml").contains("enabled: true"));
    assert!(read(dir.path(), "multi.yaml").contains("      prune: true\n      selfHeal: true\n"));
}

#[test]
fn fix_diff_writes_nothing_and_matches_what_fix_writes() {
    let dir = repo();
    let o = run(dir.path(), &["--fix", "--diff"]);
    let diff = String::from_utf8_lossy(&o.stdout).into_owned();
    assert!(
        diff.contains("--- a/multi.yaml") && diff.contains("+++ b/crlf.yaml"),
        "{diff}"
    );
    assert_eq!(
        read(dir.path(), "multi.yaml"),
        MULTI,
        "--diff writes nothing"
    );
    let copy = tempfile::tempdir().unwrap();
    for name in ["crlf.yaml", "bom.yaml", "paused.yaml", "multi.yaml"] {
        std::fs::copy(dir.path().join(name), copy.path().join(name)).unwrap();
    }
    std::fs::write(dir.path().join("fix.patch"), &diff).unwrap();
    let git = Command::new("git")
        .args(["apply", "fix.patch"])
        .current_dir(dir.path())
        .output()
        .unwrap();
    assert!(
        git.status.success(),
        "{}",
        String::from_utf8_lossy(&git.stderr)
    );
    std::fs::remove_file(dir.path().join("fix.patch")).unwrap();
    run(copy.path(), &["--fix"]);
    for name in ["crlf.yaml", "bom.yaml", "paused.yaml", "multi.yaml"] {
        assert_eq!(
            read(dir.path(), name),
            read(copy.path(), name),
            "{name}: --diff shows what --fix writes"
        );
    }
}

#[test]
fn a_file_changed_on_disk_is_not_overwritten() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("a.yaml");
    std::fs::write(&path, "edited by someone else\n").unwrap();
    let err =
        gitops_lint::fixer::write_if_unchanged(&path, "what we read\n", "our fix\n").unwrap_err();
    assert!(err.contains("changed on disk"), "{err}");
    assert_eq!(read(dir.path(), "a.yaml"), "edited by someone else\n");
    gitops_lint::fixer::write_if_unchanged(&path, "edited by someone else\n", "our fix\n").unwrap();
    assert_eq!(read(dir.path(), "a.yaml"), "our fix\n");
}

/// One mistake, one fix: `argocd/schema` renames a misspelled `selfheal`, and
/// `argocd/sync-policy` leaves the typo to it (adding `selfHeal` beside it would make a
/// duplicate key once the rename is applied): one pass fixes it, no duplicate key is written.
#[test]
fn fixes_that_clash_are_applied_one_at_a_time() {
    let dir = tempfile::tempdir().unwrap();
    let text = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: typo\n  finalizers: [resources-finalizer.argocd.argoproj.io]\nspec:\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about other rules\n  source: {repoURL: https://example.com/a.git, path: a, targetRevision: v1}\n  destination: {server: https://kubernetes.default.svc, namespace: a}\n  syncPolicy:\n    automated:\n      prune: true\n      selfheal: true\n";
    std::fs::write(dir.path().join("typo.yaml"), text).unwrap();
    let o = run(dir.path(), &["--fix", "--format", "concise"]);
    let err = String::from_utf8_lossy(&o.stderr);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(err.contains("fixed 1 finding in 1 file"), "{err}{out}");
    let fixed = read(dir.path(), "typo.yaml");
    assert_eq!(fixed.matches("selfHeal: true").count(), 1, "{fixed}");
    assert!(!fixed.contains("selfheal"), "{fixed}");
    assert!(
        !out.contains("duplicate-key") && !out.contains("fix-failed"),
        "{out}"
    );
}

#[test]
fn fix_with_select_applies_only_the_selected_rules_fixes() {
    let dir = tempfile::tempdir().unwrap();
    // `argocd/sync-policy` renames `selfheal` when `argocd/schema` does not run; only
    // `argocd/schema` renames `RevisionHistoryLimit`.
    let text = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: typo\n  finalizers: [resources-finalizer.argocd.argoproj.io]\nspec:\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about other rules\n  RevisionHistoryLimit: 3\n  source: {repoURL: https://example.com/a.git, path: a, targetRevision: v1}\n  destination: {server: https://kubernetes.default.svc, namespace: a}\n  syncPolicy:\n    automated:\n      prune: true\n      selfheal: true\n";
    std::fs::write(dir.path().join("typo.yaml"), text).unwrap();
    let o = run(dir.path(), &["--fix", "--select", "argocd/sync-policy"]);
    let err = String::from_utf8_lossy(&o.stderr);
    let fixed = read(dir.path(), "typo.yaml");
    assert!(fixed.contains("selfHeal: true"), "{err}{fixed}");
    assert!(
        fixed.contains("RevisionHistoryLimit"),
        "a rule left out by --select must not fix: {fixed}"
    );

    std::fs::write(dir.path().join("typo.yaml"), text).unwrap();
    let o = run(dir.path(), &["--fix", "--ignore", "argocd/sync-policy"]);
    let err = String::from_utf8_lossy(&o.stderr);
    let fixed = read(dir.path(), "typo.yaml");
    assert!(
        !fixed.contains("selfheal") && !fixed.contains("RevisionHistoryLimit"),
        "{err}{fixed}"
    );
    assert_eq!(fixed.matches("selfHeal").count(), 1, "{fixed}");
}
