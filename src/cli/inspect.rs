//! `graph` and `render`: what Argo CD deploys from the repository, as the model sees it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::process::ExitCode;

use gitops_lint::config;
use gitops_lint::engine::{self, Error, Options};
use gitops_lint::model::Model;
use gitops_lint::report;

use super::{GraphFormat, RenderFormat, out, root};

pub(crate) fn graph(
    path: Option<PathBuf>,
    format: GraphFormat,
    config: Option<PathBuf>,
) -> ExitCode {
    let print = match format {
        GraphFormat::Text => report::graph::text,
        GraphFormat::Dot => report::graph::dot,
        GraphFormat::Json => report::graph::json,
        GraphFormat::Html => return graph_page(path, config),
    };
    print_from_model(path, config, |model| Ok(print(model.repo, model.argocd())))
}

/// `graph --format html`: the repository is checked as `check` checks it (its configuration's
/// rules), and the graph of the checked repository carries the findings.
fn graph_page(path: Option<PathBuf>, config: Option<PathBuf>) -> ExitCode {
    let report = match options(path, config).and_then(|opts| loaded(engine::run(&opts))) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let model = Model::new(&report.repo, report.config.settings());
    out(&report::graph::html(&report, model.argocd()));
    ExitCode::SUCCESS
}

pub(crate) fn render_objects(
    apps: &[String],
    path: Option<PathBuf>,
    format: RenderFormat,
    config: Option<PathBuf>,
) -> ExitCode {
    print_from_model(path, config, |model| match format {
        RenderFormat::Yaml => report::render::yaml(model, apps),
        RenderFormat::Json => report::render::json(model, apps),
    })
}

/// Loads the repository, builds its model and prints what `print` makes of it; an error is
/// printed and exits 2.
fn print_from_model(
    path: Option<PathBuf>,
    config: Option<PathBuf>,
    print: impl FnOnce(&Model<'_>) -> Result<String, String>,
) -> ExitCode {
    let (repo, config) = match load_repository(path, config) {
        Ok(r) => r,
        Err(code) => return code,
    };
    let model = Model::new(&repo, config.settings());
    match print(&model) {
        Ok(t) => {
            out(&t);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}

/// The repository and configuration `graph` and `render` read, or the exit code of the
/// error already printed.
fn load_repository(
    path: Option<PathBuf>,
    config: Option<PathBuf>,
) -> Result<(gitops_lint::model::Repository, config::Config), ExitCode> {
    loaded(engine::load(&options(path, config)?))
}

/// The options that load the whole repository found from `path`, or the exit code of the error
/// already printed.
fn options(path: Option<PathBuf>, config: Option<PathBuf>) -> Result<Options, ExitCode> {
    // The root is found upward from the path (or the current directory), as `check` does.
    let target = std::env::current_dir()
        .map_err(|e| format!("cannot read the current directory: {e}"))
        .and_then(|cwd| match &path {
            Some(p) if !root::absolute(&cwd, p).exists() => {
                Err(format!("`{}` does not exist", root::shown(&cwd, p)))
            }
            _ => root::discover(&cwd, &Vec::from_iter(path), None),
        });
    let root = match target {
        Ok(t) => t.root,
        Err(e) => {
            eprintln!("error: {e}");
            return Err(ExitCode::from(2));
        }
    };
    Ok(Options {
        paths: vec![root.clone()],
        root: Some(root),
        config,
        ..Options::default()
    })
}

/// What loading gave, or the exit code of its error, printed.
fn loaded<T>(r: Result<T, Error>) -> Result<T, ExitCode> {
    match r {
        Ok(r) => Ok(r),
        Err(Error::Config(errors)) => {
            for e in &errors.0 {
                eprint!(
                    "{}",
                    report::text::render_config_error(e, std::io::stderr().is_terminal())
                );
            }
            Err(ExitCode::from(2))
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(ExitCode::from(2))
        }
    }
}
