//! `diff`'s base revision as changes to the head's working tree: the head is loaded from disk,
//! and the base is the same load with the files the change touched read from their base texts,
//! the files the change added left out and the ones it deleted put back. A file the change did
//! not touch keeps the head's parse (its documents and source are shared, not copied) when its
//! id is the same at both revisions; otherwise it is read again, as the parse cache does (spans
//! hold their file's id).

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::path::Path;
use std::sync::Arc;

use rayon::prelude::*;

use super::read::{self, Loaded};
use crate::repo::retention::Retention;
use crate::rules::internal;
use crate::source::walk::{self, Filter};
use crate::source::{FileId, SourceFile};

/// What the base revision holds that the working tree does not, by root-relative path. The
/// caller (the CLI, through git) guarantees that nothing else differs: no link, submodule,
/// ignore file, configuration or file the walk does not read (a kustomize generator's input,
/// a chart archive) changed, and no chart template was added or removed.
#[derive(Clone, Debug, Default)]
pub struct BaseChanges {
    /// Files at both revisions whose text differs (YAML files and chart templates): the base
    /// text.
    pub modified: BTreeMap<String, String>,
    /// Files the working tree no longer has: the base text. The walk's rules (include and
    /// exclude globs, other tools' folders, YAML names) decide whether each is read; the
    /// caller leaves out those ignored by `.gitignore`.
    pub deleted: BTreeMap<String, String>,
    /// Files the base did not have.
    pub added: BTreeSet<String>,
}

/// Where a base file's parse comes from.
enum Origin<'a> {
    Head(&'a Loaded),
    Text(&'a str),
}

/// The base's files, documents and chart templates.
type Derived = (
    Vec<SourceFile>,
    Vec<crate::model::Document>,
    Vec<SourceFile>,
);

/// The head's load: its files (sorted, ids in order), its chart templates, and the folders
/// holding a `templates` folder.
pub(super) struct Head<'a> {
    pub(super) loaded: &'a [Loaded],
    pub(super) templates: &'a [SourceFile],
    pub(super) with_templates: &'a [String],
}

/// The base's files, documents and templates, from the head's load. A file keeps the head's
/// parse when its id is the same and its folder keeps values documents' values at both
/// revisions or at neither ([`Retention::folders_keeping_values`]).
///
/// A changed file that the load does not read at its revision (excluded by the configuration,
/// in another tool's folder) is returned as the error: the model may still read it from the
/// disk (a kustomize patch, a chart's `.Files`), where only a checkout has the base's.
pub(super) fn derive(
    (root, shared_root): (&Path, &Arc<Path>),
    changes: &BaseChanges,
    filter: &Filter,
    Head {
        loaded: head,
        templates,
        with_templates,
    }: Head<'_>,
    retention: &Retention,
) -> Result<Derived, String> {
    let read_at_head: HashSet<&str> = head
        .iter()
        .map(|l| l.source.path.as_str())
        .chain(templates.iter().map(|t| t.path.as_str()))
        .collect();
    if let Some(rel) = changes
        .modified
        .keys()
        .chain(&changes.added)
        .find(|rel| !read_at_head.contains(rel.as_str()))
    {
        return Err(rel.clone());
    }
    let mut files: Vec<(&str, Origin<'_>)> = head
        .iter()
        .filter(|l| !changes.added.contains(&l.source.path))
        .map(|l| {
            let origin = match changes.modified.get(&l.source.path) {
                Some(text) => Origin::Text(text),
                None => Origin::Head(l),
            };
            (l.source.path.as_str(), origin)
        })
        .collect();
    // What the walk reads (the caller left out what `.gitignore` ignores).
    let walked = |rel: &str| {
        let name = rel.rsplit('/').next().unwrap_or(rel);
        let parts: Vec<&str> = rel.split('/').collect();
        let folders = (1..parts.len()).map(|i| parts[..i].join("/"));
        walk::is_yaml_name(name)
            && filter.accepts(rel)
            && !parts[..parts.len() - 1]
                .iter()
                .any(|d| *d == ".git" || filter.skips_tool_dir(d))
            && !folders.into_iter().any(|f| filter.excludes_dir(&f))
    };
    if let Some(rel) = changes.deleted.keys().find(|rel| !walked(rel)) {
        return Err(rel.clone());
    }
    files.extend(
        changes
            .deleted
            .iter()
            .map(|(rel, text)| (rel.as_str(), Origin::Text(text))),
    );
    files.sort_by(|a, b| a.0.cmp(b.0));
    files.dedup_by(|a, b| a.0 == b.0);

    let keeps = |paths: Vec<&str>| -> HashSet<String> {
        retention
            .folders_keeping_values(paths.iter().copied(), with_templates)
            .into_iter()
            .map(str::to_string)
            .collect()
    };
    let head_folders = keeps(head.iter().map(|l| l.source.path.as_str()).collect());
    let base_folders = keeps(files.iter().map(|f| f.0).collect());
    let folder = |rel: &str| rel.rsplit_once('/').map_or("", |(dir, _)| dir).to_string();
    let no_overlay = BTreeMap::new();
    let loaded: Vec<Loaded> = files
        .into_par_iter()
        .enumerate()
        .with_min_len(64)
        .map(|(i, (rel, origin))| {
            let id = FileId(u32::try_from(i).unwrap_or(u32::MAX));
            let keeps_values = base_folders.contains(&folder(rel));
            let abs = root.join(rel);
            let mut l = match origin {
                Origin::Head(l)
                    if l.source.id == id && keeps_values == head_folders.contains(&folder(rel)) =>
                {
                    l.clone()
                }
                // A file the head could not read, or a link the walk did not follow: the
                // same at base, under its new id.
                Origin::Head(l)
                    if l.findings
                        .iter()
                        .any(|(rule, _)| *rule == internal::IoUnreadable::ID) =>
                {
                    Loaded {
                        source: SourceFile::unreadable(
                            id,
                            rel.to_string(),
                            l.source.abs().into_owned(),
                            l.source.unreadable.clone(),
                        ),
                        docs: Vec::new(),
                        findings: Vec::new(),
                    }
                }
                Origin::Head(l) => read::load_one(
                    id,
                    rel.to_string(),
                    l.source.abs().into_owned(),
                    None,
                    &no_overlay,
                    retention,
                    keeps_values,
                ),
                Origin::Text(text) => read::load_kept(id, rel, abs, text, retention, keeps_values),
            };
            l.source = l.source.under(shared_root);
            l
        })
        .collect();
    let mut sources = Vec::with_capacity(loaded.len());
    let mut docs = Vec::new();
    for l in loaded {
        sources.push(l.source);
        docs.extend(l.docs);
    }
    let base_templates = templates
        .iter()
        .filter(|t| !changes.added.contains(&t.path))
        .enumerate()
        .map(|(i, t)| {
            let id = FileId(u32::try_from(sources.len() + i).unwrap_or(u32::MAX));
            match changes.modified.get(&t.path) {
                Some(text) => {
                    SourceFile::new(id, t.path.clone(), t.abs().into_owned(), text.clone())
                        .under(shared_root)
                }
                None if t.id == id => t.clone(),
                None => {
                    let mut t = t.clone();
                    t.id = id;
                    t
                }
            }
        })
        .collect();
    Ok((sources, docs, base_templates))
}
