//! The public `argocd-apps` chart (argo-helm): repositories keep Applications, ApplicationSets,
//! AppProjects and ArgoCDExtensions in its values and install it from its chart repository, so
//! the chart itself is never in the repository. Its templates are built in (copied verbatim
//! from argo-helm, see `argocd_apps/README.md`) and rendered by the same engine as this
//! repository's charts, so the values are read exactly as the chart reads them.
//!
//! Chart 1.x takes lists of items with a `name`; 2.x takes maps keyed by name. The form follows
//! the version the repository asks for; when that is a range spanning both or unknown, each
//! collection is read by its shape (a list as 1.x, a map as 2.x).

use std::collections::BTreeMap;

use super::budget::RenderBudget;
use super::chart::Chart;
use super::documents::{RenderedDoc, documents};
use super::render::{Release, RenderError, render_with};
use super::values::Values;
use crate::model::Repository;
use crate::model::paths::normalize_url;
use crate::source::Span;
use crate::yaml::{Node, Value};

/// The chart's name.
pub const CHART: &str = "argocd-apps";

/// The collections the chart reads, each rendered by `templates/<key>.yaml`.
const COLLECTIONS: [&str; 4] = ["applications", "applicationsets", "projects", "extensions"];

/// Which major version's templates read the values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    /// 1.x: lists of items with `name`.
    List,
    /// 2.x: maps, the key is the name.
    Map,
    /// A range or unknown version: each collection by its shape.
    ByShape,
}

impl Form {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Form::List => "1.x",
            Form::Map => "2.x",
            Form::ByShape => "1.x or 2.x",
        }
    }
}

/// Is `chart` from `repo` (a Helm repository URL or `oci://` reference; `None` when not given)
/// the public `argocd-apps` chart?
#[must_use]
pub fn is_argocd_apps(repo: Option<&str>, chart: &str) -> bool {
    if chart.trim() != CHART {
        return false;
    }
    let Some(repo) = repo else {
        return false;
    };
    let url = normalize_url(repo.trim().trim_start_matches("oci://"));
    let url = url.trim_end_matches('/');
    url.ends_with("argoproj.github.io/argo-helm")
        || url.ends_with("ghcr.io/argoproj/argo-helm")
        || url.ends_with("ghcr.io/argoproj/argo-helm/argocd-apps")
}

/// The form a version or version range (`targetRevision`, a dependency's `version`) selects:
/// an exact version, `^N`, `~N`, `N.x` or `N.*` name one major version; anything else is read by
/// shape.
#[must_use]
pub fn form_of(version: Option<&str>) -> Form {
    let Some(v) = version.map(str::trim) else {
        return Form::ByShape;
    };
    let v = v
        .strip_prefix('^')
        .or_else(|| v.strip_prefix('~'))
        .or_else(|| v.strip_prefix('='))
        .unwrap_or(v)
        .trim();
    let v = v.strip_prefix('v').unwrap_or(v);
    let single = !v.is_empty()
        && v.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '+' | '*'));
    let major = v.split('.').next().unwrap_or("");
    match (single, major) {
        (true, "1") => Form::List,
        (true, "2") => Form::Map,
        _ => Form::ByShape,
    }
}

fn template(key: &str, form: Form) -> String {
    let (v1, v2) = match key {
        "applications" => (
            include_str!("argocd_apps/v1/applications.yaml.gotmpl"),
            include_str!("argocd_apps/v2/applications.yaml.gotmpl"),
        ),
        "applicationsets" => (
            include_str!("argocd_apps/v1/applicationsets.yaml.gotmpl"),
            include_str!("argocd_apps/v2/applicationsets.yaml.gotmpl"),
        ),
        "projects" => (
            include_str!("argocd_apps/v1/projects.yaml.gotmpl"),
            include_str!("argocd_apps/v2/projects.yaml.gotmpl"),
        ),
        "extensions" => (
            include_str!("argocd_apps/v1/extensions.yaml.gotmpl"),
            include_str!("argocd_apps/v2/extensions.yaml.gotmpl"),
        ),
        _ => return include_str!("argocd_apps/v2/item-templates.yaml.gotmpl").to_string(),
    };
    match form {
        Form::List => v1.to_string(),
        Form::Map => v2.to_string(),
        Form::ByShape => {
            format!(
                "{{{{- if kindIs \"slice\" .Values.{key} }}}}{v1}{{{{- else }}}}{v2}{{{{- end }}}}\n"
            )
        }
    }
}

/// The chart, built in, as if it were in `dir` (repository-relative, need not exist).
#[must_use]
pub fn chart(dir: &str, form: Form) -> Chart {
    let mut templates: Vec<(String, String)> = COLLECTIONS
        .iter()
        .map(|k| (format!("templates/{k}.yaml"), template(k, form)))
        .collect();
    templates.push((
        "templates/item-templates.yaml".into(),
        template("itemTemplates", form),
    ));
    templates.sort();
    let version = match form {
        Form::List => "1.6.2",
        _ => "2.0.5",
    };
    let metadata: BTreeMap<String, String> = [
        ("Name", CHART),
        ("Version", version),
        ("APIVersion", "v2"),
        ("Type", "application"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    Chart {
        dir: dir.to_string(),
        name: CHART.to_string(),
        metadata,
        defaults: Values::empty_map(),
        templates,
        crds: Vec::new(),
        files: Vec::new(),
        dependencies: Vec::new(),
        subcharts: Vec::new(),
        unread: Vec::new(),
        builtin: Some(CHART),
    }
}

/// Renders the chart with `values` (an Application's or kustomization's values for it): the
/// Argo CD objects it writes, their nodes at the values nodes (see [`anchor_items`]).
pub fn render_objects(
    repo: &Repository,
    values: &Values,
    form: Form,
    release: &Release,
    anchor: Span,
    budget: &RenderBudget,
) -> Result<Vec<RenderedDoc>, RenderError> {
    let chart = chart(CHART, form);
    let rendered = render_with(&chart, values, release, &mut None, budget)?;
    let mut docs: Vec<RenderedDoc> = documents(&rendered, &repo.sources, anchor)
        .into_iter()
        .filter(|d| crate::model::is_argocd_kind(crate::model::classify(&d.template, &d.root)))
        .collect();
    anchor_items(repo, &mut docs, anchor);
    Ok(docs)
}

/// The nodes the chart's templates write themselves (`apiVersion`, `kind`, `spec:`...) and a
/// map item's name (its key) have no values node: they point at the item in the values (the
/// key of a 2.x item, the `name` of a 1.x one) instead of `anchor`.
pub fn anchor_items(repo: &Repository, docs: &mut [RenderedDoc], anchor: Span) {
    for d in docs.iter_mut().filter(|d| d.builtin.is_some()) {
        let Some(name) = d
            .root
            .path(&["metadata", "name"])
            .map(|n| (n.span, n.as_str().unwrap_or("").to_string()))
        else {
            continue;
        };
        let item = if name.0 == anchor {
            first_span_other_than(&d.root, anchor).and_then(|leaf| key_span(repo, leaf, &name.1))
        } else {
            Some(name.0)
        };
        let Some(item) = item else {
            continue;
        };
        replace_span(&mut d.root, anchor, item);
    }
}

fn first_span_other_than(node: &Node, anchor: Span) -> Option<Span> {
    if node.span != anchor {
        return Some(node.span);
    }
    match &node.value {
        Value::Scalar(_) => None,
        Value::Seq(items) => items.iter().find_map(|n| first_span_other_than(n, anchor)),
        Value::Map(entries) => entries.iter().find_map(|e| {
            first_span_other_than(&e.key, anchor)
                .or_else(|| first_span_other_than(&e.value, anchor))
        }),
    }
}

fn replace_span(node: &mut Node, from: Span, to: Span) {
    if node.span == from {
        node.span = to;
    }
    match &mut node.value {
        Value::Scalar(_) => {}
        Value::Seq(items) => items.iter_mut().for_each(|n| replace_span(n, from, to)),
        Value::Map(entries) => {
            for e in entries {
                replace_span(&mut e.key, from, to);
                replace_span(&mut e.value, from, to);
            }
        }
    }
}

/// The key `name` under one of the chart's collections, in the values document holding `leaf`.
fn key_span(repo: &Repository, leaf: Span, name: &str) -> Option<Span> {
    fn walk(node: &Node, leaf: Span, name: &str, parent: Option<&str>) -> Option<Span> {
        let holds = |n: &Node| n.span.start <= leaf.start && leaf.end <= n.span.end;
        match &node.value {
            Value::Scalar(_) => None,
            Value::Seq(items) => items
                .iter()
                .filter(|n| holds(n))
                .find_map(|n| walk(n, leaf, name, None)),
            Value::Map(entries) => entries.iter().filter(|e| holds(&e.value)).find_map(|e| {
                let key = e.key.scalar_text();
                walk(&e.value, leaf, name, key).or_else(|| {
                    (key == Some(name) && parent.is_some_and(|p| COLLECTIONS.contains(&p)))
                        .then_some(e.key.span)
                })
            }),
        }
    }
    if (leaf.file.0 as usize) >= repo.sources.files().len() {
        return None;
    }
    // Only the document holding `leaf`: a values document's tree may be parsed again.
    repo.file_docs(leaf.file)
        .iter()
        .filter(|d| d.span.start <= leaf.start && leaf.end <= d.span.end.max(d.root.span.end))
        .find_map(|d| walk(&repo.tree(d), leaf, name, None))
}
