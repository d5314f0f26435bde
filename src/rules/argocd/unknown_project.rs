//! `argocd/unknown-project`: an Application names an AppProject that does not exist.

use crate::diagnostic::did_you_mean;
use crate::diagnostic::{Finding, Severity};
use crate::model::argocd::projects::{concrete, projects, template_patched};
use crate::rule::rule_options;
use crate::rules::argocd::bounds;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct UnknownProject;

static META: RuleMeta = RuleMeta {
    id: "argocd/unknown-project",
    summary: "an Application names an AppProject that is neither in the repository nor in `argocd.external_projects`",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: Options::DECLARED,
    docs: include_str!("unknown_project.md"),
};

rule_options! {
    /// The `argocd:` section's key of this rule.
    pub struct Options {
        /// `argocd.external_projects`: AppProjects created outside this repository.
        pub external_projects: Vec<String>,
    }
}

impl Rule for UnknownProject {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let model = cx.model.argocd();
        let projects = projects(cx.model);
        let external = &cx.options::<Options>().external_projects;
        let mut known: Vec<&str> = projects.keys().copied().collect();
        known.extend(external.iter().map(String::as_str));
        let mut items = Vec::new();
        for (i, app) in model.apps.iter().enumerate() {
            if !app.live {
                continue;
            }
            let Some(field) = &app.project else {
                continue;
            };
            if template_patched(cx.repo, app, "project") {
                continue;
            }
            let Some(name) = concrete(field) else {
                continue;
            };
            // An empty project is `default`, which exists unless deleted.
            if name.is_empty()
                || name == "default"
                || projects.contains_key(name)
                || external.iter().any(|e| e == name)
            {
                continue;
            }
            let help = match did_you_mean(name, &known) {
                Some(d) => format!(
                    "{}{} Otherwise add the AppProject (Argo CD refuses an Application whose project does not exist), or list it in `argocd.external_projects` if it is created outside this repository.",
                    d[..1].to_uppercase(),
                    &d[1..]
                ),
                None => "Add the AppProject (Argo CD refuses an Application whose project does not exist), fix the name, or list it in `argocd.external_projects` if it is created outside this repository.".to_string(),
            };
            items.push((
                i,
                Finding::new(
                    format!("project `{name}` is not defined in this repository"),
                    field.span,
                )
                .with_help(help),
            ));
        }
        bounds::merge_by_span(model, items)
    }
}
