//! Whole repositories through `engine::run`: a small tree of Argo CD objects, kustomizations,
//! a chart with templates, values, CI files and a configuration, written from the input into a
//! temporary folder. The run never panics (no rule reports an internal error), it returns a
//! report or an error, and every finding lies inside its file on UTF-8 boundaries.
//!
//! The input is a list of files: a byte choosing the path, two bytes of length (little
//! endian, at most 4 KiB), then the content (any bytes: text that is not UTF-8 is hostile
//! input too).
#![no_main]

use std::path::PathBuf;

use gitops_lint::engine::{self, Options};
use libfuzzer_sys::fuzz_target;

const PATHS: &[&str] = &[
    ".gitops-lint.yaml",
    "apps/app.yaml",
    "apps/set.yaml",
    "apps/project.yaml",
    "apps/kustomization.yaml",
    "base/kustomization.yaml",
    "base/deploy.yaml",
    "overlays/prod/kustomization.yaml",
    "chart/Chart.yaml",
    "chart/values.yaml",
    "chart/values-prod.yaml",
    "chart/templates/app.yaml",
    "chart/templates/_helpers.tpl",
    "chart/charts/sub/Chart.yaml",
    "chart/charts/sub/templates/cm.yaml",
    ".gitlab-ci.yml",
    "ci/include.yml",
    ".github/workflows/ci.yml",
    "values/apps.yaml",
    "policy/deny.rego",
];

const MAX_FILES: usize = 12;
const MAX_FILE_BYTES: usize = 4096;

/// The files the input describes (a later file of the same path replaces an earlier one).
fn files(mut data: &[u8]) -> Vec<(&'static str, &[u8])> {
    let mut out: Vec<(&'static str, &[u8])> = Vec::new();
    while out.len() < MAX_FILES {
        let [which, lo, hi, rest @ ..] = data else {
            break;
        };
        let len = (usize::from(*lo) | usize::from(*hi) << 8)
            .min(MAX_FILE_BYTES)
            .min(rest.len());
        let path = PATHS[usize::from(*which) % PATHS.len()];
        out.retain(|(p, _)| *p != path);
        out.push((path, &rest[..len]));
        data = &rest[len..];
    }
    out
}

fn scratch() -> PathBuf {
    std::env::temp_dir().join(format!("gitops-lint-fuzz-repo-{}", std::process::id()))
}

fuzz_target!(|data: &[u8]| {
    let root = scratch();
    let _ = std::fs::remove_dir_all(&root);
    for (path, bytes) in files(data) {
        let p = root.join(path);
        if let Some(dir) = p.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(&p, bytes).unwrap();
    }
    // A repository with no file still has its root, so the run has something to walk.
    std::fs::create_dir_all(&root).unwrap();
    let opts = Options {
        root: Some(root.clone()),
        paths: vec![root.clone()],
        ..Options::default()
    };
    if let Ok(report) = engine::run(&opts) {
        for d in &report.diagnostics {
            assert!(!d.message.contains("internal error"), "{}", d.message);
            let file = report.repo.sources.get(d.span.file);
            let text = file.text();
            let (s, e) = (d.span.start as usize, d.span.end as usize);
            assert!(s <= e && e <= text.len(), "{}: {s}..{e} of {}", d.rule, text.len());
            assert!(text.is_char_boundary(s) && text.is_char_boundary(e), "{}", d.rule);
        }
    }
    let _ = std::fs::remove_dir_all(&root);
});
