//! `check --fix`: apply fixes, re-lint, repeat until nothing changes (at most 10 passes), then
//! write each changed file once, atomically, unless it changed on disk meanwhile.
//!
//! All passes run in memory (the engine reads an overlay of fixed texts), so `--fix --diff`
//! shows exactly what `--fix` would write, and a failed run writes nothing half-done.

use std::collections::{BTreeMap, HashSet};
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Diagnostic, Severity};
use crate::engine::{self, Error, Options, Report};
use crate::fix::{self, Applicability, Fix};
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
    /// Findings fixed, over all passes.
    pub fixed: usize,
    /// Each fixed finding as `path:line:col: rule: fix title` (root-relative, where the
    /// finding was when its fix was applied), for `--show-fixes`.
    pub fixed_findings: Vec<String>,
    pub changed: Vec<Changed>,
    /// Files not written, with the reason.
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
    let src = report.project.source(d.span.file);
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
    let mut originals: BTreeMap<String, (PathBuf, String)> = BTreeMap::new();
    let mut broken: HashSet<String> = HashSet::new();
    let mut failures: Vec<Failure> = Vec::new();
    let mut fixed = 0;
    let mut fixed_findings = Vec::new();
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
            let src = report.project.source(file);
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
            originals
                .entry(src.path.clone())
                .or_insert_with(|| (src.abs().into_owned(), src.text().to_string()));
            fixed += applied.len();
            for &i in &applied {
                let (d, f) = fixes[i];
                let at = src.line_col(d.span.start as usize);
                fixed_findings.push(format!(
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
            .map(|d| report.project.source(d.span.file).path.clone())
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
    add_failures(&mut report, failures);

    let mut changed = Vec::new();
    for (path, (abs, original)) in originals {
        let fixed_text = overlay.get(&path).cloned().unwrap_or_default();
        if fixed_text != original {
            changed.push(Changed {
                path,
                abs,
                original,
                fixed: fixed_text,
            });
        }
    }
    let mut skipped = Vec::new();
    if fo.write {
        for c in &changed {
            if let Err(reason) = write_if_unchanged(&c.abs, &c.original, &c.fixed) {
                skipped.push((c.path.clone(), reason));
            }
        }
    }
    Ok(FixOutcome {
        report,
        fixed,
        fixed_findings,
        changed,
        skipped,
    })
}

fn add_failures(report: &mut Report, failures: Vec<Failure>) {
    if failures.is_empty() {
        return;
    }
    for f in failures {
        let Some(file) = report.project.file_by_path(&f.path) else {
            continue;
        };
        let id = file.id;
        // Point at the finding the failed fix was for, which is still there.
        let span = report
            .diagnostics
            .iter()
            .find(|d| d.span.file == id && d.rule == f.rule && d.message == f.message)
            .map_or(Span::empty(id, 0), |d| d.span);
        let severity = match report.config.level("lint/fix-failed") {
            Some(crate::config::Level::Off) => continue,
            Some(crate::config::Level::On(s)) => s,
            None => Severity::Warning,
        };
        report.diagnostics.push(Diagnostic {
            rule: "lint/fix-failed".into(),
            severity,
            message: f.text,
            span,
            labels: Vec::new(),
            help: Some("Fix this finding by hand, and report the failed fix with the file.".into()),
            fix: None,
        });
    }
    report.diagnostics.sort_by(|a, b| {
        (a.span.file, a.span.start, &a.rule).cmp(&(b.span.file, b.span.start, &b.rule))
    });
    report.recount();
}

/// Writes `new` to `path` atomically (temporary file in the same folder, fsync, rename),
/// keeping its permissions, unless the file no longer holds `expected`.
pub fn write_if_unchanged(path: &Path, expected: &str, new: &str) -> Result<(), String> {
    let current = std::fs::read(path).map_err(|e| format!("cannot read it again: {e}"))?;
    if current != expected.as_bytes() {
        return Err("it changed on disk during the run; not written".into());
    }
    let meta = std::fs::metadata(path).map_err(|e| e.to_string())?;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.gitops-lint-{}.tmp", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut f = std::fs::File::create(&tmp)?;
        f.write_all(new.as_bytes())?;
        f.set_permissions(meta.permissions())?;
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(format!("cannot write it: {e}"));
    }
    Ok(())
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
