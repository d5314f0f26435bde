//! Unit tests of the kustomization graph.

use super::*;

/// The graph of a test repository (leaked: tests only).
fn graph(repo: &Repository) -> &'static Kustomizations {
    Box::leak(Box::new(build(repo)))
}

/// What a walk from the kustomization of `dir` meets: `>dir` entering, `dir:raw` entries.
fn walk_from(repo: &Repository, dir: &str) -> Vec<String> {
    let graph = graph(repo);
    let mut seen = Vec::new();
    if let Some(start) = graph.in_dir(dir) {
        graph.walk(start, &mut |step| {
            seen.push(match step {
                Step::Enter { node, .. } => format!(">{}", node.dir),
                Step::Entry { node, entry } => format!("{}:{}", node.dir, entry.raw),
                Step::Cycle { entry, chain } => {
                    format!("cycle:{}:{}", entry.raw, chain.len())
                }
            });
            Flow::Into
        });
    }
    seen
}

fn node<'p>(repo: &'p Repository, dir: &str) -> &'p Kustomization {
    let graph = graph(repo);
    graph.node(graph.in_dir(dir).expect("a kustomization"))
}

const KIND: &str = "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\n";

#[test]
fn walks_in_kustomize_order_and_stops_at_cycles() {
    let p = Repository::in_memory(&[
        (
            "a/kustomization.yaml",
            "resources: [../b, cm.yaml]\ncomponents: [../c]\n",
        ),
        ("a/cm.yaml", "apiVersion: v1\nkind: ConfigMap\n"),
        ("b/kustomization.yaml", "resources: [../a, deploy.yaml]\n"),
        ("b/deploy.yaml", "apiVersion: apps/v1\nkind: Deployment\n"),
        (
            "c/kustomization.yaml",
            "apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\n",
        ),
    ]);
    assert_eq!(
        walk_from(&p, "a"),
        [
            ">a",
            "a:../b",
            ">b",
            "b:../a",
            "cycle:../a:2",
            "b:deploy.yaml",
            "a:cm.yaml",
            "a:../c",
            ">c"
        ]
    );
    let a = node(&p, "a");
    let kinds: Vec<(EntryField, bool)> = a
        .entries
        .iter()
        .map(|e| (e.field, matches!(e.reference, Reference::Kustomization(_))))
        .collect();
    assert_eq!(
        kinds,
        [
            (EntryField::Resources, true),
            (EntryField::Resources, false),
            (EntryField::Components, true)
        ]
    );
}

#[test]
fn a_kustomization_that_includes_itself_is_entered_once() {
    let p = Repository::in_memory(&[("k/kustomization.yaml", "resources: [., ../k, './']\n")]);
    assert_eq!(
        walk_from(&p, "k"),
        [
            ">k",
            "k:.",
            "cycle:.:1",
            "k:../k",
            "cycle:../k:1",
            "k:./",
            "cycle:./:1"
        ]
    );
}

#[test]
fn remote_and_escaping_paths_are_never_followed() {
    let p = Repository::in_memory(&[
        (
            "apps/x/kustomization.yaml",
            "resources:\n  - https://github.com/org/repo//base?ref=v1\n  - github.com/org/repo/base\n  - ../../../outside\n  - ../../base\n  - missing\n",
        ),
        ("base/kustomization.yaml", "resources: []\n"),
    ]);
    let refs: Vec<&Reference> = node(&p, "apps/x")
        .entries
        .iter()
        .map(|e| &e.reference)
        .collect();
    let base = graph(&p).in_dir("base").expect("base");
    assert_eq!(
        refs,
        [
            &Reference::Remote,
            &Reference::Remote,
            &Reference::OutsideRoot,
            &Reference::Kustomization(base),
            &Reference::Other("apps/x/missing".to_string()),
        ]
    );
    assert_eq!(
        walk_from(&p, "apps/x")
            .iter()
            .filter(|s| s.starts_with('>'))
            .count(),
        2
    );
}

#[test]
fn the_folder_kustomization_is_the_one_kustomize_reads() {
    let p = Repository::in_memory(&[
        ("a/Kustomization", "namespace: third\n"),
        ("a/kustomization.yml", "namespace: second\n"),
        ("a/kustomization.yaml", "namespace: first\n"),
        ("b/kustomization.yaml", ""),
        ("c/overlay.yaml", &format!("{KIND}namespace: other\n")),
    ]);
    let ns = node(&p, "a").namespace.as_ref().map(|f| f.value.as_str());
    assert_eq!(ns, Some("first"));
    // An empty kustomization is still the folder's.
    assert!(node(&p, "b").doc.is_none());
    // A Kustomization document under another name is read, but is no folder's.
    assert_eq!(graph(&p).nodes().len(), 5);
    assert!(graph(&p).in_dir("c").is_none());
}

#[test]
fn every_kustomization_file_name_is_discovered() {
    for name in KUSTOMIZATION_FILE_NAMES {
        assert!(crate::source::walk::is_yaml_name(name), "{name}");
    }
}

#[test]
fn a_base_included_twice_gets_each_namespace() {
    let p = Repository::in_memory(&[
        ("base/kustomization.yaml", "resources: [cm.yaml]\n"),
        ("base/cm.yaml", "apiVersion: v1\nkind: ConfigMap\n"),
        (
            "one/kustomization.yaml",
            "namespace: one\nresources: [../base, own.yaml]\n",
        ),
        ("one/own.yaml", "apiVersion: v1\nkind: ConfigMap\n"),
        (
            "two/kustomization.yaml",
            "namespace: two\nresources: [../base]\n",
        ),
        (
            "outer/kustomization.yaml",
            "namespace: outer\nresources: [../inner]\n",
        ),
        (
            "inner/kustomization.yaml",
            "namespace: inner\nresources: [x.yaml]\n",
        ),
        ("inner/x.yaml", "apiVersion: v1\nkind: ConfigMap\n"),
    ]);
    let file = |path: &str| p.file_by_path(path).expect("file").id;
    let ns = graph(&p).namespaces_by_file();
    assert_eq!(ns.get(&file("base/cm.yaml")), Some(&None));
    assert_eq!(
        ns.get(&file("one/own.yaml")),
        Some(&Some("one".to_string()))
    );
    // The outermost namespace wins.
    assert_eq!(
        ns.get(&file("inner/x.yaml")),
        Some(&Some("outer".to_string()))
    );
}

#[test]
fn patches_of_every_form_keep_their_target_and_spans() {
    let k = "\
patches:
  - target:
      group: apps
      version: v1
      kind: Deployment
      name: web
      namespace: prod
      labelSelector: app=web
      annotationSelector: team=a
    patch: |
      - op: replace
        path: /spec/replicas
        value: 3
  - patch: |
      apiVersion: v1
      kind: ConfigMap
      metadata: {name: cm}
      data: {a: b}
  - path: smp.yaml
  - path: ops.yaml
    target: {kind: Service}
patchesStrategicMerge:
  - smp.yaml
  - |
    apiVersion: v1
    kind: Secret
    metadata: {name: s}
patchesJson6902:
  - target: {version: v1, kind: ConfigMap, name: cm}
    path: ops.yaml
";
    let p = Repository::in_memory(&[
        ("k/kustomization.yaml", k),
        (
            "k/smp.yaml",
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web}\n",
        ),
        ("k/ops.yaml", "- {op: remove, path: /spec/x}\n"),
    ]);
    let node = node(&p, "k");
    let text = &p.source(node.file).text();
    let shape: Vec<(PatchField, PatchKind, bool)> = node
        .patches
        .iter()
        .map(|p| (p.field, p.kind, matches!(p.body, PatchBody::Inline { .. })))
        .collect();
    use {PatchField as F, PatchKind as K};
    assert_eq!(
        shape,
        [
            (F::PatchesStrategicMerge, K::StrategicMerge, false),
            (F::PatchesStrategicMerge, K::StrategicMerge, true),
            (F::Patches, K::Json6902, true),
            (F::Patches, K::StrategicMerge, true),
            (F::Patches, K::StrategicMerge, false),
            (F::Patches, K::Json6902, false),
            (F::PatchesJson6902, K::Json6902, false),
        ]
    );
    let t = node.patches[2].target.as_ref().expect("target");
    let v = |f: &Option<Field>| Field::text(f).unwrap_or("-").to_string();
    assert_eq!(
        [
            &t.group,
            &t.version,
            &t.kind,
            &t.name,
            &t.namespace,
            &t.label_selector,
            &t.annotation_selector
        ]
        .map(v),
        [
            "apps",
            "v1",
            "Deployment",
            "web",
            "prod",
            "app=web",
            "team=a"
        ]
    );
    // Inline patches point into the kustomization.
    let PatchBody::Inline { docs, .. } = &node.patches[2].body else {
        unreachable!()
    };
    let value = docs[0]
        .items()
        .next()
        .and_then(|op| op.get("value"))
        .expect("value");
    assert_eq!(&text[value.span.range()], "3");
    let PatchBody::Inline { docs, .. } = &node.patches[1].body else {
        unreachable!()
    };
    let name = docs[0].path(&["metadata", "name"]).expect("name");
    assert_eq!(&text[name.span.range()], "s");
    // File patches name their file; the kinds a patch touches include its target's.
    let smp = p.file_by_path("k/smp.yaml").expect("smp").id;
    assert!(
        matches!(&node.patches[0].body, PatchBody::File { reference: Reference::File(f), .. } if *f == smp)
    );
    let file_docs = |f: FileId| p.file_docs(f);
    assert_eq!(node.patches[4].kinds(&file_docs), ["Deployment"]);
    assert_eq!(node.patches[5].kinds(&file_docs), ["Service"]);
    assert_eq!(node.patches[3].kinds(&file_docs), ["ConfigMap"]);
}

#[test]
fn generators_charts_images_and_transformers_are_read_as_written() {
    let k = "\
namespace: argocd
namePrefix: pre-
nameSuffix: -suf
configMapGenerator:
  - name: params
    behavior: merge
    literals: [\"server.insecure = 'true'\", novalue]
    files: [a.properties]
secretGenerator:
  - name: s
    envs: [.env]
helmCharts:
  - name: argo-cd
    repo: https://argoproj.github.io/argo-helm
    version: 7.0.0
    releaseName: argocd
    valuesFile: values.yaml
    valuesInline: {server: {insecure: true}}
images:
  - name: nginx
    newName: registry/nginx
    newTag: \"1.27\"
  - name: redis
    newTag: null
";
    let p = Repository::in_memory(&[("k/kustomization.yaml", k), ("k/values.yaml", "a: 1\n")]);
    let node = node(&p, "k");
    assert_eq!(
        [&node.namespace, &node.name_prefix, &node.name_suffix]
            .map(|f| Field::text(f).unwrap_or("")),
        ["argocd", "pre-", "-suf"]
    );
    let cm = &node.generators[0];
    assert_eq!(
        (cm.kind, Field::text(&cm.behavior)),
        (GeneratorKind::ConfigMap, Some("merge"))
    );
    assert_eq!(cm.literals.len(), 1);
    let lit = &cm.literals[0];
    assert_eq!(
        (lit.key.as_str(), lit.value.as_str()),
        ("server.insecure", "true")
    );
    assert_eq!(
        &p.source(node.file).text()[lit.span.range()],
        "\"server.insecure = 'true'\""
    );
    assert_eq!(cm.files[0].value, "a.properties");
    assert_eq!(node.generators[1].kind, GeneratorKind::Secret);
    assert_eq!(node.generators[1].envs[0].value, ".env");
    let hc = &node.helm_charts[0];
    let values = p.file_by_path("k/values.yaml").expect("values").id;
    assert_eq!(
        hc.values_file.as_ref().map(|(_, r)| r),
        Some(&Reference::File(values))
    );
    assert_eq!(Field::text(&hc.release_name), Some("argocd"));
    assert_eq!(Field::text(&hc.version), Some("7.0.0"));
    assert!(hc.values_inline.is_some());
    assert_eq!(Field::text(&node.images[0].new_tag), Some("1.27"));
    assert_eq!(
        Field::text(&node.images[0].new_name),
        Some("registry/nginx")
    );
    assert!(node.images[1].new_tag.is_none());
}

#[test]
fn build_options_come_from_argocd_cm_and_the_argo_cd_chart_values() {
    let k = ("k/kustomization.yaml", "resources: []\n");
    let none = Repository::in_memory(&[k]);
    assert_eq!(graph(&none).options, BuildOptions::default());
    let cm = Repository::in_memory(&[
        k,
        (
            "argocd/argocd-cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: argocd-cm\ndata:\n  url: https://argocd.example.com\n",
        ),
    ]);
    let o = graph(&cm).options;
    assert!(o.known && !o.enable_helm && !o.unrestricted_loads);
    let values = Repository::in_memory(&[
        k,
        (
            "platform/argocd/values.yaml",
            "configs:\n  cm:\n    kustomize.buildOptions: |\n      --enable-helm\n      --load-restrictor LoadRestrictionsNone\n  params: {}\n# --enable-helm elsewhere is not an option\n",
        ),
    ]);
    let o = graph(&values).options;
    assert!(o.known && o.enable_helm && o.unrestricted_loads);
    let elsewhere = Repository::in_memory(&[k, ("platform/values.yaml", "note: --enable-helm\n")]);
    assert_eq!(graph(&elsewhere).options, BuildOptions::default());
}

#[test]
fn included_kustomizations_built_on_all_threads_give_the_in_order_build() {
    // Bases with a prefix and a namespace (so name references are fixed up at each level), one
    // with a missing resource, a duplicate object in two bases, and a cycle back to the top.
    let mut files = vec![(
        "all/kustomization.yaml".to_string(),
        format!("{KIND}namespace: shared\nresources:\n- ../a\n- ../b\n- ../c\n- ../d\n- cm.yaml\n"),
    )];
    files.push((
        "all/cm.yaml".into(),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: top}\n".into(),
    ));
    let deployment = |name: &str| {
        format!(
            "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: {name}}}\nspec:\n  template:\n    spec:\n      volumes: [{{name: c, configMap: {{name: settings}}}}]\n      containers: [{{name: app, image: app:1}}]\n"
        )
    };
    for (base, extra) in [
        ("a", "namePrefix: a-\n"),
        ("b", "namePrefix: b-\nimages: [{name: app, newTag: '2'}]\n"),
        ("c", "resources:\n- missing.yaml\n"),
        ("d", "resources:\n- ../all\n"),
    ] {
        let resources = if extra.starts_with("resources") {
            String::new()
        } else {
            "resources:\n- app.yaml\n- settings.yaml\n".to_string()
        };
        files.push((
            format!("{base}/kustomization.yaml"),
            format!("{KIND}{extra}{resources}"),
        ));
        files.push((format!("{base}/app.yaml"), deployment("app")));
        files.push((
            format!("{base}/settings.yaml"),
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings}\n".into(),
        ));
    }
    files.push((
        "ok/kustomization.yaml".into(),
        format!("{KIND}namespace: shared\nresources:\n- ../a\n- ../b\n"),
    ));
    let borrowed: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    let repo = Repository::in_memory(&borrowed);
    let top = repo.kustomize.in_dir("all").expect("a kustomization");
    let in_order = build::build_as_loaded(&repo, &repo.kustomize, top);
    let parallel = build::build_as_loaded_on_all_threads(&repo, &repo.kustomize, top);
    assert!(!in_order.problems.is_empty(), "{:?}", in_order.problems);
    assert_eq!(in_order.problems, parallel.problems);
    let trees = |b: &build::Build| -> Vec<String> {
        b.objects
            .iter()
            .map(|o| format!("{:?}", o.root.to_json()))
            .collect()
    };
    assert_eq!(trees(&in_order), trees(&parallel));
    let ok = repo.kustomize.in_dir("ok").expect("a kustomization");
    let in_order = build::build_as_loaded(&repo, &repo.kustomize, ok);
    let parallel = build::build_as_loaded_on_all_threads(&repo, &repo.kustomize, ok);
    assert!(in_order.problems.is_empty(), "{:?}", in_order.problems);
    assert_eq!(in_order.objects.len(), 4);
    assert!(trees(&in_order).iter().any(|t| t.contains("b-settings")));
    assert_eq!(trees(&in_order), trees(&parallel));
}
