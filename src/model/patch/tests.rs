//! Kustomize's transformations on Argo CD objects (the differential test against
//! `kubectl kustomize` is `tests/it/kustomize.rs`).

use super::*;
use crate::model::DocKind;
use crate::model::kustomize::build::json6902::{index, pointer};
use crate::model::kustomize::build::select::label_selector;
use crate::source::Span;

fn doc<'p>(p: &'p Repository, kind: DocKind, name: &str) -> &'p Document {
    p.docs_of(kind)
        .find(|d| d.name() == Some(name))
        .unwrap_or_else(|| panic!("no {kind:?} {name}"))
}

fn text_at(p: &Repository, span: Span) -> (&str, &str) {
    let f = p.source(span.file);
    (f.path.as_str(), &f.text()[span.range()])
}

const APP: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: web
spec:
  project: default
  source:
    repoURL: https://example.com/r.git
    path: web
    targetRevision: main
  syncPolicy:
    automated:
      prune: true
";

#[test]
fn a_patched_value_keeps_the_patch_span() {
    let p = Repository::in_memory(&[
        ("apps/app.yaml", APP),
        (
            "apps/kustomization.yaml",
            "resources: [app.yaml]\npatches:\n  - path: rev.yaml\n",
        ),
        (
            "apps/rev.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\nspec:\n  source:\n    targetRevision: HEAD\n  syncPolicy:\n    automated:\n      prune: false\n",
        ),
    ]);
    let app = doc(&p, DocKind::Application, "web");
    let rev = app
        .root
        .path(&["spec", "source", "targetRevision"])
        .unwrap();
    assert_eq!(text_at(&p, rev.span), ("apps/rev.yaml", "HEAD"));
    let path = app.root.path(&["spec", "source", "path"]).unwrap();
    assert_eq!(text_at(&p, path.span), ("apps/app.yaml", "web"));
    let prune = app
        .root
        .path(&["spec", "syncPolicy", "automated", "prune"])
        .unwrap();
    assert_eq!(text_at(&p, prune.span), ("apps/rev.yaml", "false"));
    // The patch file is a patch, not a second Application.
    assert_eq!(p.docs_of(DocKind::Application).count(), 1);
}

#[test]
fn an_inline_json_patch_points_into_the_kustomization() {
    let p = Repository::in_memory(&[
        ("app.yaml", APP),
        (
            "kustomization.yaml",
            "resources: [app.yaml]\npatches:\n  - target:\n      kind: Application\n    patch: |-\n      - op: replace\n        path: /spec/source/targetRevision\n        value: HEAD\n",
        ),
    ]);
    let app = doc(&p, DocKind::Application, "web");
    let rev = app
        .root
        .path(&["spec", "source", "targetRevision"])
        .unwrap();
    assert_eq!(text_at(&p, rev.span), ("kustomization.yaml", "HEAD"));
}

#[test]
fn a_failing_json_patch_changes_nothing() {
    let p = Repository::in_memory(&[
        ("app.yaml", APP),
        (
            "kustomization.yaml",
            "resources: [app.yaml]\npatches:\n  - target: {kind: Application}\n    patch: |-\n      - op: replace\n        path: /spec/project\n        value: other\n      - op: test\n        path: /spec/project\n        value: nope\n",
        ),
    ]);
    let app = doc(&p, DocKind::Application, "web");
    assert_eq!(
        app.root.path(&["spec", "project"]).and_then(Node::as_str),
        Some("default")
    );
}

#[test]
fn overlays_that_disagree_keep_the_document_as_written() {
    let overlay = |rev: &str| {
        format!(
            "resources: [../base]\npatches:\n  - target: {{kind: Application}}\n    patch: |-\n      - op: replace\n        path: /spec/source/targetRevision\n        value: {rev}\n"
        )
    };
    let (dev, prod) = (overlay("dev"), overlay("v1"));
    let p = Repository::in_memory(&[
        ("base/app.yaml", APP),
        ("base/kustomization.yaml", "resources: [app.yaml]\n"),
        ("dev/kustomization.yaml", &dev),
        ("prod/kustomization.yaml", &prod),
    ]);
    let app = doc(&p, DocKind::Application, "web");
    let rev = app
        .root
        .path(&["spec", "source", "targetRevision"])
        .unwrap();
    assert_eq!(text_at(&p, rev.span), ("base/app.yaml", "main"));
}

#[test]
fn label_selectors() {
    let labels = crate::yaml::parse(crate::source::FileId(0), "a: x\nb: y\n")
        .docs
        .remove(0)
        .root;
    for (sel, want) in [
        ("a=x", true),
        ("a==x,b=y", true),
        ("a!=x", false),
        ("a in (x, z)", true),
        ("a notin (x)", false),
        ("c", false),
        ("!c", true),
        ("b,a in (z)", false),
    ] {
        assert_eq!(label_selector(sel, Some(&labels)), want, "{sel}");
    }
}

#[test]
fn json_pointers() {
    assert_eq!(
        pointer("/a~1b/~0c/-"),
        Some(vec!["a/b".into(), "~c".into(), "-".into()])
    );
    assert_eq!(pointer(""), Some(vec![]));
    assert_eq!(pointer("a"), None);
    assert_eq!(index("01"), None);
}

#[test]
fn a_folder_included_twice_at_every_level_stays_bounded() {
    // Each level lists the next twice (two spellings of one folder): kustomize would reject
    // it; the build must stay small and finish.
    let mut files: Vec<(String, String)> = vec![("l40/app.yaml".into(), APP.into())];
    files.push((
        "l40/kustomization.yaml".into(),
        "resources: [app.yaml]\n".into(),
    ));
    for i in 0..40 {
        files.push((
            format!("l{i}/kustomization.yaml"),
            format!(
                "namePrefix: p-\nresources:\n  - ../l{n}\n  - ../l{n}/\ncomponents:\n  - ../l{n}\n  - ../l{n}/.\n",
                n = i + 1
            ),
        ));
    }
    let files: Vec<(&str, &str)> = files
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    let p = Repository::in_memory(&files);
    assert_eq!(p.docs_of(DocKind::Application).count(), 1);
}
