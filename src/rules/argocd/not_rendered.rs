//! `argocd/not-rendered`: a chart of this repository writes Argo CD objects that cannot be
//! rendered, so what it deploys is not checked.

use crate::diagnostic::{Finding, Severity};
use crate::rules::{Context, FixAvailability, Rule, RuleMeta};

pub struct NotRendered;

static META: RuleMeta = RuleMeta {
    id: "argocd/not-rendered",
    summary: "a chart writes Argo CD objects that cannot be rendered offline, so they are not checked",
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
        out
    }
}
