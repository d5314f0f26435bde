//! `gitops-lint diff`: the repository at a base revision and at head, what the change does to
//! what Argo CD deploys ([`crate::model::diff`]), and the `diff/` rules' findings on it,
//! stamped, suppressed and sorted as a check's, in the head repository.

use std::collections::HashSet;
use std::time::Instant;

use super::dispatch::Found;
use super::load::{Prepared, prepare};
use super::timer::Timer;
use super::{Error, Options, Report, finish, memory_repository, summarize};
use crate::config::{Config, Level};
use crate::model::diff::{self, ChangedLines, Changes};
use crate::model::{Model, Repository};
use crate::registry;
use crate::rule::{Context, Emitted};

/// A diff's outcome: the changes, and the `diff/` findings as a check's report of the head
/// repository.
pub struct DiffReport {
    pub report: Report,
    pub changes: Changes,
}

/// Compares the repository of `base` (`None`: the repository did not exist then) with the one
/// of `head`. `paths`, repository-relative, narrow the Applications reported.
///
/// # Errors
/// A configuration or usage error of either revision.
pub fn run(base: Option<&Options>, head: &Options, paths: &[String]) -> Result<DiffReport, Error> {
    let started = Instant::now();
    let mut timer = Timer::new(false);
    let Prepared { repo, config, .. } = prepare(head, &mut timer)?;
    let (base_repo, base_config) = match base {
        Some(o) => {
            let p = prepare(o, &mut timer)?;
            (p.repo, p.config)
        }
        None => (memory_repository(&[]).0, config.clone()),
    };
    Ok(compare(
        (base_repo, &base_config),
        repo,
        config,
        paths,
        started,
    ))
}

/// [`run`] on in-memory files `(relative path, text)`: the fixture harness and the rule docs'
/// examples.
#[must_use]
pub fn run_texts(base: &[(&str, &str)], head: &[(&str, &str)], config: Config) -> DiffReport {
    let started = Instant::now();
    let base_repo = memory_repository(base).0;
    let repo = memory_repository(head).0;
    compare((base_repo, &config.clone()), repo, config, &[], started)
}

fn compare(
    (base_repo, base_config): (Repository, &Config),
    repo: Repository,
    config: Config,
    paths: &[String],
    started: Instant,
) -> DiffReport {
    let changed = ChangedLines::between(&base_repo, &repo);
    let (changes, raw) = {
        let base_model = Model::new(&base_repo, base_config.settings());
        let head_model = Model::new(&repo, config.settings());
        let changes = diff::compare(&base_model, &head_model, &changed, paths);
        let enabled = |id: &str| config.level(id) != Some(Level::Off);
        let options = super::dispatch::rule_options(&config);
        let cx = Context::new(&head_model, &options);
        let raw: Vec<Emitted> = registry::builtin()
            .filter(|r| enabled(r.meta().id))
            .flat_map(|r| {
                let rule = r.meta().id;
                r.check_diff(&changes, &cx)
                    .into_iter()
                    .map(move |finding| Emitted { rule, finding })
            })
            .collect();
        (changes, raw)
    };
    let found = Found {
        raw,
        notes: Vec::new(),
        related: HashSet::new(),
    };
    let mut report = finish::finish(
        repo,
        config,
        found,
        Vec::new(),
        None,
        &mut Timer::new(false),
    );
    // Only the `diff/` rules ran: a suppression of another rule is not unused here.
    report.diagnostics.retain(|d| d.rule.starts_with("diff/"));
    summarize(&mut report, started);
    DiffReport { report, changes }
}
