//! Rendered manifests as YAML documents whose nodes point at their origins, and the container
//! images of rendered workloads.

use super::provenance::{Locator, RenderOrigin};
use super::render::{Manifest, Rendered};
use super::values;
use crate::model::template;
use crate::source::{FileId, SourceDb, Span};
use crate::yaml::{self, Node};

/// A rendered document: its root node, with every node's span at its origin (see
/// [`documents`]), and where its text starts in the template.
#[derive(Debug)]
pub struct RenderedDoc {
    pub root: Node,
    /// Repository-relative template file and 1-based line of the document's first byte.
    pub template: String,
    pub line: usize,
    /// The built-in chart whose template wrote it (`argocd-apps`), if any.
    pub builtin: Option<&'static str>,
    /// The template file's id, when the repository holds it.
    pub file: Option<FileId>,
    /// Where the document starts in the template (`anchor` when not known).
    pub start: Span,
    /// The container images of a workload (any pod template), in order.
    pub images: Vec<RenderedImage>,
}

/// A container's `image:` in a rendered document.
#[derive(Clone, Debug)]
pub struct RenderedImage {
    pub image: String,
    /// Its tag (`None`: no tag, or a digest only).
    pub tag: Option<String>,
    /// Where the tag's text came from: the values node that printed it, else the template text.
    pub tag_span: Span,
    /// Where the template writes the `image:` value.
    pub written: Span,
    /// "rendered from `templates/x.yaml:N` by Application `a`" (set by the caller).
    pub label: String,
}

/// Pod specs of a workload: a Pod, any kind with `spec.template.spec` (Deployment, Job...), a
/// CronJob's `spec.jobTemplate.spec.template.spec`.
pub fn pod_specs(root: &Node) -> impl Iterator<Item = &Node> {
    [
        &["spec"][..],
        &["spec", "template", "spec"][..],
        &["spec", "jobTemplate", "spec", "template", "spec"][..],
    ]
    .into_iter()
    .filter_map(|p| root.path(p))
    .filter(|n| n.get("containers").is_some() || n.get("initContainers").is_some())
}

/// The `image:` nodes of a workload's containers and init containers.
pub fn container_images(root: &Node) -> Vec<&Node> {
    pod_specs(root)
        .flat_map(|pod| {
            ["initContainers", "containers"]
                .into_iter()
                .filter_map(|k| pod.get(k))
                .flat_map(Node::items)
        })
        .filter_map(|c| c.get("image"))
        .filter(|i| i.as_str().is_some())
        .collect()
}

/// Parses each manifest and maps node spans back to where their text came from: a scalar that
/// is one value's text points at the values node; anything else at the template text that
/// wrote it (the template files are in `sources`); `anchor` when neither is known.
#[must_use]
pub fn documents(rendered: &Rendered, sources: &SourceDb, anchor: Span) -> Vec<RenderedDoc> {
    documents_with(rendered, sources, anchor, &mut |text| {
        yaml::parse(anchor.file, text).docs
    })
}

/// [`documents`], each manifest's YAML parsed by `parse`, which may give the parse of the same
/// text made for another rendering: every node's span is mapped again here, from the text's
/// offsets.
pub fn documents_with(
    rendered: &Rendered,
    sources: &SourceDb,
    anchor: Span,
    parse: &mut dyn FnMut(&str) -> Vec<yaml::YamlDoc>,
) -> Vec<RenderedDoc> {
    // A template, or a `crds/` file (YAML, discovered as such); a built-in chart's templates
    // are no file of the repository, even at the same path.
    let files = rendered
        .paths
        .values()
        .filter(|p| !rendered.builtin.contains_key(*p))
        .filter_map(|p| {
            let f = sources.template_by_path(p).or_else(|| sources.by_path(p))?;
            Some((p.as_str(), f))
        })
        .collect();
    let loc = Locator {
        rendered,
        files,
        anchor,
    };
    let mut out = Vec::new();
    for m in &rendered.manifests {
        for d in parse(&m.text).into_iter().filter(|d| !d.root.is_null()) {
            let start = d.root.span.start as usize;
            let (template, line, at) = match rendered.origin_at(m, start) {
                Some(RenderOrigin::Template { path, start, .. }) => {
                    let line = rendered.template_line(&path, start);
                    let at = loc.template_span(&path, start, start);
                    (path, line, at)
                }
                _ => (m.path.clone(), 0, None),
            };
            let images = container_images(&d.root)
                .into_iter()
                .map(|n| {
                    let image = n.as_str().unwrap_or_default().to_string();
                    let tag = values::tag_of_reference(&image).map(str::to_string);
                    let (s, e) = (n.span.start as usize, n.span.end as usize);
                    // The tag's bytes in the manifest: after the last `:` of the written text.
                    let tag_range = tag.as_ref().and_then(|t| {
                        let written = m.text.get(s..e)?;
                        let at = written.rfind(&format!(":{t}"))? + s + 1;
                        Some(at..at + t.len())
                    });
                    RenderedImage {
                        tag_span: loc.span_of(m, tag_range.unwrap_or(s..e)),
                        written: loc.written_at(m, s..e),
                        label: String::new(),
                        image,
                        tag,
                    }
                })
                .collect();
            let mut root = d.root;
            if rendered.missing_is_unknown && !m.dropped.is_empty() {
                mark_missing(&mut root, m);
            }
            loc.remap(&mut root, m);
            out.push(RenderedDoc {
                images,
                root,
                builtin: rendered.builtin.get(&m.path).copied(),
                file: loc.files.get(template.as_str()).map(|f| f.id),
                start: at.unwrap_or(anchor),
                template,
                line,
            });
        }
    }
    out
}

/// Writes [`template::UNKNOWN`] into each scalar of `node` (spans in `m`'s text) where a
/// missing value printed nothing: at its place when the text before it is as written, else at
/// the end.
fn mark_missing(node: &mut Node, m: &Manifest) {
    let (start, end) = (node.span.start as usize, node.span.end as usize);
    let style = node.style();
    match &mut node.value {
        yaml::Value::Scalar(text) => {
            let from = m.dropped.partition_point(|&d| d < start);
            let upto = m.dropped.partition_point(|&d| d <= end);
            if from == upto {
                return;
            }
            let quoted = matches!(
                style,
                yaml::ScalarStyle::SingleQuoted | yaml::ScalarStyle::DoubleQuoted
            );
            let content = start + usize::from(quoted && end > start);
            let written = m.text.get(content..end).unwrap_or_default();
            let places: Option<Vec<usize>> = m.dropped[from..upto]
                .iter()
                .map(|&d| {
                    let rel = d.checked_sub(content)?;
                    (text.get(..rel).is_some() && written.get(..rel) == text.get(..rel))
                        .then_some(rel)
                })
                .collect();
            let mut marked = String::with_capacity(text.len() + template::UNKNOWN.len());
            match places {
                Some(places) => {
                    let mut at = 0;
                    for rel in places {
                        marked.push_str(&text[at..rel]);
                        marked.push_str(template::UNKNOWN);
                        at = rel;
                    }
                    marked.push_str(&text[at..]);
                }
                None => {
                    marked.push_str(text);
                    marked.push_str(template::UNKNOWN);
                }
            }
            *text = marked.into();
        }
        yaml::Value::Seq(items) => items.iter_mut().for_each(|n| mark_missing(n, m)),
        yaml::Value::Map(entries) => {
            for e in entries.iter_mut() {
                mark_missing(&mut e.key, m);
                mark_missing(&mut e.value, m);
            }
        }
    }
}
