//! Stamping: each finding gets its rule id and configured severity; findings of one rule at
//! one place become one.

use crate::config::{Config, Level};
use crate::diagnostic::{Diagnostic, Finding, Label, Severity};
use crate::registry;

/// Findings of one rule at one place are one finding: two GitLab jobs sharing an anchor, or
/// two Applications deploying one values file, give one finding whose labels name each job or
/// Application (sorted input: same rule and span are adjacent). A user policy's results stay
/// as the policy wrote them, as conftest reports them.
pub(super) fn merge_same_place(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
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
