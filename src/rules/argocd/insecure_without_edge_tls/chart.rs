//! The argo-cd chart: the values Applications and kustomize `helmCharts` give it, the
//! insecure settings in them, and the Service name it gives argocd-server.

use std::collections::HashSet;

use super::ARGO_CD_CHART;
use super::Insecure;
use crate::model::Field;
use crate::model::Repository;
use crate::model::argocd::resolve::{Location, SourceKind};
use crate::model::argocd::server::{is_insecure_flag, is_true};
use crate::model::helm;
use crate::model::helm::values::Values;
use crate::model::kustomize::{Kustomization, Reference};
use crate::model::paths;
use crate::model::sources::directory::directory_files;
use crate::model::{DocKind, is_values_file_name};
use crate::rules::Context;
use crate::source::Span;
use crate::yaml::Node;

/// The Service name the argo-cd chart gives argocd-server for a release.
pub(super) fn chart_service(values: &Values, release: &str) -> String {
    if let Some(fo) = values
        .get("fullnameOverride")
        .and_then(Values::text)
        .filter(|s| !s.is_empty())
    {
        return format!("{fo}-server");
    }
    // The chart's default `nameOverride` is `argocd`.
    let name = values
        .get("nameOverride")
        .and_then(Values::text)
        .filter(|s| !s.is_empty())
        .unwrap_or("argocd");
    let name = if values
        .get("nameOverride")
        .is_some_and(|v| v.text() == Some(""))
    {
        ARGO_CD_CHART
    } else {
        name
    };
    if release.contains(name) {
        format!("{release}-server")
    } else {
        format!("{release}-{name}-server")
    }
}

/// Insecure settings in the argo-cd chart's values `root`.
pub(super) fn chart_insecure(
    root: &Values,
    origin: &str,
    namespace: Option<&str>,
    release: &str,
    service: &str,
    context: Option<(Span, String)>,
    out: &mut Vec<Insecure>,
) {
    let mut found: Vec<(Span, String)> = Vec::new();
    let params = root.path(&["configs", "params"]);
    let shown = |text: &str, is_str: bool| {
        if is_str {
            format!("\"{text}\"")
        } else {
            text.to_string()
        }
    };
    if let Some(Values::Scalar { text, span, is_str }) =
        params.and_then(|p| p.get("server.insecure"))
    {
        if is_true(text) {
            found.push((
                *span,
                format!(
                    "`configs.params.\"server.insecure\": {}` in {origin}",
                    shown(text, *is_str)
                ),
            ));
        }
    }
    if let Some(Values::Scalar { text, span, is_str }) =
        params.and_then(|p| p.path(&["server", "insecure"]))
    {
        if is_true(text) {
            found.push((
                *span,
                format!(
                    "`configs.params.server.insecure: {}` in {origin}",
                    shown(text, *is_str)
                ),
            ));
        }
    }
    for a in root
        .path(&["server", "extraArgs"])
        .map_or(&[][..], Values::items)
    {
        if let Values::Scalar { text, span, .. } = a {
            if is_insecure_flag(text) {
                found.push((*span, format!("`server.extraArgs: [{text}]` in {origin}")));
            }
        }
    }
    for e in root.path(&["server", "env"]).map_or(&[][..], Values::items) {
        if e.get("name").and_then(Values::text) == Some("ARGOCD_SERVER_INSECURE") {
            if let Some(Values::Scalar { text, span, .. }) = e.get("value") {
                if is_true(text) {
                    found.push((
                        *span,
                        format!("`server.env` `ARGOCD_SERVER_INSECURE={text}` in {origin}"),
                    ));
                }
            }
        }
    }
    let mut services = vec![service.to_string()];
    let own = chart_service(root, release);
    if !services.contains(&own) {
        services.push(own);
    }
    for (span, what) in found {
        out.push(Insecure {
            span,
            what,
            namespace: namespace.map(str::to_string),
            services: services.clone(),
            chart: Some(root.clone()),
            context: context.clone(),
        });
    }
}

/// The argo-cd values inside a chart's values: the chart itself, or a dependency on it.
pub(super) fn argo_cd_values<'v>(chart: &Node, values: &'v Values) -> Option<&'v Values> {
    if chart.get_str("name") == Some(ARGO_CD_CHART) {
        return Some(values);
    }
    let dep = chart
        .get("dependencies")
        .into_iter()
        .flat_map(Node::items)
        .find(|d| d.get_str("name") == Some(ARGO_CD_CHART))?;
    let key = dep.get_str("alias").unwrap_or(ARGO_CD_CHART);
    values.get(key)
}

/// argo-cd chart values that Applications deploy, and those of in-repository wrapper charts no
/// Application deploys (installed by another tool).
pub(super) fn chart_values(cx: &Context<'_>, service: &str, out: &mut Vec<Insecure>) {
    let repo = cx.repo;
    let model = cx.model.argocd();
    let mut deployed_dirs: HashSet<&str> = HashSet::new();
    for (a, app) in model.apps.iter().enumerate().filter(|(_, a)| a.live) {
        let doc = &repo.docs[app.doc];
        let spec = crate::model::argocd::application_specs(doc)
            .into_iter()
            .next();
        let dest_ns = spec
            .and_then(|s| s.path(&["destination", "namespace"]))
            .and_then(Node::as_str)
            .filter(|s| !s.contains("{{"))
            .map(str::to_string);
        for (s, src) in app.sources.iter().enumerate() {
            if let Location::InRepo(dir) = &src.location {
                if src.kind == SourceKind::Helm {
                    deployed_dirs.insert(dir.as_str());
                    // The argo-cd chart is in the repository: its rendered objects are in the
                    // object index, values are not read again.
                    if cx
                        .model
                        .rendered()
                        .charts_of(a, s)
                        .iter()
                        .any(|c| c == ARGO_CD_CHART)
                    {
                        continue;
                    }
                }
            }
            let Some(values) = &src.values else { continue };
            let root = match (&src.kind, &src.location) {
                (SourceKind::Chart, _)
                    if src.chart.as_ref().map(|c| c.value.as_str()) == Some(ARGO_CD_CHART) =>
                {
                    Some(values)
                }
                (SourceKind::Helm, Location::InRepo(dir)) => {
                    helm::chart_yaml(repo, dir).and_then(|c| argo_cd_values(&c.root, values))
                }
                _ => None,
            };
            let Some(root) = root else { continue };
            let ns = root
                .get("namespaceOverride")
                .and_then(Values::text)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
                .or(dest_ns.clone());
            let label = match &app.appset {
                Some(set) => format!(
                    "deployed by Application `{}` (generated by ApplicationSet `{set}`)",
                    app.name
                ),
                None => format!("deployed by Application `{}`", app.name),
            };
            // `helm.releaseName`, else the Application's name.
            let release = spec
                .map(crate::model::argocd::sources)
                .unwrap_or_default()
                .into_iter()
                .find(|n| n.span == src.span)
                .and_then(|n| n.path(&["helm", "releaseName"]))
                .and_then(Node::as_str)
                .filter(|r| !r.contains("{{"))
                .unwrap_or(&app.name);
            chart_insecure(
                root,
                &format!("the argo-cd chart values of Application `{}`", app.name),
                ns.as_deref(),
                release,
                service,
                Some((app.name_span, label)),
                out,
            );
        }
    }
    // Wrapper charts nothing in the repository deploys: their values files as they are.
    for chart in repo.docs_of(DocKind::HelmChart) {
        if !helm::is_or_wraps_argo_cd(&chart.root) {
            continue;
        }
        let dir = paths::parent(&repo.source(chart.file).path);
        if deployed_dirs.contains(dir) {
            continue;
        }
        let release = chart.root.get_str("name").unwrap_or(ARGO_CD_CHART);
        for f in directory_files(repo, dir, false, None, None)
            .into_iter()
            .map(|id| repo.source(id))
        {
            let name = f.path.rsplit('/').next().unwrap_or("");
            if !is_values_file_name(name) {
                continue;
            }
            let Some(doc) = repo.file_docs(f.id).first() else {
                continue;
            };
            let values = repo.helm_values(doc);
            let Some(root) = argo_cd_values(&chart.root, &values) else {
                continue;
            };
            chart_insecure(
                root,
                &format!("values file `{}` of chart `{release}`", f.path),
                None,
                release,
                service,
                None,
                out,
            );
        }
    }
}

/// kustomize `helmCharts:` inflating the argo-cd chart.
pub(super) fn kustomize_helm_charts(
    repo: &Repository,
    k: &Kustomization,
    service: &str,
    out: &mut Vec<Insecure>,
) {
    for hc in &k.helm_charts {
        if Field::text(&hc.name) != Some(ARGO_CD_CHART) {
            continue;
        }
        let mut values = Values::empty_map();
        let mut origin = "kustomize helmCharts `argo-cd`".to_string();
        if let Some((_, Reference::File(f))) = &hc.values_file {
            if let Some(d) = repo.file_docs(*f).first() {
                values.merge(repo.helm_values(d));
                origin = format!(
                    "values file `{}` of kustomize helmCharts `argo-cd`",
                    repo.source(*f).path
                );
            }
        }
        if let Some(inline) = &hc.values_inline {
            values.merge(Values::from_node(inline, None));
        }
        let ns = Field::text(&hc.namespace).or(Field::text(&k.namespace));
        let release = Field::text(&hc.release_name).unwrap_or(ARGO_CD_CHART);
        chart_insecure(&values, &origin, ns, release, service, None, out);
    }
}
