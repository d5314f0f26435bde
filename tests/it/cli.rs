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

const BAD_APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: shop,\n  finalizers: [resources-finalizer.argocd.argoproj.io]}\nspec:\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated:\n      prune: false\n# gitops-lint: disable-file=argocd/schema -- a minimal Application for another rule\n";
const GOOD_APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: ok,\n  finalizers: [resources-finalizer.argocd.argoproj.io]}\nspec:\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated:\n      prune: true\n      selfHeal: true\n# gitops-lint: disable-file=argocd/schema -- a minimal Application for another rule\n";

use crate::support::repo;

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
    // Turning an explicit `prune: false` into `true` changes what Argo CD does.
    assert_eq!(d["fix"]["applicability"], "unsafe");
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
    // `--diff` shows what `--fix` writes: safe fixes only, unless `--unsafe-fixes`.
    let safe_only = stdout(&run(&["check", "--diff"], dir.path()));
    assert!(
        safe_only.contains("+++ b/argocd/shop/dev.yaml") && !safe_only.contains("prod.yaml"),
        "adding `selfHeal: true` is safe, flipping `prune: false` is not:\n{safe_only}"
    );
    let o = run(&["check", "--diff", "--unsafe-fixes"], dir.path());
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

/// The JSON diagnostics of `rule` that `check` reports on `dir`.
fn found_by(dir: &tempfile::TempDir, rule: &str) -> Vec<serde_json::Value> {
    let o = run(&["check", "--format", "json"], dir.path());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == rule)
        .cloned()
        .collect()
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
    let missing = |dir: &tempfile::TempDir| found_by(dir, "argocd/missing-source").len();
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

/// Without `repo_urls`, a CI job that pushes to the git `origin`'s URL writes back to this
/// repository: an error (a loop), not a warning about another repository.
#[test]
fn git_origin_identifies_the_repository_a_ci_job_pushes_to() {
    let ci = "bump:\n  script:\n    - git clone \"https://oauth2:${GITOPS_TOKEN}@gitlab.example.com/platform/gitops.git\" gitops\n    - cd gitops\n    - 'git commit -am \"ci: bump shop\"'\n    - git push origin HEAD:main\n";
    let writeback = |dir: &tempfile::TempDir| {
        found_by(dir, "ci/writeback-skip-ci")
            .iter()
            .map(|d| {
                (
                    d["severity"].as_str().unwrap().to_string(),
                    d["message"].as_str().unwrap().to_string(),
                )
            })
            .collect::<Vec<_>>()
    };
    let origin = "[remote \"origin\"]\n\turl = git@gitlab.example.com:platform/gitops.git\n";
    let here = repo(&[(".git/config", origin), (".gitlab-ci.yml", ci)]);
    let found = writeback(&here);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].0, "error", "{found:?}");
    assert!(found[0].1.contains("to this repository"), "{found:?}");
    let elsewhere = repo(&[(".gitlab-ci.yml", ci)]);
    let found = writeback(&elsewhere);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].0, "warning",
        "another repository, without an origin: {found:?}"
    );
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

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A git repository (so the root is found upward) with an Application in `apps/` and one in
/// `other/`.
fn two_folder_repo() -> tempfile::TempDir {
    let dir = repo(&[
        ("apps/shop.yaml", BAD_APP),
        ("other/shop.yaml", BAD_APP),
        ("other/nested/ok.yaml", GOOD_APP),
        ("docs/readme.txt", "not yaml\n"),
    ]);
    crate::support::git_init_commit(dir.path(), "init");
    dir
}

#[test]
fn text_headers_carry_the_severity_word_as_rustc_prints_them() {
    let dir = repo(&[("app.yaml", BAD_APP)]);
    let out = stdout(&run(&["check"], dir.path()));
    assert!(
        out.starts_with("error[argocd/sync-policy]: Application `shop` syncs automatically"),
        "{out}"
    );
    assert!(out.contains("╭─[app.yaml:9:14]"), "{out}");
    assert!(!out.contains('×'), "{out}");
}

#[test]
fn concise_statistics_and_quiet() {
    let dir = repo(&[("app.yaml", BAD_APP), ("b.yaml", BAD_APP)]);
    let o = run(&["check", "--format", "concise"], dir.path());
    let out = stdout(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        out.starts_with("app.yaml:9:14: error[argocd/sync-policy] Application `shop` syncs automatically with `prune: false` and no `selfHeal`\nb.yaml:9:14: error[argocd/sync-policy] "),
        "{out}"
    );
    assert!(out.contains("2 errors, 0 warnings"), "{out}");

    let quiet = stdout(&run(&["check", "--format", "concise", "-q"], dir.path()));
    assert_eq!(quiet.lines().count(), 2, "findings only:\n{quiet}");
    let quiet = stdout(&run(&["check", "--quiet"], dir.path()));
    assert!(!quiet.contains("2 errors"), "{quiet}");

    let o = run(&["check", "--statistics"], dir.path());
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "2  argocd/sync-policy  error  [fixable]\n",
        "a count per rule, and how many are fixable"
    );
}

#[test]
fn show_fixes_lists_what_fix_changed() {
    let dir = repo(&[("app.yaml", BAD_APP)]);
    // Flipping the explicit `prune: false` is an unsafe fix.
    let o = run(
        &["check", "--fix", "--unsafe-fixes", "--show-fixes"],
        dir.path(),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains(
            "fixed: app.yaml:9:14: argocd/sync-policy: set `prune: true` and `selfHeal: true`"
        ),
        "{err}"
    );
    assert!(err.contains("fixed 1 finding in 1 file"), "{err}");
}

#[test]
fn completions_and_man_page() {
    let dir = repo(&[]);
    for (shell, needle) in [
        ("bash", "complete -F"),
        ("zsh", "#compdef gitops-lint"),
        ("fish", "complete -c gitops-lint"),
        ("powershell", "Register-ArgumentCompleter"),
    ] {
        let o = run(&["completions", shell], dir.path());
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let out = stdout(&o);
        assert!(out.contains(needle), "{shell}:\n{out}");
        assert!(
            out.contains("new-since"),
            "{shell} completes check's options"
        );
    }
    let o = run(&["manpage"], dir.path());
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).starts_with(".ie") || stdout(&o).contains(".TH gitops-lint"));
    assert!(
        !stdout(&run(&["--help"], dir.path())).contains("manpage"),
        "the man page verb is hidden"
    );
}

#[test]
fn nothing_to_check_is_a_usage_error_but_an_excluded_file_is_skipped_quietly() {
    let empty = repo(&[("README.md", "# nothing\n")]);
    let o = run(&["check"], empty.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("error: no YAML file to check in"),
        "{}",
        stderr(&o)
    );

    let wrong_include = repo(&[
        ("apps/app.yaml", BAD_APP),
        (".gitops-lint.yaml", "include: [\"app/**\"]\n"),
    ]);
    let o = run(&["check"], wrong_include.path());
    assert_eq!(
        o.status.code(),
        Some(2),
        "a wrong include must not pass CI green"
    );

    let dir = two_folder_repo();
    let o = run(&["check", "docs"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no YAML file to check in docs"),
        "{}",
        stderr(&o)
    );

    let excluded = repo(&[
        ("apps/app.yaml", GOOD_APP),
        ("vendored/app.yaml", BAD_APP),
        (".gitops-lint.yaml", "exclude: [\"vendored\"]\n"),
    ]);
    let o = run(&["check", "vendored/app.yaml"], excluded.path());
    assert_eq!(o.status.code(), Some(0), "pre-commit passes excluded files");
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

#[test]
fn directories_are_filters_and_the_root_is_found_upward() {
    let dir = two_folder_repo();
    // From the root, a folder argument reports only what is under it.
    let out = stdout(&run(&["check", "--format", "concise", "apps"], dir.path()));
    assert!(
        out.starts_with("apps/shop.yaml:9:14: error[argocd/sync-policy]"),
        "{out}"
    );
    assert!(!out.contains("other/"), "{out}");
    assert!(
        out.contains("in 3 files"),
        "the whole repository is analysed:\n{out}"
    );

    // From a sub-folder: the whole repository, paths relative to the current directory.
    let sub = dir.path().join("other/nested");
    let out = stdout(&run(&["check", "--format", "concise"], &sub));
    assert!(out.contains("../../apps/shop.yaml:9:14: error"), "{out}");
    assert!(out.contains("\n../../other/shop.yaml:9:14: error"), "{out}");
    let out = stdout(&run(&["check", "--format", "concise", ".."], &sub));
    assert!(!out.contains("apps/shop.yaml"), "{out}");
    assert!(out.starts_with("../../other/shop.yaml:9:14"), "{out}");

    // JSON keeps root-relative files and says where the root is.
    let o = run(&["check", "--format", "json"], &sub);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(
        Path::new(v["root"].as_str().unwrap())
            .canonicalize()
            .unwrap(),
        dir.path().canonicalize().unwrap()
    );
    assert_eq!(v["diagnostics"][0]["file"], "apps/shop.yaml");

    // --root overrides the search: only `other/` is the repository then.
    let o = run(&["check", "--root", "..", "--format", "json"], &sub);
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["summary"]["files"], 2, "{}", stdout(&o));
    assert_eq!(v["diagnostics"][0]["file"], "shop.yaml");
    let o = run(&["check", "--root", ".", "../../apps"], &sub);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("is outside the repository root"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn stdin_is_checked_as_the_file_it_names() {
    let dir = two_folder_repo();
    let check = |args: &[&str], input: &str| {
        let mut child = bin()
            .args(args)
            .current_dir(dir.path())
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), input.as_bytes()).unwrap();
        child.wait_with_output().unwrap()
    };
    // The buffer replaces the file on disk, and only it is reported.
    let o = check(
        &[
            "check",
            "--format",
            "concise",
            "-",
            "--stdin-filename",
            "apps/shop.yaml",
        ],
        GOOD_APP,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let o = check(
        &[
            "check",
            "--format",
            "concise",
            "-",
            "--stdin-filename",
            "apps/new.yaml",
        ],
        BAD_APP,
    );
    assert_eq!(o.status.code(), Some(1));
    let out = stdout(&o);
    assert!(
        out.starts_with("apps/new.yaml:9:14: error[argocd/sync-policy]"),
        "{out}"
    );
    assert!(!out.contains("apps/shop.yaml"), "{out}");
    let o = check(&["check", "-"], "");
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--stdin-filename"), "{}", stderr(&o));
}

#[test]
fn select_ignore_and_extend_select() {
    let dir = repo(&[("app.yaml", BAD_APP), ("b.yaml", BAD_APP.replace("  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n", "  project: default\n").as_str())]);
    let rules_of = |args: &[&str]| {
        let mut all = vec!["check", "--format", "json"];
        all.extend_from_slice(args);
        let o = run(&all, dir.path());
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let mut rules: Vec<String> = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["rule"].as_str().unwrap().to_string())
            .collect();
        rules.dedup();
        rules
    };
    let all = rules_of(&[]);
    assert!(
        all.contains(&"argocd/no-default-project".to_string()),
        "{all:?}"
    );
    assert_eq!(
        rules_of(&["--select", "argocd/sync-policy"]),
        ["argocd/sync-policy"]
    );
    assert_eq!(
        rules_of(&["--select", "argocd/", "--ignore", "argocd/sync-policy"]),
        ["argocd/no-default-project"]
    );
    assert_eq!(
        rules_of(&["--select", "ci", "--extend-select", "argocd/sync-policy"]),
        ["argocd/sync-policy"]
    );
    assert!(rules_of(&["--ignore", "argocd"]).is_empty());

    let o = run(&["check", "--ignore", "argocd/sync-polcy"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("unknown rule or group `argocd/sync-polcy`")
            && stderr(&o).contains("did you mean `argocd/sync-policy`?"),
        "{}",
        stderr(&o)
    );

    // The same keys in the configuration; the command line's --select replaces `select`.
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "select: [argocd/]\nignore: [argocd/no-default-project]\n",
    )
    .unwrap();
    assert_eq!(rules_of(&[]), ["argocd/sync-policy"]);
    assert_eq!(
        rules_of(&[
            "--select",
            "argocd/no-default-project",
            "--extend-select",
            "argocd/sync-policy"
        ]),
        ["argocd/sync-policy"]
    );
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "ignore: [argocd/nope]\n",
    )
    .unwrap();
    let o = run(&["check"], dir.path());
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(".gitops-lint.yaml:1:10"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn baseline_and_new_since_say_how_many_findings_they_hide() {
    let dir = two_folder_repo();
    let o = run(
        &["baseline", "--select", "argocd/sync-policy", "apps"],
        dir.path(),
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "baseline accepts check's options: {}",
        stderr(&o)
    );
    std::fs::write(dir.path().join("baseline.json"), o.stdout).unwrap();
    let o = run(
        &[
            "check",
            "--baseline",
            "baseline.json",
            "--format",
            "concise",
        ],
        dir.path(),
    );
    assert!(
        stderr(&o).contains("note: 1 finding hidden: in the baseline baseline.json"),
        "{}",
        stderr(&o)
    );
    assert!(!stdout(&o).contains("apps/shop.yaml:9:14: error[argocd/sync-policy]"));
    assert!(stdout(&o).contains("other/shop.yaml:9:14: error[argocd/sync-policy]"));

    let o = run(&["check", "--new-since", "HEAD"], dir.path());
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stderr(&o).contains("findings hidden: already present at HEAD"),
        "{}",
        stderr(&o)
    );
    let o = run(&["check", "--new-since", "HEAD", "-q"], dir.path());
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));

    // `baseline` takes policies, as `check` does.
    std::fs::create_dir_all(dir.path().join("policy")).unwrap();
    std::fs::write(
        dir.path().join("policy/house.rego"),
        "package main\n\ndeny contains msg if {\n  input.kind == \"Application\"\n  msg := \"no Applications\"\n}\n",
    )
    .unwrap();
    let o = run(&["baseline", "--policy", "policy"], dir.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("policy/main"), "{}", stdout(&o));
}

/// `--new-since` checks the old revision in a temporary worktree; SIGTERM in the middle must
/// remove it. A policy that runs into its time limit holds the old run long enough.
#[cfg(unix)]
#[test]
fn new_since_removes_its_worktree_when_terminated() {
    let dir = two_folder_repo();
    std::fs::create_dir_all(dir.path().join("policy")).unwrap();
    std::fs::write(
        dir.path().join("policy/slow.rego"),
        "package main\n\ndeny contains msg if {\n  input.kind == \"Application\"\n  some i in numbers.range(1, 20000)\n  some j in numbers.range(1, 20000)\n  i * j == -1\n  msg := \"slow\"\n}\n",
    )
    .unwrap();
    crate::support::git(dir.path(), &["add", "."]);
    crate::support::git(dir.path(), &["commit", "-qm", "slow policy"]);
    let tmp = tempfile::tempdir().unwrap();
    let mut child = bin()
        .args(["check", "--policy", "policy", "--new-since", "HEAD"])
        .current_dir(dir.path())
        .env("TMPDIR", tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let worktree = loop {
        let found = std::fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.join(".git").is_file() && p.join("apps/shop.yaml").is_file());
        if let Some(w) = found {
            break w;
        }
        assert!(
            child.try_wait().unwrap().is_none(),
            "the check ended before its worktree was seen"
        );
        assert!(std::time::Instant::now() < deadline, "no worktree appeared");
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    std::thread::sleep(std::time::Duration::from_millis(200));
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    assert!(!worktree.exists(), "{} is left behind", worktree.display());
    let list = crate::support::git_output(dir.path(), &["worktree", "list"]);
    assert_eq!(list.lines().count(), 1, "{list}");
}

#[test]
fn rego_syntax_errors_show_the_message_and_suggest_the_other_syntax_only_when_it_parses() {
    let dir = repo(&[("app.yaml", GOOD_APP)]);
    let policy = |name: &str, text: &str| {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        p.to_string_lossy().into_owned()
    };
    // Broken in both syntaxes: regorus's message, no suggestion.
    let broken = policy(
        "broken.rego",
        "package main\n\ndeny contains msg if {\n  input.kind ==\n}\n",
    );
    let o = run(&["check", "--policy", &broken], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("invalid policy: expecting expression"),
        "{err}"
    );
    assert!(!err.contains("--rego-version"), "{err}");
    // Read as v1 (the word `if` in a string), but valid v0: the suggestion.
    let v0 = policy(
        "v0.rego",
        "package main\n\ndeny[msg] { input.kind == \"X\"; msg := \"fails if X\" }\n",
    );
    let o = run(&["check", "--policy", &v0], dir.path());
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("invalid policy: `if` keyword is required before rule body"),
        "{err}"
    );
    assert!(err.contains("pass `--rego-version v0`"), "{err}");
    assert_eq!(
        run(
            &["check", "--policy", &v0, "--rego-version", "v0"],
            dir.path()
        )
        .status
        .code(),
        Some(0)
    );
}

#[test]
fn verbose_prints_each_phase_with_its_memory_and_a_released_text_still_shows_its_finding() {
    // A plain manifest's text is released after the load and read again to show its finding.
    let dirty = repo(&[
        ("app.yaml", BAD_APP),
        (
            "deploy.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\nspec: {a: 1, a: 2}\n",
        ),
    ]);
    let out = run(&["check", "--verbose", "--fail-on", "never"], dirty.path());
    let stderr = String::from_utf8_lossy(&out.stderr);
    for phase in [
        "walk",
        "read, parse, kustomize",
        "rules: documents",
        "rules: repository",
    ] {
        assert!(
            stderr.contains(&format!("timing: {phase} ")),
            "no `{phase}` line in:\n{stderr}"
        );
    }
    assert!(stderr.contains(" MiB"), "no memory figure in:\n{stderr}");
    assert!(
        stderr.matches("timing: rule ").count() == 10,
        "not the ten slowest rules in:\n{stderr}"
    );
    let text = stdout(&out);
    assert!(
        text.contains("deploy.yaml:4:") && text.contains("spec: {a: 1, a: 2}"),
        "the released file's finding shows its source line:\n{text}"
    );
}

#[test]
fn a_released_application_still_shows_its_finding_and_takes_its_fix() {
    // Without user policies, an Application's text is released after the load: rules read it
    // again only to build a fix, and the report to show the finding.
    let app = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: shop\n  namespace: argocd\nspec:\n  project: shop\n  destination: {server: https://kubernetes.default.svc, namespace: shop}\n  syncPolicy:\n    automated:\n      prune: true\n";
    let dirty = repo(&[("app.yaml", app)]);
    let args = [
        "check",
        "--fail-on",
        "never",
        "--select",
        "argocd/sync-policy",
    ];
    let text = stdout(&run(&args, dirty.path()));
    assert!(
        text.contains("app.yaml:10:") && text.contains("    automated:"),
        "the released file's finding shows its source line:\n{text}"
    );
    let fixed = run(&[&args[..], &["--fix"]].concat(), dirty.path());
    assert_eq!(fixed.status.code(), Some(0), "{}", stdout(&fixed));
    assert_eq!(
        std::fs::read_to_string(dirty.path().join("app.yaml")).unwrap(),
        format!("{app}      selfHeal: true\n"),
        "the fix is built from the text read again"
    );
}

#[test]
fn a_released_values_file_still_shows_its_finding() {
    // A Helm values file's text is released after the load, unless it may hold a cloudflared
    // route; either way its findings show their source lines.
    let dirty = repo(&[
        ("charts/web/values.yaml", "image:\n  tag: v1\n  tag: v2\n"),
        (
            "charts/edge/values.yaml",
            "tunnel:\n  ingress:\n    - hostname: a.example.com\n      service: http://web:80\n      service: http://web:81\n",
        ),
    ]);
    let out = run(&["check", "--fail-on", "never"], dirty.path());
    let text = stdout(&out);
    assert!(
        text.contains("charts/web/values.yaml:3:") && text.contains("tag: v2"),
        "the released file's finding shows its source line:\n{text}"
    );
    assert!(
        text.contains("charts/edge/values.yaml:5:") && text.contains("service: http://web:81"),
        "the kept file's finding shows its source line:\n{text}"
    );
}

#[test]
fn values_files_loaded_as_image_tags_give_the_findings_of_merged_values() {
    // A one-shot run keeps only the image tags of values files outside charts with default
    // values, and merges later layers over those tags; a run with user policies keeps every
    // values file whole. Both must find the same placeholder tags at the same places.
    let app = |name: &str, path: &str, helm: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\n  finalizers: [resources-finalizer.argocd.argoproj.io]\nspec:\n  project: web\n  source:\n    repoURL: https://git.example.com/gitops.git\n    targetRevision: main\n    path: {path}\n    helm:\n{helm}  destination:\n    server: https://kubernetes.default.svc\n    namespace: {name}\n  syncPolicy:\n    automated: {{prune: true, selfHeal: true}}\n"
        )
    };
    let files = [
        ("apps/web/Chart.yaml", "apiVersion: v2\nname: web\nversion: 1.0.0\n".to_string()),
        (
            "apps/web/values-prod.yaml",
            "image:\n  repository: reg/web\n  tag: none\nworker:\n  image: reg/worker:none\nsidecarImage:\n  tag: none\njobs:\n  image: {tag: none}\nkept:\n  image:\n    tag: none\n".to_string(),
        ),
        ("apps/web/values-extra.yaml", "jobs:\n  image: null\n".to_string()),
        (
            "argocd/web-prod.yaml",
            app(
                "web-prod",
                "apps/web",
                "      valueFiles: [values-prod.yaml, values-extra.yaml]\n      valuesObject:\n        worker: {image: reg/worker:v2}\n        image: {repository: reg/web2}\n      parameters:\n        - {name: sidecarImage.tag, value: v3}\n        - {name: extra.image, value: reg/extra:none}\n",
            ),
        ),
        (
            "argocd/web-inline.yaml",
            app(
                "web-inline",
                "apps/web",
                "      valueFiles: [values-prod.yaml]\n      values: \"kept: {image: {tag: v1}}\\nnew: {image: {tag: none}}\"\n",
            ),
        ),
        (
            "argocd/web-block.yaml",
            app(
                "web-block",
                "apps/web",
                "      valueFiles: [values-prod.yaml]\n      values: |\n        image:\n          tag: v9\n        block:\n          image: reg/block:none\n",
            ),
        ),
        (
            "argocd/project.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata: {name: web, namespace: argocd}\nspec:\n  sourceRepos: ['*']\n  destinations: [{server: https://kubernetes.default.svc, namespace: '*'}]\n".to_string(),
        ),
        (
            "policy/noop.rego",
            "package main\n\ndeny contains msg if {\n  input.kind == \"NoSuchKind\"\n  msg := \"never\"\n}\n".to_string(),
        ),
    ];
    let files: Vec<(&str, &str)> = files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    let dir = repo(&files);
    let tag_findings = |args: &[&str]| -> Vec<String> {
        let o = run(&[&["check", "--format", "json"], args].concat(), dir.path());
        let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
        let mut found: Vec<String> = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|d| d["rule"] == "argocd/image-tag-none")
            .map(|d| {
                format!(
                    "{}:{}:{} {}",
                    d["file"].as_str().unwrap(),
                    d["range"]["start"]["line"],
                    d["range"]["start"]["column"],
                    d["message"].as_str().unwrap()
                )
            })
            .collect();
        found.sort();
        found
    };
    let one_shot = tag_findings(&[]);
    assert_eq!(one_shot, tag_findings(&["--policy", "policy"]));
    let places: Vec<&str> = one_shot
        .iter()
        .map(|f| f.split(' ').next().unwrap())
        .collect();
    assert_eq!(
        places,
        [
            // kept.image.tag: web-prod, web-block (web-inline sets it)
            "apps/web/values-prod.yaml:12:10",
            // image.tag: web-prod, web-inline (valuesObject keeps it, web-block sets it)
            "apps/web/values-prod.yaml:3:8",
            // worker.image: web-inline, web-block (valuesObject sets it)
            "apps/web/values-prod.yaml:5:10",
            // sidecarImage.tag: web-inline, web-block (a parameter sets it)
            "apps/web/values-prod.yaml:7:8",
            // jobs.image.tag: web-inline, web-block (values-extra.yaml deletes it)
            "apps/web/values-prod.yaml:9:16",
            // block.image, from the mapped `values: |`
            "argocd/web-block.yaml:19:18",
            // new.image.tag, at the key of the unmapped `values` string
            "argocd/web-inline.yaml:15:7",
            // extra.image, from a parameter
            "argocd/web-prod.yaml:20:38",
        ],
        "{one_shot:#?}"
    );
    assert!(
        one_shot[..5]
            .iter()
            .all(|f| f.ends_with("2 Applications deploy it")),
        "{one_shot:#?}"
    );
}

/// `--select` and `--ignore` take `group/*`, as suppression comments do.
#[test]
fn select_and_ignore_accept_group_globs() {
    let dir = repo(&[("app.yaml", BAD_APP)]);
    let rules = |args: &[&str]| {
        let mut all = vec!["check", "--format", "json"];
        all.extend_from_slice(args);
        let o = run(&all, dir.path());
        assert_ne!(
            o.status.code(),
            Some(2),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut rules: Vec<String> = v["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|d| d["rule"].as_str().unwrap().to_string())
            .collect();
        rules.dedup();
        rules
    };
    let glob = rules(&["--select", "argocd/*"]);
    assert!(glob.contains(&"argocd/sync-policy".to_string()), "{glob:?}");
    assert_eq!(glob, rules(&["--select", "argocd/"]));
    assert!(
        rules(&["--ignore", "argocd/*"])
            .iter()
            .all(|r| !r.starts_with("argocd/"))
    );
    let o = run(&["check", "--select", "argcd/*"], dir.path());
    assert_eq!(o.status.code(), Some(2));
}

/// A path that does not exist is named as given, from the current directory, in one line.
#[test]
fn a_missing_path_is_named_as_given() {
    let dir = repo(&[("app.yaml", GOOD_APP), (".gitops-lint.yaml", "")]);
    std::fs::create_dir_all(dir.path().join("apps")).unwrap();
    let o = run(&["check", "../nowhere/x.yaml"], &dir.path().join("apps"));
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(
        String::from_utf8_lossy(&o.stderr),
        "error: `../nowhere/x.yaml` does not exist\n"
    );
}

/// `--stdin-filename` must name a file this repository can hold: one outside it, or in a folder
/// that does not exist (a path given from the wrong folder), is a usage error, not a check of a
/// phantom file.
#[test]
fn stdin_filename_outside_the_repository_is_an_error() {
    let outer = tempfile::tempdir().unwrap();
    let dir = outer.path().join("repo");
    std::fs::create_dir_all(dir.join("apps")).unwrap();
    std::fs::write(dir.join(".gitops-lint.yaml"), "").unwrap();
    std::fs::write(dir.join("apps/app.yaml"), GOOD_APP).unwrap();
    std::fs::write(outer.path().join("elsewhere.yaml"), GOOD_APP).unwrap();
    let stdin = |name: &str, cwd: &Path| {
        let mut child = bin()
            .args(["check", "-", "--stdin-filename", name])
            .current_dir(cwd)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        std::io::Write::write_all(&mut child.stdin.take().unwrap(), BAD_APP.as_bytes()).unwrap();
        let o = child.wait_with_output().unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).into_owned(),
        )
    };
    let (code, err) = stdin("../elsewhere.yaml", &dir);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("`--stdin-filename ../elsewhere.yaml` is outside the repository root `.`"),
        "{err}"
    );
    let (code, err) = stdin("apps/app.yaml", &dir.join("apps"));
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("`--stdin-filename apps/app.yaml`: the folder `apps` does not exist"),
        "{err}"
    );
    // The file's real path, from the repository's root or from its own folder, is checked.
    assert_eq!(stdin("apps/app.yaml", &dir).0, Some(1));
    assert_eq!(stdin("app.yaml", &dir.join("apps")).0, Some(1));
}

/// `render` prints the objects an Application deploys: a chart's rendered children (with where
/// each was rendered) and a directory's manifests, as YAML or as JSON.
#[test]
fn render_prints_what_applications_deploy() {
    let o = run(&["render", "batch-apps", "dagster-sensors"], &example());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains("# Application `batch-apps`, source 1: helm `k8s/platform/batch-apps`\n---\n# rendered from `templates/applications.yaml:3` by Application `batch-apps`\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: dagster-sensors\n"),
        "{text}"
    );
    assert!(text.contains("      selfHeal: false\n"), "{text}");
    assert!(
        text.contains(
            "# `apps/dagster-sensors/cronjob.yaml:1`\napiVersion: batch/v1\nkind: CronJob\n"
        ),
        "{text}"
    );
    assert!(text.contains("  schedule: \"*/15 * * * *\"\n"), "{text}");
    let o = run(&["render", "--format", "json"], &example());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let objects = v["objects"].as_array().unwrap();
    assert!(
        objects
            .iter()
            .any(|o| o["application"] == "dagster-sensors" && o["object"]["kind"] == "CronJob")
    );
    // An external chart is named, with why it is not rendered.
    assert!(v["sources"].as_array().unwrap().iter().any(|s| {
        s["application"] == "cert-manager"
            && s["note"]
                .as_str()
                .is_some_and(|n| n.contains("not in this repository"))
    }));
    let o = run(&["render", "nope"], &example());
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("no live Application is named `nope`"));
}

/// What `render` prints for a Helm source is what Helm renders (the `helm-python-sdk` wheel),
/// object for object, for every Application of the example that installs a chart of it.
#[test]
#[ignore = "needs helm-python-sdk (scripts/test installs it)"]
fn render_agrees_with_helm_on_the_example() {
    let o = run(&["render", "--format", "json"], &example());
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let ours: Vec<String> = v["objects"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|o| o["application"] == "batch-apps")
        .map(|o| o["object"].to_string())
        .collect();
    assert!(!ours.is_empty());
    let script = r#"
import json, sys, yaml, helm_python
chart = sys.argv[1]
rendered = helm_python.Chart.load(chart).render(None, name="batch-apps", namespace="argocd")
docs = [d for k, t in sorted(rendered.items()) if not k.endswith("NOTES.txt") for d in yaml.safe_load_all(t) if d is not None]
json.dump([json.dumps(d) for d in docs], sys.stdout)
"#;
    let chart = example().join("k8s/platform/batch-apps");
    let out = Command::new("python3")
        .args(["-c", script, &chart.to_string_lossy()])
        .output()
        .expect("python3");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let helm: Vec<String> = serde_json::from_slice(&out.stdout).unwrap();
    let normal = |docs: &[String]| {
        let mut d: Vec<serde_json::Value> = docs
            .iter()
            .map(|s| serde_json::from_str(s).unwrap())
            .collect();
        d.sort_by_key(ToString::to_string);
        d
    };
    assert_eq!(normal(&ours), normal(&helm));
}

/// What `render` prints for a kustomize source is what `kubectl kustomize` builds, object for
/// object, for the example's kustomize Application.
#[test]
#[ignore = "needs kubectl (the machine image ships it)"]
fn render_agrees_with_kubectl_kustomize_on_the_example() {
    let o = run(
        &["render", "citation-worker-dev", "--format", "json"],
        &example(),
    );
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let mut ours: Vec<serde_json::Value> = v["objects"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["object"].clone())
        .collect();
    let out = Command::new("kubectl")
        .arg("kustomize")
        .arg(example().join("apps/citation-worker/overlays/dev"))
        .output()
        .expect("kubectl");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut theirs: Vec<serde_json::Value> = gitops_lint::yaml::parse(
        gitops_lint::source::FileId(0),
        &String::from_utf8_lossy(&out.stdout),
    )
    .docs
    .into_iter()
    .map(|d| d.root.to_json())
    .collect();
    assert_eq!(ours.len(), 2, "{ours:?}");
    ours.sort_by_key(ToString::to_string);
    theirs.sort_by_key(ToString::to_string);
    assert_eq!(ours, theirs);
}
