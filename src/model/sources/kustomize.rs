//! Image tags kustomize sets: a kustomization's `images`, and overrides over it.

use crate::model::helm::values;
use crate::source::Span;

/// The tag an `images` entry sets for an image, and where.
pub struct ImageSetting {
    pub tag: String,
    pub span: Span,
}

/// An image override as `kustomize edit set image` writes it (`name=newName:tag`,
/// `name:tag`, `name@digest`): the image it applies to, and the tag it sets, if any.
#[must_use]
pub fn image_override(s: &str) -> (String, Option<&str>) {
    let (name, new) = match s.split_once('=') {
        Some((n, rest)) => (n.to_string(), rest),
        None => {
            let base = s.split('@').next().unwrap_or(s);
            let name = match values::tag_of_reference(base) {
                Some(t) => &base[..base.len() - t.len() - 1],
                None => base,
            };
            (name.to_string(), s)
        }
    };
    (name, values::tag_of_reference(new))
}
