//! The Kubernetes objects that live Applications deploy from this repository's Helm charts,
//! rendered in-process ([`crate::model::helm`]) with each source's effective values and release.
//!
//! Built on first use ([`crate::model::Model::rendered`]), after the reachability model, only when a
//! rule asks: every distinct (chart, values, release) is rendered once, in parallel. Argo CD
//! kinds are not kept here (the resolver renders app-of-apps charts itself). A rendered object
//! is a [`Document`] whose `file` is the template that wrote it; its nodes point at the values
//! node that printed them, else at the template text.

use std::collections::HashMap;
use std::ops::Range;

use rayon::prelude::*;

use crate::model::argocd::resolve::{ArgoModel, Location, SourceKind};
use crate::model::helm::{self, Chart, RenderedImage};
use crate::model::{DocKind, Document, Repository, classify};

/// Rendered objects of every live in-repository Helm source.
#[derive(Debug, Default)]
pub struct RenderedObjects {
    /// The objects, grouped by source.
    pub docs: Vec<Document>,
    /// Per document (same index): which Application deploys it and how.
    pub meta: Vec<RenderedMeta>,
    /// `(app, source)` → its documents' range in `docs`.
    by_source: HashMap<(usize, usize), Range<usize>>,
    /// `(app, source)` → the charts its rendering read (the chart and its subcharts), when it
    /// could be rendered.
    charts: HashMap<(usize, usize), Vec<String>>,
    /// Charts a limit stopped (the template's, or the run's rendering budget), once per chart
    /// folder and place: `argocd/not-rendered` reports them. Other failures leave a chart
    /// unseen, as Argo CD objects the resolver could not render are reported there.
    pub not_rendered: Vec<helm::NotRendered>,
}

/// Where a rendered object comes from.
#[derive(Debug, Clone)]
pub struct RenderedMeta {
    /// Index in `ArgoModel::apps`.
    pub app: usize,
    /// Index in the Application's sources.
    pub source: usize,
    /// `metadata.namespace` when rendered, else the release's (the destination namespace).
    pub namespace: Option<String>,
    /// The release's namespace (where Argo CD applies objects that name none).
    pub release_namespace: String,
    /// The template and line that wrote it, relative to the chart: `templates/x.yaml:12`.
    pub template: String,
    /// "rendered from `templates/x.yaml:12` by Application `a`".
    pub label: String,
    /// The container images of a workload.
    pub images: Vec<RenderedImage>,
}

impl RenderedObjects {
    /// The objects one source of one Application renders.
    #[must_use]
    pub fn of_source(&self, app: usize, source: usize) -> &[Document] {
        self.by_source
            .get(&(app, source))
            .map_or(&[][..], |r| &self.docs[r.clone()])
    }

    /// With their metadata.
    pub fn with_meta(
        &self,
        app: usize,
        source: usize,
    ) -> impl Iterator<Item = (&Document, &RenderedMeta)> {
        let r = self.by_source.get(&(app, source)).cloned().unwrap_or(0..0);
        self.docs[r.clone()].iter().zip(&self.meta[r])
    }

    /// The names of the charts a source's rendering read.
    #[must_use]
    pub fn charts_of(&self, app: usize, source: usize) -> &[String] {
        self.charts.get(&(app, source)).map_or(&[], Vec::as_slice)
    }
}

/// One distinct rendering.
struct Job<'m> {
    dir: &'m str,
    release: &'m helm::Release,
    vals: &'m crate::model::helm::values::Values,
    anchor: crate::source::Span,
    /// `(app, source)` pairs that share it.
    users: Vec<(usize, usize)>,
}

fn chart_names(c: &Chart, out: &mut Vec<String>) {
    out.push(c.name.clone());
    for s in &c.subcharts {
        chart_names(s, out);
    }
}

fn count_unread(c: &Chart) -> usize {
    c.unread.len() + c.subcharts.iter().map(count_unread).sum::<usize>()
}

fn has_templates(c: &Chart) -> bool {
    !c.templates.is_empty() || !c.crds.is_empty() || c.subcharts.iter().any(has_templates)
}

fn same_release(a: &helm::Release, b: &helm::Release) -> bool {
    a.name == b.name
        && a.namespace == b.namespace
        && a.kube_version == b.kube_version
        && a.api_versions == b.api_versions
}

/// Renders every live Application's in-repository Helm sources (those of the Applications
/// named in `only`, when given).
#[must_use]
pub fn build(
    repo: &Repository,
    argo: &ArgoModel,
    budget: &helm::RenderBudget,
    only: Option<&std::collections::BTreeSet<String>>,
) -> RenderedObjects {
    // Distinct renderings: same chart folder, release and effective values.
    let mut jobs: Vec<Job<'_>> = Vec::new();
    let mut by_dir: HashMap<&str, Vec<usize>> = HashMap::new();
    let wanted = |name: &str| only.is_none_or(|o| o.contains(name));
    for (a, app) in argo
        .apps
        .iter()
        .enumerate()
        .filter(|(_, a)| a.live && wanted(&a.name))
    {
        for (s, src) in app.sources.iter().enumerate() {
            let (SourceKind::Helm, Location::InRepo(dir), Some(vals), Some(release)) =
                (src.kind, &src.location, &src.values, &src.release)
            else {
                continue;
            };
            let same = by_dir.entry(dir.as_str()).or_default();
            if let Some(&j) = same
                .iter()
                .find(|&&j| same_release(jobs[j].release, release) && jobs[j].vals == vals)
            {
                jobs[j].users.push((a, s));
                continue;
            }
            same.push(jobs.len());
            jobs.push(Job {
                dir,
                release,
                vals,
                anchor: src.path.as_ref().map_or(src.span, |p| p.span),
                users: vec![(a, s)],
            });
        }
    }
    // Each chart folder is read once.
    let dirs: Vec<&str> = by_dir.keys().copied().collect();
    let charts: HashMap<&str, Chart> = dirs
        .par_iter()
        .filter_map(|d| Some((*d, helm::load(repo, d).ok()?)))
        .collect();
    // The renderings of one chart folder run in one task, so its templates are parsed once.
    let groups: Vec<&Vec<usize>> = by_dir.values().collect();
    let (jobs_ref, charts_ref) = (&jobs, &charts);
    type Result = (
        usize,
        Vec<String>,
        Vec<helm::RenderedDoc>,
        Option<helm::RenderError>,
    );
    let mut results: Vec<Result> = groups
        .par_iter()
        .flat_map_iter(|group| {
            let chart = charts_ref.get(jobs_ref[group[0]].dir);
            let mut parsed = None;
            group.iter().map(move |&j| {
                let job = &jobs_ref[j];
                let Some(chart) = chart else {
                    return (j, Vec::new(), Vec::new(), None);
                };
                // A chart without templates renders nothing (and names no chart it renders).
                if !has_templates(chart) {
                    return (j, Vec::new(), Vec::new(), None);
                }
                let mut names = Vec::new();
                chart_names(chart, &mut names);
                // A chart that cannot be rendered deploys nothing the rules can see;
                // app-of-apps charts report it (`argocd/not-rendered`).
                match helm::render_with(chart, job.vals, job.release, &mut parsed, budget) {
                    Ok(r) => {
                        let docs = helm::documents(&r, &repo.sources, job.anchor)
                            .into_iter()
                            .filter(|d| read_by_rules(&d.root, &job.release.namespace))
                            .collect();
                        (j, names, docs, None)
                    }
                    Err(e) if e.over_budget => (j, Vec::new(), Vec::new(), Some(e)),
                    Err(_) => (j, Vec::new(), Vec::new(), None),
                }
            })
        })
        .collect();
    results.sort_by_key(|r| r.0);
    let mut out = RenderedObjects::default();
    // A subchart not read renders nothing: said once per chart, where its entry is.
    let mut dirs: Vec<&&str> = charts.keys().collect();
    dirs.sort();
    for dir in dirs {
        let chart = &charts[*dir];
        let Some(first) = chart.first_unread() else {
            continue;
        };
        let more = count_unread(chart) - 1;
        let and_more = match more {
            0 => String::new(),
            1 => " (and 1 more subchart)".to_string(),
            n => format!(" (and {n} more subcharts)"),
        };
        let users = &jobs[by_dir[*dir][0]].users;
        out.not_rendered.push(helm::NotRendered {
            manager_doc: argo.apps[users[0].0].doc,
            chart_dir: (*dir).to_string(),
            standalone: false,
            span: first.at,
            message: format!(
                "the subchart `{}` is not read, so what it deploys is not checked: {}{and_more}",
                first.path, first.why
            ),
        });
    }
    for (job, (_, names, docs, stopped)) in jobs.iter().zip(results) {
        if let Some(e) = stopped {
            let known = out
                .not_rendered
                .iter()
                .any(|n| n.chart_dir == job.dir && n.span == job.anchor);
            if !known {
                out.not_rendered.push(helm::NotRendered {
                    manager_doc: argo.apps[job.users[0].0].doc,
                    chart_dir: job.dir.to_string(),
                    standalone: false,
                    span: job.anchor,
                    message: format!(
                        "the chart `{}` is not rendered, so what it deploys is not checked: {e}",
                        job.dir
                    ),
                });
            }
        }
        let mut kept: Vec<helm::RenderedDoc> = docs
            .into_iter()
            .filter(|d| {
                let kind = classify(&d.template, &d.root);
                kind == DocKind::K8sObject && !crate::model::is_argocd_kind(kind)
            })
            .collect();
        for (u, &(a, s)) in job.users.iter().enumerate() {
            // The last user takes the trees; the others copy them.
            let last = u + 1 == job.users.len();
            out.charts.insert((a, s), names.clone());
            let start = out.docs.len();
            let app = &argo.apps[a];
            let prefix = format!("{}/", job.dir);
            for d in &mut kept {
                let template = d.template.strip_prefix(&prefix).unwrap_or(&d.template);
                let root = if last {
                    std::mem::replace(
                        &mut d.root,
                        crate::yaml::Node::new(job.anchor, crate::yaml::Value::Seq(Box::default())),
                    )
                } else {
                    d.root.clone()
                };
                out.docs.push(Document {
                    file: d.file.unwrap_or(job.anchor.file),
                    index: 0,
                    span: d.start,
                    root: std::sync::Arc::new(root),
                    kind: DocKind::K8sObject,
                    kept: None,
                    rendered: true,
                });
                let written = out.docs[out.docs.len() - 1]
                    .root
                    .path(&["metadata", "namespace"])
                    .and_then(crate::yaml::Node::as_str)
                    .filter(|n| !n.is_empty());
                out.meta.push(RenderedMeta {
                    app: a,
                    source: s,
                    namespace: Some(written.unwrap_or(&job.release.namespace).to_string()),
                    release_namespace: job.release.namespace.clone(),
                    template: format!("{template}:{}", d.line),
                    label: format!(
                        "rendered from `{template}:{}` by Application `{}`",
                        d.line, app.name
                    ),
                    images: d
                        .images
                        .iter()
                        .map(|i| {
                            let mut i = i.clone();
                            i.label = match repo.sources.templates().get(
                                (i.written.file.0 as usize)
                                    .wrapping_sub(repo.sources.files().len()),
                            ) {
                                Some(t) => format!(
                                    "rendered from `{}:{}` by Application `{}`",
                                    t.path.strip_prefix(&prefix).unwrap_or(&t.path),
                                    t.line_col(i.written.start as usize).line,
                                    app.name
                                ),
                                None => format!(
                                    "rendered from `{template}:{}` by Application `{}`",
                                    d.line, app.name
                                ),
                            };
                            i
                        })
                        .collect(),
                });
            }
            out.by_source.insert((a, s), start..out.docs.len());
        }
    }
    out
}

/// Whether a rule reads a rendered object of this kind: workloads (images, argocd-server),
/// ConfigMaps and Secrets (Argo CD's configuration, tunnels, clusters), Services, routes and
/// gateways (edge TLS), CRDs, Namespaces, `ArgoCD` instances and OLM Subscriptions, and what
/// `argocd/infra-boundary` reads to tell infrastructure (admission webhooks and policies,
/// APIServices, OLM catalogs, and the ClusterRoles and ClusterRoleBindings that make a
/// Deployment an operator); or any object placed in another namespace than the release's. The
/// others (Roles, ServiceAccounts, PodDisruptionBudgets...) are not kept.
fn read_by_rules(root: &crate::yaml::Node, release_namespace: &str) -> bool {
    const KINDS: &[&str] = &[
        "Deployment",
        "StatefulSet",
        "DaemonSet",
        "ReplicaSet",
        "Pod",
        "Job",
        "CronJob",
        "ConfigMap",
        "Secret",
        "Service",
        "Ingress",
        "Route",
        "HTTPRoute",
        "GRPCRoute",
        "TLSRoute",
        "TCPRoute",
        "Gateway",
        "GatewayClass",
        "ReferenceGrant",
        "VirtualService",
        "TunnelBinding",
        "CustomResourceDefinition",
        "Namespace",
        "ArgoCD",
        "Subscription",
        "ClusterRole",
        "ClusterRoleBinding",
        "MutatingWebhookConfiguration",
        "ValidatingWebhookConfiguration",
        "ValidatingAdmissionPolicy",
        "APIService",
        "CatalogSource",
    ];
    root.get_str("kind").is_some_and(|k| KINDS.contains(&k))
        || root
            .path(&["metadata", "namespace"])
            .and_then(crate::yaml::Node::as_str)
            .is_some_and(|n| !n.is_empty() && n != release_namespace)
}
