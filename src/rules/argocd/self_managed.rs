//! `argocd/self-managed`: an Application deploys Argo CD itself.

use crate::diagnostic::{Finding, Severity};
use crate::model::Field;
use crate::model::argocd::deployed::{PerDeployed, chart_names};
use crate::model::argocd::projects::concrete;
use crate::model::argocd::resolve::Location;
use crate::model::k8s::argocd_install::{CHART, component, is_install_url};
use crate::model::kustomize::EntryField;
use crate::model::template::is_unknown;
use crate::rule::rule_options;
use crate::rules::argocd::bounds;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::source::Span;

pub struct SelfManaged;

static META: RuleMeta = RuleMeta {
    id: "argocd/self-managed",
    summary: "an Application deploys Argo CD's own components",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: Options::DECLARED,
    docs: include_str!("self_managed.md"),
};

rule_options! {
    /// The `argocd:` section's key of this rule.
    pub struct Options {
        /// `argocd.self_paths`: folders or files holding Argo CD's own installation.
        pub self_paths: Vec<String>,
    }
}

impl Rule for SelfManaged {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let model = cx.model.argocd();
        let repo = cx.repo;
        let mut items = Vec::new();
        let mut memo = PerDeployed::default();
        for (i, app) in model.apps.iter().enumerate() {
            if !app.live {
                continue;
            }
            for (s, src) in app.sources.iter().enumerate() {
                // (what, where) of the first components found.
                let mut found: Vec<(String, Span)> = Vec::new();
                if let Some(chart) = src.chart.as_ref().and_then(concrete) {
                    if chart == CHART || chart.ends_with("/argo-cd") {
                        found.push((
                            format!("the `{CHART}` chart"),
                            src.chart.as_ref().map_or(src.span, |f| f.span),
                        ));
                    }
                }
                for (name, span) in chart_names(repo, src) {
                    if name == CHART {
                        found.push((format!("the `{CHART}` chart"), span));
                    }
                }
                if let Location::InRepo(dir) = &src.location {
                    if let Some(p) = cx
                        .options::<Options>()
                        .self_paths
                        .iter()
                        .find(|p| bounds::under(dir, p))
                    {
                        found.push((
                            format!("`{p}` (config `argocd.self_paths`)"),
                            bounds::source_span(src),
                        ));
                    }
                }
                let judged = memo.judge(cx.model, i, s, src, |objects, kusts| {
                    let mut found: Vec<(String, Span)> = Vec::new();
                    for d in objects {
                        if let Some((what, span)) = component(d.kind, d.api_version, d.doc) {
                            found.push((d.describe(what), span));
                        }
                    }
                    for k in kusts {
                        for r in k.entries.iter().filter(|e| {
                            matches!(e.field, EntryField::Resources | EntryField::Bases)
                        }) {
                            if !is_unknown(&r.raw) && is_install_url(&r.raw) {
                                found.push(("Argo CD's install manifests".to_string(), r.span));
                            }
                        }
                        for h in &k.helm_charts {
                            if Field::text(&h.name) == Some(CHART) {
                                found.push((format!("the `{CHART}` chart"), h.span));
                            }
                        }
                    }
                    found
                });
                found.extend(judged);
                // A wrapper chart named after its dependency is one chart.
                let mut seen = std::collections::HashSet::new();
                found.retain(|(what, _)| seen.insert(what.clone()));
                let Some((first, _)) = found.first() else {
                    continue;
                };
                let mut f = Finding::new(
                    format!("Application `{}` deploys Argo CD itself ({first})", app.name),
                    bounds::source_span(src),
                )
                .with_help("Install and upgrade Argo CD outside Argo CD (Ansible, kubectl), so the cluster converges without it; turn this rule off if you choose self-management.");
                for (what, span) in found.iter().take(3) {
                    if *span != bounds::source_span(src) {
                        f = f.with_label(*span, format!("{what}, an Argo CD component"));
                    }
                }
                items.push((i, f));
            }
        }
        bounds::merge_by_span(model, items)
    }
}
