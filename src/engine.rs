//! The pipeline: discover → read and parse (parallel) → classify → run rules (parallel) →
//! stamp ids and severities → suppress → filter → sort → [`Report`].

use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rayon::prelude::*;

use crate::config::{self, Config, ConfigErrors, Level};
use crate::diagnostic::{Diagnostic, Finding, Label, Severity};
use crate::model::{self, Document, Model, Project};
use crate::registry;
use crate::rule::{Context, Emitted, Rule};
use crate::source::walk::{self, Filter};
use crate::source::{FileId, SourceDb, SourceFile, Span};
use crate::suppress::{self, Directive};
use crate::yaml::{self, YamlErrorKind};

mod cache;
pub use cache::{CacheStats, ParseCache};

/// What to check and how.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Files or one directory; empty means `.`.
    pub paths: Vec<PathBuf>,
    /// `--config FILE`; otherwise `.gitops-lint.yaml` at the root.
    pub config: Option<PathBuf>,
    /// Extra exclude globs (`--exclude`).
    pub exclude: Vec<String>,
    /// Worker threads; `None` uses rayon's default.
    pub jobs: Option<usize>,
    /// Walk, read and parse only, without running rules: the benchmark's floor.
    pub parse_only: bool,
    /// Record the wall time and memory of each phase ([`Summary::phases`]).
    pub timings: bool,
    /// Texts to use instead of the files on disk, by root-relative path (`--fix` passes).
    pub overlay: std::collections::BTreeMap<String, String>,
    /// Rego policies (conftest style).
    pub policy: PolicyArgs,
    /// The repository root, when the caller found it (the CLI does, upward from the current
    /// directory): `paths` are then files or folders under it whose findings are reported.
    pub root: Option<PathBuf>,
    /// Parsed files kept between runs of one repository (the language server): unchanged
    /// files are not read or parsed again.
    pub cache: Option<std::sync::Arc<ParseCache>>,
    /// Rule selectors of the command line, over the configuration's: a rule left out does
    /// not run, report or fix.
    pub selection: config::Selection,
}

/// conftest-compatible policy options of `check`.
#[derive(Clone, Debug, Default)]
pub struct PolicyArgs {
    /// `--policy DIR` (repeatable), added to the config's `policies:`.
    pub paths: Vec<PathBuf>,
    /// `--namespace` (repeatable, globs); empty means `main`.
    pub namespaces: Vec<String>,
    pub all_namespaces: bool,
    /// `--data DIR`: JSON/YAML files merged under `data`.
    pub data: Vec<PathBuf>,
    /// `--combine`: one input, the array of `{path, contents}` of every document.
    pub combine: bool,
    /// `--rego-version`; `None` detects it per file.
    pub rego_version: Option<crate::policy::RegoVersion>,
    /// Time limit of one rule evaluation (default 2 s).
    pub timeout: Option<std::time::Duration>,
}

#[derive(Debug)]
pub enum Error {
    /// Bad arguments: exit 2.
    Usage(String),
    /// Bad configuration: exit 2, each problem rendered with the config file's code frame.
    Config(ConfigErrors),
    /// A policy that does not load: exit 2, rendered at the `.rego` line.
    Policy(Box<crate::policy::PolicyError>),
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Error::Usage(m) => f.write_str(m),
            Error::Config(e) => e.fmt(f),
            Error::Policy(e) => e.fmt(f),
        }
    }
}

impl std::error::Error for Error {}

#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct Summary {
    pub files: usize,
    /// Files found but not read (binary, not UTF-8, permission denied, ...): the run did not
    /// see everything.
    pub unreadable: usize,
    pub documents: usize,
    pub errors: usize,
    pub warnings: usize,
    pub infos: usize,
    pub suppressed: usize,
    pub fixable: usize,
    pub elapsed_ms: u64,
    /// Each phase's wall time and memory, when [`Options::timings`] is set.
    #[serde(skip)]
    pub phases: Vec<Phase>,
    /// Time spent in each rule (both passes, summed over threads; facts a rule builds first
    /// count for it), slowest first, when [`Options::timings`] is set.
    #[serde(skip)]
    pub rule_times: Vec<(&'static str, f64)>,
}

/// One phase of a run: its wall time, and the resident and peak memory after it (Linux).
#[derive(Clone, Debug)]
pub struct Phase {
    pub name: &'static str,
    pub ms: f64,
    pub rss_mib: Option<f64>,
    pub peak_mib: Option<f64>,
}

/// Records phases when enabled; free otherwise.
struct Timer {
    enabled: bool,
    last: Instant,
    phases: Vec<Phase>,
    rule_times: Vec<(&'static str, f64)>,
}

impl Timer {
    fn new(enabled: bool) -> Timer {
        Timer {
            enabled,
            last: Instant::now(),
            phases: Vec::new(),
            rule_times: Vec::new(),
        }
    }

    fn mark(&mut self, name: &'static str) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let (rss_mib, peak_mib) = memory_mib();
        self.phases.push(Phase {
            name,
            ms: now.duration_since(self.last).as_secs_f64() * 1000.0,
            rss_mib,
            peak_mib,
        });
        self.last = now;
    }
}

/// Resident and peak resident memory of this process in MiB, from `/proc/self/status`.
fn memory_mib() -> (Option<f64>, Option<f64>) {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return (None, None);
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

pub struct Report {
    pub project: Project,
    pub config: Config,
    pub diagnostics: Vec<Diagnostic>,
    /// Run-level notes of enabled rules, shown once by the text reporter.
    pub notes: Vec<Note>,
    pub summary: Summary,
}

/// A rule's run-level note (e.g. a check replaced by a declaration in the configuration).
#[derive(Clone, Debug)]
pub struct Note {
    pub rule: &'static str,
    pub message: String,
}

impl Report {
    /// Recomputes the summary's counts after diagnostics were removed.
    pub fn recount(&mut self) {
        let s = &mut self.summary;
        s.errors = 0;
        s.warnings = 0;
        s.infos = 0;
        s.fixable = 0;
        for d in &self.diagnostics {
            match d.severity {
                Severity::Error => s.errors += 1,
                Severity::Warning => s.warnings += 1,
                Severity::Info => s.infos += 1,
            }
            if d.fix.is_some() {
                s.fixable += 1;
            }
        }
    }

    #[must_use]
    pub fn max_severity(&self) -> Option<Severity> {
        self.diagnostics.iter().map(|d| d.severity).max()
    }
}

/// The repository root for `paths`: a directory is the root; for files, the nearest ancestor
/// holding `.gitops-lint.yaml` or `.git`. Also returns the files to report on (empty: all).
pub fn resolve_root(paths: &[PathBuf]) -> Result<(PathBuf, Vec<PathBuf>), Error> {
    let cwd = std::env::current_dir()
        .map_err(|e| Error::Usage(format!("cannot read the current directory: {e}")))?;
    let paths: Vec<PathBuf> = if paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        paths.to_vec()
    };
    let mut root: Option<PathBuf> = None;
    let mut files = Vec::new();
    for p in &paths {
        let abs = absolute(&cwd, p);
        let meta =
            std::fs::metadata(&abs).map_err(|e| Error::Usage(format!("{}: {}", p.display(), e)))?;
        let this_root = if meta.is_dir() {
            abs.clone()
        } else {
            files.push(abs.clone());
            find_root(abs.parent().unwrap_or(&abs))
        };
        match &root {
            None => root = Some(this_root),
            Some(r) if *r == this_root => {}
            Some(r) => {
                return Err(Error::Usage(format!(
                    "{} belongs to repository {}, not {}: check one repository at a time",
                    p.display(),
                    this_root.display(),
                    r.display()
                )));
            }
        }
    }
    let root = root.unwrap_or(cwd);
    Ok((root, files))
}

/// The existing files and folders of `paths` (absolute), to report on; the root itself means
/// everything.
fn filters_under(
    root: &Path,
    paths: &[PathBuf],
    overlay: &std::collections::BTreeMap<String, String>,
) -> Result<Vec<PathBuf>, Error> {
    let mut filters = Vec::new();
    for p in paths {
        if !overlay.contains_key(&walk::relative(root, p)) {
            std::fs::metadata(p).map_err(|e| Error::Usage(format!("{}: {e}", p.display())))?;
        }
        if p != root {
            filters.push(p.clone());
        }
    }
    Ok(filters)
}

/// `p` with `.` and `..` resolved against `cwd`, without following symlinks.
#[must_use]
pub fn absolute(cwd: &Path, p: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    // Normalise `.` and `..` without resolving symlinks.
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The repository root for `start`: the nearest ancestor holding `.gitops-lint.yaml` or `.git`,
/// else `start` itself.
#[must_use]
pub fn find_root(start: &Path) -> PathBuf {
    let mut dir = Some(start);
    while let Some(d) = dir {
        if config::FILE_NAMES.iter().any(|n| d.join(n).is_file()) || d.join(".git").exists() {
            return d.to_path_buf();
        }
        dir = d.parent();
    }
    start.to_path_buf()
}

/// What loading a repository gives: the project, its config, the files to report on, and
/// the findings met while reading and parsing.
struct Prepared {
    project: Project,
    config: Config,
    report_files: Vec<PathBuf>,
    load_findings: Vec<(&'static str, Finding)>,
    config_path: Option<PathBuf>,
    /// What the cache kept of the last run's findings (with [`Options::cache`]).
    reuse: Option<cache::Reuse>,
}

/// Root, config, walk, read, parse and classify: everything before the rules.
fn prepare(opts: &Options, timer: &mut Timer) -> Result<Prepared, Error> {
    let (root, report_files) = match &opts.root {
        Some(root) => (
            root.clone(),
            filters_under(root, &opts.paths, &opts.overlay)?,
        ),
        None => resolve_root(&opts.paths)?,
    };
    let config_path = opts.config.clone().or_else(|| config::find(&root));
    let mut config = match &config_path {
        Some(p) => config::load(p, &registry::all_meta()).map_err(Error::Config)?,
        None => Config::default(),
    };
    config.select_rules(&opts.selection);
    let mut exclude = config.exclude.clone();
    exclude.extend(opts.exclude.iter().cloned());
    let filter = Filter::new(&config.include, &exclude)
        .map_err(|(p, e)| Error::Usage(format!("invalid glob `{p}`: {e}")))?;
    let discovered = walk::discover(&root, &filter);
    timer.mark("walk");
    // User policies may read any field of any object; built-in rules do not read the payloads
    // of most ConfigMaps and Secrets.
    let keep_payloads = !opts.policy.paths.is_empty() || !config.policies.is_empty();
    // Only a one-shot run whose policies read no Helm values lets the resolver drop them
    // (see `check`): such a run keeps, of most values files, only their image tags.
    let keep_values = opts.cache.is_some()
        || keep_payloads
        || crate::policy::run::pack_reads_values(&|id: &str| config.level(id) != Some(Level::Off));
    let keep = Keep {
        payloads: keep_payloads,
        values: keep_values,
    };
    let (project, load_findings, reuse) =
        load_project(root, discovered, &opts.overlay, keep, opts.cache.as_deref());
    timer.mark("read, parse, kustomize");
    check_roots(&config, &project)?;
    Ok(Prepared {
        project,
        config,
        report_files,
        load_findings,
        config_path,
        reuse,
    })
}

/// `argocd.roots` must name files that are checked: a root that matches nothing would make
/// every Argo CD object dead, and every Argo CD rule silent.
fn check_roots(config: &Config, project: &Project) -> Result<(), Error> {
    let errors: Vec<config::ConfigError> = config
        .argocd
        .roots
        .iter()
        .enumerate()
        .filter(|(_, r)| {
            model::repo::join("", r).is_none_or(|p| project.file_by_path(&p).is_none())
        })
        .map(|(i, r)| {
            config::item_error(
                config,
                &["argocd", "roots"],
                i,
                format!("`argocd.roots` entry `{r}` matches no checked file"),
                Some(
                    "name a YAML file relative to the repository root that is not excluded".into(),
                ),
            )
        })
        .collect();
    if errors.is_empty() {
        Ok(())
    } else {
        Err(Error::Config(ConfigErrors(errors)))
    }
}

/// Loads the repository of `opts` (walk, read, parse, classify) without running rules: what
/// `gitops-lint graph` needs.
pub fn load(opts: &Options) -> Result<(Project, Config), Error> {
    let p = prepare(opts, &mut Timer::new(false))?;
    Ok((p.project, p.config))
}

/// Runs a check.
pub fn run(opts: &Options) -> Result<Report, Error> {
    match opts.jobs {
        Some(n) => {
            let pool = rayon::ThreadPoolBuilder::new()
                .num_threads(n.max(1))
                .build()
                .map_err(|e| Error::Usage(format!("cannot start {n} worker threads: {e}")))?;
            pool.install(|| run_inner(opts))
        }
        None => run_inner(opts),
    }
}

fn run_inner(opts: &Options) -> Result<Report, Error> {
    let started = Instant::now();
    let mut timer = Timer::new(opts.timings);
    if !opts.parse_only {
        // The shipped pack is compiled while the files are walked (on a thread the walk
        // leaves idle), not when the first rule needs it.
        // A pack that fails to compile (a build bug) panics again, with its message, where the
        // rules need it: not in this job, where a panic would abort the process.
        rayon::spawn(|| {
            let _ = std::panic::catch_unwind(crate::policy::run::warm_up);
        });
    }
    let Prepared {
        project,
        config,
        report_files,
        load_findings,
        config_path,
        reuse,
    } = prepare(opts, &mut timer)?;
    let user_policies = if opts.parse_only {
        None
    } else {
        load_user_policies(&opts.policy, &config, &config_path)?
    };
    let scope = (!report_files.is_empty()).then(|| Scope::new(&project.root, &report_files));
    let mut report = if opts.parse_only {
        Report {
            project,
            config,
            diagnostics: Vec::new(),
            notes: Vec::new(),
            summary: Summary::default(),
        }
    } else {
        check_project(
            (project, load_findings),
            config,
            user_policies.as_ref(),
            scope.as_ref(),
            opts.cache.as_deref().zip(reuse),
            &mut timer,
        )
    };
    if let Some(scope) = &scope {
        if opts.parse_only {
            let project = &report.project;
            report
                .diagnostics
                .retain(|d| scope.contains(&project.source(d.span.file).path));
        }
    }
    summarize(&mut report, started);
    report.summary.phases = timer.phases;
    report.summary.rule_times = timer.rule_times;
    Ok(report)
}

/// Compiles the user's policies: `--policy` paths and the config's `policies:`.
fn load_user_policies(
    args: &PolicyArgs,
    config: &Config,
    config_path: &Option<PathBuf>,
) -> Result<Option<crate::policy::run::UserPolicies>, Error> {
    use crate::policy::{self, CompileOptions};
    let mut paths = args.paths.clone();
    let base = config_path
        .as_ref()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    paths.extend(config.policies.iter().map(|p| base.join(p)));
    if paths.is_empty() {
        return Ok(None);
    }
    let files = policy::collect_rego_files(&paths).map_err(|e| Error::Policy(Box::new(e)))?;
    let data = policy::load_data_dirs(&args.data).map_err(|e| Error::Policy(Box::new(e)))?;
    let set = policy::PolicySet::compile(
        &files,
        &data,
        &CompileOptions {
            rego_version: args.rego_version,
            timeout: args.timeout.unwrap_or(policy::DEFAULT_TIMEOUT),
        },
    )
    .map_err(|e| Error::Policy(Box::new(e)))?;
    Ok(Some(policy::run::UserPolicies {
        set,
        namespaces: if args.namespaces.is_empty() {
            vec!["main".to_string()]
        } else {
            args.namespaces.clone()
        },
        all_namespaces: args.all_namespaces,
        combine: args.combine,
    }))
}

#[derive(Clone)]
struct Loaded {
    source: SourceFile,
    docs: Vec<Document>,
    findings: Vec<(&'static str, Finding)>,
}

/// What loading keeps of the files beyond what the built-in rules read.
#[derive(Clone, Copy)]
pub(crate) struct Keep {
    /// Every object's payload: user policies may read any field of any object.
    pub payloads: bool,
    /// Every Helm values file's values. Without, a values file keeps only its image tags,
    /// unless it is in the folder of a chart with default values (`values.yaml`), where
    /// chart sources layer it over them and read it whole (see `model::resolve`).
    pub values: bool,
}

/// Reads and parses files in parallel into a [`Project`], keeping YAML and I/O problems.
fn load_project(
    root: PathBuf,
    walk::Discovered {
        found,
        problems,
        with_templates,
    }: walk::Discovered,
    overlay: &std::collections::BTreeMap<String, String>,
    keep: Keep,
    cache: Option<&ParseCache>,
) -> (Project, Vec<(&'static str, Finding)>, Option<cache::Reuse>) {
    // (relative path, its path when not under the root as given (see `walk::Found`), why it
    // cannot be read and whether that is a deliberate skip)
    type Entry = (String, Option<PathBuf>, Option<(String, bool)>);
    let mut entries: Vec<Entry> = found.into_iter().map(|f| (f.rel, f.at, None)).collect();
    // A text given for a file not on disk (`--stdin-filename` of a new file) is checked too.
    if !overlay.is_empty() {
        let on_disk: HashSet<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        let new: Vec<String> = overlay
            .keys()
            .filter(|rel| !on_disk.contains(rel.as_str()))
            .cloned()
            .collect();
        for rel in new {
            entries.push((rel, None, None));
        }
    }
    entries.extend(
        problems
            .into_iter()
            .map(|p| (p.rel, Some(p.abs), Some((p.reason, p.skipped)))),
    );
    entries.sort_by(|a, b| a.0.cmp(&b.0));
    entries.dedup_by(|a, b| a.0 == b.0);

    let shared_root: Arc<Path> = root.as_path().into();
    let (loaded, reuse): (Vec<Loaded>, _) = match cache {
        Some(cache) => {
            let entries = entries
                .into_iter()
                .map(|(rel, at, problem)| {
                    let abs = at.unwrap_or_else(|| root.join(&rel));
                    (rel, abs, problem)
                })
                .collect();
            let (loaded, reuse) = cache.load(&root, entries, overlay, keep.payloads);
            (loaded, Some(reuse))
        }
        None => {
            let defaults = dirs_with_chart_defaults(entries.iter().map(|e| e.0.as_str()));
            let keeps: Vec<Keep> = entries
                .iter()
                .map(|e| Keep {
                    values: keep.values
                        || defaults.contains(e.0.rsplit_once('/').map_or("", |(dir, _)| dir)),
                    ..keep
                })
                .collect();
            drop(defaults);
            (
                entries
                    .into_par_iter()
                    .zip(keeps)
                    .enumerate()
                    // Files of one folder are alike and sorted together (a folder of large
                    // ConfigMaps): split into small tasks, so that no thread is left with a
                    // long run of large files while the others wait.
                    .with_max_len(LOAD_TASK_FILES)
                    .map(|(i, ((rel, at, problem), keep))| {
                        let id = FileId(u32::try_from(i).unwrap_or(u32::MAX));
                        let abs = at.unwrap_or_else(|| root.join(&rel));
                        // Located under the shared root on the thread that made the path,
                        // which then reuses its memory.
                        let mut loaded = load_one(id, rel, abs, problem, overlay, keep);
                        loaded.source = loaded.source.under(&shared_root);
                        loaded
                    })
                    .collect(),
                None,
            )
        }
    };

    let mut files = Vec::with_capacity(loaded.len());
    let mut docs = Vec::with_capacity(loaded.iter().map(|l| l.docs.len()).sum());
    let mut findings = Vec::new();
    for l in loaded {
        // The cache's files are located here; the others already are.
        files.push(l.source.under(&shared_root));
        docs.extend(l.docs);
        findings.extend(l.findings);
    }
    let templates = read_templates(&root, &shared_root, &files, &with_templates);
    let git_origin = crate::model::repo::git_origin(&root);
    let mut project = Project::new(root, SourceDb::with_templates(files, templates), docs);
    project.git_origin = git_origin;
    project.on_disk = true;
    (project, findings, reuse)
}

/// Files loaded in one task at most (see [`load_project`]).
const LOAD_TASK_FILES: usize = 8;

/// One file: its overlay text if it has one, else the file on disk.
fn load_one(
    id: FileId,
    rel: String,
    abs: PathBuf,
    problem: Option<(String, bool)>,
    overlay: &std::collections::BTreeMap<String, String>,
    keep: Keep,
) -> Loaded {
    /// The read buffer a thread keeps between files, when not larger than this.
    const KEPT_BUFFER_BYTES: usize = 4 * 1024 * 1024;
    thread_local! {
        static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if let Some(text) = overlay.get(&rel) {
        return parse_file(id, rel, abs, text.clone());
    }
    if let Some(problem) = problem {
        return unreadable(id, rel, abs, problem);
    }
    READ_BUFFER.with_borrow_mut(|buffer| {
        let loaded = match crate::source::read_text_into(&abs, buffer) {
            Ok((text, stamp)) => load_text(id, rel, abs, text, stamp, keep),
            Err(reason) => unreadable(id, rel, abs, (reason, false)),
        };
        if buffer.capacity() > KEPT_BUFFER_BYTES {
            *buffer = Vec::new();
        }
        loaded
    })
}

/// A file read from disk: parsed, and kept whole only when something reads its text again.
fn load_text(
    id: FileId,
    rel: String,
    abs: PathBuf,
    text: &str,
    stamp: crate::source::Stamp,
    keep: Keep,
) -> Loaded {
    let keep_payloads = keep.payloads;
    let (mut docs, findings) = parse_text(id, &rel, text);
    // A values file that may hold a cloudflared route keeps its tree and text: the route is
    // read from them (`model::edges`).
    let may_hold_routes = docs.iter().any(|d| d.kind == model::DocKind::HelmValues)
        && model::edges::text_may_hold_routes(text);
    if !keep_payloads {
        for d in &mut docs {
            model::k8s::drop_unread_payloads(d);
            if d.kind == model::DocKind::HelmValues && !may_hold_routes {
                let values = model::values::Values::from_node(&d.root, None);
                d.kept = Some(model::KeptValues::new(values, keep.values));
                d.root = std::sync::Arc::new(crate::yaml::Node::new(
                    d.root.span,
                    crate::yaml::Value::Map(Box::default()),
                ));
            }
        }
    }
    // Plain manifests, charts' `Chart.yaml`, Helm values files and Argo CD objects are read
    // through their trees (values files through their values); their text is needed again
    // only to show a finding or build a fix, so it is read again then. Argo CD objects keep
    // theirs when user policies run (`data.gitops` may place every Application by line).
    // Suppression comments are parsed from the text, so files with one keep theirs. A file
    // that changed while read keeps it.
    let releasable = |kind: model::DocKind| match kind {
        model::DocKind::K8sObject | model::DocKind::HelmChart => true,
        model::DocKind::HelmValues => !may_hold_routes,
        model::DocKind::Application
        | model::DocKind::ApplicationSet
        | model::DocKind::AppProject => !keep_payloads,
        _ => false,
    };
    let release = docs
        .first()
        .is_some_and(|first| docs.iter().all(|d| d.kind == first.kind) && releasable(first.kind))
        && !text.contains(suppress::MARKER)
        && text.len() as u64 == stamp.0;
    let source = if release {
        SourceFile::released(id, rel, abs, stamp)
    } else {
        SourceFile::new(id, rel, abs, text.to_string())
    };
    Loaded {
        source,
        docs,
        findings,
    }
}

/// Folders of the charts among `paths` that have default values (`values.yaml`).
fn dirs_with_chart_defaults<'a>(paths: impl Iterator<Item = &'a str> + Clone) -> HashSet<&'a str> {
    let with_values: HashSet<&str> = paths
        .clone()
        .filter_map(|p| {
            let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
            matches!(name, "values.yaml" | "values.yml").then_some(dir)
        })
        .collect();
    chart_dirs(paths)
        .into_iter()
        .filter(|d| with_values.contains(d))
        .collect()
}

/// Folders of the `Chart.yaml` files among `paths`.
fn chart_dirs<'a>(paths: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    paths
        .filter_map(|p| {
            let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
            matches!(name, "Chart.yaml" | "Chart.yml").then_some(dir)
        })
        .collect()
}

/// The templates of the discovered charts (see [`walk::chart_templates`]), ids after `files`.
/// A template that is not UTF-8 text is left out, as Helm's renderer would fail on it. Only
/// the charts with a `templates` folder the walk met are listed (`with_templates`, sorted):
/// most charts of a large repository have none.
fn read_templates(
    root: &Path,
    shared_root: &Arc<Path>,
    files: &[SourceFile],
    with_templates: &[String],
) -> Vec<SourceFile> {
    let mut dirs = chart_dirs(files.iter().map(|f| f.path.as_str()));
    dirs.retain(|d| {
        with_templates
            .binary_search_by(|t| t.as_str().cmp(d))
            .is_ok()
    });
    let mut found = walk::chart_templates(root, &dirs);
    found.retain(|f| {
        files
            .binary_search_by(|x| x.path.as_str().cmp(&f.rel))
            .is_err()
    });
    let texts: Vec<Option<String>> = found
        .par_iter()
        .map(|f| crate::source::read_text(&f.abs(root)).ok())
        .collect();
    found
        .into_iter()
        .zip(texts)
        .filter_map(|(f, t)| Some((f, t?)))
        .enumerate()
        .map(|(i, (f, text))| {
            let id = FileId(u32::try_from(files.len() + i).unwrap_or(u32::MAX));
            let abs = f.abs(root);
            SourceFile::new(id, f.rel, abs, text).under(shared_root)
        })
        .collect()
}

/// A file that cannot be read (`skipped`: deliberately, such as a link out of the root).
fn unreadable(id: FileId, rel: String, abs: PathBuf, (reason, skipped): (String, bool)) -> Loaded {
    let finding = if skipped {
        // A deliberate skip (a link out of the root): said, but not a failure.
        Finding::new(
            format!("`{rel}` was not read: {reason}"),
            Span::empty(id, 0),
        )
        .with_severity(Severity::Info)
        .with_help("Copy the file into the repository if Argo CD reads it from here.")
    } else {
        Finding::new(format!("cannot read `{rel}`: {reason}"), Span::empty(id, 0))
            .with_help("Fix the file or exclude it in `.gitops-lint.yaml`; it was not checked.")
    };
    Loaded {
        source: SourceFile::unreadable(id, rel, abs, (!skipped).then_some(reason)),
        docs: Vec::new(),
        findings: vec![("io/unreadable", finding)],
    }
}

/// Files larger than this are checked in streaming mode: YAML syntax and duplicate keys only,
/// without building a tree, so memory stays at about the file's size.
pub const LARGE_FILE_BYTES: usize = 32 * 1024 * 1024;

fn parse_file(id: FileId, rel: String, abs: PathBuf, text: String) -> Loaded {
    let (docs, findings) = parse_text(id, &rel, &text);
    Loaded {
        source: SourceFile::new(id, rel, abs, text),
        docs,
        findings,
    }
}

/// The documents of a file's text, classified, and its YAML problems.
fn parse_text(id: FileId, rel: &str, text: &str) -> (Vec<Document>, Vec<(&'static str, Finding)>) {
    let mut findings = Vec::new();
    let mut docs = Vec::new();
    let parsed = if text.len() > LARGE_FILE_BYTES {
        findings.push((
            "yaml/resource-limit",
            Finding::new(
                format!(
                    "`{rel}` is {} MiB, more than the {} MiB analysed in full: only its YAML syntax and keys were checked, no rule ran on it",
                    text.len() / (1024 * 1024),
                    LARGE_FILE_BYTES / (1024 * 1024)
                ),
                Span::empty(id, 0),
            )
            .with_severity(Severity::Warning)
            .with_help("Split the file, or exclude it if Argo CD does not read it."),
        ));
        yaml::ParsedYaml {
            docs: Vec::new(),
            errors: yaml::validate_stream(id, text),
        }
    } else {
        yaml::parse(id, text)
    };
    for e in yaml::limit_duplicate_keys(parsed.errors) {
        let (rule, mut f) = match e.kind {
            YamlErrorKind::Syntax => ("yaml/syntax", Finding::new(e.message, e.span)),
            YamlErrorKind::ResourceLimit => {
                ("yaml/resource-limit", Finding::new(e.message, e.span))
            }
            YamlErrorKind::DuplicateKey { first } => (
                "yaml/duplicate-key",
                Finding::new(e.message, e.span).with_label(first, "first defined here"),
            ),
        };
        if rule == "yaml/syntax" && text.contains("{{") {
            f = f.with_help("This file holds `{{`, so it may be a Go template: Helm templates belong in a chart's `templates/` folder; otherwise exclude it in `.gitops-lint.yaml`.");
        }
        findings.push((rule, f));
    }
    for d in parsed.docs {
        let kind = model::classify(rel, &d.root);
        docs.push(Document {
            file: id,
            index: d.index,
            span: d.span,
            root: std::sync::Arc::new(d.root),
            kind,
            kept: None,
        });
    }
    (docs, findings)
}

/// Adds the time since `started` (when timing) to a rule's total, in nanoseconds.
fn add_elapsed(total: &AtomicU64, started: Option<Instant>) {
    if let Some(started) = started {
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        total.fetch_add(nanos, Ordering::Relaxed);
    }
}

/// Frees `value` on another thread: the run's facts and Rego engines are millions of small
/// allocations, and the report need not wait for them (a process that exits first does not
/// free them at all).
fn drop_in_background<T: Send + 'static>(value: T) {
    // A thread that cannot start drops its closure, and so the value, here.
    let _ = std::thread::Builder::new()
        .name("gitops-lint-drop".into())
        .spawn(move || drop(value));
}

/// Runs every enabled rule, Rust and Rego, on a loaded project and builds the report (before
/// path filtering). One path for every rule: each document is offered to each rule that
/// applies to it, then each rule runs once on the whole repository; every finding is then
/// stamped and suppressed the same way.
fn check_project(
    loaded: (Project, Vec<(&'static str, Finding)>),
    config: Config,
    user_policies: Option<&crate::policy::run::UserPolicies>,
    scope: Option<&Scope>,
    memo: Option<(&ParseCache, cache::Reuse)>,
    timer: &mut Timer,
) -> Report {
    let (project, load_findings) = loaded;
    let options = config.rule_options();
    let enabled = |id: &str| config.level(id) != Some(Level::Off);
    let (raw, notes, related) = {
        let mut model = Model::new(&project, config.settings());
        // A one-shot run whose policies do not read Helm values keeps, after resolution, only
        // the effective values a later step reads (the language server's hovers show them).
        if memo.is_none()
            && user_policies.is_none()
            && !crate::policy::run::pack_reads_values(&enabled)
        {
            model = model.dropping_unread_values();
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
        if timer.enabled {
            // Built here rather than on first use, so that they have their own line. A panic
            // leaves them unbuilt: the first rule that reads them reports it, as without timing.
            let _ = catch_unwind(AssertUnwindSafe(|| {
                model.argocd();
                model.k8s();
            }));
            timer.mark("model");
        }
        let timing = timer.enabled;
        let spent: Vec<AtomicU64> = rules.iter().map(|_| AtomicU64::new(0)).collect();
        let memo_keys: Vec<Option<String>> = match memo {
            // The rule's configured options are part of its key.
            Some(_) => rules
                .iter()
                .map(|r| {
                    let options = serde_json::Value::Object(cx.options(r.meta().id).clone());
                    r.document_memo_key().map(|k| format!("{k} {options}"))
                })
                .collect(),
            None => vec![None; rules.len()],
        };
        let memo_key = memo_keys
            .iter()
            .flatten()
            .map(String::as_str)
            .collect::<Vec<_>>()
            .join("\n");
        let kept: &[Option<cache::FileMemo>] = match &memo {
            Some((_, reuse)) if reuse.key == memo_key => &reuse.files,
            _ => &[],
        };
        let memoizing = memo_keys.iter().any(Option::is_some);
        // A document's findings, and those of the rules with a memo key when computed here
        // for a document as parsed (to keep for the next run).
        let doc_findings = |(i, doc): (usize, &Document)| {
            let check = |rule: &&dyn Rule| {
                if !rule.applies(doc, &cx) {
                    return Vec::new();
                }
                match catch_unwind(AssertUnwindSafe(|| rule.check_emitting(doc, &cx))) {
                    Ok(found) => found,
                    Err(p) => vec![panic_finding(rule.meta().id, doc.anchor_span(), &p)],
                }
            };
            let as_parsed = !project.transformed.contains(&i);
            let reused = kept
                .get(doc.file.0 as usize)
                .and_then(Option::as_ref)
                .filter(|_| as_parsed)
                .and_then(|m| m.iter().find(|(index, _)| *index == doc.index))
                .map(|(_, found)| found);
            let mut out = Vec::new();
            let mut fresh = (memoizing && as_parsed && reused.is_none()).then(Vec::new);
            let mut memoized = 0;
            for ((rule, key), spent) in rules.iter().zip(&memo_keys).zip(&spent) {
                let started = timing.then(Instant::now);
                if key.is_none() {
                    out.extend(check(rule));
                    add_elapsed(spent, started);
                    continue;
                }
                match reused {
                    Some(r) => out.extend(r.get(memoized).into_iter().flatten().cloned()),
                    None => {
                        let found = check(rule);
                        if let Some(fresh) = &mut fresh {
                            fresh.push(found.clone());
                        }
                        out.extend(found);
                    }
                }
                add_elapsed(spent, started);
                memoized += 1;
            }
            (out, fresh)
        };
        let document_pass = || -> (Vec<Emitted>, Vec<Option<cache::DocFindings>>) {
            let docs = project.docs.par_iter().enumerate();
            if memoizing {
                let per_doc: Vec<_> = docs.map(doc_findings).collect();
                let mut fresh = Vec::with_capacity(per_doc.len());
                let raw = per_doc
                    .into_iter()
                    .flat_map(|(out, kept)| {
                        fresh.push(kept);
                        out
                    })
                    .collect();
                (raw, fresh)
            } else {
                (
                    docs.flat_map_iter(|d| doc_findings(d).0).collect(),
                    Vec::new(),
                )
            }
        };
        // The Argo CD model, which most repository rules read and few document rules do, is
        // built on one thread while the documents are checked on the others. Its construction
        // runs no parallel work, so this thread never takes a document task that would wait
        // for it (a re-entrant initialisation).
        let (mut raw, fresh) = if timer.enabled {
            document_pass()
        } else {
            // A panic leaves the model unbuilt: the first rule that reads it reports it.
            let build_model = || {
                let _ = catch_unwind(AssertUnwindSafe(|| {
                    model.argocd();
                }));
            };
            rayon::join(build_model, document_pass).1
        };
        timer.mark("rules: documents");
        if let Some((cache, reuse)) = &memo {
            let reusable = rules
                .iter()
                .zip(&memo_keys)
                .all(|(r, k)| k.is_none() || r.document_findings_reusable());
            if memoizing && reusable {
                cache.keep_findings(reuse, memo_key, kept_findings(&project, kept, fresh));
            }
        }
        // After the document pass: rules of the whole repository (and reports that gather
        // what the document pass saw).
        let project_findings: Vec<Emitted> = rules
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
            .collect();
        raw.extend(project_findings);
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
            // User packages share one id: their times are summed.
            let mut by_id: std::collections::BTreeMap<&'static str, f64> = Default::default();
            for (r, t) in rules.iter().zip(&spent) {
                *by_id.entry(r.meta().id).or_default() += t.load(Ordering::Relaxed) as f64 / 1e6;
            }
            let mut times: Vec<(&'static str, f64)> = by_id.into_iter().collect();
            times.sort_by(|a, b| b.1.total_cmp(&a.1));
            timer.rule_times = times;
        }
        let related = scope.map(|s| s.related_files(&model)).unwrap_or_default();
        drop_in_background((model.into_facts(), policy_rules));
        (raw, notes, related)
    };
    timer.mark("rules: repository");

    // Chart templates are Go templates: no fix edits them (a rendered node's span is where
    // its text came from, not YAML that can be rewritten).
    let yaml_files = project.sources.files().len();
    let mut diagnostics: Vec<Diagnostic> = raw
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

    let suppressed = apply_suppressions(&project, &config, &mut diagnostics);
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
        let _ = project.source(*f).lines();
    });
    timer.mark("suppress, sort");
    if let Some(scope) = scope {
        let in_scope =
            |file: FileId| related.contains(&file) || scope.contains(&project.source(file).path);
        diagnostics.retain(|d| {
            in_scope(d.span.file)
                || d.labels
                    .iter()
                    .any(|l| scope.contains(&project.source(l.span.file).path))
        });
    }
    Report {
        project,
        config,
        diagnostics,
        notes,
        summary: Summary {
            suppressed,
            ..Summary::default()
        },
    }
}

/// The findings to keep for the next run, by file: those kept before (for files taken from the
/// cache) and those computed for documents without them.
fn kept_findings(
    project: &Project,
    kept: &[Option<cache::FileMemo>],
    fresh_per_doc: Vec<Option<cache::DocFindings>>,
) -> std::collections::HashMap<FileId, cache::FileMemo> {
    let mut fresh: std::collections::HashMap<FileId, Vec<(usize, cache::DocFindings)>> =
        std::collections::HashMap::new();
    for (doc, found) in project.docs.iter().zip(fresh_per_doc) {
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

/// Findings of one rule at one place are one finding: two GitLab jobs sharing an anchor, or
/// two Applications deploying one values file, give one finding whose labels name each job or
/// Application (sorted input: same rule and span are adjacent). A user policy's results stay
/// as the policy wrote them, as conftest reports them.
fn merge_same_place(diagnostics: Vec<Diagnostic>) -> Vec<Diagnostic> {
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

/// What a run reports on when files or folders are given: findings located there, findings
/// with a label there, and findings in the files their Applications read (values files,
/// kustomizations, manifests) and in their AppProjects: what pre-commit must see when a staged
/// file breaks another one.
pub(crate) struct Scope {
    files: HashSet<String>,
    /// Root-relative folders, with a trailing `/`.
    folders: Vec<String>,
}

impl Scope {
    fn new(root: &Path, paths: &[PathBuf]) -> Scope {
        let (dirs, files): (Vec<&PathBuf>, Vec<&PathBuf>) = paths.iter().partition(|f| f.is_dir());
        Scope {
            files: files.iter().map(|f| walk::relative(root, f)).collect(),
            folders: dirs
                .iter()
                .map(|d| format!("{}/", walk::relative(root, d)))
                .collect(),
        }
    }

    fn contains(&self, path: &str) -> bool {
        self.files.contains(path) || self.folders.iter().any(|f| path.starts_with(f.as_str()))
    }

    /// Files that the Applications defined in scope read, and their AppProjects' files.
    fn related_files(&self, model: &Model<'_>) -> HashSet<FileId> {
        let project = model.project;
        let mut related = HashSet::new();
        let mut projects = HashSet::new();
        for app in &model.argocd().apps {
            let doc = &project.docs[app.doc];
            if !self.contains(&project.source(doc.file).path) {
                continue;
            }
            for s in &app.sources {
                related.extend(s.files.iter().copied());
            }
            if let Some(p) = &app.project {
                projects.insert(p.value.clone());
            }
        }
        for d in project.docs_of(model::DocKind::AppProject) {
            if d.name().is_some_and(|n| projects.contains(n)) {
                related.insert(d.file);
            }
        }
        related
    }
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

/// Gives a finding its rule id and effective severity; `None` when the rule is off.
fn stamp(rule: &'static str, f: Finding, config: &Config) -> Option<Diagnostic> {
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

/// Drops suppressed diagnostics and adds `lint/unused-suppression` ones. Returns the count
/// of suppressed diagnostics.
fn apply_suppressions(
    project: &Project,
    config: &Config,
    diagnostics: &mut Vec<Diagnostic>,
) -> usize {
    let mut directives: Vec<Vec<Directive>> = project
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
        let line = project
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
    let unused_level = config.level("lint/unused-suppression");
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
                if let Some(d) = stamp("lint/unused-suppression", f, config) {
                    diagnostics.push(d);
                }
            }
        }
    }
    suppressed
}

/// Fills in the summary: file and document counts, then the diagnostic counts.
fn summarize(report: &mut Report, started: Instant) {
    let files = report.project.sources.files();
    report.summary.files = files.len();
    report.summary.unreadable = files.iter().filter(|f| f.unreadable.is_some()).count();
    report.summary.documents = report.project.docs.len();
    report.recount();
    report.summary.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
}

/// Checks in-memory files `(relative path, text)` as one repository: the fixture harness and
/// fix verification use it.
#[must_use]
pub fn check_texts(files: &[(&str, &str)], config: Config) -> Report {
    let started = Instant::now();
    let mut sorted: Vec<(&str, &str)> = files.to_vec();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    // Files under a chart's `templates/` are templates, as on disk.
    let charts = chart_dirs(sorted.iter().map(|f| f.0));
    let is_template = |rel: &str| {
        charts.iter().any(|d| {
            let prefix = if d.is_empty() {
                "templates/".to_string()
            } else {
                format!("{d}/templates/")
            };
            rel.starts_with(&prefix)
        })
    };
    let (template_files, sorted): (Vec<_>, Vec<_>) =
        sorted.into_iter().partition(|f| is_template(f.0));
    let mut sources = Vec::new();
    let mut docs = Vec::new();
    let mut findings = Vec::new();
    for (i, (rel, text)) in sorted.iter().enumerate() {
        let id = FileId(u32::try_from(i).unwrap_or(u32::MAX));
        let l = parse_file(
            id,
            (*rel).to_string(),
            PathBuf::from(rel),
            (*text).to_string(),
        );
        sources.push(l.source);
        docs.extend(l.docs);
        findings.extend(l.findings);
    }
    let templates = template_files
        .iter()
        .enumerate()
        .map(|(i, (rel, text))| {
            let id = FileId(u32::try_from(sources.len() + i).unwrap_or(u32::MAX));
            SourceFile::new(
                id,
                (*rel).to_string(),
                PathBuf::from(rel),
                (*text).to_string(),
            )
        })
        .collect();
    let project = Project::new(
        PathBuf::from("."),
        SourceDb::with_templates(sources, templates),
        docs,
    );
    let mut report = check_project(
        (project, findings),
        config,
        None,
        None,
        None,
        &mut Timer::new(false),
    );
    summarize(&mut report, started);
    report
}
