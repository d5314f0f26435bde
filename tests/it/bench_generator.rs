//! The benchmarks' repository generator (`benches/gen_repo.py`) must keep producing what
//! `check` reads: every violation it plants, listed in `.expected.json`, is found (recall
//! 100 %). Cheap (20 apps) and not timed; it guards the yardstick, not the speed.
use std::path::Path;
use std::process::Command;

fn python3_available() -> bool {
    Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// (rule, file, line) of every planted violation missing from `check`'s findings.
fn missing_planted(generator_flags: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = tempfile::tempdir().unwrap();
    let repo = out.path().join("repo");
    let generated = Command::new("python3")
        .arg(root.join("benches/gen_repo.py"))
        .args(["--apps", "20", "--quiet", "--out"])
        .arg(&repo)
        .args(generator_flags)
        .output()
        .unwrap();
    assert!(
        generated.status.success(),
        "gen_repo.py failed: {}",
        String::from_utf8_lossy(&generated.stderr)
    );
    let truth: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join(".expected.json")).unwrap())
            .unwrap();
    let truth = truth.as_array().unwrap();
    assert!(!truth.is_empty(), "the generator planted nothing");
    let report = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg("check")
        .arg(&repo)
        .args(["--format", "json", "--fail-on", "never"])
        .output()
        .unwrap();
    assert!(
        report.status.success(),
        "check failed: {}",
        String::from_utf8_lossy(&report.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&report.stdout).unwrap();
    let found: std::collections::HashSet<(String, String, u64)> = report["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["rule"].as_str().unwrap_or_default().to_string(),
                d["file"].as_str().unwrap_or_default().to_string(),
                d["range"]["start"]["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    truth
        .iter()
        .map(|t| {
            (
                t["rule"].as_str().unwrap().to_string(),
                t["file"].as_str().unwrap().to_string(),
                t["line"].as_u64().unwrap(),
            )
        })
        .filter(|planted| !found.contains(planted))
        .map(|(rule, file, line)| format!("{rule} {file}:{line}"))
        .collect()
}

#[test]
fn every_planted_violation_is_found() {
    if !python3_available() {
        eprintln!("skipped: python3 is not installed, and benches/gen_repo.py needs it");
        return;
    }
    assert_eq!(missing_planted(&[]), Vec::<String>::new());
}

#[test]
fn every_planted_violation_is_found_with_chart_templates_and_overlays() {
    if !python3_available() {
        eprintln!("skipped: python3 is not installed, and benches/gen_repo.py needs it");
        return;
    }
    assert_eq!(
        missing_planted(&["--chart-templates", "--overlays"]),
        Vec::<String>::new()
    );
}
