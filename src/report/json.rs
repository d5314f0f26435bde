//! The JSON contract (version 1) documented in `docs/json-output.md`.

use rayon::prelude::*;
use serde::Serialize;

use super::{Range, range};
use crate::engine::{Report, Summary};
use crate::fix::Applicability;

#[derive(Serialize)]
struct Output<'a> {
    version: u32,
    tool: Tool,
    /// The repository root, absolute: `file` fields are relative to it.
    root: String,
    diagnostics: Vec<JsonDiagnostic<'a>>,
    summary: &'a Summary,
}

#[derive(Serialize)]
struct Tool {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct JsonDiagnostic<'a> {
    rule: &'a str,
    severity: &'static str,
    message: &'a str,
    file: &'a str,
    range: Range,
    labels: Vec<JsonLabel<'a>>,
    help: Option<&'a str>,
    fix: Option<JsonFix<'a>>,
}

#[derive(Serialize)]
struct JsonLabel<'a> {
    file: &'a str,
    range: Range,
    message: &'a str,
}

#[derive(Serialize)]
struct JsonFix<'a> {
    title: &'a str,
    applicability: Applicability,
    edits: Vec<JsonEdit<'a>>,
    diff: String,
}

#[derive(Serialize)]
struct JsonEdit<'a> {
    file: &'a str,
    range: Range,
    replacement: &'a str,
}

/// Renders the report as pretty-printed JSON followed by a newline.
#[must_use]
pub fn render(report: &Report) -> String {
    let sources = &report.repo.sources;
    let path = |f| sources.get(f).path.as_str();
    // Each fix's diff is computed from its file's text: on all threads.
    let diagnostics = report
        .diagnostics
        .par_iter()
        .map(|d| JsonDiagnostic {
            rule: &d.rule,
            severity: d.severity.as_str(),
            message: &d.message,
            file: path(d.span.file),
            range: range(sources, d.span),
            labels: d
                .labels
                .iter()
                .map(|l| JsonLabel {
                    file: path(l.span.file),
                    range: range(sources, l.span),
                    message: &l.message,
                })
                .collect(),
            help: d.help.as_deref(),
            fix: d.fix.as_ref().map(|f| JsonFix {
                title: &f.title,
                applicability: f.applicability,
                edits: f
                    .edits
                    .iter()
                    .map(|e| JsonEdit {
                        file: path(e.span.file),
                        range: range(sources, e.span),
                        replacement: &e.replacement,
                    })
                    .collect(),
                diff: super::diff::fix_diff(f, sources),
            }),
        })
        .collect();
    let out = Output {
        version: 1,
        tool: Tool {
            name: "gitops-lint",
            version: crate::VERSION,
        },
        root: report.repo.root.display().to_string(),
        diagnostics,
        summary: &report.summary,
    };
    let mut s =
        serde_json::to_string_pretty(&out).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    s.push('\n');
    s
}
