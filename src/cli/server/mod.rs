//! `gitops-lint server`: the Language Server Protocol over standard input and output.
//!
//! One thread reads and frames messages, the main loop answers them, one worker lints. A lint
//! covers the whole repository the document belongs to (root discovery as on the command
//! line), reading open documents from an overlay; its findings are published per file, so an
//! edit to a values file shows on every file it affects. Edits are debounced, and a run that
//! finishes after a newer one was scheduled is dropped.
//!
//! A file with no repository above it but the file-system root or the home folder is checked
//! alone (with the other open files there), never as part of that folder; the walk of a
//! repository stops at [`WALK_LIMIT`] entries. A check runs on threads with large stacks
//! ([`WORKER_STACK`]) and a panic in it becomes a diagnostic on the open files: the server
//! keeps running. A stack overflow or an allocation failure still aborts the process, as Rust
//! aborts on both, so the analyses bound themselves: YAML nesting, Go-template parse and
//! evaluation depth (on a heap-grown stack) and value depth, Rego expression depth (regorus)
//! and recursion (refused at load); `depth_budgets.rs` runs each at its limit on a sixteenth
//! of the worker's stack. Memory has budgets (file sizes, alias expansion, renderings, chart
//! archives) but no hard cap, and a user policy the watchdog stops ends the process (exit 2):
//! neither can be contained in-process.

// `lsp_types::Uri` caches parsed parts in a `Cell`, but its hash and order come from its text
// alone; LSP's own `WorkspaceEdit` keys a map by it (rust-analyzer allows this lint too).
#![allow(clippy::mutable_key_type)]

mod features;
mod position;
mod publish;
mod repository;
mod schema_path;
mod transport;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lsp_server::{ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types::notification::{self as notif, Notification as _};
use lsp_types::request::{self as req, Request as _};
use lsp_types::{DiagnosticSeverity, PublishDiagnosticsParams, Uri};

use gitops_lint::engine::{self, Options, Report};
use gitops_lint::source::walk;

use position::{path_to_uri, uri_to_path};
use publish::{diagnostics_by_file, file_errors, initialize_result, to_json};
use repository::{is_checked, is_no_repository, on_disk, root_of, walk_filter};

/// Quiet time after the last keystroke before a re-lint, unless `debounceMs` is set. Short: a
/// re-lint of a 1000-app repository takes about 130 ms (BENCHMARKS.md), so diagnostics follow an
/// edit within 200 ms, and the worker runs only the newest pending job when typing outpaces it.
const DEBOUNCE: Duration = Duration::from_millis(50);

/// The most files and folders the walk of one repository visits: a root found for an editor's
/// file may be a large folder that is no repository.
const WALK_LIMIT: usize = 1_000_000;

/// The stack of the lint worker and of its threads (the default is 2 MiB): deep recursion in a
/// check overflows it later, since an overflow aborts the process.
const WORKER_STACK: usize = 64 * 1024 * 1024;

/// What the reader thread and the worker send to the main loop.
pub(crate) enum Event {
    Message(Message),
    /// A frame that is not a JSON-RPC message: answered with this error.
    Malformed(Option<RequestId>, i32, String),
    /// Standard input closed.
    Closed,
    Linted(Box<Linted>),
}

pub(crate) struct Linted {
    root: PathBuf,
    generation: u64,
    result: Result<Arc<Report>, Failure>,
    /// How the run used the parse cache.
    cache: engine::CacheStats,
}

/// Why a run gave no report.
enum Failure {
    /// Problems located in files (the configuration): shown as diagnostics there.
    Files(Vec<gitops_lint::source::FileError>),
    Message(String),
    /// The check panicked: shown as a diagnostic on the open files of the root.
    Crashed(String),
}

struct LintJob {
    root: PathBuf,
    generation: u64,
    run: Run,
}

/// What a job checks.
enum Run {
    /// The repository at the job's root.
    Repository(Box<Options>),
    /// Only these open files (root-relative path, text): their root is the file-system root or
    /// the home folder, no repository.
    Lone(Vec<(String, String)>),
}

/// An open document.
struct Doc {
    text: String,
}

#[derive(Default)]
struct RootState {
    /// The newest scheduled run; results of older runs are dropped.
    generation: u64,
    /// Re-lint at this time (debounced edits).
    due: Option<Instant>,
    /// What each file was last given, so only changes are sent and fixed files are cleared.
    published: HashMap<Uri, Vec<lsp_types::Diagnostic>>,
    /// The last error shown as a message, not repeated at every keystroke.
    shown: Option<String>,
    report: Option<Arc<Report>>,
}

/// Settings from `initializationOptions`: `{"config": "path", "policy": ["dir"],
/// "debounceMs": 50}`.
#[derive(Default, serde::Deserialize)]
#[serde(default)]
struct Settings {
    config: Option<PathBuf>,
    policy: Vec<PathBuf>,
    #[serde(rename = "debounceMs")]
    debounce_ms: Option<u64>,
}

impl Settings {
    fn debounce(&self) -> Duration {
        self.debounce_ms.map_or(DEBOUNCE, Duration::from_millis)
    }
}

pub(crate) struct Server {
    out: Box<dyn std::io::Write + Send>,
    docs: HashMap<PathBuf, Doc>,
    roots: HashMap<PathBuf, RootState>,
    settings: Settings,
    jobs: mpsc::Sender<LintJob>,
    initialized: bool,
    shutdown: bool,
    /// The client can be asked to watch files (`workspace/didChangeWatchedFiles`).
    can_watch: bool,
}

/// Runs the server on standard input and output; the process's exit code.
pub fn run() -> std::process::ExitCode {
    let (events_tx, events) = mpsc::channel();
    transport::spawn_reader(std::io::stdin(), events_tx.clone());
    let code = serve(events, events_tx, Box::new(std::io::stdout()));
    std::process::ExitCode::from(code)
}

/// The main loop over `events` (messages from the reader and results from the worker); returns
/// the exit code: 0 after `shutdown` then `exit`, or when the input closes.
pub(crate) fn serve(
    events: mpsc::Receiver<Event>,
    events_tx: mpsc::Sender<Event>,
    out: Box<dyn std::io::Write + Send>,
) -> u8 {
    let jobs = spawn_worker(events_tx);
    let mut server = Server {
        out,
        docs: HashMap::new(),
        roots: HashMap::new(),
        settings: Settings::default(),
        jobs,
        initialized: false,
        shutdown: false,
        can_watch: false,
    };
    loop {
        let next_due = server.roots.values().filter_map(|r| r.due).min();
        let event = match next_due {
            Some(due) => match events.recv_timeout(due.saturating_duration_since(Instant::now())) {
                Ok(e) => e,
                Err(mpsc::RecvTimeoutError::Timeout) => {
                    server.start_due_runs();
                    continue;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return 0,
            },
            None => match events.recv() {
                Ok(e) => e,
                Err(_) => return 0,
            },
        };
        match event {
            Event::Closed => return 0,
            Event::Malformed(id, code, message) => server.send_raw_error(id, code, &message),
            Event::Linted(l) => server.linted(*l),
            Event::Message(Message::Request(r)) => server.request(r),
            Event::Message(Message::Response(_)) => {}
            Event::Message(Message::Notification(n)) => {
                if n.method == notif::Exit::METHOD {
                    return if server.shutdown { 0 } else { 1 };
                }
                server.notification(n);
            }
        }
        server.start_due_runs();
    }
}

/// The lint worker: runs the newest job of each root, skipping those a newer one replaced.
/// It keeps each repository's parsed files, so a run after an edit parses only what changed.
fn spawn_worker(events: mpsc::Sender<Event>) -> mpsc::Sender<LintJob> {
    let (tx, rx) = mpsc::channel::<LintJob>();
    let worker = move || {
        let pool = lint_pool(WORKER_STACK);
        let mut caches: HashMap<PathBuf, Arc<engine::ParseCache>> = HashMap::new();
        while let Ok(first) = rx.recv() {
            let mut pending: BTreeMap<PathBuf, LintJob> = BTreeMap::new();
            pending.insert(first.root.clone(), first);
            while let Ok(newer) = rx.try_recv() {
                pending.insert(newer.root.clone(), newer);
            }
            for (_, job) in pending {
                let cache = caches.entry(job.root.clone()).or_default().clone();
                let root = job.root.clone();
                let check = || match job.run {
                    Run::Repository(mut opts) => {
                        opts.cache = Some(cache.clone());
                        engine::run(&opts)
                    }
                    Run::Lone(files) => {
                        let files: Vec<(&str, &str)> = files
                            .iter()
                            .map(|(p, t)| (p.as_str(), t.as_str()))
                            .collect();
                        let mut report = engine::check_texts(&files, Default::default());
                        report.repo.root = root.clone();
                        Ok(report)
                    }
                };
                let result = guarded(|| match &pool {
                    Some(pool) => pool.install(check),
                    None => check(),
                });
                let done = Linted {
                    root: job.root,
                    generation: job.generation,
                    result,
                    cache: cache.stats(),
                };
                if events.send(Event::Linted(Box::new(done))).is_err() {
                    return;
                }
            }
        }
    };
    let spawned = std::thread::Builder::new()
        .name("lint".into())
        .stack_size(WORKER_STACK)
        .spawn(worker);
    if let Err(e) = spawned {
        eprintln!("error: cannot start the lint worker: {e}");
    }
    tx
}

/// The threads a check runs on, each with a stack of `stack` bytes (none when they cannot
/// start: the check then runs on the worker itself).
fn lint_pool(stack: usize) -> Option<rayon::ThreadPool> {
    rayon::ThreadPoolBuilder::new()
        .stack_size(stack)
        .build()
        .ok()
}

/// A check's outcome, a panic in it included.
fn guarded(check: impl FnOnce() -> Result<Report, engine::Error>) -> Result<Arc<Report>, Failure> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(check)) {
        Ok(Ok(report)) => Ok(Arc::new(report)),
        Ok(Err(engine::Error::Config(errors))) => Err(Failure::Files(errors.0)),
        Ok(Err(e)) => Err(Failure::Message(e.to_string())),
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| (*s).to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Err(Failure::Crashed(why))
        }
    }
}

impl Server {
    fn send(&mut self, message: Message) {
        // The client went away: the reader will see the input close and end the loop.
        let _ = message.write(&mut self.out);
    }

    fn send_raw_error(&mut self, id: Option<RequestId>, code: i32, message: &str) {
        match id {
            Some(id) => self.send(Response::new_err(id, code, message.to_string()).into()),
            None => {
                let body = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": null,
                    "error": {"code": code, "message": message},
                })
                .to_string();
                let _ = write!(self.out, "Content-Length: {}\r\n\r\n{body}", body.len())
                    .and_then(|()| self.out.flush());
            }
        }
    }

    fn reply<R: serde::Serialize>(&mut self, id: RequestId, result: R) {
        let value = serde_json::to_value(result).unwrap_or(serde_json::Value::Null);
        self.send(Response::new_ok(id, value).into());
    }

    fn notify<N: notif::Notification>(&mut self, params: N::Params) {
        self.send(Notification::new(N::METHOD.to_string(), params).into());
    }

    fn request(&mut self, r: Request) {
        let id = r.id.clone();
        if r.method == req::Initialize::METHOD {
            if self.initialized {
                return self.send(
                    Response::new_err(
                        id,
                        ErrorCode::InvalidRequest as i32,
                        "already initialized".into(),
                    )
                    .into(),
                );
            }
            let params: lsp_types::InitializeParams = match serde_json::from_value(r.params) {
                Ok(p) => p,
                Err(e) => return self.invalid_params(id, &e),
            };
            if let Some(options) = params.initialization_options {
                self.settings = serde_json::from_value(options).unwrap_or_default();
            }
            self.can_watch = params
                .capabilities
                .workspace
                .and_then(|w| w.did_change_watched_files)
                .and_then(|d| d.dynamic_registration)
                == Some(true);
            self.initialized = true;
            return self.reply(id, initialize_result());
        }
        if !self.initialized {
            return self.send(
                Response::new_err(
                    id,
                    ErrorCode::ServerNotInitialized as i32,
                    "send `initialize` first".into(),
                )
                .into(),
            );
        }
        if self.shutdown {
            return self.send(
                Response::new_err(
                    id,
                    ErrorCode::InvalidRequest as i32,
                    "the server is shutting down".into(),
                )
                .into(),
            );
        }
        if r.method == req::Shutdown::METHOD {
            self.shutdown = true;
            return self.reply(id, serde_json::Value::Null);
        }
        // A bug in a feature must not take the server down: it becomes an error answer.
        let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.answer(r)));
        match outcome {
            Ok(Some(Ok(value))) => self.reply(id, value),
            Ok(Some(Err(e))) => self.invalid_params(id, &e),
            Ok(None) => self.send(
                Response::new_err(
                    id,
                    ErrorCode::MethodNotFound as i32,
                    "unknown method".into(),
                )
                .into(),
            ),
            Err(_) => self.send(
                Response::new_err(
                    id,
                    ErrorCode::InternalError as i32,
                    "internal error; please report it".into(),
                )
                .into(),
            ),
        }
    }

    /// The result of a request; `None` for an unknown method.
    fn answer(&self, r: Request) -> Option<Result<serde_json::Value, serde_json::Error>> {
        let outcome: Result<serde_json::Value, serde_json::Error> = match r.method.as_str() {
            req::CodeActionRequest::METHOD => serde_json::from_value(r.params)
                .map(|p| to_json(features::code_actions(&self.view(), &p))),
            req::HoverRequest::METHOD => {
                serde_json::from_value(r.params).map(|p| to_json(features::hover(&self.view(), &p)))
            }
            req::Completion::METHOD => serde_json::from_value(r.params)
                .map(|p| to_json(features::completion(&self.view(), &p))),
            req::GotoDefinition::METHOD => serde_json::from_value(r.params)
                .map(|p| to_json(features::definition(&self.view(), &p))),
            _ => return None,
        };
        Some(outcome)
    }

    fn invalid_params(&mut self, id: RequestId, e: &serde_json::Error) {
        self.send(
            Response::new_err(
                id,
                ErrorCode::InvalidParams as i32,
                format!("invalid params: {e}"),
            )
            .into(),
        );
    }

    fn notification(&mut self, n: Notification) {
        if !self.initialized {
            return;
        }
        match n.method.as_str() {
            notif::Initialized::METHOD if self.can_watch => self.watch_files(),
            notif::DidOpenTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidOpenTextDocumentParams>(n.params)
                {
                    self.set_text(p.text_document.uri, p.text_document.text, Duration::ZERO);
                }
            }
            notif::DidChangeTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidChangeTextDocumentParams>(n.params)
                {
                    // Full synchronisation: the last change holds the whole text.
                    if let Some(change) = p
                        .content_changes
                        .into_iter()
                        .rev()
                        .find(|c| c.range.is_none())
                    {
                        let delay = self.settings.debounce();
                        self.set_text(p.text_document.uri, change.text, delay);
                    }
                }
            }
            notif::DidSaveTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidSaveTextDocumentParams>(n.params)
                {
                    if let Some(text) = p.text {
                        self.set_text(p.text_document.uri, text, Duration::ZERO);
                    } else if let Some(path) = uri_to_path(&p.text_document.uri) {
                        self.schedule(&path, Duration::ZERO);
                    }
                }
            }
            notif::DidCloseTextDocument::METHOD => {
                if let Ok(p) =
                    serde_json::from_value::<lsp_types::DidCloseTextDocumentParams>(n.params)
                {
                    if let Some(path) = uri_to_path(&p.text_document.uri) {
                        // The file on disk is what counts again.
                        self.docs.remove(&path);
                        self.schedule(&path, Duration::ZERO);
                    }
                }
            }
            notif::DidChangeWatchedFiles::METHOD => {
                let roots: Vec<PathBuf> = self.roots.keys().cloned().collect();
                for root in roots {
                    self.schedule_root(root, Duration::ZERO);
                }
            }
            _ => {}
        }
    }

    /// Asks the client to report changes to configurations, policies and YAML files on disk,
    /// which re-lint every open repository.
    fn watch_files(&mut self) {
        let watchers = [
            "**/.gitops-lint.yaml",
            "**/.gitops-lint.yml",
            "**/*.rego",
            "**/*.{yaml,yml}",
        ]
        .into_iter()
        .map(|glob| lsp_types::FileSystemWatcher {
            glob_pattern: lsp_types::GlobPattern::String(glob.into()),
            kind: None,
        })
        .collect();
        let params = lsp_types::RegistrationParams {
            registrations: vec![lsp_types::Registration {
                id: "gitops-lint/watch".into(),
                method: notif::DidChangeWatchedFiles::METHOD.into(),
                register_options: serde_json::to_value(
                    lsp_types::DidChangeWatchedFilesRegistrationOptions { watchers },
                )
                .ok(),
            }],
        };
        self.send(
            Request::new(
                RequestId::from("gitops-lint/watch".to_string()),
                req::RegisterCapability::METHOD.into(),
                params,
            )
            .into(),
        );
    }

    fn set_text(&mut self, uri: Uri, text: String, delay: Duration) {
        let Some(path) = uri_to_path(&uri) else {
            return;
        };
        self.docs.insert(path.clone(), Doc { text });
        self.schedule(&path, delay);
    }

    fn schedule(&mut self, file: &Path, delay: Duration) {
        if let Some(root) = root_of(file) {
            self.schedule_root(root, delay);
        }
    }

    fn schedule_root(&mut self, root: PathBuf, delay: Duration) {
        let due = Instant::now() + delay;
        let state = self.roots.entry(root).or_default();
        // A save or open does not wait for an older keystroke's debounce, nor the reverse.
        state.due = Some(match state.due {
            Some(d) if delay.is_zero() => d.min(due),
            _ => due,
        });
    }

    fn start_due_runs(&mut self) {
        let now = Instant::now();
        let due: Vec<PathBuf> = self
            .roots
            .iter()
            .filter(|(_, s)| s.due.is_some_and(|d| d <= now))
            .map(|(r, _)| r.clone())
            .collect();
        for root in due {
            let overlay = self.overlay(&root);
            let Some(state) = self.roots.get_mut(&root) else {
                continue;
            };
            state.due = None;
            state.generation += 1;
            let run = if is_no_repository(&root) {
                Run::Lone(overlay.into_iter().collect())
            } else {
                Run::Repository(Box::new(Options {
                    root: Some(root.clone()),
                    overlay,
                    config: self.settings.config.clone(),
                    policy: engine::PolicyArgs {
                        paths: self.settings.policy.clone(),
                        ..engine::PolicyArgs::default()
                    },
                    walk_limit: Some(WALK_LIMIT),
                    ..Options::default()
                }))
            };
            let _ = self.jobs.send(LintJob {
                root,
                generation: state.generation,
                run,
            });
        }
    }

    /// The open YAML documents under `root` that a check reads, by root-relative path.
    fn overlay(&self, root: &Path) -> BTreeMap<String, String> {
        let filter = if is_no_repository(root) {
            walk::Filter::default()
        } else {
            walk_filter(root, self.settings.config.as_deref())
        };
        self.docs
            .iter()
            .filter(|(p, _)| self.belongs(p, root) && is_checked(root, p, &filter))
            .map(|(p, d)| (walk::relative(root, p), d.text.clone()))
            .collect()
    }

    fn linted(&mut self, l: Linted) {
        let Some(state) = self.roots.get(&l.root) else {
            return;
        };
        if l.generation != state.generation {
            return;
        }
        let (by_file, report) = match l.result {
            Ok(r) => {
                let s = &r.summary;
                self.notify::<notif::LogMessage>(lsp_types::LogMessageParams {
                    typ: lsp_types::MessageType::LOG,
                    message: format!(
                        "checked {} ({} files: {} parsed, {} unchanged) in {} ms: {} findings",
                        l.root.display(),
                        s.files,
                        l.cache.parsed,
                        l.cache.reused,
                        s.elapsed_ms,
                        r.diagnostics.len()
                    ),
                });
                (diagnostics_by_file(&r), Some(r))
            }
            Err(Failure::Files(errors)) => (file_errors(&l.root, &errors), None),
            Err(Failure::Crashed(why)) => (self.crashed(&l.root, &why), None),
            Err(Failure::Message(message)) => {
                let message = format!("gitops-lint: {message}");
                if let Some(state) = self.roots.get_mut(&l.root) {
                    if state.shown.as_ref() == Some(&message) {
                        return;
                    }
                    state.shown = Some(message.clone());
                }
                self.notify::<notif::ShowMessage>(lsp_types::ShowMessageParams {
                    typ: lsp_types::MessageType::ERROR,
                    message,
                });
                return;
            }
        };
        let old = self
            .roots
            .get_mut(&l.root)
            .map(|s| {
                s.shown = None;
                std::mem::take(&mut s.published)
            })
            .unwrap_or_default();
        for (uri, diagnostics) in &by_file {
            if old.get(uri) != Some(diagnostics) {
                self.notify::<notif::PublishDiagnostics>(PublishDiagnosticsParams {
                    uri: uri.clone(),
                    diagnostics: diagnostics.clone(),
                    version: None,
                });
            }
        }
        for uri in old.keys().filter(|u| !by_file.contains_key(*u)) {
            self.notify::<notif::PublishDiagnostics>(PublishDiagnosticsParams {
                uri: uri.clone(),
                diagnostics: Vec::new(),
                version: None,
            });
        }
        if let Some(state) = self.roots.get_mut(&l.root) {
            state.published = by_file.into_iter().collect();
            // A broken configuration keeps the last report for code actions and hover.
            if report.is_some() {
                state.report = report;
            }
        }
    }

    /// Whether an open file is checked with `root`: a file under a repository root is; of the
    /// files under a root that is no repository, only those with no repository of their own.
    fn belongs(&self, file: &Path, root: &Path) -> bool {
        file.starts_with(root)
            && (!is_no_repository(root) || root_of(file).as_deref() == Some(root))
    }

    /// A check that panicked, as a diagnostic at the top of each open file of `root`.
    fn crashed(&self, root: &Path, why: &str) -> BTreeMap<Uri, Vec<lsp_types::Diagnostic>> {
        self.docs
            .keys()
            .filter(|p| self.belongs(p, root))
            .filter_map(|p| path_to_uri(p))
            .map(|uri| {
                let diagnostic = lsp_types::Diagnostic {
                    severity: Some(DiagnosticSeverity::ERROR),
                    source: Some("gitops-lint".into()),
                    message: format!(
                        "internal error: the check stopped ({why})\nhelp: Please report it with the files that cause it."
                    ),
                    ..lsp_types::Diagnostic::default()
                };
                (uri, vec![diagnostic])
            })
            .collect()
    }

    fn view(&self) -> features::View<'_> {
        features::View {
            docs: self
                .docs
                .iter()
                .map(|(p, d)| (p.as_path(), d.text.as_str()))
                .collect(),
            roots: self
                .roots
                .iter()
                .filter_map(|(r, s)| Some((r.as_path(), s.report.as_deref()?)))
                .collect(),
        }
    }
}

use std::io::Write as _;

#[cfg(test)]
mod depth_budgets;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_check_that_panics_becomes_a_failure_to_show() {
        let outcome = guarded(|| panic!("boom in a rule"));
        assert!(matches!(outcome, Err(Failure::Crashed(why)) if why == "boom in a rule"));
        let outcome = guarded(|| Err(engine::Error::Usage("too many".into())));
        assert!(matches!(outcome, Err(Failure::Message(m)) if m == "too many"));
    }

    #[test]
    fn the_file_system_root_and_the_home_folder_are_no_repository() {
        assert!(is_no_repository(Path::new("/")));
        if let Some(home) = std::env::home_dir() {
            assert!(is_no_repository(&home));
            assert!(!is_no_repository(&home.join("repo")));
        }
    }
}
