//! `gitops-lint graph` on repositories shaped to blow it up: its output grows with the objects,
//! sources, files and edges it shows, not with the length of app-of-apps chains.

use std::path::Path;
use std::time::Duration;

const APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: NAME\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/platform/gitops.git\n    path: PATH\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: NAME\n";

fn app(name: &str, path: &str) -> String {
    APP.replace("NAME", name).replace("PATH", path)
}

/// `graph` with a time limit that catches a hang (not a speed test): its output.
fn graph(dir: &Path, format: &str, limit: Duration) -> String {
    let mut cmd = super::bin();
    cmd.args(["graph", "--format", format]).current_dir(dir);
    let o = super::run_bounded(cmd, limit);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8(o.stdout).unwrap()
}

/// A chain of 20,000 Applications (ten times the 2000 that filled 14 GB), each managing the
/// folder of the next: every line of the text tree stays short, the output is linear in the
/// chain's length, and every object is shown.
#[test]
fn a_long_app_of_apps_chain_is_shown_in_linear_output() {
    const N: usize = 20_000;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitops-lint.yaml"), "").unwrap();
    for i in 0..N {
        let folder = dir.path().join(format!("apps/a{i}"));
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(
            folder.join("app.yaml"),
            app(&format!("a{i}"), &format!("apps/a{}", i + 1)),
        )
        .unwrap();
    }
    // The last one manages a folder of plain manifests.
    std::fs::create_dir_all(dir.path().join(format!("apps/a{N}"))).unwrap();
    std::fs::write(
        dir.path().join(format!("apps/a{N}/cm.yaml")),
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: end}\n",
    )
    .unwrap();
    let text = graph(dir.path(), "text", Duration::from_secs(300));
    let longest = text.lines().map(str::len).max().unwrap();
    assert!(longest < 200, "a line of {longest} bytes");
    // Each Application: its own line, its source, its file, and at most a name line.
    assert!(
        text.len() < N * 400,
        "{} bytes for {N} Applications",
        text.len()
    );
    for name in ["a0 ", "a9999 ", &format!("a{} ", N - 1)] {
        assert!(
            text.lines()
                .any(|l| l.contains(&format!("Application {name}"))
                    && !l.contains("[shown below]")
                    && !l.contains("[see above]")),
            "Application {name}is shown"
        );
    }
    assert!(
        text.contains("continued (managed more than 16 levels down):"),
        "{}",
        &text[..2000]
    );
}

/// Applications that each manage the folder they are in (the shape of the report): every
/// Application manages every other, so the model has n² edges, and the text output is linear in
/// them (before, its indentation grew with the chain the tree walked: cubic).
#[test]
fn applications_managing_their_own_folder_are_shown_once_each() {
    const N: usize = 300;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitops-lint.yaml"), "").unwrap();
    std::fs::create_dir_all(dir.path().join("apps")).unwrap();
    for i in 0..N {
        std::fs::write(
            dir.path().join(format!("apps/a{i}.yaml")),
            app(&format!("a{i}"), "apps"),
        )
        .unwrap();
    }
    let text = graph(dir.path(), "text", Duration::from_secs(120));
    let longest = text.lines().map(str::len).max().unwrap();
    assert!(longest < 200, "a line of {longest} bytes");
    // n sources of n files, n² "manages" lines: 2·n² lines of at most 200 bytes.
    let lines = text.lines().count();
    assert!(lines < 2 * N * N + 10 * N, "{lines} lines");
    for i in 0..N {
        let shown = text
            .lines()
            .filter(|l| {
                l.trim_start()
                    .trim_start_matches("manages ")
                    .starts_with(&format!("Application a{i} (apps/a{i}.yaml:1)"))
                    && !l.contains(" [")
            })
            .count();
        assert_eq!(shown, 1, "Application a{i} is shown whole once");
    }
    // DOT: a node per Application and an edge per pair, nothing more.
    let dot = graph(dir.path(), "dot", Duration::from_secs(120));
    let edges = dot
        .lines()
        .filter(|l| l.contains("[label=\"manages\""))
        .count();
    assert_eq!(edges, N * (N - 1));
}

/// 20,000 Applications in one folder, each with that folder as its source: ten times the 2000
/// of the issue (before, 2000 took 3.6 s and 200 MB of JSON; 20,000 filled 8 GB and aborted).
/// Every Application manages every other, 400 million pairs: the model shares the folder's
/// file list and managed set, and the text and JSON give each once and refer to it, so the
/// output grows with the Applications. The ceilings catch a hang or a quadratic output only.
#[test]
fn twenty_thousand_applications_managing_their_folder_share_one_set() {
    const N: usize = 20_000;
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join(".gitops-lint.yaml"), "").unwrap();
    std::fs::create_dir_all(dir.path().join("apps")).unwrap();
    for i in 0..N {
        std::fs::write(
            dir.path().join(format!("apps/a{i}.yaml")),
            app(&format!("a{i}"), "apps"),
        )
        .unwrap();
    }
    let text = graph(dir.path(), "text", Duration::from_secs(300));
    assert!(
        text.len() < N * 1000,
        "{} bytes of text for {N} Applications",
        text.len()
    );
    let folded = text
        .matches("manages the same 20000 objects as Application a0 (apps/a0.yaml:1)\n")
        .count();
    assert_eq!(folded, N - 1, "the set is walked under a0 only");
    assert_eq!(
        text.matches("the 20000 files listed above for Application a0\n")
            .count(),
        N - 1
    );
    let json = graph(dir.path(), "json", Duration::from_secs(300));
    assert!(
        json.len() < N * 2000,
        "{} bytes of JSON for {N} Applications",
        json.len()
    );
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["file_sets"].as_array().unwrap().len(), 1);
    assert_eq!(v["file_sets"][0].as_array().unwrap().len(), N);
    assert_eq!(v["manage_sets"].as_array().unwrap().len(), 1);
    assert_eq!(v["manage_sets"][0].as_array().unwrap().len(), N);
    let objects = v["objects"].as_array().unwrap();
    assert_eq!(objects.len(), N);
    for o in objects {
        assert_eq!(o["manages_set"], 0, "{o}");
        assert_eq!(o["manages"], serde_json::json!([]));
        let source = &o["applications"][0]["sources"][0];
        assert_eq!(source["files_set"], 0, "{o}");
        assert_eq!(source["files"], serde_json::json!([]));
    }
}
