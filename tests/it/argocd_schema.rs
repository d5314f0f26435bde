//! `argocd/schema` on real repositories: every Argo CD object of the corpus
//! (`$CARGO_MANIFEST_DIR/../shared/corpus`, one folder per repository) is validated, and the
//! findings must be exactly the judged list in `argocd_schema_corpus.txt` (each line: the
//! finding, then `  # ` and why it is right). Skipped, with a printed line, when the corpus is
//! absent (a fresh clone has nothing beside it).

use std::path::Path;

use gitops_lint::engine;
use gitops_lint::model::DocKind;

const RULE: &str = "argocd/schema";

fn expected() -> Vec<String> {
    include_str!("argocd_schema_corpus.txt")
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            l.split_once("  # ")
                .map_or(l, |(f, _)| f)
                .trim_end()
                .to_string()
        })
        .collect()
}

#[test]
#[ignore = "needs the real-world corpus at ../shared/corpus"]
fn corpus_findings_are_the_judged_ones() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let Ok(entries) = std::fs::read_dir(&corpus) else {
        println!("skipped: no corpus at {}", corpus.display());
        return;
    };
    let mut repos: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    repos.sort();
    let mut found = Vec::new();
    let mut objects = 0;
    for repo in &repos {
        let name = repo.file_name().unwrap().to_string_lossy().to_string();
        let report = engine::run(&engine::Options {
            paths: vec![repo.clone()],
            ..engine::Options::default()
        })
        .unwrap_or_else(|e| panic!("{name}: {e}"));
        objects += report
            .repo
            .docs
            .iter()
            .filter(|d| {
                matches!(
                    d.kind,
                    DocKind::Application | DocKind::ApplicationSet | DocKind::AppProject
                )
            })
            .count();
        for d in report.diagnostics.iter().filter(|d| d.rule == RULE) {
            let file = report.repo.source(d.span.file);
            let line = file.line_col(d.span.start as usize).line;
            found.push(format!("{name}/{}:{line}: {}", file.path, d.message));
        }
    }
    assert!(
        objects > 50,
        "the corpus holds only {objects} Argo CD objects"
    );
    let expected = expected();
    let missing: Vec<_> = expected.iter().filter(|e| !found.contains(e)).collect();
    let unexpected: Vec<_> = found.iter().filter(|f| !expected.contains(f)).collect();
    assert!(
        missing.is_empty() && unexpected.is_empty(),
        "{RULE} on the corpus ({objects} Argo CD objects) differs from argocd_schema_corpus.txt\n\
         not found any more:\n{}\nnew (judge each, then add it with a `  # ` note):\n{}",
        missing
            .iter()
            .map(|s| format!("  {s}"))
            .collect::<Vec<_>>()
            .join("\n"),
        unexpected
            .iter()
            .map(|s| format!("  {s}"))
            .collect::<Vec<_>>()
            .join("\n"),
    );
}

#[test]
fn argocd_version_setting() {
    use gitops_lint::config;
    use gitops_lint::registry as rules;
    use gitops_lint::rules::argocd::schema;
    let metas = rules::all_meta();
    let path = Path::new(".gitops-lint.yaml");
    let c = config::parse(path, "argocd:\n  version: v2.14.11\n", &metas).unwrap();
    let version = |c: &config::Config| c.options.get::<schema::Options>().version;
    let v = version(&c).unwrap();
    assert_eq!((v.major, v.minor), (2, 14));
    // Unquoted, `3.10` would be the float 3.1: the text as written is what counts.
    let c = config::parse(path, "argocd:\n  version: 3.10\n", &metas).unwrap();
    assert_eq!(version(&c).unwrap().minor, 10);
    for bad in ["banana", "[3]", "1.8", "4.0"] {
        let text = format!("argocd:\n  version: {bad}\n");
        let e = config::parse(path, &text, &metas).unwrap_err();
        assert!(e.message.contains("argocd.version"), "{bad}: {}", e.message);
        assert_eq!(e.span.map(|s| s.0), Some(19), "{bad}");
    }
}

/// `argocd.version` at each supported release: no `argocd/schema` finding on the corpus's
/// AppProjects (before 3.3 a `clusterResourceWhitelist` entry is a `GroupKind`; its `group` and
/// `kind` were once each reported as needing 3.3, hundreds of findings on one repository).
#[test]
#[ignore = "needs the real-world corpus at ../shared/corpus"]
fn corpus_app_projects_are_valid_at_every_version() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/corpus");
    let Ok(entries) = std::fs::read_dir(&corpus) else {
        println!("skipped: no corpus at {}", corpus.display());
        return;
    };
    let mut repos: Vec<_> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir())
        .collect();
    repos.sort();
    let dir = tempfile::tempdir().unwrap();
    let mut projects = 0;
    for version in ["2.13", "3.0", "3.2", "3.4", "3.5"] {
        let config = dir.path().join(format!("{version}.yaml"));
        std::fs::write(&config, format!("argocd:\n  version: \"{version}\"\n")).unwrap();
        let mut found = Vec::new();
        for repo in &repos {
            let report = engine::run(&engine::Options {
                paths: vec![repo.clone()],
                config: Some(config.clone()),
                ..engine::Options::default()
            })
            .unwrap();
            projects += report
                .repo
                .docs
                .iter()
                .filter(|d| d.kind == DocKind::AppProject)
                .count();
            for d in report.diagnostics.iter().filter(|d| d.rule == RULE) {
                let on_project = report
                    .repo
                    .file_docs(d.span.file)
                    .iter()
                    .filter(|doc| doc.kind == DocKind::AppProject)
                    .any(|doc| {
                        let s = doc.root.span;
                        s.start <= d.span.start && d.span.start <= s.end
                    });
                if on_project {
                    let file = report.repo.source(d.span.file);
                    let line = file.line_col(d.span.start as usize).line;
                    found.push(format!("{}:{line}: {}", file.path, d.message));
                }
            }
        }
        assert!(
            found.is_empty(),
            "argocd.version {version}:\n{}",
            found.join("\n")
        );
    }
    assert!(
        projects > 50,
        "the corpus holds only {projects} AppProjects"
    );
}
