//! Parsed files kept between runs, for the language server's re-lint after an edit: a file
//! whose path, id and content are unchanged is not read or parsed again.
//!
//! A file is unchanged when its length, modification time and inode are those seen when it was
//! read (a file on disk), or when its text is the same (an open buffer given as overlay). The walk
//! runs every time (cheap); only reading and parsing are saved. Spans hold their file's id,
//! which follows the sorted order of paths, so a file whose id moved (a file was added or
//! removed before it) is parsed again rather than renumbered.
//!
//! Each file also keeps the findings of the rules whose per-document findings depend only on
//! the document (see [`crate::rule::Rule::document_memo_key`]), with the rules' keys: a run
//! with the same keys reuses them for the documents of unchanged files that kustomize did not
//! transform, before stamping and suppression.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use rayon::prelude::*;

use super::read::{self, Loaded};
use crate::repo::retention::Retention;
use crate::rule::Emitted;
use crate::source::{FileId, SourceFile};

/// A file to load: root-relative path, absolute path, and why it cannot be read (and whether
/// that is a deliberate skip), as `load_project` lists them.
type WalkEntry = (String, PathBuf, Option<(String, bool)>);

/// Parsed files of one repository, reused by the runs given it in [`super::Options::cache`].
#[derive(Default)]
pub struct ParseCache {
    inner: Mutex<Inner>,
    /// The results of the shipped repository-scope Rego rules, reused while the model they
    /// read is the same.
    pub(super) repo_results: Arc<crate::policy::run::KeptRepoResults>,
    /// The chart renderings and compiled templates, reused while their inputs are the same.
    pub(super) renders: Arc<crate::model::argocd::rendered::RenderCache>,
    /// The chart templates read (they are not parsed as YAML): by absolute path, the file as
    /// it was when read, and the file with its text shared by its clones.
    templates: Mutex<HashMap<PathBuf, (DiskStamp, SourceFile)>>,
}

#[derive(Default)]
struct Inner {
    root: PathBuf,
    /// What the cached trees kept (see `load_one`).
    retention: Retention,
    files: HashMap<String, Entry>,
    last: CacheStats,
    /// Counts the loads, so that a run's findings are kept only if no other run loaded since.
    generation: u64,
    /// The rules' memo keys of the kept findings ([`Entry::memo`]).
    memo_key: String,
}

/// One document's findings of the rules with a memo key: one list per such rule, in the
/// rules' order.
pub(super) type DocFindings = Vec<Vec<Emitted>>;

/// One file's [`DocFindings`], by document index.
pub(super) type FileMemo = Arc<Vec<(usize, DocFindings)>>;

/// What a run may reuse of the findings kept by an earlier one.
pub(super) struct Reuse {
    generation: u64,
    /// The rules' memo keys the findings were kept under.
    pub(super) key: String,
    /// By file id: the kept findings of a file taken from the cache unchanged.
    pub(super) files: Vec<Option<FileMemo>>,
}

/// How the last run used the cache.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Files taken from the cache.
    pub reused: usize,
    /// Files read and parsed.
    pub parsed: usize,
}

/// A file's length, modification time and (on Unix) inode: a write or a replacement by rename
/// (editors, `git checkout`) changes one of them.
#[derive(Clone, Copy, PartialEq, Eq)]
struct DiskStamp {
    len: u64,
    modified: SystemTime,
    inode: u64,
}

impl DiskStamp {
    fn of(path: &Path) -> Option<DiskStamp> {
        let meta = std::fs::metadata(path).ok()?;
        #[cfg(unix)]
        let inode = std::os::unix::fs::MetadataExt::ino(&meta);
        #[cfg(not(unix))]
        let inode = 0;
        Some(DiskStamp {
            len: meta.len(),
            modified: meta.modified().ok()?,
            inode,
        })
    }
}

struct Entry {
    id: FileId,
    /// What the file on disk was when read; `None` for an overlay's text.
    disk: Option<DiskStamp>,
    loaded: Loaded,
    memo: Option<FileMemo>,
}

impl std::fmt::Debug for ParseCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let files = self.inner.lock().map_or(0, |i| i.files.len());
        f.debug_struct("ParseCache").field("files", &files).finish()
    }
}

impl ParseCache {
    #[must_use]
    pub fn new() -> Self {
        ParseCache::default()
    }

    /// How the last run used the cache.
    #[must_use]
    pub fn stats(&self) -> CacheStats {
        self.inner.lock().map(|i| i.last).unwrap_or_default()
    }

    /// Loads `entries` (sorted, with their ids in order), reusing unchanged files, and keeps
    /// what was loaded for the next run. Files no longer walked are forgotten.
    pub(super) fn load(
        &self,
        root: &Path,
        entries: Vec<WalkEntry>,
        overlay: &std::collections::BTreeMap<String, String>,
        retention: &Retention,
    ) -> (Vec<Loaded>, Reuse) {
        // A poisoned lock only means an earlier run panicked: start afresh.
        let mut inner = self
            .inner
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        // Trees loaded for other readers (payloads dropped, values files' trees) cannot serve
        // a run that keeps more, or another part.
        let mut old = if inner.root == root && inner.retention == *retention {
            std::mem::take(&mut inner.files)
        } else {
            HashMap::new()
        };
        let work: Vec<_> = entries
            .into_iter()
            .enumerate()
            .map(|(i, (rel, abs, problem))| {
                let cached = old.remove(&rel);
                (i, rel, abs, problem, cached)
            })
            .collect();
        drop(old);
        let results: Vec<(Loaded, Option<Entry>, bool)> = work
            .into_par_iter()
            .map(|(i, rel, abs, problem, cached)| {
                let id = FileId(u32::try_from(i).unwrap_or(u32::MAX));
                load_one(id, rel, abs, problem, overlay, retention, cached)
            })
            .collect();
        let mut files = HashMap::with_capacity(results.len());
        let mut last = CacheStats::default();
        let mut loaded = Vec::with_capacity(results.len());
        let mut memos = Vec::with_capacity(results.len());
        for (l, entry, reused) in results {
            if reused {
                last.reused += 1;
            } else {
                last.parsed += 1;
            }
            memos.push(
                entry
                    .as_ref()
                    .filter(|_| reused)
                    .and_then(|e| e.memo.clone()),
            );
            if let Some(e) = entry {
                files.insert(l.source.path.clone(), e);
            }
            loaded.push(l);
        }
        inner.root = root.to_path_buf();
        inner.retention = retention.clone();
        inner.files = files;
        inner.last = last;
        inner.generation += 1;
        let reuse = Reuse {
            generation: inner.generation,
            key: inner.memo_key.clone(),
            files: memos,
        };
        (loaded, reuse)
    }

    /// The chart templates at `found` (absolute paths, in order), as [`SourceFile`]s with the
    /// ids that follow `first`, the unreadable ones left out: a template whose length,
    /// modification time and inode are those seen last time is not read again. Only the
    /// templates of this run are kept.
    pub(super) fn templates(
        &self,
        found: Vec<(String, PathBuf)>,
        first: usize,
        read: impl Fn(&std::path::Path) -> Option<String> + Sync,
    ) -> Vec<SourceFile> {
        let old = std::mem::take(
            &mut *self
                .templates
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner),
        );
        // A template as kept or read, with its stamp when it may be kept for the next run.
        type Read = (
            String,
            PathBuf,
            Option<DiskStamp>,
            Result<SourceFile, String>,
        );
        let read: Vec<Option<Read>> = found
            .into_par_iter()
            .map(|(rel, abs)| {
                // Taken before reading, so a write during the read makes the next run read again.
                let disk = DiskStamp::of(&abs);
                if let (Some(d), Some((stamp, file))) = (disk, old.get(&abs))
                    && *stamp == d
                    && file.path == rel
                {
                    return Some((rel, abs, disk, Ok(file.clone())));
                }
                let text = read(&abs)?;
                Some((rel, abs, disk, Err(text)))
            })
            .collect();
        drop(old);
        let mut kept = HashMap::with_capacity(read.len());
        let mut out = Vec::with_capacity(read.len());
        for (i, (rel, abs, disk, file)) in read.into_iter().flatten().enumerate() {
            let id = FileId(u32::try_from(first + i).unwrap_or(u32::MAX));
            let mut file = match file {
                Ok(f) if f.id == id => f,
                Ok(f) => SourceFile::new(id, rel, abs.clone(), f.text().to_string()),
                Err(text) => SourceFile::new(id, rel, abs.clone(), text),
            };
            file.share();
            if let Some(d) = disk {
                kept.insert(abs, (d, file.clone()));
            }
            out.push(file);
        }
        *self
            .templates
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = kept;
        out
    }

    /// Keeps the findings of the run that `reuse` came from, under the rules' `key`, unless
    /// another run loaded since: by file id, the files' new findings.
    pub(super) fn keep_findings(
        &self,
        reuse: &Reuse,
        key: String,
        mut files: HashMap<FileId, FileMemo>,
    ) {
        let Ok(mut inner) = self.inner.lock() else {
            return;
        };
        if inner.generation != reuse.generation {
            return;
        }
        inner.memo_key = key;
        for e in inner.files.values_mut() {
            e.memo = files.remove(&e.id);
        }
    }
}

/// One file: the cached parse when still valid, else a fresh one (kept when cacheable).
/// Returns whether the cache was used.
fn load_one(
    id: FileId,
    rel: String,
    abs: PathBuf,
    problem: Option<(String, bool)>,
    overlay: &std::collections::BTreeMap<String, String>,
    retention: &Retention,
    cached: Option<Entry>,
) -> (Loaded, Option<Entry>, bool) {
    // The language server keeps every values document's values (see `load::retention`), so
    // no file needs to know its chart's folder.
    let keeps_values = true;
    if problem.is_some() {
        return (
            read::load_one(id, rel, abs, problem, overlay, retention, keeps_values),
            None,
            false,
        );
    }
    let text = overlay.get(&rel);
    // Taken before reading, so a write during the read makes the next run read again.
    let disk = match text {
        Some(_) => None,
        None => DiskStamp::of(&abs),
    };
    if let Some(c) = cached {
        let same = c.id == id
            && match text {
                Some(t) => c.loaded.source.text() == t.as_str(),
                None => disk.is_some() && c.disk == disk,
            };
        if same {
            return (c.loaded.clone(), Some(c), true);
        }
    }
    let mut loaded = read::load_one(id, rel, abs, None, overlay, retention, keeps_values);
    // The cache and each run share the text and line index.
    loaded.source.share();
    // An unreadable file (or one whose time is unknown) is tried again next time.
    let cacheable = loaded.source.unreadable.is_none() && (text.is_some() || disk.is_some());
    let entry = cacheable.then(|| Entry {
        id,
        disk,
        loaded: loaded.clone(),
        memo: None,
    });
    (loaded, entry, false)
}
