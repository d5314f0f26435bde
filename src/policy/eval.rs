//! Evaluating one package's rules on an engine's current input: exceptions, results read as
//! findings-to-be ([`Hit`]), failures, and the rules skipped after a time-out.

use std::collections::HashSet;
use std::sync::Mutex;

use regorus::Engine;

use super::location;
use super::{Package, PolicySet, exception_name};
use crate::yaml::path::Step;

/// One result of a rule.
#[derive(Clone, Debug)]
pub(super) struct Hit {
    pub(super) rule: String,
    pub(super) msg: String,
    pub(super) id: Option<String>,
    /// The id a `# METADATA` annotation gives the rule or definition it came from.
    pub(super) meta_id: Option<String>,
    pub(super) path: Option<Vec<Step>>,
    pub(super) file: Option<String>,
    pub(super) document: Option<usize>,
    pub(super) loc_line: Option<usize>,
    pub(super) help: Option<String>,
}

impl Hit {
    /// A result that is only a message (a string, or a boolean `deny`).
    pub(super) fn message(rule: &str, msg: String) -> Hit {
        Hit {
            rule: rule.to_string(),
            msg,
            id: None,
            meta_id: None,
            path: None,
            file: None,
            document: None,
            loc_line: None,
            help: None,
        }
    }
}

/// A rule that failed to evaluate.
pub(super) struct EvalFailure {
    pub(super) rule: String,
    pub(super) message: String,
}

/// Rules that exceeded the time limit, skipped for the rest of the run.
#[derive(Default)]
pub(super) struct Disabled(Mutex<HashSet<(usize, String, String)>>);

impl Disabled {
    pub(super) fn contains(&self, set: usize, pkg: &str, rule: &str) -> bool {
        self.0
            .lock()
            .map(|s| s.contains(&(set, pkg.to_string(), rule.to_string())))
            .unwrap_or(false)
    }
    /// Whether no rule was skipped.
    pub(super) fn is_empty(&self) -> bool {
        self.0.lock().is_ok_and(|s| s.is_empty())
    }
    pub(super) fn insert(&self, set: usize, pkg: &str, rule: &str) {
        if let Ok(mut s) = self.0.lock() {
            s.insert((set, pkg.to_string(), rule.to_string()));
        }
    }
}

/// Evaluates the check rules of one package on the engine's current input; with `watched`
/// (the input's name and the time limit: the user's policies), each evaluation is under the
/// [`watchdog`](super::watchdog).
pub(super) fn eval_package(
    engine: &mut Engine,
    set_id: usize,
    pkg: &Package,
    disabled: &Disabled,
    watched: Option<(&str, std::time::Duration)>,
) -> (Vec<Hit>, Vec<EvalFailure>) {
    eval_package_with(set_id, pkg, disabled, |rule| {
        let _watch = watched.map(|(subject, limit)| {
            let what = format!(
                "policy rule `data.{}.{rule}`{} on {subject}",
                pkg.name,
                site(pkg, rule)
            );
            super::watchdog::watch(what, limit)
        });
        PolicySet::eval(engine, &pkg.name, rule)
    })
}

/// [`eval_package`] on the pack's virtual machine (`policy::vm`).
pub(super) fn eval_package_on(
    vm: &mut regorus::rvm::vm::RegoVM,
    pkg: &Package,
    disabled: &Disabled,
) -> (Vec<Hit>, Vec<EvalFailure>) {
    eval_package_with(0, pkg, disabled, |rule| {
        super::vm::eval(vm, &pkg.name, rule)
    })
}

/// Evaluates a package's `exception` and result rules with `eval` (`Ok(None)`: undefined).
pub(super) fn eval_package_with(
    set_id: usize,
    pkg: &Package,
    disabled: &Disabled,
    mut eval: impl FnMut(&str) -> Result<Option<serde_json::Value>, String>,
) -> (Vec<Hit>, Vec<EvalFailure>) {
    let mut hits = Vec::new();
    let mut failures = Vec::new();
    let exceptions: Vec<String> = if pkg.has_exception {
        match eval("exception") {
            Ok(Some(v)) => exception_names(&v),
            Ok(None) => Vec::new(),
            Err(e) => {
                failures.push(EvalFailure {
                    rule: "exception".into(),
                    message: e,
                });
                Vec::new()
            }
        }
    } else {
        Vec::new()
    };
    for rule in &pkg.rules {
        if exceptions.iter().any(|e| e == exception_name(rule)) {
            continue;
        }
        // Definitions with an id of their own first: their results are theirs, and are not
        // reported again as the whole rule's.
        let mut claimed = Vec::new();
        for d in pkg.ids.definitions.iter().filter(|d| &d.rule == rule) {
            if let Some(v) = eval_rule(
                &d.query,
                rule,
                set_id,
                pkg,
                disabled,
                &mut eval,
                &mut failures,
            ) {
                let items = result_items(&v);
                collect_hits(rule, Some(&d.id), &v, &claimed, &mut hits, &mut failures);
                claimed.extend(items);
            }
        }
        if let Some(v) = eval_rule(rule, rule, set_id, pkg, disabled, &mut eval, &mut failures) {
            let id = pkg.ids.whole.get(rule).map(String::as_str);
            collect_hits(rule, id, &v, &claimed, &mut hits, &mut failures);
        }
    }
    (hits, failures)
}

/// Evaluates `query` (rule `rule` or one of its definitions); a failure is `rule`'s.
fn eval_rule(
    query: &str,
    rule: &str,
    set_id: usize,
    pkg: &Package,
    disabled: &Disabled,
    eval: &mut impl FnMut(&str) -> Result<Option<serde_json::Value>, String>,
    failures: &mut Vec<EvalFailure>,
) -> Option<serde_json::Value> {
    if disabled.contains(set_id, &pkg.name, query) {
        return None;
    }
    match eval(query) {
        Ok(v) => v,
        Err(e) => {
            let timed_out = e.contains("time limit") || e.contains("TimeLimit");
            if timed_out {
                disabled.insert(set_id, &pkg.name, query);
            }
            failures.push(EvalFailure {
                rule: rule.to_string(),
                message: if timed_out {
                    "exceeded the evaluation time limit; it is skipped for the rest of the run"
                        .to_string()
                } else {
                    e
                },
            });
            None
        }
    }
}

/// A rule's results: a set's items, or the value itself.
fn result_items(v: &serde_json::Value) -> Vec<serde_json::Value> {
    match v {
        serde_json::Value::Array(a) => a.clone(),
        other => vec![other.clone()],
    }
}

/// `exception` is a set of arrays of rule names (conftest: `exception contains rules if …`).
pub(super) fn exception_names(v: &serde_json::Value) -> Vec<String> {
    let mut out = Vec::new();
    for item in v.as_array().into_iter().flatten() {
        match item {
            serde_json::Value::Array(names) => {
                out.extend(names.iter().filter_map(|n| n.as_str().map(str::to_string)));
            }
            serde_json::Value::String(s) => out.push(s.clone()),
            _ => {}
        }
    }
    out
}

/// The hits of rule `rule`'s value `v`, less the items in `claimed`, with the `# METADATA` id
/// `meta_id`.
pub(super) fn collect_hits(
    rule: &str,
    meta_id: Option<&str>,
    v: &serde_json::Value,
    claimed: &[serde_json::Value],
    hits: &mut Vec<Hit>,
    failures: &mut Vec<EvalFailure>,
) {
    let from = hits.len();
    collect_items(rule, v, claimed, hits, failures);
    for h in &mut hits[from..] {
        h.meta_id = meta_id.map(str::to_string);
    }
}

fn collect_items(
    rule: &str,
    v: &serde_json::Value,
    claimed: &[serde_json::Value],
    hits: &mut Vec<Hit>,
    failures: &mut Vec<EvalFailure>,
) {
    let items: Vec<&serde_json::Value> = match v {
        serde_json::Value::Array(a) => a.iter().filter(|i| !claimed.contains(i)).collect(),
        // A boolean `deny` (`deny if …`) has no message.
        serde_json::Value::Bool(true) => {
            if !claimed.contains(v) {
                hits.push(Hit::message(rule, format!("`{rule}` is true")));
            }
            return;
        }
        serde_json::Value::Bool(false) => return,
        other if claimed.contains(other) => return,
        other => vec![other],
    };
    for item in items {
        match item {
            serde_json::Value::String(s) => hits.push(Hit::message(rule, s.clone())),
            serde_json::Value::Object(o) => {
                let Some(msg) = o.get("msg").and_then(|m| m.as_str()) else {
                    failures.push(EvalFailure {
                        rule: rule.to_string(),
                        message: "a result object has no string `msg`".into(),
                    });
                    continue;
                };
                let loc = o.get("_loc");
                hits.push(Hit {
                    rule: rule.to_string(),
                    msg: msg.to_string(),
                    id: o.get("id").and_then(|v| v.as_str()).map(str::to_string),
                    meta_id: None,
                    path: o.get("path").and_then(location::steps_of_json),
                    file: o
                        .get("file")
                        .or_else(|| loc.and_then(|l| l.get("file")))
                        .and_then(|v| v.as_str())
                        .map(str::to_string),
                    document: o
                        .get("document")
                        .and_then(serde_json::Value::as_u64)
                        .and_then(|d| usize::try_from(d).ok()),
                    loc_line: loc
                        .and_then(|l| l.get("line"))
                        .and_then(serde_json::Value::as_u64)
                        .and_then(|d| usize::try_from(d).ok()),
                    help: o.get("help").and_then(|v| v.as_str()).map(str::to_string),
                });
            }
            _ => failures.push(EvalFailure {
                rule: rule.to_string(),
                message: format!("a result is neither a string nor an object with `msg`: {item}"),
            }),
        }
    }
}

/// Where a policy rule is written, for messages: ` (file.rego:LINE)`.
pub(super) fn site(pkg: &Package, rule: &str) -> String {
    pkg.sites
        .get(rule)
        .map(|s| format!(" ({}:{})", s.file, s.line))
        .unwrap_or_default()
}
