//! Suppression comments applied to the stamped findings, and the unused or unknown ones
//! reported (`lint/unused-suppression`); the comments are parsed by `crate::suppress`.

use rayon::prelude::*;

use super::stamp::stamp;
use crate::config::{Config, Level};
use crate::diagnostic::{Diagnostic, Finding, Label};
use crate::model::Repository;
use crate::registry;
use crate::rules::internal;
use crate::suppress::{self, Directive};

/// Drops suppressed diagnostics and adds `lint/unused-suppression` ones. Returns the count
/// of suppressed diagnostics.
pub(super) fn apply_suppressions(
    repo: &Repository,
    config: &Config,
    diagnostics: &mut Vec<Diagnostic>,
) -> usize {
    let mut directives: Vec<Vec<Directive>> = repo
        .sources
        .all()
        .collect::<Vec<_>>()
        .par_iter()
        .map(|f| {
            // Released only when it holds no directive (see `load_project`); a file without the
            // marker needs no line index (made only for the files whose lines are shown).
            if f.text_was_released() || !f.text().contains(suppress::MARKER) {
                Vec::new()
            } else {
                suppress::parse_directives(f.id, f.text(), f.lines())
            }
        })
        .collect();
    let mut suppressed = 0;
    diagnostics.retain(|d| {
        let dirs = &mut directives[d.span.file.0 as usize];
        if dirs.is_empty() {
            return true;
        }
        let line = repo
            .source(d.span.file)
            .lines()
            .line_of(d.span.start as usize);
        let mut hit = false;
        for dir in dirs {
            if !dir.covers_line(line) {
                continue;
            }
            for sel in &mut dir.selectors {
                if sel.matches(&d.rule) {
                    sel.used = true;
                    hit = true;
                }
            }
        }
        if hit {
            suppressed += 1;
        }
        !hit
    });
    let unused_level = config.level(internal::LintUnusedSuppression::ID);
    if unused_level == Some(Level::Off) {
        return suppressed;
    }
    let known: Vec<&str> = registry::all_meta().iter().map(|m| m.id).collect();
    for dirs in directives {
        for dir in dirs {
            for sel in dir.selectors.iter().filter(|s| !s.used) {
                let exists = known.iter().any(|k| sel.matches(k))
                    || registry::is_dynamic_policy_id(&sel.pattern);
                let f = if exists {
                    let matching: Vec<&&str> = known.iter().filter(|k| sel.matches(k)).collect();
                    let disabled = if matching.is_empty() {
                        config.level(&sel.pattern) == Some(Level::Off)
                    } else {
                        matching.iter().all(|k| config.level(k) == Some(Level::Off))
                    };
                    if disabled {
                        continue;
                    }
                    Finding::new(
                        format!("suppression of `{}` matched no finding", sel.pattern),
                        sel.span,
                    )
                    .with_help("Remove the stale rule name from the directive.")
                } else {
                    let mut f = Finding::new(
                        format!("suppression names unknown rule `{}`", sel.pattern),
                        sel.span,
                    );
                    f.help = Some(
                        match crate::diagnostic::did_you_mean(&sel.pattern, &known) {
                            Some(s) => format!("{}{}", s[..1].to_uppercase(), &s[1..]),
                            None => "Run `gitops-lint rules` to list the rule ids.".to_string(),
                        },
                    );
                    f
                };
                let f = Finding {
                    labels: vec![Label {
                        span: dir.span,
                        message: "in this directive".into(),
                    }],
                    ..f
                };
                if let Some(d) = stamp(internal::LintUnusedSuppression::ID, f, config) {
                    diagnostics.push(d);
                }
            }
        }
    }
    suppressed
}
