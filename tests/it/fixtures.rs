//! The fixture harness: every folder `testdata/rules/<group>/<rule>/` holds cases for that rule.
//!
//! - A case is a file `good*.yaml` / `bad*.yaml`, or a folder `good*/` / `bad*/` holding a small
//!   repository (for rules that relate several files).
//! - A `good` case must give no finding of the rule; a `bad` case at least one.
//! - `# expect: <rule>` at the end of a line marks where a finding must start. If a case has
//!   markers, every finding of the rule must start on a marked line and every marker must be hit.
//! - A `.gitops-lint.yaml` in the rule folder (or in a folder case) configures the rule.
//! - For a single-file `bad` case with fixes, `<case>.fixed.yaml` holds the file after every
//!   safe fix of the rule is applied (what `--fix` writes), and `<case>.unsafe.fixed.yaml`, when
//!   the case has unsafe fixes, the file after every fix (`--fix --unsafe-fixes`);
//!   `BLESS=1` writes them. A folder case has `<case>.fixed/` and
//!   `<case>.unsafe.fixed/`, holding each file the fixes change, as it ends up. A fixed file
//!   must parse, give no finding of the rule with a fix it applies, and fixing it again changes
//!   nothing; a golden with no fix of its kind left is stale.
//! - `<case>.messages` (optional; create it empty, then `BLESS=1` fills it) holds the
//!   rule's findings as `path:line:column: severity: message`, one per line, so a change of
//!   wording is a visible diff.
//! - A rule declared fixable must offer a fix in at least one case; a rule declared not
//!   fixable must never offer one.
//!
//! - A `diff/` rule's case is a folder holding two repositories, `base/` and `head/`: what
//!   `gitops-lint diff` compares. Its markers are in `head/`, and a `.gitops-lint.yaml` beside
//!   them (in the case or rule folder) configures both.
//!
//! Only the rule named by the folder is looked at; other rules' findings are ignored.
//! `FIXTURES=<rule or group>[,…]` runs those rules' cases alone; `BLESS=1` writes the goldens.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use gitops_lint::config::{self, Config};
use gitops_lint::engine::{self, Report};
use gitops_lint::fix;
use gitops_lint::registry as rules;
use gitops_lint::rule::FixAvailability;

pub fn fixtures_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/rules")
}

/// Every `(rule id, rule folder)` with fixtures.
pub fn rule_dirs() -> Vec<(String, PathBuf)> {
    let mut out = Vec::new();
    let root = fixtures_root();
    for group in read_dir_sorted(&root) {
        if !group.is_dir() {
            continue;
        }
        for rule in read_dir_sorted(&group) {
            if rule.is_dir() {
                let id = format!(
                    "{}/{}",
                    group.file_name().unwrap().to_string_lossy(),
                    rule.file_name().unwrap().to_string_lossy()
                );
                out.push((id, rule));
            }
        }
    }
    out
}

/// `FIXTURES=argocd/sync-policy,ci cargo test --test it fixtures` runs the cases of those
/// rules (or groups) alone.
fn selected_rules() -> Option<Vec<String>> {
    let only = std::env::var("FIXTURES").ok()?;
    Some(
        only.split(',')
            .map(|s| s.trim().trim_end_matches('/').to_string())
            .filter(|s| !s.is_empty())
            .collect(),
    )
    .filter(|v: &Vec<String>| !v.is_empty())
}

fn read_dir_sorted(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    v.sort();
    v
}

/// Files of a case, as `(relative path, text)`.
fn case_files(case: &Path) -> Vec<(String, String)> {
    if case.is_file() {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        return vec![(name, std::fs::read_to_string(case).unwrap())];
    }
    let mut out = Vec::new();
    let mut stack = vec![case.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for p in read_dir_sorted(&dir) {
            if p.is_dir() {
                stack.push(p);
            } else if p.file_name().is_some_and(|n| n != ".gitops-lint.yaml") {
                let rel = p
                    .strip_prefix(case)
                    .unwrap()
                    .to_string_lossy()
                    .replace('\\', "/");
                let bytes = std::fs::read(&p).unwrap();
                out.push((rel, String::from_utf8_lossy(&bytes).into_owned()));
            }
        }
    }
    out.sort();
    out
}

fn case_config(rule_dir: &Path, case: &Path) -> Config {
    let metas = rules::all_meta();
    let candidates = [
        case.join(".gitops-lint.yaml"),
        rule_dir.join(".gitops-lint.yaml"),
    ];
    for c in candidates {
        if c.is_file() {
            return config::load(&c, &metas).unwrap_or_else(|e| panic!("{e}"));
        }
    }
    Config::default()
}

pub fn run_case(files: &[(String, String)], config: Config) -> Report {
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    engine::check_texts(&refs, config)
}

/// `(file, 1-based line)` of every `# expect: <rule>` marker for `rule`.
fn markers(files: &[(String, String)], rule: &str) -> BTreeSet<(String, usize)> {
    let mut out = BTreeSet::new();
    let needle = format!("# expect: {rule}");
    for (path, text) in files {
        for (i, line) in text.lines().enumerate() {
            if line.contains(&needle) {
                out.insert((path.clone(), i + 1));
            }
        }
    }
    out
}

fn check_spans(report: &Report, case: &str) {
    for d in &report.diagnostics {
        let spans = std::iter::once(d.span).chain(d.labels.iter().map(|l| l.span));
        let fix_spans = d.fix.iter().flat_map(|f| f.edits.iter().map(|e| e.span));
        for s in spans.chain(fix_spans) {
            let text = &report.repo.source(s.file).text();
            assert!(
                s.start <= s.end && (s.end as usize) <= text.len(),
                "{case}: span {s:?} outside its file"
            );
            assert!(
                text.is_char_boundary(s.start as usize) && text.is_char_boundary(s.end as usize),
                "{case}: span {s:?} not on UTF-8 boundaries"
            );
        }
    }
}

/// Applies every fix of `rule` at least as safe as `threshold` until nothing changes; returns
/// every file as it ends up.
fn fix_until_stable(
    files: &[(String, String)],
    rule: &str,
    config: &Config,
    case: &str,
    threshold: fix::Applicability,
) -> BTreeMap<String, String> {
    let mut files = files.to_vec();
    for _ in 0..10 {
        let report = run_case(&files, config.clone());
        let mut changed = false;
        for f in &mut files {
            let Some(file) = report.repo.sources.by_path(&f.0) else {
                continue;
            };
            let fixes: Vec<&fix::Fix> = report
                .diagnostics
                .iter()
                .filter(|d| d.rule == rule)
                .filter_map(|d| d.fix.as_ref())
                .filter(|fx| fx.applicability >= threshold)
                .filter(|fx| fx.edits.iter().all(|e| e.span.file == file.id))
                .collect();
            if fixes.is_empty() {
                continue;
            }
            let (new, _) = fix::apply_fixes(file.text(), &fixes);
            if new != f.1 {
                f.1 = new;
                changed = true;
            }
        }
        if !changed {
            return files.into_iter().collect();
        }
    }
    panic!("{case}: fixes of {rule} did not converge in 10 passes");
}

/// What a case's findings of `rule` say, one line each, for `<case>.messages`.
fn messages(report: &Report, found: &[&gitops_lint::diagnostic::Diagnostic]) -> String {
    found
        .iter()
        .map(|d| {
            let f = report.repo.source(d.span.file);
            let lc = f.line_col(d.span.start as usize);
            format!(
                "{}:{}:{}: {}: {}\n",
                f.path,
                lc.line,
                lc.column,
                d.severity.as_str(),
                d.message
            )
        })
        .collect()
}

/// Compares `actual` with the golden file, or writes it under `BLESS=1`.
fn golden(label: &str, path: &Path, actual: &str) -> Result<(), String> {
    if crate::support::bless() {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).unwrap();
        }
        std::fs::write(path, actual).unwrap();
    }
    let expected = std::fs::read_to_string(path).map_err(|_| {
        format!(
            "{label}: missing {} (run with BLESS=1 and review it)",
            path.display()
        )
    })?;
    if expected != actual {
        return Err(format!(
            "{label}: output differs from {}:\n{}",
            path.display(),
            fix::unified_diff(&path.to_string_lossy(), &expected, actual)
        ));
    }
    Ok(())
}

/// What a case showed about fixes: whether the rule offered one.
#[derive(Default)]
struct CaseOutcome {
    offered_fix: bool,
}

fn check_case(rule: &str, rule_dir: &Path, case: &Path) -> Result<CaseOutcome, String> {
    let name = case.file_name().unwrap().to_string_lossy().to_string();
    if name.contains(".fixed")
        || name.starts_with('.')
        || (case.is_file() && !name.ends_with(".yaml") && !name.ends_with(".yml"))
    {
        return Ok(CaseOutcome::default());
    }
    let label = format!("{rule}/{name}");
    let good = name.starts_with("good");
    let bad = name.starts_with("bad");
    if !good && !bad {
        return Err(format!("{label}: case names start with `good` or `bad`"));
    }
    let diff_rule = rule.starts_with("diff/");
    if diff_rule && !(case.join("base").is_dir() && case.join("head").is_dir()) {
        return Err(format!(
            "{label}: a `diff/` case is a folder holding `base/` and `head/` repositories"
        ));
    }
    // A `diff/` case's markers are in its head revision, where its findings are.
    let files = case_files(&if diff_rule {
        case.join("head")
    } else {
        case.to_path_buf()
    });
    let config = case_config(rule_dir, case);
    // Folder cases go through the whole pipeline (walk, read, parse); file cases are in memory.
    let report = if diff_rule {
        let own = case.join(".gitops-lint.yaml");
        let config = Some(if own.is_file() {
            own
        } else {
            rule_dir.join(".gitops-lint.yaml")
        })
        .filter(|p| p.is_file());
        let at = |side: &str| engine::Options {
            paths: vec![case.join(side)],
            root: Some(case.join(side)),
            config: config.clone(),
            ..engine::Options::default()
        };
        engine::diff::run(Some(&at("base")), &at("head"), (&[], &[]), false)
            .map_err(|e| format!("{label}: {e}"))?
            .report
    } else if case.is_dir() {
        let own = case.join(".gitops-lint.yaml");
        let opts = engine::Options {
            paths: vec![case.to_path_buf()],
            config: if own.is_file() {
                None
            } else {
                Some(rule_dir.join(".gitops-lint.yaml")).filter(|p| p.is_file())
            },
            ..engine::Options::default()
        };
        engine::run(&opts).map_err(|e| format!("{label}: {e}"))?
    } else {
        run_case(&files, config.clone())
    };
    check_spans(&report, &label);
    let found: Vec<_> = report
        .diagnostics
        .iter()
        .filter(|d| d.rule == rule)
        .collect();
    let describe = |ds: &[&gitops_lint::diagnostic::Diagnostic]| {
        ds.iter()
            .map(|d| {
                let f = report.repo.source(d.span.file);
                let lc = f.line_col(d.span.start as usize);
                format!("  {}:{}:{}: {}", f.path, lc.line, lc.column, d.message)
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    if good && !found.is_empty() {
        return Err(format!(
            "{label}: a good case must give no `{rule}` finding, got:\n{}",
            describe(&found)
        ));
    }
    if bad && found.is_empty() {
        return Err(format!(
            "{label}: a bad case must give at least one `{rule}` finding"
        ));
    }
    let marks = markers(&files, rule);
    if !marks.is_empty() {
        let mut hit = BTreeSet::new();
        for d in &found {
            let f = report.repo.source(d.span.file);
            let key = (f.path.clone(), f.line_col(d.span.start as usize).line);
            if !marks.contains(&key) {
                return Err(format!(
                    "{label}: finding on an unmarked line:\n{}",
                    describe(&[d])
                ));
            }
            hit.insert(key);
        }
        let missed: Vec<_> = marks.difference(&hit).collect();
        if !missed.is_empty() {
            return Err(format!(
                "{label}: markers without a finding: {missed:?}\nfindings:\n{}",
                describe(&found)
            ));
        }
    }
    let messages_golden = case.with_file_name(format!("{}.messages", stem(&name)));
    if messages_golden.is_file() {
        golden(&label, &messages_golden, &messages(&report, &found))?;
    }
    let offered_fix = found.iter().any(|d| d.fix.is_some());
    // Fix expectations for bad cases: `--fix`, then `--fix --unsafe-fixes`.
    if bad {
        use fix::Applicability::{Safe, Unsafe};
        for (threshold, suffix) in [(Safe, "fixed"), (Unsafe, "unsafe.fixed")] {
            let golden_path = if case.is_file() {
                case.with_file_name(format!("{}.{suffix}.yaml", stem(&name)))
            } else {
                case.with_file_name(format!("{name}.{suffix}"))
            };
            let has_kind = found
                .iter()
                .any(|d| d.fix.as_ref().is_some_and(|f| f.applicability == threshold));
            if !has_kind {
                if golden_path.exists() {
                    return Err(format!(
                        "{label}: {} is stale: no {threshold:?} fix left; delete it",
                        golden_path.display()
                    ));
                }
                continue;
            }
            let fixed = fix_until_stable(&files, rule, &config, &label, threshold);
            if case.is_file() {
                golden(&label, &golden_path, &fixed[&files[0].0])?;
            } else {
                for (path, text) in &files {
                    if fixed[path] != *text {
                        golden(&label, &golden_path.join(path), &fixed[path])?;
                    }
                }
            }
            let fixed_files: Vec<(String, String)> = fixed.into_iter().collect();
            let again = run_case(&fixed_files, config.clone());
            if let Some(d) = again
                .diagnostics
                .iter()
                .find(|d| d.rule.starts_with("yaml/"))
            {
                return Err(format!(
                    "{label}: a fixed file no longer parses: {}",
                    d.message
                ));
            }
            if again.diagnostics.iter().any(|d| {
                d.rule == rule && d.fix.as_ref().is_some_and(|f| f.applicability >= threshold)
            }) {
                return Err(format!(
                    "{label}: the fixed files still have a `{rule}` finding with a {threshold:?} fix"
                ));
            }
        }
    }
    Ok(CaseOutcome { offered_fix })
}

/// A case's name without `.yaml`/`.yml`.
fn stem(name: &str) -> &str {
    name.strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
        .unwrap_or(name)
}

#[test]
fn every_fixture_case() {
    let mut failures = Vec::new();
    let mut cases = 0;
    let only = selected_rules();
    for (rule, dir) in rule_dirs() {
        if only.as_ref().is_some_and(|o| {
            !o.iter()
                .any(|p| rule == *p || rule.starts_with(&format!("{p}/")))
        }) {
            continue;
        }
        assert!(
            rules::find(&rule).is_some(),
            "testdata/rules/{rule}: no rule with this id"
        );
        let mut offered_fix = false;
        let mut all_ran = true;
        for case in read_dir_sorted(&dir) {
            cases += 1;
            match check_case(&rule, &dir, &case) {
                Ok(outcome) => offered_fix |= outcome.offered_fix,
                Err(e) => {
                    all_ran = false;
                    failures.push(e);
                }
            }
        }
        let declared = rules::find(&rule).map(|m| m.fix).filter(|_| all_ran);
        match declared {
            Some(FixAvailability::None) if offered_fix => failures.push(format!(
                "{rule}: declared not fixable (`fix: FixAvailability::None`) but offers a fix"
            )),
            Some(FixAvailability::Sometimes | FixAvailability::Always) if !offered_fix => {
                failures.push(format!(
                    "{rule}: declared fixable but no fixture case offers a fix: add a bad case that does"
                ));
            }
            _ => {}
        }
    }
    assert!(cases > 0, "no fixture cases found");
    assert!(
        failures.is_empty(),
        "{} fixture failure(s):\n\n{}",
        failures.len(),
        failures.join("\n\n")
    );
}
