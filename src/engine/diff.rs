//! `gitops-lint diff`: the repository at a base revision and at head, what the change does to
//! what Argo CD deploys ([`crate::model::diff`]), and the `diff/` rules' findings on it,
//! stamped, suppressed and sorted as a check's, in the head repository.

use std::collections::HashSet;
use std::time::Instant;

pub use super::base::BaseChanges;
use super::dispatch::Found;
use super::load::{Prepared, prepare, prepare_with_base};
use super::timer::Timer;
use super::{Error, Options, Report, finish, memory_repository, summarize};
use crate::config::{Config, Level};
use crate::model::diff::{self, Affected, ChangedLines, Changes};
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
/// of `head`. `paths`, repository-relative, narrow the Applications reported. Only the
/// Applications the change can affect are rendered and compared, unless `all`; `touched`
/// (repository-relative) are files the change touched that the comparison of the two
/// revisions' YAML files and templates cannot see (any file: git's list of the change).
///
/// # Errors
/// A configuration or usage error of either revision.
pub fn run(
    base: Option<&Options>,
    head: &Options,
    (paths, touched): (&[String], &[String]),
    all: bool,
) -> Result<DiffReport, Error> {
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
        (paths, touched),
        all,
        started,
    ))
}

/// [`run`] with the base revision given as what it holds that the working tree of `head` does
/// not (see [`BaseChanges`]): the head is read once, and the base shares its parse of every
/// file the change did not touch. The base's configuration is the head's (the caller checked
/// that the change did not touch it). `None` when a changed file is one the load does not
/// read (excluded by the configuration): the model may read it from the disk, and only a
/// checkout of the base has its base text there.
///
/// # Errors
/// A configuration or usage error.
pub fn run_against(
    base: &BaseChanges,
    head: &Options,
    (paths, touched): (&[String], &[String]),
    all: bool,
) -> Result<Option<DiffReport>, Error> {
    let started = Instant::now();
    let mut timer = Timer::new(false);
    let (Prepared { repo, config, .. }, base_repo) =
        prepare_with_base(head, Some(base), &mut timer)?;
    let Some(Ok(base_repo)) = base_repo else {
        return Ok(None);
    };
    Ok(Some(compare(
        (base_repo, &config.clone()),
        repo,
        config,
        (paths, touched),
        all,
        started,
    )))
}

/// [`run`] on in-memory files `(relative path, text)`: the fixture harness and the rule docs'
/// examples. Every Application is rendered and compared when `all`.
#[must_use]
pub fn run_texts(
    base: &[(&str, &str)],
    head: &[(&str, &str)],
    config: Config,
    all: bool,
) -> DiffReport {
    let started = Instant::now();
    let base_repo = memory_repository(base).0;
    let repo = memory_repository(head).0;
    compare(
        (base_repo, &config.clone()),
        repo,
        config,
        (&[], &[]),
        all,
        started,
    )
}

fn compare(
    (base_repo, base_config): (Repository, &Config),
    repo: Repository,
    config: Config,
    (paths, touched): (&[String], &[String]),
    all: bool,
    started: Instant,
) -> DiffReport {
    let mut changed = ChangedLines::between(&base_repo, &repo);
    changed.touch(touched);
    let (changes, raw) = {
        let mut base_model = Model::new(&base_repo, base_config.settings());
        let mut head_model = Model::new(&repo, config.settings());
        // Settings change how every Application is read.
        let settings_changed =
            format!("{:?}", base_config.settings()) != format!("{:?}", config.settings());
        let affected = if all || settings_changed {
            Affected::All
        } else {
            diff::affected::affected(&base_model, &head_model, &changed)
        };
        if let Affected::Only(names) = &affected {
            base_model = base_model.rendering_only(names.clone());
            head_model = head_model.rendering_only(names.clone());
        }
        let changes = diff::compare(&base_model, &head_model, &changed, paths, &affected);
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

#[cfg(test)]
mod tests {
    use super::*;

    fn app(name: &str) -> String {
        format!(
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {name}\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/{name}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {name}\n"
        )
    }

    const CHART: &str = "apiVersion: v2\nname: c\nversion: 1.0.0\n";
    const TEMPLATE: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  size: \"{{ .Values.size }}\"\n";

    fn files<'a>(apps: &'a [String; 2], a_values: &'a str) -> Vec<(&'a str, &'a str)> {
        vec![
            ("argocd/a.yaml", &apps[0]),
            ("argocd/b.yaml", &apps[1]),
            ("charts/a/Chart.yaml", CHART),
            ("charts/a/values.yaml", a_values),
            ("charts/a/templates/cm.yaml", TEMPLATE),
            ("charts/b/Chart.yaml", CHART),
            ("charts/b/values.yaml", "size: 1\n"),
            ("charts/b/templates/cm.yaml", TEMPLATE),
        ]
    }

    /// A values edit of one Application's chart affects it alone: the other's chart is not
    /// rendered at either revision, and it is reported unchanged, not affected.
    #[test]
    fn an_unaffected_application_is_not_rendered() {
        let apps = [app("a"), app("b")];
        let (base, head) = (
            memory_repository(&files(&apps, "size: 1\n")).0,
            memory_repository(&files(&apps, "size: 2\n")).0,
        );
        let config = Config {
            repo_urls: vec!["https://git.example.com/gitops.git".into()],
            ..Config::default()
        };
        let changed = ChangedLines::between(&base, &head);
        let (b, h) = (
            Model::new(&base, config.settings()),
            Model::new(&head, config.settings()),
        );
        let affected = diff::affected::affected(&b, &h, &changed);
        assert_eq!(affected, Affected::Only(["a".to_string()].into()));
        let index = |m: &Model<'_>, name: &str| {
            m.argocd().apps.iter().position(|a| a.name == name).unwrap()
        };
        let (ia, ib) = (index(&h, "a"), index(&h, "b"));
        let full = Model::new(&head, config.settings());
        assert_eq!(full.rendered().with_meta(ib, 0).count(), 1);
        let Affected::Only(names) = &affected else {
            unreachable!()
        };
        let (b, h) = (
            b.rendering_only(names.clone()),
            h.rendering_only(names.clone()),
        );
        let changes = diff::compare(&b, &h, &changed, &[], &affected);
        assert_eq!(h.rendered().with_meta(ia, 0).count(), 1);
        assert_eq!(h.rendered().with_meta(ib, 0).count(), 0);
        let status: Vec<(&str, &str, bool)> = changes
            .apps
            .iter()
            .map(|a| (a.name.as_str(), a.status.as_str(), a.affected))
            .collect();
        assert_eq!(status, [("a", "modified", true), ("b", "unchanged", false)]);
    }
}
