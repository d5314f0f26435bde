//! A chart folder of this repository: `Chart.yaml`, `values.yaml`, `templates/` and `crds/`
//! (read with the repository), `.Files` from the disk, and subcharts under `charts/` (folders,
//! archives, the built-in `argocd-apps`). What is read from the disk here goes through the
//! confined layer (`source::fs::Root`): inside the root, regular files, within their limits.

use std::cell::Cell;
use std::path::Path;

use super::archive::{MAX_ARCHIVE_UNPACKED, from_files, read_archive_file};
use super::argocd_apps;
use super::chart::{
    Chart, MAX_SUBCHART_DEPTH, MAX_TEMPLATE_BYTES, MAX_TEMPLATE_FILES, UnreadSubchart,
    dependency_anchor, is_chart_metadata, metadata_and_dependencies,
};
use super::render::RenderError;
use super::values::Values;
use crate::model::Repository;
use crate::model::paths::join;
use crate::source::Span;
use crate::source::fs::{Kind, LINK_OUTSIDE, Reach, Root};
use crate::yaml::Node;

/// Reads the chart in `dir` (repository-relative).
pub fn load(repo: &Repository, dir: &str) -> Result<Chart, RenderError> {
    load_at(repo, dir, 0, &Cell::new(MAX_ARCHIVE_UNPACKED))
}

/// The first document of the `Chart.yaml` (or `Chart.yml`) in `dir`.
#[must_use]
pub fn chart_yaml<'p>(repo: &'p Repository, dir: &str) -> Option<&'p crate::model::Document> {
    ["Chart.yaml", "Chart.yml"]
        .iter()
        .filter_map(|n| join(dir, n))
        .find_map(|p| repo.file_by_path(&p))
        .and_then(|f| repo.file_docs(f.id).first())
}

/// Whether the chart in `dir` may hold a template: its own `templates/` or `crds/` files, a
/// `charts/` folder, or the built-in `argocd-apps` as a dependency (other dependencies
/// render only from `charts/`). False only when loading it would give a chart that renders
/// nothing.
#[must_use]
pub fn may_render(repo: &Repository, dir: &str) -> bool {
    let under = |sub: &str| join(dir, sub).unwrap_or_default();
    if !repo.sources.templates_under(&under("templates")).is_empty()
        || files_under(repo, &under("crds")).next().is_some()
        || files_under(repo, &under("charts")).next().is_some()
        || (repo.on_disk && repo.root.join(dir).join("charts").exists())
    {
        return true;
    }
    chart_yaml(repo, dir).is_none_or(|d| {
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

/// Whether `path`, a link, leads out of `root`, as the confined file-system layer resolves it. A
/// dangling link or a loop is not refused here: it leads nowhere readable.
fn links_out_of(root: &Root, path: &Path) -> bool {
    root.resolve(path).is_err_and(|e| e.reason == LINK_OUTSIDE)
}

fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

const LINK_OUT: &str = "a link to a place outside the repository: not read";

fn load_at(
    repo: &Repository,
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
        .find_map(|p| repo.file_by_path(&p))
        .ok_or_else(|| fail("no Chart.yaml".into()))?;
    let doc = repo
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
        .and_then(|p| repo.file_by_path(&p))
        .and_then(|f| repo.file_docs(f.id).first())
        .map_or(Values::empty_map(), |d| repo.helm_values(d));
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
    let templates: Vec<(String, String)> = repo
        .sources
        .templates_under(&templates_dir)
        .iter()
        .map(|f| (rel_to_chart(&f.path), f.text().to_string()))
        .collect();
    let crds_dir = join(dir, "crds").unwrap_or_default();
    let crds: Vec<(String, String)> = files_under(repo, &crds_dir)
        .map(|f| (rel_to_chart(&f.path), f.text().to_string()))
        .collect();
    // `.Files`: read from the disk only when a template uses it; a chart with too many or too
    // large files just has none readable.
    let mut files = Vec::new();
    let abs = repo.root.join(dir);
    // The confined layer resolves the root (a `realpath`): made only for a chart that reads
    // the disk, not for each of thousands of charts without `.Files` or `charts/`.
    let disk = std::cell::OnceCell::new();
    let disk = || disk.get_or_init(|| Root::new(&repo.root));
    if repo.on_disk
        && templates.iter().any(|(_, t)| t.contains("Files"))
        && read_tree(disk(), &abs, ".", &mut files).is_err()
    {
        files.clear();
    }
    let files: Vec<(String, String)> = files
        .into_iter()
        .filter_map(|(p, t)| {
            let p = p.strip_prefix("./").unwrap_or(&p).to_string();
            let hidden =
                p.starts_with("templates/") || p.starts_with("charts/") || is_chart_metadata(&p);
            if hidden {
                return None;
            }
            // A file the repository read and keeps is taken as read (`diff`'s base revision
            // holds texts that are not the ones on disk); a released one is the disk's.
            let read = join(dir, &p)
                .and_then(|rel| repo.file_by_path(&rel))
                .filter(|f| f.unreadable.is_none() && !f.text_was_released());
            Some(match read {
                Some(f) => (p, f.text().to_string()),
                None => (p, t),
            })
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
    // Nothing at `charts/` (an `lstat`), the common case: no listing to read.
    let listing = if !repo.on_disk || std::fs::symlink_metadata(&charts_dir).is_err() {
        None
    } else if is_link(&charts_dir) && links_out_of(disk(), &charts_dir) {
        unread.push(UnreadSubchart {
            path: join(dir, "charts").unwrap_or_default(),
            why: LINK_OUT.into(),
            at: chart_start,
        });
        None
    } else {
        disk().read_dir(&charts_dir).ok()
    };
    if let Some(entries) = listing {
        let mut names: Vec<(String, Kind)> = entries
            .into_iter()
            .map(|e| (e.name.to_string_lossy().into_owned(), e.kind))
            .collect();
        names.sort_by(|a, b| a.0.cmp(&b.0));
        for (n, kind) in names {
            let Some(sub) = join(dir, &format!("charts/{n}")) else {
                continue;
            };
            let anchor = dependency_anchor(root, doc.span, &n);
            if kind == Kind::Link && links_out_of(disk(), &charts_dir.join(&n)) {
                unread.push(UnreadSubchart {
                    path: sub,
                    why: LINK_OUT.into(),
                    at: anchor,
                });
            } else if kind == Kind::Folder {
                if let Ok(c) = load_at(repo, &sub, depth + 1, unpacked) {
                    subcharts.push(c);
                }
            } else if n.ends_with(".tgz") {
                match read_archive_file(disk(), &charts_dir.join(&n), unpacked)
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

/// Discovered (YAML) files under a folder, in path order.
fn files_under<'p>(
    repo: &'p Repository,
    dir: &str,
) -> impl Iterator<Item = &'p crate::source::SourceFile> {
    let prefix = format!("{dir}/");
    let files = repo.sources.files();
    let start = files.partition_point(|f| f.path.as_str() < prefix.as_str());
    files[start..]
        .iter()
        .take_while(move |f| f.path.starts_with(&prefix))
}

/// Reads every regular file under `base/sub` (no symlinks), sorted, as (`sub/...`, text),
/// through the confined layer.
fn read_tree(
    root: &Root,
    base: &Path,
    sub: &str,
    out: &mut Vec<(String, String)>,
) -> Result<(), String> {
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
        // A file that is not UTF-8 text (an image under templates/) is skipped, as a template,
        // and so is one replaced since it was listed (by a link out of the root, say).
        if let Ok(text) = root.read_text(&base.join(&rel), Reach::Root, MAX_TEMPLATE_BYTES) {
            out.push((rel, text));
        }
    }
    Ok(())
}
