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
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use super::render_cache::RenderCache;
use super::render_cache::{self, KeptDoc, Key, Outcome};
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

/// One rendering's outcome: what it gave (nothing when the chart cannot be loaded or
/// rendered, or has no templates), and the limit that stopped it.
type Rendering = (Option<Arc<Outcome>>, Option<helm::RenderError>);

/// What one chart folder gave: its first unread subchart and how many more, its renderings by
/// job, and those to keep for the next run (with a [`RenderCache`]).
struct Group {
    unread: Option<(helm::UnreadSubchart, usize)>,
    renderings: Vec<(usize, Rendering)>,
    keep: Vec<(Key, Arc<Outcome>)>,
}

impl Group {
    /// Every job of the group rendered nothing.
    fn nothing(group: &[usize], unread: Option<(helm::UnreadSubchart, usize)>) -> Self {
        Group {
            unread,
            renderings: group.iter().map(|&j| (j, (None, None))).collect(),
            keep: Vec::new(),
        }
    }
}

/// The manifest texts that several renderings of one chart give, each parsed once: the parse
/// is kept until its last use, which takes it.
struct SharedParses<'r> {
    /// Text → uses left.
    uses: HashMap<&'r str, usize>,
    parsed: HashMap<&'r str, Vec<crate::yaml::YamlDoc>>,
}

impl<'r> SharedParses<'r> {
    fn of(renderings: impl Iterator<Item = &'r helm::Rendered>) -> Self {
        let mut uses: HashMap<&str, usize> = HashMap::new();
        for r in renderings {
            for m in &r.manifests {
                *uses.entry(m.text.as_str()).or_default() += 1;
            }
        }
        uses.retain(|_, n| *n > 1);
        SharedParses {
            uses,
            parsed: HashMap::new(),
        }
    }

    fn parse(&mut self, text: &str, file: crate::source::FileId) -> Vec<crate::yaml::YamlDoc> {
        let Some((&key, left)) = self.uses.get_key_value(text) else {
            return crate::yaml::parse(file, text).docs;
        };
        let left = *left - 1;
        self.uses.insert(key, left);
        if left == 0 {
            return self
                .parsed
                .remove(key)
                .unwrap_or_else(|| crate::yaml::parse(file, text).docs);
        }
        self.parsed
            .entry(key)
            .or_insert_with(|| crate::yaml::parse(file, text).docs)
            .clone()
    }
}

/// Stack of the threads that render (the language server's deepest template and YAML budgets
/// run within a sixteenth of this).
const RENDER_STACK: usize = 64 << 20;

/// `f` applied to each item on the run's threads (as many as rayon's), each with its own
/// `state`, given to `finish` when the thread is done; results in item order.
///
/// Plain threads rather than rayon's: this runs inside a fact's first use, which other rule
/// threads wait for without working. Rayon tasks spawned here would run on this thread alone,
/// and a rayon thread waiting here could take a rule's task that waits for this very fact.
/// For the same reason `f` must not use rayon itself: the pool's threads may all be here or
/// waiting for this fact, and none would take its tasks.
fn on_threads<T: Sync, R: Send, S>(
    items: &[T],
    state: impl Fn() -> S + Sync,
    f: impl Fn(&mut S, &T) -> R + Sync,
    finish: impl Fn(S) + Sync,
) -> Vec<R> {
    let next = AtomicUsize::new(0);
    let work = || {
        let mut s = state();
        let mut done = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(item) = items.get(i) else {
                finish(s);
                return done;
            };
            done.push((i, f(&mut s, item)));
        }
    };
    let threads = rayon::current_num_threads().min(items.len());
    let mut all = std::thread::scope(|scope| {
        let helpers: Vec<_> = (1..threads)
            .filter_map(|_| {
                std::thread::Builder::new()
                    .name("gitops-lint-render".into())
                    .stack_size(RENDER_STACK)
                    .spawn_scoped(scope, work)
                    .ok()
            })
            .collect();
        let mut all = work();
        for h in helpers {
            match h.join() {
                Ok(done) => all.extend(done),
                Err(p) => std::panic::resume_unwind(p),
            }
        }
        all
    });
    all.sort_unstable_by_key(|r| r.0);
    all.into_iter().map(|r| r.1).collect()
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
/// named in `only`, when given). With a `cache`, a rendering whose inputs are those of one
/// the previous run kept is reused, and the compiled templates are kept.
#[must_use]
pub fn build(
    repo: &Repository,
    argo: &ArgoModel,
    budget: &helm::RenderBudget,
    only: Option<&std::collections::BTreeSet<String>>,
    cache: Option<&RenderCache>,
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
    // Each chart folder is read once, and its renderings run in one task, so that its
    // templates are parsed once; a template text another chart rendered on the same thread
    // had is not parsed again. The chart is dropped when its renderings are done.
    let mut groups: Vec<(&str, &Vec<usize>)> = by_dir.iter().map(|(d, j)| (*d, j)).collect();
    groups.sort_unstable_by_key(|g| g.0);
    let layout = cache.map(|_| render_cache::layout(repo));
    let kept = match (cache, layout) {
        (Some(c), Some(l)) => c.take(l),
        _ => HashMap::new(),
    };
    let renderer = Renderer {
        repo,
        jobs: &jobs,
        budget,
        kept: &kept,
        keeping: cache.is_some(),
    };
    let rendered: Vec<Group> = on_threads(
        &groups,
        || {
            let parses = cache.map_or_else(gotmpl::ParseCache::new, RenderCache::parse_cache);
            (parses, false)
        },
        |(parses, used), &(dir, group)| renderer.group(dir, group, parses, used),
        |(parses, used)| {
            if let Some(c) = cache {
                c.give_back(parses, used);
            }
        },
    );
    drop(kept);
    let mut out = RenderedObjects::default();
    // A subchart not read renders nothing: said once per chart, where its entry is.
    let mut results: Vec<(usize, Rendering)> = Vec::with_capacity(jobs.len());
    let mut keep = HashMap::new();
    for ((dir, group), g) in groups.iter().zip(rendered) {
        let Group {
            unread,
            renderings,
            keep: to_keep,
        } = g;
        results.extend(renderings);
        keep.extend(to_keep);
        let Some((first, more)) = unread else {
            continue;
        };
        let and_more = match more {
            0 => String::new(),
            1 => " (and 1 more subchart)".to_string(),
            n => format!(" (and {n} more subcharts)"),
        };
        let users = &jobs[group[0]].users;
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
    if let (Some(c), Some(l)) = (cache, layout) {
        c.keep(l, keep);
    }
    results.sort_by_key(|r| r.0);
    for (job, (_, (outcome, stopped))) in jobs.iter().zip(results) {
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
        let (names, docs) = outcome
            .as_deref()
            .map_or((&[][..], &[][..]), |o| (&o.names[..], &o.docs[..]));
        for &(a, s) in &job.users {
            // The users of a rendering share its trees.
            out.charts.insert((a, s), names.to_vec());
            let start = out.docs.len();
            let app = &argo.apps[a];
            let prefix = format!("{}/", job.dir);
            for d in docs {
                let template = d.template.strip_prefix(&prefix).unwrap_or(&d.template);
                out.docs.push(Document {
                    file: d.file.unwrap_or(job.anchor.file),
                    index: 0,
                    span: d.start,
                    root: d.root.clone(),
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

/// Renders the jobs of one chart folder at a time.
struct Renderer<'r, 'm> {
    repo: &'r Repository,
    jobs: &'r [Job<'m>],
    budget: &'r helm::RenderBudget,
    /// The renderings the previous run kept, by [`render_cache::rendering_key`].
    kept: &'r HashMap<Key, Arc<Outcome>>,
    /// Whether to key the renderings, to keep them for the next run.
    keeping: bool,
}

impl Renderer<'_, '_> {
    /// The renderings of the jobs `group` of the chart in `dir`, with `parses` for its
    /// templates (`used` is set when it parsed or reused one).
    fn group(
        &self,
        dir: &str,
        group: &[usize],
        parses: &mut gotmpl::ParseCache,
        used: &mut bool,
    ) -> Group {
        let Ok(chart) = helm::load(self.repo, dir) else {
            return Group::nothing(group, None);
        };
        let unread = chart
            .first_unread()
            .map(|first| (first.clone(), count_unread(&chart) - 1));
        // A chart without templates renders nothing (and names no chart it renders).
        if !has_templates(&chart) {
            return Group::nothing(group, unread);
        }
        let chart_key = self.keeping.then(|| render_cache::chart_key(&chart));
        // Each job's key, and the rendering kept for it that this run's budget allows.
        let mut renderings: Vec<(usize, Rendering)> = Vec::with_capacity(group.len());
        let mut keys: HashMap<usize, Key> = HashMap::new();
        let mut keep = Vec::new();
        let mut to_render = Vec::new();
        for &j in group {
            let job = &self.jobs[j];
            let key = chart_key
                .map(|c| render_cache::rendering_key(c, job.vals, job.release, job.anchor));
            let reused = key
                .and_then(|k| self.kept.get(&k))
                .filter(|o| self.budget.reuse(&o.used));
            match (key, reused) {
                (Some(k), Some(o)) => {
                    keep.push((k, o.clone()));
                    renderings.push((j, (Some(o.clone()), None)));
                }
                _ => {
                    if let Some(k) = key {
                        keys.insert(j, k);
                    }
                    to_render.push(j);
                }
            }
        }
        if to_render.is_empty() {
            return Group {
                unread,
                renderings,
                keep,
            };
        }
        *used = true;
        let mut names = Vec::new();
        chart_names(&chart, &mut names);
        let mut parsed = None;
        let outcomes: Vec<(usize, Result<helm::Rendered, helm::RenderError>)> = to_render
            .iter()
            .map(|&j| {
                let job = &self.jobs[j];
                let r = helm::render_cached(
                    &chart,
                    job.vals,
                    job.release,
                    &mut parsed,
                    self.budget,
                    Some(&mut *parses),
                );
                (j, r)
            })
            .collect();
        // A manifest text several renderings give (a template that reads no value their
        // releases set differently) is parsed once.
        let mut shared = SharedParses::of(outcomes.iter().filter_map(|(_, r)| r.as_ref().ok()));
        for (j, r) in &outcomes {
            let job = &self.jobs[*j];
            // A chart that cannot be rendered deploys nothing the rules can see;
            // app-of-apps charts report it (`argocd/not-rendered`).
            let rendering = match r {
                Ok(r) => {
                    let docs =
                        helm::documents_with(r, &self.repo.sources, job.anchor, &mut |text| {
                            shared.parse(text, job.anchor.file)
                        })
                        .into_iter()
                        .filter(|d| {
                            read_by_rules(&d.root, &job.release.namespace) && {
                                let kind = classify(&d.template, &d.root);
                                kind == DocKind::K8sObject && !crate::model::is_argocd_kind(kind)
                            }
                        })
                        .map(|d| KeptDoc {
                            root: Arc::new(d.root),
                            template: d.template,
                            line: d.line,
                            file: d.file,
                            start: d.start,
                            images: d.images,
                        })
                        .collect();
                    let outcome = Arc::new(Outcome {
                        names: names.clone(),
                        docs,
                        used: r.used,
                    });
                    if let Some(&k) = keys.get(j) {
                        keep.push((k, outcome.clone()));
                    }
                    (Some(outcome), None)
                }
                Err(e) if e.over_budget => (None, Some(e.clone())),
                Err(_) => (None, None),
            };
            renderings.push((*j, rendering));
        }
        Group {
            unread,
            renderings,
            keep,
        }
    }
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
