//! File arguments (what pre-commit passes): the whole repository is analysed, and what is
//! reported is what those files can break.

use std::path::Path;
use std::process::Command;

fn check(dir: &Path, args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["check", "--format", "concise"])
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A repository (a `.git` folder marks its root) holding `files`.
fn repo(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = crate::support::repo(files);
    std::fs::create_dir(dir.path().join(".git")).unwrap();
    dir
}

const APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\n  finalizers: [resources-finalizer.argocd.argoproj.io]\nspec:\n  project: web\n  source:\n    repoURL: https://git.example.com/platform/gitops.git\n    targetRevision: main\n    path: apps/web\n    helm:\n      valueFiles: [values-prod.yaml]\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: web\n  syncPolicy:\n    automated: {prune: true, selfHeal: true}\n";
const PROJECT: &str = "apiVersion: argoproj.io/v1alpha1\nkind: AppProject\nmetadata:\n  name: web\n  namespace: argocd\nspec:\n  sourceRepos: ['https://git.example.com/platform/gitops.git']\n  destinations: [{server: https://kubernetes.default.svc, namespace: web}]\n";

#[test]
fn a_staged_application_reports_the_values_file_it_now_deploys() {
    let dir = repo(&[
        (
            ".gitops-lint.yaml",
            "repo_urls: [https://git.example.com/platform/gitops.git]\n",
        ),
        ("argocd/web.yaml", APP),
        ("projects/web.yaml", PROJECT),
        (
            "apps/web/Chart.yaml",
            "apiVersion: v2\nname: web\nversion: 1.0.0\n",
        ),
        (
            "apps/web/values-prod.yaml",
            "image:\n  repository: r/web\n  tag: none\n",
        ),
        ("other/readme.yaml", "a: 1\n"),
    ]);
    let want = "apps/web/values-prod.yaml:3:8: error[argocd/image-tag-none]";
    // The Application file alone: the finding is in the values file it deploys.
    let out = check(dir.path(), &["argocd/web.yaml"]);
    assert!(out.contains(want), "{out}");
    // The values file alone: its own finding.
    let out = check(dir.path(), &["apps/web/values-prod.yaml"]);
    assert!(out.contains(want), "{out}");
    // An unrelated file: nothing.
    let out = check(dir.path(), &["other/readme.yaml"]);
    assert!(!out.contains("image-tag-none"), "{out}");
}
