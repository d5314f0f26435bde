//! `gitops-lint diff`: what a change does to what Argo CD deploys. The base revision is read
//! from git objects as changes to the working tree (`base_tree.rs`), or, when the change
//! touches what only a checkout reproduces, checked out in a temporary worktree (the
//! `--new-since` machinery); the library compares the two revisions and runs the `diff/`
//! rules.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::ValueEnum;

use gitops_lint::engine::{self, Options};
use gitops_lint::source::fs::{Reach, Root, io_reason};
use gitops_lint::{config, registry, report};

use super::base_tree;
use super::new_since::{checkout, git};
use super::{ColorChoice, FailOn, fatal, out, root, use_color};

#[derive(clap::Args)]
pub(crate) struct DiffArgs {
    /// Files or folders whose Applications to report (default: every Application): those
    /// defined in them or reading a file under them. The root is found upward from the first
    /// one, or from the current directory, as `check` finds it.
    paths: Vec<PathBuf>,
    /// The revision to compare with [default: `$CI_MERGE_REQUEST_DIFF_BASE_SHA`, else the
    /// merge base of HEAD with `$GITHUB_BASE_REF`, else with the default branch].
    #[arg(long, value_name = "REV")]
    base: Option<String>,
    /// The repository root, instead of finding it upward.
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Configuration file (default: `.gitops-lint.yaml` at the root of each revision).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    #[arg(long, value_enum, default_value_t = DiffFormat::Text)]
    format: DiffFormat,
    /// Also write a report to a file, e.g. `--output markdown=diff.md` (repeatable).
    #[arg(long, value_name = "FORMAT=PATH", value_parser = parse_output)]
    output: Vec<(DiffFormat, PathBuf)>,
    /// Lowest severity of a `diff/` finding that makes the exit code 1 [default: the
    /// configuration's `fail_on`, else error].
    #[arg(long, value_enum)]
    fail_on: Option<FailOn>,
    /// Markdown: the most bytes the report may take; Applications' diffs that do not fit
    /// are counted, not shown (a GitHub comment holds 65,536 characters).
    #[arg(long, value_name = "BYTES", default_value_t = 60_000)]
    max_bytes: usize,
    /// When to use colours in text output.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto)]
    color: ColorChoice,
    /// Render and compare every Application, not only those the change can affect.
    #[arg(long)]
    all: bool,
    /// Check the base revision out in a temporary worktree instead of reading it from git
    /// objects beside the working tree (slower; what is done anyway when the change touches
    /// links, submodules, ignore files or files the walk does not read).
    #[arg(long, hide = true)]
    checkout_base: bool,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum DiffFormat {
    Text,
    /// For a merge-request comment: a summary table, findings, then diffs in `<details>`.
    Markdown,
    Json,
    /// One self-contained page: the Applications in a list, diffs side by side.
    Html,
    Sarif,
    Gitlab,
}

fn parse_output(s: &str) -> Result<(DiffFormat, PathBuf), String> {
    super::format_and_path(s, "markdown=diff.md")
}

fn env_set(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn verify(root: &Path, rev: &str) -> bool {
    git(
        root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    )
    .is_ok()
}

/// The base revision when `--base` is not given: GitLab's merge-request base, else the merge
/// base of HEAD with GitHub's base branch or the default branch.
fn default_base(root: &Path) -> Result<String, String> {
    if let Some(sha) = env_set("CI_MERGE_REQUEST_DIFF_BASE_SHA") {
        return Ok(sha);
    }
    let target = match env_set("GITHUB_BASE_REF") {
        Some(r) if verify(root, &format!("origin/{r}")) => format!("origin/{r}"),
        Some(r) => r,
        None => git(
            root,
            &[
                "symbolic-ref",
                "--quiet",
                "--short",
                "refs/remotes/origin/HEAD",
            ],
        )
        .ok()
        .filter(|r| !r.is_empty())
        .or_else(|| {
            ["origin/main", "origin/master", "main", "master"]
                .into_iter()
                .find(|b| verify(root, b))
                .map(str::to_string)
        })
        .ok_or_else(|| {
            "cannot tell the default branch (no `origin/HEAD`, `main` or `master`): pass --base REV"
                .to_string()
        })?,
    };
    git(root, &["merge-base", "HEAD", &target])
        .map_err(|e| format!("no merge base of HEAD and `{target}` (is the history fetched?): {e}"))
}

fn render(
    format: DiffFormat,
    dr: &engine::diff::DiffReport,
    base: &str,
    args: &DiffArgs,
    text: &report::text::TextOptions,
) -> String {
    match format {
        DiffFormat::Text => report::changes::text(dr, base, text),
        DiffFormat::Markdown => report::changes::markdown(dr, base, args.max_bytes),
        DiffFormat::Json => report::changes::json(dr, base),
        DiffFormat::Html => report::changes_html::page(dr, base),
        DiffFormat::Sarif => report::sarif::render(&dr.report, &registry::all_meta()),
        DiffFormat::Gitlab => report::gitlab::render_from(
            &dr.report,
            std::env::var_os("CI_PROJECT_DIR")
                .filter(|d| !d.is_empty())
                .map(PathBuf::from)
                .as_deref(),
        ),
    }
}

pub(crate) fn diff(args: &DiffArgs) -> ExitCode {
    let stderr_color = use_color(args.color, std::io::stderr().is_terminal());
    let usage = |m: String| {
        eprintln!("error: {m}");
        ExitCode::from(2)
    };
    let cwd = match std::env::current_dir() {
        Ok(d) => d,
        Err(e) => return usage(format!("cannot read the current directory: {e}")),
    };
    for p in &args.paths {
        if !root::absolute(&cwd, p).exists() {
            return usage(format!("`{}` does not exist", root::shown(&cwd, p)));
        }
    }
    let target = match root::discover(&cwd, &args.paths, args.root.as_deref()) {
        Ok(t) => t,
        Err(m) => return usage(m),
    };
    let repo_root = target.root.clone();
    let paths: Vec<String> = target
        .paths
        .iter()
        .filter(|p| **p != repo_root)
        .map(|p| gitops_lint::source::walk::relative(&repo_root, p))
        .collect();
    if git(&repo_root, &["rev-parse", "--show-toplevel"]).is_err() {
        return usage(format!(
            "`{}` is not in a git repository: `diff` compares the working tree with a git revision",
            repo_root.display()
        ));
    }
    let (rev, label) = match &args.base {
        Some(r) => (r.clone(), r.clone()),
        None => match default_base(&repo_root) {
            Ok(sha) => (sha.clone(), sha),
            Err(e) => return usage(e),
        },
    };
    let Ok(commit) = git(
        &repo_root,
        &[
            "rev-parse",
            "--verify",
            "--quiet",
            &format!("{rev}^{{commit}}"),
        ],
    ) else {
        return usage(format!(
            "--base {rev}: unknown revision `{rev}` (is the history fetched?)"
        ));
    };
    let head = Options {
        paths: vec![repo_root.clone()],
        root: Some(repo_root.clone()),
        config: args.config.clone(),
        ..Options::default()
    };
    // The base from git objects beside the working tree; checked out when only a checkout
    // reproduces what the change touched.
    let base_tree = base_tree::changes(&repo_root, &commit).ok();
    let touched = base_tree
        .as_ref()
        .map(|b| b.touched.clone())
        .unwrap_or_default();
    let from_objects = match base_tree.map(|b| b.changes) {
        Some(Ok(changes)) if !args.checkout_base => {
            engine::diff::run_against(&changes, &head, (&paths, &touched), args.all).transpose()
        }
        _ => None,
    };
    let ran = match from_objects {
        Some(ran) => ran,
        None => {
            let old = match checkout(&repo_root, &commit) {
                Ok(c) => c,
                Err(e) => return usage(format!("--base {rev}: {e}")),
            };
            let base = old.root.as_ref().map(|r| Options {
                paths: vec![r.clone()],
                root: Some(r.clone()),
                config: args.config.clone(),
                ..Options::default()
            });
            engine::diff::run(base.as_ref(), &head, (&paths, &touched), args.all)
        }
    };
    let dr = match ran {
        Ok(d) => d,
        Err(e) => return fatal(&e, stderr_color),
    };
    let text_opts = |color: bool| report::text::TextOptions {
        color,
        base: target.base.clone(),
        quiet: false,
    };
    let confined = Root::new(&repo_root);
    for (format, path) in &args.output {
        let text = render(*format, &dr, &label, args, &text_opts(false));
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
    out(&render(
        args.format,
        &dr,
        &label,
        args,
        &text_opts(stdout_color),
    ));
    let fail_on = match args.fail_on {
        Some(FailOn::Error) => config::FailOn::Error,
        Some(FailOn::Warning) => config::FailOn::Warning,
        Some(FailOn::Info) => config::FailOn::Info,
        Some(FailOn::Never) => config::FailOn::Never,
        None => dr.report.config.fail_on.unwrap_or(config::FailOn::Error),
    };
    match (fail_on.threshold(), dr.report.max_severity()) {
        (Some(t), Some(max)) if max >= t => ExitCode::from(1),
        _ => ExitCode::SUCCESS,
    }
}
