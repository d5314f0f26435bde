//! Flux's image automation as a writer (fluxcd/image-automation-controller:
//! `api/v1beta2/imageupdateautomation_types.go`, `api/v1beta2/git.go`, and
//! `defaultMessageTemplate` in `internal/controller/imageupdateautomation_controller.go`).

use super::{Bot, Here, branch_of, image_name};
use crate::model::ci::git::Branch;
use crate::model::{DocKind, Repository};
use crate::yaml::Node;

const TOOL: &str = "Flux image automation";
/// `defaultMessageTemplate` of the image automation controller.
pub const DEFAULT_MESSAGE: &str = "Update from image update automation";

fn kind_of<'a>(root: &'a Node, group: &str, kind: &str) -> Option<&'a Node> {
    (root.get_str("kind") == Some(kind)
        && root
            .get_str("apiVersion")
            .is_some_and(|v| v.starts_with(group)))
    .then_some(root)
}

fn name(n: &Node) -> Option<&str> {
    n.path(&["metadata", "name"]).and_then(Node::as_str)
}

pub(super) fn bots(repo: &Repository, here: &Here) -> Vec<Bot> {
    let objects: Vec<&Node> = repo.docs_of(DocKind::K8sObject).map(|d| &*d.root).collect();
    let images: Vec<String> = objects
        .iter()
        .filter_map(|r| kind_of(r, "image.toolkit.fluxcd.io/", "ImageRepository"))
        .filter_map(|r| r.path(&["spec", "image"]).and_then(Node::as_str))
        .map(|i| image_name(i).to_string())
        .collect();
    let mut out = Vec::new();
    for auto in objects
        .iter()
        .filter_map(|r| kind_of(r, "image.toolkit.fluxcd.io/", "ImageUpdateAutomation"))
    {
        let Some(spec) = auto.get("spec") else {
            continue;
        };
        let git = spec.get("git");
        let source = spec.path(&["sourceRef", "name"]).and_then(Node::as_str);
        let repository = objects
            .iter()
            .filter_map(|r| kind_of(r, "source.toolkit.fluxcd.io/", "GitRepository"))
            .find(|r| source.is_some() && name(r) == source);
        let here = repository
            .and_then(|r| r.path(&["spec", "url"]))
            .and_then(Node::as_str)
            .and_then(|u| here.is(u));
        let branch = git
            .and_then(|g| g.path(&["push", "branch"]))
            .or_else(|| git.and_then(|g| g.path(&["checkout", "ref", "branch"])))
            .or_else(|| repository.and_then(|r| r.path(&["spec", "ref", "branch"])))
            .and_then(Node::as_str);
        let branch = match branch {
            Some(b) => branch_of(Some(b)),
            None => Branch::Named("main".to_string()),
        };
        let template = git
            .and_then(|g| g.path(&["commit", "messageTemplate"]))
            .filter(|n| !n.is_null());
        let author = git.and_then(|g| g.path(&["commit", "author"]));
        let field = |k: &str| author.and_then(|a| a.get_str(k)).unwrap_or("");
        let path = spec
            .path(&["update", "path"])
            .and_then(Node::as_str)
            .map(|p| p.trim_start_matches("./").trim_end_matches('/'));
        out.push(Bot {
            tool: TOOL,
            name: name(auto).unwrap_or("").to_string(),
            // The message template when there is one, as it is what lacks `[skip ci]`.
            span: template.or(git).map_or(spec.span, |n| n.span),
            here,
            branch,
            message: template
                .and_then(Node::scalar_text)
                .unwrap_or(DEFAULT_MESSAGE)
                .to_string(),
            fed_by: None,
            message_complete: true,
            message_span: None,
            author: format!("{} <{}>", field("name"), field("email")),
            images: images.clone(),
            // The files under `update.path` it rewrites: only the folder is known.
            files: path
                .filter(|p| !p.is_empty())
                .map(|p| vec![format!("{p}/")]),
        });
    }
    out
}
