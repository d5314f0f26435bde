//! Loading: config, walk, read and parse in parallel, classify; what a run keeps of each file.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rayon::prelude::*;

use super::cache::{self, ParseCache};
use super::read::{Keep, Loaded, load_one};
use super::root::{filters_under, resolve_root};
use super::timer::Timer;
use super::{Error, Options, PolicyArgs};
use crate::config::{self, Config, ConfigErrors, Level};
use crate::diagnostic::Finding;
use crate::model::{self, Repository};
use crate::registry;
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
}

/// Root, config, walk, read, parse and classify: everything before the rules.
pub(super) fn prepare(opts: &Options, timer: &mut Timer) -> Result<Prepared, Error> {
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
    let (repo, load_findings, reuse) =
        load_project(root, discovered, &opts.overlay, keep, opts.cache.as_deref());
    timer.mark("read, parse, kustomize");
    check_roots(&config, &repo)?;
    Ok(Prepared {
        repo,
        config,
        report_files,
        load_findings,
        config_path,
        reuse,
    })
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
fn load_project(
    root: PathBuf,
    walk::Discovered {
        found,
        problems,
        with_templates,
        ..
    }: walk::Discovered,
    overlay: &std::collections::BTreeMap<String, String>,
    keep: Keep,
    cache: Option<&ParseCache>,
) -> (
    Repository,
    Vec<(&'static str, Finding)>,
    Option<cache::Reuse>,
) {
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
    let git_origin = crate::model::paths::git_origin(&root);
    let mut repo = Repository::new(root, SourceDb::with_templates(files, templates), docs);
    repo.git_origin = git_origin;
    repo.on_disk = true;
    (repo, findings, reuse)
}

/// Files loaded in one task at most (see [`load_project`]).
const LOAD_TASK_FILES: usize = 8;

/// Folders of the charts among `paths` that have default values (`values.yaml`).
fn dirs_with_chart_defaults<'a>(paths: impl Iterator<Item = &'a str> + Clone) -> HashSet<&'a str> {
    let with_values: HashSet<&str> = paths
        .clone()
        .filter_map(|p| {
            let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
            matches!(name, "values.yaml" | "values.yml").then_some(dir)
        })
        .collect();
    crate::repo::memory::chart_dirs(paths)
        .into_iter()
        .filter(|d| with_values.contains(d))
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
    let mut dirs = crate::repo::memory::chart_dirs(files.iter().map(|f| f.path.as_str()));
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
