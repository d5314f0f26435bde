//! `argocd/missing-source`: a path, value file, file parameter or kustomize resource that
//! should be in this repository is not.

use std::collections::BTreeMap;

use crate::diagnostic::{Finding, Severity};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::source::Span;

pub struct MissingSource;

static META: RuleMeta = RuleMeta {
    id: "argocd/missing-source",
    summary: "an Application references a path, value file or kustomize resource missing from this repository",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("missing_source.md"),
};

impl Rule for MissingSource {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let model = cx.model.argocd();
        let mut by_node: BTreeMap<(Span, &str), Vec<usize>> = BTreeMap::new();
        for m in &model.missing {
            let apps = by_node.entry((m.span, m.message.as_str())).or_default();
            if !apps.contains(&m.app) {
                apps.push(m.app);
            }
        }
        let mut out = Vec::new();
        for ((span, message), apps) in by_node {
            let help = if message.starts_with("value file") {
                "Fix the path or add the file; if the file is optional, set `helm.ignoreMissingValueFiles: true`."
            } else if message.contains("closes a cycle") {
                "Remove the entry that leads back; kustomize cannot build a kustomization that includes itself."
            } else if message.contains("names `$") {
                "Add `ref: <name>` to the source that holds the value files, or fix the `$<name>` prefix."
            } else {
                "Fix the path or add what it points at; Argo CD cannot render this Application otherwise."
            };
            let mut f = Finding::new(message, span).with_help(help);
            for &a in apps.iter().take(5) {
                let app = &model.apps[a];
                // An Application's own file already shows which Application it is.
                if let Some(rendered) = &app.rendered_from {
                    f = f.with_label(
                        app.name_span,
                        format!("Application `{}` {rendered}", app.name),
                    );
                } else if app.name_span.file != span.file || apps.len() > 1 {
                    f = f.with_label(
                        app.name_span,
                        format!("referenced by Application `{}`", app.name),
                    );
                }
            }
            out.push(f);
        }
        out
    }
}
