//! `check --fix`: apply fixes, re-lint, repeat until nothing changes (at most 10 passes), then
//! write each changed file once, through [`Root::write`]: atomically, keeping its link, mode
//! and owner, and not at all when it changed on disk meanwhile, is read-only, has other hard
//! links or leads outside the root. A file not written keeps its findings (the repository is
//! checked again as it is on disk), with a `lint/fix-failed` finding saying why; the command
//! line then exits with 2.
//!
//! All passes run in memory (the engine reads an overlay of fixed texts), so `--fix --diff`
//! shows exactly what `--fix` would write, and a failed run writes nothing half-done.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, Finding};
use crate::engine::{self, Error, Options, Report};
use crate::fix::{self, Applicability, Fix};
use crate::rules::internal::LintFixFailed;
use crate::source::fs::Root;
use crate::source::{FileId, Span};
use crate::yaml::{self, YamlErrorKind};

pub const MAX_PASSES: usize = 10;

#[derive(Clone, Copy, Debug, Default)]
pub struct FixOptions {
    /// Also apply `unsafe` fixes.
    pub unsafe_fixes: bool,
    /// Write the fixed files (false for `--fix --diff`).
    pub write: bool,
}

/// A file the fixes changed.
#[derive(Debug)]
pub struct Changed {
    pub path: String,
    pub abs: PathBuf,
    pub original: String,
    pub fixed: String,
}

pub struct FixOutcome {
    /// What remains after the fixes, plus `lint/fix-failed` findings.
    pub report: Report,
    /// Findings fixed, over all passes, in the files written (all changed files with
    /// `write: false`).
    pub fixed: usize,
    /// Each fixed finding as `path:line:col: rule: fix title` (root-relative, where the
    /// finding was when its fix was applied), for `--show-fixes`; only in the files written.
    pub fixed_findings: Vec<String>,
    pub changed: Vec<Changed>,
    /// Files not written, with the reason: their findings remain in `report`, each with a
    /// `lint/fix-failed` finding that says why.
    pub skipped: Vec<(String, String)>,
}

struct Failure {
    path: String,
    rule: String,
    message: String,
    text: String,
}

/// The YAML problems a fix must not add: syntax errors and duplicate keys (two fixes may each
/// add a key that the file lacks, such as `selfHeal` next to a misspelled `selfheal` and in its
/// place).
fn yaml_problems(text: &str) -> usize {
    yaml::parse(FileId(0), text)
        .errors
        .iter()
        .filter(|e| {
            matches!(
                e.kind,
                YamlErrorKind::Syntax | YamlErrorKind::DuplicateKey { .. }
            )
        })
        .count()
}

/// What [`apply_keeping_yaml_valid`] did to a file's text.
pub struct FixStep {
    pub text: String,
    /// The fixes applied (indexes into the fixes given).
    pub applied: Vec<usize>,
    /// The fixes not applied because each alone adds a YAML problem.
    pub breaking: Vec<usize>,
}

/// Applies what it can of one file's fixes at once ([`fix::apply_fixes`]: no two touching)
/// without adding a YAML problem: a fix that adds one alone is left out; fixes that are valid
/// alone but clash together (two fixes of one mistake) give way to the first, and a re-lint
/// finds what is left. `--fix` and the language server's fix-all both step this way.
#[must_use]
pub fn apply_keeping_yaml_valid(text: &str, fixes: &[&Fix]) -> FixStep {
    let before = yaml_problems(text);
    let (new, applied) = fix::apply_fixes(text, fixes);
    if yaml_problems(&new) <= before {
        return FixStep {
            text: new,
            applied,
            breaking: Vec::new(),
        };
    }
    let (breaking, fine): (Vec<usize>, Vec<usize>) = applied
        .into_iter()
        .partition(|&i| yaml_problems(&fix::apply_fixes(text, &[fixes[i]]).0) > before);
    let subset: Vec<&Fix> = fine.iter().map(|&i| fixes[i]).collect();
    let (new, picked) = fix::apply_fixes(text, &subset);
    // With no fix left (`fine` empty), `new` is `text` and the first branch is taken.
    let (text, applied) = if yaml_problems(&new) <= before {
        (new, picked.into_iter().map(|j| fine[j]).collect())
    } else {
        (fix::apply_fixes(text, &[fixes[fine[0]]]).0, vec![fine[0]])
    };
    FixStep {
        text,
        applied,
        breaking,
    }
}

/// A fix's identity across passes: rule, file, title and the edited text.
fn key(report: &Report, d: &Diagnostic, f: &Fix) -> String {
    let src = report.repo.source(d.span.file);
    let edits: Vec<String> = f
        .edits
        .iter()
        .map(|e| format!("{}>{}", src.slice(e.span), e.replacement))
        .collect();
    format!(
        "{}\u{0}{}\u{0}{}\u{0}{}",
        d.rule,
        src.path,
        f.title,
        edits.join("\u{1}")
    )
}

pub fn run(opts: &Options, fo: FixOptions) -> Result<FixOutcome, Error> {
    let threshold = if fo.unsafe_fixes {
        Applicability::Unsafe
    } else {
        Applicability::Safe
    };
    let mut overlay = opts.overlay.clone();
    let mut originals: BTreeMap<String, Original> = BTreeMap::new();
    let mut broken: HashSet<String> = HashSet::new();
    let mut failures: Vec<Failure> = Vec::new();
    let mut converged = false;
    let mut report = engine::run(opts)?;
    for _ in 0..MAX_PASSES {
        let mut per_file: BTreeMap<FileId, Vec<(&Diagnostic, &Fix)>> = BTreeMap::new();
        for d in &report.diagnostics {
            let Some(f) = &d.fix else { continue };
            let Some(first) = f.edits.first() else {
                continue;
            };
            let one_file = f.edits.iter().all(|e| e.span.file == first.span.file);
            if f.applicability >= threshold && one_file && !broken.contains(&key(&report, d, f)) {
                per_file.entry(first.span.file).or_default().push((d, f));
            }
        }
        if per_file.is_empty() {
            converged = true;
            break;
        }
        let mut applied_any = false;
        for (file, fixes) in per_file {
            let src = report.repo.source(file);
            let just: Vec<&Fix> = fixes.iter().map(|(_, f)| *f).collect();
            let step = apply_keeping_yaml_valid(src.text(), &just);
            for &i in &step.breaking {
                let (d, f) = fixes[i];
                broken.insert(key(&report, d, f));
                failures.push(Failure {
                    path: src.path.clone(),
                    rule: d.rule.clone(),
                    message: d.message.clone(),
                    text: format!("fix `{}` of `{}` would make this file invalid YAML (a syntax error or a duplicate key), so it was not applied", f.title, d.rule),
                });
            }
            let (new, applied) = (step.text, step.applied);
            if applied.is_empty() || new == src.text() {
                continue;
            }
            let original = originals
                .entry(src.path.clone())
                .or_insert_with(|| Original {
                    abs: src.abs().into_owned(),
                    text: src.text().to_string(),
                    fixed: Vec::new(),
                });
            for &i in &applied {
                let (d, f) = fixes[i];
                let at = src.line_col(d.span.start as usize);
                original.fixed.push(format!(
                    "{}:{}:{}: {}: {}",
                    src.path, at.line, at.column, d.rule, f.title
                ));
            }
            overlay.insert(src.path.clone(), new);
            applied_any = true;
        }
        report = engine::run(&Options {
            overlay: overlay.clone(),
            ..opts.clone()
        })?;
        if !applied_any {
            converged = true;
            break;
        }
    }
    if !converged {
        let paths: HashSet<String> = report
            .diagnostics
            .iter()
            .filter(|d| d.fix.as_ref().is_some_and(|f| f.applicability >= threshold))
            .map(|d| report.repo.source(d.span.file).path.clone())
            .collect();
        for path in paths {
            failures.push(Failure {
                path,
                rule: String::new(),
                message: String::new(),
                text: format!(
                    "fixes did not converge after {MAX_PASSES} passes; this is a bug in gitops-lint"
                ),
            });
        }
    }
    let mut changed = Vec::new();
    let mut fixed_by_file = BTreeMap::new();
    for (path, original) in originals {
        let fixed_text = overlay.get(&path).cloned().unwrap_or_default();
        if fixed_text != original.text {
            fixed_by_file.insert(path.clone(), original.fixed);
            changed.push(Changed {
                path,
                abs: original.abs,
                original: original.text,
                fixed: fixed_text,
            });
        }
    }
    let mut skipped = Vec::new();
    if fo.write {
        let root = Root::new(&report.repo.root);
        // A file with two names in the repository (a link to another checked file) was fixed
        // under each: it is written once.
        let mut written: HashMap<PathBuf, &str> = HashMap::new();
        for c in &changed {
            let target = c.abs.canonicalize().ok();
            if let Some(before) = target.as_ref().and_then(|t| written.get(t)) {
                if *before != c.fixed {
                    skipped.push((
                        c.path.clone(),
                        "another name of this file was fixed differently".into(),
                    ));
                }
                continue;
            }
            match root.write(&c.abs, c.fixed.as_bytes(), Some(c.original.as_bytes())) {
                Ok(()) => {
                    if let Some(t) = target {
                        written.insert(t, &c.fixed);
                    }
                }
                Err(e) => skipped.push((c.path.clone(), e.reason)),
            }
        }
    }
    if !skipped.is_empty() {
        // The report was made from the fixed texts: what remains is what is on disk now, the
        // files not written with their findings.
        report = engine::run(opts)?;
    }
    add_failures(&mut report, failures);
    add_write_failures(&mut report, &skipped, threshold);
    for (path, _) in &skipped {
        fixed_by_file.remove(path);
    }
    let fixed_findings: Vec<String> = fixed_by_file.into_values().flatten().collect();
    Ok(FixOutcome {
        report,
        fixed: fixed_findings.len(),
        fixed_findings,
        changed,
        skipped,
    })
}

/// A file's text before the fixes, and the fixes applied to it (as in
/// [`FixOutcome::fixed_findings`]).
struct Original {
    abs: PathBuf,
    text: String,
    fixed: Vec<String>,
}

/// A `lint/fix-failed` finding for each file whose fixes were not written, at its first finding
/// with a fix (which remains).
fn add_write_failures(report: &mut Report, skipped: &[(String, String)], threshold: Applicability) {
    for (path, reason) in skipped {
        let Some(file) = report.repo.file_by_path(path) else {
            continue;
        };
        let id = file.id;
        let span = report
            .diagnostics
            .iter()
            .find(|d| {
                d.span.file == id && d.fix.as_ref().is_some_and(|f| f.applicability >= threshold)
            })
            .map_or(Span::empty(id, 0), |d| d.span);
        report.add(
            LintFixFailed::ID,
            Finding::new(
                format!("the fixes of this file were not written: {reason}"),
                span,
            )
            .with_help(
                "Fix the file by hand, or make it a writable file of its own and run `--fix` again.",
            ),
        );
    }
}

fn add_failures(report: &mut Report, failures: Vec<Failure>) {
    for f in failures {
        let Some(file) = report.repo.file_by_path(&f.path) else {
            continue;
        };
        let id = file.id;
        // Point at the finding the failed fix was for, which is still there.
        let span = report
            .diagnostics
            .iter()
            .find(|d| d.span.file == id && d.rule == f.rule && d.message == f.message)
            .map_or(Span::empty(id, 0), |d| d.span);
        report.add(
            LintFixFailed::ID,
            Finding::new(f.text, span)
                .with_help("Fix this finding by hand, and report the failed fix with the file."),
        );
    }
}

/// Writes `new` to `path` (confined to its folder) as `--fix` does, unless the file no longer
/// holds `expected`: see [`Root::write`].
pub fn write_if_unchanged(path: &Path, expected: &str, new: &str) -> Result<(), String> {
    let dir = path.parent().unwrap_or(Path::new("."));
    Root::new(dir)
        .write(path, new.as_bytes(), Some(expected.as_bytes()))
        .map_err(|e| e.reason)
}

/// The unified diff of every changed file, for `--fix --diff`.
#[must_use]
pub fn diff(outcome: &FixOutcome) -> String {
    outcome
        .changed
        .iter()
        .map(|c| fix::unified_diff(&c.path, &c.original, &c.fixed))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fix::Edit;

    fn fix(at: usize, end: usize, replacement: &str) -> Fix {
        Fix::safe(
            "edit",
            vec![Edit {
                span: Span::new(FileId(0), at, end),
                replacement: replacement.into(),
            }],
        )
        .unwrap()
    }

    #[test]
    fn a_step_adds_no_yaml_problem() {
        let text = "a:\n  prune: true\n  selfheal: true\n";
        let rename = fix(19, 27, "selfHeal");
        let add = fix(text.len(), text.len(), "  selfHeal: true\n");
        let breaks = fix(0, 1, "[");
        let other = fix(3, 16, "  prune: false");
        // Each is valid alone; together the two make a duplicate key: the first goes alone.
        let step = apply_keeping_yaml_valid(text, &[&add, &rename]);
        assert_eq!(step.applied, [1]);
        assert!(step.breaking.is_empty());
        assert_eq!(step.text, "a:\n  prune: true\n  selfHeal: true\n");
        // One breaks the file alone: it is left out, and the others are applied.
        let step = apply_keeping_yaml_valid(text, &[&breaks, &other]);
        assert_eq!((step.applied, step.breaking), (vec![1], vec![0]));
        assert_eq!(step.text, "a:\n  prune: false\n  selfheal: true\n");
        // Only a fix that breaks the file: nothing is applied.
        let step = apply_keeping_yaml_valid(text, &[&breaks]);
        assert_eq!((step.applied, step.breaking), (vec![], vec![0]));
        assert_eq!(step.text, text);
        // Nothing wrong: everything is applied.
        let step = apply_keeping_yaml_valid(text, &[&other, &rename]);
        assert_eq!(step.applied.len(), 2);
    }
}
