//! `argocd/source-out-of-project`: a source repository (or the Application's namespace) is not
//! permitted by the AppProject.

use std::collections::HashMap;

use crate::diagnostic::{Finding, Severity};
use crate::model::Document;
use crate::model::argocd::appproject;
use crate::model::argocd::projects::{concrete, controller_namespaces, global_projects};
use crate::rules::argocd::bounds;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::yaml::Node;

pub struct SourceOutOfProject;

static META: RuleMeta = RuleMeta {
    id: "argocd/source-out-of-project",
    summary: "an Application's source `repoURL` (or its own namespace) is not permitted by its AppProject",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("source_out_of_project.md"),
};

fn strings(node: Option<&Node>) -> Vec<String> {
    node.into_iter()
        .flat_map(Node::items)
        .filter_map(|n| n.scalar_text().map(str::to_string))
        .collect()
}

impl Rule for SourceOutOfProject {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let model = cx.model.argocd();
        let globals = global_projects(cx.model);
        let controller_ns = controller_namespaces(cx.repo);
        let mut items = Vec::new();
        // Each project's repositories (with the global projects'), normalised once.
        let mut repos_of: HashMap<*const Document, appproject::SourceRepos> = HashMap::new();
        for (i, app, name, defs) in bounds::apps_with_projects(cx, &["project", "source"]) {
            let label_at = |key: &str| -> Vec<_> {
                defs.iter()
                    .take(3)
                    .map(|d| {
                        d.root
                            .get("spec")
                            .and_then(|s| s.entry(key))
                            .map_or(d.anchor_span(), |e| e.key.span)
                    })
                    .collect()
            };
            for src in &app.sources {
                let Some(url_field) = &src.repo_url_field else {
                    continue;
                };
                // An empty URL is filled in later (kustomize patches).
                let Some(url) = concrete(url_field).filter(|u| !u.is_empty()) else {
                    continue;
                };
                let permitted = defs.iter().any(|d| {
                    repos_of
                        .entry(std::ptr::from_ref(*d))
                        .or_insert_with(|| {
                            let mut repos = strings(d.root.path(&["spec", "sourceRepos"]));
                            for g in globals.iter().filter(|g| g.name() != d.name()) {
                                repos.extend(
                                    strings(g.root.path(&["spec", "sourceRepos"]))
                                        .into_iter()
                                        .filter(|r| !appproject::is_deny(r)),
                                );
                            }
                            appproject::SourceRepos::new(&repos)
                        })
                        .permits(url)
                });
                if permitted {
                    continue;
                }
                let mut f = Finding::new(
                    format!("repository `{url}` is not in the `sourceRepos` of project `{name}`"),
                    url_field.span,
                )
                .with_help("Add the repository to the project's `sourceRepos`, or deploy from a repository the project allows.");
                for at in label_at("sourceRepos") {
                    f = f.with_label(at, format!("repositories project `{name}` allows"));
                }
                items.push((i, f));
            }
            // Applications outside the control plane's namespace need `sourceNamespaces`.
            let doc = &cx.repo.docs[app.doc];
            let Some(ns_node) = doc
                .root
                .path(&["metadata", "namespace"])
                .filter(|_| !controller_ns.is_empty())
            else {
                continue;
            };
            let Some(ns) = ns_node.as_str() else {
                continue;
            };
            let permitted = controller_ns.iter().any(|c| {
                defs.iter().any(|d| {
                    let allowed = strings(d.root.path(&["spec", "sourceNamespaces"]));
                    appproject::is_app_namespace_permitted(&allowed, ns, c) != Some(false)
                })
            });
            // Argo CD reconciles Applications of other namespaces only where its
            // `application.namespaces` parameter lists them.
            if let Some(watched) = &cx.model.argocd_params().application_namespaces {
                let watches = controller_ns.iter().any(|c| {
                    appproject::is_app_namespace_permitted(&watched.items, ns, c) != Some(false)
                });
                if !watches {
                    let shown = if watched.items.is_empty() {
                        "unset".to_string()
                    } else {
                        format!("`{}`", watched.items.join(","))
                    };
                    items.push((
                        i,
                        Finding::new(
                            format!("the Application lives in namespace `{ns}`, which Argo CD does not watch (`application.namespaces` is {shown})"),
                            ns_node.span,
                        )
                        .with_label(watched.span, format!("`application.namespaces` in {}", watched.origin))
                        .with_help("Add the namespace to `application.namespaces` in `argocd-cmd-params-cm` and restart the controllers, or create the Application in Argo CD's namespace."),
                    ));
                }
            }
            if !permitted {
                let mut f = Finding::new(
                    format!("the Application lives in namespace `{ns}`, which is not in the `sourceNamespaces` of project `{name}`"),
                    ns_node.span,
                )
                .with_help("Create the Application in Argo CD's namespace, or add its namespace to the project's `sourceNamespaces`.");
                for at in label_at("sourceNamespaces") {
                    f = f.with_label(at, format!("namespaces project `{name}` accepts"));
                }
                items.push((i, f));
            }
        }
        bounds::merge_by_span(model, items)
    }
}
