//! Loading: config, walk, read and parse in parallel, classify; what a run keeps of each file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::base::BaseChanges;
use super::cache::{self, ParseCache};
use super::read::{Loaded, load_one};
use super::root::{filters_under, resolve_root};
use super::timer::Timer;
use super::{Error, Options, PolicyArgs};
use crate::config::{self, Config, ConfigErrors, Level};
use crate::diagnostic::Finding;
use crate::model::{self, Repository};
use crate::registry;
use crate::repo::retention::{Reads, Retention};
use crate::source::walk::{self, Filter};
use crate::source::{FileId, SourceDb, SourceFile};

/// What loading a repository gives: the repository, its config, the files to report on, and
/// the findings met while reading and parsing.
pub(super) struct Prepared {
    pub(super) repo: Repository,
    pub(super) config: Config,
    pub(super) report_files: Vec<PathBuf>,
    pub(super) load_findings: Vec<(&'static str, Finding)>,
    pub(super) config_path: Option<PathBuf>,
    /// What the cache kept of the last run's findings (with [`Options::cache`]).
    pub(super) reuse: Option<cache::Reuse>,
    /// What the run keeps of the files (see [`retention`]).
    pub(super) retention: Retention,
}

/// Root, config, walk, read, parse and classify: everything before the rules.
pub(super) fn prepare(opts: &Options, timer: &mut Timer) -> Result<Prepared, Error> {
    prepare_with_base(opts, None, timer).map(|(p, _)| p)
}

/// [`prepare`], and with `base` the repository of `diff`'s base revision as well, made from
/// the head's load (see [`super::base`]).
pub(super) fn prepare_with_base(
    opts: &Options,
    base: Option<&BaseChanges>,
    timer: &mut Timer,
) -> Result<(Prepared, Option<BaseRepository>), Error> {
    let (root, report_files) = match &opts.root {
        Some(root) => (
            root.clone(),
            filters_under(root, &opts.paths, &opts.overlay)?,
        ),
        None => resolve_root(&opts.paths)?,
    };
    let config_path = opts.config.clone().or_else(|| config::find(&root));
    let confined = crate::source::fs::Root::new(&root);
    let mut config = match &config_path {
        Some(p) => config::load_in(&confined, p, confined.reach_of(p), &registry::all_meta())
            .map_err(Error::Config)?,
        None => Config::default(),
    };
    config.select_rules(&opts.selection);
    let mut exclude = config.exclude.clone();
    exclude.extend(opts.exclude.iter().cloned());
    let filter = Filter::new(&config.include, &exclude)
        .map_err(|(p, e)| Error::Usage(format!("invalid glob `{p}`: {e}")))?;
    let discovered = walk::discover_at_most(&root, &filter, opts.walk_limit);
    if let Some(limit) = discovered.stopped_at {
        return Err(Error::Usage(walk::too_many(&root, limit)));
    }
    timer.mark("walk");
    let user_policies = !opts.policy.paths.is_empty() || !config.policies.is_empty();
    let retention = retention(&config, user_policies, opts.cache.is_some());
    let (repo, load_findings, reuse, base_repo) = load_project_with_base(
        root,
        discovered,
        &opts.overlay,
        &retention,
        opts.cache.as_deref(),
        base.map(|b| (b, &filter)),
    );
    timer.mark("read, parse, kustomize");
    check_roots(&config, &repo)?;
    if let Some(Ok(b)) = &base_repo {
        check_roots(&config, b)?;
    }
    let prepared = Prepared {
        repo,
        config,
        report_files,
        load_findings,
        config_path,
        reuse,
        retention,
    };
    Ok((prepared, base_repo))
}

/// What the run keeps of the files: what its enabled rules (Rust and the shipped pack) and the
/// model's facts read, everything when user policies run (they may read any field of any
/// object), and every values document's values for the language server (`server`: its
/// hovers show them).
pub(super) fn retention(config: &Config, user_policies: bool, server: bool) -> Retention {
    let enabled = registry::builtin()
        .chain(registry::pack())
        .map(|r| r.meta())
        .filter(|m| config.level(m.id) != Some(Level::Off));
    retention_of(enabled, user_policies, server)
}

/// What a run of `rules` keeps (see [`retention`]).
fn retention_of(
    rules: impl Iterator<Item = &'static crate::rule::RuleMeta>,
    user_policies: bool,
    server: bool,
) -> Retention {
    let mut reads: Vec<&Reads> = rules.map(|m| &m.reads).collect();
    reads.extend(model::READS.iter());
    if user_policies {
        reads.push(&Reads::EVERYTHING);
    }
    if server {
        reads.push(&Reads::VALUES);
    }
    Retention::of(reads)
}

/// `argocd.roots` must name files that are checked: a root that matches nothing would make
/// every Argo CD object dead, and every Argo CD rule silent.
fn check_roots(config: &Config, repo: &Repository) -> Result<(), Error> {
    let errors: Vec<config::ConfigError> = config
        .argocd
        .roots
        .iter()
        .enumerate()
        .filter(|(_, r)| model::paths::join("", r).is_none_or(|p| repo.file_by_path(&p).is_none()))
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

/// Compiles the user's policies: `--policy` paths and the config's `policies:`.
pub(super) fn load_user_policies(
    args: &PolicyArgs,
    config: &Config,
    config_path: &Option<PathBuf>,
    root: &Path,
) -> Result<Option<crate::policy::run::UserPolicies>, Error> {
    use crate::policy::{self, CompileOptions};
    use crate::source::fs::{Reach, Root};
    let root = Root::new(root);
    // A path the user named reaches as far as its place says; the configuration's entries as
    // far as the configuration's: a repository's `policies:` stay in the repository.
    let named = |p: &PathBuf| (p.clone(), root.reach_of(p));
    let mut paths: Vec<(PathBuf, Reach)> = args.paths.iter().map(named).collect();
    let base = config_path
        .as_ref()
        .and_then(|p| p.parent())
        .map(Path::to_path_buf)
        .unwrap_or_default();
    let config_reach = config_path
        .as_ref()
        .map_or(Reach::Root, |p| root.reach_of(p));
    paths.extend(config.policies.iter().map(|p| (base.join(p), config_reach)));
    if paths.is_empty() {
        return Ok(None);
    }
    let files =
        policy::collect_rego_files_in(&root, &paths).map_err(|e| Error::Policy(Box::new(e)))?;
    let mut data_paths: Vec<(PathBuf, Reach)> = args.data.iter().map(named).collect();
    data_paths.extend(config.data.iter().map(|p| (base.join(p), config_reach)));
    let data =
        policy::load_data_dirs_in(&root, &data_paths).map_err(|e| Error::Policy(Box::new(e)))?;
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
        namespaces: if !args.namespaces.is_empty() {
            args.namespaces.clone()
        } else if !config.namespace.is_empty() {
            config.namespace.clone()
        } else {
            vec!["main".to_string()]
        },
        all_namespaces: args.all_namespaces,
        combine: args.combine,
    }))
}

/// Reads and parses files in parallel into a [`Repository`], keeping YAML and I/O problems.
#[cfg(test)]
fn load_project(
    root: PathBuf,
    discovered: walk::Discovered,
    overlay: &std::collections::BTreeMap<String, String>,
    retention: &Retention,
    cache: Option<&ParseCache>,
) -> (
    Repository,
    Vec<(&'static str, Finding)>,
    Option<cache::Reuse>,
) {
    let (repo, findings, reuse, _) =
        load_project_with_base(root, discovered, overlay, retention, cache, None);
    (repo, findings, reuse)
}

/// The head's repository, its load findings and what the cache kept, and the base's
/// repository (see [`load_project_with_base`]).
type WithBase = (
    Repository,
    Vec<(&'static str, Finding)>,
    Option<cache::Reuse>,
    Option<BaseRepository>,
);

/// The base's repository, or the changed file it cannot be made without (see
/// [`super::base::derive`]).
pub(super) type BaseRepository = Result<Repository, String>;

/// [`load_project`], and with `base` the repository of `diff`'s base revision (see
/// [`super::base`]), which shares the head's parse of the files the change did not touch.
fn load_project_with_base(
    root: PathBuf,
    walk::Discovered {
        found,
        problems,
        with_templates,
        ..
    }: walk::Discovered,
    overlay: &std::collections::BTreeMap<String, String>,
    retention: &Retention,
    cache: Option<&ParseCache>,
    base: Option<(&BaseChanges, &Filter)>,
) -> WithBase {
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
    let (mut loaded, reuse): (Vec<Loaded>, _) = match cache {
        Some(cache) => {
            let entries = entries
                .into_iter()
                .map(|(rel, at, problem)| {
                    let abs = at.unwrap_or_else(|| root.join(&rel));
                    (rel, abs, problem)
                })
                .collect();
            let (loaded, reuse) = cache.load(&root, entries, overlay, retention);
            (loaded, Some(reuse))
        }
        None => {
            let folders = retention
                .folders_keeping_values(entries.iter().map(|e| e.0.as_str()), &with_templates);
            let keeps: Vec<bool> = entries
                .iter()
                .map(|e| folders.contains(e.0.rsplit_once('/').map_or("", |(dir, _)| dir)))
                .collect();
            drop(folders);
            (
                entries
                    .into_par_iter()
                    .zip(keeps)
                    .enumerate()
                    // Files of one folder are alike and sorted together (a folder of large
                    // ConfigMaps): split into small tasks, so that no thread is left with a
                    // long run of large files while the others wait.
                    .with_max_len(LOAD_TASK_FILES)
                    .map(|(i, ((rel, at, problem), keeps_values))| {
                        let id = FileId(u32::try_from(i).unwrap_or(u32::MAX));
                        let abs = at.unwrap_or_else(|| root.join(&rel));
                        // Located under the shared root on the thread that made the path,
                        // which then reuses its memory.
                        let mut loaded =
                            load_one(id, rel, abs, problem, overlay, retention, keeps_values);
                        loaded.source = loaded.source.under(&shared_root);
                        loaded
                    })
                    .collect(),
                None,
            )
        }
    };

    let mut templates = read_templates(&root, &shared_root, &loaded, &with_templates, cache);
    let git_origin = crate::model::paths::git_origin(&root);
    let base_repo = base.map(|(changes, filter)| {
        // The base's clones of the head's files share their texts, read once.
        for l in &mut loaded {
            l.source.share();
        }
        for t in &mut templates {
            t.share();
        }
        let (files, docs, templates) = super::base::derive(
            (&root, &shared_root),
            changes,
            filter,
            super::base::Head {
                loaded: &loaded,
                templates: &templates,
                with_templates: &with_templates,
            },
            retention,
        )?;
        let mut repo = Repository::read_from_disk_without(
            root.clone(),
            SourceDb::with_templates(files, templates),
            docs,
            changes.added.clone(),
        );
        repo.git_origin = git_origin.clone();
        Ok(repo)
    });
    let mut files = Vec::with_capacity(loaded.len());
    let mut docs = Vec::with_capacity(loaded.iter().map(|l| l.docs.len()).sum());
    let mut findings = Vec::new();
    for l in loaded {
        // The cache's files are located here; the others already are.
        files.push(l.source.under(&shared_root));
        docs.extend(l.docs);
        findings.extend(l.findings);
    }
    let mut repo =
        Repository::read_from_disk(root, SourceDb::with_templates(files, templates), docs);
    repo.git_origin = git_origin;
    (repo, findings, reuse, base_repo)
}

/// Files loaded in one task at most (see [`load_project`]).
const LOAD_TASK_FILES: usize = 8;

/// The templates of the discovered charts (see [`walk::chart_templates`]), ids after `files`.
/// A template that is not UTF-8 text is left out, as Helm's renderer would fail on it. Only
/// the charts with a `templates` folder the walk met are listed (`with_templates`, sorted):
/// most charts of a large repository have none.
/// With a `cache` (the language server), a template unchanged since the last run is not read
/// again.
fn read_templates(
    root: &Path,
    shared_root: &Arc<Path>,
    files: &[Loaded],
    with_templates: &[String],
    cache: Option<&ParseCache>,
) -> Vec<SourceFile> {
    let mut dirs = crate::repo::memory::chart_dirs(files.iter().map(|f| f.source.path.as_str()));
    dirs.retain(|d| {
        with_templates
            .binary_search_by(|t| t.as_str().cmp(d))
            .is_ok()
    });
    let mut found = walk::chart_templates(root, &dirs);
    found.retain(|f| {
        files
            .binary_search_by(|x| x.source.path.as_str().cmp(&f.rel))
            .is_err()
    });
    if let Some(cache) = cache {
        let found = found.into_iter().map(|f| {
            let abs = f.abs(root);
            (f.rel, abs)
        });
        return cache
            .templates(found.collect(), files.len(), |abs| {
                crate::source::read_text(abs).ok()
            })
            .into_iter()
            .map(|f| f.under(shared_root))
            .collect();
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diagnostic::Severity;
    use crate::model::{Document, Model};
    use crate::rule::{Context, FixAvailability, Payload, Rule, RuleMeta};

    /// A rule that reads a ConfigMap key no built-in rule reads.
    struct ReadsSettings;

    static META: RuleMeta = RuleMeta {
        id: "test/reads-settings",
        summary: "reads `settings.json`",
        default_severity: Severity::Info,
        fix: FixAvailability::None,
        reads: Reads {
            payloads: &[Payload::Keys(&["settings.json"])],
            ..Reads::NONE
        },
        applies_to: &[model::DocKind::K8sObject],
        options: &[],
        docs: "",
    };

    impl Rule for ReadsSettings {
        fn meta(&self) -> &'static RuleMeta {
            &META
        }

        fn check(&self, doc: &Document, _: &Context<'_>) -> Vec<Finding> {
            let Some(value) = doc.root.path(&["data", "settings.json"]) else {
                return Vec::new();
            };
            let read = if value.dropped() {
                "dropped".to_string()
            } else {
                format!("{} bytes", value.scalar_text().map_or(0, str::len))
            };
            vec![Finding::new(read, value.span)]
        }
    }

    /// What the rule reports on a ConfigMap with 2 KiB of settings, loaded from disk for a run
    /// of the built-in rules, with the rule or without it.
    fn read_by_rule(with_rule: bool) -> Vec<String> {
        let dir = tempfile::tempdir().expect("a temporary folder");
        let settings = format!("{{\"a\": \"{}\"}}", "x".repeat(2048));
        std::fs::write(
            dir.path().join("settings.yaml"),
            format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\ndata:\n  settings.json: '{settings}'\n"
            ),
        )
        .expect("the file");
        let root = dir.path().to_path_buf();
        let filter = Filter::new(&[], &[]).expect("no globs");
        let discovered = walk::discover_at_most(&root, &filter, None);
        let rules = registry::builtin().map(|r| r.meta());
        let retention = if with_rule {
            retention_of(rules.chain([&META]), false, false)
        } else {
            retention_of(rules, false, false)
        };
        let (repo, _, _) = load_project(
            root,
            discovered,
            &std::collections::BTreeMap::new(),
            &retention,
            None,
        );
        let model = Model::new(&repo, Default::default());
        let options = Default::default();
        let cx = Context::new(&model, &options);
        repo.docs
            .iter()
            .flat_map(|d| ReadsSettings.check(d, &cx))
            .map(|f| f.message)
            .collect()
    }

    /// A tunnel route in an Application's inline Helm values, on disk: the Application's text
    /// (released after the load for most Applications) is kept, as the routes read it.
    #[test]
    fn a_tunnel_route_in_an_applications_values_is_read_from_disk() {
        let dir = tempfile::tempdir().expect("a temporary folder");
        std::fs::write(
            dir.path().join("tunnel.yaml"),
            "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: tunnel\nspec:\n  source:\n    chart: cloudflare-tunnel\n    helm:\n      values: |\n        ingress:\n          - hostname: argocd.example.com\n            service: http://argocd-server.argocd:80\n",
        )
        .expect("the file");
        let root = dir.path().to_path_buf();
        let filter = Filter::new(&[], &[]).expect("no globs");
        let discovered = walk::discover_at_most(&root, &filter, None);
        let retention = retention(&Config::default(), false, false);
        let (repo, _, _) = load_project(
            root,
            discovered,
            &std::collections::BTreeMap::new(),
            &retention,
            None,
        );
        let model = Model::new(&repo, Default::default());
        let routes = crate::model::k8s::routes::tunnels::tunnel_routes(&repo, model.k8s());
        let services: Vec<&str> = routes.iter().map(|r| r.service.as_str()).collect();
        assert_eq!(services, ["argocd-server"]);
    }

    #[test]
    fn a_declared_configmap_key_keeps_its_value_and_an_undeclared_one_is_marked_dropped() {
        // `{"a": "x…"}`: 2 KiB and 9 bytes.
        assert_eq!(read_by_rule(true), ["2057 bytes"]);
        assert_eq!(read_by_rule(false), ["dropped"]);
    }
}
