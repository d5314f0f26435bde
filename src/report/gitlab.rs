//! `--format gitlab`: the GitLab Code Quality report (the CodeClimate subset GitLab reads),
//! shown by the merge-request widget.

use serde::Serialize;

use super::fingerprint::fingerprints;
use crate::diagnostic::Severity;
use crate::engine::Report;

#[derive(Serialize)]
struct Issue<'a> {
    description: String,
    check_name: &'a str,
    fingerprint: String,
    severity: &'static str,
    location: Location<'a>,
}

#[derive(Serialize)]
struct Location<'a> {
    path: &'a str,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: usize,
    end: usize,
}

#[must_use]
pub fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "major",
        Severity::Warning => "minor",
        Severity::Info => "info",
    }
}

#[must_use]
pub fn render(report: &Report) -> String {
    let sources = &report.project.sources;
    let fps = fingerprints(&report.project, &report.diagnostics);
    let issues: Vec<Issue<'_>> = report
        .diagnostics
        .iter()
        .zip(fps)
        .map(|(d, fingerprint)| {
            let f = sources.get(d.span.file);
            Issue {
                description: format!("{}: {}", d.rule, d.message),
                check_name: &d.rule,
                fingerprint,
                severity: severity(d.severity),
                location: Location {
                    path: &f.path,
                    lines: Lines {
                        begin: f.line_col(d.span.start as usize).line,
                        end: f.line_col(d.span.end as usize).line,
                    },
                },
            }
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&issues).unwrap_or_default();
    s.push('\n');
    s
}
