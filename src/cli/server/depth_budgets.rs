//! The depth budgets of the analyses, each at or past its limit, on a sixteenth of the lint
//! worker's stack: a stack overflow aborts the process (it cannot be caught), so what keeps
//! the server up is that no budget needs more than its threads hold, with room to spare.
//!
//! - YAML: collections nested `yaml::MAX_NESTING` levels below a file's top are read, one
//!   level more is a `yaml/resource-limit` finding; the deepest tree goes through the rules, Helm's values,
//!   `toYaml` and `toJson`, and a user policy's `walk` and `json.marshal`.
//! - Go templates: `include` past Helm's 1,000 levels, 3,000 nested parentheses and `if`s, a
//!   value nested 100,000 deep, and `include` 900 deep (within the limit).
//! - Rego: regorus' parser takes expressions 31 parentheses deep (it refuses more), and
//!   recursive functions are refused at load (`tests/it/hostile/rego.rs`).

use std::path::Path;

use gitops_lint::engine::{self, Options, PolicyArgs};
use gitops_lint::yaml::MAX_NESTING;

use super::{Failure, WORKER_STACK, guarded, lint_pool};

const APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: NAME\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/NAME\n    helm:\n      valuesObject: VALUES\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n";

/// An Application that writes an Application whose path is missing, so that the chart is an
/// app-of-apps chart whose failure to render is reported.
const CHILD: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: NAME-child\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: apps/missing\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n";

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// A flow mapping `{a: {a: ... 1}}` of `levels` mappings.
fn nested(levels: usize) -> String {
    format!("{}1{}", "{a: ".repeat(levels), "}".repeat(levels))
}

/// Chart `name`, installed by an Application whose `valuesObject` is `values`, with `template`.
fn chart(dir: &Path, name: &str, template: &str, values: &str) {
    write(
        dir,
        &format!("argocd/{name}.yaml"),
        &APP.replace("NAME", name).replace("VALUES", values),
    );
    write(
        dir,
        &format!("charts/{name}/Chart.yaml"),
        &format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n"),
    );
    write(
        dir,
        &format!("charts/{name}/templates/child.yaml"),
        &CHILD.replace("NAME", name),
    );
    write(dir, &format!("charts/{name}/templates/t.yaml"), template);
}

#[test]
fn every_depth_budget_at_its_limit_fits_in_a_sixteenth_of_the_worker_stack() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitops-lint.yaml", "policies: [policy]\n");
    // The deepest YAML read (the file's top mapping, then `MAX_NESTING` levels), one level
    // more, and values nested about as deep (`valuesObject` is five levels down).
    write(root, "deep.yaml", &format!("a: {}\n", nested(MAX_NESTING)));
    write(
        root,
        "too-deep.yaml",
        &format!("a: {}\n", nested(MAX_NESTING + 1)),
    );
    let deepest = nested(MAX_NESTING - 5);
    chart(
        root,
        "values",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: v\ndata:\n  yaml: {{ toYaml .Values | quote }}\n  json: {{ toJson .Values | quote }}\n",
        &deepest,
    );
    let parens = format!("{{{{ {}1{} }}}}", "(".repeat(3000), ")".repeat(3000));
    let ifs = format!(
        "{}x{}",
        "{{ if true }}".repeat(3000),
        "{{ end }}".repeat(3000)
    );
    let templates = [
        (
            "include",
            r#"{{ define "a" }}{{ include "a" . }}{{ end }}{{ include "a" . }}"#,
        ),
        ("parens", parens.as_str()),
        ("ifs", ifs.as_str()),
        (
            "dict",
            r#"{{ $d := dict }}{{ range until 100000 }}{{ $d = dict "a" $d }}{{ end }}{{ toJson $d }}"#,
        ),
        (
            "within",
            "{{- define \"r\" }}{{ if lt . 900 }}{{ include \"r\" (add1 .) }}{{ end }}{{ end -}}\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: within\ndata:\n  v: \"{{ include \"r\" 0 }}\"\n",
        ),
    ];
    for (name, template) in templates {
        chart(root, name, template, "{}");
    }
    write(
        root,
        "policy/p.rego",
        &format!(
            "package main\n\ndeny contains msg if {{\n  x := {}1{}\n  walk(input, [path, _])\n  count(path) >= {}\n  count(json.marshal(input)) > x\n  msg := \"deep\"\n}}\n",
            "(".repeat(31),
            ")".repeat(31),
            MAX_NESTING
        ),
    );
    let stack = WORKER_STACK / 16;
    let options = Options {
        root: Some(root.to_path_buf()),
        policy: PolicyArgs {
            paths: vec![root.join("policy")],
            ..PolicyArgs::default()
        },
        ..Options::default()
    };
    let outcome = std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || {
            let pool = lint_pool(stack).expect("the lint threads");
            guarded(|| pool.install(|| engine::run(&options)))
        })
        .unwrap()
        .join()
        .unwrap();
    let report = match outcome {
        Ok(report) => report,
        Err(Failure::Crashed(why) | Failure::Message(why)) => panic!("{why}"),
        Err(Failure::Files(errors)) => panic!("{errors:?}"),
    };
    let found: Vec<(String, &str, &str)> = report
        .diagnostics
        .iter()
        .map(|d| {
            (
                report.repo.source(d.span.file).path.clone(),
                d.rule.as_str(),
                d.message.as_str(),
            )
        })
        .collect();
    let has = |file: &str, rule: &str, text: &str| {
        found
            .iter()
            .any(|(f, r, m)| f == file && *r == rule && m.contains(text))
    };
    assert!(
        !found.iter().any(|(_, _, m)| m.contains("internal error")),
        "{found:#?}"
    );
    assert!(
        has("too-deep.yaml", "yaml/resource-limit", ""),
        "{found:#?}"
    );
    assert!(!has("deep.yaml", "yaml/resource-limit", ""), "{found:#?}");
    assert!(has("deep.yaml", "policy/main/deny", "deep"), "{found:#?}");
    for (name, limit) in [
        ("include", "nested deeper than 1000 levels"),
        ("parens", "max expression depth exceeded"),
        ("ifs", "max expression depth exceeded"),
        ("dict", "a value nested deeper than 1000 levels"),
    ] {
        let file = format!("argocd/{name}.yaml");
        assert!(
            has(&file, "argocd/not-rendered", limit),
            "{name}: {found:#?}"
        );
    }
    for name in ["values", "within"] {
        let file = format!("argocd/{name}.yaml");
        assert!(!has(&file, "argocd/not-rendered", ""), "{name}: {found:#?}");
        // Rendered: the chart's Application is checked, and its missing path reported.
        let child = format!("charts/{name}/templates/child.yaml");
        assert!(
            has(&child, "argocd/missing-source", ""),
            "{name}: {found:#?}"
        );
    }
}
