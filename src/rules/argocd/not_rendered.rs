//! `argocd/not-rendered`: Argo CD objects that exist only as templates gitops-lint cannot
//! render (a chart that fails offline, or a templated Application outside any chart), and
//! sources that run a Config Management Plugin, so what they deploy is not checked.

use crate::diagnostic::{Finding, Severity};
use crate::model::DocKind;
use crate::model::argocd::templated_field;
use crate::model::helm::NotRendered as ChartNotRendered;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct NotRendered;

static META: RuleMeta = RuleMeta {
    id: "argocd/not-rendered",
    summary: "an Argo CD object exists only as a template that cannot be rendered offline, so it is not checked",
    default_severity: Severity::Info,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("not_rendered.md"),
};

impl Rule for NotRendered {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let model = cx.model.argocd();
        let mut out: Vec<Finding> = Vec::new();
        // Charts a limit stopped while rendering the objects Applications deploy, unless the
        // resolver reported the chart already (an app-of-apps chart fails there first).
        let rendered = &cx.model.rendered().not_rendered;
        let stopped: Vec<&ChartNotRendered> = rendered
            .iter()
            .filter(|n| {
                !model
                    .not_rendered
                    .iter()
                    .any(|r| r.chart_dir == n.chart_dir)
            })
            .collect();
        let helps = [
            "The Applications it renders are not linted. Replace the unsupported construct, or check the chart with `helm template`.",
            "The objects it deploys are not linted: render less from this chart, or check it with `helm template`.",
        ];
        let all = model.not_rendered.iter().map(|n| (n, helps[0]));
        for (n, help) in all.chain(stopped.into_iter().map(|n| (n, helps[1]))) {
            if out
                .iter()
                .any(|f| f.span == n.span && f.message == n.message)
            {
                continue;
            }
            out.push(Finding::new(n.message.clone(), n.span).with_help(help));
        }
        // Sources that run a Config Management Plugin: one finding per written `plugin` key,
        // however many Applications an ApplicationSet generates from it.
        let mut plugin_spans = std::collections::HashSet::new();
        for p in &model.plugin_sources {
            if !model.apps[p.app].live || !plugin_spans.insert(p.span) {
                continue;
            }
            let (message, help) = match &p.name {
                Some(name) => (
                    format!("source runs the Config Management Plugin `{name}`: what it deploys is not checked"),
                    format!("Map the plugin to the tool it wraps in the configuration (`argocd: {{plugins: {{{name}: kustomize}}}}`) so its source is rendered."),
                ),
                None => (
                    "source runs a Config Management Plugin that Argo CD discovers from its files: what it deploys is not checked".to_string(),
                    "Name the plugin (`plugin.name`) and map it to the tool it wraps in the configuration (`argocd.plugins`) so its source is rendered.".to_string(),
                ),
            };
            out.push(Finding::new(message, p.span).with_help(help));
        }
        // kustomize `helmCharts` that live sources build and this run does not inflate.
        for c in &model.charts_not_inflated {
            out.push(
                Finding::new(format!("{}: what it deploys is not checked", c.message), c.span)
                    .with_help("Vendor the chart into the repository (kustomize reads `<chartHome>/<name>`, `charts/` by default) so it is rendered, or check it with `kustomize build --enable-helm`."),
            );
        }
        // An Application or AppProject written as a Go template outside a chart's `templates/`.
        for kind in [DocKind::Application, DocKind::AppProject] {
            for doc in cx.model.repo.docs_of(kind) {
                if let Some(node) = templated_field(&doc.root) {
                    let what = if kind == DocKind::Application {
                        "Application"
                    } else {
                        "AppProject"
                    };
                    out.push(
                        Finding::new(
                            format!("this {what} is a template outside a Helm chart's `templates/`: it is checked as written, not as rendered"),
                            node.span,
                        )
                        .with_help("Move it into a chart's `templates/` folder so it is rendered with its values, or write the value out."),
                    );
                }
            }
        }
        out
    }
}
