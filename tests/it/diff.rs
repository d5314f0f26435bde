//! `gitops-lint diff` on git repositories built from `testdata/diff/<case>/`: `base/` is
//! committed and tagged `base`, then the working tree is made `head/` (uncommitted, so what
//! is compared is the working tree). Each case's JSON report is compared with
//! `testdata/diff/<case>.json` (`BLESS=1` writes it).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::support::{Chromium, bless, git, git_init_commit, git_output};

fn cases_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/diff")
}

fn copy_tree(from: &Path, to: &Path) {
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            std::fs::create_dir_all(&target).unwrap();
            copy_tree(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// A repository at `base/`, committed and tagged `base`, whose working tree is then `head/`.
pub(crate) fn repository(case: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = cases_root().join(case);
    copy_tree(&src.join("base"), dir.path());
    git_init_commit(dir.path(), "base");
    git(dir.path(), &["tag", "base"]);
    for e in std::fs::read_dir(dir.path()).unwrap() {
        let e = e.unwrap();
        if e.file_name() == ".git" {
            continue;
        }
        if e.file_type().unwrap().is_dir() {
            std::fs::remove_dir_all(e.path()).unwrap();
        } else {
            std::fs::remove_file(e.path()).unwrap();
        }
    }
    copy_tree(&src.join("head"), dir.path());
    dir
}

fn diff(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg("diff")
        .args(args)
        .current_dir(dir)
        .env_remove("CI_MERGE_REQUEST_DIFF_BASE_SHA")
        .env_remove("GITHUB_BASE_REF")
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// Every case: its JSON report matches its golden, and the exit code is 1 exactly when it has
/// an error finding. The base's temporary worktree is gone afterwards.
#[test]
fn each_case_matches_its_json_golden() {
    let mut cases: Vec<String> = std::fs::read_dir(cases_root())
        .unwrap()
        .filter_map(|e| {
            let e = e.unwrap();
            e.file_type()
                .unwrap()
                .is_dir()
                .then(|| e.file_name().to_string_lossy().into_owned())
        })
        .collect();
    cases.sort();
    assert!(cases.len() >= 7, "{cases:?}");
    let mut failures = Vec::new();
    for case in &cases {
        let dir = repository(case);
        let o = diff(dir.path(), &["--base", "base", "--format", "json"]);
        let text = stdout(&o);
        let report: serde_json::Value = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!(
                "{case}: not JSON ({e}):\n{text}\n{}",
                String::from_utf8_lossy(&o.stderr)
            )
        });
        let errors = report["diagnostics"]
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["severity"] == "error");
        assert_eq!(o.status.code(), Some(i32::from(errors)), "{case}: {text}");
        let worktrees = git_output(dir.path(), &["worktree", "list"]);
        assert_eq!(worktrees.lines().count(), 1, "{case}: {worktrees}");
        let golden = cases_root().join(format!("{case}.json"));
        if bless() {
            std::fs::write(&golden, &text).unwrap();
        }
        match std::fs::read_to_string(&golden) {
            Ok(expected) if expected == text => {}
            Ok(expected) => failures.push(format!(
                "{case}: differs from {}:\n{}",
                golden.display(),
                gitops_lint::fix::unified_diff("expected", &expected, &text)
            )),
            Err(_) => failures.push(format!(
                "{case}: missing {} (run with BLESS=1 and review it)",
                golden.display()
            )),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `value` without the `note` of the Applications the change cannot affect.
fn without_notes(mut value: serde_json::Value) -> serde_json::Value {
    for a in value["applications"].as_array_mut().unwrap() {
        a.as_object_mut().unwrap().remove("note");
    }
    value
}

/// Rendering only the Applications the change can affect gives, on every case, the report
/// that rendering all of them gives; only the note on the unaffected ones differs.
#[test]
fn changed_only_matches_the_full_diff() {
    let mut cases: Vec<String> = std::fs::read_dir(cases_root())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    cases.sort();
    let mut notes = 0;
    for case in &cases {
        let dir = repository(case);
        let parse = |args: &[&str]| -> serde_json::Value {
            serde_json::from_str(&stdout(&diff(dir.path(), args))).unwrap()
        };
        let scoped = parse(&["--base", "base", "--format", "json"]);
        let full = parse(&["--base", "base", "--format", "json", "--all"]);
        assert!(
            !full.to_string().contains("not affected by the change"),
            "{case}: {full:#}"
        );
        notes += scoped["applications"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|a| a.get("note").is_some())
            .count();
        assert_eq!(without_notes(scoped), full, "{case}");
    }
    // The cases hold Applications the change does not affect.
    assert!(notes >= 3, "{notes}");
}

fn app<'a>(report: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
    report["applications"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == name)
        .unwrap_or_else(|| panic!("no Application `{name}`: {report:#}"))
}

fn json(dir: &Path) -> serde_json::Value {
    let o = diff(dir, &["--base", "base", "--format", "json"]);
    serde_json::from_str(&stdout(&o)).unwrap()
}

/// A values edit is traced to the values line, a chart template edit to the template line,
/// a patch edit to the patch line.
#[test]
fn hunks_are_traced_to_the_changed_lines() {
    let causes = |report: &serde_json::Value, app_name: &str, kind: &str| -> Vec<String> {
        app(report, app_name)["objects"]
            .as_array()
            .unwrap()
            .iter()
            .find(|o| o["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind}: {report:#}"))["causes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{}:{}", c["file"].as_str().unwrap(), c["line"]))
            .collect()
    };
    let values = json(repository("values-edit").path());
    // The image is printed from two values (`repository:tag`): its node keeps the first
    // one's line, and the tag edit's hunk is traced through the tag's values line.
    let c = causes(&values, "web-prod", "Deployment");
    assert_eq!(
        c,
        [
            "charts/web/values-prod.yaml:1",
            "charts/web/values-prod.yaml:4"
        ],
        "{values:#}"
    );
    let text = stdout(&diff(
        repository("values-edit").path(),
        &["--base", "base", "--color", "never"],
    ));
    assert!(!text.contains("cause not traced"), "{text}");
    let template = json(repository("chart-template-edit").path());
    let c = causes(&template, "web-prod", "Service");
    assert_eq!(c, ["charts/web/templates/service.yaml:10"], "{template:#}");
    let patch = json(repository("patch-edit").path());
    let c = causes(&patch, "worker-prod", "Deployment");
    assert_eq!(c, ["apps/worker/overlays/prod/memory.yaml:12"], "{patch:#}");
}

/// What is not rendered is listed in every format, never shown as "no change".
#[test]
fn what_is_not_rendered_is_said_in_every_format() {
    let dir = repository("values-edit");
    let report = json(dir.path());
    assert_eq!(app(&report, "cert-manager")["status"], "not-rendered");
    assert!(
        report["not_rendered"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n["application"] == "cert-manager"),
        "{report:#}"
    );
    let text = stdout(&diff(dir.path(), &["--base", "base"]));
    assert!(text.contains("not rendered: not compared"), "{text}");
    assert!(
        text.contains("Application `cert-manager`, source 1"),
        "{text}"
    );
    let md = stdout(&diff(
        dir.path(),
        &["--base", "base", "--format", "markdown"],
    ));
    assert!(md.contains("#### Not rendered: not compared"), "{md}");
    assert!(
        md.contains("<details><summary><code>web-prod</code>"),
        "{md}"
    );
    assert!(
        md.contains("caused by `charts/web/values-prod.yaml:1`"),
        "{md}"
    );
}

/// The markdown report stays under `--max-bytes`, and says what it left out.
#[test]
fn markdown_is_size_capped() {
    let dir = repository("values-edit");
    let md = stdout(&diff(
        dir.path(),
        &[
            "--base",
            "base",
            "--format",
            "markdown",
            "--max-bytes",
            "600",
        ],
    ));
    assert!(!md.contains("<details>"), "{md}");
    assert!(md.contains("left out to fit the comment"), "{md}");
    assert!(
        md.contains("diff/scaled-to-zero"),
        "findings are always shown: {md}"
    );
}

/// The `diff/` findings go through the check's reporters: SARIF and GitLab Code Quality.
#[test]
fn findings_in_sarif_and_gitlab() {
    let dir = repository("pvc-removed");
    let sarif = stdout(&diff(dir.path(), &["--base", "base", "--format", "sarif"]));
    assert!(
        sarif.contains("\"ruleId\": \"diff/removed-stateful\""),
        "{sarif}"
    );
    let gitlab = stdout(&diff(dir.path(), &["--base", "base", "--format", "gitlab"]));
    assert!(gitlab.contains("diff/removed-stateful"), "{gitlab}");
}

/// Without `--base`: GitLab's merge-request base, else the merge base with the default
/// branch.
#[test]
fn the_default_base_is_the_merge_base() {
    let dir = repository("pvc-removed");
    let branch = git_output(dir.path(), &["rev-parse", "--abbrev-ref", "HEAD"]);
    if branch != "main" {
        git(dir.path(), &["branch", "-m", &branch, "main"]);
    }
    git(dir.path(), &["checkout", "-qb", "feature"]);
    git(dir.path(), &["add", "-A"]);
    git(dir.path(), &["commit", "-qm", "head"]);
    let base = git_output(dir.path(), &["rev-parse", "base"]);
    let o = diff(dir.path(), &["--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["base"], base.as_str(), "{report:#}");
    assert_eq!(app(&report, "db")["status"], "modified");
    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["diff", "--format", "json"])
        .current_dir(dir.path())
        .env("CI_MERGE_REQUEST_DIFF_BASE_SHA", "HEAD")
        .output()
        .unwrap();
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(report["base"], "HEAD");
    assert_eq!(app(&report, "db")["status"], "unchanged", "{report:#}");
}

/// The HTML page is self-contained (nothing fetched), lists the Applications and shows a diff
/// side by side with its causes.
#[test]
fn html_page_lists_applications_and_diffs_side_by_side() {
    let dir = repository("values-edit");
    let page = stdout(&diff(dir.path(), &["--base", "base", "--format", "html"]));
    assert!(page.starts_with("<!doctype html>"), "{page}");
    for needle in ["<script src", "<link", "http://", "https://", "@import"] {
        let outside_text = page
            .lines()
            .filter(|l| l.contains(needle))
            .filter(|l| !l.contains("<td") && !l.contains("<li>"))
            .count();
        assert_eq!(outside_text, 0, "`{needle}` in the page: {page}");
    }
    assert!(
        page.contains("data-name=\"web-prod\" data-status=\"modified\""),
        "{page}"
    );
    assert!(
        page.contains("<td class=\"del\">  replicas: 3</td><td class=\"n\">6</td><td class=\"ins\">  replicas: 0</td>"),
        "{page}"
    );
    assert!(
        page.contains("caused by <code>charts/web/values-prod.yaml:1</code>"),
        "{page}"
    );
}

/// In a browser (headless Chromium): after the page's script ran, the Application list hides
/// the unchanged ones, a diff row is in the DOM, and a screenshot is not blank. The screenshot
/// is kept in the target folder (`diff-page.png`).
#[test]
#[ignore = "needs chromium (scripts/test installs it)"]
fn html_page_in_a_browser() {
    assert!(
        Chromium::installed(),
        "chromium is not installed (apt-get install chromium); scripts/test installs it"
    );
    let dir = repository("values-edit");
    let page = stdout(&diff(dir.path(), &["--base", "base", "--format", "html"]));
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("diff.html");
    std::fs::write(&file, page).unwrap();
    let chromium = Chromium::new();
    let dom = chromium.dom(&file);
    assert!(
        dom.contains("data-name=\"root\" data-status=\"unchanged\" class=\"hidden\""),
        "{dom}"
    );
    assert!(
        dom.contains("data-name=\"web-prod\" data-status=\"modified\">"),
        "{dom}"
    );
    assert!(
        dom.contains("<td class=\"ins\">  replicas: 0</td>"),
        "{dom}"
    );
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("diff-page.png");
    chromium.screenshot(&file, &shot);
}

/// `PATH`s narrow the report to the Applications defined in them or reading a file under them.
#[test]
fn paths_narrow_the_applications() {
    let dir = repository("app-removed");
    let o = diff(
        dir.path(),
        &["--base", "base", "--format", "json", "apps/a"],
    );
    let report: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let names: Vec<&str> = report["applications"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a"], "{report:#}");
    assert_eq!(
        o.status.code(),
        Some(0),
        "the removal of `b` is not in `apps/a`"
    );
}

/// An unknown base, or no git repository, is a usage error (exit 2) that says so.
#[test]
fn usage_errors_say_what_is_wrong() {
    let dir = repository("pvc-removed");
    let o = diff(dir.path(), &["--base", "no-such-rev"]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("unknown revision `no-such-rev`"), "{err}");
    let plain = tempfile::tempdir().unwrap();
    copy_tree(&cases_root().join("pvc-removed/base"), plain.path());
    let o = diff(plain.path(), &[]);
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("is not in a git repository"), "{err}");
}

/// The JSON report of `diff --base base` in `dir`, from git objects and from a checkout.
fn both_ways(dir: &Path) -> (String, String) {
    let args = ["--base", "base", "--format", "json"];
    let fast = diff(dir, &args);
    let checkout = diff(dir, &[args.as_slice(), &["--checkout-base"]].concat());
    assert_eq!(fast.status.code(), checkout.status.code());
    (stdout(&fast), stdout(&checkout))
}

/// The base read from git objects beside the working tree gives the report a checkout of it
/// gives, on every case: as the cases are (the change uncommitted, its new files untracked),
/// committed, and committed with a file then edited back to its base text in the working tree
/// (what is compared is the working tree, not the commit).
#[test]
fn the_base_from_git_objects_matches_a_checkout() {
    let mut cases: Vec<String> = std::fs::read_dir(cases_root())
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    cases.sort();
    for case in &cases {
        let dir = repository(case);
        let (fast, checkout) = both_ways(dir.path());
        assert_eq!(fast, checkout, "{case}, uncommitted");
        git(dir.path(), &["add", "-A"]);
        git(dir.path(), &["commit", "-qm", "head"]);
        let (fast, checkout) = both_ways(dir.path());
        assert_eq!(fast, checkout, "{case}, committed");
        // A file the commit changed, back to its base text in the working tree only.
        let changed = git_output(
            dir.path(),
            &["diff", "--name-only", "--diff-filter=M", "base"],
        );
        if let Some(file) = changed.lines().next() {
            let text = git_output(dir.path(), &["show", &format!("base:{file}")]);
            std::fs::write(dir.path().join(file), format!("{text}\n")).unwrap();
            let (fast, checkout) = both_ways(dir.path());
            assert_eq!(
                fast, checkout,
                "{case}, {file} reverted in the working tree"
            );
        }
        let worktrees = git_output(dir.path(), &["worktree", "list"]);
        assert_eq!(worktrees.lines().count(), 1, "{case}: {worktrees}");
    }
}

/// A change the base's git objects cannot stand in for is read from a checkout: a file the
/// walk does not read (a kustomize generator's input, a patch the configuration excludes), a
/// link out of the root at the base, a file added in a new folder. A file the change adds is
/// missing at the base, though the working tree has it. Each report is the checkout's, and the
/// link is not followed.
#[test]
fn what_only_a_checkout_reproduces_is_checked_out() {
    let app = |name: &str, path: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/platform/gitops.git\n    path: {path}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {name}\n"
        )
    };
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(
        ".gitops-lint.yaml",
        "repo_urls:\n  - https://git.example.com/platform/gitops.git\nexclude:\n  - '**/excluded.yaml'\n",
    );
    write("argocd/patched.yaml", &app("patched", "apps/patched"));
    write(
        "apps/patched/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cm.yaml\npatches:\n  - path: excluded.yaml\n",
    );
    write(
        "apps/patched/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: patched\ndata:\n  size: \"1\"\n",
    );
    write("argocd/fixed.yaml", &app("fixed", "apps/fixed"));
    write(
        "apps/fixed/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n  - cm.yaml\n  - new.yaml\n",
    );
    write(
        "apps/fixed/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fixed\n",
    );
    let patch = |size: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: patched\ndata:\n  size: \"{size}\"\n"
        )
    };
    write("apps/patched/excluded.yaml", &patch("2"));
    write("argocd/settings.yaml", &app("settings", "apps/settings"));
    write(
        "apps/settings/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nconfigMapGenerator:\n  - name: settings\n    files:\n      - app.properties\ngeneratorOptions:\n  disableNameSuffixHash: true\n",
    );
    write("apps/settings/app.properties", "size=1\n");
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("secret.yaml"),
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: leaked\n",
    )
    .unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(
        outside.path().join("secret.yaml"),
        root.join("apps/settings/linked.yaml"),
    )
    .unwrap();
    git_init_commit(root, "base");
    git(root, &["tag", "base"]);

    // The generator's input is no YAML file, but git lists it: its Application is affected.
    write("apps/settings/app.properties", "size=2\n");
    let (fast, checkout) = both_ways(root);
    assert_eq!(fast, checkout);
    assert!(fast.contains("size=2"), "{fast}");
    write("apps/settings/app.properties", "size=1\n");

    // A patch the configuration excludes from the check is still read by its kustomization.
    write("apps/patched/excluded.yaml", &patch("3"));
    let (fast, checkout) = both_ways(root);
    assert_eq!(fast, checkout);
    assert!(fast.contains(r#"+  size: \"3\""#), "{fast}");
    write("apps/patched/excluded.yaml", &patch("2"));

    // A file the change adds that the base's kustomization already listed: at the base it is
    // missing, though the working tree has it.
    write(
        "apps/fixed/new.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fixed-new\n",
    );
    let (fast, checkout) = both_ways(root);
    assert_eq!(fast, checkout);
    assert!(fast.contains("fixed-new"), "{fast}");
    std::fs::remove_file(root.join("apps/fixed/new.yaml")).unwrap();

    #[cfg(unix)]
    {
        let link = root.join("apps/settings/linked.yaml");
        std::fs::remove_file(&link).unwrap();
        let (fast, checkout) = both_ways(root);
        assert_eq!(fast, checkout);
        assert!(!fast.contains("leaked"), "{fast}");
        std::os::unix::fs::symlink(outside.path().join("secret.yaml"), link).unwrap();
    }

    write("argocd/new.yaml", &app("new", "apps/new"));
    write(
        "apps/new/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: new\n",
    );
    let (fast, checkout) = both_ways(root);
    assert_eq!(fast, checkout);
    let report: serde_json::Value = serde_json::from_str(&fast).unwrap();
    assert_eq!(app_status(&report, "new"), "added", "{report:#}");
}

fn app_status(report: &serde_json::Value, name: &str) -> String {
    app(report, name)["status"].as_str().unwrap().to_string()
}
