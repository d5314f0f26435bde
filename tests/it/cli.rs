//! Tests of the built binary: exit codes, formats, `--diff` with `git apply`, file arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gitops-lint"));
    c.env("NO_COLOR", "1");
    c
}

fn run(args: &[&str], cwd: &Path) -> Output {
    bin()
        .args(args)
        .current_dir(cwd)
        .output()
        .expect("run gitops-lint")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/examples/cnp-gitops")
}

const BAD_APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop,\n  finalizers: [resources-finalizer.argocd.argoproj.io]}\nspec:\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated:\n      prune: false\n";
const GOOD_APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ok,\n  finalizers: [resources-finalizer.argocd.argoproj.io]}\nspec:\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated:\n      prune: true\n      selfHeal: true\n";

fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for (p, t) in files {
        let path = dir.path().join(p);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, t).unwrap();
    }
    dir
}

#[test]
fn exit_codes_follow_fail_on() {
    let clean = repo(&[("app.yaml", GOOD_APP)]);
    assert_eq!(run(&["check"], clean.path()).status.code(), Some(0));
    let dirty = repo(&[("app.yaml", BAD_APP)]);
    assert_eq!(run(&["check"], dirty.path()).status.code(), Some(1));
    assert_eq!(
        run(&["check", "--fail-on", "never"], dirty.path())
            .status
            .code(),
        Some(0)
    );
    let cfg = repo(&[
        ("app.yaml", BAD_APP),
        (
            ".gitops-lint.yaml",
            "rules:\n  argocd/sync-policy: warning\n",
        ),
    ]);
    assert_eq!(run(&["check"], cfg.path()).status.code(), Some(0));
    assert_eq!(
        run(&["check", "--fail-on", "warning"], cfg.path())
            .status
            .code(),
        Some(1)
    );
}

#[test]
fn usage_and_config_errors_exit_2_with_a_location() {
    let dir = repo(&[
        ("app.yaml", GOOD_APP),
        (".gitops-lint.yaml", "rules:\n  argocd/sync-polcy: error\n"),
    ]);
    let o = run(&["check"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains(".gitops-lint.yaml:2:3"), "{err}");
    assert!(err.contains("did you mean `argocd/sync-policy`?"), "{err}");
    assert_eq!(
        run(&["check", "no/such/path"], dir.path()).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["check", "--format", "xml"], dir.path()).status.code(),
        Some(2)
    );
    assert_eq!(
        run(&["explain", "argocd/nope"], dir.path()).status.code(),
        Some(2)
    );
}

#[test]
fn json_output_matches_the_contract() {
    let dir = repo(&[("argocd/shop/prod.yaml", BAD_APP)]);
    let o = run(&["check", "--format", "json"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["version"], 1);
    assert_eq!(v["tool"]["name"], "gitops-lint");
    let d = &v["diagnostics"][0];
    assert_eq!(d["rule"], "argocd/sync-policy");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["file"], "argocd/shop/prod.yaml");
    assert_eq!(d["range"]["start"]["line"], 9);
    assert_eq!(d["range"]["start"]["column"], 14);
    assert_eq!(
        d["range"]["start"]["offset"],
        BAD_APP.find("false").unwrap()
    );
    assert_eq!(d["range"]["end"]["column"], 19);
    assert!(d["labels"].is_array());
    assert!(d["help"].is_string());
    assert_eq!(d["fix"]["applicability"], "safe");
    assert!(
        d["fix"]["diff"]
            .as_str()
            .unwrap()
            .starts_with("--- a/argocd/shop/prod.yaml\n+++ b/argocd/shop/prod.yaml\n@@")
    );
    let keys: Vec<&str> = v["summary"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    for k in [
        "files",
        "documents",
        "errors",
        "warnings",
        "infos",
        "suppressed",
        "fixable",
        "elapsed_ms",
    ] {
        assert!(keys.contains(&k), "summary lacks {k}");
    }
    assert_eq!(v["summary"]["errors"], 1);
    assert_eq!(v["summary"]["fixable"], 1);
}

#[test]
fn diff_output_is_accepted_by_git_apply() {
    let dir = repo(&[
        ("argocd/shop/prod.yaml", BAD_APP),
        (
            "argocd/shop/dev.yaml",
            &BAD_APP
                .replace("prune: false\n", "prune: true\n")
                .replace("crlf", ""),
        ),
    ]);
    let o = run(&["check", "--diff"], dir.path());
    let diff = stdout(&o);
    assert!(diff.contains("+++ b/argocd/shop/prod.yaml"), "{diff}");
    let patch = dir.path().join("fix.patch");
    std::fs::write(&patch, &diff).unwrap();
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap()
    };
    assert!(git(&["init", "-q"]).status.success());
    let applied = git(&["apply", "fix.patch"]);
    assert!(
        applied.status.success(),
        "{}",
        String::from_utf8_lossy(&applied.stderr)
    );
    std::fs::remove_file(&patch).unwrap();
    assert_eq!(
        run(&["check"], dir.path()).status.code(),
        Some(0),
        "{}",
        stdout(&run(&["check"], dir.path()))
    );
}

#[test]
fn file_arguments_report_only_those_files() {
    let dir = repo(&[
        ("a.yaml", BAD_APP),
        ("b.yaml", BAD_APP),
        (".gitops-lint.yaml", ""),
    ]);
    let o = run(&["check", "--format", "json", "b.yaml"], dir.path());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let files: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, vec!["b.yaml"]);
    assert_eq!(v["summary"]["files"], 3, "the whole repository is analysed");
}

#[test]
fn text_output_has_code_frames_and_a_summary_without_colour() {
    let dir = repo(&[("app.yaml", BAD_APP)]);
    let out = stdout(&run(&["check"], dir.path()));
    assert!(out.contains("argocd/sync-policy"), "{out}");
    assert!(out.contains("app.yaml:9:14"), "{out}");
    assert!(
        out.contains("1 error, 0 warnings, 0 infos in 1 file (1 document)"),
        "{out}"
    );
    assert!(
        !out.contains('\u{1b}'),
        "no colour when NO_COLOR is set and stdout is not a terminal"
    );
}

#[test]
fn jobs_do_not_change_the_output() {
    let a = stdout(&run(&["check", "--format", "json", "-j", "1"], &example()));
    let b = stdout(&run(&["check", "--format", "json", "-j", "2"], &example()));
    let strip = |s: &str| {
        let mut v: serde_json::Value = serde_json::from_str(s).unwrap();
        v["summary"]["elapsed_ms"] = 0.into();
        v
    };
    assert_eq!(strip(&a), strip(&b));
}

#[test]
fn rules_explain_and_init() {
    let dir = repo(&[]);
    let table = stdout(&run(&["rules"], dir.path()));
    assert!(
        table.contains("argocd/sync-policy") && table.contains("FIXABLE"),
        "{table}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["rules", "--format", "json"], dir.path()))).unwrap();
    assert!(
        json.as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == "argocd/sync-policy" && r["fixable"] == true)
    );
    let doc = stdout(&run(&["explain", "argocd/sync-policy"], dir.path()));
    assert!(doc.contains("## Why is this bad?"), "{doc}");
    assert_eq!(run(&["init"], dir.path()).status.code(), Some(0));
    assert_eq!(
        run(&["init"], dir.path()).status.code(),
        Some(2),
        "init does not overwrite"
    );
    assert_eq!(
        run(&["check"], dir.path()).status.code(),
        Some(0),
        "the starter config is valid"
    );
}

#[test]
fn bad_files_are_reported_and_the_run_goes_on() {
    let dir = repo(&[
        ("a.yaml", BAD_APP),
        ("broken.yaml", "a: [1, 2\n"),
        ("dup.yaml", "a: 1\na: 2\n"),
    ]);
    std::fs::write(dir.path().join("bin.yaml"), b"\x00\x01\x02binary").unwrap();
    std::fs::write(dir.path().join("latin1.yaml"), b"name: caf\xe9\n").unwrap();
    let o = run(&["check", "--format", "json"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rules: Vec<(&str, &str)> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| (d["file"].as_str().unwrap(), d["rule"].as_str().unwrap()))
        .collect();
    assert!(rules.contains(&("a.yaml", "argocd/sync-policy")));
    assert!(rules.contains(&("bin.yaml", "io/unreadable")));
    assert!(rules.contains(&("latin1.yaml", "io/unreadable")));
    assert!(rules.contains(&("broken.yaml", "yaml/syntax")));
    assert!(rules.contains(&("dup.yaml", "yaml/duplicate-key")));
}

#[test]
fn the_example_repository_shows_the_rules() {
    let o = run(&["check", "--format", "json", "."], &example());
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let rules: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert!(rules.contains(&"argocd/sync-policy"), "{rules:?}");
    for rule in [
        "argocd/app-of-apps-cycle",
        "argocd/destination-out-of-project",
        "argocd/image-tag-none",
        "argocd/infra-boundary",
        "argocd/missing-source",
        "argocd/self-managed",
        "argocd/source-out-of-project",
        "argocd/unknown-project",
    ] {
        assert_eq!(
            rules.iter().filter(|r| **r == rule).count(),
            1,
            "{rule}: {rules:?}"
        );
    }
    assert_eq!(
        rules
            .iter()
            .filter(|r| **r == "argocd/project-bounds")
            .count(),
        3,
        "{rules:?}"
    );
    assert!(v["summary"]["suppressed"].as_u64().unwrap() >= 1);
    // The failing write-back job is reported, the fixed one is not.
    let writebacks: Vec<&serde_json::Value> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "ci/writeback-skip-ci")
        .collect();
    assert_eq!(writebacks.len(), 1, "{writebacks:?}");
    let d = writebacks[0];
    assert_eq!(d["file"], ".gitlab-ci.yml");
    let message = d["message"].as_str().unwrap();
    assert!(message.contains("`update-gitops:dev`"), "{message}");
    assert!(message.contains("to this repository"), "{message}");
    assert_eq!(d["fix"]["applicability"], "safe");
}

#[cfg(unix)]
#[test]
fn symlinks_never_lead_out_of_the_root() {
    let outside = repo(&[("secret.yaml", BAD_APP)]);
    let dir = repo(&[("inside.yaml", GOOD_APP), ("sub/x.yaml", GOOD_APP)]);
    std::os::unix::fs::symlink(
        outside.path().join("secret.yaml"),
        dir.path().join("escape.yaml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join("escape-dir")).unwrap();
    std::os::unix::fs::symlink(dir.path().join("sub"), dir.path().join("sub/loop")).unwrap();
    std::os::unix::fs::symlink(
        dir.path().join("inside.yaml"),
        dir.path().join("alias.yaml"),
    )
    .unwrap();
    let o = run(&["check", "--format", "json"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let d = v["diagnostics"].as_array().unwrap();
    assert_eq!(d.len(), 1, "{d:?}");
    assert_eq!(
        (d[0]["file"].as_str(), d[0]["severity"].as_str()),
        (Some("escape.yaml"), Some("info")),
        "the link out of the root is said, not followed"
    );
    assert_eq!(
        v["summary"]["documents"], 3,
        "inside.yaml, sub/x.yaml and the in-root link alias.yaml"
    );
}

#[test]
fn discovery_honours_gitignore_and_keeps_ci_files() {
    let dir = repo(&[
        ("ignored/app.yaml", BAD_APP),
        (".gitignore", "ignored/\n"),
        ("excluded.yaml", BAD_APP),
        (".git/info/exclude", "excluded.yaml\n"),
        (".gitlab-ci.yml", "stages: [build]\n"),
        (".github/workflows/ci.yml", "on: push\njobs: {}\n"),
        (
            "chart/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 0.1.0\n",
        ),
        (
            "chart/templates/deploy.yaml",
            "{{- if .Values.x }}\nkind: {{ .Values.kind }}\n",
        ),
        ("vendor/app.yaml", BAD_APP),
    ]);
    let o = run(
        &["check", "--format", "json", "--exclude", "vendor"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["summary"]["files"], 3,
        ".gitlab-ci.yml, the workflow and Chart.yaml"
    );
}

#[test]
fn graph_prints_roots_applications_sources_and_files() {
    let dir = repo(&[
        (
            "bootstrap/root.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\nspec:\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: apps\n",
        ),
        (
            "apps/web.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/web\n    helm:\n      valueFiles: [values-prod.yaml]\n",
        ),
        (
            "charts/web/Chart.yaml",
            "apiVersion: v2\nname: web\nversion: 0.1.0\n",
        ),
        ("charts/web/values-prod.yaml", "image:\n  tag: 1.0.0\n"),
    ]);
    let o = run(&["graph"], dir.path());
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(
        text.contains("root Application root (bootstrap/root.yaml:1)"),
        "{text}"
    );
    assert!(
        text.contains("  manages Application web (apps/web.yaml:1)"),
        "{text}"
    );
    assert!(text.contains("file charts/web/values-prod.yaml"), "{text}");
    let dot = stdout(&run(&["graph", ".", "--format", "dot"], dir.path()));
    assert!(
        dot.starts_with("digraph argocd {") && dot.contains("manages"),
        "{dot}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&stdout(&run(&["graph", "--format", "json"], dir.path()))).unwrap();
    assert_eq!(json["roots"].as_array().unwrap().len(), 1);
    assert_eq!(
        json["objects"][0]["applications"][0]["sources"][0]["kind"],
        "helm"
    );
    let example = stdout(&run(&["graph", "--format", "json"], &example()));
    assert!(example.contains("\"objects\""));
}

/// Without `repo_urls`, the git `origin` of the root says which `repoURL` is this repository,
/// whatever its form (scp-like origin, HTTPS repoURL).
#[test]
fn git_origin_identifies_the_repository() {
    let app = |url: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  source:\n    repoURL: {url}\n    path: apps/missing\n"
        )
    };
    let missing = |dir: &tempfile::TempDir| {
        let o = run(&["check", "--format", "json"], dir.path());
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["rule"] == "argocd/missing-source")
            .count()
    };
    let origin = "[remote \"origin\"]\n\turl = git@git.example.com:platform/gitops.git\n";
    let here = repo(&[
        (".git/config", origin),
        ("app.yaml", &app("https://git.example.com/platform/gitops")),
    ]);
    assert_eq!(missing(&here), 1);
    let other = repo(&[
        (".git/config", origin),
        (
            "app.yaml",
            &app("https://git.example.com/platform/other.git"),
        ),
    ]);
    assert_eq!(missing(&other), 0);
    // Neither config nor origin: a repoURL none of whose paths exist here is not this one.
    let unknown = repo(&[("app.yaml", &app("https://git.example.com/platform/gitops"))]);
    assert_eq!(missing(&unknown), 0);
}

#[test]
fn other_tools_folders_are_skipped_unless_included() {
    let files = [
        ("app.yaml", GOOD_APP),
        (".cargo/registry/src/x/app.yaml", BAD_APP),
        ("node_modules/pkg/app.yaml", BAD_APP),
        (".venv/lib/app.yaml", BAD_APP),
        ("vendor/charts/app.yaml", BAD_APP),
        (".terraform/modules/app.yaml", BAD_APP),
    ];
    let dir = repo(&files);
    let o = run(&["check", "--format", "json"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["summary"]["files"], 1, "only app.yaml");

    // An include glob that names the folder brings it back.
    let mut with_config = files.to_vec();
    with_config.push((
        ".gitops-lint.yaml",
        "include: [\"app.yaml\", \"vendor/**\"]\n",
    ));
    let dir = repo(&with_config);
    let o = run(&["check", "--format", "json"], dir.path());
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        v["summary"]["files"], 2,
        "app.yaml and vendor/charts/app.yaml"
    );
    assert_eq!(v["diagnostics"][0]["file"], "vendor/charts/app.yaml");
}
