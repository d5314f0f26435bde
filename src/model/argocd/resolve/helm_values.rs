//! A Helm source's values: its layers in the order Argo CD applies them (value files,
//! `values`, `valuesObject`, `parameters`), merged over the chart's defaults, and their image
//! tags.

use rustc_hash::FxHashMap;

use super::{Location, ResolvedSource, Resolver, SourceKind, TagUse, ValuesLayer};
use crate::model::helm;
use crate::model::helm::values::{self, ImageTag, Values};
use crate::model::paths::{self, join};
use crate::model::template::is_unknown;
use crate::source::FileId;
use crate::yaml::embedded::{block_offsets, remap};
use crate::yaml::{self, Node};

impl<'p> Resolver<'p> {
    pub(super) fn values_of(&mut self, file: FileId) -> Values {
        if let Some(v) = self.values_cache.get(&file) {
            return v.clone();
        }
        let v = self
            .repo
            .file_docs(file)
            .first()
            .map_or(Values::empty_map(), |d| match self.repo.helm_values(d) {
                Values::Null => Values::empty_map(),
                v => v,
            });
        self.values_cache.insert(file, v.clone());
        v
    }

    /// The effective values of a Helm source, from the chart's default values file and the
    /// layers of `helm:` over them: their image tags, and the values when `whole`.
    ///
    /// The values are merged only when needed: when the first file is one loaded as image tags
    /// only (see [`crate::model::KeptValues`]), its tags are taken and each later layer removes
    /// those it overrides and adds its own. Layers whose leaves share one span (an unmapped
    /// `values` string) are merged, so that each key keeps its place in the merged order.
    pub(super) fn effective_values(
        &mut self,
        defaults: Option<FileId>,
        layers: Vec<ValuesLayer>,
        whole: bool,
    ) -> (Vec<ImageTag>, Option<Values>) {
        let (first, rest) = match defaults {
            Some(f) => (Some(f), &layers[..]),
            None => match layers.split_first() {
                Some((ValuesLayer::File(f), rest)) => (Some(*f), rest),
                _ => (None, &layers[..]),
            },
        };
        let first_tags = first
            .and_then(|f| self.repo.file_docs(f).first())
            .and_then(crate::model::Document::kept_image_tags);
        if let Some(tags) = first_tags.filter(|_| !whole) {
            if rest.iter().all(|l| {
                !matches!(
                    l,
                    ValuesLayer::Inline {
                        own_spans: false,
                        ..
                    }
                )
            }) {
                let mut tags = tags.to_vec();
                for layer in rest {
                    match layer {
                        ValuesLayer::File(f) => {
                            let v = self.values_of(*f);
                            values::merge_image_tags(&mut tags, &v);
                        }
                        ValuesLayer::Inline { values, .. } => {
                            values::merge_image_tags(&mut tags, values);
                        }
                    }
                }
                return (tags, None);
            }
        }
        let mut vals = defaults.map_or_else(Values::empty_map, |f| self.values_of(f));
        for layer in layers {
            match layer {
                ValuesLayer::File(f) => {
                    let v = self.values_of(f);
                    vals.merge(v);
                }
                ValuesLayer::Inline { values, .. } => vals.merge(values),
            }
        }
        (values::image_tags(&vals), whole.then_some(vals))
    }

    /// Reads `helm:` into layers in Argo CD's order: value files, then
    /// `values`/`valuesObject`, then parameters. `dir` is the chart folder for an
    /// in-repository chart. False when a layer depends on something unknown.
    pub(super) fn helm_layers(
        &mut self,
        app: usize,
        helm: &Node,
        dir: Option<&str>,
        refs: &FxHashMap<&str, Option<bool>>,
        layers: &mut Vec<ValuesLayer>,
        files: &mut Vec<FileId>,
    ) -> bool {
        let mut complete = true;
        let ignore_missing = helm
            .get("ignoreMissingValueFiles")
            .and_then(Node::as_bool)
            .unwrap_or(false);
        for vf in helm.get("valueFiles").into_iter().flat_map(Node::items) {
            let Some(raw) = vf.scalar_text() else {
                continue;
            };
            if is_unknown(raw) {
                self.unknown(app, "helm.valueFiles");
                complete = false;
                continue;
            }
            let resolved = if let Some(rest) = raw.strip_prefix('$') {
                let (name, file) = rest.split_once('/').unwrap_or((rest, ""));
                match refs.get(name) {
                    None => {
                        self.missing(
                            app,
                            vf.span,
                            format!("value file `{raw}` names `${name}`, but no source of this Application has `ref: {name}`"),
                        );
                        continue;
                    }
                    Some(Some(true)) => join("", file),
                    Some(Some(false)) => continue,
                    Some(None) => {
                        self.unknown(app, "helm.valueFiles");
                        complete = false;
                        continue;
                    }
                }
            } else if paths::is_remote(raw) {
                continue;
            } else if let Some(dir) = dir {
                join(dir, raw)
            } else {
                // Relative to an external chart.
                continue;
            };
            let Some(rel) = resolved else {
                self.missing(
                    app,
                    vf.span,
                    format!("value file `{raw}` leaves the repository"),
                );
                continue;
            };
            match self.repo.file_by_path(&rel) {
                Some(f) => {
                    files.push(f.id);
                    layers.push(ValuesLayer::File(f.id));
                }
                None if self.file_exists(&rel) => {}
                None if ignore_missing => {}
                None => self.missing(
                    app,
                    vf.span,
                    format!("value file `{rel}` does not exist in this repository"),
                ),
            }
        }
        // `valuesObject` wins over `values` when both are set.
        if let Some(obj) = helm.get("valuesObject").filter(|o| o.as_map().is_some()) {
            layers.push(ValuesLayer::Inline {
                values: Values::from_node(obj, None),
                own_spans: true,
            });
        } else if let Some(entry) = helm.entry("values") {
            if let Some((values, own_spans)) = self.inline_values(&entry.key, &entry.value) {
                layers.push(ValuesLayer::Inline { values, own_spans });
            }
        }
        for p in helm.get("parameters").into_iter().flat_map(Node::items) {
            let Some(name) = p.get_str("name") else {
                continue;
            };
            let Some(value) = p.get("value") else {
                continue;
            };
            let text = value.scalar_text().unwrap_or("");
            if is_unknown(name) {
                self.unknown(app, "helm.parameters");
                complete = false;
                continue;
            }
            let force = p.get("forceString").and_then(Node::as_bool) == Some(true);
            let v = if !force && text == "null" {
                Values::Null
            } else {
                Values::Scalar {
                    text: text.into(),
                    is_str: true,
                    span: value.span,
                }
            };
            if let Some(values) = Values::at_set_path(name, v) {
                layers.push(ValuesLayer::Inline {
                    values,
                    own_spans: true,
                });
            }
        }
        for fp in helm.get("fileParameters").into_iter().flat_map(Node::items) {
            let (Some(dir), Some(pnode)) = (dir, fp.get("path")) else {
                continue;
            };
            let Some(raw) = pnode.scalar_text() else {
                continue;
            };
            if is_unknown(raw) || paths::is_remote(raw) {
                continue;
            }
            match join(dir, raw) {
                None => self.missing(
                    app,
                    pnode.span,
                    format!("file parameter `{raw}` leaves the repository"),
                ),
                Some(rel) if !self.file_exists(&rel) => self.missing(
                    app,
                    pnode.span,
                    format!("file parameter `{rel}` does not exist in this repository"),
                ),
                Some(_) => {}
            }
        }
        complete
    }

    /// `helm.values`: a YAML string. Spans map back into the file for a literal block scalar
    /// whose lines can be located; otherwise every value points at the `values` key (and
    /// the flag, whether the values have their own spans, is false).
    fn inline_values(&self, key: &Node, node: &Node) -> Option<(Values, bool)> {
        if node.as_map().is_some() {
            // Argo CD also accepts an object here.
            return Some((Values::from_node(node, None), true));
        }
        let text = node.scalar_text()?;
        if is_unknown(text) {
            return None;
        }
        let parsed = yaml::parse(node.span.file, text);
        if !parsed.errors.is_empty() {
            return None;
        }
        let root = &parsed.docs.first()?.root;
        let file_text = &self.repo.source(node.span.file).text();
        match block_offsets(file_text, node, text) {
            Some(map) => {
                let mut root = root.clone();
                remap(&mut root, &map, node.span.file);
                Some((Values::from_node(&root, None), true))
            }
            None => Some((Values::from_node(root, Some(key.span)), false)),
        }
    }

    /// Whether a source keeps its effective values after its image tags are read: always,
    /// unless [`ResolveOptions::drop_unread_values`]; then only an in-repository chart that
    /// may render and the argo-cd chart.
    pub(super) fn keeps_values(&self, src: &ResolvedSource) -> bool {
        if !self.opts.drop_unread_values {
            return true;
        }
        match (&src.kind, &src.location) {
            (SourceKind::Helm, Location::InRepo(dir)) => !self.unread_values.contains(dir),
            _ => src.chart.as_ref().map(|c| c.value.as_str()) == Some(helm::ARGO_CD_CHART),
        }
    }

    pub(super) fn collect_tags(&mut self, app: usize, tags: Vec<ImageTag>) {
        for t in tags {
            if is_unknown(&t.tag) {
                self.unknown(app, "helm.parameters");
                continue;
            }
            self.model.tags.push(TagUse {
                span: t.span,
                key: format!("`{}`", t.key()),
                tag: t.tag.into(),
                app,
            });
        }
    }
}
