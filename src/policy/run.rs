//! Evaluating the shipped pack and user policies on a project: the policy step of the
//! pipeline. Results become findings with exact locations.

use std::collections::{BTreeMap, HashSet};
use std::sync::{Arc, Mutex};

use globset::{Glob, GlobSet, GlobSetBuilder};
use rayon::prelude::*;
use regorus::{Engine, Value};

use super::location::{self, Current};
use super::pack::{self, PackRule, Scope};
use super::{Package, PolicySet, data, exception_name, is_warning_rule};
use crate::config::{Config, Level};
use crate::diagnostic::{Finding, Severity};
use crate::model::{DocKind, Document};
use crate::project::Project;
use crate::source::{FileId, LineIndex, Span};
use crate::yaml::path::Step;

/// The id of evaluation failures.
pub const EVALUATION_ERROR: &str = "policy/evaluation-error";

/// A team's own policies and how conftest would run them.
#[derive(Clone)]
pub struct UserPolicies {
    pub set: PolicySet,
    /// `--namespace` patterns (default `main`).
    pub namespaces: Vec<String>,
    pub all_namespaces: bool,
    /// `--combine`: one input, the array of `{path, contents}` of every document.
    pub combine: bool,
}

/// Packages under `gitops.repo` are evaluated once, on the repository model.
#[must_use]
pub fn is_repo_package(name: &str) -> bool {
    name == "gitops.repo" || name.starts_with("gitops.repo.")
}

/// One result of a rule.
#[derive(Debug)]
struct Hit {
    rule: String,
    msg: String,
    id: Option<String>,
    path: Option<Vec<Step>>,
    file: Option<String>,
    document: Option<usize>,
    loc_line: Option<usize>,
    help: Option<String>,
}

impl Hit {
    /// A result that is only a message (a string, or a boolean `deny`).
    fn message(rule: &str, msg: String) -> Hit {
        Hit {
            rule: rule.to_string(),
            msg,
            id: None,
            path: None,
            file: None,
            document: None,
            loc_line: None,
            help: None,
        }
    }
}

/// A rule that failed to evaluate.
struct EvalFailure {
    rule: String,
    message: String,
}

type Out = Vec<(&'static str, Finding)>;

/// Rules that exceeded the time limit, skipped for the rest of the run.
#[derive(Default)]
struct Disabled(Mutex<HashSet<(usize, String, String)>>);

impl Disabled {
    fn contains(&self, set: usize, pkg: &str, rule: &str) -> bool {
        self.0
            .lock()
            .map(|s| s.contains(&(set, pkg.to_string(), rule.to_string())))
            .unwrap_or(false)
    }
    fn insert(&self, set: usize, pkg: &str, rule: &str) {
        if let Ok(mut s) = self.0.lock() {
            s.insert((set, pkg.to_string(), rule.to_string()));
        }
    }
}

/// Evaluates the check rules of one package on the engine's current input.
fn eval_package(
    engine: &mut Engine,
    set_id: usize,
    pkg: &Package,
    disabled: &Disabled,
) -> (Vec<Hit>, Vec<EvalFailure>) {
    let mut hits = Vec::new();
    let mut failures = Vec::new();
    let exceptions: Vec<String> = if pkg.has_exception {
        match PolicySet::eval(engine, &pkg.name, "exception") {
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
        if disabled.contains(set_id, &pkg.name, rule) {
            continue;
        }
        match PolicySet::eval(engine, &pkg.name, rule) {
            Ok(Some(v)) => collect_hits(rule, &v, &mut hits, &mut failures),
            Ok(None) => {}
            Err(e) => {
                let timed_out = e.contains("time limit") || e.contains("TimeLimit");
                if timed_out {
                    disabled.insert(set_id, &pkg.name, rule);
                }
                failures.push(EvalFailure {
                    rule: rule.clone(),
                    message: if timed_out {
                        "exceeded the evaluation time limit; it is skipped for the rest of the run"
                            .to_string()
                    } else {
                        e
                    },
                });
            }
        }
    }
    (hits, failures)
}

/// `exception` is a set of arrays of rule names (conftest: `exception contains rules if …`).
fn exception_names(v: &serde_json::Value) -> Vec<String> {
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

fn collect_hits(
    rule: &str,
    v: &serde_json::Value,
    hits: &mut Vec<Hit>,
    failures: &mut Vec<EvalFailure>,
) {
    let items: Vec<&serde_json::Value> = match v {
        serde_json::Value::Array(a) => a.iter().collect(),
        // A boolean `deny` (`deny if …`) has no message.
        serde_json::Value::Bool(true) => {
            hits.push(Hit::message(rule, format!("`{rule}` is true")));
            return;
        }
        serde_json::Value::Bool(false) => return,
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

struct Env<'a> {
    project: &'a Project,
    docs_by_path: BTreeMap<&'a str, FileId>,
}

impl<'a> Env<'a> {
    fn new(project: &'a Project) -> Self {
        let docs_by_path = project
            .sources
            .files()
            .iter()
            .map(|f| (f.path.as_str(), f.id))
            .collect();
        Env {
            project,
            docs_by_path,
        }
    }

    /// The document a hit is about: its `file`/`document`, else `default`.
    fn target(&self, hit: &Hit, default: Option<&'a Document>) -> Option<&'a Document> {
        if let Some(file) = &hit.file {
            let rel = file.trim_start_matches("./");
            if let Some(id) = self.docs_by_path.get(rel) {
                let docs = self.project.file_docs(*id);
                let idx = hit.document.unwrap_or(0);
                return docs.iter().find(|d| d.index == idx).or(docs.first());
            }
        }
        default
    }

    fn finding(
        &self,
        hit: &Hit,
        default: Option<&'a Document>,
        severity: Option<Severity>,
    ) -> Option<Finding> {
        let doc = self
            .target(hit, default)
            .or_else(|| self.project.docs.first())?;
        let mut note = None;
        let span = if let Some(steps) = &hit.path {
            let (span, complete) = location::span_of(&doc.root, steps);
            if !complete {
                note = Some("the result's `path` does not exist in this document; this is its deepest existing part".to_string());
            }
            span
        } else if let Some(line) = hit.loc_line {
            let f = self.project.source(doc.file);
            if line >= 1 && line <= f.lines.line_count() {
                let r = f.lines.line_range(&f.text, line - 1);
                Span::new(doc.file, r.start, r.end)
            } else {
                doc.anchor_span()
            }
        } else {
            doc.anchor_span()
        };
        if default.is_none() && hit.file.is_none() {
            note = Some("the result names no `file`, so it is shown at the first document".into());
        }
        let mut f = Finding::new(hit.msg.clone(), span);
        f.help = match (&hit.help, note) {
            (Some(h), Some(n)) => Some(format!("{h} ({n})")),
            (Some(h), None) => Some(h.clone()),
            (None, n) => n,
        };
        f.severity = severity;
        Some(f)
    }
}

fn failure_finding(
    pkg: &Package,
    f: &EvalFailure,
    doc: Option<&Document>,
    project: &Project,
) -> Option<(&'static str, Finding)> {
    let doc = doc.or_else(|| project.docs.first())?;
    let site = pkg
        .sites
        .get(&f.rule)
        .map(|s| format!(" ({}:{})", s.file, s.line))
        .unwrap_or_default();
    Some((
        EVALUATION_ERROR,
        Finding::new(
            format!(
                "policy rule `data.{}.{}`{} failed on this document: {}",
                pkg.name, f.rule, site, f.message
            ),
            doc.anchor_span(),
        )
        .with_help("Fix the policy; its other results are still reported."),
    ))
}

fn user_rule_id(pkg: &Package, hit: &Hit) -> &'static str {
    match &hit.id {
        Some(id) => super::intern(id),
        None => super::intern(&format!("policy/{}/{}", pkg.name, hit.rule)),
    }
}

fn glob_set(patterns: &[String]) -> Option<GlobSet> {
    let mut b = GlobSetBuilder::new();
    for p in patterns {
        b.add(Glob::new(p).ok()?);
    }
    b.build().ok()
}

/// A file's id, path, text and line index, shared with `gitops.location`.
type SharedFile = (FileId, Arc<str>, Arc<str>, Arc<LineIndex>);

/// Makes `doc` the current document of `gitops.location` on this thread.
fn set_location_document(project: &Project, doc: &Document) {
    thread_local! {
        static FILE: std::cell::RefCell<Option<SharedFile>> = const { std::cell::RefCell::new(None) };
    }
    let (file, text, lines) = FILE.with(|c| {
        let mut c = c.borrow_mut();
        match &*c {
            Some((id, f, t, l)) if *id == doc.file => (f.clone(), t.clone(), l.clone()),
            _ => {
                let src = project.source(doc.file);
                let v = (
                    Arc::<str>::from(src.path.as_str()),
                    Arc::<str>::from(src.text.as_str()),
                    Arc::new(src.lines.clone()),
                );
                *c = Some((doc.file, v.0.clone(), v.1.clone(), v.2.clone()));
                v
            }
        }
    });
    location::set_current(Some(Current {
        file,
        text,
        lines,
        root: doc.root.clone(),
    }));
}

/// Runs the enabled shipped rules and the user's policies. Findings carry their rule id.
#[must_use]
pub fn run(project: &Project, config: &Config, user: Option<&UserPolicies>) -> Out {
    let pack = pack::get();
    let enabled: Vec<(&PackRule, Option<GlobSet>)> = pack
        .rules
        .iter()
        .filter(|r| config.level(r.meta.id) != Some(Level::Off))
        .map(|r| {
            let configured: Option<Vec<String>> = config
                .options(r.meta.id)
                .get("paths")
                .and_then(|v| serde_json::from_value(v.clone()).ok());
            let paths = configured.unwrap_or_else(|| r.paths.clone());
            let globs = if paths.is_empty() {
                None
            } else {
                glob_set(&paths)
            };
            (r, globs)
        })
        .collect();
    if enabled.is_empty() && user.is_none() {
        return Vec::new();
    }
    let env = Env::new(project);
    let needs_model = enabled.iter().any(|(r, _)| r.scope == Scope::Repo)
        || user.is_some_and(|u| u.set.mentions_gitops);
    // Effective Helm values are most of the model's size: built only when a policy may read them.
    let with_values = pack.set.mentions_values || user.is_some_and(|u| u.set.mentions_values);
    let model_value = if needs_model {
        Value::from(data::model(project, config, with_values))
    } else {
        Value::Null
    };
    let mut options = serde_json::Map::new();
    for (r, _) in &enabled {
        let o = config.options(r.meta.id);
        if !o.is_empty() {
            options.insert(r.meta.id.to_string(), serde_json::Value::Object(o.clone()));
        }
    }
    // `data.gitops` shares the one converted model (regorus values are reference-counted).
    let data_object = |extra: Option<(&str, Value)>| {
        let mut m = std::collections::BTreeMap::new();
        if needs_model {
            m.insert(Value::from("gitops"), model_value.clone());
        }
        if let Some((k, v)) = extra {
            m.insert(Value::from(k), v);
        }
        Value::from(m)
    };
    let mut pack_engine = pack.set.engine.clone();
    let _ = pack_engine.add_data(data_object(Some((
        "gitops_lint",
        Value::from(serde_json::json!({ "options": options })),
    ))));
    let mut user_engine = user.map(|u| {
        let mut e = u.set.engine.clone();
        if u.set.mentions_gitops {
            let _ = e.add_data(data_object(None));
        }
        e
    });
    let disabled = Disabled::default();

    let user_doc_pkgs: Vec<&Package> = user
        .filter(|u| !u.combine)
        .map(|u| {
            u.set
                .namespaces(&u.namespaces, u.all_namespaces)
                .into_iter()
                .filter(|p| !is_repo_package(&p.name) && !p.rules.is_empty())
                .collect()
        })
        .unwrap_or_default();
    let uses_location = pack.set.uses_location || user.is_some_and(|u| u.set.uses_location);

    let doc_rules = |doc: &Document| -> Vec<&PackRule> {
        if doc.kind == DocKind::Config {
            return Vec::new();
        }
        let path = &project.source(doc.file).path;
        enabled
            .iter()
            .filter(|(r, globs)| {
                r.scope == Scope::Document
                    && r.meta.applies_to.contains(&doc.kind)
                    && globs.as_ref().is_none_or(|g| g.is_match(path))
            })
            .map(|(r, _)| *r)
            .collect()
    };

    let mut out: Out = project
        .docs
        .par_iter()
        .map_init(
            || (pack_engine.clone(), user_engine.clone()),
            |(pe, ue), doc| {
                let mut out = Vec::new();
                let rules = doc_rules(doc);
                let user_here = !user_doc_pkgs.is_empty() && doc.kind != DocKind::Config;
                if rules.is_empty() && !user_here {
                    return out;
                }
                let input = Value::from(doc.root.to_json());
                if uses_location {
                    set_location_document(project, doc);
                }
                if !rules.is_empty() {
                    pe.set_input(input.clone());
                    for r in rules {
                        let Some(pkg) = pack.set.packages.get(&r.package) else {
                            continue;
                        };
                        let (hits, failures) = eval_package(pe, 0, pkg, &disabled);
                        for h in hits {
                            let sev = is_warning_rule(&h.rule).then_some(Severity::Warning);
                            if let Some(f) = env.finding(&h, Some(doc), sev) {
                                out.push((r.meta.id, f));
                            }
                        }
                        for f in failures {
                            out.extend(failure_finding(pkg, &f, Some(doc), project));
                        }
                    }
                }
                if let (true, Some(ue)) = (user_here, ue.as_mut()) {
                    ue.set_input(input);
                    for pkg in &user_doc_pkgs {
                        let (hits, failures) = eval_package(ue, 1, pkg, &disabled);
                        for h in hits {
                            let sev = Some(if is_warning_rule(&h.rule) {
                                Severity::Warning
                            } else {
                                Severity::Error
                            });
                            if let Some(f) = env.finding(&h, Some(doc), sev) {
                                out.push((user_rule_id(pkg, &h), f));
                            }
                        }
                        for f in failures {
                            out.extend(failure_finding(pkg, &f, Some(doc), project));
                        }
                    }
                }
                if uses_location {
                    location::set_current(None);
                }
                out
            },
        )
        .flatten()
        .collect();

    // Once per run: pack rules of scope "repo", user `gitops.repo.*` packages, `--combine`.
    for (r, _) in enabled.iter().filter(|(r, _)| r.scope == Scope::Repo) {
        let Some(pkg) = pack.set.packages.get(&r.package) else {
            continue;
        };
        pack_engine.set_input(model_value.clone());
        let (hits, failures) = eval_package(&mut pack_engine, 0, pkg, &disabled);
        for h in hits {
            let sev = is_warning_rule(&h.rule).then_some(Severity::Warning);
            if let Some(f) = env.finding(&h, None, sev) {
                out.push((r.meta.id, f));
            }
        }
        for f in failures {
            out.extend(failure_finding(pkg, &f, None, project));
        }
    }
    if let (Some(u), Some(ue)) = (user, user_engine.as_mut()) {
        let mut once: Vec<(&Package, Value)> = u
            .set
            .packages
            .values()
            .filter(|p| is_repo_package(&p.name) && !p.rules.is_empty())
            .map(|p| (p, model_value.clone()))
            .collect();
        if u.combine {
            let combined: Vec<serde_json::Value> = project
                .docs
                .iter()
                .filter(|d| d.kind != DocKind::Config)
                .map(|d| {
                    serde_json::json!({
                        "path": project.source(d.file).path,
                        "contents": d.root.to_json(),
                    })
                })
                .collect();
            let input = Value::from(serde_json::Value::Array(combined));
            for p in u.set.namespaces(&u.namespaces, u.all_namespaces) {
                if !is_repo_package(&p.name) && !p.rules.is_empty() {
                    once.push((p, input.clone()));
                }
            }
        }
        for (pkg, input) in once {
            ue.set_input(input);
            let (hits, failures) = eval_package(ue, 1, pkg, &disabled);
            for h in hits {
                let sev = Some(if is_warning_rule(&h.rule) {
                    Severity::Warning
                } else {
                    Severity::Error
                });
                if let Some(f) = env.finding(&h, None, sev) {
                    out.push((user_rule_id(pkg, &h), f));
                }
            }
            for f in failures {
                out.extend(failure_finding(pkg, &f, None, project));
            }
        }
    }
    out
}
