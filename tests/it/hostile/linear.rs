//! Inputs whose cost once grew faster than their size (issue #32): each runs at the size that
//! was quadratic (or worse) in the issue, or ten times it, and must finish within a ceiling
//! that only a hang reaches, with its output in proportion to the findings. Timings are in
//! `benches/hostile_scale.py`, not here.

use std::path::Path;
use std::time::Duration;

use super::{bin, run_bounded};

/// A hang fails the test; a slow machine does not.
const CEILING: Duration = Duration::from_secs(120);

/// Runs the binary with `args` in `dir`; fails when it outlives `limit`. Returns the exit
/// code and standard output.
pub(super) fn run_limited(args: &[&str], dir: &Path, limit: Duration) -> (Option<i32>, String) {
    let mut cmd = bin();
    cmd.args(args).current_dir(dir);
    let o = run_bounded(cmd, limit);
    (o.status.code(), String::from_utf8(o.stdout).unwrap())
}

const APP: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: NAME
  namespace: argocd
spec:
  project: shop
  source:
    repoURL: https://git.example.com/platform/gitops.git
    path: PATH
  destination:
    server: https://kubernetes.default.svc
    namespace: NAME
";

fn app(name: &str, path: &str) -> String {
    APP.replace("NAME", name).replace("PATH", path)
}

fn write(dir: &Path, rel: &str, text: &str) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

fn json(out: &str) -> Vec<serde_json::Value> {
    let v: serde_json::Value = serde_json::from_str(out).unwrap();
    v["diagnostics"].as_array().unwrap().clone()
}

/// 100,000 repeated keys: the text report finished in hours (each code frame counted the
/// file's lines from its start) and JSON held 100,000 findings. Now 100 are reported one by
/// one and one more counts the rest.
#[test]
fn a_hundred_thousand_duplicate_keys() {
    let dir = tempfile::tempdir().unwrap();
    write(dir.path(), "dup.yaml", &"a: 1\n".repeat(100_000));
    let (code, text) = run_limited(&["check", "."], dir.path(), CEILING);
    assert_eq!(code, Some(1));
    assert!(text.len() < 200_000, "{} bytes of text", text.len());
    let (_, out) = run_limited(&["check", ".", "--format", "json"], dir.path(), CEILING);
    let found = json(&out);
    assert_eq!(found.len(), 101);
    assert!(found.iter().all(|d| d["rule"] == "yaml/duplicate-key"));
    assert_eq!(
        found[100]["message"],
        "99899 more duplicate keys from here on, not reported one by one; the last of each wins"
    );
    assert_eq!(found[100]["range"]["start"]["line"], 102);
}

/// 2000 Applications without `syncPolicy` in one file: the fix of each was checked by parsing
/// the whole file again (180 s). Ten times that in text, with each fix's diff.
#[test]
fn twenty_thousand_applications_without_sync_policy_in_one_file() {
    let dir = tempfile::tempdir().unwrap();
    let apps: Vec<String> = (0..20_000)
        .map(|i| app(&format!("app-{i}"), "apps"))
        .collect();
    write(dir.path(), "apps.yaml", &apps.join("---\n"));
    let (code, out) = run_limited(
        &[
            "check",
            ".",
            "--format",
            "json",
            "--select",
            "argocd/sync-policy",
        ],
        dir.path(),
        CEILING,
    );
    assert_eq!(code, Some(1));
    let found = json(&out);
    assert_eq!(found.len(), 20_000);
    assert!(found.iter().all(|d| d["fix"]["applicability"] == "unsafe"));
    let (_, text) = run_limited(
        &["check", ".", "--select", "argocd/sync-policy"],
        dir.path(),
        CEILING,
    );
    assert_eq!(text.matches("error[argocd/sync-policy]").count(), 20_000);
    // The last Application's `spec` ends on line 13 of its 14 (with the `---` before it):
    // its diff's hunk starts three lines above, at the file's line numbers.
    let last_spec_end = 19_999 * 14 + 13;
    let hunk = format!("@@ -{},3 +{},7 @@", last_spec_end - 2, last_spec_end - 2);
    assert!(text.contains(&hunk), "no `{hunk}`");
}

/// 20,000 Applications in one folder, each with that folder as its source: 400 million
/// (Application, managed) pairs through one shared set. The cycle rule walked every pair in its
/// components and again in its breadth-first search (36 s in a release build); it now walks
/// each shared set once. `argocd/self-managed` and `argocd/infra-boundary` judged the folder
/// once per Application (1 s each); they now judge a shared file list once.
#[test]
fn twenty_thousand_applications_managing_their_folder() {
    let dir = tempfile::tempdir().unwrap();
    for i in 0..20_000 {
        write(
            dir.path(),
            &format!("apps/a{i}.yaml"),
            &app(&format!("a{i}"), "apps"),
        );
    }
    write(
        dir.path(),
        "apps/infra.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: kube-system\n---\n\
         apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: argocd-server\n  \
         namespace: argocd\n",
    );
    let (code, out) = run_limited(
        &[
            "check",
            ".",
            "--format",
            "json",
            "--select",
            "argocd/app-of-apps-cycle,argocd/self-managed,argocd/infra-boundary",
        ],
        dir.path(),
        CEILING,
    );
    assert_eq!(code, Some(1));
    let found = json(&out);
    let count = |rule: &str| found.iter().filter(|d| d["rule"] == rule).count();
    assert_eq!(count("argocd/self-managed"), 20_000, "one per Application");
    assert_eq!(
        count("argocd/infra-boundary"),
        20_000,
        "one per Application"
    );
    let cycles: Vec<_> = found
        .iter()
        .filter(|d| d["rule"] == "argocd/app-of-apps-cycle")
        .collect();
    assert_eq!(cycles.len(), 1, "one component, one finding");
    let message = cycles[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Application `a0` manages itself through app-of-apps: a0 → "),
        "{message}"
    );
    assert_eq!(
        message.matches('→').count(),
        2,
        "the shortest cycle: {message}"
    );
}

/// One GitLab job of 4000 `git commit && git push` lines, as list items and as one `script: |`
/// block (34 s): each fix parsed the file again, each command mapped the block again, and each
/// code frame printed every line from the job's key.
#[test]
fn a_job_of_four_thousand_write_backs() {
    let dir = tempfile::tempdir().unwrap();
    let items = "    - git commit -am 'bump' && git push\n".repeat(4000);
    let block = "      git commit -am 'bump' && git push\n".repeat(4000);
    write(
        dir.path(),
        ".gitlab-ci.yml",
        &format!("items:\n  script:\n{items}\nblock:\n  script:\n    - |\n{block}"),
    );
    let (code, out) = run_limited(&["check", ".", "--format", "json"], dir.path(), CEILING);
    assert_eq!(code, Some(1));
    let found = json(&out);
    assert_eq!(found.len(), 8000);
    assert!(
        found
            .iter()
            .all(|d| d["rule"] == "ci/writeback-skip-ci" && d["fix"]["applicability"] == "safe")
    );
    let (_, text) = run_limited(&["check", "."], dir.path(), CEILING);
    // About 30 lines a finding: frames are bounded, not the distance to the job's key.
    assert!(
        text.lines().count() < 8000 * 40,
        "{} lines",
        text.lines().count()
    );
    assert!(
        text.contains("note: in job `block`"),
        "a far label has its own frame"
    );
}

/// 2000 Applications in one folder, each with that folder as its source, so each manages
/// every other: `graph` printed every edge with the whole subtree under it, indented by its
/// depth (cubic: killed at 14 GB). Each object is now printed in full once, and the set they
/// all manage is walked under the first (`hostile::graph` has this at 20,000).
#[test]
fn graph_of_two_thousand_applications_that_manage_each_other() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".gitops-lint.yaml",
        "repo_urls: [https://git.example.com/platform/gitops.git]\n",
    );
    for i in 0..2000 {
        write(
            dir.path(),
            &format!("apps/app-{i}.yaml"),
            &app(&format!("app-{i}"), "apps"),
        );
    }
    let (code, text) = run_limited(&["graph", "."], dir.path(), CEILING);
    assert_eq!(code, Some(0));
    assert!(text.len() < 10_000_000, "{} bytes", text.len());
    for i in [0, 999, 1999] {
        let shown = format!("Application app-{i} (apps/app-{i}.yaml:1)");
        let whole = text
            .lines()
            .filter(|l| l.trim_start().trim_start_matches("manages ") == shown)
            .count();
        assert_eq!(whole, 1, "app-{i}");
    }
    assert_eq!(text.matches("  file apps/app-1999.yaml\n").count(), 1);
    assert!(text.contains("the 2000 files listed above for Application app-0\n"));
    assert_eq!(
        text.matches("manages the same 2000 objects as Application app-0 (apps/app-0.yaml:1)\n")
            .count(),
        1999
    );
}

/// A chain of 2000 app-of-apps: the tree was indented 2000 levels deep (12 MB of spaces, and
/// 1.2 GB at ten times the size). Below 16 levels, a subtree continues further down.
#[test]
fn graph_of_a_chain_of_two_thousand_app_of_apps() {
    let dir = tempfile::tempdir().unwrap();
    write(
        dir.path(),
        ".gitops-lint.yaml",
        "repo_urls: [https://git.example.com/platform/gitops.git]\n",
    );
    for i in 0..2000 {
        let next = format!("apps/app-{}", i + 1);
        write(
            dir.path(),
            &format!("apps/app-{i}/app.yaml"),
            &app(&format!("app-{i}"), &next),
        );
    }
    let (code, text) = run_limited(&["graph", "."], dir.path(), CEILING);
    assert_eq!(code, Some(0));
    let widest = text.lines().map(str::len).max().unwrap();
    assert!(widest < 200, "a line of {widest} bytes");
    assert!(text.contains("continued (managed more than 16 levels down):\n"));
    for i in [0, 1000, 1999] {
        let shown = format!("Application app-{i} (apps/app-{i}/app.yaml:1)\n");
        assert_eq!(text.matches(&shown).count(), 1, "app-{i}");
    }
}
