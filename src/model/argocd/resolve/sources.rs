//! One Application and each of its sources: where the source is (this repository, another,
//! unknown) and what kind it is (Helm, kustomize, directory, chart, ref).

use std::borrow::Cow;

use rustc_hash::FxHashMap;

use super::{
    App, AppInput, Destination, Kustomized, Location, PluginSource, ResolvedSource, Resolver,
    SourceFiles, SourceKind,
};
use crate::model::Field;
use crate::model::argocd::{self, is_set, source_overrides};
use crate::model::helm::argocd_apps;
use crate::model::helm::values::Values;
use crate::model::paths::join;
use crate::model::settings::PluginTool;
use crate::model::sources::directory::directory_files;
use crate::model::sources::helm::{CHART_FILE_NAMES, default_values};
use crate::model::template::is_unknown;
use crate::source::FileId;
use crate::yaml::Node;

impl<'p> Resolver<'p> {
    pub(super) fn resolve_app(&mut self, input: &AppInput<'_>) {
        let app_idx = self.model.apps.len();
        self.model.apps.push(App {
            name: input.name.clone(),
            doc: input.doc,
            appset: input.appset.clone(),
            name_span: input.name_span,
            live: true,
            sources: Vec::new(),
            depends_on_unknown: Vec::new(),
            generated_spec: match &input.spec {
                Cow::Owned(n) => Some(n.clone()),
                Cow::Borrowed(_) => None,
            },
            project: Field::of(input.spec.get("project")),
            destination: input.spec.entry("destination").map(|e| Destination {
                span: e.key.span,
                server: Field::of(e.value.get("server")),
                name: Field::of(e.value.get("name")),
                namespace: Field::of(e.value.get("namespace")),
            }),
            rendered_from: input.rendered_from.clone(),
        });
        let srcs = argocd::sources(&input.spec);
        // `ref:` names → where their repository is.
        let mut refs: FxHashMap<&str, Option<bool>> = FxHashMap::default();
        for s in &srcs {
            if let Some(name) = s.get_str("ref") {
                let url = s.get_str("repoURL").unwrap_or("");
                let here = if s.get("chart").is_some() {
                    Some(false)
                } else {
                    self.url_is_here(url)
                };
                refs.insert(name, here);
            }
        }
        // Sized once: thousands of Applications keep their sources for the whole run.
        let mut sources = Vec::with_capacity(srcs.len());
        for s in srcs {
            sources.push(self.resolve_source(app_idx, s, &refs));
        }
        self.model.apps[app_idx].sources = sources;
    }

    fn resolve_source(
        &mut self,
        app: usize,
        src: &Node,
        refs: &FxHashMap<&str, Option<bool>>,
    ) -> ResolvedSource {
        // Value files and kustomize inputs are gathered one by one into a list of the source's
        // own; a directory source takes its folder's shared list instead.
        let mut gathered = Vec::new();
        let mut out = self.locate_source(app, src, refs, &mut gathered);
        if !gathered.is_empty() {
            out.files = gathered.into();
        }
        out
    }

    /// A source's location and kind, what it reads (into `files`, unless it shares a list) and
    /// its effective values.
    fn locate_source(
        &mut self,
        app: usize,
        src: &Node,
        refs: &FxHashMap<&str, Option<bool>>,
        files: &mut Vec<FileId>,
    ) -> ResolvedSource {
        let repo_url = src.get_str("repoURL").map(str::to_string);
        let mut out = ResolvedSource {
            span: src.span,
            repo_url: repo_url.clone(),
            location: Location::Unknown,
            kind: SourceKind::Unknown,
            files: SourceFiles::default(),
            repo_url_field: Field::of(src.get("repoURL")),
            path: Field::of(src.get("path")),
            chart: Field::of(src.get("chart")),
            values: None,
            release: None,
        };
        let url = repo_url.as_deref().unwrap_or("");
        let chart = src.get("chart").filter(|c| !c.is_null());
        let path_node = src.get("path").filter(|p| !p.is_null());
        if chart.is_some() {
            out.location = Location::External;
            out.kind = SourceKind::Chart;
            // Value files of an external chart: only `$ref` ones can be in this repository.
            let mut layers = Vec::new();
            let complete = match src.get("helm") {
                Some(helm) => self.helm_layers(app, helm, None, refs, &mut layers, files),
                None => true,
            };
            if complete {
                let name = chart.and_then(Node::scalar_text).unwrap_or("");
                let renders = argocd_apps::is_argocd_apps(Some(url), name);
                let keep = self.keeps_values(&out);
                let (tags, vals) = self.effective_values(None, layers, keep || renders);
                self.collect_tags(app, tags);
                let vals = vals.unwrap_or_else(Values::empty_map);
                if renders {
                    let form =
                        argocd_apps::form_of(src.get("targetRevision").and_then(Node::scalar_text));
                    let anchor = chart.map_or(src.span, |c| c.span);
                    let release = self.release_of(app, src);
                    self.queue_render(app, argocd_apps::CHART, Some(form), &vals, release, anchor);
                }
                out.values = keep.then_some(vals);
            }
            return out;
        }
        let Some(path_node) = path_node else {
            if src.get("ref").is_some() {
                out.kind = SourceKind::Ref;
                out.location = match self.url_is_here(url) {
                    Some(true) => Location::RefInRepo,
                    Some(false) => Location::External,
                    None => Location::Unknown,
                };
            }
            return out;
        };
        let path = path_node.scalar_text().unwrap_or("");
        if is_unknown(path) {
            self.unknown(app, "spec.source.path");
            return out;
        }
        match self.url_is_here(url) {
            None => {
                self.unknown(app, "spec.source.repoURL");
                return out;
            }
            Some(false) => {
                // Inference mode: an unconfirmed URL whose path exists here is resolved.
                let exists =
                    self.this_repo.is_none() && join("", path).is_some_and(|p| self.dir_exists(&p));
                if !exists {
                    out.location = Location::External;
                    // A chart in another Git repository: its defaults are unknown, but value
                    // files from this one (`$ref/...`), `values`, `valuesObject` and
                    // `parameters` apply.
                    if let (Some(helm), [SourceKind::Helm]) =
                        (src.get("helm"), &explicit_kinds(src)[..])
                    {
                        out.kind = SourceKind::Helm;
                        let mut layers = Vec::new();
                        if self.helm_layers(app, helm, None, refs, &mut layers, files) {
                            let keep = self.keeps_values(&out);
                            let (tags, vals) = self.effective_values(None, layers, keep);
                            self.collect_tags(app, tags);
                            out.values = vals;
                        }
                    }
                    return out;
                }
            }
            Some(true) => {}
        }
        let Some(dir) = join("", path) else {
            self.missing(
                app,
                path_node.span,
                format!("source path `{path}` leaves the repository"),
            );
            return out;
        };
        if !self.dir_exists(&dir) {
            self.missing(
                app,
                path_node.span,
                format!("source path `{path}` does not exist in this repository"),
            );
            out.location = Location::InRepo(dir);
            return out;
        }
        out.location = Location::InRepo(dir.clone());
        // The repo server merges the folder's parameter overrides into the source first.
        let overrides = source_overrides::files(self.repo, &dir, &self.model.apps[app].name);
        files.extend(overrides.iter().map(|&(f, _)| f));
        let merged = source_overrides::apply(src, &overrides);
        let src = merged.as_ref().unwrap_or(src);
        out.kind = self.source_kind(app, src, &dir);
        match out.kind {
            SourceKind::Helm => {
                let defaults = default_values(self.repo, &dir);
                files.extend(defaults);
                let mut layers = Vec::new();
                let complete = match src.get("helm") {
                    Some(helm) => self.helm_layers(app, helm, Some(&dir), refs, &mut layers, files),
                    None => true,
                };
                // A layer that depends on unknown parameters may override any tag.
                if complete {
                    // A chart that cannot render is not rendered: it needs no values.
                    let keep = self.keeps_values(&out);
                    let (tags, vals) = self.effective_values(defaults, layers, keep);
                    self.collect_tags(app, tags);
                    let release = self.release_of(app, src);
                    let render_values = vals.clone().unwrap_or_else(Values::empty_map);
                    // The release is kept with the values: rendering reads them together.
                    out.release = vals.is_some().then(|| release.clone());
                    self.queue_render(app, &dir, None, &render_values, release, path_node.span);
                    out.values = vals;
                }
            }
            SourceKind::Kustomize => {
                let mut k = Kustomized::default();
                self.kustomize(app, &dir, &mut k);
                files.extend(k.files.iter().copied());
                self.kustomize_tags(app, src, k);
            }
            SourceKind::Directory => {
                out.files = self.directory_files(&dir, src.get("directory"));
            }
            _ => {}
        }
        out
    }

    fn source_kind(&mut self, app: usize, src: &Node, dir: &str) -> SourceKind {
        match explicit_kinds(src)[..] {
            [SourceKind::Plugin] => {
                let plugin = src.entry("plugin");
                let name_node = plugin
                    .and_then(|p| p.value.get("name"))
                    .filter(|n| n.as_str().is_some_and(|n| !n.is_empty()));
                let name = name_node.and_then(Node::as_str);
                // A plugin the configuration maps to the tool it wraps renders as that tool
                // would, from the files (the plugin's parameters are not read).
                let tool = name.and_then(|n| {
                    self.opts
                        .plugins
                        .iter()
                        .find(|(p, _)| p == n)
                        .map(|&(_, t)| t)
                });
                match tool {
                    Some(PluginTool::Helm) if self.is_chart(dir) => return SourceKind::Helm,
                    Some(PluginTool::Kustomize) if self.graph.in_dir(dir).is_some() => {
                        return SourceKind::Kustomize;
                    }
                    Some(_) => return SourceKind::Directory,
                    None => {
                        self.model.plugin_sources.push(PluginSource {
                            app,
                            name: name.map(str::to_string),
                            // The name, which the message cites: a rendered `plugin` key
                            // points at its template, the name at the values line.
                            span: name_node
                                .map(|n| n.span)
                                .or(plugin.map(|p| p.key.span))
                                .unwrap_or(src.span),
                        });
                        return SourceKind::Plugin;
                    }
                }
            }
            [one] => return one,
            _ => {}
        }
        if self.is_chart(dir) {
            return SourceKind::Helm;
        }
        if self.graph.in_dir(dir).is_some() {
            return SourceKind::Kustomize;
        }
        SourceKind::Directory
    }

    fn is_chart(&self, dir: &str) -> bool {
        CHART_FILE_NAMES
            .iter()
            .any(|n| join(dir, n).is_some_and(|p| self.file_exists(&p)))
    }

    /// A directory source's files, listed once per folder, `recurse` and globs.
    fn directory_files(&mut self, dir: &str, directory: Option<&Node>) -> SourceFiles {
        let recurse = directory
            .and_then(|d| d.get("recurse"))
            .and_then(Node::as_bool)
            .unwrap_or(false);
        let include = directory.and_then(|d| d.get_str("include"));
        let exclude = directory.and_then(|d| d.get_str("exclude"));
        let key = (
            dir.to_string(),
            recurse,
            include.map(str::to_string),
            exclude.map(str::to_string),
        );
        let repo = self.repo;
        self.directory_lists
            .entry(key)
            .or_insert_with(|| directory_files(repo, dir, recurse, include, exclude).into())
            .clone()
    }
}

/// The source types an Application source sets explicitly (`helm:`, `kustomize:`, ...).
fn explicit_kinds(src: &Node) -> Vec<SourceKind> {
    [
        ("helm", SourceKind::Helm),
        ("kustomize", SourceKind::Kustomize),
        ("directory", SourceKind::Directory),
        ("plugin", SourceKind::Plugin),
    ]
    .into_iter()
    .filter(|(k, _)| is_set(src, k))
    .map(|(_, kind)| kind)
    .collect()
}
