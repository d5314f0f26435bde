//! Command-line interface: parse arguments, run, print, map the outcome to an exit code.

mod base_tree;
mod diff;
mod inspect;
mod new_since;
mod root;
mod select;
mod server;

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};

use gitops_lint::engine::{self, Error, Options};
use gitops_lint::source::fs::{Reach, Root, io_reason};
use gitops_lint::{config, registry, report};

#[derive(Parser)]
#[command(
    name = "gitops-lint",
    version,
    about = "Fast, exact policy checks for GitOps repositories (Argo CD, Helm, kustomize, CI)"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check a repository, or only the given files of it.
    Check(CheckArgs),
    /// List every rule: id, default severity, fixable, summary.
    Rules {
        #[arg(long, value_enum, default_value_t = ListFormat::Text)]
        format: ListFormat,
    },
    /// Show a rule's full documentation.
    Explain {
        /// A rule id, e.g. `argocd/sync-policy`.
        rule: String,
    },
    /// Print a baseline of the current findings (for `check --baseline FILE`).
    Baseline(BaselineArgs),
    /// Print what Argo CD deploys: roots → Applications → sources → files.
    Graph {
        /// A folder of the repository (default: the current directory); the root is found
        /// upward from it, as `check` finds it.
        path: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = GraphFormat::Text)]
        format: GraphFormat,
        /// Configuration file (default: `.gitops-lint.yaml` at the root).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Print the objects each live Application deploys, as gitops-lint sees them.
    Render {
        /// Applications to render (default: every live one).
        apps: Vec<String>,
        /// A folder of the repository (default: the current directory); the root is found
        /// upward from it, as `check` finds it.
        #[arg(long, value_name = "DIR")]
        root: Option<PathBuf>,
        #[arg(long, value_enum, default_value_t = RenderFormat::Yaml)]
        format: RenderFormat,
        /// Configuration file (default: `.gitops-lint.yaml` at the root).
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Show what a change does to what Argo CD deploys: per Application, the objects added,
    /// removed and modified against a base revision, each hunk with the changed lines that
    /// caused it, and the `diff/` rules' findings.
    Diff(diff::DiffArgs),
    /// Run the `test_*` rules of Rego policies, as `opa test` does (default: the shipped pack).
    TestPolicies(TestPoliciesArgs),
    /// Write a commented starter `.gitops-lint.yaml` in the current directory.
    Init {
        /// Overwrite an existing configuration.
        #[arg(long)]
        force: bool,
    },
    /// Print a shell completion script, e.g. `gitops-lint completions bash > /etc/bash_completion.d/gitops-lint`.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Run the language server (LSP over standard input and output) for editors.
    Server,
    /// Print the man page (roff), e.g. `gitops-lint manpage > gitops-lint.1`.
    #[command(hide = true)]
    Manpage,
}

#[derive(clap::Args)]
struct BaselineArgs {
    #[command(flatten)]
    run: RunArgs,
}

#[derive(clap::Args)]
struct TestPoliciesArgs {
    /// Folders or `.rego` files holding policies and their tests (default: the shipped pack).
    paths: Vec<PathBuf>,
    /// JSON/YAML files merged under `data` (repeatable).
    #[arg(long, short = 'd', value_name = "DIR")]
    data: Vec<PathBuf>,
    /// Rego syntax of the policies (default: detected per file).
    #[arg(long, value_name = "v0|v1", value_parser = parse_rego_version)]
    rego_version: Option<gitops_lint::policy::RegoVersion>,
    /// List passing tests too.
    #[arg(long, short = 'v')]
    verbose: bool,
}

fn parse_rego_version(s: &str) -> Result<gitops_lint::policy::RegoVersion, String> {
    gitops_lint::policy::RegoVersion::parse(s).ok_or_else(|| "use v0 or v1".to_string())
}

/// What to analyse and which rules report: shared by `check` and `baseline`.
#[derive(clap::Args)]
struct RunArgs {
    /// Files or folders to report on (default: the whole repository). The repository root is
    /// found upward from the first one, or from the current directory: the nearest folder
    /// with `.gitops-lint.yaml` or `.git`. The whole repository is always analysed. `-` reads
    /// a file's text from standard input (with `--stdin-filename`).
    paths: Vec<PathBuf>,
    /// The repository root, instead of finding it upward.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// With `-`: the path the text on standard input has in the repository.
    #[arg(long, value_name = "PATH")]
    stdin_filename: Option<PathBuf>,
    /// Configuration file (default: `.gitops-lint.yaml` at the root).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Skip files matching this glob (repeatable).
    #[arg(long, value_name = "GLOB")]
    exclude: Vec<String>,
    /// Run only these rules: ids or groups such as `argocd/` or `argocd/*` (comma-separated,
    /// repeatable).
    #[arg(
        long,
        value_name = "RULE",
        value_delimiter = ',',
        help_heading = "Rule selection"
    )]
    select: Vec<String>,
    /// Run these rules in addition to `--select` or the configuration's `select`.
    #[arg(
        long,
        value_name = "RULE",
        value_delimiter = ',',
        help_heading = "Rule selection"
    )]
    extend_select: Vec<String>,
    /// Do not run these rules: ids or groups.
    #[arg(
        long,
        value_name = "RULE",
        value_delimiter = ',',
        help_heading = "Rule selection"
    )]
    ignore: Vec<String>,
    /// Worker threads (default: one per core).
    #[arg(long, short = 'j', value_name = "N")]
    jobs: Option<usize>,
    /// Rego policies to run, conftest style (folder or `.rego` file; repeatable). Added to
    /// the configuration's `policies:`.
    #[arg(long, short = 'p', value_name = "DIR", help_heading = "Policies")]
    policy: Vec<PathBuf>,
    /// Package(s) whose `deny`/`violation`/`warn` rules run (globs; default `main`).
    #[arg(long, short = 'n', value_name = "NAMESPACE", help_heading = "Policies")]
    namespace: Vec<String>,
    /// Run the rules of every package.
    #[arg(long, help_heading = "Policies", conflicts_with = "namespace")]
    all_namespaces: bool,
    /// JSON/YAML files merged under `data` (repeatable).
    #[arg(long, short = 'd', value_name = "DIR", help_heading = "Policies")]
    data: Vec<PathBuf>,
    /// Give policies one input: the array of `{path, contents}` of every document.
    #[arg(long, help_heading = "Policies")]
    combine: bool,
    /// Rego syntax of the policies (default: detected per file).
    #[arg(long, value_name = "v0|v1", value_parser = parse_rego_version, help_heading = "Policies")]
    rego_version: Option<gitops_lint::policy::RegoVersion>,
}

#[derive(clap::Args)]
struct CheckArgs {
    #[command(flatten)]
    run: RunArgs,
    #[arg(long, value_enum, default_value_t = Format::Text)]
    format: Format,
    /// Lowest severity that makes the exit code 1 [default: the configuration's `fail_on`,
    /// else error].
    #[arg(long, value_enum)]
    fail_on: Option<FailOn>,
    /// Also write a report to a file, e.g. `--output sarif=gitops-lint.sarif` (repeatable).
    #[arg(long, value_name = "FORMAT=PATH", value_parser = parse_output)]
    output: Vec<(Format, PathBuf)>,
    /// Report only findings that are not in this baseline (see `gitops-lint baseline`).
    #[arg(long, value_name = "FILE")]
    baseline: Option<PathBuf>,
    /// Report only findings that are not present at this git revision (e.g. `origin/main`).
    #[arg(long, value_name = "REV")]
    new_since: Option<String>,
    /// Print what `--fix` would write, as one unified diff (for `git apply`), instead of
    /// findings; write nothing.
    #[arg(long)]
    diff: bool,
    /// Apply safe fixes, re-check, and repeat until nothing changes; report what remains.
    #[arg(long)]
    fix: bool,
    /// With `--fix` or `--diff`, also apply unsafe fixes (review them).
    #[arg(long)]
    unsafe_fixes: bool,
    /// With `--fix`, list the findings that were fixed.
    #[arg(long)]
    show_fixes: bool,
    /// Print the number of findings per rule instead of the findings.
    #[arg(long)]
    statistics: bool,
    /// Print findings only: no summary line and no notes on standard error.
    #[arg(long, short = 'q')]
    quiet: bool,
    /// Print each phase's wall time and memory on standard error.
    #[arg(long, short = 'v')]
    verbose: bool,
    /// Walk, read and parse only; run no rule (the benchmark's floor).
    #[arg(long, hide = true)]
    parse_only: bool,
    /// When to use colours in text output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
enum Format {
    Text,
    /// One line per finding: `path:line:col: severity[rule] message`.
    Concise,
    Json,
    Sarif,
    Gitlab,
    Github,
    Junit,
}

fn parse_output(s: &str) -> Result<(Format, PathBuf), String> {
    format_and_path(s, "sarif=gitops-lint.sarif")
}

/// `FORMAT=PATH` of an `--output` (`example` shows one), the format among `F`'s.
pub(crate) fn format_and_path<F: ValueEnum>(
    s: &str,
    example: &str,
) -> Result<(F, PathBuf), String> {
    let (format, path) = s
        .split_once('=')
        .ok_or_else(|| format!("expected FORMAT=PATH, e.g. {example}"))?;
    let format = F::from_str(format, true).map_err(|_| {
        let names: Vec<String> = F::value_variants()
            .iter()
            .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
            .collect();
        let list = match names.split_last() {
            Some((last, [])) => last.clone(),
            Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
            None => String::new(),
        };
        format!("unknown format `{format}`; use {list}")
    })?;
    if path.is_empty() {
        return Err("the PATH after `=` is empty".into());
    }
    Ok((format, PathBuf::from(path)))
}

fn render(format: Format, report: &engine::Report, text: &report::text::TextOptions) -> String {
    match format {
        Format::Text => report::text::render_with(report, text),
        Format::Concise => report::text::render_concise(report, text),
        Format::Json => report::json::render(report),
        Format::Sarif => report::sarif::render(report, &registry::all_meta()),
        Format::Gitlab => report::gitlab::render_from(
            report,
            std::env::var_os("CI_PROJECT_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .as_deref(),
        ),
        Format::Github => report::github::render(report),
        Format::Junit => report::junit::render(report),
    }
}

#[derive(Copy, Clone, ValueEnum)]
pub(crate) enum GraphFormat {
    Text,
    Dot,
    Json,
    /// One self-contained page: the tree with the findings of `check` on its nodes.
    Html,
}

#[derive(Copy, Clone, ValueEnum)]
pub(crate) enum RenderFormat {
    Yaml,
    Json,
}

#[derive(Copy, Clone, ValueEnum)]
enum ListFormat {
    Text,
    Json,
}

#[derive(Copy, Clone, PartialEq, Eq, ValueEnum)]
enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Copy, Clone, ValueEnum)]
enum ColorChoice {
    Auto,
    Always,
    Never,
}

fn use_color(choice: ColorChoice, stream_is_tty: bool) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            stream_is_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// Writes to stdout; a closed pipe (`| head`) is not an error.
fn out(s: &str) -> bool {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(s.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => true,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => false,
        Err(e) => {
            eprintln!("error: cannot write output: {e}");
            false
        }
    }
}

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    gitops_lint::policy::watchdog::on_stop(|message| {
        eprintln!("error: {message}");
        std::process::exit(2)
    });
    match cli.command {
        Command::Check(args) => check(&args),
        Command::Rules { format } => {
            let metas = registry::all_meta();
            out(&match format {
                ListFormat::Text => report::rules::table(&metas),
                ListFormat::Json => report::rules::json(&metas),
            });
            ExitCode::SUCCESS
        }
        Command::Explain { rule } => match registry::find(&rule) {
            Some(m) => {
                out(&report::rules::explain(m));
                ExitCode::SUCCESS
            }
            None => {
                let ids: Vec<&str> = registry::all_meta().iter().map(|m| m.id).collect();
                eprintln!("error: unknown rule `{rule}`");
                match gitops_lint::diagnostic::did_you_mean(&rule, &ids) {
                    Some(s) => eprintln!("help: {s}"),
                    None => eprintln!("help: run `gitops-lint rules` to list the rule ids"),
                }
                ExitCode::from(2)
            }
        },
        Command::Init { force } => init(force),
        Command::Server => server::run(),
        Command::TestPolicies(args) => test_policies(&args),
        Command::Baseline(args) => baseline(&args.run),
        Command::Completions { shell } => {
            let mut command = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            clap_complete::generate(shell, &mut command, "gitops-lint", &mut buf);
            out(&String::from_utf8_lossy(&buf));
            ExitCode::SUCCESS
        }
        Command::Manpage => {
            let command = <Cli as clap::CommandFactory>::command();
            let mut buf = Vec::new();
            match clap_mangen::Man::new(command).render(&mut buf) {
                Ok(()) => {
                    out(&String::from_utf8_lossy(&buf));
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("error: cannot render the man page: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Diff(args) => diff::diff(&args),
        Command::Graph {
            path,
            format,
            config,
        } => inspect::graph(path, format, config),
        Command::Render {
            apps,
            root,
            format,
            config,
        } => inspect::render_objects(&apps, root, format, config),
    }
}

fn test_policies(args: &TestPoliciesArgs) -> ExitCode {
    use gitops_lint::policy::{self, CompileOptions, RegoVersion, pack, test_runner};
    let color = std::io::stderr().is_terminal();
    // Policies in a repository are read as `check` reads them: never through a link out of it.
    let cwd = std::env::current_dir().unwrap_or_default();
    let confined = Root::new(&root::find_root(&cwd));
    let named = |p: &PathBuf| (p.clone(), confined.reach_of(p));
    let (files, rego_version) = if args.paths.is_empty() {
        (pack::policy_files(true), Some(RegoVersion::V1))
    } else {
        let paths: Vec<_> = args.paths.iter().map(named).collect();
        match policy::collect_rego_files_in(&confined, &paths) {
            Ok(f) => (f, args.rego_version),
            Err(e) => {
                eprint!("{}", report::text::render_policy_error(&e, color));
                return ExitCode::from(2);
            }
        }
    };
    let data_paths: Vec<_> = args.data.iter().map(named).collect();
    let data = match policy::load_data_dirs_in(&confined, &data_paths) {
        Ok(d) => d,
        Err(e) => {
            eprint!("{}", report::text::render_policy_error(&e, color));
            return ExitCode::from(2);
        }
    };
    let opts = CompileOptions {
        rego_version,
        ..CompileOptions::default()
    };
    match test_runner::run(&files, &data, &opts) {
        Ok(r) => {
            out(&r.render(args.verbose));
            if r.failed() > 0 {
                ExitCode::from(1)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(e) => {
            eprint!("{}", report::text::render_policy_error(&e, color));
            ExitCode::from(2)
        }
    }
}

fn init(force: bool) -> ExitCode {
    let shown = PathBuf::from(config::FILE_NAMES[0]);
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => {
            eprintln!(
                "error: cannot read the current directory: {}",
                io_reason(&e)
            );
            return ExitCode::from(2);
        }
    };
    let path = cwd.join(&shown);
    // A link counts as a file, even one leading nowhere: writing through it would create its
    // target, wherever that is.
    if std::fs::symlink_metadata(&path).is_ok() && !force {
        eprintln!("error: {} already exists", shown.display());
        eprintln!("help: pass --force to overwrite it");
        return ExitCode::from(2);
    }
    let starter = config::starter(&registry::all_meta());
    match Root::new(&cwd).write(&path, starter.as_bytes(), None) {
        Ok(()) => {
            out(&format!("wrote {}\n", shown.display()));
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: cannot write {}: {}", shown.display(), e.reason);
            ExitCode::from(2)
        }
    }
}

/// An empty report, to move the real one out of a fix outcome.
fn placeholder_report() -> engine::Report {
    engine::check_texts(&[], gitops_lint::config::Config::default())
}

fn fatal(e: &Error, color: bool) -> ExitCode {
    match e {
        Error::Config(errors) => {
            for e in &errors.0 {
                eprint!("{}", report::text::render_config_error(e, color));
            }
        }
        Error::Policy(e) => eprint!("{}", report::text::render_policy_error(e, color)),
        other => eprintln!("error: {other}"),
    }
    ExitCode::from(2)
}

/// A planned run: the engine's options and what the command line adds around them.
struct Plan {
    opts: Options,
    /// The root as seen from the current directory (for human output).
    base: String,
    /// Folders given as arguments (as given, root-relative) that must hold a file to check.
    dirs: Vec<(PathBuf, String)>,
}

/// Finds the root, reads standard input for `-`, validates the rule selectors.
fn plan(args: &RunArgs, parse_only: bool) -> Result<Plan, ExitCode> {
    let usage = |message: String, help: Option<String>| {
        eprintln!("error: {message}");
        if let Some(h) = help {
            eprintln!("help: {h}");
        }
        ExitCode::from(2)
    };
    let cwd = std::env::current_dir()
        .map_err(|e| usage(format!("cannot read the current directory: {e}"), None))?;
    let selection = select::validate(&args.select, &args.extend_select, &args.ignore)
        .map_err(|(m, h)| usage(m, Some(h)))?;
    let stdin_at = args.paths.iter().position(|p| p.as_os_str() == "-");
    let mut paths = args.paths.clone();
    let mut stdin_text = None;
    match (stdin_at, &args.stdin_filename) {
        (Some(i), Some(name)) => {
            let mut text = String::new();
            std::io::Read::read_to_string(&mut std::io::stdin(), &mut text)
                .map_err(|e| usage(format!("cannot read standard input: {e}"), None))?;
            paths[i] = name.clone();
            stdin_text = Some((root::absolute(&cwd, name), text));
        }
        (Some(_), None) => {
            return Err(usage(
                "`-` reads standard input, but as which file?".into(),
                Some("pass --stdin-filename PATH, the file's path in the repository".into()),
            ));
        }
        (None, Some(_)) => {
            return Err(usage(
                "--stdin-filename is given but no path is `-`".into(),
                Some("pass `-` to read the file's text from standard input".into()),
            ));
        }
        (None, None) => {}
    }
    // A path that is not there is named as it was given, from the current directory.
    for (i, p) in paths.iter().enumerate() {
        if Some(i) != stdin_at && !root::absolute(&cwd, p).exists() {
            return Err(usage(
                format!("`{}` does not exist", root::shown(&cwd, p)),
                None,
            ));
        }
    }
    if let Some((abs, _)) = &stdin_text {
        root::check_stdin_filename(&cwd, abs).map_err(|(m, h)| usage(m, Some(h)))?;
    }
    let target = root::discover(&cwd, &paths, args.root.as_deref()).map_err(|m| usage(m, None))?;
    let mut overlay = std::collections::BTreeMap::new();
    if let Some((abs, text)) = stdin_text {
        overlay.insert(
            gitops_lint::source::walk::relative(&target.root, &abs),
            text,
        );
    }
    let dirs = paths
        .iter()
        .zip(&target.paths)
        .filter(|(_, abs)| abs.is_dir() && **abs != target.root)
        .map(|(given, abs)| {
            (
                given.clone(),
                gitops_lint::source::walk::relative(&target.root, abs),
            )
        })
        .collect();
    let opts = Options {
        paths: target.paths,
        root: Some(target.root),
        config: args.config.clone(),
        exclude: args.exclude.clone(),
        jobs: args.jobs,
        parse_only,
        timings: false,
        overlay,
        policy: engine::PolicyArgs {
            paths: args.policy.clone(),
            namespaces: args.namespace.clone(),
            all_namespaces: args.all_namespaces,
            data: args.data.clone(),
            combine: args.combine,
            rego_version: args.rego_version,
            timeout: None,
        },
        cache: None,
        selection,
        walk_limit: None,
    };
    Ok(Plan {
        opts,
        base: target.base,
        dirs,
    })
}

/// No file to check (an empty repository, a wrong `include:`, a folder argument holding no
/// YAML) is a usage error: a check of nothing must not pass CI green.
fn nothing_to_check(plan: &Plan, report: &engine::Report) -> Option<ExitCode> {
    let files: Vec<&str> = report
        .repo
        .sources
        .files()
        .iter()
        .map(|f| f.path.as_str())
        .collect();
    if files.is_empty() {
        eprintln!(
            "error: no YAML file to check in {}",
            report.repo.root.display()
        );
        eprintln!(
            "help: check `include` and `exclude` in the configuration, and the folders skipped by .gitignore"
        );
        return Some(ExitCode::from(2));
    }
    for (given, rel) in &plan.dirs {
        let prefix = format!("{rel}/");
        if !files.iter().any(|f| f.starts_with(&prefix)) {
            eprintln!("error: no YAML file to check in {}", given.display());
            eprintln!(
                "help: the folder holds no YAML file, or `include`, `exclude` or .gitignore leave none"
            );
            return Some(ExitCode::from(2));
        }
    }
    None
}

fn baseline(args: &RunArgs) -> ExitCode {
    let plan = match plan(args, false) {
        Ok(p) => p,
        Err(code) => return code,
    };
    match engine::run(&plan.opts) {
        Ok(r) => {
            if let Some(code) = nothing_to_check(&plan, &r) {
                return code;
            }
            out(&report::baseline::render(&r));
            ExitCode::SUCCESS
        }
        Err(e) => fatal(&e, std::io::stderr().is_terminal()),
    }
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

fn check(args: &CheckArgs) -> ExitCode {
    if args.unsafe_fixes && !args.fix && !args.diff {
        eprintln!("error: `--unsafe-fixes` needs `--fix` or `--diff`");
        return ExitCode::from(2);
    }
    let mut plan = match plan(&args.run, args.parse_only) {
        Ok(p) => p,
        Err(code) => return code,
    };
    plan.opts.timings = args.verbose;
    let opts = &plan.opts;
    let stderr_color = use_color(args.color, std::io::stderr().is_terminal());
    let mut fix_outcome = None;
    let run = if args.fix {
        let fo = gitops_lint::fixer::FixOptions {
            unsafe_fixes: args.unsafe_fixes,
            write: !args.diff,
        };
        gitops_lint::fixer::run(opts, fo).map(|mut o| {
            let report = std::mem::replace(&mut o.report, placeholder_report());
            fix_outcome = Some(o);
            report
        })
    } else {
        engine::run(opts)
    };
    let mut report = match run {
        Ok(r) => r,
        Err(e) => return fatal(&e, stderr_color),
    };
    if let Some(code) = nothing_to_check(&plan, &report) {
        return code;
    }
    let mut hidden = Vec::new();
    if let Some(path) = &args.baseline {
        match report::baseline::load(&Root::new(&report.repo.root), path) {
            Ok(known) => {
                let before = report.diagnostics.len();
                report::baseline::subtract(&mut report, &known);
                hidden.push((
                    before - report.diagnostics.len(),
                    format!("in the baseline {}", path.display()),
                ));
            }
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        }
    }
    if let Some(rev) = &args.new_since {
        match new_since::fingerprints_at(&report.repo.root, rev, opts) {
            Ok(known) => {
                let before = report.diagnostics.len();
                report::baseline::subtract(&mut report, &known);
                hidden.push((
                    before - report.diagnostics.len(),
                    format!("already present at {rev}"),
                ));
            }
            Err(e) => {
                eprintln!("error: --new-since {rev}: {e}");
                return ExitCode::from(2);
            }
        }
    }
    let text_opts = |color: bool| report::text::TextOptions {
        color,
        base: plan.base.clone(),
        quiet: args.quiet,
    };
    let confined = Root::new(&report.repo.root);
    for (format, path) in &args.output {
        let text = render(*format, &report, &text_opts(false));
        // A report in the repository is written as `--fix` writes (never through a link out
        // of it); one elsewhere is the user's to place (`/dev/stdout` too).
        let written = match confined.reach_of(path) {
            Reach::Root => confined
                .write(path, text.as_bytes(), None)
                .map_err(|e| e.reason),
            Reach::Anywhere => std::fs::write(path, text).map_err(|e| io_reason(&e)),
        };
        if let Err(reason) = written {
            eprintln!("error: cannot write {}: {reason}", path.display());
            return ExitCode::from(2);
        }
    }
    let stdout_color = use_color(args.color, std::io::stdout().is_terminal());
    let text = match (&fix_outcome, args.diff) {
        (Some(o), true) => gitops_lint::fixer::diff(o),
        // Exactly what `--fix` would write: the same passes, without writing.
        (None, true) => {
            let fo = gitops_lint::fixer::FixOptions {
                unsafe_fixes: args.unsafe_fixes,
                write: false,
            };
            match gitops_lint::fixer::run(opts, fo) {
                Ok(o) => gitops_lint::fixer::diff(&o),
                Err(e) => return fatal(&e, stderr_color),
            }
        }
        _ if args.statistics => report::text::render_statistics(&report),
        _ => render(args.format, &report, &text_opts(stdout_color)),
    };
    out(&text);
    for p in &report.summary.phases {
        let mib = |m: Option<f64>| m.map_or_else(|| "?".to_string(), |m| format!("{m:.0} MiB"));
        eprintln!(
            "timing: {:<24} {:>8.1} ms   rss {:>9}   peak {:>9}",
            p.name,
            p.ms,
            mib(p.rss_mib),
            mib(p.peak_mib)
        );
    }
    // The slowest rules (ESLint's `TIMING`): where a slow run goes, and which house rule to fix.
    for (rule, ms) in report.summary.rule_times.iter().take(10) {
        eprintln!("timing: rule {rule:<36} {ms:>8.1} ms");
    }
    for f in report.repo.sources.files() {
        if f.changed_during_run() {
            eprintln!(
                "warning: {}{} changed during the run: its findings are shown without source lines",
                plan.base,
                report::escape::escape(&f.path)
            );
        }
    }
    if !args.quiet {
        for (n, why) in &hidden {
            eprintln!("note: {} hidden: {why}", plural(*n, "finding", "findings"));
        }
    }
    if let Some(o) = &fix_outcome {
        for (path, reason) in &o.skipped {
            eprintln!(
                "error: {}{}: fixes not written: {}",
                plan.base,
                report::escape::escape(path),
                report::escape::escape(reason)
            );
        }
        if !o.skipped.is_empty() {
            eprintln!(
                "help: the findings of a file not written remain; fix them by hand, or make the file writable, with no other hard link, and run `--fix` again"
            );
        }
        if args.show_fixes {
            for line in &o.fixed_findings {
                eprintln!("fixed: {}{}", plan.base, report::escape::escape(line));
            }
        }
        if !args.diff && !args.quiet {
            let files = o.changed.len() - o.skipped.len();
            eprintln!(
                "fixed {} in {}",
                plural(o.fixed, "finding", "findings"),
                plural(files, "file", "files")
            );
        }
    }
    let fail_on = match args.fail_on {
        Some(FailOn::Error) => config::FailOn::Error,
        Some(FailOn::Warning) => config::FailOn::Warning,
        Some(FailOn::Info) => config::FailOn::Info,
        Some(FailOn::Never) => config::FailOn::Never,
        None => report.config.fail_on.unwrap_or(config::FailOn::Error),
    };
    let unwritten = fix_outcome.as_ref().is_some_and(|o| !o.skipped.is_empty());
    let threshold = fail_on.threshold();
    let code = match (threshold, report.max_severity()) {
        // A fix that could not be written is a failure of the run, not a finding.
        _ if unwritten => ExitCode::from(2),
        (Some(t), Some(max)) if max >= t => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    };
    // The process ends here: freeing every tree of a large repository one by one would cost
    // more than the reporting did.
    std::mem::forget(report);
    code
}
