//! Dispatch: every enabled rule, Rust and Rego, is offered each document (in parallel), then
//! runs once on the whole repository; [`super::finish`] then stamps, suppresses and sorts
//! what they found.

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use super::Note;
use super::cache::{self, ParseCache};
use super::scope::Scope;
use super::timer::{Timer, add_elapsed};
use crate::config::{Config, Level};
use crate::diagnostic::{Finding, Label};
use crate::model::deployed::DeployedDoc;
use crate::model::{DocKind, Document, Model, Repository};
use crate::registry;
use crate::rule::{Checked, Context, Emitted, Failure, Rule};
use crate::source::{FileId, Span};

/// Frees `value` on another thread: the run's facts and Rego engines are millions of small
/// allocations, and the report need not wait for them (a process that exits first does not
/// free them at all).
fn drop_in_background<T: Send + 'static>(value: T) {
    // A thread that cannot start drops its closure, and so the value, here.
    let _ = std::thread::Builder::new()
        .name("gitops-lint-drop".into())
        .spawn(move || drop(value));
}

/// What the rules of a run found: their findings, run-level notes, and the files related to
/// the reported scope (see [`Scope::related_files`]).
pub(super) struct Found {
    pub(super) raw: Vec<Emitted>,
    pub(super) notes: Vec<Note>,
    pub(super) related: HashSet<FileId>,
}

pub(super) fn run_rules(
    repo: &Repository,
    config: &Config,
    retention: &crate::repo::retention::Retention,
    user_policies: Option<&crate::policy::run::UserPolicies>,
    scope: Option<&Scope>,
    memo: Option<(&ParseCache, cache::Reuse)>,
    timer: &mut Timer,
) -> Found {
    let enabled = |id: &str| config.level(id) != Some(Level::Off);
    let options = rule_options(config);
    let mut model = Model::new(repo, config.settings());
    // A run whose readers do not read every values document's values keeps, after
    // resolution, only the effective values a later step reads.
    if !retention.keeps_all_values() {
        model = model.dropping_unread_values();
    }
    if let Some((cache, _)) = &memo {
        model = model.with_render_cache(cache.renders.clone());
    }
    let cx = Context::new(&model, &options);
    let policy_rules = crate::policy::run::rules(
        &enabled,
        &options,
        user_policies,
        memo.as_ref().map(|(cache, _)| &cache.repo_results),
    );
    let mut rules: Vec<&dyn Rule> = registry::builtin()
        .filter(|r| enabled(r.meta().id))
        .collect();
    rules.extend(policy_rules.iter().map(AsRef::as_ref));
    // The rules the engine reports itself (YAML syntax, unreadable files...) read no fact: a
    // run of only those (`--select yaml/syntax`) resolves no Application and renders no chart.
    let reads_model = rules.iter().any(|r| {
        !crate::rules::internal::RULES
            .iter()
            .any(|i| i.meta().id == r.meta().id)
    });
    if timer.enabled {
        // Built here rather than on first use, so that they have their own line. A panic
        // leaves them unbuilt: the first rule that reads them reports it, as without timing.
        if reads_model {
            let _ = catch_unwind(AssertUnwindSafe(|| {
                model.argocd();
                model.k8s();
            }));
        }
        timer.mark("model");
    }
    let timing = timer.enabled;
    let spent: Vec<AtomicU64> = rules.iter().map(|_| AtomicU64::new(0)).collect();
    let memo_keys: Vec<Option<String>> = match memo {
        // The rule's configured options are part of its key.
        Some(_) => rules
            .iter()
            .map(|r| {
                let options = serde_json::Value::Object(options.json_of(r.meta().id).clone());
                r.document_memo_key(&cx).map(|k| format!("{k} {options}"))
            })
            .collect(),
        None => vec![None; rules.len()],
    };
    let mut memo_key = memo_keys
        .iter()
        .flatten()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .join("\n");
    if !memo_key.is_empty() {
        // Options set by a configuration section are in the typed options only.
        memo_key.push_str(&format!("\n{:?}", options.typed));
    }
    let kept: &[Option<cache::FileMemo>] = match &memo {
        Some((_, reuse)) if reuse.key == memo_key => &reuse.files,
        _ => &[],
    };
    let pass = DocumentPass {
        repo,
        cx: &cx,
        rules: &rules,
        memo_keys: &memo_keys,
        kept,
        spent: &spent,
        timing,
        memoizing: memo_keys.iter().any(Option::is_some),
    };
    // The Argo CD model, which most repository rules read and few document rules do, is
    // built on one thread while the documents are checked on the others. Its construction
    // runs no parallel work, so this thread never takes a document task that would wait
    // for it (a re-entrant initialisation).
    let passed = if timing || !reads_model {
        pass.run()
    } else {
        // A panic leaves the model unbuilt: the first rule that reads it reports it.
        let build_model = || {
            let _ = catch_unwind(AssertUnwindSafe(|| {
                model.argocd();
            }));
        };
        rayon::join(build_model, || pass.run()).1
    };
    let Passed {
        mut raw,
        fresh,
        mut failed,
    } = passed;
    // The model is built by now: the documents the deployers make go through the same rules.
    // A panic in the model's builder leaves it unbuilt: the first repository rule that reads
    // it reports it.
    if reads_model
        && let Ok(deployed) =
            catch_unwind(AssertUnwindSafe(|| pass.deployed(&model.deployed().docs)))
    {
        raw.extend(deployed.raw);
        failed.extend(deployed.failed);
    }
    // The objects overlays build differently, built again for the documents a rule judges.
    let varied: Vec<usize> = repo
        .object_variants()
        .par_iter()
        .map(|(doc, _)| *doc)
        .filter(|&doc| rules.iter().any(|r| r.applies(&repo.docs[doc], &cx)))
        .collect();
    if !varied.is_empty() {
        if let Ok(deployed) = catch_unwind(AssertUnwindSafe(|| {
            pass.deployed(&crate::model::deployed::object_variants(repo, &varied).docs)
        })) {
            raw.extend(deployed.raw);
            failed.extend(deployed.failed);
        }
    }
    // The objects charts render, only for the rules that judge objects (rendering is the
    // costly part, and a run of Argo CD rules alone does not need it).
    if rules.iter().any(|r| r.may_apply_to(DocKind::K8sObject)) {
        if let Ok(deployed) = catch_unwind(AssertUnwindSafe(|| {
            pass.deployed(&model.deployed_objects().docs)
        })) {
            raw.extend(deployed.raw);
            failed.extend(deployed.failed);
        }
    }
    timer.mark("rules: documents");
    if let Some((cache, reuse)) = &memo {
        // A failure (a time-out above all) is not a result to keep.
        let reusable = failed.is_empty()
            && rules
                .iter()
                .zip(&memo_keys)
                .all(|(r, k)| k.is_none() || r.document_findings_reusable());
        if pass.memoizing && reusable {
            cache.keep_findings(reuse, memo_key, kept_findings(repo, kept, fresh));
        }
    }
    raw.extend(report_failures(&rules, failed, &cx));
    // After the document pass: rules of the whole repository.
    raw.extend(
        rules
            .par_iter()
            .zip(&spent)
            .flat_map_iter(|(rule, spent)| {
                let started = timing.then(Instant::now);
                let found =
                    match catch_unwind(AssertUnwindSafe(|| rule.check_project_emitting(&cx))) {
                        Ok(found) => found,
                        Err(p) => vec![panic_finding(rule.meta().id, Span::default(), &p)],
                    };
                add_elapsed(spent, started);
                found
            })
            .collect::<Vec<Emitted>>(),
    );
    let notes: Vec<Note> = rules
        .iter()
        .flat_map(|r| {
            let rule = r.meta().id;
            r.notes(&cx)
                .into_iter()
                .map(move |message| Note { rule, message })
        })
        .collect();
    if timing {
        timer.rule_times = rule_times(&rules, &spent);
    }
    let related = scope.map(|s| s.related_files(&model)).unwrap_or_default();
    drop_in_background((model.into_facts(), policy_rules));
    Found {
        raw,
        notes,
        related,
    }
}

/// The rules' configured options, with the built-in rules the configuration leaves on (a rule
/// leaves a problem that another reports better to it only when that one runs).
pub(super) fn rule_options(config: &Config) -> crate::rule::RuleOptions {
    let mut options = config.rule_options();
    options.enabled = Some(
        registry::builtin()
            .map(|r| r.meta().id)
            .filter(|id| config.level(id) != Some(Level::Off))
            .collect(),
    );
    options
}

/// Each rule's time in milliseconds, slowest first. User packages share one id: their times
/// are summed.
fn rule_times(rules: &[&dyn Rule], spent: &[AtomicU64]) -> Vec<(&'static str, f64)> {
    let mut by_id: std::collections::BTreeMap<&'static str, f64> = Default::default();
    for (r, t) in rules.iter().zip(spent) {
        *by_id.entry(r.meta().id).or_default() += t.load(Ordering::Relaxed) as f64 / 1e6;
    }
    let mut times: Vec<(&'static str, f64)> = by_id.into_iter().collect();
    times.sort_by(|a, b| b.1.total_cmp(&a.1));
    times
}

/// The document pass: each document offered to each rule whose `applies` accepts it, with the
/// findings of the rules that have a memo key reused from the last run where the document is
/// unchanged (the language server).
struct DocumentPass<'a> {
    repo: &'a Repository,
    cx: &'a Context<'a>,
    rules: &'a [&'a dyn Rule],
    memo_keys: &'a [Option<String>],
    kept: &'a [Option<cache::FileMemo>],
    spent: &'a [AtomicU64],
    timing: bool,
    memoizing: bool,
}

impl DocumentPass<'_> {
    /// Every document's findings and failures (by rule index), and (when memoizing) per
    /// document those of the rules with a memo key, to keep for the next run.
    fn run(&self) -> Passed {
        let per_doc: Vec<DocChecked> = self
            .repo
            .docs
            .par_iter()
            .enumerate()
            .map(|(i, d)| {
                // Judged as each overlay builds it (the deployed pass), not as written.
                if self.repo.is_varied(i) {
                    return DocChecked::default();
                }
                self.document(d, !self.repo.transformed.contains(&i))
            })
            .collect();
        let mut passed = Passed::default();
        if self.memoizing {
            passed.fresh.reserve(per_doc.len());
        }
        for checked in per_doc {
            if self.memoizing {
                passed.fresh.push(checked.fresh);
            }
            passed.raw.extend(checked.found);
            passed.failed.extend(checked.failed);
        }
        passed
    }

    /// The deployed documents no file holds (see [`crate::model::deployed`]), offered to the
    /// same rules. Their findings land where the values came from, labelled with where the
    /// document was made, and carry no fix: the text there is not the document.
    fn deployed(&self, deployed: &[DeployedDoc]) -> Passed {
        let per_doc: Vec<DocChecked> = deployed
            .par_iter()
            .map(|d| {
                let mut checked = self.document(&d.doc, false);
                for emitted in &mut checked.found {
                    emitted.finding.fix = None;
                    emitted.finding.labels.push(Label {
                        span: d.origin_span,
                        message: d.origin.clone(),
                    });
                }
                checked
            })
            .collect();
        let mut passed = Passed::default();
        for checked in per_doc {
            passed.raw.extend(checked.found);
            passed.failed.extend(checked.failed);
        }
        passed
    }

    /// A document's findings and failures, and those of the rules with a memo key when
    /// computed here for a document `as_parsed` (to keep for the next run; reused only then).
    fn document(&self, doc: &Document, as_parsed: bool) -> DocChecked {
        let cx = self.cx;
        let check = |rule: &&dyn Rule| {
            if !rule.applies(doc, cx) {
                return Checked::default();
            }
            match catch_unwind(AssertUnwindSafe(|| rule.check_emitting(doc, cx))) {
                Ok(checked) => checked,
                Err(p) => vec![panic_finding(rule.meta().id, doc.anchor_span(), &p)].into(),
            }
        };
        let reused = self
            .kept
            .get(doc.file.0 as usize)
            .and_then(Option::as_ref)
            .filter(|_| as_parsed)
            .and_then(|m| m.iter().find(|(index, _)| *index == doc.index))
            .map(|(_, found)| found);
        let mut out = DocChecked {
            fresh: (self.memoizing && as_parsed && reused.is_none()).then(Vec::new),
            ..DocChecked::default()
        };
        let mut memoized = 0;
        for (index, ((rule, key), spent)) in self
            .rules
            .iter()
            .zip(self.memo_keys)
            .zip(self.spent)
            .enumerate()
        {
            let started = self.timing.then(Instant::now);
            if key.is_none() {
                let checked = check(rule);
                out.found.extend(checked.found);
                out.failed
                    .extend(checked.failed.into_iter().map(|f| (index, f)));
                add_elapsed(spent, started);
                continue;
            }
            match reused {
                Some(r) => out
                    .found
                    .extend(r.get(memoized).into_iter().flatten().cloned()),
                None => {
                    let checked = check(rule);
                    if let Some(fresh) = &mut out.fresh {
                        fresh.push(checked.found.clone());
                    }
                    out.found.extend(checked.found);
                    out.failed
                        .extend(checked.failed.into_iter().map(|f| (index, f)));
                }
            }
            add_elapsed(spent, started);
            memoized += 1;
        }
        out
    }
}

/// What the document pass gives.
#[derive(Default)]
struct Passed {
    raw: Vec<Emitted>,
    /// Per document, when memoizing: the findings of the rules with a memo key, computed here.
    fresh: Vec<Option<cache::DocFindings>>,
    /// The checks that could not be evaluated, by rule index.
    failed: Vec<(usize, Failure)>,
}

/// What the document pass gives for one document.
#[derive(Default)]
struct DocChecked {
    found: Vec<Emitted>,
    fresh: Option<cache::DocFindings>,
    failed: Vec<(usize, Failure)>,
}

/// Each rule's failures of the document pass, reported by the rule once.
fn report_failures(
    rules: &[&dyn Rule],
    failed: Vec<(usize, Failure)>,
    cx: &Context<'_>,
) -> Vec<Emitted> {
    let mut by_rule: std::collections::BTreeMap<usize, Vec<Failure>> = Default::default();
    for (index, failure) in failed {
        by_rule.entry(index).or_default().push(failure);
    }
    by_rule
        .into_iter()
        .flat_map(|(index, failures)| {
            let rule = rules[index];
            catch_unwind(AssertUnwindSafe(|| rule.report_failures(failures, cx)))
                .unwrap_or_else(|p| vec![panic_finding(rule.meta().id, Span::default(), &p)])
        })
        .collect()
}

/// The findings to keep for the next run, by file: those kept before (for files taken from the
/// cache) and those computed for documents without them.
fn kept_findings(
    repo: &Repository,
    kept: &[Option<cache::FileMemo>],
    fresh_per_doc: Vec<Option<cache::DocFindings>>,
) -> std::collections::HashMap<FileId, cache::FileMemo> {
    let mut fresh: std::collections::HashMap<FileId, Vec<(usize, cache::DocFindings)>> =
        std::collections::HashMap::new();
    for (doc, found) in repo.docs.iter().zip(fresh_per_doc) {
        if let Some(found) = found {
            fresh.entry(doc.file).or_default().push((doc.index, found));
        }
    }
    let mut out = std::collections::HashMap::new();
    for (i, memo) in kept.iter().enumerate() {
        let Some(memo) = memo else { continue };
        let id = FileId(u32::try_from(i).unwrap_or(u32::MAX));
        match fresh.remove(&id) {
            None => {
                out.insert(id, memo.clone());
            }
            Some(mut more) => {
                more.extend(memo.iter().cloned());
                more.sort_by_key(|(index, _)| *index);
                out.insert(id, std::sync::Arc::new(more));
            }
        }
    }
    for (id, found) in fresh {
        out.insert(id, std::sync::Arc::new(found));
    }
    out
}

fn panic_finding(
    rule: &'static str,
    span: Span,
    payload: &Box<dyn std::any::Any + Send>,
) -> Emitted {
    let msg = payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    Emitted {
        rule,
        finding: Finding::new(
            format!("internal error: rule `{rule}` crashed here: {msg}"),
            span,
        )
        .with_help("This is a bug in gitops-lint; please report it with this file."),
    }
}
