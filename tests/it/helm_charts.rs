//! Helm charts with `charts/*.tgz` subcharts and `import-values`, rendered by gitops-lint and,
//! where the `helm-python-sdk` wheel is installed, by Helm 4 itself: the same YAML documents.

use std::path::Path;

use gitops_lint::engine;
use gitops_lint::model::helm;
use gitops_lint::model::helm::values::Values;

include!("tgz.rs");

const SUB_CHART: &str = "apiVersion: v2\nname: sub\nversion: 0.1.0\n";
const SUB_VALUES: &str = "data:\n  a: 1\n  b: from-sub\n  list: [x, y]\nexports:\n  myexp:\n    e: exported\n    shared: from-export\n  other:\n    shared: from-other\nscalar: 3\n";
const SUB_TEMPLATE: &str = "sub: {{ .Template.Name }} {{ toJson .Values }}\n";

/// A chart case for the differential test: the parent chart `p`'s text files, its archives
/// under `p/charts/`, and the user's values.
struct ChartCase {
    name: &'static str,
    files: Vec<(&'static str, String)>,
    archives: Vec<(&'static str, Vec<u8>)>,
    user: Option<&'static str>,
}

fn parent(deps: &str, values: &str) -> Vec<(&'static str, String)> {
    vec![
        (
            "p/Chart.yaml",
            format!("apiVersion: v2\nname: p\nversion: 0.1.0\ndependencies:\n{deps}"),
        ),
        ("p/values.yaml", values.to_string()),
        (
            "p/templates/p.yaml",
            "p: {{ toJson .Values }}\n".to_string(),
        ),
    ]
}

fn sub_archive() -> Vec<u8> {
    tgz(&[
        ("sub/Chart.yaml", SUB_CHART.as_bytes()),
        ("sub/values.yaml", SUB_VALUES.as_bytes()),
        ("sub/templates/s.yaml", SUB_TEMPLATE.as_bytes()),
        ("sub/README.md", b"not a template"),
    ])
}

fn chart_cases() -> Vec<ChartCase> {
    let dep = "  - name: sub\n    version: 0.1.0\n";
    let grandchild = tgz(&[
        (
            "leaf/Chart.yaml",
            b"apiVersion: v2\nname: leaf\nversion: 0.2.0\n" as &[u8],
        ),
        ("leaf/values.yaml", b"exports:\n  deep:\n    level: leaf\n"),
        (
            "leaf/templates/l.yaml",
            b"leaf: {{ .Template.Name }} {{ toJson .Values }}\n",
        ),
    ]);
    let middle = tgz(&[
        (
            "mid/Chart.yaml",
            b"apiVersion: v2\nname: mid\nversion: 0.1.0\ndependencies:\n  - name: leaf\n    version: 0.2.0\n    import-values: [deep]\n" as &[u8],
        ),
        ("mid/values.yaml", b"own: mid\nlevel: mid-wins\n"),
        ("mid/templates/m.yaml", b"mid: {{ toJson .Values }}\n"),
        ("mid/charts/leaf-0.2.0.tgz", &grandchild),
    ]);
    vec![
        ChartCase {
            name: "tgz-subchart-defaults-and-template-name",
            files: parent(dep, "sub:\n  data:\n    b: parent\n"),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "import-values-string-form",
            files: parent(&format!("{dep}    import-values: [myexp]\n"), "top: 1\n"),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "import-values-map-form-nested-parent",
            files: parent(
                &format!(
                    "{dep}    import-values:\n      - child: data\n        parent: imported.here\n"
                ),
                "imported:\n  here:\n    b: parent-wins\n",
            ),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "import-values-map-form-top-level",
            files: parent(
                &format!("{dep}    import-values:\n      - child: data\n        parent: .\n"),
                "a: parent\n",
            ),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "import-values-first-import-wins",
            files: parent(&format!("{dep}    import-values: [myexp, other]\n"), "{}\n"),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "import-values-read-defaults-not-user-values",
            files: parent(
                &format!("{dep}    import-values:\n      - child: data\n        parent: copy\n"),
                "{}\n",
            ),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: Some("sub:\n  data:\n    b: user\ncopy:\n  a: user-copy\n"),
        },
        ChartCase {
            name: "import-values-parent-defaults-reach-the-child-table",
            files: parent(
                &format!("{dep}    import-values:\n      - child: data\n        parent: copy\n"),
                "sub:\n  data:\n    b: parent-default\n",
            ),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "import-values-missing-or-scalar-child-skipped",
            files: parent(
                &format!(
                    "{dep}    import-values:\n      - nope\n      - child: scalar\n        parent: s\n      - child: absent.table\n        parent: t\n"
                ),
                "{}\n",
            ),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "import-values-with-alias",
            files: parent(
                "  - name: sub\n    version: 0.1.0\n    alias: renamed\n    import-values:\n      - child: data\n        parent: fromalias\n",
                "renamed:\n  data:\n    a: 2\n",
            ),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "import-values-of-a-disabled-subchart",
            files: parent(
                &format!("{dep}    condition: sub.enabled\n    import-values: [myexp]\n"),
                "sub:\n  enabled: false\n",
            ),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "import-values-from-a-folder-subchart",
            files: {
                let mut f = parent(&format!("{dep}    import-values: [myexp]\n"), "e: parent\n");
                f.push(("p/charts/sub/Chart.yaml", SUB_CHART.to_string()));
                f.push(("p/charts/sub/values.yaml", SUB_VALUES.to_string()));
                f.push(("p/charts/sub/templates/s.yaml", SUB_TEMPLATE.to_string()));
                f
            },
            archives: vec![],
            user: None,
        },
        ChartCase {
            name: "one-archive-two-aliases-each-importing",
            files: parent(
                "  - name: sub\n    version: 0.1.0\n    alias: one\n    import-values:\n      - child: data\n        parent: fromone\n  - name: sub\n    version: 0.1.0\n    alias: two\n    import-values:\n      - child: data\n        parent: fromtwo\n",
                "two:\n  data:\n    b: second\n",
            ),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: None,
        },
        ChartCase {
            name: "archive-subchart-gets-parent-globals-and-tags",
            files: parent(
                &format!("{dep}    tags: [extra]\n    import-values: [myexp]\n"),
                "global:\n  region: eu\ntags:\n  extra: true\n",
            ),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: Some("global:\n  env: prod\n"),
        },
        ChartCase {
            name: "user-null-deletes-an-imported-key",
            files: parent(&format!("{dep}    import-values: [myexp]\n"), "{}\n"),
            archives: vec![("p/charts/sub-0.1.0.tgz", sub_archive())],
            user: Some("e: null\n"),
        },
        ChartCase {
            name: "nested-archives-import-chain",
            files: parent(
                "  - name: mid\n    version: 0.1.0\n    import-values:\n      - child: level\n        parent: x\n      - child: deep\n        parent: y\n",
                "{}\n",
            ),
            archives: vec![("p/charts/mid-0.1.0.tgz", middle)],
            user: None,
        },
    ]
}

fn render_case(c: &ChartCase) -> (tempfile::TempDir, Result<Vec<String>, String>) {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<(&str, &[u8])> = c
        .files
        .iter()
        .map(|(p, t)| (*p, t.as_bytes()))
        .chain(c.archives.iter().map(|(p, b)| (*p, &b[..])))
        .collect();
    if let Some(u) = c.user {
        files.push(("user.yaml", u.as_bytes()));
    }
    for (path, bytes) in files {
        let at = dir.path().join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, bytes).unwrap();
    }
    let result = (|| {
        let opts = engine::Options {
            paths: vec![dir.path().to_path_buf()],
            ..engine::Options::default()
        };
        let (repo, _) = engine::load(&opts).map_err(|e| e.to_string())?;
        let chart = helm::load(&repo, "p").map_err(|e| e.to_string())?;
        let mut values = chart.defaults.clone();
        if c.user.is_some() {
            let f = repo.file_by_path("user.yaml").unwrap().id;
            values.merge(Values::from_node(&repo.file_docs(f)[0].root, None));
        }
        let r = helm::render(&chart, &values, &helm::Release::new("rel", "ns"))
            .map_err(|e| e.to_string())?;
        Ok(r.manifests.into_iter().map(|m| m.text).collect())
    })();
    (dir, result)
}

#[test]
fn archives_and_import_values_render() {
    for c in chart_cases() {
        let (_dir, r) = render_case(&c);
        assert!(r.is_ok(), "{}: {r:?}", c.name);
    }
    // The archive's subchart is named by its chart, as Helm names it.
    let (_dir, r) = render_case(&chart_cases()[0]);
    let texts = r.unwrap();
    assert!(
        texts
            .iter()
            .any(|t| t.starts_with("sub: p/charts/sub/templates/s.yaml ")),
        "{texts:?}"
    );
}

/// Runs the Python `script` (the Helm oracle) on `batch` as JSON on its standard input and
/// returns its JSON answer, one result per case.
fn run_oracle(script: &str, batch: &[serde_json::Value]) -> Vec<serde_json::Value> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let mut child = Command::new("python3")
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(serde_json::to_string(batch).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "oracle failed");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Each chart case rendered by Helm (the `helm-python-sdk` wheel) and by us: the same YAML
/// documents.
#[test]
#[ignore = "needs helm-python-sdk (scripts/test installs it)"]
fn archives_and_import_values_agree_with_helm() {
    use std::process::Command;
    let ok = Command::new("python3")
        .args(["-c", "import helm_python, yaml"])
        .status()
        .is_ok_and(|s| s.success());
    assert!(
        ok,
        "the Helm oracle is missing: pip install helm-python-sdk pyyaml"
    );
    let cases = chart_cases();
    let mut dirs = Vec::new();
    let mut batch = Vec::new();
    for c in &cases {
        let (dir, r) = render_case(c);
        batch.push(serde_json::json!({
            "dir": dir.path().join("p").to_string_lossy(),
            "values": c.user,
            "ours": r.as_ref().ok(),
            "error": r.as_ref().err(),
        }));
        dirs.push(dir);
    }
    let script = r#"
import json, sys, yaml, helm_python
out = []
for case in json.load(sys.stdin):
    helm, err = None, None
    try:
        values = yaml.safe_load(case["values"]) if case["values"] else None
        rendered = helm_python.Chart.load(case["dir"]).render(values, name="rel", namespace="ns")
        helm = [v for k, v in sorted(rendered.items()) if not k.endswith("NOTES.txt")]
    except Exception as e:
        err = str(e)
    def docs(texts):
        return sorted(json.dumps(d, sort_keys=True) for t in texts for d in yaml.safe_load_all(t) if d is not None)
    ours = case["ours"]
    same = (ours is None and helm is None) or (ours is not None and helm is not None and docs(ours) == docs(helm))
    out.append({"same": same, "helm": helm, "helm_error": err})
json.dump(out, sys.stdout)
"#;
    let results = run_oracle(script, &batch);
    // The resolver merges the user's layers before rendering, so a user's `null` has already
    // deleted its key and cannot delete a default that a subchart or an import adds later.
    const KNOWN_DIFFERENCES: &[&str] = &["user-null-deletes-an-imported-key"];
    let mut failures = Vec::new();
    for ((c, r), b) in cases.iter().zip(&results).zip(&batch) {
        let same = r["same"].as_bool() == Some(true);
        if same == KNOWN_DIFFERENCES.contains(&c.name) {
            failures.push(format!(
                "--- {} ({})\nours: {}\nour error: {}\nhelm: {}\nhelm error: {}",
                c.name,
                if same {
                    "agrees but is a known difference"
                } else {
                    "differs"
                },
                b["ours"],
                b["error"],
                r["helm"],
                r["helm_error"]
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The built-in `argocd-apps` chart against the real one: the templates gitops-lint carries,
/// packaged as a chart, rendered by Helm with the same values (each version's own form, and by
/// shape, which must read a 1.x list as 1.x does and a 2.x map as 2.x does).
fn argocd_apps_cases() -> Vec<(
    &'static str,
    helm::argocd_apps::Form,
    &'static str,
    &'static str,
)> {
    use helm::argocd_apps::Form;
    const V2: &str = r#"applications:
  web:
    namespace: argocd
    additionalLabels: {team: a, tier: "1"}
    additionalAnnotations: {note: "x: y", n: 3}
    finalizers: [resources-finalizer.argocd.argoproj.io]
    project: "{{ .Release.Name }}-proj"
    sources:
      - repoURL: https://git.example.com/r.git
        path: apps/web
        targetRevision: main
      - repoURL: https://charts.example.com
        chart: web
        targetRevision: 1.2.3
        helm:
          valuesObject: {replicas: 2, enabled: true}
    destination: {server: https://kubernetes.default.svc, namespace: web}
    syncPolicy:
      automated: {prune: true, selfHeal: false}
      syncOptions: [CreateNamespace=true]
    revisionHistoryLimit: 5
    ignoreDifferences:
      - group: apps
        kind: Deployment
        jsonPointers: [/spec/replicas]
    info:
      - name: url
        value: https://web.example.com
  off: null
applicationsets:
  cells:
    namespace: argocd
    goTemplate: true
    goTemplateOptions: ["missingkey=error"]
    generators:
      - list:
          elements:
            - cell: a
    template:
      metadata:
        name: "cell-{{ .cell }}"
        annotations: {owner: "team a"}
        labels: {cell: "{{ .cell }}"}
      spec:
        project: default
        source:
          repoURL: https://git.example.com/r.git
          path: "cells/{{ .cell }}"
        destination:
          server: https://kubernetes.default.svc
          namespace: "{{ .cell }}"
    templatePatch: |
      spec:
        syncPolicy: {}
  empty: {}
projects:
  team:
    namespace: argocd
    description: the team
    permitOnlyProjectScopedClusters: true
    sourceRepos: ["*"]
    destinations: [{server: "*", namespace: "team-*"}]
    clusterResourceWhitelist: [{group: "", kind: Namespace}]
    roles:
      - name: ci
        policies: ["p, proj:team:ci, applications, sync, team/*, allow"]
    syncWindows:
      - kind: allow
        schedule: "10 1 * * *"
        duration: 1h
    sourceNamespaces: [team]
extensions:
  metrics:
    namespace: argocd
    sources:
      - web:
          url: https://example.com/ext.tar
itemTemplates:
  - items:
      - name: one
        ns: a
      - name: two
        ns: b
    template:
      apiVersion: argoproj.io/v1alpha1
      kind: AppProject
      metadata:
        name: "{{ .name }}"
        namespace: "{{ .ns }}"
  - items:
      - name: three
    template: |
      apiVersion: argoproj.io/v1alpha1
      kind: AppProject
      metadata:
        name: {{ .name }}
"#;
    const V1: &str = r#"applications:
  - name: web
    namespace: argocd
    additionalLabels: {team: a}
    project: default
    source:
      repoURL: https://git.example.com/r.git
      path: apps/web
    destination: {server: https://kubernetes.default.svc, namespace: web}
    syncPolicy: {automated: {prune: true}}
  - name: api
    project: "{{ .Release.Namespace }}"
    sources:
      - repoURL: https://git.example.com/r.git
        path: apps/api
    destination: {name: in-cluster, namespace: api}
applicationsets:
  - name: cells
    generators:
      - list: {elements: [{cell: a}]}
    template:
      metadata: {name: "cell-{{cell}}"}
      spec:
        project: default
        source: {repoURL: https://git.example.com/r.git, path: "cells/{{cell}}"}
        destination: {server: https://kubernetes.default.svc, namespace: "{{cell}}"}
projects:
  - name: team
    namespace: argocd
    sourceRepos: ["*"]
  - name: bare
extensions:
  - name: metrics
    sources: [{web: {url: https://example.com/ext.tar}}]
"#;
    vec![
        ("v2-map", Form::Map, "2.0.5", V2),
        ("v1-list", Form::List, "1.6.2", V1),
        ("by-shape-map", Form::ByShape, "2.0.5", V2),
        ("by-shape-list", Form::ByShape, "1.6.2", V1),
    ]
}

fn render_argocd_apps(
    form: helm::argocd_apps::Form,
    values: &str,
) -> (tempfile::TempDir, Result<Vec<String>, String>) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("values.yaml"), values).unwrap();
    let opts = engine::Options {
        paths: vec![dir.path().to_path_buf()],
        ..engine::Options::default()
    };
    let (repo, _) = engine::load(&opts).unwrap();
    let f = repo.file_by_path("values.yaml").unwrap().id;
    let vals = repo.helm_values(&repo.file_docs(f)[0]);
    let chart = helm::argocd_apps::chart("argocd-apps", form);
    let r = helm::render(&chart, &vals, &helm::Release::new("rel", "ns"))
        .map(|r| r.manifests.into_iter().map(|m| m.text).collect())
        .map_err(|e| e.to_string());
    (dir, r)
}

#[test]
fn built_in_argocd_apps_renders_every_case() {
    for (name, form, _, values) in argocd_apps_cases() {
        let (_dir, r) = render_argocd_apps(form, values);
        let texts = r.unwrap_or_else(|e| panic!("{name}: {e}"));
        let all = texts.concat();
        for kind in [
            "kind: Application\n",
            "kind: ApplicationSet\n",
            "kind: AppProject\n",
        ] {
            assert!(all.contains(kind), "{name}: no {kind}{all}");
        }
    }
}

#[test]
#[ignore = "needs helm-python-sdk (scripts/test installs it)"]
fn built_in_argocd_apps_agrees_with_helm() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/model/helm/argocd_apps");
    let mut keep = Vec::new();
    let mut batch = Vec::new();
    for (name, form, version, values) in argocd_apps_cases() {
        // The real chart: the same template files, as argo-helm ships them.
        let chart = tempfile::tempdir().unwrap();
        let v = if version.starts_with('1') { "v1" } else { "v2" };
        std::fs::create_dir_all(chart.path().join("templates")).unwrap();
        std::fs::write(
            chart.path().join("Chart.yaml"),
            format!("apiVersion: v2\nname: argocd-apps\nversion: {version}\n"),
        )
        .unwrap();
        for e in std::fs::read_dir(root.join(v)).unwrap() {
            let p = e.unwrap().path();
            let file = p
                .file_name()
                .unwrap()
                .to_string_lossy()
                .replace(".gotmpl", "");
            std::fs::copy(&p, chart.path().join("templates").join(file)).unwrap();
        }
        let (_dir, ours) = render_argocd_apps(form, values);
        batch.push(serde_json::json!({
            "name": name,
            "dir": chart.path().to_string_lossy(),
            "values": values,
            "ours": ours.as_ref().ok(),
            "error": ours.as_ref().err(),
        }));
        keep.push(chart);
    }
    let script = r#"
import json, sys, yaml, helm_python
out = []
for case in json.load(sys.stdin):
    helm, err = None, None
    try:
        rendered = helm_python.Chart.load(case["dir"]).render(yaml.safe_load(case["values"]), name="rel", namespace="ns")
        helm = [v for k, v in sorted(rendered.items())]
    except Exception as e:
        err = str(e)
    def docs(texts):
        return sorted(json.dumps(d, sort_keys=True) for t in texts for d in yaml.safe_load_all(t) if d is not None)
    ours = case["ours"]
    try:
        same = ours is not None and helm is not None and docs(ours) == docs(helm)
    except Exception:
        same = ours == helm
    out.append({"same": same, "helm": helm, "helm_error": err})
json.dump(out, sys.stdout)
"#;
    let results = run_oracle(script, &batch);
    let failures: Vec<String> = results
        .iter()
        .zip(&batch)
        .filter(|(r, _)| r["same"].as_bool() != Some(true))
        .map(|(r, b)| {
            format!(
                "--- {}\nours: {}\nour error: {}\nhelm: {}\nhelm error: {}",
                b["name"], b["ours"], b["error"], r["helm"], r["helm_error"]
            )
        })
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
