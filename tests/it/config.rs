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
fn ci_projects_must_stay_inside_the_repository() {
    let dir = repo(&[
        ("app.yaml", APP),
        ("ci-modules/templates/a.yml", ".t:\n  script: [echo]\n"),
        (
            ".gitops-lint.yaml",
            "ci:\n  projects:\n    group/mods: ../cnp-ci-modules\n    group/other: missing\n",
        ),
    ]);
    let (code, err) = check(dir.path());
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains(".gitops-lint.yaml:3:17"), "{err}");
    assert!(
        err.contains("`../cnp-ci-modules` is outside the repository"),
        "{err}"
    );
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "ci:\n  projects:\n    group/mods: ci-modules\n",
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

/// Every option a rule declares (Rust or Rego) is read from `rules.<id>` as its rule reads it:
/// as written for a Rego rule (`data.gitops_lint.options`), typed for a Rust rule (what its
/// `cx.options::<Options>()` returns). A value of another type is an error at the value; a
/// misspelt name is one at the name, with a "did you mean".
#[test]
fn every_rule_option_round_trips_and_a_wrong_type_or_name_is_located() {
    use gitops_lint::rule::OptionKind;
    let metas = gitops_lint::registry::all_meta();
    let path = Path::new(".gitops-lint.yaml");
    let parse = |text: &str| gitops_lint::config::parse(path, text, &metas);
    let mut typed_options = 0;
    for m in &metas {
        for o in m.options {
            let (yaml, json, debug) = match o.kind {
                OptionKind::Bool => ("true", serde_json::json!(true), "true"),
                OptionKind::String => (
                    "round-trip",
                    serde_json::json!("round-trip"),
                    "\"round-trip\"",
                ),
                OptionKind::StringList => (
                    "[round-trip]",
                    serde_json::json!(["round-trip"]),
                    "[\"round-trip\"]",
                ),
                OptionKind::Count => ("7", serde_json::json!(7), "7"),
            };
            let at = format!("rules:\n  {}:\n    {}: ", m.id, o.name);
            let c = parse(&format!("{at}{yaml}\n")).unwrap_or_else(|e| panic!("{}: {e}", m.id));
            let options = c.rule_options();
            assert_eq!(options.json_of(m.id).get(o.name), Some(&json), "{}", m.id);
            if o.set.is_some() {
                typed_options += 1;
                let typed = format!("{:?}", options.typed);
                assert!(
                    typed.contains(&format!("{}: Some({debug})", o.name))
                        || typed.contains(&format!("{}: {debug}", o.name)),
                    "`{}` of `{}` is not in the typed options: {typed}",
                    o.name,
                    m.id
                );
            }
            let wrong = match o.kind {
                OptionKind::StringList => "{a: 1}",
                _ => "[1, 2]",
            };
            let e = parse(&format!("{at}{wrong}\n")).unwrap_err();
            assert_eq!(
                e.span.map(|s| s.0),
                Some(at.len()),
                "{}: {}",
                m.id,
                e.message
            );
            assert_eq!(
                e.message,
                format!(
                    "option `{}` of `{}` must be {}",
                    o.name,
                    m.id,
                    o.kind.describe()
                )
            );
            let misspelt = &o.name[..o.name.len() - 1];
            let e = parse(&format!("rules:\n  {}:\n    {misspelt}: {yaml}\n", m.id)).unwrap_err();
            assert_eq!(e.span.map(|s| s.0), Some(at.len() - o.name.len() - 2));
            assert_eq!(
                e.message,
                format!("unknown option `{misspelt}` for rule `{}`", m.id)
            );
            assert_eq!(
                e.help,
                Some(format!("did you mean `{}`?", o.name)),
                "{}",
                m.id
            );
        }
    }
    assert!(typed_options >= 2, "the Rust rules' options were not seen");
}

/// A Rust rule's option, set in the configuration, changes what the rule reports.
#[test]
fn a_typed_option_is_what_the_rule_reads() {
    use gitops_lint::rules::argocd::image_tag_none;
    let app = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/web\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: web\n";
    let files = [
        ("argocd/web.yaml", app),
        (
            "charts/web/Chart.yaml",
            "apiVersion: v2\nname: web\nversion: 1.0.0\n",
        ),
        (
            "charts/web/values.yaml",
            "image:\n  repository: nginx\n  tag: changeme\n",
        ),
    ];
    let metas = gitops_lint::registry::all_meta();
    let found = |config: gitops_lint::config::Config| {
        gitops_lint::engine::check_texts(&files, config)
            .diagnostics
            .iter()
            .filter(|d| d.rule == "argocd/image-tag-none")
            .map(|d| d.message.clone())
            .collect::<Vec<_>>()
    };
    assert_eq!(
        found(gitops_lint::config::Config::default()),
        Vec::<String>::new()
    );
    let config = gitops_lint::config::parse(
        Path::new(".gitops-lint.yaml"),
        "rules:\n  argocd/image-tag-none:\n    placeholders: [none, ChangeMe]\n",
        &metas,
    )
    .unwrap();
    assert_eq!(
        config
            .options
            .get::<image_tag_none::Options>()
            .placeholders
            .as_deref(),
        Some(&["none".to_string(), "ChangeMe".to_string()][..])
    );
    assert_eq!(
        found(config),
        vec![
            "`image.tag` is the placeholder `changeme`, and Application `web` deploys it"
                .to_string()
        ]
    );
}
