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
    print_from_model(path, config, |model| {
        let (repo, argo) = (model.repo, model.argocd());
        Ok(match format {
            GraphFormat::Text => report::graph::text(repo, argo),
            GraphFormat::Dot => report::graph::dot(repo, argo),
            GraphFormat::Json => report::graph::json(repo, argo),
        })
    })
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
    let opts = Options {
        paths: vec![root.clone()],
        root: Some(root),
        config,
        ..Options::default()
    };
    match engine::load(&opts) {
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
