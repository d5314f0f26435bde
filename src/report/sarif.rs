//! `--format sarif`: SARIF 2.1.0 for code-scanning services (GitHub, GitLab, Azure DevOps).

use serde_json::{Value, json};

use super::fingerprint::fingerprints;
use crate::diagnostic::Severity;
use crate::engine::Report;
use crate::rule::RuleMeta;
use crate::source::{SourceDb, Span};

fn level(s: Severity) -> &'static str {
    match s {
        Severity::Error => "error",
        Severity::Warning => "warning",
        Severity::Info => "note",
    }
}

/// Where a rule's documentation lives online.
#[must_use]
pub fn help_uri(id: &str) -> String {
    format!(
        "{}/blob/main/docs/rules/{id}.md",
        env!("CARGO_PKG_REPOSITORY")
    )
}

fn region(sources: &SourceDb, span: Span) -> Value {
    let f = sources.get(span.file);
    let start = f.line_col(span.start as usize);
    let end = f.line_col(span.end as usize);
    json!({
        "startLine": start.line,
        "startColumn": start.column,
        "endLine": end.line,
        "endColumn": end.column,
        "charOffset": span.start,
        "charLength": span.len(),
    })
}

fn location(sources: &SourceDb, span: Span, message: Option<&str>) -> Value {
    let mut loc = json!({
        "physicalLocation": {
            "artifactLocation": {"uri": sources.get(span.file).path, "uriBaseId": "%SRCROOT%"},
            "region": region(sources, span),
        }
    });
    if let Some(m) = message {
        loc["message"] = json!({"text": m});
    }
    loc
}

fn rule_descriptor(m: &RuleMeta) -> Value {
    json!({
        "id": m.id,
        "name": m.id.replace(['/', '-'], "_"),
        "shortDescription": {"text": m.summary},
        "fullDescription": {"text": crate::report::rules::explain(m)},
        "help": {"text": m.summary, "markdown": crate::report::rules::explain(m)},
        "helpUri": help_uri(m.id),
        "defaultConfiguration": {"level": level(m.default_severity)},
    })
}

/// Renders the report as a SARIF 2.1.0 log with one run.
#[must_use]
pub fn render(report: &Report, metas: &[&RuleMeta]) -> String {
    let sources = &report.repo.sources;
    let fps = fingerprints(&report.repo, &report.diagnostics);
    let results: Vec<Value> = report
        .diagnostics
        .iter()
        .zip(&fps)
        .map(|(d, fp)| {
            let mut text = d.message.clone();
            if let Some(h) = &d.help {
                text.push('\n');
                text.push_str(h);
            }
            let mut r = json!({
                "ruleId": d.rule,
                "level": level(d.severity),
                "message": {"text": text},
                "locations": [location(sources, d.span, None)],
                "partialFingerprints": {"gitopsLint/v1": fp},
            });
            if let Some(i) = metas.iter().position(|m| m.id == d.rule) {
                r["ruleIndex"] = json!(i);
            }
            if !d.labels.is_empty() {
                r["relatedLocations"] = Value::Array(
                    d.labels
                        .iter()
                        .enumerate()
                        .map(|(i, l)| {
                            let mut loc = location(sources, l.span, Some(&l.message));
                            loc["id"] = json!(i);
                            loc
                        })
                        .collect(),
                );
            }
            if let Some(fix) = &d.fix {
                let mut by_file: Vec<(crate::source::FileId, Vec<Value>)> = Vec::new();
                for e in &fix.edits {
                    let rep = json!({
                        "deletedRegion": region(sources, e.span),
                        "insertedContent": {"text": e.replacement},
                    });
                    match by_file.iter_mut().find(|(f, _)| *f == e.span.file) {
                        Some((_, v)) => v.push(rep),
                        None => by_file.push((e.span.file, vec![rep])),
                    }
                }
                r["fixes"] = json!([{
                    "description": {"text": fix.title},
                    "artifactChanges": by_file.into_iter().map(|(f, reps)| json!({
                        "artifactLocation": {"uri": sources.get(f).path, "uriBaseId": "%SRCROOT%"},
                        "replacements": reps,
                    })).collect::<Vec<_>>(),
                }]);
            }
            r
        })
        .collect();
    let root_uri = file_uri(&report.repo.root);
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "gitops-lint",
                "version": crate::VERSION,
                "semanticVersion": crate::VERSION,
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": metas.iter().map(|m| rule_descriptor(m)).collect::<Vec<_>>(),
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root_uri}},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut s = serde_json::to_string_pretty(&log).unwrap_or_default();
    s.push('\n');
    s
}

fn file_uri(root: &std::path::Path) -> String {
    let mut s = String::from("file://");
    let p = root.to_string_lossy().replace('\\', "/");
    if !p.starts_with('/') {
        s.push('/');
    }
    for ch in p.chars() {
        match ch {
            ' ' => s.push_str("%20"),
            '#' => s.push_str("%23"),
            '%' => s.push_str("%25"),
            '?' => s.push_str("%3F"),
            c => s.push(c),
        }
    }
    if !s.ends_with('/') {
        s.push('/');
    }
    s
}
