use std::path::Path;

use super::*;
use crate::model::{Document, classify};
use crate::source::{FileId, LineIndex, SourceDb, SourceFile};

/// Writes `files` under a temporary root and builds the project discovery would: YAML files
/// outside `templates/` are parsed; templates stay on disk.
fn project(files: &[(&str, &str)]) -> (tempfile::TempDir, Project) {
    let dir = tempfile::tempdir().unwrap();
    let mut sources = Vec::new();
    let mut docs = Vec::new();
    let mut sorted = files.to_vec();
    sorted.sort();
    for (rel, text) in sorted {
        let abs = dir.path().join(rel);
        std::fs::create_dir_all(abs.parent().unwrap()).unwrap();
        std::fs::write(&abs, text).unwrap();
        if rel.contains("templates/") || !(rel.ends_with(".yaml") || rel.ends_with(".yml")) {
            continue;
        }
        let id = FileId(sources.len() as u32);
        for d in yaml::parse(id, text).docs {
            docs.push(Document {
                file: id,
                index: d.index,
                span: d.span,
                kind: classify(rel, &d.root),
                root: d.root,
            });
        }
        sources.push(SourceFile {
            id,
            path: rel.to_string(),
            abs,
            text: text.to_string(),
            lines: LineIndex::new(text),
            unreadable: None,
        });
    }
    let mut p = Project::new(dir.path().to_path_buf(), SourceDb::new(sources), docs);
    p.on_disk = true;
    (dir, p)
}

const APPS_CHART: &[(&str, &str)] = &[
    (
        "apps/Chart.yaml",
        "apiVersion: v2\nname: apps\nversion: 1.0.0\n",
    ),
    (
        "apps/values.yaml",
        "spec:\n  destination:\n    server: https://kubernetes.default.svc\nrepoURL: https://example.com/r.git\napplications:\n  - name: guestbook\n    path: guestbook\n  - name: helm-guestbook\n    path: helm-guestbook\n",
    ),
    (
        "apps/templates/applications.yaml",
        "{{- range .Values.applications }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{ .name }}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: {{ $.Values.repoURL }}\n    path: {{ .path }}\n  destination:\n    server: {{ $.Values.spec.destination.server }}\n    namespace: {{ .name }}\n{{- end }}\n",
    ),
    (
        "apps/templates/_helpers.tpl",
        "{{- define \"x\" }}x{{ end }}\n",
    ),
    (
        "apps/templates/NOTES.txt",
        "Installed {{ .Release.Name }}\n",
    ),
];

fn defaults(p: &Project, chart: &Chart) -> Values {
    let _ = p;
    chart.defaults.clone()
}

#[test]
fn renders_an_app_of_apps_chart_with_provenance() {
    let (_dir, p) = project(APPS_CHART);
    let chart = load(&p, "apps").unwrap();
    assert_eq!(chart.templates.len(), 3);
    let vals = defaults(&p, &chart);
    let r = render(&chart, &vals, &Release::new("apps", "argocd")).unwrap();
    // NOTES.txt and partials are not manifests.
    assert_eq!(r.manifests.len(), 1);
    assert_eq!(r.manifests[0].path, "apps/templates/applications.yaml");
    let anchor = Span::new(FileId(0), 0, 0);
    let docs = documents(&r, anchor);
    assert_eq!(docs.len(), 2);
    let names: Vec<&str> = docs
        .iter()
        .filter_map(|d| d.root.path(&["metadata", "name"]).and_then(Node::as_str))
        .collect();
    assert_eq!(names, ["guestbook", "helm-guestbook"]);
    // The name came from values.yaml: its node points there.
    let values_file = p.file_by_path("apps/values.yaml").unwrap();
    let name = docs[1].root.path(&["metadata", "name"]).unwrap();
    assert_eq!(name.span.file, values_file.id);
    assert_eq!(values_file.slice(name.span), "helm-guestbook");
    // Literal text points at the anchor; the document starts at line 3 of the template.
    let kind = docs[0].root.get("kind").unwrap();
    assert_eq!(kind.span, anchor);
    assert_eq!(docs[0].template, "apps/templates/applications.yaml");
    assert_eq!(docs[0].line, 3);
}

#[test]
fn subcharts_get_their_defaults_globals_and_conditions() {
    let (_dir, p) = project(&[
        (
            "c/Chart.yaml",
            "apiVersion: v2\nname: c\nversion: 1.0.0\ndependencies:\n  - name: sub\n    alias: first\n    condition: first.enabled\n  - name: sub\n    alias: second\n    condition: second.enabled\n",
        ),
        (
            "c/values.yaml",
            "global:\n  env: prod\nfirst:\n  enabled: true\n  port: 8080\nsecond:\n  enabled: false\n",
        ),
        (
            "c/templates/cm.yaml",
            "parent: {{ .Values.first.port }}-{{ .Values.first.image }}\n",
        ),
        (
            "c/charts/sub/Chart.yaml",
            "apiVersion: v2\nname: sub\nversion: 0.1.0\n",
        ),
        (
            "c/charts/sub/values.yaml",
            "port: 80\nimage: nginx\nglobal:\n  env: dev\n  region: eu\n",
        ),
        (
            "c/charts/sub/templates/svc.yaml",
            "name: {{ .Chart.Name }}\nport: {{ .Values.port }}\nimage: {{ .Values.image }}\nenv: {{ .Values.global.env }}-{{ .Values.global.region }}\n",
        ),
    ]);
    let chart = load(&p, "c").unwrap();
    let r = render(&chart, &chart.defaults, &Release::new("r", "ns")).unwrap();
    let texts: Vec<(&str, &str)> = r
        .manifests
        .iter()
        .map(|m| (m.path.as_str(), m.text.as_str()))
        .collect();
    assert_eq!(
        texts,
        [
            (
                "c/charts/sub/templates/svc.yaml",
                "name: sub\nport: 8080\nimage: nginx\nenv: prod-eu\n"
            ),
            ("c/templates/cm.yaml", "parent: 8080-nginx\n"),
        ]
    );
}

#[test]
fn render_errors_name_the_template_line_and_function() {
    let (_dir, p) = project(&[
        ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\n"),
        ("c/templates/a.yaml", "a: 1\nb: {{ randAlphaNum 3 }}\n"),
    ]);
    let chart = load(&p, "c").unwrap();
    let e = render(&chart, &chart.defaults, &Release::new("r", "ns")).unwrap_err();
    assert_eq!(e.path, "c/templates/a.yaml");
    assert_eq!(e.line, 2);
    assert_eq!(e.unsupported.as_deref(), Some("randAlphaNum"));
}

#[test]
fn argocd_kinds_are_spotted_in_templates() {
    assert!(writes_argocd_kind(
        "{{ range . }}\nkind: Application\n{{ end }}"
    ));
    assert!(writes_argocd_kind("  kind: \"AppProject\"\n"));
    assert!(!writes_argocd_kind("kind: Deployment\n"));
    let _ = Path::new(".");
}

#[test]
fn files_are_the_charts_other_files() {
    let (_dir, p) = project(&[
        ("c/Chart.yaml", "apiVersion: v2\nname: c\nversion: 1.0.0\n"),
        ("c/config/app.conf", "a=1\nb=2\n"),
        ("c/config/other.txt", "x"),
        (
            "c/templates/cm.yaml",
            "get: {{ .Files.Get \"config/app.conf\" | quote }}\nlines: {{ len (.Files.Lines \"config/app.conf\") }}\ndata:\n{{ (.Files.Glob \"config/*.conf\").AsConfig | indent 2 }}\nsecret:\n{{ (.Files.Glob \"config/*.txt\").AsSecrets | indent 2 }}\nnone: {{ .Files.Get \"templates/cm.yaml\" | quote }}\n",
        ),
    ]);
    let chart = load(&p, "c").unwrap();
    let r = render(&chart, &chart.defaults, &Release::new("r", "ns")).unwrap();
    assert_eq!(
        r.manifests[0].text,
        "get: \"a=1\\nb=2\\n\"\nlines: 2\ndata:\n  app.conf: |\n    a=1\n    b=2\nsecret:\n  other.txt: eA==\nnone: \"\"\n"
    );
}

#[test]
fn argocd_apps_forms_follow_the_version() {
    use argocd_apps::{Form, form_of, is_argocd_apps};
    assert_eq!(form_of(Some("1.6.2")), Form::List);
    assert_eq!(form_of(Some("^1.4.0")), Form::List);
    assert_eq!(form_of(Some("2.0.5")), Form::Map);
    assert_eq!(form_of(Some("v2.x")), Form::Map);
    assert_eq!(form_of(Some("~2.0")), Form::Map);
    assert_eq!(form_of(Some(">=1.0.0")), Form::ByShape);
    assert_eq!(form_of(Some("*")), Form::ByShape);
    assert_eq!(form_of(None), Form::ByShape);
    assert!(is_argocd_apps(
        Some("https://argoproj.github.io/argo-helm/"),
        "argocd-apps"
    ));
    assert!(is_argocd_apps(
        Some("oci://ghcr.io/argoproj/argo-helm"),
        "argocd-apps"
    ));
    assert!(!is_argocd_apps(
        Some("https://argoproj.github.io/argo-helm"),
        "argo-cd"
    ));
    assert!(!is_argocd_apps(
        Some("https://charts.example.com"),
        "argocd-apps"
    ));
}

/// By shape: a list is read as 1.x, a map as 2.x; an empty 2.x item is skipped; item
/// templates render; every node points into the values file.
#[test]
fn argocd_apps_values_render_by_shape_with_values_spans() {
    let values = "applications:\n  - name: listed\n    project: default\n    destination: {namespace: a}\nprojects:\n  team:\n    description: the team\n  off: null\nitemTemplates:\n  - items:\n      - name: one\n    template:\n      apiVersion: argoproj.io/v1alpha1\n      kind: AppProject\n      metadata:\n        name: '{{ .name }}'\n";
    let (_dir, p) = project(&[("values.yaml", values)]);
    let file = p.file_by_path("values.yaml").unwrap().id;
    let vals = Values::from_node(&p.file_docs(file)[0].root, None);
    let anchor = Span::new(file, 0, 0);
    let docs = argocd_apps::render_objects(
        &p,
        &vals,
        argocd_apps::Form::ByShape,
        &Release::new("apps", "argocd"),
        anchor,
    )
    .unwrap();
    let names: Vec<(&str, &str)> = docs
        .iter()
        .map(|d| {
            (
                d.root.get_str("kind").unwrap(),
                d.root
                    .path(&["metadata", "name"])
                    .unwrap()
                    .as_str()
                    .unwrap(),
            )
        })
        .collect();
    assert_eq!(
        names,
        [
            ("Application", "listed"),
            ("AppProject", "one"),
            ("AppProject", "team")
        ]
    );
    // The 2.x project's name and the nodes the template writes point at its key `team:`.
    let team = &docs[2];
    let key = values.find("team:").unwrap() as u32;
    assert_eq!(
        team.root.path(&["metadata", "name"]).unwrap().span.start,
        key
    );
    assert_eq!(team.root.get("kind").unwrap().span.start, key);
    let desc = team.root.path(&["spec", "description"]).unwrap();
    assert_eq!(desc.span.start, values.find("the team").unwrap() as u32);
    // The 1.x application's nodes point at its `name`.
    let listed = values.find("listed").unwrap() as u32;
    assert_eq!(docs[0].root.get("spec").unwrap().span.start, listed);
}

/// A `.tgz` chart archive of `entries` (paths include the top folder, as `helm package`
/// writes them).
fn tgz(entries: &[(&str, &[u8])]) -> Vec<u8> {
    let mut builder = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::fast(),
    ));
    for (path, bytes) in entries {
        let mut header = tar::Header::new_gnu();
        // Written raw: `set_path` refuses the hostile names some tests need.
        header.as_gnu_mut().unwrap().name[..path.len()].copy_from_slice(path.as_bytes());
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_cksum();
        builder.append(&header, *bytes).unwrap();
    }
    builder.into_inner().unwrap().finish().unwrap()
}

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
    let mut files: Vec<(&str, &str)> = c.files.iter().map(|(p, t)| (*p, t.as_str())).collect();
    if let Some(u) = c.user {
        files.push(("user.yaml", u));
    }
    let (dir, p) = project(&files);
    for (path, bytes) in &c.archives {
        let at = dir.path().join(path);
        std::fs::create_dir_all(at.parent().unwrap()).unwrap();
        std::fs::write(at, bytes).unwrap();
    }
    let result = (|| {
        let chart = load(&p, "p").map_err(|e| e.to_string())?;
        let mut values = chart.defaults.clone();
        if c.user.is_some() {
            let f = p.file_by_path("user.yaml").unwrap().id;
            values.merge(Values::from_node(&p.file_docs(f)[0].root, None));
        }
        let r = render(&chart, &values, &Release::new("rel", "ns")).map_err(|e| e.to_string())?;
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

#[test]
fn hostile_archives_are_refused_not_unpacked() {
    // Climbing paths are skipped; a bomb stops at the unpacked limit.
    let climbing = tgz(&[
        ("sub/Chart.yaml", SUB_CHART.as_bytes()),
        ("sub/../../escape.yaml", b"x: 1"),
        ("/abs/templates/x.yaml", b"x: 1"),
    ]);
    let files = read_archive(&climbing).unwrap();
    let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["Chart.yaml"]);
    let zeros = vec![0u8; (MAX_TEMPLATE_BYTES + 1) as usize];
    let big = tgz(&[("sub/templates/big.yaml", &zeros)]);
    assert!(read_archive(&big).unwrap_err().contains("larger than"));
    assert!(read_archive(b"not gzip").is_err());
}

/// Each chart case rendered by Helm (the `helm-python-sdk` wheel) and by us: the same YAML
/// documents.
#[test]
#[ignore = "needs helm-python-sdk (scripts/test installs it)"]
fn archives_and_import_values_agree_with_helm() {
    use std::io::Write;
    use std::process::{Command, Stdio};
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
        .write_all(serde_json::to_string(&batch).unwrap().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "oracle failed");
    let results: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
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
