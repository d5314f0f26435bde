//! Stamping: each finding gets its rule id and configured severity; findings of one rule at
//! one place become one.

use std::collections::HashSet;

use rayon::prelude::*;

use super::dispatch::Found;
use super::scope::Scope;
use super::suppress::apply_suppressions;
use super::timer::Timer;
use super::{Report, Summary};
use crate::config::{Config, Level};
use crate::diagnostic::{Diagnostic, Finding, Label, Severity};
use crate::model::Project;
use crate::registry;
use crate::source::FileId;

/// Findings of one rule at one place are one finding: two GitLab jobs sharing an anchor, or
/// two Applications deploying one values file, give one finding whose labels name each job or
/// Application (sorted input: same rule and span are adjacent). A user policy's results stay
/// as the policy wrote them, as conftest reports them.
fn merge_same_place(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
    let mut merged: Vec<Diagnostic> = Vec::with_capacity(diagnostics.len());
    for d in diagnostics {
        match merged.last_mut() {
            Some(last)
                if last.rule == d.rule
                    && last.span == d.span
                    && (d.message == last.message || registry::find(&d.rule).is_some()) =>
            {
                if d.message != last.message && d.labels.is_empty() {
                    // Nothing else tells the other finding apart: its message becomes a label.
                    let label = Label {
                        span: d.span,
                        message: d.message,
                    };
                    if !last.labels.contains(&label) {
                        last.labels.push(label);
                    }
                }
                for l in d.labels {
                    if !last.labels.contains(&l) {
                        last.labels.push(l);
                    }
                }
                last.severity = last.severity.max(d.severity);
                if last.fix.is_none() {
                    last.fix = d.fix;
                }
            }
            _ => merged.push(d),
        }
    }
    merged
}

/// Gives a finding its rule id and effective severity; `None` when the rule is off.
pub(super) fn stamp(rule: &'static str, f: Finding, config: &Config) -> Option<Diagnostic> {
    let severity = match (registry::find(rule), config.level(rule)) {
        (_, Some(Level::Off)) => return None,
        // A user policy's result: its own severity (deny → error, warn → warning) unless
        // configured.
        (None, Some(Level::On(s))) => s,
        (None, None) => f.severity.unwrap_or(Severity::Error),
        (Some(m), level) => {
            let configured = match level {
                Some(Level::On(s)) => s,
                _ => m.default_severity,
            };
            f.severity.map_or(configured, |s| s.min(configured))
        }
    };
    Some(Diagnostic {
        rule: rule.to_string(),
        severity,
        message: f.message,
        span: f.span,
        labels: f.labels,
        help: f.help,
        fix: f.fix,
    })
}

/// The report of a run's findings: fixes that would edit a chart template dropped, each
/// finding stamped, suppressions applied, findings sorted and merged, and those outside the
/// reported scope left out.
pub(super) fn finish(
    project: Project,
    config: Config,
    found: Found,
    load_findings: Vec<(&'static str, Finding)>,
    scope: Option<&Scope>,
    timer: &mut Timer,
) -> Report {
    let related: HashSet<FileId> = found.related;
    // Chart templates are Go templates: no fix edits them (a rendered node's span is where
    // its text came from, not YAML that can be rewritten).
    let yaml_files = project.sources.files().len();
    let mut diagnostics: Vec<Diagnostic> = found
        .raw
        .into_iter()
        .map(|e| {
            let mut f = e.finding;
            if f.fix.as_ref().is_some_and(|fix| {
                fix.edits
                    .iter()
                    .any(|ed| ed.span.file.0 as usize >= yaml_files)
            }) {
                f.fix = None;
            }
            (e.rule, f)
        })
        .chain(load_findings)
        .filter_map(|(id, f)| stamp(id, f, &config))
        .collect();

    let suppressed = apply_suppressions(&project, &config, &mut diagnostics);
    diagnostics.sort_by(|a, b| {
        (a.span.file, a.span.start, &a.rule, a.span.end, &a.message).cmp(&(
            b.span.file,
            b.span.start,
            &b.rule,
            b.span.end,
            &b.message,
        ))
    });
    let mut diagnostics = merge_same_place(diagnostics);
    // Every report shows lines and columns: the line indexes of the files with findings (and
    // the texts released after the load) are made on all threads, not one by one.
    let mut with_findings: Vec<FileId> = diagnostics
        .iter()
        .flat_map(|d| {
            let labels = d.labels.iter().map(|l| l.span.file);
            let edits = d
                .fix
                .iter()
                .flat_map(|f| f.edits.iter().map(|e| e.span.file));
            std::iter::once(d.span.file).chain(labels).chain(edits)
        })
        .collect();
    with_findings.sort_unstable();
    with_findings.dedup();
    with_findings.par_iter().for_each(|f| {
        let _ = project.source(*f).lines();
    });
    timer.mark("suppress, sort");
    if let Some(scope) = scope {
        let in_scope =
            |file: FileId| related.contains(&file) || scope.contains(&project.source(file).path);
        diagnostics.retain(|d| {
            in_scope(d.span.file)
                || d.labels
                    .iter()
                    .any(|l| scope.contains(&project.source(l.span.file).path))
        });
    }
    Report {
        project,
        config,
        diagnostics,
        notes: found.notes,
        summary: Summary {
            suppressed,
            ..Summary::default()
        },
    }
}
