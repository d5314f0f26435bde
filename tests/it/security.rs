//! The security guarantees stated in README's "Security" section.

use std::path::Path;
use std::process::Command;

fn src_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            src_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Nothing in the linter starts a process (no helm, kustomize, shell) or opens a socket. The
/// only process is `git`, for the base revision of `--new-since` and `diff` (its worktree, the
/// base's files read from git objects, and `diff`'s default base), in the command-line front
/// end (`src/cli/new_since.rs`).
#[test]
fn no_process_and_no_network_in_the_linter() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    src_files(&root.join("src"), &mut files);
    for f in files {
        let rel = f
            .strip_prefix(root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/");
        let text = std::fs::read_to_string(&f).unwrap();
        for needle in [
            "std::net",
            "TcpStream",
            "UdpSocket",
            "process::Command",
            "Command::new",
        ] {
            let allowed = rel == "src/cli/new_since.rs" && needle.contains("Command");
            assert!(allowed || !text.contains(needle), "{rel} uses `{needle}`");
        }
    }
    let lock = std::fs::read_to_string(root.join("Cargo.lock")).unwrap();
    for net in [
        "name = \"reqwest\"",
        "name = \"hyper\"",
        "name = \"ureq\"",
        "name = \"curl\"",
        "name = \"tokio\"",
    ] {
        // Dev-dependencies may pull these in only if they are not linked into the binary;
        // none of ours do today, so keep the lock file free of them.
        assert!(!lock.contains(net), "Cargo.lock has a network crate: {net}");
    }
}

/// Paths in Applications never resolve outside the root: a values file next to the
/// repository, reached through `../`, is not read.
#[test]
fn application_paths_never_leave_the_root() {
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().join("repo");
    std::fs::create_dir_all(root.join("apps/shop")).unwrap();
    std::fs::create_dir_all(outer.path().join("outside")).unwrap();
    std::fs::write(
        outer.path().join("outside/values.yaml"),
        "image:\n  tag: none\n",
    )
    .unwrap();
    std::fs::write(
        root.join("apps/shop/Chart.yaml"),
        "apiVersion: v2\nname: shop\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        root.join("app.yaml"),
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: shop\nspec:\n  project: default\n  source:\n    repoURL: https://example.com/repo.git\n    path: apps/shop\n    helm:\n      valueFiles:\n        - ../../../outside/values.yaml\n        - /etc/passwd\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: shop\n  syncPolicy:\n    automated:\n      prune: true\n      selfHeal: true\n",
    )
    .unwrap();
    std::fs::write(
        root.join(".gitops-lint.yaml"),
        "repo_urls: [https://example.com/repo.git]\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["check", "--format", "json"])
        .arg(&root)
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rules: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert!(
        !rules.contains(&"argocd/image-tag-none"),
        "the values file outside the root was read: {v}"
    );
    assert!(
        rules.contains(&"argocd/missing-source"),
        "a value file outside the repository is missing from it: {v}"
    );
}
