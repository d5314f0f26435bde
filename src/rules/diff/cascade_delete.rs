//! `diff/cascade-delete`: the change removes an Application whose resources finalizer makes
//! Argo CD delete everything it deployed.

use crate::diagnostic::{Finding, Severity};
use crate::model::diff::{AppStatus, Changes};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct CascadeDelete;

static META: RuleMeta = RuleMeta {
    id: "diff/cascade-delete",
    summary: "the change removes an Application whose resources finalizer deletes what it deploys",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("cascade_delete.md"),
};

impl Rule for CascadeDelete {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_diff(&self, changes: &Changes, cx: &Context<'_>) -> Vec<Finding> {
        let mut out = Vec::new();
        for app in &changes.apps {
            let Some(base) = app.base.as_ref().filter(|b| b.cascade) else {
                continue;
            };
            if app.status != AppStatus::Removed {
                continue;
            }
            let Some(anchor) = super::app_anchor(changes, app, cx) else {
                continue;
            };
            out.push(
                Finding::new(
                    format!(
                        "this change removes Application `{}` (defined at `{}` at base), whose resources finalizer deletes the {} it deploys",
                        app.name,
                        base.defined_at,
                        match app.objects.len() {
                            1 => "object".to_string(),
                            n => format!("{n} objects"),
                        }
                    ),
                    anchor,
                )
                .with_help(
                    "remove the `resources-finalizer.argocd.argoproj.io` finalizer first (a change of its own, synced) to keep what it deployed.",
                ),
            );
        }
        out
    }
}
