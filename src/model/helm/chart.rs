//! A chart as read: `Chart.yaml` (`.Chart`, `dependencies` and their `import-values`), its
//! defaults, templates, other files and subcharts, and what one chart may hold.

use std::collections::BTreeMap;

use super::values::Values;
use crate::source::Span;
use crate::yaml::Node;

/// Files read from one chart's `templates/` and `crds/` folders, and their size.
pub(super) const MAX_TEMPLATE_FILES: usize = 2000;
pub(super) const MAX_TEMPLATE_BYTES: u64 = 4 << 20;
pub(super) const MAX_SUBCHART_DEPTH: usize = 8;

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

/// `.Chart` (`Name`, `Version`...) and the `dependencies` of a `Chart.yaml`.
pub(super) fn metadata_and_dependencies(
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

/// Where values read from an archive point: the `dependencies` entry naming it, else
/// `Chart.yaml`'s first byte.
pub(super) fn dependency_anchor(root: &Node, doc: Span, archive: &str) -> Span {
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

/// A chart's own description and defaults, which `.Files` does not list.
pub(super) fn is_chart_metadata(path: &str) -> bool {
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
