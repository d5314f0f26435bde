//! The differential test of kustomize's transformations on Argo CD objects: `kubectl
//! kustomize` on each case of `testdata/kustomize/` (a folder with a kustomization) gives the
//! Argo CD objects the model holds (the linter itself never runs kustomize). `#[ignore]`d:
//! `scripts/test` runs it.

use std::path::{Path, PathBuf};
use std::process::Command;

use gitops_lint::engine;
use gitops_lint::model::is_argocd_kind;

fn by_identity(mut objs: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    objs.sort_by_key(|o| (o["kind"].to_string(), o["metadata"]["name"].to_string()));
    objs
}

fn kubectl() -> Option<PathBuf> {
    let kubectl =
        std::env::var_os("KUBECTL").map_or_else(|| PathBuf::from("kubectl"), PathBuf::from);
    let ok = Command::new(&kubectl)
        .args(["version", "--client"])
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then_some(kubectl)
}

#[test]
#[ignore = "needs kubectl (the machine image ships it)"]
fn kubectl_kustomize_agrees_on_argocd_objects() {
    let kubectl = kubectl().expect("`kubectl` is required for the kustomize oracle");
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&cases)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        // `build/` holds the differential cases of the kustomize build, one folder each.
        .filter(|p| p.join("kustomization.yaml").is_file())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 3, "cases under {}", cases.display());
    for dir in dirs {
        let out = Command::new(&kubectl)
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
            gitops_lint::yaml::parse(gitops_lint::source::FileId(0), &text)
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
        let opts = engine::Options {
            paths: vec![dir.clone()],
            ..engine::Options::default()
        };
        let (repo, _) = engine::load(&opts).unwrap();
        let ours = by_identity(
            repo.docs
                .iter()
                .filter(|d| is_argocd_kind(d.kind))
                .map(|d| d.root.to_json())
                .collect(),
        );
        assert!(!ours.is_empty(), "{}", dir.display());
        assert_eq!(
            serde_json::to_string_pretty(&ours).unwrap(),
            serde_json::to_string_pretty(&theirs).unwrap(),
            "{}",
            dir.display()
        );
    }
}

/// Cases of `testdata/kustomize/build/` whose in-process build is known to differ from
/// kustomize's: each is listed with why in `src/model/kustomize/README.md`.
const KNOWN_DIFFERENCES: &[&str] = &[
    "cmgen-binary-file",
    "json6902-annotations-not-map-dropped",
    "kustomization-empty-error",
    "kustomization-invalid-resource-yaml-error",
    "kustomization-two-files-error",
    "smp-container-ports-same-port-protocols",
    "smp-ports-merge-by-containerport",
    "smp-service-ports-same-port-protocols",
    "sortoptions-invalid-error",
];

/// The build's objects and the ones `kubectl kustomize` printed (`text`), each sorted by
/// identity, as JSON.
fn both_sorted(
    build: &gitops_lint::model::kustomize::build::Build,
    text: &str,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    let ours = sorted_objects(build.objects.iter().map(|o| o.root.to_json()).collect());
    let theirs = sorted_objects(
        gitops_lint::yaml::parse(gitops_lint::source::FileId(0), text)
            .docs
            .into_iter()
            .map(|d| d.root.to_json())
            .filter(|j| !j.is_null())
            .collect(),
    );
    (ours, theirs)
}

fn sorted_objects(mut objs: Vec<serde_json::Value>) -> Vec<serde_json::Value> {
    let key = |o: &serde_json::Value| {
        (
            o["apiVersion"].to_string(),
            o["kind"].to_string(),
            o["metadata"]["namespace"].to_string(),
            o["metadata"]["name"].to_string(),
        )
    };
    objs.sort_by_key(key);
    objs
}

/// The in-process kustomize build against `kubectl kustomize`'s output, stored beside each
/// case (`scripts/kustomize-goldens` writes it; its `--check` compares with kubectl).
#[test]
fn build_matches_kubectl_goldens() {
    let cases = Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/kustomize/build");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&cases)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 150, "cases under {}", cases.display());
    let mut differ = Vec::new();
    for dir in &dirs {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let opts = engine::Options {
            paths: vec![dir.clone()],
            ..engine::Options::default()
        };
        let (repo, _) = engine::load(&opts).unwrap();
        // The case's `flags` (`kubectl kustomize` flags): what Argo CD's `kustomize.buildOptions`
        // would set.
        let flags = std::fs::read_to_string(dir.join("flags")).unwrap_or_default();
        let options = gitops_lint::model::kustomize::BuildOptions {
            enable_helm: flags.contains("--enable-helm"),
            unrestricted_loads: flags.contains("LoadRestrictionsNone"),
            known: true,
        };
        let build = gitops_lint::model::kustomize::build::build_folder_with(&repo, "", options)
            .unwrap_or_else(|| panic!("{name}: no kustomization"));
        let verdict = if dir.join("expected.error").exists() {
            (!build.failed()).then(|| "kustomize fails; the build did not".to_string())
        } else {
            let text = std::fs::read_to_string(dir.join("expected.yaml")).unwrap();
            let (ours, theirs) = both_sorted(&build, &text);
            if build.failed() {
                Some(format!("the build failed: {:?}", build.problems))
            } else if ours != theirs {
                Some(format!(
                    "ours:\n{}\nkubectl:\n{}",
                    serde_json::to_string_pretty(&ours).unwrap(),
                    serde_json::to_string_pretty(&theirs).unwrap()
                ))
            } else {
                None
            }
        };
        match (verdict, KNOWN_DIFFERENCES.contains(&name.as_str())) {
            (Some(why), false) => differ.push(format!("{name}: {why}")),
            (None, true) => differ.push(format!(
                "{name}: agrees now; remove it from KNOWN_DIFFERENCES"
            )),
            _ => {}
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {} cases differ from kubectl kustomize:\n\n{}",
        differ.len(),
        dirs.len(),
        differ.join("\n\n")
    );
}

/// Every kustomization of the real-world corpus (`../shared/corpus`) that `kubectl kustomize`
/// builds offline gives the same objects in-process; the ones that differ are the judged list
/// in `kustomize_corpus.txt`. Skipped, with a printed line, without the corpus.
#[test]
#[ignore = "needs the real-world corpus at ../shared/corpus and kubectl"]
fn corpus_builds_match_kubectl() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let Ok(entries) = std::fs::read_dir(&corpus) else {
        println!("skipped: no corpus at {}", corpus.display());
        return;
    };
    let kubectl = kubectl().expect("`kubectl` is required for the kustomize oracle");
    let mut repos: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    repos.sort();
    let judged: Vec<&str> = include_str!("kustomize_corpus.txt")
        .lines()
        .filter_map(|l| l.split("  # ").next())
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let (mut agree, mut kubectl_fails, mut differ) = (0, 0, Vec::new());
    for repo_dir in repos {
        let opts = engine::Options {
            paths: vec![repo_dir.clone()],
            ..engine::Options::default()
        };
        let (repo, _) = engine::load(&opts).unwrap();
        let mut dirs: Vec<String> = repo
            .sources
            .all()
            .filter(|f| {
                let name = f.path.rsplit('/').next().unwrap_or("");
                matches!(
                    name,
                    "kustomization.yaml" | "kustomization.yml" | "Kustomization"
                )
            })
            .map(|f| {
                f.path
                    .rsplit_once('/')
                    .map_or(String::new(), |(d, _)| d.to_string())
            })
            .collect();
        dirs.sort();
        dirs.dedup();
        let repo_name = repo_dir.file_name().unwrap().to_string_lossy().into_owned();
        for dir in dirs {
            let out = Command::new("timeout")
                .arg("30")
                .arg(&kubectl)
                .arg("kustomize")
                .arg(repo_dir.join(&dir))
                .output()
                .unwrap();
            let label = format!("{repo_name}/{dir}");
            if !out.status.success() {
                kubectl_fails += 1;
                continue;
            }
            let Some(build) = gitops_lint::model::kustomize::build::build_folder(&repo, &dir)
            else {
                continue;
            };
            let (ours, theirs) = both_sorted(&build, &String::from_utf8_lossy(&out.stdout));
            if ours == theirs && !build.failed() {
                agree += 1;
            } else if !judged.contains(&label.as_str()) {
                differ.push(format!(
                    "{label}: {}",
                    first_difference(&ours, &theirs, &build)
                ));
            }
        }
    }
    println!(
        "corpus kustomizations: {agree} agree with kubectl, {kubectl_fails} kubectl cannot build offline"
    );
    assert!(
        differ.is_empty(),
        "differ from kubectl kustomize:\n{}",
        differ.join("\n")
    );
}

/// The first object that differs, for the failure message.
fn first_difference(
    ours: &[serde_json::Value],
    theirs: &[serde_json::Value],
    build: &gitops_lint::model::kustomize::build::Build,
) -> String {
    if build.failed() {
        return format!("the build failed: {:?}", build.problems);
    }
    if ours.len() != theirs.len() {
        let ids = |v: &[serde_json::Value]| {
            v.iter()
                .map(|o| format!("{}/{}", o["kind"], o["metadata"]["name"]))
                .collect::<Vec<_>>()
        };
        return format!(
            "{} objects, kubectl {}: {:?} vs {:?}",
            ours.len(),
            theirs.len(),
            ids(ours),
            ids(theirs)
        );
    }
    for (a, b) in ours.iter().zip(theirs) {
        if a != b {
            return format!("ours {a}\nkubectl {b}");
        }
    }
    String::new()
}

/// A seeded generator of kustomizations (bases, overlays, components, patches, generators,
/// replacements), each built in-process and by `kubectl kustomize`: the objects must agree,
/// and so must failure. `KUSTOMIZE_GEN_CASES` sets how many (60 by default).
#[test]
#[ignore = "needs kubectl (the machine image ships it)"]
fn generated_kustomizations_match_kubectl() {
    let kubectl = kubectl().expect("`kubectl` is required for the kustomize oracle");
    let cases: u64 = std::env::var("KUSTOMIZE_GEN_CASES")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(60);
    let mut differ = Vec::new();
    for seed in 1..=cases {
        let dir = tempfile::tempdir().unwrap();
        let files = generated_case(seed);
        for (rel, text) in &files {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        }
        let out = Command::new(&kubectl)
            .arg("kustomize")
            .arg(dir.path().join("overlays/env"))
            .output()
            .unwrap();
        let opts = engine::Options {
            paths: vec![dir.path().to_path_buf()],
            ..engine::Options::default()
        };
        let (repo, _) = engine::load(&opts).unwrap();
        let build = gitops_lint::model::kustomize::build::build_folder(&repo, "overlays/env")
            .expect("the overlay's kustomization");
        let verdict = if !out.status.success() {
            (!build.failed()).then(|| {
                format!(
                    "kubectl fails ({}), the build did not",
                    String::from_utf8_lossy(&out.stderr).trim()
                )
            })
        } else {
            let (ours, theirs) = both_sorted(&build, &String::from_utf8_lossy(&out.stdout));
            (build.failed() || ours != theirs).then(|| first_difference(&ours, &theirs, &build))
        };
        if let Some(why) = verdict {
            let listing: Vec<String> = files.iter().map(|(p, t)| format!("--- {p}\n{t}")).collect();
            differ.push(format!("seed {seed}: {why}\n{}", listing.join("")));
        }
    }
    assert!(
        differ.is_empty(),
        "{} of {cases} generated cases differ:\n\n{}",
        differ.len(),
        differ.join("\n\n")
    );
}

/// xorshift64*: the same cases on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// One generated repository: `base/`, `components/extra/` and `overlays/env/`, built from the
/// overlay.
fn generated_case(seed: u64) -> Vec<(String, String)> {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let app = r.pick(&["web", "api", "worker", "billing"]);
    let sidecar = r.chance(40);
    let mut files = Vec::new();
    let mut deployment = format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app}\n  labels:\n    app: {app}\nspec:\n  replicas: {}\n  selector:\n    matchLabels:\n      app: {app}\n  template:\n    metadata:\n      labels:\n        app: {app}\n    spec:\n      serviceAccountName: {app}\n      containers:\n      - name: {app}\n        image: registry.example.com/{app}:1.{}.0\n        ports:\n        - containerPort: 8080\n          name: http\n        env:\n        - name: MODE\n          value: base\n        - name: LEVEL\n          valueFrom:\n            configMapKeyRef:\n              name: {app}-config\n              key: LEVEL\n        envFrom:\n        - secretRef:\n            name: {app}-secret\n        volumeMounts:\n        - name: config\n          mountPath: /etc/{app}\n",
        1 + r.below(3),
        r.below(9)
    );
    if sidecar {
        deployment.push_str("      - name: proxy\n        image: envoyproxy/envoy:v1.30.1\n");
    }
    deployment.push_str(&format!(
        "      volumes:\n      - name: config\n        configMap:\n          name: {app}-config\n"
    ));
    files.push(("base/deployment.yaml".to_string(), deployment));
    files.push((
        "base/service.yaml".to_string(),
        format!("apiVersion: v1\nkind: Service\nmetadata:\n  name: {app}\nspec:\n  selector:\n    app: {app}\n  ports:\n  - port: 80\n    targetPort: http\n"),
    ));
    files.push((
        "base/rbac.yaml".to_string(),
        format!("apiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: {app}\n---\napiVersion: rbac.authorization.k8s.io/v1\nkind: RoleBinding\nmetadata:\n  name: {app}\nroleRef:\n  apiGroup: rbac.authorization.k8s.io\n  kind: Role\n  name: reader\nsubjects:\n- kind: ServiceAccount\n  name: {app}\n"),
    ));
    let mut base =
        "resources:\n- deployment.yaml\n- service.yaml\n- rbac.yaml\nconfigMapGenerator:\n"
            .to_string();
    base.push_str(&format!(
        "- name: {app}-config\n  literals:\n  - LEVEL={}\n",
        r.pick(&["info", "debug", "warn"])
    ));
    if r.chance(50) {
        base.push_str("  - EXTRA=\"quoted value\"\n");
    }
    base.push_str(&format!(
        "secretGenerator:\n- name: {app}-secret\n  literals:\n  - TOKEN=s3cr3t-{}\n",
        r.below(1000)
    ));
    if r.chance(30) {
        base.push_str("generatorOptions:\n  disableNameSuffixHash: true\n");
    }
    files.push(("base/kustomization.yaml".to_string(), base));
    let component = r.chance(40);
    if component {
        files.push((
            "components/extra/kustomization.yaml".to_string(),
            format!("apiVersion: kustomize.config.k8s.io/v1alpha1\nkind: Component\ncommonAnnotations:\n  team: {}\npatches:\n- target:\n    kind: Deployment\n  patch: |-\n    - op: add\n      path: /spec/template/metadata/annotations\n      value:\n        component: extra\n", r.pick(&["a", "b"])),
        ));
    }
    let mut overlay = "resources:\n- ../../base\n".to_string();
    if component {
        overlay.push_str("components:\n- ../../components/extra\n");
    }
    if r.chance(50) {
        overlay.push_str(&format!("namePrefix: {}-\n", r.pick(&["prod", "dev"])));
    }
    if r.chance(30) {
        overlay.push_str("nameSuffix: -v2\n");
    }
    if r.chance(50) {
        overlay.push_str(&format!(
            "namespace: {}\n",
            r.pick(&["shop", "default", "team-x"])
        ));
    }
    match r.below(3) {
        0 => overlay.push_str("commonLabels:\n  env: prod\n"),
        1 => overlay.push_str(&format!(
            "labels:\n- pairs:\n    env: prod\n  includeSelectors: {}\n  includeTemplates: {}\n",
            r.chance(50),
            r.chance(50)
        )),
        _ => {}
    }
    if r.chance(40) {
        overlay.push_str("commonAnnotations:\n  owner: platform\n");
    }
    if r.chance(60) {
        overlay.push_str(&format!(
            "images:\n- name: registry.example.com/{app}\n  newTag: \"2.{}.0\"\n",
            r.below(9)
        ));
        if sidecar && r.chance(50) {
            overlay.push_str("- name: envoyproxy/envoy\n  newName: mirror.example.com/envoy\n");
        }
    }
    if r.chance(40) {
        overlay.push_str(&format!(
            "replicas:\n- name: {app}\n  count: {}\n",
            2 + r.below(4)
        ));
    }
    let mut patches = Vec::new();
    if r.chance(60) {
        patches.push(format!(
            "- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: {app}\n    spec:\n      template:\n        spec:\n          containers:\n          - name: {app}\n            env:\n            - name: MODE\n              value: {}\n            - name: NEW\n              value: \"1\"\n",
            r.pick(&["prod", "dev"])
        ));
    }
    if r.chance(30) {
        patches.push(format!(
            "- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: {app}\n    spec:\n      template:\n        spec:\n          containers:\n          - name: debug\n            image: busybox:1.36\n"
        ));
    }
    if r.chance(40) {
        patches.push(format!(
            "- target:\n    kind: {}\n  patch: |-\n    - op: add\n      path: /metadata/annotations\n      value:\n        patched: \"yes\"\n",
            r.pick(&["Deployment", "Service"])
        ));
    }
    if r.chance(15) {
        patches.push("- patch: |-\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: missing\n    spec:\n      replicas: 1\n".to_string());
    }
    if !patches.is_empty() {
        overlay.push_str("patches:\n");
        overlay.push_str(&patches.concat());
    }
    if r.chance(40) {
        overlay.push_str(&format!(
            "configMapGenerator:\n- name: {app}-config\n  behavior: {}\n  literals:\n  - LEVEL=error\n",
            r.pick(&["merge", "replace"])
        ));
    }
    if r.chance(40) {
        overlay.push_str(&format!(
            "replacements:\n- source:\n    kind: Service\n    name: {app}\n    fieldPath: spec.ports.0.port\n  targets:\n  - select:\n      kind: Deployment\n    fieldPaths:\n    - spec.template.metadata.annotations.port\n    options:\n      create: true\n"
        ));
    }
    files.push(("overlays/env/kustomization.yaml".to_string(), overlay));
    files
}
