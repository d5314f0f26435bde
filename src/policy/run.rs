//! Rego rules as rules: the shipped pack and the user's policies become [`Rule`]s that the
//! engine runs through the same path as the Rust rules (per document, then once per run),
//! with one stamping and suppression step. Results become findings with exact locations.
//!
//! A run's policies share a [`Runtime`]: the compiled engines with `data` loaded (built on
//! first use, from the model), cloned once per worker thread, with each document's `input`
//! converted once per thread however many rules read it.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use regorus::{Engine, Value};

use super::eval::{Disabled, EvalFailure, Hit, eval_package, eval_package_on, site};
use super::location::{self, Current};
use super::pack::{self, PackRule, Scope};
use super::results::{failure_finding, hits_to_findings};
use super::{Package, PolicySet, data};
use crate::diagnostic::{Finding, Severity};
use crate::model::{DocKind, Document, Model, Repository};
use crate::rule::{
    Checked, Context, Emitted, Failure, FixAvailability, Reads, Rule, RuleMeta, RuleOptions,
};
use crate::source::glob::Patterns;
use crate::source::{FileId, LineIndex};

pub use super::results::EVALUATION_ERROR;

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

/// The results of the shipped repository-scope rules, kept between runs of the language
/// server: they are a function of the package, the rules' options and `data.gitops` (also the
/// `input`), so a run whose model is equal gives the same results. Only the findings
/// are made again, from the current files.
#[derive(Default)]
pub struct KeptRepoResults(Mutex<BTreeMap<String, KeptResults>>);

/// The rules' options (as JSON text), the model they ran on, and their results.
type KeptResults = (String, Value, Vec<Hit>);

impl KeptRepoResults {
    fn get(&self, package: &str, options: &str, model: &Value) -> Option<Vec<Hit>> {
        let kept = self.0.lock().ok()?;
        let (o, m, hits) = kept.get(package)?;
        (o == options && m == model).then(|| hits.clone())
    }

    fn keep(&self, package: &str, options: &str, model: Value, hits: &[Hit]) {
        if let Ok(mut kept) = self.0.lock() {
            kept.insert(
                package.to_string(),
                (options.to_string(), model, hits.to_vec()),
            );
        }
    }

    fn forget(&self, package: &str) {
        if let Ok(mut kept) = self.0.lock() {
            kept.remove(package);
        }
    }
}

impl std::fmt::Debug for KeptRepoResults {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KeptRepoResults").finish_non_exhaustive()
    }
}

/// A run's id and a file's id, path, text and line index, shared with `gitops.location`.
type SharedFile = ((u64, FileId), Arc<str>, Arc<str>, Arc<LineIndex>);

/// Makes `doc` the current document of `gitops.location` on this thread, in run `run` (a
/// file's id names another text in another run of the language server).
fn set_location_document(run: u64, repo: &Repository, doc: &Document) {
    thread_local! {
        static FILE: std::cell::RefCell<Option<SharedFile>> = const { std::cell::RefCell::new(None) };
    }
    let (file, text, lines) = FILE.with(|c| {
        let mut c = c.borrow_mut();
        match &*c {
            Some((id, f, t, l)) if *id == (run, doc.file) => (f.clone(), t.clone(), l.clone()),
            _ => {
                let src = repo.source(doc.file);
                let v = (
                    Arc::<str>::from(src.path.as_str()),
                    Arc::<str>::from(src.text()),
                    Arc::new(src.lines().clone()),
                );
                *c = Some(((run, doc.file), v.0.clone(), v.1.clone(), v.2.clone()));
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

/// What the policies of one run share: the engines with `data` loaded (built on first use,
/// from the model) and the rules skipped after a time-out.
pub struct Runtime {
    /// Tells this run's per-thread engine clones from an earlier run's.
    id: u64,
    user: Option<UserPolicies>,
    /// `data.gitops_lint.options`: the enabled pack rules' options.
    options: Value,
    needs_model: bool,
    /// The keys of `data.gitops` the loaded policies can read.
    fields: data::Fields,
    /// The keys of `input` the enabled per-document pack rules can read (`None`: all). An
    /// Application is about 45 nodes and those rules read about 10 of them.
    pack_keys: Option<data::Fields>,
    uses_location: bool,
    engines: OnceLock<(Engine, Option<Engine>, Value)>,
    /// Whether a per-document pack rule reads `data.gitops`. If none does, they run on
    /// `doc_pack`, an engine without the model: with the model loaded, every evaluation costs
    /// more (about 250 ms of CPU per check on 1000 Applications, `BENCHMARKS.md`), and the
    /// document pass need not wait for the model.
    pack_documents_read_model: bool,
    doc_pack: OnceLock<Engine>,
    disabled: Disabled,
    /// `data.gitops_lint.options` as JSON text: part of each per-document pack rule's memo key.
    options_text: String,
    /// Set when a per-document result depended on more than its document: a result naming
    /// another `file`. (A run with evaluation failures is never reused: the engine sees them.)
    documents_not_reusable: AtomicBool,
    /// The repository-scope results of earlier runs (the language server).
    kept: Option<Arc<KeptRepoResults>>,
    /// `data.gitops`, when made to compare it with the kept results' (before the engines,
    /// which then hold it).
    model_value: OnceLock<Value>,
}

/// A worker thread's engines of the current run, with the document they hold as `input`.
struct Worker {
    run: u64,
    pack: Engine,
    /// The pack's program on the pack engine's data, used instead of it when it compiled.
    pack_vm: Option<regorus::rvm::vm::RegoVM>,
    user: Option<Engine>,
    /// The document each engine has as `input` (pack, user).
    input_of: [Option<DocKey>; 2],
    /// The current document, whole and with the pack's keys only (each converted once, when
    /// first needed).
    inputs: [Option<(DocKey, Value)>; 2],
    /// The document the location builtins point into.
    located: Option<DocKey>,
}

/// A document of a run: its file, its index there and the address of its tree.
type DocKey = (FileId, usize, usize);

thread_local! {
    static WORKER: RefCell<Option<Worker>> = const { RefCell::new(None) };
}

impl Runtime {
    fn engines(&self, model: &Model<'_>) -> &(Engine, Option<Engine>, Value) {
        self.engines.get_or_init(|| {
            let pack = pack::get();
            let model_value = if self.needs_model {
                match self.model_value.get() {
                    Some(value) => value.clone(),
                    None => data::model_value(model, &self.fields),
                }
            } else {
                Value::Null
            };
            // `data.gitops` shares the one converted model (regorus values are
            // reference-counted).
            let data_object = |extra: Option<(&str, Value)>| {
                let mut m = BTreeMap::new();
                if self.needs_model {
                    m.insert(Value::from("gitops"), model_value.clone());
                }
                if let Some((k, v)) = extra {
                    m.insert(Value::from(k), v);
                }
                Value::from(m)
            };
            let mut pack_engine = pack.set.engine.clone();
            let _ = pack_engine.add_data(data_object(Some(("gitops_lint", self.options.clone()))));
            let user_engine = self.user.as_ref().map(|u| {
                let mut e = u.set.engine.clone();
                if u.set.mentions_gitops {
                    let _ = e.add_data(data_object(None));
                }
                e
            });
            (pack_engine, user_engine, model_value)
        })
    }

    /// Evaluates `pkg` of set `set` (0: pack, 1: user) with `doc` as `input`, on this
    /// thread's clone of the engine.
    fn eval_on_document(
        &self,
        cx: &Context<'_>,
        set: usize,
        pkg: &Package,
        doc: &Document,
    ) -> (Vec<Hit>, Vec<EvalFailure>) {
        // The tree's address too: documents rendered from one template share a file and an
        // index (and a written document of that file has them as well).
        let key = (
            doc.file,
            doc.index,
            std::sync::Arc::as_ptr(&doc.root) as usize,
        );
        WORKER.with(|w| {
            let mut w = w.borrow_mut();
            if w.as_ref().is_none_or(|w| w.run != self.id) {
                let (pack_engine, user_engine) = self.document_engines(cx.model);
                *w = Some(Worker {
                    run: self.id,
                    pack_vm: super::vm::pack_program()
                        .and_then(|p| super::vm::machine(p, pack_engine.get_data())),
                    pack: pack_engine.clone(),
                    user: user_engine.cloned(),
                    input_of: [None, None],
                    inputs: [None, None],
                    located: None,
                });
            }
            let Some(w) = w.as_mut() else {
                return (Vec::new(), Vec::new());
            };
            if w.located != Some(key) {
                w.located = Some(key);
                if self.uses_location {
                    set_location_document(self.id, cx.repo, doc);
                }
            }
            let keys = if set == 0 {
                self.pack_keys.as_ref()
            } else {
                None
            };
            let slot = &mut w.inputs[usize::from(keys.is_some())];
            if slot.as_ref().is_none_or(|(k, _)| *k != key) {
                *slot = Some((key, input_value(&doc.root, keys)));
            }
            let input = slot.as_ref().map_or(Value::Null, |(_, v)| v.clone());
            if set == 0
                && let Some(vm) = w.pack_vm.as_mut()
            {
                if w.input_of[0] != Some(key) {
                    vm.set_input(input);
                    w.input_of[0] = Some(key);
                }
                return eval_package_on(vm, pkg, &self.disabled);
            }
            let engine = if set == 0 {
                &mut w.pack
            } else {
                match w.user.as_mut() {
                    Some(e) => e,
                    None => return (Vec::new(), Vec::new()),
                }
            };
            if w.input_of[set] != Some(key) {
                engine.set_input(input);
                w.input_of[set] = Some(key);
            }
            let path = cx.repo.source(doc.file).path.as_str();
            eval_package(engine, set, pkg, &self.disabled, self.watched(set, path))
        })
    }

    /// The engines per-document rules run on: the pack's (without the model when no such rule
    /// reads it) and the user's.
    fn document_engines(&self, model: &Model<'_>) -> (&Engine, Option<&Engine>) {
        let user = || self.engines(model).1.as_ref();
        if self.pack_documents_read_model {
            return (&self.engines(model).0, user());
        }
        let pack_engine = self.doc_pack.get_or_init(|| {
            let mut e = pack::get().set.engine.clone();
            let _ = e.add_data(Value::from(BTreeMap::from([(
                Value::from("gitops_lint"),
                self.options.clone(),
            )])));
            e
        });
        (pack_engine, self.user.is_some().then(user).flatten())
    }

    /// Evaluates `pkg` once with `input` (the repository model, or `--combine`'s array).
    fn eval_once(
        &self,
        cx: &Context<'_>,
        set: usize,
        pkg: &Package,
        input: Value,
    ) -> (Vec<Hit>, Vec<EvalFailure>) {
        let (pack_engine, user_engine, _) = self.engines(cx.model);
        if set == 0
            && let Some(mut vm) = super::vm::pack_program()
                .and_then(|p| super::vm::machine(p, pack_engine.get_data()))
        {
            vm.set_input(input);
            return eval_package_on(&mut vm, pkg, &self.disabled);
        }
        let mut engine = if set == 0 {
            pack_engine.clone()
        } else {
            match user_engine {
                Some(e) => e.clone(),
                None => return (Vec::new(), Vec::new()),
            }
        };
        if self.uses_location {
            location::set_current(None);
        }
        engine.set_input(input);
        let watched = self.watched(set, "the repository");
        eval_package(&mut engine, set, pkg, &self.disabled, watched)
    }

    /// How the user's policies (set 1) are watched: the input's name and their time limit.
    fn watched<'s>(&self, set: usize, subject: &'s str) -> Option<(&'s str, std::time::Duration)> {
        let user = self.user.as_ref().filter(|_| set == 1)?;
        Some((subject, user.set.timeout))
    }

    /// A document's evaluation failures, for the engine to gather over the document pass.
    fn document_failures(&self, doc: &Document, failures: Vec<EvalFailure>) -> Vec<Failure> {
        failures
            .into_iter()
            .map(|f| Failure {
                check: f.rule,
                message: f.message,
                file: doc.file,
                index: doc.index,
            })
            .collect()
    }

    /// The per-document evaluation failures of package `pkg_name`, once per rule: the number
    /// of documents and the first of them.
    fn report_failures(
        &self,
        set: usize,
        pkg_name: &str,
        failures: Vec<Failure>,
        cx: &Context<'_>,
    ) -> Vec<Emitted> {
        let Some(pkg) = self.package(set, pkg_name) else {
            return Vec::new();
        };
        // By rule: how many documents, and the first of them with its message.
        let mut by_rule: BTreeMap<String, (usize, Failure)> = BTreeMap::new();
        for f in failures {
            match by_rule.get_mut(&f.check) {
                None => {
                    by_rule.insert(f.check.clone(), (1, f));
                }
                Some((count, first)) => {
                    *count += 1;
                    if (f.file, f.index) < (first.file, first.index) {
                        *first = f;
                    }
                }
            }
        }
        let mut out = Vec::new();
        for (rule, (count, first)) in by_rule {
            let Some(doc) = cx
                .repo
                .file_docs(first.file)
                .iter()
                .find(|d| d.index == first.index)
            else {
                continue;
            };
            let others = match count {
                1 => String::new(),
                n => format!(" and {} more", n - 1),
            };
            out.push(Emitted {
                rule: EVALUATION_ERROR,
                finding: Finding::new(
                    format!(
                        "policy rule `data.{}.{rule}`{} failed on this document{others}: {}",
                        pkg.name,
                        site(pkg, &rule),
                        first.message,
                    ),
                    doc.anchor_span(),
                )
                .with_help("Fix the policy; its other results are still reported."),
            });
        }
        out
    }

    fn package(&self, set: usize, name: &str) -> Option<&Package> {
        if set == 0 {
            pack::get().set.packages.get(name)
        } else {
            self.user.as_ref()?.set.packages.get(name)
        }
    }
}

/// A shipped rule evaluated on each document of its kinds (and `paths`).
struct PackDocumentRule {
    rt: Arc<Runtime>,
    rule: &'static PackRule,
    /// The `paths` globs the rule is limited to (configured, else the pack's).
    globs: Vec<String>,
    paths: Option<Patterns>,
}

impl Rule for PackDocumentRule {
    fn meta(&self) -> &'static RuleMeta {
        self.rule.meta
    }

    fn applies(&self, doc: &Document, cx: &Context<'_>) -> bool {
        doc.kind != DocKind::Config
            && self.rule.meta.applies_to.contains(&doc.kind)
            && self
                .paths
                .as_ref()
                .is_none_or(|p| p.is_match(&cx.repo.source(doc.file).path))
    }

    fn check_emitting(&self, doc: &Document, cx: &Context<'_>) -> Checked {
        let Some(pkg) = self.rt.package(0, &self.rule.package) else {
            return Checked::default();
        };
        let (hits, failures) = self.rt.eval_on_document(cx, 0, pkg, doc);
        if hits.iter().any(|h| h.file.is_some()) {
            self.rt
                .documents_not_reusable
                .store(true, Ordering::Relaxed);
        }
        Checked {
            found: hits_to_findings(cx, 0, pkg, hits, Some(doc), Some(self.rule.meta.id)),
            failed: self.rt.document_failures(doc, failures),
        }
    }

    fn report_failures(&self, failures: Vec<Failure>, cx: &Context<'_>) -> Vec<Emitted> {
        self.rt.report_failures(0, &self.rule.package, failures, cx)
    }

    /// Its input is the document and its data the rules' options, unless a per-document pack
    /// rule reads the model (then every one runs on the engine holding `data.gitops`).
    fn document_memo_key(&self, _cx: &Context<'_>) -> Option<String> {
        (!self.rt.pack_documents_read_model).then(|| {
            format!(
                "pack {} paths {:?} options {}",
                self.rule.meta.id, self.globs, self.rt.options_text
            )
        })
    }

    fn document_findings_reusable(&self) -> bool {
        !self.rt.documents_not_reusable.load(Ordering::Relaxed) && self.rt.disabled.is_empty()
    }
}

/// A shipped rule evaluated once, on the repository model.
struct PackRepoRule {
    rt: Arc<Runtime>,
    rule: &'static PackRule,
}

impl Rule for PackRepoRule {
    fn meta(&self) -> &'static RuleMeta {
        self.rule.meta
    }

    fn applies(&self, _: &Document, _: &Context<'_>) -> bool {
        false
    }

    fn check_project_emitting(&self, cx: &Context<'_>) -> Vec<Emitted> {
        let Some(pkg) = self.rt.package(0, &self.rule.package) else {
            return Vec::new();
        };
        let (hits, failures) = match self.rt.kept.as_deref() {
            None => {
                let model = self.rt.engines(cx.model).2.clone();
                self.rt.eval_once(cx, 0, pkg, model)
            }
            Some(kept) => {
                // Compared before the engines are made: they are made only when it changed.
                let options = &self.rt.options_text;
                let json = self
                    .rt
                    .model_value
                    .get_or_init(|| data::model_value(cx.model, &self.rt.fields));
                match kept.get(&pkg.name, options, json) {
                    Some(hits) => (hits, Vec::new()),
                    None => {
                        let model = self.rt.engines(cx.model).2.clone();
                        let (hits, failures) = self.rt.eval_once(cx, 0, pkg, model);
                        // A failure (a time-out above all) is not a result to keep.
                        if failures.is_empty() {
                            kept.keep(&pkg.name, options, json.clone(), &hits);
                        } else {
                            kept.forget(&pkg.name);
                        }
                        (hits, failures)
                    }
                }
            }
        };
        let mut out = hits_to_findings(cx, 0, pkg, hits, None, Some(self.rule.meta.id));
        out.extend(
            failures
                .iter()
                .filter_map(|f| failure_finding(pkg, f, None, cx.repo)),
        );
        out
    }
}

/// How a user package is evaluated.
#[derive(Copy, Clone, PartialEq, Eq)]
enum UserScope {
    /// On each document (conftest's default).
    Document,
    /// Once, on the repository model (`gitops.repo.*` packages).
    Repo,
    /// Once, on every document's `{path, contents}` (`--combine`).
    Combined,
}

/// One package of the user's policies. Its results name their rule (`policy/<package>/<rule>`
/// or the result's own `id`), so its metadata is only a stand-in.
struct UserPackageRule {
    rt: Arc<Runtime>,
    package: String,
    scope: UserScope,
}

static USER_POLICY_META: RuleMeta = RuleMeta {
    id: "policy/user",
    summary: "a rule of the user's Rego policies",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    // User policies may read any field of any object; the engine keeps everything for a
    // run with user policies before they are compiled.
    reads: Reads::EVERYTHING,
    applies_to: &[],
    options: &[],
    docs: "",
};

impl UserPackageRule {
    /// Whether `doc`'s kind is one the package's rules can report on (`Package::kinds`).
    fn can_report_on(&self, doc: &Document) -> bool {
        self.rt
            .package(1, &self.package)
            .and_then(|p| p.kinds.as_ref())
            .is_none_or(|kinds| doc.k8s_kind().is_some_and(|k| kinds.contains(k)))
    }
}

impl Rule for UserPackageRule {
    fn meta(&self) -> &'static RuleMeta {
        &USER_POLICY_META
    }

    fn applies(&self, doc: &Document, _: &Context<'_>) -> bool {
        self.scope == UserScope::Document && doc.kind != DocKind::Config && self.can_report_on(doc)
    }

    fn may_apply_to(&self, kind: DocKind) -> bool {
        self.scope == UserScope::Document && kind != DocKind::Config
    }

    fn check_emitting(&self, doc: &Document, cx: &Context<'_>) -> Checked {
        let Some(pkg) = self.rt.package(1, &self.package) else {
            return Checked::default();
        };
        let (hits, failures) = self.rt.eval_on_document(cx, 1, pkg, doc);
        Checked {
            found: hits_to_findings(cx, 1, pkg, hits, Some(doc), None),
            failed: self.rt.document_failures(doc, failures),
        }
    }

    fn report_failures(&self, failures: Vec<Failure>, cx: &Context<'_>) -> Vec<Emitted> {
        self.rt.report_failures(1, &self.package, failures, cx)
    }

    fn check_project_emitting(&self, cx: &Context<'_>) -> Vec<Emitted> {
        let Some(pkg) = self.rt.package(1, &self.package) else {
            return Vec::new();
        };
        let input = match self.scope {
            UserScope::Document => return Vec::new(),
            UserScope::Repo => self.rt.engines(cx.model).2.clone(),
            UserScope::Combined => Value::from(serde_json::Value::Array(
                cx.repo
                    .docs
                    .iter()
                    .filter(|d| d.kind != DocKind::Config)
                    .map(|d| {
                        serde_json::json!({
                            "path": cx.repo.source(d.file).path,
                            "contents": d.root.to_json(),
                        })
                    })
                    .collect(),
            )),
        };
        let (hits, failures) = self.rt.eval_once(cx, 1, pkg, input);
        let mut out = hits_to_findings(cx, 1, pkg, hits, None, None);
        out.extend(
            failures
                .iter()
                .filter_map(|f| failure_finding(pkg, f, None, cx.repo)),
        );
        out
    }
}

/// The text of the pack file at `path`.
fn pack_text(path: &str) -> &'static str {
    pack::FILES
        .iter()
        .find(|(p, _)| *p == path)
        .map_or("", |(_, t)| *t)
}

/// Compiles the shipped pack and its program for the virtual machine, once per process.
pub fn warm_up() {
    let _ = pack::get();
    let _ = super::vm::pack_program();
}

/// The keys of `data.gitops` that `rules` name. Only the pack rules that read `data.gitops`
/// count: each pack file is its own package and calls into no other (a test keeps it so).
fn pack_model_fields<'a>(rules: impl Iterator<Item = &'a PackRule>) -> data::Fields {
    let mut fields = data::Fields::none();
    for r in rules.filter(|r| reads_model(r.file)) {
        fields.add_policy_text(pack_text(r.file));
    }
    fields
}

/// The keys of `input` that `rules`' per-document rules name (`None`: they may read any).
pub(crate) fn pack_document_keys<'a>(
    rules: impl Iterator<Item = &'a PackRule>,
) -> Option<data::Fields> {
    let mut keys = data::Fields::none();
    for r in rules.filter(|r| r.scope == Scope::Document) {
        keys.add_policy_text(pack_text(r.file));
    }
    (!keys.is_all()).then_some(keys)
}

/// Whether the pack file at `path` reads `data.gitops` (see [`pack::reads_model`]).
fn reads_model(path: &str) -> bool {
    pack::reads_model(pack_text(path))
}

/// The rules the policies of this run contribute: the enabled shipped rules (`enabled`
/// tells which) and the user's packages.
#[must_use]
pub fn rules(
    enabled: &dyn Fn(&str) -> bool,
    options: &RuleOptions,
    user: Option<&UserPolicies>,
    kept: Option<&Arc<KeptRepoResults>>,
) -> Vec<Box<dyn Rule>> {
    static RUNS: AtomicU64 = AtomicU64::new(0);
    let pack = pack::get();
    let pack_rules: Vec<&'static PackRule> =
        pack.rules.iter().filter(|r| enabled(r.meta.id)).collect();
    if pack_rules.is_empty() && user.is_none() {
        return Vec::new();
    }
    let mut options_data = serde_json::Map::new();
    for r in &pack_rules {
        if let Some(o) = options.json.get(r.meta.id).filter(|o| !o.is_empty()) {
            options_data.insert(r.meta.id.to_string(), serde_json::Value::Object(o.clone()));
        }
    }
    let needs_model = pack_rules.iter().any(|r| r.scope == Scope::Repo)
        || user.is_some_and(|u| u.set.mentions_gitops);
    let rt = Arc::new(Runtime {
        id: RUNS.fetch_add(1, Ordering::Relaxed),
        user: user.cloned(),
        options: Value::from(serde_json::json!({ "options": options_data })),
        options_text: serde_json::Value::Object(options_data.clone()).to_string(),
        documents_not_reusable: AtomicBool::new(false),
        kept: kept.cloned(),
        model_value: OnceLock::new(),
        needs_model,
        fields: {
            let mut fields = pack_model_fields(pack_rules.iter().copied());
            if let Some(u) = user {
                fields.extend(&u.set.fields);
            }
            fields
        },
        pack_keys: pack_document_keys(pack_rules.iter().copied()),
        uses_location: pack.set.uses_location || user.is_some_and(|u| u.set.uses_location),
        engines: OnceLock::new(),
        pack_documents_read_model: pack_rules
            .iter()
            .any(|r| r.scope == Scope::Document && reads_model(r.file)),
        doc_pack: OnceLock::new(),
        disabled: Disabled::default(),
    });
    let mut out: Vec<Box<dyn Rule>> = Vec::new();
    for r in pack_rules {
        match r.scope {
            Scope::Document => {
                let configured: Option<Vec<String>> = options
                    .json
                    .get(r.meta.id)
                    .and_then(|o| o.get("paths"))
                    .and_then(|v| serde_json::from_value(v.clone()).ok());
                let paths = configured.unwrap_or_else(|| r.paths.clone());
                out.push(Box::new(PackDocumentRule {
                    rt: rt.clone(),
                    rule: r,
                    paths: (!paths.is_empty())
                        .then(|| Patterns::new(&paths).ok())
                        .flatten(),
                    globs: paths,
                }));
            }
            Scope::Repo => out.push(Box::new(PackRepoRule {
                rt: rt.clone(),
                rule: r,
            })),
        }
    }
    if let Some(u) = user {
        let mut add = |package: &str, scope| {
            out.push(Box::new(UserPackageRule {
                rt: rt.clone(),
                package: package.to_string(),
                scope,
            }));
        };
        for p in u.set.packages.values() {
            if is_repo_package(&p.name) && !p.rules.is_empty() {
                add(&p.name, UserScope::Repo);
            }
        }
        for p in u.set.namespaces(&u.namespaces, u.all_namespaces) {
            if !is_repo_package(&p.name) && !p.rules.is_empty() {
                add(
                    &p.name,
                    if u.combine {
                        UserScope::Combined
                    } else {
                        UserScope::Document
                    },
                );
            }
        }
    }
    out
}

/// A document as Rego `input` ([`data::node_value`]).
pub(crate) fn input_value(node: &crate::yaml::Node, keys: Option<&data::Fields>) -> Value {
    data::node_value(node, keys)
}

#[cfg(test)]
mod tests {
    /// `data.gitops` is built with the keys the model-reading pack files name: a pack file
    /// must not reach another package, whose words would not count.
    #[test]
    fn pack_files_read_only_the_model_and_their_options() {
        for (path, text) in super::pack::FILES {
            if path.ends_with("_test.rego") || !path.ends_with(".rego") {
                continue;
            }
            for (at, _) in text.match_indices("data.") {
                let rest = &text[at + "data.".len()..];
                let model = rest.strip_prefix("gitops").is_some_and(|r| {
                    !r.starts_with(|c: char| c == '_' || c.is_ascii_alphanumeric())
                });
                assert!(
                    model || rest.starts_with("gitops_lint.options["),
                    "{path} reads `data.{}`",
                    &rest[..rest.len().min(30)]
                );
            }
        }
    }

    #[test]
    fn only_the_repository_rule_of_the_pack_reads_the_model() {
        let reading: Vec<&str> = super::pack::get()
            .rules
            .iter()
            .filter(|r| super::reads_model(r.file))
            .map(|r| r.meta.id)
            .collect();
        assert_eq!(reading, ["argocd/production-target-revision"]);
        assert!(super::reads_model(
            "rules/argocd/production_target_revision.rego"
        ));
    }

    #[test]
    fn input_is_what_the_json_conversion_gives() {
        let text = "a: 1\nb: -2.5\nc: yes\nd: ~\ne: 'x'\nf: [1, {g: .inf}, .nan, 0x1F]\n? [k]\n: complex\nh: &x {i: j}\nk: *x\nl: !!str 12\nm: 1e3\na: dup\n";
        let parsed = crate::yaml::parse(crate::source::FileId(0), text);
        let root = &parsed.docs[0].root;
        assert_eq!(
            super::input_value(root, None),
            regorus::Value::from(root.to_json())
        );
    }
}
