//! The pipeline: discover → read and parse (parallel) → classify → run rules (parallel) →
//! stamp ids and severities → suppress → filter → sort → [`Report`].

use std::path::PathBuf;
use std::time::Instant;

use crate::config::{self, Config, ConfigErrors};
use crate::diagnostic::{Diagnostic, Finding, Severity};
use crate::model::Repository;
use crate::source::SourceDb;

mod base;
mod cache;
pub mod diff;
mod dispatch;
mod finish;
mod load;
mod read;
mod root;
mod scope;
mod stamp;
mod suppress;
mod timer;

pub use cache::{CacheStats, ParseCache};
pub use read::LARGE_FILE_BYTES;
pub use root::{Target, absolute, discover, find_root, relative_to, resolve_root};
pub use timer::Phase;

use load::{Prepared, load_user_policies, prepare};
use read::parse_file;
use scope::Scope;
use timer::Timer;

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
    /// The most files and folders the walk visits (`None`: no limit); past it the run is a
    /// usage error. The language server sets it: it finds its roots itself.
    pub walk_limit: Option<usize>,
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

pub struct Report {
    pub repo: Repository,
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
    /// Adds a finding the engine's caller made (`--fix`'s failures), stamped like every
    /// rule's (dropped when the rule is off), in report order.
    pub fn add(&mut self, rule: &'static str, finding: crate::diagnostic::Finding) {
        if let Some(d) = stamp::stamp(rule, finding, &self.config) {
            let key = |d: &Diagnostic| (d.span.file, d.span.start, d.rule.clone());
            let at = self.diagnostics.partition_point(|e| key(e) <= key(&d));
            self.diagnostics.insert(at, d);
            self.recount();
        }
    }

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

/// Loads the repository of `opts` (walk, read, parse, classify) without running rules: what
/// `gitops-lint graph` needs.
pub fn load(opts: &Options) -> Result<(Repository, Config), Error> {
    let p = prepare(opts, &mut Timer::new(false))?;
    Ok((p.repo, p.config))
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
        repo,
        config,
        report_files,
        load_findings,
        config_path,
        reuse,
        retention,
    } = prepare(opts, &mut timer)?;
    let user_policies = if opts.parse_only {
        None
    } else {
        load_user_policies(&opts.policy, &config, &config_path, &repo.root)?
    };
    let scope = (!report_files.is_empty()).then(|| Scope::new(&repo.root, &report_files));
    let mut report = if opts.parse_only {
        Report {
            repo,
            config,
            diagnostics: Vec::new(),
            notes: Vec::new(),
            summary: Summary::default(),
        }
    } else {
        check_project(
            (repo, load_findings),
            config,
            &retention,
            user_policies.as_ref(),
            scope.as_ref(),
            opts.cache.as_deref().zip(reuse),
            &mut timer,
        )
    };
    if let Some(scope) = &scope {
        if opts.parse_only {
            let repo = &report.repo;
            report
                .diagnostics
                .retain(|d| scope.contains(&repo.source(d.span.file).path));
        }
    }
    summarize(&mut report, started);
    report.summary.phases = timer.phases;
    report.summary.rule_times = timer.rule_times;
    Ok(report)
}

/// Runs every enabled rule, Rust and Rego, on a loaded project and builds the report (before
/// path filtering). One path for every rule: each document is offered to each rule that
/// applies to it, then each rule runs once on the whole repository; every finding is then
/// stamped and suppressed the same way.
fn check_project(
    loaded: (Repository, Vec<(&'static str, Finding)>),
    config: Config,
    retention: &crate::repo::retention::Retention,
    user_policies: Option<&crate::policy::run::UserPolicies>,
    scope: Option<&Scope>,
    memo: Option<(&ParseCache, cache::Reuse)>,
    timer: &mut Timer,
) -> Report {
    let (repo, load_findings) = loaded;
    let found = dispatch::run_rules(&repo, &config, retention, user_policies, scope, memo, timer);
    timer.mark("rules: repository");
    finish::finish(repo, config, found, load_findings, scope, timer)
}

/// Fills in the summary: file and document counts, then the diagnostic counts.
fn summarize(report: &mut Report, started: Instant) {
    let files = report.repo.sources.files();
    report.summary.files = files.len();
    report.summary.unreadable = files.iter().filter(|f| f.unreadable.is_some()).count();
    report.summary.documents = report.repo.docs.len();
    report.recount();
    report.summary.elapsed_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
}

/// In-memory files `(relative path, text)` read and parsed as one repository, with what
/// reading them found.
fn memory_repository(files: &[(&str, &str)]) -> (Repository, Vec<(&'static str, Finding)>) {
    let layout = crate::repo::memory::Layout::new(files, std::path::Path::new(""));
    let mut sources = Vec::new();
    let mut docs = Vec::new();
    let mut findings = Vec::new();
    for (id, rel, text) in layout.parsed {
        let l = parse_file(id, rel.to_string(), PathBuf::from(rel), text.to_string());
        sources.push(l.source);
        docs.extend(l.docs);
        findings.extend(l.findings);
    }
    let templates = layout.templates;
    let repo = Repository::new(
        PathBuf::from("."),
        SourceDb::with_templates(sources, templates),
        docs,
    );
    (repo, findings)
}

/// Checks in-memory files `(relative path, text)` as one repository: the fixture harness and
/// fix verification use it.
#[must_use]
pub fn check_texts(files: &[(&str, &str)], config: Config) -> Report {
    let started = Instant::now();
    let (repo, findings) = memory_repository(files);
    // Nothing was dropped while loading these texts; the model may still drop the effective
    // values no rule reads.
    let retention = load::retention(&config, false, false);
    let mut report = check_project(
        (repo, findings),
        config,
        &retention,
        None,
        None,
        None,
        &mut Timer::new(false),
    );
    summarize(&mut report, started);
    report
}
