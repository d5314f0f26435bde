//! `helmCharts`, inflated as kustomize's HelmChartInflationGenerator does it
//! (`api/internal/builtins/HelmChartInflationGenerator.go` and `api/types/helmchartargs.go`
//! of kustomize v5.5.0), with the in-process Helm renderer (`model::helm`) in place of
//! `helm template`:
//!
//! - only under `--enable-helm` ([`BuildOptions::enable_helm`](super::BuildOptions)); without it
//!   kustomize refuses the kustomization: an error when the repository holds Argo CD's
//!   `argocd-cm` (its `kustomize.buildOptions` lack the flag), else a not-rendered note (Argo
//!   CD's settings may live elsewhere);
//! - the chart is `<chartHome>/<name>` (`helmGlobals.chartHome`, default `charts`, from the
//!   kustomization's folder), or `<chartHome>/<name>-<version>/<name>` when `repo` and
//!   `version` are both set; a chart not there is pulled by kustomize, which this build does
//!   not do (a not-rendered note), unless `repo` is empty (kustomize fails);
//! - the values are `valuesFile` (default: the chart's own `values.yaml`), with
//!   `valuesInline` over it (`valuesMerge: override`, the default), under it (`merge`) or in
//!   its place (`replace`), then each of `additionalValuesFiles` over them, all read within
//!   the load restrictor;
//! - `releaseName` (none: Helm's `--generate-name`, a name not known here), `namespace`
//!   (`default`), `includeCRDs`, `kubeVersion` and `apiVersions` are the release's.
//!
//! Each rendered document is a resource of the kustomization, added after its generators;
//! its nodes point at the template or values line that wrote them.

use super::{Builder, Object};
use crate::model::helm::{self, values::Values};
use crate::model::paths::join;
use crate::source::Span;
use crate::yaml::Node;

/// The objects of each `helmCharts` item, with the item's span.
pub(super) fn run(b: &mut Builder<'_>, k: usize, tree: &Node) -> Vec<(Span, Vec<Object>)> {
    let Some(charts) = tree
        .get("helmCharts")
        .filter(|c| c.items().next().is_some())
    else {
        return Vec::new();
    };
    // Reported at the `helmCharts` key.
    let key = tree
        .entries()
        .find(|e| e.key.scalar_text() == Some("helmCharts"))
        .map_or(charts.span, |e| e.key.span);
    if !b.options.enable_helm && b.options.known {
        b.error(
            key,
            "`helmCharts` need `--enable-helm`, which `kustomize.buildOptions` in `argocd-cm` does not set",
        );
        return Vec::new();
    }
    if !b.options.enable_helm {
        b.chart_not_rendered(
            key,
            "`helmCharts` are not inflated: Argo CD runs kustomize with `--enable-helm` only when `kustomize.buildOptions` in `argocd-cm` has it, which this repository does not show",
        );
        return Vec::new();
    }
    let home = tree
        .path(&["helmGlobals", "chartHome"])
        .and_then(Node::as_str)
        .filter(|h| !h.is_empty())
        .unwrap_or("charts");
    charts
        .items()
        .filter_map(|item| {
            let objects = inflate(b, k, home, item)?;
            Some((item.span, objects))
        })
        .collect()
}

fn inflate(b: &mut Builder<'_>, k: usize, home: &str, item: &Node) -> Option<Vec<Object>> {
    let text = |key: &str| item.get(key).and_then(Node::scalar_text).unwrap_or("");
    let (name, repo, version) = (text("name"), text("repo"), text("version"));
    if name.is_empty() {
        b.error(item.span, "a `helmCharts` item needs a `name`");
        return None;
    }
    let merge = item.get("valuesMerge").and_then(Node::scalar_text);
    if let Some(m) = merge.filter(|m| !["", "merge", "override", "replace"].contains(m)) {
        b.error(
            item.span,
            format!("`valuesMerge: {m}` must be one of `merge`, `override`, `replace`"),
        );
        return None;
    }
    let dir = b.ks.node(k).dir.clone();
    if home.starts_with('/') {
        b.chart_not_rendered(
            item.span,
            format!("chart home `{home}` is outside the repository: chart `{name}` not inflated"),
        );
        return None;
    }
    let Some(mut chart_home) = join(&dir, home) else {
        b.chart_not_rendered(
            item.span,
            format!("chart home `{home}` is outside the repository: chart `{name}` not inflated"),
        );
        return None;
    };
    if !repo.is_empty() && !version.is_empty() {
        chart_home = join(&chart_home, &format!("{name}-{version}")).unwrap_or(chart_home);
    }
    let chart_dir = join(&chart_home, name).unwrap_or_default();
    let local = helm::chart_yaml(b.repo, &chart_dir).is_some()
        || (b.repo.on_disk && b.repo.root.join(&chart_dir).is_dir());
    if !local {
        if repo.is_empty() {
            b.error(
                item.span,
                format!(
                    "chart `{name}` is not at `{chart_dir}` and no `repo` is given to pull it from"
                ),
            );
        } else {
            b.chart_not_rendered(
                item.span,
                format!("chart `{name}` is pulled from `{repo}`, which this build does not fetch"),
            );
        }
        return None;
    }
    if helm::chart_yaml(b.repo, &chart_dir).is_none()
        && b.repo.on_disk
        && ["Chart.yaml", "Chart.yml"]
            .iter()
            .any(|f| b.repo.root.join(&chart_dir).join(f).is_file())
    {
        // On the disk, in a folder discovery skips (`vendor/`, an ignored path).
        b.chart_not_rendered(
            item.span,
            format!("chart `{name}` not inflated: `{chart_dir}` is not read by this run"),
        );
        return None;
    }
    let user = values(b, &dir, &chart_dir, item, merge.unwrap_or("override"))?;
    let chart = match helm::load(b.repo, &chart_dir) {
        Ok(c) => c,
        Err(e) => {
            b.error(item.span, format!("cannot load chart `{name}`: {e}"));
            return None;
        }
    };
    if let Some(unread) = chart.first_unread() {
        b.chart_not_rendered(
            item.span,
            format!(
                "chart `{name}` not inflated: `{}` is not read ({})",
                unread.path, unread.why
            ),
        );
        return None;
    }
    let mut effective = chart.defaults.clone();
    effective.merge(user);
    let release = release(item, name);
    let mut rendered = match helm::render(&chart, &effective, &release) {
        Ok(r) => r,
        Err(e) if e.unsupported.is_some() || e.over_budget => {
            b.chart_not_rendered(item.span, format!("chart `{name}` not inflated: {e}"));
            return None;
        }
        Err(e) => {
            b.error(item.span, format!("chart `{name}` does not render: {e}"));
            return None;
        }
    };
    let crds = item.get("includeCRDs").and_then(Node::scalar_text) == Some("true");
    if !crds {
        rendered.manifests.retain(|m| !m.crd);
    }
    let mut out = Vec::new();
    for doc in helm::documents(&rendered, &b.repo.sources, item.span) {
        let root = doc.root;
        if root.is_null() || root.as_map().is_some_and(<[_]>::is_empty) {
            continue;
        }
        if root.as_map().is_none() {
            b.error(
                item.span,
                format!("chart `{name}` renders a document that is not a mapping"),
            );
            return None;
        }
        if root.get_str("kind") == Some("List") {
            for i in root.get("items").into_iter().flat_map(Node::items) {
                out.push(Object::from_tree(i.clone(), None));
            }
            continue;
        }
        out.push(Object::from_tree(root, None));
    }
    for o in &mut out {
        o.chart = Some(chart_dir.clone());
    }
    Some(out)
}

/// The release `helm template` is given: `releaseName` (else a generated name, not known
/// here), `namespace` (else `default`), `kubeVersion`, `apiVersions`.
fn release(item: &Node, chart: &str) -> helm::Release {
    let name = item
        .get_str("releaseName")
        .filter(|n| !n.is_empty())
        .map_or_else(
            || format!("{chart}-{}", crate::model::template::UNKNOWN),
            str::to_string,
        );
    let namespace = item
        .get_str("namespace")
        .filter(|n| !n.is_empty())
        .unwrap_or("default");
    helm::Release::new(&name, namespace).with_capabilities(
        item.get("kubeVersion").and_then(Node::scalar_text),
        item.get("apiVersions"),
    )
}

/// The values kustomize gives `helm template` with `-f`: the values file and `valuesInline`
/// as `valuesMerge` says, then `additionalValuesFiles`.
fn values(
    b: &mut Builder<'_>,
    dir: &str,
    chart_dir: &str,
    item: &Node,
    merge: &str,
) -> Option<Values> {
    let (file, file_span) = match item.get("valuesFile").filter(|f| f.as_str().is_some()) {
        Some(f) => (f.as_str().unwrap_or_default().to_string(), f.span),
        // kustomize names the chart's own `values.yaml` (an absolute path it loads).
        None => (
            format!("/{}", join(chart_dir, "values.yaml").unwrap_or_default()),
            item.span,
        ),
    };
    let inline = item
        .get("valuesInline")
        .filter(|n| n.as_map().is_some_and(|m| !m.is_empty()))
        .map(|n| Values::from_node(n, None));
    let mut vals = match (inline, merge) {
        (Some(inline), "replace") => inline,
        (Some(inline), "merge") => {
            let mut out = inline;
            out.merge(read_values(b, dir, &file, file_span)?);
            out
        }
        (Some(inline), _) => {
            let mut out = read_values(b, dir, &file, file_span)?;
            out.merge(inline);
            out
        }
        (None, _) => read_values(b, dir, &file, file_span)?,
    };
    for f in item
        .get("additionalValuesFiles")
        .into_iter()
        .flat_map(Node::items)
    {
        let Some(path) = f.as_str() else { continue };
        let more = read_values(b, dir, path, f.span)?;
        vals.merge(more);
    }
    Some(vals)
}

/// A values file, from the kustomization's folder `dir` (a path starting with `/` is from the
/// repository's root), within the load restrictor; its nodes keep their lines when the
/// repository holds it.
fn read_values(b: &mut Builder<'_>, dir: &str, path: &str, at: Span) -> Option<Values> {
    let path = match path.strip_prefix('/') {
        Some(from_root) => relative(dir, from_root),
        None => path.to_string(),
    };
    if !b.may_load(dir, &path) {
        b.error(at, super::outside_message(&path, dir));
        return None;
    }
    let held = join(dir, &path)
        .and_then(|p| b.repo.file_by_path(&p))
        .map(|f| f.id);
    let v = match held {
        Some(id) => b
            .repo
            .file_docs(id)
            .first()
            .map_or(Values::Null, |d| b.repo.helm_values(d)),
        None => {
            let text = b.read(dir, &path, at)?;
            crate::yaml::parse(at.file, &text)
                .docs
                .first()
                .map_or(Values::Null, |d| Values::from_node(&d.root, Some(at)))
        }
    };
    Some(match v {
        Values::Null => Values::empty_map(),
        v => v,
    })
}

/// `path` (from the root) as a path from folder `dir`.
fn relative(dir: &str, path: &str) -> String {
    if dir.is_empty() {
        return path.to_string();
    }
    match path.strip_prefix(&format!("{dir}/")) {
        Some(rest) => rest.to_string(),
        None => {
            let ups = dir.split('/').count();
            format!("{}{path}", "../".repeat(ups))
        }
    }
}
