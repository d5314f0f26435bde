//! `argocd/destination-out-of-project`: an Application's destination is outside its
//! AppProject's `destinations`.

use crate::diagnostic::{Finding, Severity};
use crate::model::argocd::appproject::{self, glob_match};
use crate::model::argocd::projects::{Clusters, global_projects, project_destinations};
use crate::rules::argocd::bounds;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct DestinationOutOfProject;

static META: RuleMeta = RuleMeta {
    id: "argocd/destination-out-of-project",
    summary: "an Application's destination is not permitted by its AppProject",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("destination_out_of_project.md"),
};

impl Rule for DestinationOutOfProject {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let model = cx.model.argocd();
        let globals = global_projects(cx.model);
        let clusters = Clusters::of(cx.model);
        let mut items = Vec::new();
        for (i, app, name, defs) in bounds::apps_with_projects(cx, &["project", "destination"]) {
            let (Some(dest), Some(dst)) = (&app.destination, clusters.app_dest(app)) else {
                continue;
            };
            let mut denied = true;
            for d in &defs {
                let list = project_destinations(d);
                let mut items: Vec<_> = list.iter().map(|(p, _)| p.clone()).collect();
                for g in globals.iter().filter(|g| g.name() != d.name()) {
                    items.extend(
                        project_destinations(g)
                            .into_iter()
                            .map(|(p, _)| p)
                            .filter(|p| {
                                ![&p.server, &p.name, &p.namespace]
                                    .iter()
                                    .any(|v| appproject::is_deny(v))
                            }),
                    );
                }
                // With `permitOnlyProjectScopedClusters`, a match also needs a project-scoped
                // cluster secret: only a mismatch is certain.
                if appproject::is_destination_matched(&items, &dst) != Some(false) {
                    denied = false;
                }
            }
            if !denied {
                continue;
            }
            // Point at the namespace when some entry accepts the cluster.
            let cluster_ok = defs.iter().any(|d| {
                project_destinations(d).iter().any(|(p, _)| {
                    let m = |pat: &str, v: &Option<String>| match v {
                        Some(v) => !v.is_empty() && glob_match(pat, v, true, None),
                        None => true,
                    };
                    m(&p.server, &dst.server) || m(&p.name, &dst.name)
                })
            });
            let cluster_field = dest.server.as_ref().or(dest.name.as_ref());
            let cluster_text = dst.name.clone().or(dst.server.clone()).unwrap_or_default();
            let (span, message) = match (&dest.namespace, cluster_ok) {
                (Some(ns), true) => (
                    ns.span,
                    format!(
                        "namespace `{}` on cluster `{cluster_text}` is not a destination of project `{name}`",
                        dst.namespace
                    ),
                ),
                _ => (
                    cluster_field.map_or(dest.span, |f| f.span),
                    format!("cluster `{cluster_text}` is not a destination of project `{name}`"),
                ),
            };
            let mut f = Finding::new(message, span).with_help(
                "Deploy to a namespace and cluster the project's `destinations` allow, or move the Application to the project that owns that namespace.",
            );
            for d in defs.iter().take(3) {
                let list = project_destinations(d);
                let mut shown: Vec<String> = list
                    .iter()
                    .take(4)
                    .map(|(p, _)| {
                        let c = if p.name.is_empty() {
                            &p.server
                        } else {
                            &p.name
                        };
                        format!("`{}` on `{c}`", p.namespace)
                    })
                    .collect();
                if list.len() > 4 {
                    shown.push(format!("{} more", list.len() - 4));
                }
                let label = if shown.is_empty() {
                    format!("project `{name}` allows no destination")
                } else {
                    format!("project `{name}` allows {}", shown.join(", "))
                };
                let at = d
                    .root
                    .path(&["spec"])
                    .and_then(|s| s.entry("destinations"))
                    .map_or(d.anchor_span(), |e| e.key.span);
                f = f.with_label(at, label);
            }
            items.push((i, f));
        }
        bounds::merge_by_span(model, items)
    }
}
