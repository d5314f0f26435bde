//! Mistakes that used to pass without a word (issue #32): each now gets a located finding or
//! a located error. An oversized or unreadable chart archive is in `render.rs`
//! (`oversized_and_unreadable_archives_get_a_note`), a fix that cannot be written in `fs.rs`.

use std::time::Duration;

use super::{assert_canary, bin, check_json, findings, repo};

/// An Application whose only finding has a safe fix (`selfHeal: true` added).
fn fixable(name: &str) -> String {
    format!(
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {{name: {name},\n  finalizers: [resources-finalizer.argocd.argoproj.io]}}\nspec:\n  project: default # gitops-lint: disable=argocd/no-default-project -- this test is about another rule\n  syncPolicy:\n    automated:\n      prune: true\n# gitops-lint: disable-file=argocd/schema -- a minimal Application for another rule\n"
    )
}

/// An invalid `include` (or `exclude`) glob is a configuration error at its item, with the
/// configuration's code frame, instead of a message that names no file.
#[test]
fn an_invalid_include_glob_is_located() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("app.yaml"), "a: 1\n").unwrap();
    for key in ["include", "exclude"] {
        std::fs::write(
            dir.path().join(".gitops-lint.yaml"),
            format!("{key}:\n  - apps/**\n  - \"apps/[z\"\n"),
        )
        .unwrap();
        let o = bin().arg("check").current_dir(dir.path()).output().unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("invalid glob `apps/[z`"), "{err}");
        assert!(err.contains(".gitops-lint.yaml:3:5"), "{err}");
    }
}

/// A kustomization cycle an Application deploys (`k8s/a` → `k8s/b` → `k8s/a`): kustomize cannot
/// build it, and Argo CD fails to sync. It is an `argocd/missing-source` error at the entry
/// that closes the cycle.
#[test]
fn a_kustomize_cycle_an_application_deploys_is_a_finding() {
    let app = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: shop\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/platform/gitops.git\n    path: k8s/a\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: shop\n";
    let dir = repo(&[
        (
            ".gitops-lint.yaml",
            b"repo_urls: [https://git.example.com/platform/gitops.git]\n",
        ),
        ("argocd/shop.yaml", app.as_bytes()),
        (
            "k8s/a/kustomization.yaml",
            b"resources:\n  - ../b\n  - deployment.yaml\n",
        ),
        (
            "k8s/a/deployment.yaml",
            b"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: shop\n",
        ),
        ("k8s/b/kustomization.yaml", b"resources:\n  - ../a\n"),
    ]);
    let (code, v) = check_json(dir.path(), Duration::from_secs(30));
    assert_eq!(code, Some(1));
    assert_canary(&v);
    let cycle = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|d| d["rule"] == "argocd/missing-source" && d["file"] == "k8s/b/kustomization.yaml")
        .unwrap_or_else(|| panic!("{:?}", findings(&v)));
    assert_eq!(cycle["range"]["start"]["line"], 2);
    let message = cycle["message"].as_str().unwrap();
    assert!(message.contains("closes a cycle"), "{message}");
}

/// A file changed on disk while `--fix` ran is not written, keeps its finding with a
/// `lint/fix-failed` one, and is not counted among the files fixed: the summary counts the
/// files written. The run reads `raced.yaml` from an overlay (what it read before the change),
/// so the file on disk differs from it when the fixes are written.
#[test]
fn a_file_changed_during_fix_is_not_counted_as_fixed() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    std::fs::write(p.join(".gitops-lint.yaml"), "").unwrap();
    std::fs::write(p.join("ok.yaml"), fixable("ok")).unwrap();
    let on_disk = fixable("raced").replace("prune: true", "prune: true # edited meanwhile");
    std::fs::write(p.join("raced.yaml"), &on_disk).unwrap();
    let opts = gitops_lint::engine::Options {
        paths: vec![p.to_path_buf()],
        root: Some(p.to_path_buf()),
        overlay: [("raced.yaml".to_string(), fixable("raced"))].into(),
        ..Default::default()
    };
    let fo = gitops_lint::fixer::FixOptions {
        unsafe_fixes: false,
        write: true,
    };
    let o = gitops_lint::fixer::run(&opts, fo).unwrap();
    assert_eq!(
        o.skipped,
        [(
            "raced.yaml".to_string(),
            "it changed on disk during the run".to_string()
        )]
    );
    assert_eq!(o.fixed, 1, "{:?}", o.fixed_findings);
    assert!(
        o.fixed_findings.iter().all(|f| f.starts_with("ok.yaml:")),
        "{:?}",
        o.fixed_findings
    );
    // What the command line prints as "fixed N findings in M files".
    assert_eq!(o.changed.len() - o.skipped.len(), 1);
    assert_eq!(
        std::fs::read_to_string(p.join("raced.yaml")).unwrap(),
        on_disk
    );
    assert!(
        std::fs::read_to_string(p.join("ok.yaml"))
            .unwrap()
            .contains("selfHeal")
    );
    let left: Vec<(String, &str)> = o
        .report
        .diagnostics
        .iter()
        .map(|d| {
            (
                o.report.repo.source(d.span.file).path.clone(),
                d.rule.as_str(),
            )
        })
        .collect();
    assert!(
        left.contains(&("raced.yaml".to_string(), "argocd/sync-policy"))
            && left.contains(&("raced.yaml".to_string(), "lint/fix-failed")),
        "{left:?}"
    );
    assert!(!left.iter().any(|(f, _)| f == "ok.yaml"), "{left:?}");
}
