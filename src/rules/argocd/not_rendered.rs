//! `argocd/not-rendered`: Argo CD objects that exist only as templates gitops-lint cannot
//! render (a chart that fails offline, or a templated Application outside any chart), so what
//! they deploy is not checked.

use crate::diagnostic::{Finding, Severity};
use crate::model::DocKind;
use crate::rules::{Context, FixAvailability, Rule, RuleMeta};
use crate::yaml::Node;

pub struct NotRendered;

static META: RuleMeta = RuleMeta {
    id: "argocd/not-rendered",
    summary: "an Argo CD object exists only as a template that cannot be rendered offline, so it is not checked",
    default_severity: Severity::Info,
    fix: FixAvailability::None,
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
        for n in &model.not_rendered {
            if out.iter().any(|f| f.span == n.span && f.message == n.message) {
                continue;
            }
            out.push(Finding::new(n.message.clone(), n.span).with_help(
                "The Applications it renders are not linted. Replace the unsupported construct, or check the chart with `helm template`.",
            ));
        }
        // An Application or AppProject written as a Go template outside a chart's `templates/`.
        for kind in [DocKind::Application, DocKind::AppProject] {
            for doc in cx.model.project.docs_of(kind) {
                if let Some(node) = templated_field(&doc.root) {
                    let what = if kind == DocKind::Application { "Application" } else { "AppProject" };
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

/// The first identity field (`metadata`, `spec.project`, source and destination coordinates)
/// holding a `{{ ... }}` template action; Helm values strings are left alone.
fn templated_field(root: &Node) -> Option<&Node> {
    let is_template = |n: &&Node| n.as_str().is_some_and(|s| s.contains("{{") && s.contains("}}"));
    let metadata = root.get("metadata").into_iter().flat_map(|m| {
        ["name", "namespace"].into_iter().filter_map(move |k| m.get(k))
    });
    let spec = root.get("spec");
    let project = spec.and_then(|s| s.get("project"));
    let sources = spec
        .into_iter()
        .flat_map(|s| s.get("source").into_iter().chain(s.get("sources").into_iter().flat_map(Node::items)));
    let coords = sources.flat_map(|s| {
        ["repoURL", "path", "targetRevision", "chart"].into_iter().filter_map(move |k| s.get(k))
    });
    let dest = spec.and_then(|s| s.get("destination")).into_iter().flat_map(|d| {
        ["server", "name", "namespace"].into_iter().filter_map(move |k| d.get(k))
    });
    metadata
        .chain(project)
        .chain(coords)
        .chain(dest)
        .find(is_template)
}
