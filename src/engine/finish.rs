//! The end of a run: findings stamped, suppressed, sorted, merged and scoped into a [`Report`].

use std::collections::HashSet;

use rayon::prelude::*;

use super::dispatch::Found;
use super::scope::Scope;
use super::stamp::{merge_same_place, stamp};
use super::suppress::apply_suppressions;
use super::timer::Timer;
use super::{Report, Summary};
use crate::config::Config;
use crate::diagnostic::{Diagnostic, Finding};
use crate::model::Repository;
use crate::source::FileId;

/// The report of a run's findings: fixes that would edit a chart template dropped, each
/// finding stamped, suppressions applied, findings sorted and merged, and those outside the
/// reported scope left out.
pub(super) fn finish(
    repo: Repository,
    config: Config,
    found: Found,
    load_findings: Vec<(&'static str, Finding)>,
    scope: Option<&Scope>,
    timer: &mut Timer,
) -> Report {
    let related: HashSet<FileId> = found.related;
    // Chart templates are Go templates: no fix edits them (a rendered node's span is where
    // its text came from, not YAML that can be rewritten).
    let yaml_files = repo.sources.files().len();
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

    let suppressed = apply_suppressions(&repo, &config, &mut diagnostics);
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
        let _ = repo.source(*f).lines();
    });
    timer.mark("suppress, sort");
    if let Some(scope) = scope {
        let in_scope =
            |file: FileId| related.contains(&file) || scope.contains(&repo.source(file).path);
        diagnostics.retain(|d| {
            in_scope(d.span.file)
                || d.labels
                    .iter()
                    .any(|l| scope.contains(&repo.source(l.span.file).path))
        });
    }
    Report {
        repo,
        config,
        diagnostics,
        notes: found.notes,
        summary: Summary {
            suppressed,
            ..Summary::default()
        },
    }
}
