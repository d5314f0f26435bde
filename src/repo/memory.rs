//! Repositories of in-memory files `(relative path, text)`, laid out as discovery lays out a
//! checkout: the fixture harness, fix verification and every unit test build theirs here.

use std::path::{Path, PathBuf};

use super::{Document, Documents, classify};
use crate::source::{FileId, SourceDb, SourceFile};

/// Folders of the `Chart.yaml` files among `paths`.
pub fn chart_dirs<'a>(paths: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    paths
        .filter_map(|p| {
            let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
            matches!(name, "Chart.yaml" | "Chart.yml").then_some(dir)
        })
        .collect()
}

/// In-memory files as discovery sees them: sorted by path, the files under a chart's
/// `templates/` kept as template sources (ids after the others), the rest to be parsed.
pub struct Layout<'a> {
    /// The files to parse, with their ids, in path order.
    pub parsed: Vec<(FileId, &'a str, &'a str)>,
    /// The chart templates, as sources.
    pub templates: Vec<SourceFile>,
}

impl<'a> Layout<'a> {
    /// Lays out `files`; `root` is the folder their absolute paths are under.
    #[must_use]
    pub fn new(files: &[(&'a str, &'a str)], root: &Path) -> Self {
        let mut sorted = files.to_vec();
        sorted.sort_by(|a, b| a.0.cmp(b.0));
        let charts = chart_dirs(sorted.iter().map(|f| f.0));
        let is_template = |rel: &str| {
            charts.iter().any(|d| {
                let prefix = if d.is_empty() {
                    "templates/".to_string()
                } else {
                    format!("{d}/templates/")
                };
                rel.starts_with(&prefix)
            })
        };
        let (templates, parsed): (Vec<_>, Vec<_>) =
            sorted.into_iter().partition(|f| is_template(f.0));
        let id = |i: usize| FileId(u32::try_from(i).unwrap_or(u32::MAX));
        let templates = templates
            .iter()
            .enumerate()
            .map(|(i, (rel, text))| {
                SourceFile::new(
                    id(parsed.len() + i),
                    (*rel).to_string(),
                    root.join(rel),
                    (*text).to_string(),
                )
            })
            .collect();
        let parsed = parsed
            .into_iter()
            .enumerate()
            .map(|(i, (rel, text))| (id(i), rel, text))
            .collect();
        Layout { parsed, templates }
    }
}

/// The documents of one file's text, classified, each with its whole tree.
#[must_use]
pub fn parse_documents(file: FileId, rel: &str, text: &str) -> Vec<Document> {
    crate::yaml::parse(file, text)
        .docs
        .into_iter()
        .map(|d| Document {
            file,
            index: d.index,
            span: d.span,
            kind: classify(rel, &d.root),
            kept: None,
            rendered: false,
            root: d.root.into(),
        })
        .collect()
}

/// The documents of in-memory files under `root`, every tree whole. `on_disk` says whether
/// the files are also written there (see [`Documents::on_disk`]).
#[must_use]
pub fn documents(files: &[(&str, &str)], root: PathBuf, on_disk: bool) -> Documents {
    let layout = Layout::new(files, &root);
    let mut sources = Vec::new();
    let mut docs = Vec::new();
    for (id, rel, text) in layout.parsed {
        docs.extend(parse_documents(id, rel, text));
        sources.push(SourceFile::new(
            id,
            rel.to_string(),
            root.join(rel),
            text.to_string(),
        ));
    }
    let mut documents = Documents::new(
        root,
        SourceDb::with_templates(sources, layout.templates),
        docs,
    );
    documents.on_disk = on_disk;
    documents
}
