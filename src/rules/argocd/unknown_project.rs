//! `argocd/unknown-project`: an Application names an AppProject that does not exist.

use crate::diagnostic::did_you_mean;
use crate::diagnostic::{Finding, Severity};
use crate::model::argocd::projects::{concrete, projects, template_patched};
use crate::model::k8s::argocd_install::install_site;
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
        // Where the repository installs Argo CD: its AppProjects are then this repository's to
        // define (an error); without it, the project may be created with Argo CD, elsewhere (a
        // warning).
        let install = install_site(cx.model);
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
            let guess = did_you_mean(name, &known)
                .map(|d| format!("{}{} ", d[..1].to_uppercase(), &d[1..]));
            let mut f = Finding::new(
                format!("project `{name}` is not defined in this repository"),
                field.span,
            );
            f = match &install {
                Some((what, at)) => f
                    .with_label(*at, format!("Argo CD is installed here ({what}), so this repository defines its AppProjects"))
                    .with_help(format!(
                        "{}dd the AppProject (Argo CD refuses an Application whose project does not exist), or list it in `argocd.external_projects` if it is created outside this repository.",
                        guess.as_deref().map_or("A".to_string(), |g| format!("{g}Otherwise a"))
                    )),
                None => {
                    f.severity = Some(Severity::Warning);
                    f.with_help(format!(
                        "{}This repository does not install Argo CD, so the project may be created with it elsewhere: list it in `argocd.external_projects`, or add the AppProject (Argo CD refuses an Application whose project does not exist).",
                        guess.unwrap_or_default()
                    ))
                }
            };
            items.push((i, f));
        }
        bounds::merge_by_span(model, items)
    }
}
