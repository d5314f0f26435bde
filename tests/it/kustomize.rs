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
    "helmcharts-refused-without-enable-helm",
    "json6902-annotations-not-map-dropped",
    "kustomization-empty-error",
    "kustomization-invalid-resource-yaml-error",
    "kustomization-two-files-error",
    "smp-container-ports-same-port-protocols",
    "smp-ports-merge-by-containerport",
    "smp-service-ports-same-port-protocols",
    "sortoptions-invalid-error",
];

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
        let build = gitops_lint::model::kustomize::build::build_folder(&repo, "")
            .unwrap_or_else(|| panic!("{name}: no kustomization"));
        let verdict = if dir.join("expected.error").exists() {
            (!build.failed()).then(|| "kustomize fails; the build did not".to_string())
        } else {
            let text = std::fs::read_to_string(dir.join("expected.yaml")).unwrap();
            let theirs = sorted_objects(
                gitops_lint::yaml::parse(gitops_lint::source::FileId(0), &text)
                    .docs
                    .into_iter()
                    .map(|d| d.root.to_json())
                    .filter(|j| !j.is_null())
                    .collect(),
            );
            let ours = sorted_objects(build.objects.iter().map(|o| o.root.to_json()).collect());
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
            let theirs = sorted_objects(
                gitops_lint::yaml::parse(
                    gitops_lint::source::FileId(0),
                    &String::from_utf8_lossy(&out.stdout),
                )
                .docs
                .into_iter()
                .map(|d| d.root.to_json())
                .filter(|j| !j.is_null())
                .collect(),
            );
            let ours = sorted_objects(build.objects.iter().map(|o| o.root.to_json()).collect());
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
