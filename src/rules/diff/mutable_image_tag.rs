//! `diff/mutable-image-tag`: the change deploys an image by a tag that names no fixed image
//! (`latest`, a branch name, no tag) or by a placeholder tag.

use crate::diagnostic::{Finding, Severity};
use crate::model::diff::{Change, Changes};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::yaml::Node;

pub struct MutableImageTag;

static META: RuleMeta = RuleMeta {
    id: "diff/mutable-image-tag",
    summary: "the change deploys an image by a mutable tag (`latest`, a branch, none) or a placeholder",
    default_severity: Severity::Warning,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("mutable_image_tag.md"),
};

/// Tags that move, or that mean "no image yet".
const MUTABLE: &[&str] = &[
    "latest", "main", "master", "develop", "dev", "stable", "edge", "nightly", "head",
];
const PLACEHOLDERS: &[&str] = &["none", "changeme", "todo", "tbd", "placeholder"];

/// Why an image reference names no fixed image, if it does not.
fn why(image: &str) -> Option<String> {
    if image.contains('@') {
        return None;
    }
    let last = image.rsplit('/').next().unwrap_or(image);
    let tag = last.split_once(':').map(|(_, t)| t);
    match tag {
        None | Some("") => Some("has no tag, so it pulls `latest`".into()),
        Some(t) if MUTABLE.contains(&t.to_ascii_lowercase().as_str()) => {
            Some(format!("uses the tag `{t}`, which moves"))
        }
        Some(t) if PLACEHOLDERS.contains(&t.to_ascii_lowercase().as_str()) => Some(format!(
            "uses the placeholder tag `{t}`, which names no image"
        )),
        _ => None,
    }
}

/// `(container name, image node)` of a workload.
fn images<'n>(kind: &str, node: &'n Node) -> Vec<(String, &'n Node)> {
    let Some(spec) = super::pod_spec(kind, node) else {
        return Vec::new();
    };
    ["initContainers", "containers"]
        .iter()
        .filter_map(|k| spec.get(k).and_then(Node::as_seq))
        .flatten()
        .filter_map(|c| {
            let name = c
                .get("name")
                .and_then(Node::as_str)
                .unwrap_or("")
                .to_string();
            Some((name, c.get("image")?))
        })
        .collect()
}

impl Rule for MutableImageTag {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_diff(&self, changes: &Changes, _cx: &Context<'_>) -> Vec<Finding> {
        let mut out = Vec::new();
        for app in &changes.apps {
            for o in app.objects.iter().filter(|o| o.change != Change::Removed) {
                let Some(h) = &o.head else { continue };
                let before: Vec<(String, String)> = o
                    .base
                    .as_ref()
                    .map(|b| {
                        images(&o.key.kind, &b.node)
                            .into_iter()
                            .filter_map(|(n, i)| Some((n, i.as_str()?.to_string())))
                            .collect()
                    })
                    .unwrap_or_default();
                for (name, node) in images(&o.key.kind, &h.node) {
                    let Some(image) = node.as_str() else { continue };
                    if before.iter().any(|(n, i)| *n == name && i == image) {
                        continue;
                    }
                    let Some(why) = why(image) else { continue };
                    out.push(
                        Finding::new(
                            format!(
                                "this change deploys `{image}` in container `{name}` of {} (Application `{}`): it {why}",
                                super::describe(&o.key),
                                app.name
                            ),
                            node.span,
                        )
                        .with_help(
                            "deploy a tag that is never moved (a version or a commit) or a digest (`image@sha256:...`), so that what is reviewed is what runs.",
                        ),
                    );
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::why;

    #[test]
    fn tags_that_name_no_fixed_image() {
        assert!(why("nginx").is_some());
        assert!(why("registry:5000/app").is_some());
        assert!(why("app:latest").is_some());
        assert!(why("app:none").is_some());
        assert!(why("registry:5000/app:1.2.3").is_none());
        assert!(why("app@sha256:abc").is_none());
    }
}
