//! The integration files at the root: `.pre-commit-hooks.yaml`, `action.yml` and
//! `ci/gitlab-ci-template.yml`, each parsed with our own YAML layer and its shell run for real
//! against the built binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use gitops_lint::source::FileId;
use gitops_lint::yaml::{self, Node};

fn project_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn load(rel: &str) -> Node {
    let text = std::fs::read_to_string(project_root().join(rel)).unwrap();
    let parsed = yaml::parse(FileId(0), &text);
    assert!(parsed.errors.is_empty(), "{rel}: {:?}", parsed.errors);
    parsed.docs.into_iter().next().unwrap().root
}

/// A directory holding the built binary, for PATH.
fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn path_with_bin() -> String {
    format!(
        "{}:{}",
        bin_dir().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// A git repository holding a copy of the example repository.
fn example_repo() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let src = project_root().join("testdata/examples/cnp-gitops");
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(&src).unwrap();
            if p.is_dir() {
                std::fs::create_dir_all(dir.path().join(rel)).unwrap();
                stack.push(p);
            } else {
                std::fs::copy(&p, dir.path().join(rel)).unwrap();
            }
        }
    }
    crate::support::git_init_commit(dir.path(), "example");
    dir
}

fn bash(script: &str, cwd: &Path, env: &[(&str, &str)]) -> std::process::Output {
    let mut c = Command::new("bash");
    c.arg("-c")
        .arg(script)
        .current_dir(cwd)
        .env("PATH", path_with_bin())
        .env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

#[test]
fn pre_commit_hook_is_declared() {
    let hooks = load(".pre-commit-hooks.yaml");
    let hook = hooks
        .items()
        .find(|h| h.get_str("id") == Some("gitops-lint"))
        .expect("a `gitops-lint` hook");
    assert_eq!(hook.get_str("language"), Some("rust"));
    assert_eq!(hook.get_str("entry"), Some("gitops-lint check"));
    assert_eq!(
        hook.get("require_serial").and_then(Node::as_bool),
        Some(true)
    );
}

/// `pre-commit try-repo . gitops-lint --files <file>` against a copy of the example repository.
/// Runs where pre-commit is installed (`.ci/run` installs it); elsewhere it says so and passes,
/// except under CI, where a missing pre-commit is a failure.
#[test]
fn pre_commit_try_repo_checks_the_given_files() {
    let have = Command::new("pre-commit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        assert!(
            std::env::var_os("CI").is_none(),
            "pre-commit is not installed (pip install pre-commit)"
        );
        eprintln!("skipping: pre-commit is not installed (pip install pre-commit)");
        return;
    }
    let repo = example_repo();
    let run = |file: &str| {
        Command::new("pre-commit")
            .args([
                "try-repo",
                &project_root().to_string_lossy(),
                "gitops-lint",
                "--files",
                file,
            ])
            .current_dir(repo.path())
            .env("CARGO_TARGET_DIR", project_root().join("target/pre-commit"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    };
    let values = run("apps/citation-api/values-dev.yaml");
    let out = String::from_utf8_lossy(&values.stdout);
    assert!(
        values.status.success(),
        "a clean values file passes:\n{out}"
    );
    let app = run("argocd/citation-web/prod.yaml");
    let out = String::from_utf8_lossy(&app.stdout);
    assert_eq!(app.status.code(), Some(1), "{out}");
    assert!(
        out.contains("argocd/sync-policy") && out.contains("argocd/citation-web/prod.yaml:21:5"),
        "{out}"
    );
    assert!(
        !out.contains("tenants.yaml"),
        "only the given files are reported:\n{out}"
    );
}

fn steps(action: &Node) -> Vec<&Node> {
    action.path(&["runs", "steps"]).unwrap().items().collect()
}

#[test]
fn github_action_runs_the_check_and_writes_sarif() {
    let action = load("action.yml");
    for input in ["paths", "config", "fail-on", "sarif-file", "version"] {
        assert!(
            action.path(&["inputs", input]).is_some(),
            "action input `{input}`"
        );
    }
    assert_eq!(
        action.path(&["runs", "using"]).and_then(Node::as_str),
        Some("composite")
    );
    let steps = steps(&action);
    assert!(
        steps.iter().any(|s| s
            .get_str("uses")
            .is_some_and(|u| u.starts_with("actions/cache@"))),
        "the build is cached"
    );
    let install = steps
        .iter()
        .find(|s| s.get_str("name") == Some("Install gitops-lint"))
        .unwrap();
    let run = steps
        .iter()
        .find(|s| s.get_str("name") == Some("Run gitops-lint"))
        .unwrap();
    let repo = example_repo();

    let o = bash(
        install.get_str("run").unwrap(),
        repo.path(),
        &[("GITOPS_LINT_VERSION", ""), ("GITOPS_LINT_SOURCE", ".")],
    );
    assert!(o.status.success() && String::from_utf8_lossy(&o.stdout).contains("is installed"));

    let script = run.get_str("run").unwrap();
    let sarif = repo.path().join("results.sarif");
    let o = bash(
        script,
        repo.path(),
        &[
            ("INPUT_PATHS", "."),
            ("INPUT_CONFIG", ""),
            ("INPUT_FAIL_ON", "error"),
            ("INPUT_SARIF_FILE", &sarif.to_string_lossy()),
        ],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(
        out.contains("::error file=argocd/citation-web/prod.yaml,line=21,"),
        "{out}"
    );
    let log: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).unwrap()).unwrap();
    assert_eq!(log["version"], "2.1.0");

    let o = bash(
        script,
        repo.path(),
        &[
            ("INPUT_PATHS", "argocd/citation-web/dev.yaml"),
            ("INPUT_CONFIG", ".gitops-lint.yaml"),
            ("INPUT_FAIL_ON", "error"),
            ("INPUT_SARIF_FILE", ""),
        ],
    );
    assert_eq!(
        o.status.code(),
        Some(0),
        "a clean file passes: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

#[test]
fn gitlab_template_uploads_a_code_quality_report() {
    let template = load("ci/gitlab-ci-template.yml");
    let job = template.get("gitops-lint").expect("a `gitops-lint` job");
    let report = job
        .path(&["artifacts", "reports", "codequality"])
        .and_then(Node::as_str)
        .unwrap();
    let script: Vec<&str> = job
        .get("script")
        .unwrap()
        .items()
        .filter_map(Node::as_str)
        .collect();
    assert!(
        script
            .iter()
            .any(|l| l.contains(&format!("gitlab={report}"))),
        "the job writes the report it uploads"
    );
    assert!(job.get("rules").unwrap().items().any(|r| {
        r.get_str("if")
            .is_some_and(|c| c.contains("merge_request_event"))
    }));

    let repo = example_repo();
    let vars: Vec<(String, String)> = job
        .get("variables")
        .unwrap()
        .entries()
        .map(|e| {
            (
                e.key.scalar_text().unwrap().to_string(),
                e.value.scalar_text().unwrap_or("").to_string(),
            )
        })
        .collect();
    let mut env: Vec<(&str, &str)> = vars.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let cargo_home = repo.path().join(".cargo");
    let cargo_home = cargo_home.to_string_lossy();
    env.retain(|(k, _)| *k != "CARGO_HOME");
    env.push(("CARGO_HOME", &cargo_home));
    let o = bash(&script.join("\n"), repo.path(), &env);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let issues: Vec<serde_json::Value> =
        serde_json::from_str(&std::fs::read_to_string(repo.path().join(report)).unwrap()).unwrap();
    assert!(
        issues
            .iter()
            .any(|i| i["check_name"] == "argocd/sync-policy")
    );

    env.push(("GITOPS_LINT_NEW_SINCE", "HEAD"));
    let o = bash(&script.join("\n"), repo.path(), &env);
    assert_eq!(
        o.status.code(),
        Some(0),
        "nothing is new since HEAD: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}
