//! `graph --format html`: one self-contained page with the app-of-apps tree and the findings of
//! `check` on its nodes.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::support::{Chromium, repo};

fn example() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/examples/cnp-gitops")
}

fn page(dir: &Path) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["graph", "--format", "html"])
        .current_dir(dir)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).unwrap()
}

/// The part of the page that is the node of object `id`, up to the next object's node.
fn node<'p>(page: &'p str, summary: &str) -> &'p str {
    let at = page
        .find(summary)
        .unwrap_or_else(|| panic!("no node `{summary}`:\n{page}"));
    let rest = &page[at..];
    let end = rest[1..]
        .find("<li class=\"obj\"")
        .map_or(rest.len(), |e| e + 1);
    &rest[..end]
}

/// On the example repository: the roots, the app-of-apps tree (each object once, then linked),
/// the Applications a chart renders, the files each source reads marked with their findings,
/// and every finding of `check` on the object whose document holds it; nothing is fetched and
/// the markup is balanced.
#[test]
fn example_page_has_the_tree_with_findings_on_its_nodes() {
    let page = page(&example());
    assert!(page.starts_with("<!doctype html>"), "{page}");
    assert!(!page.contains("src="), "nothing is loaded: {page}");
    assert!(
        !page.contains("<link") && !page.contains("@import"),
        "{page}"
    );
    for href in page.split("href=\"").skip(1) {
        assert!(href.starts_with('#'), "a link out of the page: {href:.80}");
    }
    for (open, close) in [
        ("<li", "</li>"),
        ("<ul", "</ul>"),
        ("<details", "</details>"),
        ("<section", "</section>"),
    ] {
        assert_eq!(
            page.matches(open).count(),
            page.matches(close).count(),
            "unbalanced {open}"
        );
    }
    assert!(
        page.contains("<summary>root <span class=\"k\">AppProject</span> <b>atlas</b> <code>projects/atlas.yaml:1</code></summary>"),
        "{page}"
    );
    // `bootstrap` is in an app-of-apps cycle: not reached from a root, shown from its top, with
    // the finding that says so on its node.
    let unreached = &page[page.find("id=\"unreached\"").expect("no unreached section")..];
    let bootstrap = node(
        unreached,
        "<summary><span class=\"k\">Application</span> <b>bootstrap</b>",
    );
    assert!(
        bootstrap.contains("<div class=\"finding error\"><b>error</b> <code>argocd/app-of-apps-cycle</code> at <code>argocd/platform/bootstrap.yaml:6</code>: Application `bootstrap` manages itself through app-of-apps: bootstrap → tenants → bootstrap</div>"),
        "{bootstrap}"
    );
    assert!(
        bootstrap.contains("<span class=\"st error\">3 findings</span></summary>"),
        "{bootstrap}"
    );
    assert!(
        bootstrap.contains(
            "<li class=\"file\"><code>k8s/platform/argocd-apps/argocd.yaml</code> <a href=\"#file-"
        ),
        "{bootstrap}"
    );
    // What it manages, in full once; `root` manages the same Applications, linked.
    let argocd = node(
        &page,
        "<summary>manages <span class=\"k\">Application</span> <b>argocd</b>",
    );
    assert!(
        argocd.contains("<code>argocd/self-managed</code> at <code>k8s/platform/argocd-apps/argocd.yaml:12</code>"),
        "{argocd}"
    );
    let mut shown: Vec<&str> = page
        .split("<li class=\"obj\" id=\"")
        .skip(1)
        .map(|r| &r[..r.find('"').unwrap()])
        .collect();
    let all = shown.len();
    shown.sort_unstable();
    shown.dedup();
    assert_eq!(shown.len(), all, "an object shown in full twice");
    assert_eq!(
        all,
        page.matches("data-findings=").count(),
        "every object listed is shown"
    );
    assert!(
        page.contains("(shown above)</li>"),
        "a managed object shown again is a link"
    );
    let batch = node(
        &page,
        "<summary>manages <span class=\"k\">Application</span> <b>batch-apps</b>",
    );
    assert!(
        batch.contains("renders <span class=\"k\">Application</span> <b>dagster-sensors</b>"),
        "{batch}"
    );
    assert!(
        batch.contains("<li class=\"file\"><code>apps/dagster-sensors/cronjob.yaml</code>"),
        "{batch}"
    );
    // Every finding of `check` is listed once by file.
    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["check", "--format", "json"])
        .current_dir(example())
        .output()
        .unwrap();
    let check: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let by_file = &page[page.find("<h3>Findings by file</h3>").unwrap()..];
    let diagnostics = check["diagnostics"].as_array().unwrap();
    assert!(!diagnostics.is_empty());
    assert_eq!(
        by_file.matches("<div class=\"finding ").count(),
        diagnostics.len()
    );
    for d in diagnostics {
        let at = format!(
            "<code>{}</code> at <code>{}:{}</code>",
            d["rule"].as_str().unwrap(),
            d["file"].as_str().unwrap(),
            d["range"]["start"]["line"]
        );
        assert!(by_file.contains(&at), "{at} not listed");
    }
    // The list of objects, with their counts.
    assert!(
        page.contains("data-name=\"bootstrap\" data-findings=\"3\""),
        "{page}"
    );
}

/// An ApplicationSet's node lists the Applications it generates, and repository text that
/// looks like markup, or holds control and bidirectional characters, is shown, not obeyed.
#[test]
fn generated_applications_and_hostile_names() {
    let dir = repo(&[
        (
            "root.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: \"<img src=x onerror=alert(1)>\\u202e\"\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: sets\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n",
        ),
        (
            "sets/envs.yaml",
            "apiVersion: argoproj.io/v1alpha1\nkind: ApplicationSet\nmetadata:\n  name: envs\n  namespace: argocd\nspec:\n  generators:\n    - list:\n        elements:\n          - env: dev\n          - env: prod\n  template:\n    metadata:\n      name: 'web-{{env}}'\n    spec:\n      project: default\n      source:\n        repoURL: https://git.example.com/gitops.git\n        path: 'web/{{env}}'\n      destination:\n        server: https://kubernetes.default.svc\n        namespace: 'web-{{env}}'\n",
        ),
        (
            "web/dev/deploy.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n",
        ),
        (
            "web/prod/deploy.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: web\n",
        ),
    ]);
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "repo_urls: [https://git.example.com/gitops.git]\n",
    )
    .unwrap();
    let page = page(dir.path());
    assert!(!page.contains("<img"), "{page}");
    assert!(
        page.contains("<b>&lt;img src=x onerror=alert(1)&gt;\\u{202e}</b>"),
        "{page}"
    );
    assert!(
        page.contains("<code>argocd/no-default-project</code> at <code>root.yaml:7</code>: Application `&lt;img src=x onerror=alert(1)&gt;\\u{202e}` uses the `default` AppProject"),
        "{page}"
    );
    let envs = node(
        &page,
        "<summary>manages <span class=\"k\">ApplicationSet</span> <b>envs</b>",
    );
    for env in ["dev", "prod"] {
        assert!(
            envs.contains(&format!(
                "generates <span class=\"k\">Application</span> <b>web-{env}</b>"
            )),
            "{envs}"
        );
        assert!(
            envs.contains(&format!("<code>web/{env}/deploy.yaml</code>")),
            "{envs}"
        );
    }
}

/// In a browser (headless Chromium): the tree and a finding on a node are in the DOM after the
/// page's script ran, and a screenshot is not blank. The screenshot is kept in the target
/// folder (`graph-page.png`). Skipped, saying so, where Chromium is not installed.
#[test]
#[ignore = "needs chromium (scripts/test installs it)"]
fn page_in_a_browser() {
    if !Chromium::installed() {
        eprintln!("skipped: chromium is not installed (apt-get install chromium)");
        return;
    }
    let out = tempfile::tempdir().unwrap();
    let file = out.path().join("graph.html");
    std::fs::write(&file, page(&example())).unwrap();
    let chromium = Chromium::new();
    let dom = chromium.dom(&file);
    assert!(dom.contains("<ul class=\"tree\" id=\"roots\">"), "{dom}");
    assert!(
        dom.contains("<summary>manages <span class=\"k\">Application</span> <b>argocd</b>"),
        "{dom}"
    );
    assert!(
        dom.contains(
            "<code>argocd/app-of-apps-cycle</code> at <code>argocd/platform/bootstrap.yaml:6</code>"
        ),
        "{dom}"
    );
    assert!(
        dom.contains("<a href=\"#obj-") && dom.contains("data-findings=\"3\""),
        "{dom}"
    );
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("graph-page.png");
    chromium.screenshot(&file, &shot);
}
