//! A kustomize source: the kustomizations it reads, the image tags they and the
//! Application set, and the `argocd-apps` charts of their `helmCharts`.

use rustc_hash::{FxHashMap, FxHashSet};

use super::{KustomizeChart, Kustomized, PendingRender, Resolver, TagUse};
use crate::model::helm::argocd_apps;
use crate::model::helm::values::Values;
use crate::model::kustomize::{Flow, Kustomization, Reference, Step};
use crate::model::paths::join;
use crate::model::sources::kustomize::{ImageSetting, image_override};
use crate::model::template::is_unknown;
use crate::model::{KUSTOMIZATION_FILE_NAMES, helm};
use crate::yaml::Node;

impl<'p> Resolver<'p> {
    /// Follows the kustomization in `dir` and what it includes: the files it reads, the image
    /// tags it sets, and `Missing` records for entries that are not in the repository.
    pub(super) fn kustomize(&mut self, app: usize, dir: &str, k: &mut Kustomized) {
        let repo = self.repo;
        let graph = self.graph;
        let Some(start) = graph.in_dir(dir) else {
            return;
        };
        let mut visited = FxHashSet::default();
        let mut entered = Vec::new();
        graph.walk(start, &mut |step| match step {
            Step::Enter { node, .. } => {
                if !visited.insert(node.file) || visited.len() > 256 {
                    return Flow::Skip;
                }
                k.files.push(node.file);
                entered.push(node.file);
                for img in &node.images {
                    let (Some(name), Some(tag)) = (&img.name, &img.new_tag) else {
                        continue;
                    };
                    // The outermost kustomization is applied last: the first one seen wins.
                    k.images
                        .entry(name.value.clone())
                        .or_insert(ImageSetting {
                            tag: tag.value.clone(),
                            span: tag.span,
                        });
                }
                Flow::Into
            }
            Step::Entry { entry, .. } => {
                let (key, raw) = (entry.field.as_str(), entry.raw.as_str());
                if is_unknown(raw) {
                    return Flow::Skip;
                }
                match &entry.reference {
                    Reference::Remote | Reference::Kustomization(_) => {}
                    Reference::OutsideRoot => self.missing(
                        app,
                        entry.span,
                        format!("kustomize {key} entry `{raw}` leaves the repository"),
                    ),
                    Reference::File(f) => k.files.push(*f),
                    Reference::Other(rel) if self.dir_exists(rel) => {
                        if !KUSTOMIZATION_FILE_NAMES.iter().any(|n| {
                            repo.on_disk_at(&format!("{rel}/{n}"))
                                && repo.root.join(rel).join(n).is_file()
                        })
                        {
                            self.missing(
                                app,
                                entry.span,
                                format!(
                                    "kustomize {key} entry `{raw}` is a folder without a kustomization"
                                ),
                            );
                        }
                    }
                    Reference::Other(rel) if !self.file_exists(rel) => self.missing(
                        app,
                        entry.span,
                        format!("kustomize {key} entry `{rel}` does not exist in this repository"),
                    ),
                    Reference::Other(_) => {}
                }
                Flow::Into
            }
            Step::Cycle { entry, chain } => {
                let Reference::Kustomization(next) = entry.reference else {
                    return Flow::Skip;
                };
                // `a` → `b` → `a`, from the kustomization the entry leads back to.
                let dir = |i: usize| match graph.node(i).dir.as_str() {
                    "" => "/".to_string(),
                    d => format!("`{d}`"),
                };
                let from = chain.iter().position(|&i| i == next).unwrap_or(0);
                let mut path: Vec<String> = chain[from..].iter().map(|&i| dir(i)).collect();
                path.push(dir(next));
                self.missing(
                    app,
                    entry.span,
                    format!(
                        "kustomize {} entry `{}` closes a cycle ({}), so kustomize cannot build it",
                        entry.field.as_str(),
                        entry.raw,
                        path.join(" → ")
                    ),
                );
                Flow::Skip
            }
        });
        self.kustomize_builds.push((app, start));
        // `helmCharts` of the public `argocd-apps` chart: rendered from their values.
        for file in entered {
            let Some(node) = graph.of_file(file) else {
                continue;
            };
            for c in self.kustomize_argocd_apps(node) {
                let app_doc = self.model.apps[app].doc;
                self.kustomize_installs
                    .entry(node.dir.clone())
                    .or_default()
                    .insert(app_doc);
                let namespace = c
                    .namespace
                    .unwrap_or_else(|| self.app_namespace(app).to_string());
                self.pending_renders.push(PendingRender {
                    app,
                    dir: node.dir.clone(),
                    argocd_apps: Some(c.form),
                    values: c.values,
                    release: helm::Release::new(&c.release, &namespace),
                    anchor: c.anchor,
                });
            }
        }
    }

    /// What `kustomize build` of each kustomization a live source deploys rejects that the
    /// walk did not already report (a patch that matches nothing, an id registered twice, a
    /// generator merge with nothing to merge, a replacement without its source, a file outside
    /// the kustomization's folder...): Argo CD cannot produce the source's manifests. Each
    /// kustomization is built once, on all threads.
    pub(super) fn kustomize_build_errors(&mut self) {
        use crate::model::kustomize::build::{self, Problem, ProblemKind};
        use rayon::prelude::*;
        let pending = std::mem::take(&mut self.kustomize_builds);
        let mut starts: Vec<usize> = pending
            .iter()
            .filter(|(app, _)| self.model.apps[*app].live)
            .map(|(_, start)| *start)
            .collect();
        starts.sort_unstable();
        starts.dedup();
        let (repo, graph) = (self.repo, self.graph);
        // The errors, and the `helmCharts` items not inflated.
        let errors: FxHashMap<usize, (Vec<Problem>, Vec<Problem>)> = starts
            .par_iter()
            .map(|&start| {
                // The model built the kustomizations nothing includes already.
                let problems = match repo.build_errors(start) {
                    Some(problems) => problems.to_vec(),
                    None => build::problems(repo, graph, start),
                };
                let (errors, charts): (Vec<Problem>, Vec<Problem>) = problems
                    .into_iter()
                    .partition(|p| p.kind == ProblemKind::Error);
                let charts = charts.into_iter().filter(|p| p.chart).collect();
                (start, (errors, charts))
            })
            .collect();
        for (app, start) in pending {
            let Some((problems, charts)) = errors.get(&start) else {
                continue;
            };
            for p in charts {
                if !self
                    .model
                    .charts_not_inflated
                    .iter()
                    .any(|c| c.span == p.span)
                {
                    self.model.charts_not_inflated.push(super::NotInflated {
                        app,
                        span: p.span,
                        message: p.message.clone(),
                    });
                }
            }
            let new: Vec<(crate::source::Span, String)> = problems
                .iter()
                .filter(|p| {
                    !self.model.missing.iter().any(|m| {
                        m.app == app && m.span.file == p.span.file && overlaps(m.span, p.span)
                    })
                })
                .map(|p| {
                    (
                        p.span,
                        format!("kustomize cannot build the source: {}", p.message),
                    )
                })
                .collect();
            for (span, message) in new {
                self.missing(app, span, message);
            }
        }
    }

    pub(super) fn kustomize_tags(&mut self, app: usize, src: &Node, mut k: Kustomized) {
        // `spec.source.kustomize.images` is applied on top of the kustomization.
        for item in src
            .path(&["kustomize", "images"])
            .into_iter()
            .flat_map(Node::items)
        {
            let Some(s) = item.as_str() else {
                continue;
            };
            if is_unknown(s) {
                // It may override any image: nothing can be said about the tags.
                self.unknown(app, "kustomize.images");
                return;
            }
            let (name, tag) = image_override(s);
            if let Some(tag) = tag {
                k.images.insert(
                    name,
                    ImageSetting {
                        tag: tag.to_string(),
                        span: item.span,
                    },
                );
            }
        }
        for (name, set) in k.images {
            self.model.tags.push(TagUse {
                span: set.span,
                tag: set.tag,
                key: format!("the tag of image `{name}`"),
                app,
            });
        }
    }

    /// The `argocd-apps` charts of kustomization `k`'s `helmCharts`: their values (`valuesFile`,
    /// `valuesInline` by `valuesMerge`, then `additionalValuesFiles`), version form, release
    /// name and namespace, and the item's `name` node.
    pub(super) fn kustomize_argocd_apps(&mut self, k: &Kustomization) -> Vec<KustomizeChart> {
        let Some(doc) = k.doc else {
            return Vec::new();
        };
        let root = &self.repo.docs[doc].root;
        let mut out = Vec::new();
        for hc in root.get("helmCharts").into_iter().flat_map(Node::items) {
            let (Some(name), repo) = (hc.get("name"), hc.get_str("repo")) else {
                continue;
            };
            if !argocd_apps::is_argocd_apps(repo, name.as_str().unwrap_or("")) {
                continue;
            }
            let file_values = |r: &mut Self, rel: &str| -> Values {
                join(&k.dir, rel)
                    .and_then(|p| r.repo.file_by_path(&p))
                    .map(|f| f.id)
                    .map_or(Values::empty_map(), |id| r.values_of(id))
            };
            let mut vals = hc
                .get_str("valuesFile")
                .map_or(Values::empty_map(), |f| file_values(self, f));
            if let Some(inline) = hc.get("valuesInline").filter(|n| n.as_map().is_some()) {
                let inline = Values::from_node(inline, None);
                match hc.get_str("valuesMerge").unwrap_or("override") {
                    "replace" => vals = inline,
                    "merge" => {
                        let mut merged = inline;
                        merged.merge(vals);
                        vals = merged;
                    }
                    _ => vals.merge(inline),
                }
            }
            for f in hc
                .get("additionalValuesFiles")
                .into_iter()
                .flat_map(Node::items)
                .filter_map(Node::as_str)
            {
                let v = file_values(self, f);
                vals.merge(v);
            }
            out.push(KustomizeChart {
                values: vals,
                form: argocd_apps::form_of(hc.get("version").and_then(Node::scalar_text)),
                release: hc
                    .get_str("releaseName")
                    .unwrap_or(argocd_apps::CHART)
                    .to_string(),
                namespace: hc.get_str("namespace").map(str::to_string),
                anchor: name.span,
            });
        }
        out
    }
}

fn overlaps(a: crate::source::Span, b: crate::source::Span) -> bool {
    a.start < b.end.max(b.start + 1) && b.start < a.end.max(a.start + 1)
}
