//! The configuration as the binary reads it: every problem of a file at once, and the keys
//! that need the repository to be checked.

use std::path::Path;
use std::process::Command;

use crate::support::repo;

fn check(dir: &Path) -> (Option<i32>, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg("check")
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

const APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: a}\nspec: {project: p}\n";

#[test]
fn every_error_of_a_config_file_is_reported_at_once() {
    let dir = repo(&[
        ("app.yaml", APP),
        (
            ".gitops-lint.yaml",
            "exclud: []\nargocd:\n  root: [a.yaml]\nrules:\n  argocd/sync-polcy: error\n",
        ),
    ]);
    let (code, err) = check(dir.path());
    assert_eq!(code, Some(2), "{err}");
    for want in [
        ".gitops-lint.yaml:1:1",
        "did you mean `exclude`?",
        ".gitops-lint.yaml:3:3",
        "did you mean `roots`?",
        ".gitops-lint.yaml:5:3",
        "did you mean `argocd/sync-policy`?",
    ] {
        assert!(err.contains(want), "missing {want:?} in:\n{err}");
    }
}

#[test]
fn argocd_roots_must_name_checked_files() {
    let dir = repo(&[
        ("bootstrap/root.yaml", APP),
        (
            ".gitops-lint.yaml",
            "argocd:\n  roots:\n    - bootstrap/root.yaml\n    - bootstrap/rot.yaml\n",
        ),
    ]);
    let (code, err) = check(dir.path());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(".gitops-lint.yaml:4:7"), "{err}");
    assert!(
        err.contains("`bootstrap/rot.yaml` matches no checked file"),
        "{err}"
    );
    assert!(!err.contains("`bootstrap/root.yaml`"), "{err}");
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "argocd:\n  roots: [./bootstrap/root.yaml]\n",
    )
    .unwrap();
    let (code, err) = check(dir.path());
    assert_ne!(code, Some(2), "{err}");
}

#[test]
fn init_is_generated_from_the_config_rows() {
    let metas = gitops_lint::registry::all_meta();
    let text = gitops_lint::config::starter(&metas);
    for row in gitops_lint::config::TOP_LEVEL {
        let line = match row.init.strip_prefix("# ") {
            Some(example) => format!("\n# {}: {example}\n", row.key),
            None => format!("\n{}: {}\n", row.key, row.init),
        };
        assert!(text.contains(&line), "{}", row.key);
        assert!(text.contains(row.doc), "{}", row.key);
    }
    for section in gitops_lint::config::SECTIONS {
        for row in section.rows {
            let line = match row.init.strip_prefix("# ") {
                Some(example) => format!("\n  # {}: {example}\n", row.key),
                None => format!("\n  {}: {}\n", row.key, row.init),
            };
            assert!(text.contains(&line), "{}.{}", section.key, row.key);
        }
    }
}

/// The engine, as the language server runs it, leaves out the rules the configuration's
/// `select` and `ignore` leave out (before, only the command line filtered them).
#[test]
fn select_and_ignore_of_the_configuration_apply_to_every_run() {
    let dir = repo(&[
        ("app.yaml", APP),
        (
            ".gitops-lint.yaml",
            "select: [argocd/]\nignore: [argocd/schema]\n",
        ),
    ]);
    let opts = gitops_lint::engine::Options {
        root: Some(dir.path().to_path_buf()),
        ..Default::default()
    };
    let report = gitops_lint::engine::run(&opts).unwrap();
    let rules: std::collections::BTreeSet<&str> =
        report.diagnostics.iter().map(|d| d.rule.as_str()).collect();
    assert!(!rules.is_empty(), "argocd/ rules still report");
    assert!(
        rules
            .iter()
            .all(|r| r.starts_with("argocd/") && *r != "argocd/schema"),
        "{rules:?}"
    );
}

/// `fail_on`, `namespace` and `data` can be set in the configuration; the command line's
/// `--fail-on`, `--namespace` and `--data` replace or add to them.
#[test]
fn fail_on_namespace_and_data_come_from_the_configuration() {
    let policy = "package house\n\nimport rego.v1\n\ndeny contains msg if {\n  input.kind == \"ConfigMap\"\n  data.limits.max == 1\n  msg := \"ConfigMap `x` breaks the house limit\"\n}\n";
    let config_map = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\ndata: {a: b}\n";
    let dir = repo(&[
        ("cm.yaml", config_map),
        ("policy/house.rego", policy),
        ("limits/limits.json", "{\"limits\": {\"max\": 1}}"),
        (
            ".gitops-lint.yaml",
            "policies: [policy]\nnamespace: [house]\ndata: [limits]\nfail_on: never\n",
        ),
    ]);
    let run = |args: &[&str]| {
        let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
            .arg("check")
            .args(args)
            .current_dir(dir.path())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).into_owned(),
        )
    };
    // The configured namespace runs with the configured data; `fail_on: never` passes.
    let (code, out) = run(&[]);
    assert_eq!(code, Some(0), "{out}");
    assert!(
        out.contains("ConfigMap `x` breaks the house limit"),
        "{out}"
    );
    // `--fail-on` replaces the configured one.
    assert_eq!(run(&["--fail-on", "error"]).0, Some(1));
    // `--namespace` replaces the configured packages.
    let (_, out) = run(&["--namespace", "main"]);
    assert!(!out.contains("house limit"), "{out}");

    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "fail_on: sometimes\ndata: [nowhere]\n",
    )
    .unwrap();
    let (code, err) = check(dir.path());
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("`fail_on` must be `error`, `warning`, `info` or `never`"),
        "{err}"
    );
    assert!(err.contains("data path `nowhere` does not exist"), "{err}");
}
