//! Re-linting with the parse cache (what `gitops-lint server` does after an edit) reports
//! exactly what a fresh full check reports, through edits on disk and in open buffers, files
//! added and removed, and broken YAML.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use gitops_lint::engine::{self, CacheStats, Options, ParseCache};

const EXAMPLE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/testdata/examples/cnp-gitops");

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), &target).unwrap();
        }
    }
}

/// Every diagnostic with its file's path (ids are the same when the file lists are).
fn findings(report: &engine::Report) -> Vec<String> {
    report
        .diagnostics
        .iter()
        .map(|d| format!("{} {d:?}", report.repo.source(d.span.file).path))
        .collect()
}

struct Repo {
    root: std::path::PathBuf,
    cache: Arc<ParseCache>,
    overlay: BTreeMap<String, String>,
}

impl Repo {
    fn options(&self, cache: bool) -> Options {
        Options {
            root: Some(self.root.clone()),
            overlay: self.overlay.clone(),
            cache: cache.then(|| self.cache.clone()),
            ..Options::default()
        }
    }

    /// Re-lints through the cache, checks the result against a full run, and returns how the
    /// cache was used.
    fn relint(&self, step: &str) -> CacheStats {
        let cached = engine::run(&self.options(true)).unwrap();
        let full = engine::run(&self.options(false)).unwrap();
        assert_eq!(
            findings(&cached),
            findings(&full),
            "{step}: the cached run differs from a full run"
        );
        assert!(!full.diagnostics.is_empty());
        self.cache.stats()
    }

    /// A copy of the example repository under `dir`, with an empty cache.
    fn copy_of_example(dir: &Path) -> Repo {
        let root = dir.join("repo");
        copy_dir(Path::new(EXAMPLE), &root);
        Repo {
            root,
            cache: Arc::new(ParseCache::new()),
            overlay: BTreeMap::new(),
        }
    }

    /// A full run, without the cache.
    fn full(&self) -> engine::Report {
        engine::run(&self.options(false)).unwrap()
    }

    fn path(&self, rel: &str) -> std::path::PathBuf {
        self.root.join(rel)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap()
    }

    fn write(&self, rel: &str, text: &str) {
        let path = self.path(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
    }
}

#[test]
fn cached_relint_reports_what_a_full_check_reports() {
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::copy_of_example(dir.path());
    let files = repo.relint("cold").parsed;
    assert!(files > 20);
    assert_eq!(
        repo.relint("unchanged"),
        CacheStats {
            reused: files,
            parsed: 0
        }
    );

    // An open buffer's edit: a values file now deploys `tag: none`.
    let values = "apps/citation-api/values-prod.yaml";
    let text = repo.read(values);
    let tag = text
        .lines()
        .find(|l| l.trim_start().starts_with("tag:"))
        .unwrap();
    repo.overlay
        .insert(values.into(), text.replace(tag, "  tag: none"));
    assert_eq!(repo.relint("buffer edit").parsed, 1);
    // The same buffer again, then the buffer typed back to what the disk holds.
    assert_eq!(repo.relint("same buffer").parsed, 0);
    repo.overlay.insert(values.into(), text.clone());
    assert_eq!(repo.relint("buffer as on disk").parsed, 1);

    // A file changed on disk: a longer text, then one of the same length with a newer time.
    let app = "argocd/citation-api/prod.yaml";
    let app_text = repo.read(app);
    repo.write(app, &app_text.replace("selfHeal: true", "selfHeal: false"));
    assert_eq!(repo.relint("disk edit").parsed, 1);
    repo.write(app, &app_text.replace("selfHeal: true", "selfHeal: FALSE"));
    let later = SystemTime::now() + Duration::from_secs(5);
    std::fs::File::options()
        .write(true)
        .open(repo.path(app))
        .unwrap()
        .set_modified(later)
        .unwrap();
    assert_eq!(repo.relint("same length, newer time").parsed, 1);
    // Replaced by rename (as editors and `git checkout` write), same length and same time.
    #[cfg(unix)]
    {
        let path = repo.path(app);
        let time = std::fs::metadata(&path).unwrap().modified().unwrap();
        let fresh = repo.path("argocd/citation-api/.prod.yaml.new");
        std::fs::write(
            &fresh,
            app_text.replace("selfHeal: true", "selfHeal: False"),
        )
        .unwrap();
        std::fs::File::options()
            .write(true)
            .open(&fresh)
            .unwrap()
            .set_modified(time)
            .unwrap();
        std::fs::rename(&fresh, &path).unwrap();
        assert_eq!(repo.relint("replaced, same length and time").parsed, 1);
    }

    // Broken YAML in a buffer: its load findings come from the cache next time too.
    repo.overlay
        .insert(values.into(), "image: [unclosed\n  tag: none\n".into());
    assert_eq!(repo.relint("syntax error").parsed, 1);
    assert_eq!(repo.relint("syntax error, again").parsed, 0);

    // A file added before the others moves every later file's id: they are parsed again.
    repo.write("apps/a-first.yaml", "apiVersion: v1\nkind: ConfigMap\n");
    let moved = repo.relint("file added");
    assert!(moved.parsed > 1, "{moved:?}");
    // A new file known only as an open buffer, then one removed from disk.
    repo.overlay.insert(
        "argocd/zz-new.yaml".into(),
        app_text.replace("citation-api-prod", "zz-new"),
    );
    repo.relint("buffer of a new file");
    std::fs::remove_file(repo.path("apps/a-first.yaml")).unwrap();
    repo.relint("file removed");

    // Buffers closed: the files on disk count again.
    repo.overlay.clear();
    repo.relint("buffers closed");
    assert_eq!(repo.relint("settled").parsed, 0);

    // Another repository given the same cache starts afresh.
    let other = dir.path().join("other");
    copy_dir(Path::new(EXAMPLE), &other);
    repo.root = other;
    assert_eq!(repo.relint("another root").reused, 0);
}

/// How many diagnostics of `rule` a run reports in `file`.
fn count(report: &engine::Report, rule: &str, file: &str) -> usize {
    report
        .diagnostics
        .iter()
        .filter(|d| d.rule == rule && report.repo.source(d.span.file).path == file)
        .count()
}

/// The findings of per-document Rego rules are kept between runs for unchanged documents:
/// they must follow an edit of the document, a kustomize patch that changes it while its file
/// stays as it was, and a configuration that changes the rule's options or turns it off.
#[test]
fn kept_per_document_findings_follow_edits_patches_and_configuration() {
    const RULE: &str = "argocd/no-default-project";
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo::copy_of_example(dir.path());
    let app = "argocd/citation-api/prod.yaml";
    let app_text = repo.read(app);
    // An Application that a kustomization deploys, not patched yet.
    let patched = "argocd/kz/app.yaml";
    let kustomization = "argocd/kz/kustomization.yaml";
    repo.write(
        patched,
        &app_text.replace("citation-api-prod", "kz-app-prod"),
    );
    repo.write(kustomization, "resources:\n  - app.yaml\n");
    // A workload that `platform/image-digest` flags only where its `paths` option reaches.
    repo.write(
        "k8s/web.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          image: nginx:1.25\n",
    );
    let config = ".gitops-lint.yaml";
    let config_text = repo.read(config);
    repo.relint("cold");
    assert_eq!(repo.relint("warm").parsed, 0);

    // The document a rule flags is edited, then another file is: its finding is kept.
    repo.overlay.insert(
        app.into(),
        app_text.replace("project: atlas", "project: default"),
    );
    repo.relint("flagged by a Rego rule");
    assert_eq!(count(&repo.full(), RULE, app), 1);
    let values = "apps/citation-api/values-prod.yaml";
    repo.overlay
        .insert(values.into(), repo.read(values) + "\nextra: 1\n");
    repo.relint("another file edited");
    assert_eq!(count(&repo.full(), RULE, app), 1);
    // Fixed: the finding goes.
    repo.overlay.remove(app);
    repo.relint("flagged document fixed");
    assert_eq!(count(&repo.full(), RULE, app), 0);

    // A repository-scope Rego rule: its results are kept while the model is the same.
    const PINNED: &str = "argocd/production-target-revision";
    repo.overlay.insert(
        app.into(),
        app_text.replace("targetRevision: main", "targetRevision: HEAD"),
    );
    repo.relint("production follows HEAD");
    assert_eq!(count(&repo.full(), PINNED, app), 1);
    repo.overlay
        .insert(values.into(), repo.read(values) + "\nmore: 2\n");
    repo.relint("model unchanged");
    repo.overlay.remove(app);
    repo.relint("production pinned again");
    assert_eq!(count(&repo.full(), PINNED, app), 0);

    // A patch makes the unchanged Application use `default`, then goes again.
    repo.write(
        kustomization,
        "resources:\n  - app.yaml\npatches:\n  - target: {kind: Application}\n    patch: |-\n      - op: replace\n        path: /spec/project\n        value: default\n",
    );
    repo.relint("patched by kustomize");
    assert_eq!(count(&repo.full(), RULE, kustomization), 1);
    repo.relint("patched, again");
    repo.write(kustomization, "resources:\n  - app.yaml\n");
    repo.relint("patch removed");
    assert_eq!(
        count(&repo.full(), RULE, kustomization) + count(&repo.full(), RULE, patched),
        0
    );

    // The configuration limits the rule to other paths, turns it off, then gives it back.
    repo.overlay.insert(
        app.into(),
        app_text.replace("project: atlas", "project: default"),
    );
    repo.relint("flagged again");
    let digest = |r: &engine::Report| {
        r.diagnostics
            .iter()
            .filter(|d| d.rule == "platform/image-digest")
            .count()
    };
    let before = digest(&repo.full());
    repo.write(
        config,
        &format!("{config_text}  platform/image-digest:\n    paths: [\"**\"]\n"),
    );
    repo.relint("a rule's paths widened");
    assert_eq!(digest(&repo.full()), before + 1);
    repo.write(config, &format!("{config_text}  {RULE}: off\n"));
    repo.relint("rule off");
    repo.write(config, &config_text);
    repo.relint("configuration restored");
    assert_eq!(count(&repo.full(), RULE, app), 1);
}

/// The renderings of charts are kept between runs and reused while their inputs are the
/// same: what the rules see of them must follow an edit of the values, of a template, and a
/// file added before the chart's (every file id after it moves).
#[test]
fn kept_renderings_follow_values_templates_and_moved_files() {
    const RULE: &str = "argocd/image-tag-none";
    let dir = tempfile::tempdir().unwrap();
    let mut repo = Repo {
        root: dir.path().to_path_buf(),
        cache: Arc::new(ParseCache::new()),
        overlay: BTreeMap::new(),
    };
    let app = |env: &str| {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web-{env}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/platform/gitops.git\n    path: charts/web\n    targetRevision: HEAD\n    helm:\n      valueFiles:\n        - values-{env}.yaml\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: web-{env}\n"
        )
    };
    repo.write("argocd/web/prod.yaml", &app("prod"));
    repo.write("argocd/web/dev.yaml", &app("dev"));
    repo.write(
        "charts/web/Chart.yaml",
        "apiVersion: v2\nname: web\nversion: 1.0.0\n",
    );
    repo.write("charts/web/values.yaml", "waitTag: \"1.36\"\n");
    repo.write("charts/web/values-prod.yaml", "replicas: 2\n");
    repo.write("charts/web/values-dev.yaml", "replicas: 1\n");
    // The wait container's tag is printed from a key only the rendering knows to be a tag.
    let template = "charts/web/templates/deployment.yaml";
    let template_text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {{ .Release.Name }}\nspec:\n  replicas: {{ .Values.replicas }}\n  template:\n    spec:\n      initContainers:\n        - name: wait\n          image: \"busybox:{{ .Values.waitTag }}\"\n      containers:\n        - name: web\n          image: nginx:1.27\n";
    repo.write(template, template_text);
    repo.relint("cold");
    repo.relint("warm");
    let prod = "charts/web/values-prod.yaml";
    assert_eq!(count(&repo.full(), RULE, prod), 0);

    // One release's values: only it renders the placeholder.
    repo.overlay
        .insert(prod.into(), "replicas: 2\nwaitTag: none\n".into());
    repo.relint("values edited");
    assert_eq!(count(&repo.full(), RULE, prod), 1);
    repo.relint("values edited, again");
    repo.overlay.remove(prod);
    repo.relint("values back");
    assert_eq!(count(&repo.full(), RULE, prod), 0);

    // The template: a placeholder written in it, for both releases.
    repo.write(template, &template_text.replace("nginx:1.27", "nginx:none"));
    repo.relint("template edited");
    assert_eq!(count(&repo.full(), RULE, template), 1);
    repo.write(template, template_text);
    repo.relint("template back");
    assert_eq!(count(&repo.full(), RULE, template), 0);

    // A file added before the chart's moves the ids its rendered objects point at.
    repo.overlay
        .insert(prod.into(), "replicas: 2\nwaitTag: none\n".into());
    repo.relint("values edited before the move");
    repo.write("a-first.yaml", "apiVersion: v1\nkind: ConfigMap\n");
    repo.relint("file added");
    assert_eq!(count(&repo.full(), RULE, prod), 1);
}
