//! App-of-apps: the charts Applications install rendered in-process (see `model::helm`), the
//! Argo CD objects they write, and the Applications rendered ApplicationSets generate.

use std::borrow::Cow;

use rustc_hash::FxHashSet;

use super::{AppInput, PendingRender, Resolver, Unexpandable};
use crate::model::argocd::appset;
use crate::model::helm::argocd_apps;
use crate::model::helm::values::Values;
use crate::model::paths::{self, join};
use crate::model::template::{self};
use crate::model::{DocKind, helm};
use crate::source::Span;
use crate::yaml::Node;

impl<'p> Resolver<'p> {
    // ---- Helm: app-of-apps charts rendered in-process (see `model::helm`).

    pub(super) fn queue_render(
        &mut self,
        app: usize,
        dir: &str,
        argocd_apps: Option<argocd_apps::Form>,
        vals: &Values,
        release: helm::Release,
        anchor: Span,
    ) {
        self.pending_renders.push(PendingRender {
            app,
            dir: dir.to_string(),
            argocd_apps,
            values: vals.clone(),
            release,
            anchor,
        });
    }

    /// The release a Helm source installs: `helm.releaseName` else the Application's name, in
    /// the destination namespace, with `helm.kubeVersion` and `helm.apiVersions`.
    pub(super) fn release_of(&self, app: usize, src: &Node) -> helm::Release {
        let a = &self.model.apps[app];
        let helm_node = src.get("helm");
        let name = helm_node
            .and_then(|h| h.get_str("releaseName"))
            .unwrap_or(&a.name);
        helm::Release::new(name, self.app_namespace(app)).with_capabilities(
            helm_node.and_then(|h| h.get_str("kubeVersion")),
            helm_node.and_then(|h| h.get("apiVersions")),
        )
    }

    /// Renders the queued Helm sources and the charts no Application installs; the Argo CD
    /// objects they write join the model, managed by the Application (or chart) that renders
    /// them, and rendered Applications are resolved in turn.
    pub(super) fn render_charts(&mut self) {
        const MAX_RENDERS: usize = 1000;
        let repo = self.repo;
        let mut rendered_dirs: FxHashSet<String> = FxHashSet::default();
        let mut standalone_kustomizations: FxHashSet<String> = FxHashSet::default();
        // (manager document, chart folder): rendered once. An Application rendered from a chart
        // has its manager's document, so a chart that renders the Application installing it (a
        // self-managed bootstrap) is not rendered again and again.
        let mut done: FxHashSet<(usize, String)> = FxHashSet::default();
        let mut renders = 0;
        loop {
            let pending = std::mem::take(&mut self.pending_renders);
            if pending.is_empty() {
                // Charts of this repository that no Application renders: installed by hand
                // (`argocd app create --path apps`), they are roots themselves.
                let standalone: Vec<(usize, String, Span)> = repo
                    .docs_of(DocKind::HelmChart)
                    .filter_map(|d| {
                        let path = &repo.source(d.file).path;
                        let dir = paths::parent(path).to_string();
                        // A subchart sits in `charts/` of a folder with its own Chart.yaml.
                        let above = paths::parent(paths::parent(&dir));
                        let is_sub = paths::parent(&dir).rsplit('/').next() == Some("charts")
                            && join(above, "Chart.yaml")
                                .is_some_and(|p| repo.file_by_path(&p).is_some());
                        let idx = repo.file_doc_range(d.file).start;
                        let anchor = d.root.get("name").map_or(d.span, |n| n.span);
                        (!is_sub && !rendered_dirs.contains(&dir)).then_some((idx, dir, anchor))
                    })
                    .collect();
                let mut inputs = Vec::new();
                for (doc, dir, anchor) in standalone {
                    rendered_dirs.insert(dir.clone());
                    done.insert((doc, dir.clone()));
                    let chart = dir.rsplit('/').next().unwrap_or(&dir).to_string();
                    let manager = format!("chart `{chart}`");
                    let release = helm::Release::new(&chart, "default");
                    let target = Target::Chart(&dir, None);
                    inputs.extend(self.render_one(doc, &manager, target, &release, anchor));
                }
                // Kustomizations installing the `argocd-apps` chart that no Application
                // renders (applied by hand or by a bootstrap script) are roots too.
                let graph = self.graph;
                for k in graph.nodes() {
                    let Some(doc) = k.doc else {
                        continue;
                    };
                    if self.kustomize_installs.contains_key(&k.dir)
                        || !standalone_kustomizations.insert(k.dir.clone())
                    {
                        continue;
                    }
                    done.insert((doc, k.dir.clone()));
                    for c in self.kustomize_argocd_apps(k) {
                        let manager = format!("kustomization `{}`", repo.source(k.file).path);
                        let release = helm::Release::new(
                            &c.release,
                            c.namespace.as_deref().unwrap_or("default"),
                        );
                        let target = Target::ArgocdApps {
                            dir: &k.dir,
                            form: c.form,
                            values: &c.values,
                            standalone: true,
                        };
                        inputs.extend(self.render_one(doc, &manager, target, &release, c.anchor));
                    }
                }
                if inputs.is_empty() {
                    return;
                }
                for input in &inputs {
                    self.resolve_app(input);
                }
                continue;
            }
            for p in pending {
                renders += 1;
                if renders > MAX_RENDERS {
                    return;
                }
                let doc = self.model.apps[p.app].doc;
                // A direct `argocd-apps` chart source is told apart by its `chart` node.
                let key = match p.argocd_apps {
                    Some(_) if p.dir == argocd_apps::CHART => {
                        format!("{}@{}:{}", p.dir, p.anchor.file.0, p.anchor.start)
                    }
                    _ => p.dir.clone(),
                };
                if !done.insert((doc, key)) {
                    continue;
                }
                let manager = format!("Application `{}`", self.model.apps[p.app].name);
                let target = match p.argocd_apps {
                    Some(form) => Target::ArgocdApps {
                        dir: &p.dir,
                        form,
                        values: &p.values,
                        standalone: false,
                    },
                    None => {
                        rendered_dirs.insert(p.dir.clone());
                        Target::Chart(&p.dir, Some(&p.values))
                    }
                };
                let inputs = self.render_one(doc, &manager, target, &p.release, p.anchor);
                for input in &inputs {
                    self.resolve_app(input);
                }
            }
        }
    }

    /// Renders one chart; records its Argo CD objects and returns its Applications to resolve.
    fn render_one(
        &mut self,
        doc: usize,
        manager: &str,
        target: Target<'_>,
        release: &helm::Release,
        anchor: Span,
    ) -> Vec<AppInput<'p>> {
        let (dir, standalone, result) = match target {
            Target::Chart(dir, values) => {
                if self.plain_charts.contains(dir) {
                    return Vec::new();
                }
                let budget = &self.opts.render_budget;
                let r = helm::render_argocd(self.repo, dir, values, release, anchor, budget);
                (dir, values.is_none(), r)
            }
            Target::ArgocdApps {
                dir,
                form,
                values,
                standalone,
            } => {
                let budget = &self.opts.render_budget;
                let r =
                    argocd_apps::render_objects(self.repo, values, form, release, anchor, budget)
                        .map(Some);
                (dir, standalone, r)
            }
        };
        let what = match target {
            Target::Chart(..) => format!("the chart `{dir}`"),
            Target::ArgocdApps { form, .. } => {
                format!("the `{}` chart ({})", argocd_apps::CHART, form.as_str())
            }
        };
        let docs = match result {
            Ok(Some(docs)) => docs,
            Ok(None) => {
                self.plain_charts.insert(dir.to_string());
                return Vec::new();
            }
            Err(e) => {
                self.model.not_rendered.push(helm::NotRendered {
                    manager_doc: doc,
                    chart_dir: dir.to_string(),
                    standalone,
                    span: anchor,
                    message: format!("{what} writes Argo CD objects but cannot be rendered: {e}"),
                });
                return Vec::new();
            }
        };
        let mut inputs = Vec::new();
        for d in docs {
            let kind = crate::model::classify(&d.template, &d.root);
            let name_node = d.root.path(&["metadata", "name"]);
            // A name with a value given at install time reads `<unknown>`, as a generated one.
            let name = name_node
                .and_then(Node::as_str)
                .map_or_else(|| "<unnamed>".to_string(), template::readable);
            let name_span = name_node.map_or(anchor, |n| n.span);
            let object = helm::RenderedObject {
                manager_doc: doc,
                manager: manager.to_string(),
                chart_dir: dir.to_string(),
                standalone,
                kind,
                name: name.clone(),
                template: d.template,
                line: d.line,
                builtin: d.builtin,
                root: d.root,
            };
            if kind == DocKind::ApplicationSet {
                inputs.extend(self.expand_rendered_appset(doc, &object, anchor));
            }
            if kind == DocKind::Application {
                if let Some(spec) = object.root.get("spec") {
                    inputs.push(AppInput {
                        doc,
                        name,
                        name_span,
                        spec: Cow::Owned(spec.clone()),
                        appset: None,
                        rendered_from: Some(object.label()),
                    });
                }
            }
            self.model.rendered.push(object);
        }
        inputs
    }

    /// The Applications a rendered ApplicationSet generates, managed by `doc` like the set.
    fn expand_rendered_appset(
        &mut self,
        doc: usize,
        object: &helm::RenderedObject,
        anchor: Span,
    ) -> Vec<AppInput<'p>> {
        let set = crate::model::Document {
            file: anchor.file,
            index: 0,
            span: anchor,
            root: object.root.clone().into(),
            kind: DocKind::ApplicationSet,
            kept: None,
            rendered: true,
        };
        let is_here = |url: &str| self.known_here(url);
        let view = appset::RepoView {
            repo: self.repo,
            dirs: &self.dirs,
            is_here: &is_here,
            new_git_file_globbing: self.opts.new_git_file_globbing,
        };
        let exp = appset::expand(&view, &set);
        let label = object.label();
        let inputs = exp
            .apps
            .into_iter()
            .map(|app| AppInput {
                doc,
                name: app.name,
                name_span: app.name_span.unwrap_or(anchor),
                spec: Cow::Owned(app.spec),
                appset: Some(object.name.clone()),
                rendered_from: Some(label.clone()),
            })
            .collect();
        if let Some((generator, span)) = exp.unexpandable {
            self.model.unexpandable.push(Unexpandable {
                doc,
                name: object.name.clone(),
                generator,
                span,
            });
        }
        inputs
    }
}

/// What [`Resolver::render_one`] renders.
#[derive(Clone, Copy)]
enum Target<'a> {
    /// A chart folder of this repository, with the installing Application's values (`None`:
    /// installed by hand, with its defaults).
    Chart(&'a str, Option<&'a Values>),
    /// The built-in `argocd-apps` chart, installed from `dir` (a kustomization's folder, or
    /// the chart's name for an Application's chart source).
    ArgocdApps {
        dir: &'a str,
        form: argocd_apps::Form,
        values: &'a Values,
        standalone: bool,
    },
}
