//! Hostile charts (issue #32): templates that recursed until the stack overflowed or built
//! gigabytes, renderings that took minutes together, archive bombs and subcharts linked out of
//! the repository. Each case is an `argocd/not-rendered` info where it is installed or listed,
//! the other files are still checked, and the run ends with its usual exit code.

use std::time::Duration;

use super::{assert_canary, check_json, repo};

include!("../tgz.rs");

const RULE: &str = "argocd/not-rendered";

/// An Application installing `charts/<name>`, and that chart: `template` next to a template
/// that writes an Application whose path is missing (so it is an app-of-apps chart, whose
/// failure is reported, and whose rendering shows as an `argocd/missing-source` error).
fn app_of_apps(name: &str, template: &str, values: &str) -> Vec<(String, String)> {
    let app = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/{name}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n"
    );
    let child = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}-child\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: apps/{name}-missing\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {name}\n"
    );
    vec![
        (format!("argocd/{name}.yaml"), app),
        (
            format!("charts/{name}/Chart.yaml"),
            format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n"),
        ),
        (format!("charts/{name}/values.yaml"), values.to_string()),
        (format!("charts/{name}/templates/child.yaml"), child),
        (
            format!("charts/{name}/templates/hostile.yaml"),
            template.to_string(),
        ),
    ]
}

/// Diagnostics of `rule` as (file, line, message).
fn of_rule(v: &serde_json::Value, rule: &str) -> Vec<(String, u64, String)> {
    v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == rule)
        .map(|d| {
            (
                d["file"].as_str().unwrap().to_string(),
                d["range"]["start"]["line"].as_u64().unwrap(),
                d["message"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn no_internal_errors(v: &serde_json::Value) {
    let text = v.to_string();
    assert!(!text.contains("internal error"), "{text}");
}

/// Runs a check of the charts `cases` (name, template, values) and returns, per case, the
/// message of its `argocd/not-rendered` info at its Application's `path:` (line 10), if any.
fn not_rendered_by_case(
    cases: &[(&str, &str, &str)],
    limit: Duration,
) -> (serde_json::Value, Vec<Option<String>>) {
    let files: Vec<(String, String)> = cases
        .iter()
        .flat_map(|(n, t, v)| app_of_apps(n, t, v))
        .collect();
    let refs: Vec<(&str, &[u8])> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_bytes()))
        .collect();
    let dir = repo(&refs);
    let (code, v) = check_json(dir.path(), limit);
    assert_eq!(code, Some(1), "the canary is an error");
    assert_canary(&v);
    no_internal_errors(&v);
    let found = of_rule(&v, RULE);
    // One info per chart: the chart is rendered for its Argo CD objects and for the objects it
    // deploys, and a failure is reported once.
    for (n, _, _) in cases {
        let file = format!("argocd/{n}.yaml");
        let of_case: Vec<_> = found.iter().filter(|(f, _, _)| *f == file).collect();
        assert!(of_case.len() <= 1, "{of_case:?}");
    }
    let by_case = cases
        .iter()
        .map(|(n, _, _)| {
            found
                .iter()
                .find(|(f, l, _)| *f == format!("argocd/{n}.yaml") && *l == 10)
                .map(|(_, _, m)| m.clone())
        })
        .collect();
    (v, by_case)
}

/// Item 7: each of these overflowed the stack (SIGABRT), killing the run.
#[test]
fn templates_that_overflowed_the_stack_are_not_rendered_infos() {
    let parens = format!("{{{{ {}1{} }}}}", "(".repeat(3000), ")".repeat(3000));
    let ifs = format!(
        "{}x{}",
        "{{ if true }}".repeat(3000),
        "{{ end }}".repeat(3000)
    );
    let cases: &[(&str, &str, &str)] = &[
        (
            "self-include",
            r#"{{ define "a" }}{{ include "a" . }}{{ end }}{{ include "a" . }}"#,
            "",
        ),
        (
            "tpl-itself",
            "{{ tpl .Values.t . }}",
            "t: '{{ tpl .Values.t . }}'",
        ),
        ("parens", &parens, ""),
        ("ifs", &ifs, ""),
        (
            "cyclic-map",
            r#"{{ $d := dict }}{{ $_ := set $d "me" $d }}{{ deepCopy $d }}"#,
            "",
        ),
        (
            "nested-dict",
            r#"{{ $d := dict }}{{ range until 100000 }}{{ $d = dict "a" $d }}{{ end }}{{ toJson $d }}"#,
            "",
        ),
    ];
    let (_, found) = not_rendered_by_case(cases, Duration::from_secs(60));
    let expected = [
        "nested deeper than 1000 levels",
        "tpl nested too deeply",
        "max expression depth exceeded",
        "max expression depth exceeded",
        "encountered a cycle",
        "a value nested deeper than 1000 levels",
    ];
    for ((name, _, _), (message, want)) in cases.iter().zip(found.iter().zip(expected)) {
        let message = message
            .as_deref()
            .unwrap_or_else(|| panic!("{name}: no {RULE} info"));
        assert!(message.contains(want), "{name}: {message}");
    }
}

/// Item 7: recursion within Helm's 1,000 `include` levels (it aborted from about 600) renders,
/// and so does `toJson` of a map that contains itself (empty text, as Sprig's).
#[test]
fn deep_include_recursion_and_cyclic_to_json_render() {
    let deep = format!(
        "{}\n---\n{}",
        r#"{{- define "r" }}{{ if lt . 900 }}{{ include "r" (add1 .) }}{{ else }}{{ . }}{{ end }}{{ end -}}"#,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\ndata:\n  levels: \"{{ include \"r\" 0 }}\"\n  cycle: \"{{ $d := dict }}{{ $_ := set $d \"me\" $d }}{{ toJson $d }}\"\n"
    );
    let cases: &[(&str, &str, &str)] = &[("deep", &deep, "")];
    let (v, found) = not_rendered_by_case(cases, Duration::from_secs(60));
    assert_eq!(found, [None], "{:?}", of_rule(&v, RULE));
    // The chart's Application is rendered and checked: its missing path is reported.
    let missing = of_rule(&v, "argocd/missing-source");
    assert!(
        missing
            .iter()
            .any(|(f, _, _)| f == "charts/deep/templates/child.yaml"),
        "{missing:?}"
    );
}

/// Item 8: each of these built gigabytes until the process was killed.
#[test]
fn templates_that_built_gigabytes_are_not_rendered_infos() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "printf-doubling",
            r#"{{ $s := repeat 16777216 "x" }}{{ range until 10 }}{{ $s = printf "%s%s" $s $s }}{{ end }}{{ len $s }}"#,
            "",
        ),
        (
            "list-doubling",
            r#"{{ $l := list 1 }}{{ range until 64 }}{{ $l = list $l $l }}{{ end }}{{ toJson $l }}"#,
            "",
        ),
        (
            "indent-lines",
            r#"{{ $s := repeat 4000000 "\n" }}{{ indent 1000 $s }}"#,
            "",
        ),
        (
            "replace-8gb",
            r#"{{ $s := repeat 16000000 "x" }}{{ replace "x" (repeat 512 "y") $s }}"#,
            "",
        ),
    ];
    let (_, found) = not_rendered_by_case(cases, Duration::from_secs(120));
    for ((name, _, _), message) in cases.iter().zip(&found) {
        let message = message
            .as_deref()
            .unwrap_or_else(|| panic!("{name}: no {RULE} info"));
        assert!(
            message.contains("functions built more than"),
            "{name}: {message}"
        );
    }
}

/// Item 8: a 10×10×10 matrix ApplicationSet over a chart that prints 32 MB asked for 1000
/// renderings (186 s); rendering stops at the run's budget with one info where the
/// ApplicationSet names the chart.
#[test]
fn a_matrix_over_a_large_chart_stops_at_the_run_budget() {
    let list = |key: &str| {
        let items: Vec<String> = (0..10).map(|i| format!("{{{key}: '{i}'}}")).collect();
        format!(
            "        - list:\n            elements: [{}]\n",
            items.join(", ")
        )
    };
    let appset = format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: matrix\n  namespace: argocd\nspec:\n  goTemplate: true\n  generators:\n    - matrix:\n        generators:\n{}{}{}  template:\n    metadata:\n      name: 'big-{{{{.a}}}}-{{{{.b}}}}-{{{{.c}}}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/gitops.git\n        path: charts/big\n        helm:\n          valuesObject:\n            cell: '{{{{.a}}}}{{{{.b}}}}{{{{.c}}}}'\n      destination:\n        server: https://kubernetes.default.svc\n        namespace: 'big-{{{{.a}}}}{{{{.b}}}}{{{{.c}}}}'\n",
        list("a"),
        list("b"),
        list("c")
    );
    let dir = repo(&[
        ("argocd/matrix.yaml", appset.as_bytes()),
        (
            "charts/big/Chart.yaml",
            b"apiVersion: v2\nname: big\nversion: 1.0.0\n",
        ),
        ("charts/big/values.yaml", b"cell: none\n"),
        (
            "charts/big/templates/big.yaml",
            b"# {{ .Values.cell }} {{ repeat 16000000 \"x\" }}{{ repeat 16000000 \"y\" }}\n",
        ),
    ]);
    let (code, v) = check_json(dir.path(), Duration::from_secs(120));
    assert_eq!(code, Some(1), "the canary is an error");
    assert_canary(&v);
    no_internal_errors(&v);
    let found = of_rule(&v, RULE);
    // The ApplicationSet's `path: charts/big`.
    assert!(
        found.iter().any(|(f, _, m)| f == "argocd/matrix.yaml"
            && m.contains("rendering budget of the run is spent")),
        "{found:?}"
    );
}

fn chart_with_archives(dir: &std::path::Path, archives: &[(&str, Vec<u8>)]) {
    let deps: String = archives
        .iter()
        .map(|(n, _)| {
            let name = n
                .trim_end_matches(".tgz")
                .rsplit_once('-')
                .map_or(*n, |x| x.0);
            format!("  - name: {name}\n    version: 1.0.0\n")
        })
        .collect();
    let chart = dir.join("charts/app");
    std::fs::create_dir_all(chart.join("charts")).unwrap();
    std::fs::create_dir_all(chart.join("templates")).unwrap();
    std::fs::write(
        chart.join("Chart.yaml"),
        format!("apiVersion: v2\nname: app\nversion: 1.0.0\ndependencies:\n{deps}"),
    )
    .unwrap();
    std::fs::write(
        chart.join("templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
    )
    .unwrap();
    for (n, bytes) in archives {
        std::fs::write(chart.join("charts").join(n), bytes).unwrap();
    }
    std::fs::write(
        dir.join("argocd/app.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: app\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/app\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: app\n",
    )
    .unwrap();
}

/// A subchart that writes a Deployment with `image.tag: none` from its own values: read, it
/// would be an `argocd/image-tag-none` error.
fn none_tag_subchart(name: &str) -> Vec<u8> {
    tgz(&[
        (
            &format!("{name}/Chart.yaml"),
            format!("apiVersion: v2\nname: {name}\nversion: 1.0.0\n").as_bytes(),
        ),
        (&format!("{name}/values.yaml"), b"image:\n  tag: none\n"),
        (
            &format!("{name}/templates/deploy.yaml"),
            b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: x\nspec:\n  template:\n    spec:\n      containers:\n        - name: x\n          image: \"registry.example.com/x:{{ .Values.image.tag }}\"\n",
        ),
    ])
}

/// `tgz` compressed again at the best level.
fn recompressed_best(tgz: &[u8]) -> Vec<u8> {
    use std::io::{Read, Write};
    let mut tar = Vec::new();
    flate2::read::GzDecoder::new(tgz)
        .read_to_end(&mut tar)
        .unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&tar).unwrap();
    gz.finish().unwrap()
}

/// Item 9: a 1.5 MB archive holding 1000 archives of 60 MB each unpacked 5.6 GB, then aborted.
#[test]
fn a_nested_archive_bomb_stops_at_the_unpacked_budget() {
    // 15 files of 4 MB (the largest file a chart may hold), 60 MB unpacked.
    let zeros = vec![0u8; 4_000_000];
    let mut inner_entries: Vec<(String, &[u8])> = vec![(
        "layer/Chart.yaml".into(),
        b"apiVersion: v2\nname: layer\nversion: 1.0.0\n",
    )];
    for i in 0..15 {
        inner_entries.push((format!("layer/templates/zeros-{i}.yaml"), &zeros));
    }
    let refs: Vec<(&str, &[u8])> = inner_entries
        .iter()
        .map(|(p, b)| (p.as_str(), *b))
        .collect();
    // Zeros compressed at the best level: about 58 KB, and a periodic stream that the outer
    // archive compresses again to about 1.4 KB each.
    let inner = recompressed_best(&tgz(&refs));
    let names: Vec<String> = (0..1000)
        .map(|i| format!("bomb/charts/layer-{i}.tgz"))
        .collect();
    let mut outer_entries: Vec<(&str, &[u8])> = vec![(
        "bomb/Chart.yaml",
        b"apiVersion: v2\nname: bomb\nversion: 1.0.0\n",
    )];
    outer_entries.extend(names.iter().map(|n| (n.as_str(), &inner[..])));
    let outer = tgz(&outer_entries);
    assert!(outer.len() < 8 << 20, "the bomb is {} bytes", outer.len());
    let dir = repo(&[]);
    std::fs::create_dir_all(dir.path().join("argocd")).unwrap();
    chart_with_archives(dir.path(), &[("bomb-1.0.0.tgz", outer)]);
    let (code, v) = check_json(dir.path(), Duration::from_secs(120));
    assert_eq!(code, Some(1), "the canary is an error");
    assert_canary(&v);
    no_internal_errors(&v);
    let found = of_rule(&v, RULE);
    // At the `dependencies` entry (line 5: `- name: bomb`).
    assert!(
        found.iter().any(|(f, l, m)| f == "charts/app/Chart.yaml"
            && *l == 5
            && m.contains("unpack to more than 64 MiB")
            && m.contains("more subcharts")),
        "{found:?}"
    );
}

/// Item 3: `chart/charts -> <outside dir>` was followed, and values from an archive outside the
/// root appeared in findings.
#[cfg(unix)]
#[test]
fn charts_linked_out_of_the_repository_are_not_read() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("leak-1.0.0.tgz"),
        none_tag_subchart("leak"),
    )
    .unwrap();
    let dir = repo(&[]);
    std::fs::create_dir_all(dir.path().join("argocd")).unwrap();
    chart_with_archives(dir.path(), &[("leak-1.0.0.tgz", Vec::new())]);
    let charts = dir.path().join("charts/app/charts");
    std::fs::remove_dir_all(&charts).unwrap();
    std::os::unix::fs::symlink(outside.path(), &charts).unwrap();
    let (code, v) = check_json(dir.path(), Duration::from_secs(60));
    assert_eq!(code, Some(1), "the canary is an error");
    assert_canary(&v);
    no_internal_errors(&v);
    assert!(
        of_rule(&v, "argocd/image-tag-none").is_empty(),
        "values outside the root were read: {:?}",
        of_rule(&v, "argocd/image-tag-none")
    );
    let found = of_rule(&v, RULE);
    assert!(
        found.iter().any(|(f, l, m)| f == "charts/app/Chart.yaml"
            && *l == 1
            && m.contains("`charts/app/charts`")
            && m.contains("outside the repository")),
        "{found:?}"
    );
}

/// Item 14 (part): an archive over the size limit, and one that is not an archive, were
/// skipped without a word.
#[test]
fn oversized_and_unreadable_archives_get_a_note() {
    let noise: Vec<u8> = (0..9_000_000u32)
        .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
        .collect();
    let dir = repo(&[]);
    std::fs::create_dir_all(dir.path().join("argocd")).unwrap();
    chart_with_archives(
        dir.path(),
        &[
            ("big-1.0.0.tgz", noise),
            ("broken-1.0.0.tgz", b"not a gzip stream".to_vec()),
        ],
    );
    let (code, v) = check_json(dir.path(), Duration::from_secs(60));
    assert_eq!(code, Some(1), "the canary is an error");
    assert_canary(&v);
    no_internal_errors(&v);
    let found = of_rule(&v, RULE);
    assert!(
        found.iter().any(|(f, l, m)| f == "charts/app/Chart.yaml"
            && *l == 5
            && m.contains("`charts/app/charts/big-1.0.0.tgz`")
            && m.contains("larger than")
            && m.contains("1 more subchart")),
        "{found:?}"
    );
}

/// Archives under `charts/` and `.Files` are read through the confined layer: an archive linked
/// out of the root gets a note and is not read, one linked to a file inside the root is read,
/// and a `.Files` file linked out of the root is not read. Each file outside holds what would
/// be an `argocd/image-tag-none` error if read.
#[cfg(unix)]
#[test]
fn archives_and_files_linked_out_of_the_root_are_not_read() {
    use std::os::unix::fs::symlink;
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(
        outside.path().join("leak-1.0.0.tgz"),
        none_tag_subchart("leak"),
    )
    .unwrap();
    std::fs::write(outside.path().join("tag.txt"), "none\n").unwrap();
    let dir = repo(&[]);
    let p = dir.path();
    std::fs::create_dir_all(p.join("argocd")).unwrap();
    chart_with_archives(
        p,
        &[
            ("leak-1.0.0.tgz", Vec::new()),
            ("vendored-1.0.0.tgz", Vec::new()),
        ],
    );
    let charts = p.join("charts/app/charts");
    std::fs::remove_file(charts.join("leak-1.0.0.tgz")).unwrap();
    symlink(
        outside.path().join("leak-1.0.0.tgz"),
        charts.join("leak-1.0.0.tgz"),
    )
    .unwrap();
    std::fs::create_dir_all(p.join("vendor")).unwrap();
    std::fs::write(
        p.join("vendor/vendored-1.0.0.tgz"),
        none_tag_subchart("vendored"),
    )
    .unwrap();
    std::fs::remove_file(charts.join("vendored-1.0.0.tgz")).unwrap();
    symlink(
        "../../../vendor/vendored-1.0.0.tgz",
        charts.join("vendored-1.0.0.tgz"),
    )
    .unwrap();
    let files = p.join("charts/app/files");
    std::fs::create_dir_all(&files).unwrap();
    std::fs::write(files.join("inside.txt"), "none\n").unwrap();
    symlink(outside.path().join("tag.txt"), files.join("outside.txt")).unwrap();
    for name in ["inside", "outside"] {
        std::fs::write(
            p.join(format!("charts/app/templates/{name}.yaml")),
            format!("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\nspec:\n  template:\n    spec:\n      containers:\n        - name: x\n          image: \"registry.example.com/x:{{{{ .Files.Get \"files/{name}.txt\" | trim }}}}\"\n"),
        )
        .unwrap();
    }
    let (code, v) = check_json(p, Duration::from_secs(60));
    assert_eq!(code, Some(1), "the canary is an error");
    assert_canary(&v);
    no_internal_errors(&v);
    let found = of_rule(&v, RULE);
    assert!(
        found.iter().any(|(f, _, m)| f == "charts/app/Chart.yaml"
            && m.contains("`charts/app/charts/leak-1.0.0.tgz`")
            && m.contains("outside the repository")),
        "{found:?}"
    );
    let tags = of_rule(&v, "argocd/image-tag-none");
    let text = format!("{tags:?}");
    assert!(
        tags.iter()
            .any(|(f, _, _)| f == "charts/app/templates/inside.yaml"),
        ".Files reads a file inside the chart: {text}"
    );
    assert!(
        !tags
            .iter()
            .any(|(f, _, _)| f == "charts/app/templates/outside.yaml"),
        "a .Files link out of the root was read: {text}"
    );
    // At their `dependencies` entries: `leak` on line 5, `vendored` on line 7.
    let at_dependency = |line: u64| {
        tags.iter()
            .any(|(f, l, _)| f == "charts/app/Chart.yaml" && *l == line)
    };
    assert!(
        at_dependency(7) && !at_dependency(5),
        "the archive linked inside the root is read, the one linked out of it is not: {text}"
    );
}
