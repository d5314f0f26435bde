use std::cell::Cell;
use std::path::Path;

use super::archive::{MAX_ARCHIVE_UNPACKED, from_files, read_archive};
use super::chart::MAX_TEMPLATE_BYTES;
use super::*;

use crate::source::FileId;

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

fn defaults(p: &Repository, chart: &Chart) -> Values {
    let _ = p;
    chart.defaults.clone()
}

#[test]
fn renders_an_app_of_apps_chart_with_provenance() {
    let (_dir, p) = Repository::on_disk(APPS_CHART);
    let chart = load(&p, "apps").unwrap();
    assert_eq!(chart.templates.len(), 3);
    let vals = defaults(&p, &chart);
    let r = render(&chart, &vals, &Release::new("apps", "argocd")).unwrap();
    // NOTES.txt and partials are not manifests.
    assert_eq!(r.manifests.len(), 1);
    assert_eq!(r.manifests[0].path, "apps/templates/applications.yaml");
    let anchor = Span::new(FileId(0), 0, 0);
    let docs = documents(&r, &p.sources, anchor);
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
    // Literal text points at the template; the document starts at line 3 of it.
    let kind = docs[0].root.get("kind").unwrap();
    let template = p
        .sources
        .template_by_path("apps/templates/applications.yaml")
        .unwrap();
    assert_eq!(kind.span.file, template.id);
    assert_eq!(template.slice(kind.span), "Application");
    assert_eq!(template.line_col(kind.span.start as usize).line, 4);
    assert_eq!(docs[0].template, "apps/templates/applications.yaml");
    assert_eq!(docs[0].line, 3);
}

#[test]
fn subcharts_get_their_defaults_globals_and_conditions() {
    let (_dir, p) = Repository::on_disk(&[
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
    let (_dir, p) = Repository::on_disk(&[
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
    let (_dir, p) = Repository::on_disk(&[
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
    let (_dir, p) = Repository::on_disk(&[("values.yaml", values)]);
    let file = p.file_by_path("values.yaml").unwrap().id;
    let vals = Values::from_node(&p.file_docs(file)[0].root, None);
    let anchor = Span::new(file, 0, 0);
    let docs = argocd_apps::render_objects(
        &p,
        &vals,
        argocd_apps::Form::ByShape,
        &Release::new("apps", "argocd"),
        anchor,
        &RenderBudget::default(),
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

include!("../../../tests/it/tgz.rs");

const SUB_CHART: &str = "apiVersion: v2\nname: sub\nversion: 0.1.0\n";

#[test]
fn hostile_archives_are_refused_not_unpacked() {
    // Climbing paths are skipped; a bomb stops at the unpacked limit.
    let climbing = tgz(&[
        ("sub/Chart.yaml", SUB_CHART.as_bytes()),
        ("sub/../../escape.yaml", b"x: 1"),
        ("/abs/templates/x.yaml", b"x: 1"),
    ]);
    let budget = || Cell::new(MAX_ARCHIVE_UNPACKED);
    let files = read_archive(&climbing, &budget()).unwrap();
    let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(names, ["Chart.yaml"]);
    let zeros = vec![0u8; (MAX_TEMPLATE_BYTES + 1) as usize];
    let big = tgz(&[("sub/templates/big.yaml", &zeros)]);
    assert!(
        read_archive(&big, &budget())
            .unwrap_err()
            .contains("larger than")
    );
    assert!(read_archive(b"not gzip", &budget()).is_err());
}

/// One archive holding archives that each unpack to 3 MiB: the archives of a chart share one
/// budget, so reading stops at it instead of unpacking every one.
#[test]
fn nested_archives_share_one_unpacked_budget() {
    let zeros = vec![0u8; 3 << 20];
    let inner = tgz(&[
        ("sub/Chart.yaml", SUB_CHART.as_bytes()),
        ("sub/templates/a.yaml", &zeros),
    ]);
    let names: Vec<String> = (0..100)
        .map(|i| format!("outer/charts/sub-{i}.tgz"))
        .collect();
    let mut entries: Vec<(&str, &[u8])> = vec![(
        "outer/Chart.yaml",
        b"apiVersion: v2\nname: outer\nversion: 0.1.0\n",
    )];
    entries.extend(names.iter().map(|n| (n.as_str(), &inner[..])));
    let outer = tgz(&entries);
    let unpacked = Cell::new(MAX_ARCHIVE_UNPACKED);
    let files = read_archive(&outer, &unpacked).unwrap();
    let anchor = Span::new(FileId(0), 0, 0);
    let chart = from_files("charts", files, anchor, 1, &unpacked).unwrap();
    // About 20 of 3 MiB fit in 64 MiB; the others are refused without being unpacked.
    assert!(chart.subcharts.len() < 25, "{}", chart.subcharts.len());
    assert_eq!(chart.subcharts.len() + chart.unread.len(), 100);
    assert!(
        chart.unread[0].why.contains("unpack to more than 64 MiB"),
        "{:?}",
        chart.unread[0]
    );
    assert_eq!(unpacked.get(), 0);
}

/// A `charts/` folder, or a subchart in it, that is a link out of the repository is not read,
/// and says so; one inside the repository is as before.
#[cfg(unix)]
#[test]
fn charts_linked_out_of_the_repository_are_not_read() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("sub-1.0.0.tgz"),
        tgz(&[("sub/Chart.yaml", SUB_CHART.as_bytes())]),
    )
    .unwrap();
    let chart = "apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n  - name: sub\n    version: 1.0.0\n";
    let (dir, p) = Repository::on_disk(&[("app/Chart.yaml", chart), ("other/Chart.yaml", chart)]);
    std::os::unix::fs::symlink(outside.path(), dir.path().join("app/charts")).unwrap();
    std::fs::create_dir(dir.path().join("other/charts")).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("sub-1.0.0.tgz"),
        dir.path().join("other/charts/sub-1.0.0.tgz"),
    )
    .unwrap();
    let app = load(&p, "app").unwrap();
    assert!(app.subcharts.is_empty());
    assert_eq!(app.unread[0].path, "app/charts");
    assert!(app.unread[0].why.contains("outside the repository"));
    let other = load(&p, "other").unwrap();
    assert!(other.subcharts.is_empty());
    assert_eq!(other.unread[0].path, "other/charts/sub-1.0.0.tgz");
    assert!(other.unread[0].why.contains("outside the repository"));
    // At its `dependencies` entry.
    let at = other.unread[0].at;
    let text = p.sources.files()[at.file.0 as usize].text();
    assert_eq!(&text[at.start as usize..at.end as usize], "sub");
}

/// Once Applications are resolved, the sources of charts that may render keep their effective
/// values; the others drop them (their image tags were read already).
#[test]
fn unread_values_are_dropped_once_applications_are_resolved() {
    let app = |name: &str, path: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: {path}\n    helm:\n      valueFiles: [values.yaml]\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {name}\n"
        )
    };
    let (plain_app, web_app) = (app("plain", "plain"), app("web", "web"));
    let (_dir, p) = Repository::on_disk(&[
        ("apps/plain.yaml", &plain_app),
        ("apps/web.yaml", &web_app),
        (
            "plain/Chart.yaml",
            "apiVersion: v2\nname: plain\nversion: 1.0.0\n",
        ),
        (
            "plain/values.yaml",
            "image:\n  repository: r\n  tag: none\n",
        ),
        (
            "web/Chart.yaml",
            "apiVersion: v2\nname: web\nversion: 1.0.0\n",
        ),
        ("web/values.yaml", "image:\n  tag: \"1.0\"\nreplicas: 2\n"),
        (
            "web/templates/cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\ndata:\n  tag: {{ .Values.image.tag }}\n",
        ),
    ]);
    let model = crate::model::Model::new(&p, Default::default()).dropping_unread_values();
    let argo = model.argocd();
    let values_of = |name: &str| {
        let a = argo.apps.iter().find(|a| a.name == name).expect("app");
        a.sources[0].values.clone()
    };
    assert!(values_of("plain").is_none());
    assert_eq!(
        values_of("web").and_then(|v| v
            .path(&["replicas"])
            .and_then(|r| r.text().map(str::to_string))),
        Some("2".to_string())
    );
    assert!(argo.tags.iter().any(|t| t.tag == "none"));
}
