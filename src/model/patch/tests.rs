//! Kustomize's transformations on Argo CD objects: unit tests, and the differential test
//! against `kubectl kustomize` on the kustomizations of `testdata/kustomize/`.

use super::*;
use crate::model::DocKind;
use crate::model::kustomize::tests::test_project;

fn project(files: &[(&str, &str)]) -> Project {
    test_project(files)
}

fn doc<'p>(p: &'p Project, kind: DocKind, name: &str) -> &'p Document {
    p.docs_of(kind)
        .find(|d| d.name() == Some(name))
        .unwrap_or_else(|| panic!("no {kind:?} {name}"))
}

fn text_at(p: &Project, span: Span) -> (&str, &str) {
    let f = p.source(span.file);
    (f.path.as_str(), &f.text[span.range()])
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
    let p = project(&[
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
    let p = project(&[
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
    let p = project(&[
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
    let p = project(&[
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

// ---- the oracle ----

/// Every file under `dir`, with paths relative to it.
fn read_tree(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap().flatten() {
            let path = e.path();
            if path.is_dir() {
                stack.push(path);
            } else {
                let rel = path
                    .strip_prefix(dir)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                out.push((rel, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    out
}

fn by_identity(mut objs: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    objs.sort_by_key(|o| (o["kind"].to_string(), o["metadata"]["name"].to_string()));
    objs
}

/// `kubectl kustomize` on each case of `testdata/kustomize/` gives the Argo CD objects our
/// model holds. Skipped without `kubectl`, except under `CI`.
#[test]
fn kubectl_kustomize_agrees() {
    let cases = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize");
    let kubectl = std::env::var_os("KUBECTL").unwrap_or_else(|| "kubectl".into());
    if std::process::Command::new(&kubectl)
        .args(["version", "--client"])
        .output()
        .map_or(true, |o| !o.status.success())
    {
        assert!(
            std::env::var_os("CI").is_none(),
            "`kubectl` is required under CI for the kustomize oracle"
        );
        // Skipped: no kubectl here.
        return;
    }
    let mut dirs: Vec<_> = std::fs::read_dir(&cases)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 3);
    for dir in dirs {
        let out = std::process::Command::new(&kubectl)
            .arg("kustomize")
            .arg(&dir)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}: {}",
            dir.display(),
            String::from_utf8_lossy(&out.stderr)
        );
        let text = String::from_utf8(out.stdout).unwrap();
        let theirs = by_identity(
            crate::yaml::parse(crate::source::FileId(0), &text)
                .docs
                .into_iter()
                .map(|d| d.root.to_json())
                .filter(|j| {
                    j["apiVersion"]
                        .as_str()
                        .is_some_and(|a| a.starts_with("argoproj.io/"))
                })
                .collect(),
        );
        let files = read_tree(&dir);
        let files: Vec<(&str, &str)> = files
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        let p = project(&files);
        let ours = by_identity(
            p.docs
                .iter()
                .filter(|d| is_argocd_kind(d.kind))
                .map(|d| d.root.to_json())
                .collect(),
        );
        assert_eq!(
            serde_json::to_string_pretty(&ours).unwrap(),
            serde_json::to_string_pretty(&theirs).unwrap(),
            "{}",
            dir.display()
        );
    }
}
