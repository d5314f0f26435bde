//! Helm charts of this repository, rendered in-process with the `gotmpl` engine.
//!
//! [`load`] reads a chart folder (`Chart.yaml`, `values.yaml`, `templates/`, `crds/`, and
//! subcharts under `charts/` with their `dependencies` entries); [`render`] renders it with
//! effective values as Helm does (subchart defaults coalesced under their name or alias,
//! `global` copied down, `condition`/`tags` honoured, templates parsed in Helm's order, partials
//! `_*` and `NOTES.txt` not rendered). Every byte of a rendered manifest knows where it came
//! from: a values node (its span) or a template range ([`Manifest::origin_at`]).
//!
//! Templates are Go templates, not YAML, so discovery skips them: they are read with the
//! repository as template sources (`SourceDb::templates`). `charts/*.tgz` archives and `.Files`
//! are read here, from the disk under the root, confined to it, and only when the project is
//! on disk.

use std::cell::Cell;
use std::collections::BTreeMap;
use std::path::Path;

use std::sync::atomic::{AtomicU64, Ordering};

use gotmpl::{Limits, Origin, Source, Templates, Usage, Value};

pub mod argocd_apps;

use super::Project;
use super::repo::join;
use super::template;
use super::values::Values;
use crate::source::{FileId, SourceDb, Span};
use crate::yaml::{self, Node};

/// Limits of one template's rendering. The largest template of kube-prometheus-stack and the
/// other prometheus-community charts takes 1,700 steps, prints 830 KB and builds 26 KB.
const LIMITS: Limits = Limits {
    steps: 5_000_000,
    depth: 1000,
    output_bytes: 32 << 20,
    built_bytes: 64 << 20,
};

/// What all renderings of one run may spend together: one template's limits times the
/// renderings an ApplicationSet can ask for (a 10×10×10 matrix over one chart is 1000) would
/// be minutes and gigabytes. Those 44 charts together take 46,000 steps, print 5.5 MB and
/// build 360 KB.
const RUN_STEPS: u64 = 100_000_000;
const RUN_OUTPUT_BYTES: u64 = 512 << 20;
const RUN_BUILT_BYTES: u64 = 512 << 20;

/// What the renderings of one run may still spend (steps, output and built bytes), shared by
/// every rendering of the run, on every thread. Renderings running side by side may overrun it
/// by one template's limits each.
#[derive(Debug)]
pub struct RenderBudget {
    steps: AtomicU64,
    output_bytes: AtomicU64,
    built_bytes: AtomicU64,
}

impl Default for RenderBudget {
    fn default() -> Self {
        Self::new(RUN_STEPS, RUN_OUTPUT_BYTES, RUN_BUILT_BYTES)
    }
}

impl RenderBudget {
    #[must_use]
    pub fn new(steps: u64, output_bytes: u64, built_bytes: u64) -> Self {
        RenderBudget {
            steps: AtomicU64::new(steps),
            output_bytes: AtomicU64::new(output_bytes),
            built_bytes: AtomicU64::new(built_bytes),
        }
    }

    /// Whether nothing is left: later renderings are refused.
    #[must_use]
    pub fn is_spent(&self) -> bool {
        [&self.steps, &self.output_bytes, &self.built_bytes]
            .iter()
            .any(|c| c.load(Ordering::Relaxed) == 0)
    }

    /// One template's limits, lowered to what the run has left; `None` when it is spent.
    fn limits(&self) -> Option<Limits> {
        if self.is_spent() {
            return None;
        }
        let left = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let bytes = |c: &AtomicU64, cap: usize| usize::try_from(left(c)).unwrap_or(cap).min(cap);
        Some(Limits {
            steps: left(&self.steps).min(LIMITS.steps),
            depth: LIMITS.depth,
            output_bytes: bytes(&self.output_bytes, LIMITS.output_bytes),
            built_bytes: bytes(&self.built_bytes, LIMITS.built_bytes),
        })
    }

    fn spend(&self, used: &Usage) {
        let take = |c: &AtomicU64, n: u64| {
            let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(n))
            });
        };
        take(&self.steps, used.steps);
        take(&self.output_bytes, used.output_bytes as u64);
        take(&self.built_bytes, used.built_bytes as u64);
    }

    /// Why a rendering was refused or stopped when the run's budget is spent.
    #[must_use]
    pub fn spent_message() -> String {
        format!(
            "the rendering budget of the run is spent ({} million steps, {} MiB of output or {} MiB built by functions, over all charts)",
            RUN_STEPS / 1_000_000,
            RUN_OUTPUT_BYTES >> 20,
            RUN_BUILT_BYTES >> 20
        )
    }
}

/// Files read from one chart's `templates/` and `crds/` folders, and their size.
const MAX_TEMPLATE_FILES: usize = 2000;
const MAX_TEMPLATE_BYTES: u64 = 4 << 20;
const MAX_SUBCHART_DEPTH: usize = 8;
/// A `charts/*.tgz` archive's size, and what all archives of one chart may unpack to together,
/// nested ones included (a 1.5 MB archive can hold a thousand archives of 60 MB each).
const MAX_ARCHIVE_BYTES: u64 = 8 << 20;
const MAX_ARCHIVE_UNPACKED: u64 = 64 << 20;

/// A chart folder of this repository.
#[derive(Debug)]
pub struct Chart {
    /// Repository-relative folder.
    pub dir: String,
    pub name: String,
    /// `Chart.yaml` as `.Chart` sees it (`Name`, `Version`, `AppVersion`...).
    pub metadata: BTreeMap<String, String>,
    /// Chart defaults (`values.yaml`), with spans.
    pub defaults: Values,
    /// `templates/**`: chart-relative path (`templates/x.yaml`) and text.
    pub templates: Vec<(String, String)>,
    /// `crds/**`: chart-relative path and text (installed as is, never templated).
    pub crds: Vec<(String, String)>,
    /// The other files `.Files` sees (not `templates/`, `charts/`, `Chart.yaml`, values files).
    pub files: Vec<(String, String)>,
    pub dependencies: Vec<Dependency>,
    /// Subcharts found under `charts/`: folders and `.tgz` archives.
    pub subcharts: Vec<Chart>,
    /// Subcharts under `charts/` that were not read (an archive too large or unreadable, a
    /// link out of the repository), and why.
    pub unread: Vec<UnreadSubchart>,
    /// A chart gitops-lint carries (the public `argocd-apps` chart) rather than one read from
    /// this repository: its name.
    pub builtin: Option<&'static str>,
}

impl Chart {
    /// The first subchart not read, here or in a subchart.
    #[must_use]
    pub fn first_unread(&self) -> Option<&UnreadSubchart> {
        self.unread
            .first()
            .or_else(|| self.subcharts.iter().find_map(Chart::first_unread))
    }
}

/// A subchart that was not read.
#[derive(Debug, Clone)]
pub struct UnreadSubchart {
    /// Repository-relative path (`apps/charts/sub-1.0.0.tgz`; inside an archive, the path
    /// under its folder).
    pub path: String,
    pub why: String,
    /// Where to report it: its `dependencies` entry, else `Chart.yaml`.
    pub at: Span,
}

/// A `dependencies` entry of `Chart.yaml`.
#[derive(Debug, Clone)]
pub struct Dependency {
    pub name: String,
    pub alias: Option<String>,
    pub condition: Option<String>,
    pub tags: Vec<String>,
    /// `version` (a version or a range).
    pub version: Option<String>,
    /// `repository` (a chart repository URL, `oci://...`, `file://...` or `@alias`).
    pub repository: Option<String>,
    /// `import-values`: values of the subchart copied into the parent's.
    pub import_values: Vec<ImportValue>,
}

/// An item of `import-values`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportValue {
    /// `- name`: the subchart's `exports.name` table, merged at the parent's top level.
    Export(String),
    /// `- {child: a.b, parent: c}`: the subchart's table `a.b` at the parent's `c` (`.` is the
    /// top level).
    Path { child: String, parent: String },
}

fn import_values(dep: &Node) -> Vec<ImportValue> {
    dep.get("import-values")
        .into_iter()
        .flat_map(Node::items)
        .filter_map(|iv| {
            if iv.as_map().is_some() {
                // Helm formats both with `%v`: a missing key is `<nil>`, which names no table.
                let text = |k: &str| {
                    iv.get(k)
                        .and_then(Node::scalar_text)
                        .unwrap_or("<nil>")
                        .to_string()
                };
                Some(ImportValue::Path {
                    child: text("child"),
                    parent: text("parent"),
                })
            } else {
                iv.scalar_text().map(|s| ImportValue::Export(s.to_string()))
            }
        })
        .collect()
}

/// Where values read from an archive point: the `dependencies` entry naming it, else
/// `Chart.yaml`'s first byte.
fn dependency_anchor(root: &Node, doc: Span, archive: &str) -> Span {
    let stem = archive.trim_end_matches(".tgz");
    root.get("dependencies")
        .into_iter()
        .flat_map(Node::items)
        .filter_map(|d| d.get("name"))
        .find(|n| {
            n.as_str().is_some_and(|name| {
                stem == name || stem.strip_prefix(name).is_some_and(|v| v.starts_with('-'))
            })
        })
        .map_or(
            Span::new(doc.file, doc.start as usize, doc.start as usize),
            |n| n.span,
        )
}

/// Reads a `.tgz` chart archive: its regular files, the top folder stripped as Helm does
/// (`sub/templates/x.yaml` → `templates/x.yaml`); paths that climb or are absolute are skipped.
/// What it unpacks to is taken from `unpacked`, what the chart's archives may still unpack to.
fn read_archive_file(path: &Path, unpacked: &Cell<u64>) -> Result<Vec<(String, Vec<u8>)>, String> {
    let meta = std::fs::symlink_metadata(path).map_err(|e| e.to_string())?;
    if !meta.is_file() {
        return Err("not a regular file".into());
    }
    if meta.len() > MAX_ARCHIVE_BYTES {
        return Err(format!("larger than {MAX_ARCHIVE_BYTES} bytes"));
    }
    let bytes = std::fs::read(path).map_err(|e| e.to_string())?;
    read_archive(&bytes, unpacked)
}

/// What a chart's archives may unpack to, spent as they are read: reading stops with an error
/// once nothing is left.
struct Unpacking<'a, R> {
    inner: R,
    left: &'a Cell<u64>,
}

impl<R: std::io::Read> std::io::Read for Unpacking<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let left = self.left.get();
        if left == 0 {
            return Err(std::io::Error::other(unpacked_too_much()));
        }
        let cap = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..cap])?;
        self.left.set(left - n as u64);
        Ok(n)
    }
}

fn unpacked_too_much() -> String {
    format!(
        "the chart's archives unpack to more than {} MiB",
        MAX_ARCHIVE_UNPACKED >> 20
    )
}

fn read_archive(bytes: &[u8], unpacked: &Cell<u64>) -> Result<Vec<(String, Vec<u8>)>, String> {
    use std::io::Read;
    let reader = Unpacking {
        inner: flate2::read::GzDecoder::new(bytes),
        left: unpacked,
    };
    let mut archive = tar::Archive::new(reader);
    let mut out = Vec::new();
    let bad = |e: std::io::Error| {
        if unpacked.get() == 0 {
            unpacked_too_much()
        } else {
            format!("not a readable chart archive: {e}")
        }
    };
    for entry in archive.entries().map_err(bad)? {
        let entry = entry.map_err(bad)?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let name = match std::str::from_utf8(&entry.path_bytes()) {
            Ok(n) => n.to_string(),
            Err(_) => continue,
        };
        let parts: Vec<&str> = name
            .split('/')
            .filter(|p| !p.is_empty() && *p != ".")
            .collect();
        if name.starts_with('/') || parts.contains(&"..") || parts.len() < 2 {
            continue;
        }
        let rel = parts[1..].join("/");
        let size = entry.size();
        if size > MAX_TEMPLATE_BYTES {
            return Err(format!("{rel} is larger than {MAX_TEMPLATE_BYTES} bytes"));
        }
        if out.len() >= MAX_TEMPLATE_FILES {
            return Err(format!("more than {MAX_TEMPLATE_FILES} files"));
        }
        let mut buf = Vec::new();
        entry
            .take(MAX_TEMPLATE_BYTES + 1)
            .read_to_end(&mut buf)
            .map_err(bad)?;
        out.push((rel, buf));
    }
    Ok(out)
}

/// A chart from an archive's files (chart-relative paths), in `dir/<its name>`. Its values
/// point at `anchor`: the archive's text is not a file of the repository. Archives in it
/// unpack from `unpacked`.
fn from_files(
    dir: &str,
    files: Vec<(String, Vec<u8>)>,
    anchor: Span,
    depth: usize,
    unpacked: &Cell<u64>,
) -> Result<Chart, String> {
    if depth > MAX_SUBCHART_DEPTH {
        return Err("subcharts nested too deeply".into());
    }
    let text = |name: &str| {
        files
            .iter()
            .find(|(p, _)| p == name)
            .and_then(|(_, b)| std::str::from_utf8(b).ok())
    };
    let parse = |t: &str| {
        yaml::parse(anchor.file, t)
            .docs
            .into_iter()
            .next()
            .map(|d| d.root)
    };
    let root = text("Chart.yaml")
        .and_then(parse)
        .ok_or("the archive has no Chart.yaml")?;
    let name = root
        .get_str("name")
        .ok_or("the archive's Chart.yaml has no name")?
        .to_string();
    // Named by its chart, as Helm names a subchart's templates.
    let dir = format!("{dir}/{name}");
    let defaults = text("values.yaml")
        .and_then(parse)
        .map_or(Values::empty_map(), |r| {
            match Values::from_node(&r, Some(anchor)) {
                Values::Null => Values::empty_map(),
                v => v,
            }
        });
    let mut templates = Vec::new();
    let mut crds = Vec::new();
    let mut other = Vec::new();
    let mut nested: BTreeMap<String, Vec<(String, Vec<u8>)>> = BTreeMap::new();
    let mut subcharts = Vec::new();
    let mut unread = Vec::new();
    let mut not_read = |path: String, why: String| {
        unread.push(UnreadSubchart {
            path,
            why,
            at: anchor,
        });
    };
    for (p, bytes) in &files {
        if let Some(rest) = p.strip_prefix("charts/") {
            match rest.split_once('/') {
                // A folder subchart inside the archive: `charts/<sub>/x` → `<sub>/x`, the shape
                // of an archive's entries.
                Some((sub, _)) => nested
                    .entry(sub.to_string())
                    .or_default()
                    .push((rest.to_string(), bytes.clone())),
                None if rest.ends_with(".tgz") => {
                    let at = format!("{dir}/charts/{rest}");
                    match read_archive(bytes, unpacked)
                        .and_then(|f| from_files(&at, f, anchor, depth + 1, unpacked))
                    {
                        Ok(c) => subcharts.push(c),
                        Err(why) => not_read(at, why),
                    }
                }
                None => {}
            }
            continue;
        }
        let Ok(t) = String::from_utf8(bytes.clone()) else {
            continue;
        };
        if p.starts_with("templates/") {
            templates.push((p.clone(), t));
        } else if p.starts_with("crds/") {
            crds.push((p.clone(), t));
        } else if !is_chart_metadata(p) {
            other.push((p.clone(), t));
        }
    }
    for (sub, files) in nested {
        let files = files
            .into_iter()
            .map(|(p, b)| (p.split_once('/').map_or(p.clone(), |x| x.1.to_string()), b))
            .collect();
        let at = format!("{dir}/charts");
        match from_files(&at, files, anchor, depth + 1, unpacked) {
            Ok(c) => subcharts.push(c),
            Err(why) => not_read(format!("{at}/{sub}"), why),
        }
    }
    templates.sort();
    crds.sort();
    other.sort();
    subcharts.sort_by(|a: &Chart, b: &Chart| a.dir.cmp(&b.dir));
    let (metadata, dependencies) = metadata_and_dependencies(&root, &name);
    Ok(Chart {
        dir,
        name,
        metadata,
        defaults,
        templates,
        crds,
        files: other,
        dependencies,
        subcharts,
        unread,
        builtin: None,
    })
}

/// Why a chart cannot be rendered.
#[derive(Debug, Clone)]
pub struct RenderError {
    /// Repository-relative file (a template, or the chart folder).
    pub path: String,
    /// 1-based line in that file (0 when not known).
    pub line: usize,
    pub message: String,
    /// The unsupported template function, when that is the reason.
    pub unsupported: Option<String>,
    /// A limit stopped it (of the template, or the run's [`RenderBudget`]), not the chart.
    pub over_budget: bool,
}

impl RenderError {
    /// The run's budget was spent before the chart in `dir` was rendered.
    fn budget_spent(dir: &str) -> Self {
        RenderError {
            path: dir.to_string(),
            line: 0,
            message: RenderBudget::spent_message(),
            unsupported: None,
            over_budget: true,
        }
    }
}

impl std::fmt::Display for RenderError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.path, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Where a byte of a rendered manifest came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RenderOrigin {
    /// A values node.
    Value(Span),
    /// A template file (repository-relative) and the byte range in it.
    Template {
        path: String,
        start: usize,
        end: usize,
    },
}

/// One rendered template file.
#[derive(Debug)]
pub struct Manifest {
    /// Repository-relative path of the template (or CRD) file.
    pub path: String,
    pub text: String,
    segments: Vec<gotmpl::Segment>,
    /// Where a missing value printed nothing (see [`gotmpl::Output::dropped`]).
    dropped: Vec<usize>,
}

/// What a rendering produced: manifests, and the template texts to locate lines in.
#[derive(Debug, Default)]
pub struct Rendered {
    pub manifests: Vec<Manifest>,
    /// Value spans by origin handle.
    origins: Vec<Span>,
    /// Template name (as Helm names it) → repository-relative path.
    paths: BTreeMap<String, String>,
    /// Repository-relative path → template text.
    texts: BTreeMap<String, String>,
    /// Paths of built-in charts' templates → the chart's name.
    builtin: BTreeMap<String, &'static str>,
    /// The values were the chart's defaults alone, for a chart no Application installs: a
    /// missing value is given at install time, so [`documents`] writes a scalar that printed
    /// one as unknown ([`template::UNKNOWN`]) rather than as Helm's empty text.
    pub missing_is_unknown: bool,
}

impl Rendered {
    /// The origin of byte `offset` of `manifest`.
    #[must_use]
    pub fn origin_at(&self, manifest: &Manifest, offset: usize) -> Option<RenderOrigin> {
        let i = manifest.segments.partition_point(|(r, _)| r.end <= offset);
        let (r, src) = manifest
            .segments
            .get(i)
            .filter(|(r, _)| r.start <= offset)?;
        Some(match src {
            Source::Value(Origin(n)) => RenderOrigin::Value(*self.origins.get(*n as usize)?),
            Source::Template { name, range } => {
                let path = self
                    .paths
                    .get(&**name)
                    .cloned()
                    .unwrap_or_else(|| name.to_string());
                // A literal copy maps byte for byte; an action's span is kept whole.
                let literal = r.len() == range.len();
                let (start, end) = if literal {
                    let at = range.start + (offset - r.start);
                    (at, at)
                } else {
                    (range.start, range.end)
                };
                RenderOrigin::Template { path, start, end }
            }
        })
    }

    /// The span of the first value printed within `range` of `manifest` (a quoted scalar's
    /// quotes come from the template, its text from the value).
    #[must_use]
    pub fn value_within(&self, manifest: &Manifest, range: std::ops::Range<usize>) -> Option<Span> {
        let i = manifest
            .segments
            .partition_point(|(r, _)| r.end <= range.start);
        manifest.segments[i..]
            .iter()
            .take_while(|(r, _)| r.start < range.end)
            .find_map(|(_, src)| match src {
                Source::Value(Origin(n)) => self.origins.get(*n as usize).copied(),
                Source::Template { .. } => None,
            })
    }

    /// The 1-based line of `offset` in the template file `path`.
    #[must_use]
    pub fn template_line(&self, path: &str, offset: usize) -> usize {
        self.texts.get(path).map_or(0, |t| {
            t.get(..offset.min(t.len()))
                .map_or(0, |before| before.matches('\n').count() + 1)
        })
    }
}

/// Whether `text` (a template) writes an Argo CD object: a line `kind: Application`,
/// `ApplicationSet` or `AppProject`.
#[must_use]
pub fn writes_argocd_kind(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        l.strip_prefix("kind:").is_some_and(|k| {
            let k = k.trim().trim_matches(|c| c == '"' || c == '\'');
            matches!(k, "Application" | "ApplicationSet" | "AppProject")
        })
    })
}

/// Reads the chart in `dir` (repository-relative).
/// The name of Argo CD's own chart.
pub const ARGO_CD_CHART: &str = "argo-cd";

/// Whether the chart in `dir` may hold a template: its own `templates/` or `crds/` files, a
/// `charts/` folder, or the built-in `argocd-apps` as a dependency (other dependencies
/// render only from `charts/`). False only when loading it would give a chart that renders
/// nothing.
#[must_use]
pub fn may_render(project: &Project, dir: &str) -> bool {
    let under = |sub: &str| join(dir, sub).unwrap_or_default();
    if !project
        .sources
        .templates_under(&under("templates"))
        .is_empty()
        || files_under(project, &under("crds")).next().is_some()
        || files_under(project, &under("charts")).next().is_some()
        || (project.on_disk && project.root.join(dir).join("charts").exists())
    {
        return true;
    }
    chart_yaml(project, dir).is_none_or(|d| {
        d.root
            .get("dependencies")
            .into_iter()
            .flat_map(Node::items)
            .any(|dep| {
                let name = dep.get_str("name").unwrap_or_default();
                argocd_apps::is_argocd_apps(dep.get_str("repository"), name)
            })
    })
}

/// Whether the chart in `dir` is the argo-cd chart or depends on it (a wrapper chart).
#[must_use]
pub fn installs_argo_cd(project: &Project, dir: &str) -> bool {
    chart_yaml(project, dir).is_some_and(|d| is_or_wraps_argo_cd(&d.root))
}

/// Whether a `Chart.yaml` is the argo-cd chart's or lists it as a dependency.
#[must_use]
pub fn is_or_wraps_argo_cd(chart: &Node) -> bool {
    chart.get_str("name") == Some(ARGO_CD_CHART)
        || chart
            .get("dependencies")
            .into_iter()
            .flat_map(Node::items)
            .any(|dep| dep.get_str("name") == Some(ARGO_CD_CHART))
}

/// The first document of the `Chart.yaml` (or `Chart.yml`) in `dir`.
#[must_use]
pub fn chart_yaml<'p>(project: &'p Project, dir: &str) -> Option<&'p crate::model::Document> {
    ["Chart.yaml", "Chart.yml"]
        .iter()
        .filter_map(|n| join(dir, n))
        .find_map(|p| project.file_by_path(&p))
        .and_then(|f| project.file_docs(f.id).first())
}

pub fn load(project: &Project, dir: &str) -> Result<Chart, RenderError> {
    load_at(project, dir, 0, &Cell::new(MAX_ARCHIVE_UNPACKED))
}

/// Whether `path`, a link, leads to a place inside `root`. The check is local to charts until
/// reads under the root go through one confined layer in `source`.
fn link_stays_in_root(root: &Path, path: &Path) -> bool {
    match (root.canonicalize(), path.canonicalize()) {
        (Ok(root), Ok(target)) => target.starts_with(root),
        // A dangling link or a loop leads nowhere readable.
        _ => true,
    }
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

const LINK_OUT: &str = "a link to a place outside the repository: not read";

fn load_at(
    project: &Project,
    dir: &str,
    depth: usize,
    unpacked: &Cell<u64>,
) -> Result<Chart, RenderError> {
    let fail = |message: String| RenderError {
        path: dir.to_string(),
        line: 0,
        message,
        unsupported: None,
        over_budget: false,
    };
    if depth > MAX_SUBCHART_DEPTH {
        return Err(fail("subcharts nested too deeply".into()));
    }
    let chart_yaml = ["Chart.yaml", "Chart.yml"]
        .iter()
        .filter_map(|n| join(dir, n))
        .find_map(|p| project.file_by_path(&p))
        .ok_or_else(|| fail("no Chart.yaml".into()))?;
    let doc = project
        .file_docs(chart_yaml.id)
        .first()
        .ok_or_else(|| fail("Chart.yaml has no document".into()))?;
    let root = &doc.root;
    let name = root
        .get_str("name")
        .map(str::to_string)
        .unwrap_or_else(|| dir.rsplit('/').next().unwrap_or(dir).to_string());
    let (metadata, dependencies) = metadata_and_dependencies(root, &name);
    let defaults = join(dir, "values.yaml")
        .and_then(|p| project.file_by_path(&p))
        .and_then(|f| project.file_docs(f.id).first())
        .map_or(Values::empty_map(), |d| project.helm_values(d));
    // Templates were read with the repository (`SourceDb::templates`); `crds/` holds YAML.
    let rel_to_chart = |path: &str| -> String {
        if dir.is_empty() {
            path.to_string()
        } else {
            path.strip_prefix(&format!("{dir}/"))
                .unwrap_or(path)
                .to_string()
        }
    };
    let templates_dir = join(dir, "templates").unwrap_or_default();
    let templates: Vec<(String, String)> = project
        .sources
        .templates_under(&templates_dir)
        .iter()
        .map(|f| (rel_to_chart(&f.path), f.text().to_string()))
        .collect();
    let crds_dir = join(dir, "crds").unwrap_or_default();
    let crds: Vec<(String, String)> = files_under(project, &crds_dir)
        .map(|f| (rel_to_chart(&f.path), f.text().to_string()))
        .collect();
    // `.Files`: read from the disk only when a template uses it; a chart with too many or too
    // large files just has none readable.
    let mut files = Vec::new();
    let abs = project.root.join(dir);
    if project.on_disk
        && templates.iter().any(|(_, t)| t.contains("Files"))
        && read_tree(&abs, ".", &mut files).is_err()
    {
        files.clear();
    }
    let files: Vec<(String, String)> = files
        .into_iter()
        .filter_map(|(p, t)| {
            let p = p.strip_prefix("./").unwrap_or(&p).to_string();
            let hidden =
                p.starts_with("templates/") || p.starts_with("charts/") || is_chart_metadata(&p);
            (!hidden).then_some((p, t))
        })
        .collect();
    let mut subcharts = Vec::new();
    let mut unread = Vec::new();
    let charts_dir = abs.join("charts");
    let chart_start = Span::new(
        doc.span.file,
        doc.span.start as usize,
        doc.span.start as usize,
    );
    let listing = if !project.on_disk {
        None
    } else if is_link(&charts_dir) && !link_stays_in_root(&project.root, &charts_dir) {
        unread.push(UnreadSubchart {
            path: join(dir, "charts").unwrap_or_default(),
            why: LINK_OUT.into(),
            at: chart_start,
        });
        None
    } else {
        std::fs::read_dir(&charts_dir).ok()
    };
    if let Some(entries) = listing {
        let mut names: Vec<(String, std::fs::FileType)> = entries
            .filter_map(Result::ok)
            .filter_map(|e| {
                let kind = e.file_type().ok()?;
                Some((e.file_name().to_string_lossy().into_owned(), kind))
            })
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (n, kind) in names {
            let Some(sub) = join(dir, &format!("charts/{n}")) else {
                continue;
            };
            let anchor = dependency_anchor(root, doc.span, &n);
            if kind.is_symlink() && !link_stays_in_root(&project.root, &charts_dir.join(&n)) {
                unread.push(UnreadSubchart {
                    path: sub,
                    why: LINK_OUT.into(),
                    at: anchor,
                });
            } else if kind.is_dir() {
                if let Ok(c) = load_at(project, &sub, depth + 1, unpacked) {
                    subcharts.push(c);
                }
            } else if n.ends_with(".tgz") {
                match read_archive_file(&charts_dir.join(&n), unpacked)
                    .and_then(|files| from_files(&sub, files, anchor, depth + 1, unpacked))
                {
                    Ok(c) => subcharts.push(c),
                    Err(why) => unread.push(UnreadSubchart {
                        path: sub,
                        why,
                        at: anchor,
                    }),
                }
            }
        }
    }
    // The public `argocd-apps` chart is installed from its repository, not committed: its
    // templates are built in.
    for d in &dependencies {
        let present = subcharts.iter().any(|c| c.name == d.name);
        if !present && argocd_apps::is_argocd_apps(d.repository.as_deref(), &d.name) {
            let form = argocd_apps::form_of(d.version.as_deref());
            let sub = join(dir, &format!("charts/{}", d.name)).unwrap_or_default();
            subcharts.push(argocd_apps::chart(&sub, form));
        }
    }
    Ok(Chart {
        dir: dir.to_string(),
        name,
        metadata,
        defaults,
        templates,
        crds,
        files,
        dependencies,
        subcharts,
        unread,
        builtin: None,
    })
}

/// `.Chart` (`Name`, `Version`...) and the `dependencies` of a `Chart.yaml`.
fn metadata_and_dependencies(
    root: &Node,
    name: &str,
) -> (BTreeMap<String, String>, Vec<Dependency>) {
    let mut metadata = BTreeMap::new();
    for (key, field) in [
        ("name", "Name"),
        ("version", "Version"),
        ("appVersion", "AppVersion"),
        ("apiVersion", "APIVersion"),
        ("description", "Description"),
        ("type", "Type"),
        ("kubeVersion", "KubeVersion"),
        ("home", "Home"),
        ("icon", "Icon"),
    ] {
        if let Some(v) = root.get(key).and_then(Node::scalar_text) {
            metadata.insert(field.to_string(), v.to_string());
        }
    }
    metadata.insert("Name".into(), name.to_string());
    let mut dependencies = Vec::new();
    for d in root.get("dependencies").into_iter().flat_map(Node::items) {
        let Some(dname) = d.get_str("name") else {
            continue;
        };
        dependencies.push(Dependency {
            name: dname.to_string(),
            alias: d.get_str("alias").map(str::to_string),
            condition: d.get_str("condition").map(str::to_string),
            tags: d
                .get("tags")
                .into_iter()
                .flat_map(Node::items)
                .filter_map(Node::as_str)
                .map(str::to_string)
                .collect(),
            version: d
                .get("version")
                .and_then(Node::scalar_text)
                .map(str::to_string),
            repository: d.get_str("repository").map(str::to_string),
            import_values: import_values(d),
        });
    }
    (metadata, dependencies)
}

/// Discovered (YAML) files under a folder, in path order.
fn files_under<'p>(
    project: &'p Project,
    dir: &str,
) -> impl Iterator<Item = &'p crate::source::SourceFile> {
    let prefix = format!("{dir}/");
    let files = project.sources.files();
    let start = files.partition_point(|f| f.path.as_str() < prefix.as_str());
    files[start..]
        .iter()
        .take_while(move |f| f.path.starts_with(&prefix))
}

/// A chart's own description and defaults, which `.Files` does not list.
fn is_chart_metadata(path: &str) -> bool {
    matches!(
        path,
        "Chart.yaml"
            | "Chart.lock"
            | "values.yaml"
            | "values.schema.json"
            | "requirements.yaml"
            | "requirements.lock"
    )
}

/// Reads every regular file under `base/sub` (no symlinks), sorted, as (`sub/...`, text).
fn read_tree(base: &Path, sub: &str, out: &mut Vec<(String, String)>) -> Result<(), String> {
    let listed = crate::source::walk::regular_files_under(base, sub, MAX_TEMPLATE_FILES + 1);
    if listed.len() > MAX_TEMPLATE_FILES {
        return Err(format!("more than {MAX_TEMPLATE_FILES} files in {sub}/"));
    }
    if let Some((child, _)) = listed.iter().find(|(_, len)| *len > MAX_TEMPLATE_BYTES) {
        return Err(format!("{child} is larger than {MAX_TEMPLATE_BYTES} bytes"));
    }
    let mut found: Vec<String> = listed.into_iter().map(|(rel, _)| rel).collect();
    found.sort();
    for rel in found {
        // A file that is not UTF-8 text (an image under templates/) is skipped, as a template.
        if let Ok(text) = std::fs::read_to_string(base.join(&rel)) {
            out.push((rel, text));
        }
    }
    Ok(())
}

/// The release an Application installs.
#[derive(Debug, Clone)]
pub struct Release {
    pub name: String,
    pub namespace: String,
    /// `.Capabilities.KubeVersion.Version` (Helm's default: `v1.36.0` for Helm 4.2).
    pub kube_version: String,
    /// Extra `.Capabilities.APIVersions` (Argo CD's `helm.apiVersions`).
    pub api_versions: Vec<String>,
}

impl Release {
    #[must_use]
    pub fn new(name: &str, namespace: &str) -> Self {
        Release {
            name: name.to_string(),
            namespace: namespace.to_string(),
            kube_version: "v1.36.0".into(),
            api_versions: Vec::new(),
        }
    }
}

/// Renders `chart` with `values` (the effective values: the chart's `values.yaml` merged with the
/// Application's layers, as the resolver computes them).
pub fn render(chart: &Chart, values: &Values, release: &Release) -> Result<Rendered, RenderError> {
    render_with(chart, values, release, &mut None, &RenderBudget::default())
}

/// The templates of a chart parsed for one set of enabled subcharts, to render the chart again
/// with other values (see [`render_with`]).
pub struct Parsed {
    /// The enabled charts (template name prefixes) the set was parsed for.
    units: Vec<String>,
    set: Templates,
}

/// [`render`], reusing `parsed` when the same subcharts are enabled (templates are parsed once
/// per chart, not once per rendering); `parsed` is filled or replaced otherwise. Not shared
/// between threads (parsed templates hold `Rc`s).
pub fn render_with(
    chart: &Chart,
    values: &Values,
    release: &Release,
    parsed: &mut Option<Parsed>,
    budget: &RenderBudget,
) -> Result<Rendered, RenderError> {
    if budget.is_spent() {
        return Err(RenderError::budget_spent(&chart.dir));
    }
    let mut out = Rendered::default();
    let top = to_value(values, &mut out.origins);
    coalesce_deps(chart, &top, &top, &mut out.origins);
    // `import-values` of the top chart: below its own values and its subcharts' defaults.
    if let Some(imported) = imports(chart, &top, &mut out.origins) {
        coalesce_into(&top, &imported);
    }
    // Every template of every enabled chart, named as Helm names them.
    let mut units: Vec<Unit> = Vec::new();
    collect_units(chart, &chart.name, &top, &mut units);
    let prefixes: Vec<String> = units.iter().map(|u| u.prefix.clone()).collect();
    let reuse = parsed.as_ref().is_some_and(|p| p.units == prefixes);
    let mut set = match parsed.take() {
        Some(p) if reuse => p.set,
        _ => Templates::helm(),
    };
    let mut order: Vec<(String, usize, usize)> = Vec::new();
    for (u, unit) in units.iter().enumerate() {
        for (t, (rel, text)) in unit.chart.templates.iter().enumerate() {
            let name = format!("{}/{rel}", unit.prefix);
            let path = join(&unit.chart.dir, rel).unwrap_or_default();
            out.paths.insert(name.clone(), path.clone());
            if let Some(b) = unit.chart.builtin {
                out.builtin.insert(path.clone(), b);
            }
            out.texts.insert(path, text.clone());
            order.push((name, u, t));
        }
    }
    // Helm parses deeper paths first, then in reverse name order; later definitions win.
    order.sort_by(|a, b| {
        let (da, db) = (a.0.matches('/').count(), b.0.matches('/').count());
        db.cmp(&da).then_with(|| b.0.cmp(&a.0))
    });
    if !reuse {
        for (name, u, t) in &order {
            let text = &units[*u].chart.templates[*t].1;
            if let Err(e) = set.add(name, text) {
                return Err(error(&out, &e));
            }
        }
    }
    for (name, u, _) in &order {
        let base = name.rsplit('/').next().unwrap_or(name);
        if base.starts_with('_') || base == "NOTES.txt" {
            continue;
        }
        let unit = &units[*u];
        let data = render_data(unit, name, release);
        let Some(limits) = budget.limits() else {
            return Err(RenderError::budget_spent(&chart.dir));
        };
        let mut used = Usage::default();
        let rendered = set.render_metered(name, &data, &limits, &mut used);
        budget.spend(&used);
        let rendered = rendered.map_err(|e| {
            let mut e = error(&out, &e);
            // Stopped by what the run had left rather than by the template's own limits.
            if e.over_budget
                && (limits.steps < LIMITS.steps
                    || limits.output_bytes < LIMITS.output_bytes
                    || limits.built_bytes < LIMITS.built_bytes)
            {
                e.message = RenderBudget::spent_message();
            }
            e
        })?;
        out.manifests.push(Manifest {
            path: out.paths.get(name).cloned().unwrap_or_default(),
            text: rendered.text,
            segments: rendered.segments,
            dropped: rendered.dropped,
        });
    }
    for unit in &units {
        for (rel, text) in &unit.chart.crds {
            let path = join(&unit.chart.dir, rel).unwrap_or_default();
            let name = format!("{}/{rel}", unit.prefix);
            out.paths.insert(name.clone(), path.clone());
            out.texts.insert(path.clone(), text.clone());
            let segments = if text.is_empty() {
                Vec::new()
            } else {
                vec![(
                    0..text.len(),
                    Source::Template {
                        name: name.as_str().into(),
                        range: 0..text.len(),
                    },
                )]
            };
            out.manifests.push(Manifest {
                path,
                text: text.clone(),
                segments,
                dropped: Vec::new(),
            });
        }
    }
    out.manifests.sort_by(|a, b| a.path.cmp(&b.path));
    *parsed = Some(Parsed {
        units: prefixes,
        set,
    });
    Ok(out)
}

fn error(out: &Rendered, e: &gotmpl::Error) -> RenderError {
    let mut path = out
        .paths
        .get(&*e.template)
        .cloned()
        .unwrap_or_else(|| e.template.to_string());
    // A built-in chart's template is named as the chart ships it (`argocd-apps/templates/x`).
    if let Some(chart) = out.builtin.get(&path) {
        if let Some(i) = path.rfind("/templates/") {
            path = format!("{chart}{}", &path[i..]);
        }
    }
    RenderError {
        path,
        line: e.line,
        message: e.message.clone(),
        unsupported: match &e.kind {
            gotmpl::ErrorKind::Unsupported(f) => Some(f.clone()),
            _ => None,
        },
        over_budget: e.kind == gotmpl::ErrorKind::Budget,
    }
}

/// One chart to render: its templates' name prefix and its `.Values`.
struct Unit<'c> {
    chart: &'c Chart,
    prefix: String,
    values: Value,
}

fn collect_units<'c>(chart: &'c Chart, prefix: &str, values: &Value, out: &mut Vec<Unit<'c>>) {
    out.push(Unit {
        chart,
        prefix: prefix.to_string(),
        values: values.clone(),
    });
    for (sub, key) in enabled_subcharts(chart, values) {
        let sub_values = match values {
            Value::Map(m) => m
                .borrow()
                .get(&key)
                .cloned()
                .unwrap_or_else(Value::empty_map),
            _ => Value::empty_map(),
        };
        // Helm names a subchart's templates by its alias, else its chart name.
        collect_units(sub, &format!("{prefix}/charts/{key}"), &sub_values, out);
    }
}

/// Subcharts that are enabled, with the values key each one reads (its alias or name).
fn enabled_subcharts<'c>(chart: &'c Chart, values: &Value) -> Vec<(&'c Chart, String)> {
    let mut out = Vec::new();
    for sub in &chart.subcharts {
        let deps: Vec<&Dependency> = chart
            .dependencies
            .iter()
            .filter(|d| d.name == sub.name)
            .collect();
        if deps.is_empty() {
            // A folder under charts/ without a dependencies entry is still a subchart.
            out.push((sub, sub.name.clone()));
            continue;
        }
        for d in deps {
            if dependency_enabled(d, values) {
                out.push((sub, d.alias.clone().unwrap_or_else(|| d.name.clone())));
            }
        }
    }
    out
}

/// Helm's `condition` (the first path that resolves to a bool decides), then `tags` (any true).
fn dependency_enabled(d: &Dependency, values: &Value) -> bool {
    if let Some(cond) = &d.condition {
        for path in cond.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(Value::Bool(b, _)) = lookup_path(values, path) {
                return b;
            }
        }
    }
    if d.tags.is_empty() {
        return true;
    }
    let mut any_set = false;
    for t in &d.tags {
        if let Some(Value::Bool(b, _)) = lookup_path(values, &format!("tags.{t}")) {
            if b {
                return true;
            }
            any_set = true;
        }
    }
    !any_set
}

fn lookup_path(values: &Value, path: &str) -> Option<Value> {
    let mut cur = values.clone();
    for key in path.split('.') {
        let next = match &cur {
            Value::Map(m) => m.borrow().get(key).cloned(),
            _ => None,
        };
        cur = next?;
    }
    Some(cur)
}

/// Coalesces each enabled subchart's defaults under its key, and `global` down, recursively
/// (Helm's `CoalesceValues`): values already set win; `null` deletes a default. Which
/// subcharts are enabled is read from `enabled_from` (the values with the user's layers).
fn coalesce_deps(chart: &Chart, values: &Value, enabled_from: &Value, origins: &mut Vec<Span>) {
    let Value::Map(top) = values else {
        return;
    };
    let global = top.borrow().get("global").cloned();
    for (sub, key) in enabled_subcharts(chart, enabled_from) {
        let sub_enabled = lookup_path(enabled_from, &key).unwrap_or_else(Value::empty_map);
        let defaults = to_value(&sub.defaults, origins);
        // The subchart's own `import-values` have become part of its defaults.
        if let Some(imported) = imports(sub, &sub_enabled, origins) {
            coalesce_into(&defaults, &imported);
        }
        let current = top.borrow().get(&key).cloned();
        let merged = match current {
            Some(v @ Value::Map(_)) => {
                coalesce_into(&v, &defaults);
                v
            }
            Some(Value::Nil) | None => defaults,
            // A non-map value where the subchart expects a map: Helm keeps the user's value.
            Some(other) => other,
        };
        if let (Value::Map(sm), Some(Value::Map(g))) = (&merged, &global) {
            let sub_global = sm.borrow().get("global").cloned();
            let combined = match sub_global {
                Some(sg @ Value::Map(_)) => {
                    let parent = Value::Map(g.clone()).deep_copy();
                    coalesce_into(&parent, &sg);
                    parent
                }
                _ => Value::Map(g.clone()).deep_copy(),
            };
            sm.borrow_mut().insert("global".into(), combined);
        } else if let Value::Map(sm) = &merged {
            // Helm gives every subchart a `global` table, empty when no chart sets one.
            let has = matches!(sm.borrow().get("global"), Some(Value::Map(_)));
            if !has {
                sm.borrow_mut().insert("global".into(), Value::empty_map());
            }
        }
        coalesce_deps(sub, &merged, &sub_enabled, origins);
        top.borrow_mut().insert(key, merged);
    }
}

/// The values `chart`'s `import-values` bring in (Helm's `processImportValues`), `None` when it
/// has none. As in Helm they are read from the defaults (the chart's and its subcharts', not
/// the user's values); an earlier import wins over a later one, and the caller puts them below
/// the chart's own values.
fn imports(chart: &Chart, enabled_from: &Value, origins: &mut Vec<Span>) -> Option<Value> {
    let keyed: Vec<(String, &[ImportValue])> = chart
        .dependencies
        .iter()
        .filter(|d| !d.import_values.is_empty())
        .map(|d| {
            (
                d.alias.clone().unwrap_or_else(|| d.name.clone()),
                &d.import_values[..],
            )
        })
        .filter(|(key, _)| {
            enabled_subcharts(chart, enabled_from)
                .iter()
                .any(|(_, k)| k == key)
        })
        .collect();
    if keyed.is_empty() {
        return None;
    }
    let defaults = to_value(&chart.defaults, origins);
    coalesce_deps(chart, &defaults, enabled_from, origins);
    let out = Value::empty_map();
    for (key, ivs) in keyed {
        for iv in ivs {
            let (child, parent) = match iv {
                ImportValue::Export(name) => (format!("exports.{name}"), "."),
                ImportValue::Path { child, parent } => (child.clone(), parent.as_str()),
            };
            let Some(table @ Value::Map(_)) = lookup_path(&defaults, &format!("{key}.{child}"))
            else {
                continue;
            };
            let mut piece = table.deep_copy();
            if parent != "." {
                for k in parent.split('.').rev() {
                    piece = Value::map([(k.to_string(), piece)].into_iter().collect());
                }
            }
            coalesce_into(&out, &piece);
        }
    }
    Some(out)
}

/// Fills `dst` with `defaults` where `dst` has no key; maps merge recursively.
fn coalesce_into(dst: &Value, defaults: &Value) {
    let (Value::Map(d), Value::Map(s)) = (dst, defaults) else {
        return;
    };
    let src: Vec<(String, Value)> = s
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in src {
        let cur = d.borrow().get(&k).cloned();
        match cur {
            None => {
                d.borrow_mut().insert(k, v);
            }
            Some(Value::Nil) => {
                d.borrow_mut().remove(&k);
            }
            Some(existing @ Value::Map(_)) => coalesce_into(&existing, &v),
            Some(_) => {}
        }
    }
}

/// Converts values with spans into template values whose origins index `origins`.
#[must_use]
pub fn to_value(v: &Values, origins: &mut Vec<Span>) -> Value {
    match v {
        Values::Null => Value::Nil,
        Values::Scalar { text, is_str, span } => {
            let origin = Some(Origin(origins.len() as u64));
            origins.push(*span);
            if *is_str {
                return Value::str_at(text, origin);
            }
            match gotmpl::yaml::resolve_plain(text) {
                Value::Bool(b, _) => Value::Bool(b, origin),
                Value::Float(f, _) => Value::Float(f, origin),
                Value::Nil => Value::Nil,
                _ => Value::str_at(text, origin),
            }
        }
        Values::Seq(_, items) => Value::list(items.iter().map(|i| to_value(i, origins)).collect()),
        Values::Map(entries) => Value::map(
            entries
                .iter()
                .filter(|(_, v)| !matches!(v, Values::Null))
                .map(|(k, v)| (k.to_string(), to_value(v, origins)))
                .collect(),
        ),
    }
}

fn str_map(entries: &[(&str, Value)]) -> Value {
    Value::map(
        entries
            .iter()
            .map(|(k, v)| ((*k).to_string(), v.clone()))
            .collect(),
    )
}

fn render_data(unit: &Unit<'_>, name: &str, release: &Release) -> Value {
    let chart = Value::map(
        unit.chart
            .metadata
            .iter()
            .map(|(k, v)| (k.clone(), Value::str(v)))
            .collect(),
    );
    let kube = release.kube_version.trim_start_matches('v');
    let mut parts = kube.split('.');
    let major = parts.next().unwrap_or("1").to_string();
    let minor = parts.next().unwrap_or("0").to_string();
    let base_path = format!("{}/templates", unit.prefix);
    str_map(&[
        ("Values", unit.values.clone()),
        (
            "Release",
            str_map(&[
                ("Name", Value::str(&release.name)),
                ("Namespace", Value::str(&release.namespace)),
                ("Service", Value::str("Helm")),
                ("Revision", Value::Int(1, None)),
                ("IsInstall", Value::Bool(true, None)),
                ("IsUpgrade", Value::Bool(false, None)),
            ]),
        ),
        ("Chart", chart),
        (
            "Capabilities",
            str_map(&[
                (
                    "KubeVersion",
                    str_map(&[
                        ("Version", Value::str(&release.kube_version)),
                        ("GitVersion", Value::str(&release.kube_version)),
                        ("Major", Value::str(&major)),
                        ("Minor", Value::str(&minor)),
                    ]),
                ),
                (
                    "APIVersions",
                    Value::Object(std::rc::Rc::new(ApiVersions(release.api_versions.clone()))),
                ),
                ("HelmVersion", str_map(&[("Version", Value::str("v4.2"))])),
            ]),
        ),
        (
            "Template",
            str_map(&[
                ("Name", Value::str(name)),
                ("BasePath", Value::str(&base_path)),
            ]),
        ),
        (
            "Files",
            Value::Object(std::rc::Rc::new(Files {
                files: unit.chart.files.iter().cloned().collect(),
            })),
        ),
    ])
}

/// `.Capabilities.APIVersions`: `Has` answers for built-in groups and the configured ones.
#[derive(Debug)]
struct ApiVersions(Vec<String>);

impl gotmpl::Object for ApiVersions {
    fn type_name(&self) -> &str {
        "chartutil.VersionSet"
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        (name == "Has").then(|| {
            let Some(v) = args.first().and_then(Value::as_str) else {
                return Err("Has needs an API version".into());
            };
            let builtin = [
                "v1",
                "apps/v1",
                "batch/v1",
                "networking.k8s.io/v1",
                "rbac.authorization.k8s.io/v1",
                "policy/v1",
                "autoscaling/v2",
                "apiextensions.k8s.io/v1",
                "storage.k8s.io/v1",
                "admissionregistration.k8s.io/v1",
                "coordination.k8s.io/v1",
                "discovery.k8s.io/v1",
                "scheduling.k8s.io/v1",
            ];
            let known = builtin.contains(&v)
                || self
                    .0
                    .iter()
                    .any(|a| a == v || a.starts_with(&format!("{v}/")));
            Ok(Value::Bool(known, None))
        })
    }
}

/// `.Files`: the chart's other files (`Get`, `GetBytes`, `Lines`, `Glob`, `AsConfig`,
/// `AsSecrets`).
#[derive(Debug)]
struct Files {
    files: BTreeMap<String, String>,
}

impl gotmpl::Object for Files {
    fn type_name(&self) -> &str {
        "chart.Files"
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        let path = args.first().and_then(Value::as_str).unwrap_or("");
        match name {
            "Get" => Some(Ok(Value::str(
                self.files.get(path).map_or("", String::as_str),
            ))),
            "Lines" => Some(Ok(Value::list(
                self.files
                    .get(path)
                    .filter(|t| !t.is_empty())
                    // Helm drops one trailing newline before splitting.
                    .map(|t| {
                        t.strip_suffix('\n')
                            .unwrap_or(t)
                            .split('\n')
                            .map(Value::str)
                            .collect()
                    })
                    .unwrap_or_default(),
            ))),
            "GetBytes" => Some(Ok(Value::str(
                self.files.get(path).map_or("", String::as_str),
            ))),
            "Glob" => {
                let glob = globset::GlobBuilder::new(path)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| e.to_string());
                Some(glob.map(|g| {
                    let m = g.compile_matcher();
                    Value::Object(std::rc::Rc::new(Files {
                        files: self
                            .files
                            .iter()
                            .filter(|(p, _)| m.is_match(p.as_str()))
                            .map(|(p, t)| (p.clone(), t.clone()))
                            .collect(),
                    }))
                }))
            }
            "AsConfig" | "AsSecrets" => {
                let mut map = BTreeMap::new();
                for (p, t) in &self.files {
                    let base = p.rsplit('/').next().unwrap_or(p).to_string();
                    let v = if name == "AsSecrets" {
                        match gotmpl::call_function("b64enc", vec![Value::str(t)]) {
                            Ok(v) => v,
                            Err(e) => return Some(Err(e)),
                        }
                    } else {
                        Value::str(t)
                    };
                    map.insert(base, v);
                }
                if map.is_empty() {
                    return Some(Ok(Value::str("")));
                }
                Some(gotmpl::call_function("toYaml", vec![Value::map(map)]))
            }
            _ => None,
        }
    }
}

/// A rendered document: its root node, with every node's span at its origin (see
/// [`documents`]), and where its text starts in the template.
#[derive(Debug)]
pub struct RenderedDoc {
    pub root: Node,
    /// Repository-relative template file and 1-based line of the document's first byte.
    pub template: String,
    pub line: usize,
    /// The built-in chart whose template wrote it (`argocd-apps`), if any.
    pub builtin: Option<&'static str>,
    /// The template file's id, when the repository holds it.
    pub file: Option<FileId>,
    /// Where the document starts in the template (`anchor` when not known).
    pub start: Span,
    /// The container images of a workload (any pod template), in order.
    pub images: Vec<RenderedImage>,
}

/// A container's `image:` in a rendered document.
#[derive(Clone, Debug)]
pub struct RenderedImage {
    pub image: String,
    /// Its tag (`None`: no tag, or a digest only).
    pub tag: Option<String>,
    /// Where the tag's text came from: the values node that printed it, else the template text.
    pub tag_span: Span,
    /// Where the template writes the `image:` value.
    pub written: Span,
    /// "rendered from `templates/x.yaml:N` by Application `a`" (set by the caller).
    pub label: String,
}

/// Pod specs of a workload: a Pod, any kind with `spec.template.spec` (Deployment, Job...), a
/// CronJob's `spec.jobTemplate.spec.template.spec`.
pub fn pod_specs(root: &Node) -> impl Iterator<Item = &Node> {
    [
        &["spec"][..],
        &["spec", "template", "spec"][..],
        &["spec", "jobTemplate", "spec", "template", "spec"][..],
    ]
    .into_iter()
    .filter_map(|p| root.path(p))
    .filter(|n| n.get("containers").is_some() || n.get("initContainers").is_some())
}

/// The `image:` nodes of a workload's containers and init containers.
pub fn container_images(root: &Node) -> Vec<&Node> {
    pod_specs(root)
        .flat_map(|pod| {
            ["initContainers", "containers"]
                .into_iter()
                .filter_map(|k| pod.get(k))
                .flat_map(Node::items)
        })
        .filter_map(|c| c.get("image"))
        .filter(|i| i.as_str().is_some())
        .collect()
}

/// Where rendered text comes from, as spans of the repository's files: the template files'
/// ids are looked up in `sources` (see `SourceDb::templates`).
struct Locator<'a> {
    rendered: &'a Rendered,
    /// The rendering's template (and `crds/`) files by repository-relative path.
    files: BTreeMap<&'a str, &'a crate::source::SourceFile>,
    anchor: Span,
}

impl Locator<'_> {
    fn template_span(&self, path: &str, start: usize, end: usize) -> Option<Span> {
        let f = self.files.get(path)?;
        let end = end.max(start).min(f.text().len());
        Some(Span::new(f.id, start.min(end), end))
    }

    /// The origin of `range` of manifest `m`: the values node when the text is one value's,
    /// else the template text that wrote it (a literal copy byte for byte, an action whole,
    /// several pieces of one template covered), else `anchor`.
    fn span_of(&self, m: &Manifest, range: std::ops::Range<usize>) -> Span {
        let segs = &m.segments;
        let i = segs.partition_point(|(r, _)| r.end <= range.start);
        let n = segs[i..]
            .iter()
            .take_while(|(r, _)| r.start < range.end.max(range.start + 1))
            .count();
        let within = &segs[i..i + n];
        // One value's text, or text built from values and template literals (`printf`, a
        // `repository:tag` pair): the first value, where the author sets it.
        if let Some(span) = within.iter().find_map(|(_, src)| match src {
            Source::Value(Origin(n)) => self.rendered.origins.get(*n as usize),
            Source::Template { .. } => None,
        }) {
            return *span;
        }
        let mut pieces = within.iter().filter_map(|(r, src)| match src {
            Source::Template { name, range: tr } => {
                let path = self.rendered.paths.get(&**name)?;
                // The part of the segment inside `range`: exact for a literal copy.
                let (a, b) = if r.len() == tr.len() {
                    let a = tr.start + range.start.saturating_sub(r.start);
                    let hi = range.end.min(r.end).max(r.start);
                    let b = tr.start + (hi - r.start);
                    (a, b.max(a))
                } else {
                    (tr.start, tr.end)
                };
                Some((path.as_str(), a, b))
            }
            Source::Value(_) => None,
        });
        let Some((path, a, b)) = pieces.next() else {
            return self.anchor;
        };
        // Pieces of the same template after the first extend it (an action between literals).
        let end = pieces
            .take_while(|(p, s, _)| *p == path && *s >= a)
            .last()
            .map_or(b, |(_, _, e)| e.max(b));
        self.template_span(path, a, end).unwrap_or(self.anchor)
    }

    /// The template text that wrote `range`: a literal copy byte for byte; when values were
    /// printed in it, the template line that prints them (from its first non-blank character).
    /// `anchor` when no template text is in it (one value's text, printed by `toYaml`).
    fn written_at(&self, m: &Manifest, range: std::ops::Range<usize>) -> Span {
        let segs = &m.segments;
        let i = segs.partition_point(|(r, _)| r.end <= range.start);
        let n = segs[i..]
            .iter()
            .take_while(|(r, _)| r.start < range.end)
            .count();
        let within = &segs[i..i + n];
        let with_values = within.iter().any(|(_, s)| matches!(s, Source::Value(_)));
        let mut pieces = within.iter().filter_map(|(r, src)| match src {
            Source::Template { name, range: tr } => {
                let path = self.rendered.paths.get(&**name)?;
                if r.len() == tr.len() {
                    let lo = range.start.max(r.start);
                    let hi = range.end.min(r.end).max(lo);
                    Some((path, tr.start + (lo - r.start)..tr.start + (hi - r.start)))
                } else {
                    Some((path, tr.clone()))
                }
            }
            Source::Value(_) => None,
        });
        let Some((path, first)) = pieces.next() else {
            return self.anchor;
        };
        let (mut start, mut end) = (first.start, first.end);
        for (p, r) in pieces {
            if p != path || r.start < start {
                break;
            }
            end = end.max(r.end);
        }
        if with_values {
            if let Some(t) = self.rendered.texts.get(path) {
                let line_start = t
                    .get(..start)
                    .and_then(|b| b.rfind('\n'))
                    .map_or(0, |i| i + 1);
                let line_end = t
                    .get(start..)
                    .and_then(|a| a.find('\n'))
                    .map_or(t.len(), |i| start + i);
                let line = t.get(line_start..line_end).unwrap_or("");
                start = line_start + (line.len() - line.trim_start().len());
                end = line_start + line.trim_end().len();
            }
        }
        self.template_span(path, start, end).unwrap_or(self.anchor)
    }

    fn remap(&self, node: &mut Node, m: &Manifest) {
        let (start, end) = (node.span.start as usize, node.span.end as usize);
        node.span = match &node.value {
            yaml::Value::Scalar(_) => {
                // A quoted scalar's quotes are the template's; its text may be one value.
                let quoted = matches!(
                    node.style(),
                    yaml::ScalarStyle::SingleQuoted | yaml::ScalarStyle::DoubleQuoted
                ) && end >= start + 2;
                let content = if quoted {
                    start + 1..end - 1
                } else {
                    start..end
                };
                if content.is_empty() {
                    self.span_of(m, start..end)
                } else {
                    self.span_of(m, content)
                }
            }
            // A collection: where its first byte was written.
            _ => self.span_of(m, start..start),
        };
        match &mut node.value {
            yaml::Value::Scalar(_) => {}
            yaml::Value::Seq(items) => items.iter_mut().for_each(|n| self.remap(n, m)),
            yaml::Value::Map(entries) => {
                for e in entries {
                    self.remap(&mut e.key, m);
                    self.remap(&mut e.value, m);
                }
            }
        }
    }
}

/// Writes [`template::UNKNOWN`] into each scalar of `node` (spans in `m`'s text) where a
/// missing value printed nothing: at its place when the text before it is as written, else at
/// the end.
fn mark_missing(node: &mut Node, m: &Manifest) {
    let (start, end) = (node.span.start as usize, node.span.end as usize);
    let style = node.style();
    match &mut node.value {
        yaml::Value::Scalar(text) => {
            let from = m.dropped.partition_point(|&d| d < start);
            let upto = m.dropped.partition_point(|&d| d <= end);
            if from == upto {
                return;
            }
            let quoted = matches!(
                style,
                yaml::ScalarStyle::SingleQuoted | yaml::ScalarStyle::DoubleQuoted
            );
            let content = start + usize::from(quoted && end > start);
            let written = m.text.get(content..end).unwrap_or_default();
            let places: Option<Vec<usize>> = m.dropped[from..upto]
                .iter()
                .map(|&d| {
                    let rel = d.checked_sub(content)?;
                    (text.get(..rel).is_some() && written.get(..rel) == text.get(..rel))
                        .then_some(rel)
                })
                .collect();
            let mut marked = String::with_capacity(text.len() + template::UNKNOWN.len());
            match places {
                Some(places) => {
                    let mut at = 0;
                    for rel in places {
                        marked.push_str(&text[at..rel]);
                        marked.push_str(template::UNKNOWN);
                        at = rel;
                    }
                    marked.push_str(&text[at..]);
                }
                None => {
                    marked.push_str(text);
                    marked.push_str(template::UNKNOWN);
                }
            }
            *text = marked.into();
        }
        yaml::Value::Seq(items) => items.iter_mut().for_each(|n| mark_missing(n, m)),
        yaml::Value::Map(entries) => {
            for e in entries.iter_mut() {
                mark_missing(&mut e.key, m);
                mark_missing(&mut e.value, m);
            }
        }
    }
}

/// Parses each manifest and maps node spans back to where their text came from: a scalar that
/// is one value's text points at the values node; anything else at the template text that
/// wrote it (the template files are in `sources`); `anchor` when neither is known.
#[must_use]
pub fn documents(rendered: &Rendered, sources: &SourceDb, anchor: Span) -> Vec<RenderedDoc> {
    // A template, or a `crds/` file (YAML, discovered as such); a built-in chart's templates
    // are no file of the repository, even at the same path.
    let files = rendered
        .paths
        .values()
        .filter(|p| !rendered.builtin.contains_key(*p))
        .filter_map(|p| {
            let f = sources.template_by_path(p).or_else(|| sources.by_path(p))?;
            Some((p.as_str(), f))
        })
        .collect();
    let loc = Locator {
        rendered,
        files,
        anchor,
    };
    let mut out = Vec::new();
    for m in &rendered.manifests {
        let parsed = yaml::parse(anchor.file, &m.text);
        for d in parsed.docs.into_iter().filter(|d| !d.root.is_null()) {
            let start = d.root.span.start as usize;
            let (template, line, at) = match rendered.origin_at(m, start) {
                Some(RenderOrigin::Template { path, start, .. }) => {
                    let line = rendered.template_line(&path, start);
                    let at = loc.template_span(&path, start, start);
                    (path, line, at)
                }
                _ => (m.path.clone(), 0, None),
            };
            let images = container_images(&d.root)
                .into_iter()
                .map(|n| {
                    let image = n.as_str().unwrap_or_default().to_string();
                    let tag = super::values::tag_of_reference(&image).map(str::to_string);
                    let (s, e) = (n.span.start as usize, n.span.end as usize);
                    // The tag's bytes in the manifest: after the last `:` of the written text.
                    let tag_range = tag.as_ref().and_then(|t| {
                        let written = m.text.get(s..e)?;
                        let at = written.rfind(&format!(":{t}"))? + s + 1;
                        Some(at..at + t.len())
                    });
                    RenderedImage {
                        tag_span: loc.span_of(m, tag_range.unwrap_or(s..e)),
                        written: loc.written_at(m, s..e),
                        label: String::new(),
                        image,
                        tag,
                    }
                })
                .collect();
            let mut root = d.root;
            if rendered.missing_is_unknown && !m.dropped.is_empty() {
                mark_missing(&mut root, m);
            }
            loc.remap(&mut root, m);
            out.push(RenderedDoc {
                images,
                root,
                builtin: rendered.builtin.get(&m.path).copied(),
                file: loc.files.get(template.as_str()).map(|f| f.id),
                start: at.unwrap_or(anchor),
                template,
                line,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests;

/// An Argo CD object rendered from a chart of this repository.
#[derive(Debug)]
pub struct RenderedObject {
    /// The document that installs the chart: the Application, or the chart's `Chart.yaml` for a
    /// chart no Application of this repository installs.
    pub manager_doc: usize,
    /// "Application `a`" or "chart `apps`".
    pub manager: String,
    /// The chart folder that rendered it.
    pub chart_dir: String,
    /// Rendered with the chart's defaults because no Application was known to install it.
    pub standalone: bool,
    pub kind: super::DocKind,
    pub name: String,
    /// The rendered object; nodes point at their values node, else at the manager's anchor.
    pub root: Node,
    /// Chart-relative template file (`templates/x.yaml`) and line.
    pub template: String,
    pub line: usize,
    /// The built-in chart that wrote it from values (`argocd-apps`), if any.
    pub builtin: Option<&'static str>,
}

impl RenderedObject {
    /// "rendered from `templates/x.yaml:12` by Application `a`", or for a built-in chart
    /// "rendered by chart `argocd-apps` from values, by Application `a`".
    #[must_use]
    pub fn label(&self) -> String {
        match self.builtin {
            Some(chart) => format!(
                "rendered by chart `{chart}` from values, by {}",
                self.manager
            ),
            None => format!(
                "rendered from `{}:{}` by {}",
                self.template, self.line, self.manager
            ),
        }
    }
}

/// A chart whose templates write Argo CD objects and that could not be rendered.
#[derive(Debug, Clone)]
pub struct NotRendered {
    pub manager_doc: usize,
    /// The chart folder.
    pub chart_dir: String,
    /// Rendered with the chart's defaults because no Application was known to install it.
    pub standalone: bool,
    /// Where to report it (the Application's source `path`, or the chart's `name`).
    pub span: Span,
    pub message: String,
}

/// Renders the chart in `dir` when its templates write Argo CD objects: `Ok(None)` when they do
/// not, else the Argo CD documents it renders.
pub fn render_argocd(
    project: &Project,
    dir: &str,
    values: Option<&Values>,
    release: &Release,
    anchor: Span,
    budget: &RenderBudget,
) -> Result<Option<Vec<RenderedDoc>>, RenderError> {
    // Most charts an Application names hold no template: not loaded at all.
    if !may_render(project, dir) {
        return Ok(None);
    }
    let chart = load(project, dir)?;
    let writes = |c: &Chart| c.templates.iter().any(|(_, t)| writes_argocd_kind(t));
    fn any_sub(c: &Chart, f: &dyn Fn(&Chart) -> bool) -> bool {
        f(c) || c.subcharts.iter().any(|s| any_sub(s, f))
    }
    if !any_sub(&chart, &writes) {
        return Ok(None);
    }
    // A subchart archive that cannot be read would leave the rendering incomplete.
    if let Some(UnreadSubchart { path, why, .. }) = chart.first_unread() {
        return Err(RenderError {
            path: path.clone(),
            line: 0,
            message: why.clone(),
            unsupported: None,
            over_budget: false,
        });
    }
    let missing_is_unknown = values.is_none();
    let values = values.unwrap_or(&chart.defaults);
    let mut rendered = render_with(&chart, values, release, &mut None, budget)?;
    rendered.missing_is_unknown = missing_is_unknown;
    let prefix = format!("{dir}/");
    let mut docs: Vec<RenderedDoc> = documents(&rendered, &project.sources, anchor)
        .into_iter()
        .filter(|d| super::is_argocd_kind(super::classify(&d.template, &d.root)))
        .map(|mut d| {
            if let Some(rel) = d.template.strip_prefix(&prefix) {
                d.template = rel.to_string();
            }
            d
        })
        .collect();
    argocd_apps::anchor_items(project, &mut docs, anchor);
    Ok(Some(docs))
}
