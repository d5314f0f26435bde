//! Helm charts of this repository, rendered in-process with the `gotmpl` engine.
//!
//! [`load()`] reads a chart folder (`Chart.yaml`, `values.yaml`, `templates/`, `crds/`, and
//! subcharts under `charts/` with their `dependencies` entries); [`render()`] renders it with
//! effective values as Helm does (subchart defaults coalesced under their name or alias,
//! `global` copied down, `condition`/`tags` honoured, templates parsed in Helm's order, partials
//! `_*` and `NOTES.txt` not rendered). Every byte of a rendered manifest knows where it came
//! from: a values node (its span) or a template range ([`Rendered::origin_at`]).
//!
//! Templates are Go templates, not YAML, so discovery skips them: they are read with the
//! repository as template sources (`SourceDb::templates`). `charts/*.tgz` archives and `.Files`
//! are read here, from the disk under the root, confined to it, and only when the repository is
//! on disk.
//!
//! By job: `chart` (what a chart is, `Chart.yaml`), `load` (a chart folder), `archive`
//! (`charts/*.tgz`), `coalesce` (effective values, enabled subcharts), `render` (templates
//! through `gotmpl`, within `budget`), `objects` (`.Capabilities`, `.Files`), `provenance`
//! (rendered bytes back to values and template lines), `documents` (rendered YAML documents and
//! images); `values` (values with provenance: a YAML tree with spans, so it lives in
//! `crate::repo`) and `argocd_apps` (the built-in chart). This file renders a chart's Argo CD
//! objects for the resolver.

mod archive;
pub mod argocd_apps;
mod budget;
mod chart;
mod coalesce;
mod documents;
mod load;
mod objects;
mod provenance;
mod render;
pub use crate::repo::values;

pub use budget::RenderBudget;
pub use chart::{Chart, Dependency, ImportValue, UnreadSubchart};
pub use coalesce::to_value;
pub use documents::{
    RenderedDoc, RenderedImage, container_images, documents, documents_with, pod_specs,
};
pub use load::{chart_yaml, load, may_render};
pub use provenance::RenderOrigin;
pub use render::{
    Manifest, Parsed, Release, RenderError, Rendered, render, render_cached, render_with,
};

use super::Repository;
use crate::source::Span;
use crate::yaml::Node;
use values::Values;

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

/// The name of Argo CD's own chart.
pub const ARGO_CD_CHART: &str = "argo-cd";

/// Whether the chart in `dir` is the argo-cd chart or depends on it (a wrapper chart).
#[must_use]
pub fn installs_argo_cd(repo: &Repository, dir: &str) -> bool {
    chart_yaml(repo, dir).is_some_and(|d| is_or_wraps_argo_cd(&d.root))
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
    repo: &Repository,
    dir: &str,
    values: Option<&Values>,
    release: &Release,
    anchor: Span,
    budget: &RenderBudget,
) -> Result<Option<Vec<RenderedDoc>>, RenderError> {
    // Most charts an Application names hold no template: not loaded at all.
    if !may_render(repo, dir) {
        return Ok(None);
    }
    let chart = load(repo, dir)?;
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
    let mut docs: Vec<RenderedDoc> = documents(&rendered, &repo.sources, anchor)
        .into_iter()
        .filter(|d| super::is_argocd_kind(super::classify(&d.template, &d.root)))
        .map(|mut d| {
            if let Some(rel) = d.template.strip_prefix(&prefix) {
                d.template = rel.to_string();
            }
            d
        })
        .collect();
    argocd_apps::anchor_items(repo, &mut docs, anchor);
    Ok(Some(docs))
}

#[cfg(test)]
mod tests;
