//! Baselines: the fingerprints of known findings, so that a check reports only new ones.
//! Written by `gitops-lint baseline > FILE`, read by `check --baseline FILE`.

use std::collections::HashSet;

use serde::{Deserialize, Serialize};

use super::fingerprint::fingerprints;
use crate::engine::Report;
use crate::source::MAX_FILE_BYTES;
use crate::source::fs::Root;

#[derive(Serialize, Deserialize)]
struct Baseline {
    version: u32,
    findings: Vec<Known>,
}

#[derive(Serialize, Deserialize)]
struct Known {
    fingerprint: String,
    rule: String,
    file: String,
    message: String,
}

/// The baseline of every finding in `report`.
#[must_use]
pub fn render(report: &Report) -> String {
    let fps = fingerprints(&report.repo, &report.diagnostics);
    let findings = report
        .diagnostics
        .iter()
        .zip(fps)
        .map(|(d, fingerprint)| Known {
            fingerprint,
            rule: d.rule.clone(),
            file: report.repo.source(d.span.file).path.clone(),
            message: d.message.clone(),
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&Baseline {
        version: 1,
        findings,
    })
    .unwrap_or_default();
    s.push('\n');
    s
}

/// Reads a baseline file's fingerprints; a baseline in the repository at `root` is read only if
/// it is a regular file that does not lead outside it.
pub fn load(root: &Root, path: &std::path::Path) -> Result<HashSet<String>, String> {
    let text = root
        .read_text(path, root.reach_of(path), MAX_FILE_BYTES)
        .map_err(|e| format!("cannot read baseline {}: {}", path.display(), e.reason))?;
    let b: Baseline = serde_json::from_str(&text)
        .map_err(|e| format!("{}: not a gitops-lint baseline: {e}", path.display()))?;
    if b.version != 1 {
        return Err(format!(
            "{}: unsupported baseline version {}",
            path.display(),
            b.version
        ));
    }
    Ok(b.findings.into_iter().map(|k| k.fingerprint).collect())
}

/// Drops every finding whose fingerprint is in `known`; returns how many were dropped.
pub fn subtract(report: &mut Report, known: &HashSet<String>) -> usize {
    let fps = fingerprints(&report.repo, &report.diagnostics);
    let mut keep = fps.iter().map(|fp| !known.contains(fp));
    let before = report.diagnostics.len();
    report.diagnostics.retain(|_| keep.next().unwrap_or(true));
    let dropped = before - report.diagnostics.len();
    report.recount();
    dropped
}
