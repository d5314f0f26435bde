//! What the language server keeps of `rendered::build` from one re-lint to the next:
//! each rendering's objects, by a fingerprint of everything the rendering reads, and the
//! compiled templates.
//!
//! A rendering reads its chart as loaded (`Chart.yaml`, defaults, templates, `crds/`, `.Files`,
//! subcharts and archives), the effective values with the spans of their nodes, the release,
//! the place that installs it, and the ids of the files its spans point into. Ids follow the
//! sorted paths of every file, so the kept renderings are dropped when a file is added,
//! removed or renamed ([`layout`]); otherwise an edit to one values file renders again only the
//! releases whose effective values it changes. A run keeps only the renderings it used, so the
//! cache never holds more than one run's objects, whose trees it shares with that run's model.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::{Arc, Mutex, PoisonError};

use crate::model::Repository;
use crate::model::helm::values::Values;
use crate::model::helm::{Chart, Release, RenderedImage};
use crate::source::{FileId, Span};
use crate::yaml::Node;

/// A 128-bit fingerprint.
pub(super) type Key = u128;

/// Renderings and compiled templates kept across runs of one repository (the language
/// server's re-lints), given to the model with [`crate::model::Model::with_render_cache`].
#[derive(Default)]
pub struct RenderCache {
    kept: Mutex<Kept>,
    /// One template parse cache per rendering thread of the last run.
    parses: Mutex<Vec<gotmpl::ParseCache>>,
}

#[derive(Default)]
struct Kept {
    layout: Key,
    renderings: HashMap<Key, Arc<Outcome>>,
}

impl std::fmt::Debug for RenderCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let (renderings, texts) = self.sizes();
        f.debug_struct("RenderCache")
            .field("renderings", &renderings)
            .field("templates", &texts)
            .finish()
    }
}

/// What one rendering gave the rules: the charts it read and the objects kept of it.
pub(super) struct Outcome {
    pub(super) names: Vec<String>,
    pub(super) docs: Vec<KeptDoc>,
    /// What it spent of the run's budget: a run reusing it spends as much.
    pub(super) used: gotmpl::Usage,
}

/// A rendered object as `rendered::RenderedObjects` holds it, before the labels that
/// name the Applications installing it.
pub(super) struct KeptDoc {
    pub(super) root: Arc<Node>,
    /// Repository-relative template file and 1-based line of the document's first byte.
    pub(super) template: String,
    pub(super) line: usize,
    pub(super) file: Option<FileId>,
    pub(super) start: Span,
    pub(super) images: Vec<RenderedImage>,
}

impl RenderCache {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// How many renderings and distinct template texts it holds.
    #[must_use]
    pub fn sizes(&self) -> (usize, usize) {
        let renderings = self
            .kept
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .renderings
            .len();
        let texts = self
            .parses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .map(gotmpl::ParseCache::len)
            .sum();
        (renderings, texts)
    }

    /// The renderings kept for a repository of this `layout` (none when its files moved).
    pub(super) fn take(&self, layout: Key) -> HashMap<Key, Arc<Outcome>> {
        let mut kept = self.kept.lock().unwrap_or_else(PoisonError::into_inner);
        let renderings = std::mem::take(&mut kept.renderings);
        if kept.layout == layout {
            renderings
        } else {
            HashMap::new()
        }
    }

    /// Keeps the renderings of a run, in place of those of the run before.
    pub(super) fn keep(&self, layout: Key, renderings: HashMap<Key, Arc<Outcome>>) {
        *self.kept.lock().unwrap_or_else(PoisonError::into_inner) = Kept { layout, renderings };
    }

    /// A template parse cache for one rendering thread.
    pub(super) fn parse_cache(&self) -> gotmpl::ParseCache {
        self.parses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
            .unwrap_or_default()
    }

    /// Gives back a thread's parse cache. One that parsed or reused a text in this run keeps
    /// only the texts it used (the cache holds no more than one run's distinct templates); one
    /// left unused, all renderings having been reused, keeps what it had.
    pub(super) fn give_back(&self, mut cache: gotmpl::ParseCache, used: bool) {
        if used {
            cache.sweep();
        }
        self.parses
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(cache);
    }
}

/// Two SipHash states on different prefixes, for a 128-bit fingerprint.
struct Fingerprint(DefaultHasher, DefaultHasher);

impl Fingerprint {
    fn new() -> Self {
        let mut second = DefaultHasher::new();
        second.write_u8(0x5a);
        Fingerprint(DefaultHasher::new(), second)
    }

    fn key(&self) -> Key {
        (u128::from(self.0.finish()) << 64) | u128::from(self.1.finish())
    }
}

impl Hasher for Fingerprint {
    fn write(&mut self, bytes: &[u8]) {
        self.0.write(bytes);
        self.1.write(bytes);
    }

    fn finish(&self) -> u64 {
        self.0.finish()
    }
}

/// Feeds `Debug` output to a hasher, for the small parts of a chart that derive nothing else.
impl std::fmt::Write for Fingerprint {
    fn write_str(&mut self, s: &str) -> std::fmt::Result {
        self.write(s.as_bytes());
        Ok(())
    }
}

/// The ids and paths of every file and template: renderings point into files by id.
pub(super) fn layout(repo: &Repository) -> Key {
    let mut h = Fingerprint::new();
    for f in repo.sources.all() {
        f.id.hash(&mut h);
        f.path.hash(&mut h);
    }
    h.key()
}

/// Everything a loaded chart gives its renderings.
pub(super) fn chart_key(chart: &Chart) -> Key {
    let mut h = Fingerprint::new();
    hash_chart(chart, &mut h);
    h.key()
}

fn hash_chart(c: &Chart, h: &mut Fingerprint) {
    use std::fmt::Write as _;
    c.dir.hash(h);
    c.name.hash(h);
    c.metadata.hash(h);
    hash_values(&c.defaults, h);
    c.templates.hash(h);
    c.crds.hash(h);
    c.files.hash(h);
    let _ = write!(h, "{:?}{:?}", c.dependencies, c.unread);
    c.builtin.hash(h);
    c.subcharts.len().hash(h);
    for s in &c.subcharts {
        hash_chart(s, h);
    }
}

/// One rendering: the chart's key, the effective values with their spans, the release, and
/// where the Application installs it (objects that name no file are placed there).
pub(super) fn rendering_key(chart: Key, values: &Values, release: &Release, anchor: Span) -> Key {
    let mut h = Fingerprint::new();
    chart.hash(&mut h);
    hash_values(values, &mut h);
    release.name.hash(&mut h);
    release.namespace.hash(&mut h);
    release.kube_version.hash(&mut h);
    release.api_versions.hash(&mut h);
    anchor.hash(&mut h);
    h.key()
}

fn hash_values(v: &Values, h: &mut Fingerprint) {
    match v {
        Values::Null => h.write_u8(0),
        Values::Scalar { text, is_str, span } => {
            h.write_u8(1);
            text.as_str().hash(h);
            is_str.hash(h);
            span.hash(h);
        }
        Values::Seq(span, items) => {
            h.write_u8(2);
            span.hash(h);
            items.len().hash(h);
            for i in items.iter() {
                hash_values(i, h);
            }
        }
        Values::Map(entries) => {
            h.write_u8(3);
            entries.len().hash(h);
            for (k, v) in entries.iter() {
                k.as_str().hash(h);
                hash_values(v, h);
            }
        }
    }
}
