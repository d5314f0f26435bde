//! Helm values with provenance: every leaf remembers the node that set it, so a rule can point
//! at the values file line, the `valuesObject` entry or the parameter that wins.

use std::sync::Arc;

use crate::source::Span;
use crate::yaml::{Node, Resolved, ScalarText, Value};

/// A map's entries, in the order first written.
pub type Entries = Vec<(ScalarText, Values)>;

/// A values tree. Nulls are kept while merging (they delete keys) and dropped from results.
///
/// Collections are shared (`Arc`): a values file is converted once and every Application that
/// reads it, and every merge that keeps a subtree, holds the same nodes. A merge copies only
/// the maps on the path to what it changes (copy on write), so the effective values of
/// thousands of sources cost little more than the files they come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Values {
    Null,
    /// A scalar's text (as resolved by YAML 1.1) and where it was set.
    Scalar {
        text: crate::yaml::ScalarText,
        is_str: bool,
        span: Span,
    },
    /// A sequence and its items (nulls kept as [`Values::Null`]).
    Seq(Span, Arc<[Values]>),
    /// One allocation per map (`Arc<[…]>`): values files hold hundreds of thousands of small
    /// maps.
    Map(Arc<[(ScalarText, Values)]>),
}

impl Values {
    /// An empty map: the values of a chart that has none.
    #[must_use]
    pub fn empty_map() -> Values {
        Values::Map(Arc::from([]))
    }

    /// A map of `entries`.
    #[must_use]
    pub fn map(entries: Entries) -> Values {
        Values::Map(Arc::from(entries))
    }

    /// Converts a YAML node. Every leaf keeps its span; `span_override` replaces it (for
    /// nodes parsed from a string whose spans cannot be mapped into the file).
    #[must_use]
    pub fn from_node(node: &Node, span_override: Option<Span>) -> Values {
        match &node.value {
            Value::Scalar(s) => match node.resolve() {
                Some(Resolved::Null) | None => Values::Null,
                Some(r) => Values::Scalar {
                    text: s.clone(),
                    is_str: matches!(r, Resolved::Str(_)),
                    span: span_override.unwrap_or(node.span),
                },
            },
            Value::Seq(items) => Values::Seq(
                span_override.unwrap_or(node.span),
                items
                    .iter()
                    .map(|n| Values::from_node(n, span_override))
                    .collect(),
            ),
            Value::Map(entries) if distinct_scalar_keys(entries) => Values::Map(
                // Most maps: one allocation at the exact size, no intermediate `Vec`.
                entries
                    .iter()
                    .map(|e| {
                        let key = e.key.scalar_text().unwrap_or_default();
                        (key.into(), Values::from_node(&e.value, span_override))
                    })
                    .collect(),
            ),
            Value::Map(entries) => {
                let mut out: Entries = Vec::with_capacity(entries.len());
                for e in entries {
                    let Some(k) = e.key.scalar_text() else {
                        continue;
                    };
                    let v = Values::from_node(&e.value, span_override);
                    if let Some(slot) = out.iter_mut().find(|(key, _)| key == k) {
                        slot.1 = v;
                    } else {
                        out.push((k.into(), v));
                    }
                }
                Values::map(out)
            }
        }
    }

    /// Deep-merges `over` into `self` the way Helm coalesces values: maps merge key by key,
    /// anything else is replaced, and a null in `over` deletes the key. Subtrees of `over` that
    /// are taken whole are shared, not copied.
    pub fn merge(&mut self, over: Values) {
        match (self, over) {
            (Values::Map(base), Values::Map(over)) if base.is_empty() => {
                *base = Values::Map(over).without_nulls().into_entries();
            }
            (Values::Map(base), Values::Map(over)) => {
                if over.is_empty() {
                    return;
                }
                let mut entries = base.to_vec();
                for (k, v) in owned_entries(over) {
                    let pos = entries.iter().position(|(key, _)| *key == k);
                    match (pos, v) {
                        (Some(i), Values::Null) => {
                            entries.remove(i);
                        }
                        (None, Values::Null) => {}
                        (Some(i), v) => entries[i].1.merge(v),
                        (None, v) => entries.push((k, v.without_nulls())),
                    }
                }
                *base = Arc::from(entries);
            }
            (slot, over) => *slot = over.without_nulls(),
        }
    }

    /// The map's entries shared as they are (a non-map: none).
    fn into_entries(self) -> Arc<[(ScalarText, Values)]> {
        match self {
            Values::Map(m) => m,
            _ => Arc::from([]),
        }
    }

    fn without_nulls(self) -> Values {
        match self {
            Values::Map(m) if m.iter().any(|(_, v)| v.holds_null_entry()) => Values::map(
                owned_entries(m)
                    .into_iter()
                    .filter(|(_, v)| *v != Values::Null)
                    .map(|(k, v)| (k, v.without_nulls()))
                    .collect(),
            ),
            v => v,
        }
    }

    /// Is this a null, or a map with a null entry at any depth (what `without_nulls` drops)?
    fn holds_null_entry(&self) -> bool {
        match self {
            Values::Null => true,
            Values::Map(m) => m.iter().any(|(_, v)| v.holds_null_entry()),
            _ => false,
        }
    }

    /// Sets a `--set`-style dotted path (`a.b\.c.d`); list indexes (`a[0]`) are not modelled
    /// and such parameters are ignored.
    pub fn set_path(&mut self, name: &str, value: Values) {
        if let Some(over) = Values::at_set_path(name, value) {
            self.merge(over);
        }
    }

    /// The map that sets `value` at a `--set`-style path, as [`Values::set_path`] merges it
    /// (`None` for a path it ignores).
    #[must_use]
    pub fn at_set_path(name: &str, value: Values) -> Option<Values> {
        let keys = split_set_path(name);
        if keys.is_empty() || keys.iter().any(|k| k.contains('[')) {
            return None;
        }
        let mut over = value;
        for k in keys.into_iter().rev() {
            over = Values::map(vec![(k.into(), over)]);
        }
        Some(over)
    }

    /// Whether merging `self` over values replaces or deletes what they hold at `path`: it
    /// sets something at `path` or at a prefix of it that is not a map.
    #[must_use]
    pub fn overrides(&self, path: &[ScalarText]) -> bool {
        let mut node = self;
        for key in path {
            match node {
                Values::Map(m) => match m.iter().find(|(k, _)| k == key) {
                    Some((_, v)) => node = v,
                    None => return false,
                },
                _ => return true,
            }
        }
        true
    }

    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Values> {
        match self {
            Values::Map(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// Follows a path of keys.
    #[must_use]
    pub fn path(&self, keys: &[&str]) -> Option<&Values> {
        keys.iter().try_fold(self, |v, k| v.get(k))
    }

    /// A scalar's text.
    #[must_use]
    pub fn text(&self) -> Option<&str> {
        match self {
            Values::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }

    /// Where the value was set (a map has no single place).
    #[must_use]
    pub fn span(&self) -> Option<Span> {
        match self {
            Values::Scalar { span, .. } | Values::Seq(span, _) => Some(*span),
            _ => None,
        }
    }

    /// Items of a sequence (nothing for other values).
    #[must_use]
    pub fn items(&self) -> &[Values] {
        match self {
            Values::Seq(_, items) => items,
            _ => &[],
        }
    }

    /// Is it truthy as Helm templates see it (`if .Values.x`)? Any non-empty string (even
    /// `"false"`), booleans and numbers other than false and zero, non-empty collections.
    #[must_use]
    pub fn is_truthy(&self) -> bool {
        match self {
            Values::Null => false,
            Values::Scalar { text, is_str, .. } => {
                if *is_str {
                    !text.is_empty()
                } else {
                    !matches!(
                        text.as_str(),
                        "false"
                            | "False"
                            | "FALSE"
                            | "no"
                            | "No"
                            | "NO"
                            | "off"
                            | "Off"
                            | "OFF"
                            | "0"
                            | "0.0"
                            | "~"
                            | "null"
                            | ""
                    )
                }
            }
            Values::Seq(_, items) => !items.is_empty(),
            Values::Map(m) => !m.is_empty(),
        }
    }
}

/// The entries of a shared map, cloned (a shallow copy: the entries' own collections stay
/// shared).
fn owned_entries(m: Arc<[(ScalarText, Values)]>) -> Entries {
    m.to_vec()
}

/// Splits a Helm `--set` name on unescaped dots.
#[must_use]
/// Whether every key of a map is a scalar and no key repeats (the last of repeated keys
/// wins, as in Kubernetes).
fn distinct_scalar_keys(entries: &[crate::yaml::Entry]) -> bool {
    if entries.len() > 16 {
        let mut seen = std::collections::HashSet::with_capacity(entries.len());
        return entries
            .iter()
            .all(|e| e.key.scalar_text().is_some_and(|k| seen.insert(k)));
    }
    entries.iter().enumerate().all(|(i, e)| {
        e.key
            .scalar_text()
            .is_some_and(|k| entries[..i].iter().all(|p| p.key.scalar_text() != Some(k)))
    })
}

pub fn split_set_path(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = name.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                if let Some(n) = chars.next() {
                    cur.push(n);
                }
            }
            '.' => out.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// An image tag found in effective values: the key path and the leaf that set it.
#[derive(Clone, Debug, PartialEq)]
pub struct ImageTag {
    /// The keys of the leaf (`[metricsExporter, image, tag]`, or `[x, image]` for a
    /// `repo:tag` string).
    pub path: Box<[ScalarText]>,
    pub tag: ScalarText,
    pub span: Span,
}

impl ImageTag {
    /// The dotted key path: `metricsExporter.image.tag`.
    #[must_use]
    pub fn key(&self) -> String {
        let mut out = String::new();
        for (i, k) in self.path.iter().enumerate() {
            if i > 0 {
                out.push('.');
            }
            out.push_str(k);
        }
        out
    }
}

/// Every image tag in `values`: `<...>image.tag` keys at any depth (the parent key ends in
/// `image`, case-insensitive) and `<...>image: repo:tag` strings.
#[must_use]
pub fn image_tags(values: &Values) -> Vec<ImageTag> {
    let mut out = Vec::new();
    walk_tags(values, &mut Vec::new(), &mut out);
    out
}

/// The image tags of `base` merged with `over`, from `base`'s tags (`tags`) and `over`: those
/// `over` does not replace or delete, then its own. The same tags as [`image_tags`] of the
/// merged values, though not always in the same order.
pub fn merge_image_tags(tags: &mut Vec<ImageTag>, over: &Values) {
    tags.retain(|t| !over.overrides(&t.path));
    tags.extend(image_tags(over));
}

fn walk_tags<'v>(values: &'v Values, path: &mut Vec<&'v ScalarText>, out: &mut Vec<ImageTag>) {
    let Values::Map(entries) = values else {
        return;
    };
    for (k, v) in entries.iter() {
        path.push(k);
        // `image`, `Image`, `sidecarImage`: compared in place, no lowercase copy per key.
        let is_image_key = k
            .len()
            .checked_sub("image".len())
            .and_then(|at| k.as_bytes().get(at..))
            .is_some_and(|end| end.eq_ignore_ascii_case(b"image"));
        match v {
            Values::Map(_) if is_image_key => {
                if let Some(Values::Scalar { text, span, .. }) = v.get("tag") {
                    out.push(ImageTag {
                        path: path
                            .iter()
                            .map(|k| (*k).clone())
                            .chain(std::iter::once(ScalarText::const_new("tag")))
                            .collect(),
                        tag: text.clone(),
                        span: *span,
                    });
                }
                walk_tags(v, path, out);
            }
            Values::Map(_) => walk_tags(v, path, out),
            Values::Scalar {
                text,
                is_str: true,
                span,
            } if is_image_key => {
                if let Some(tag) = tag_of_reference(text) {
                    out.push(ImageTag {
                        path: path.iter().map(|k| (*k).clone()).collect(),
                        tag: tag.into(),
                        span: *span,
                    });
                }
            }
            _ => {}
        }
        path.pop();
    }
}

/// The tag of an image reference `registry:5000/repo:tag@sha256:...`, if it has one.
#[must_use]
pub fn tag_of_reference(reference: &str) -> Option<&str> {
    let r = reference.split('@').next().unwrap_or(reference);
    let colon = r.rfind(':')?;
    if r[colon..].contains('/') {
        return None;
    }
    Some(&r[colon + 1..])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn v(text: &str) -> Values {
        let p = crate::yaml::parse(FileId(0), text);
        Values::from_node(&p.docs[0].root, None)
    }

    fn tags(v: &Values) -> Vec<(String, String)> {
        image_tags(v)
            .into_iter()
            .map(|t| (t.key(), t.tag.to_string()))
            .collect()
    }

    #[test]
    fn merge_is_deep_last_wins_and_null_deletes() {
        let mut base = v("image:\n  repository: r\n  tag: none\nlist: [1, 2]\nkeep: 1\n");
        base.merge(v("image:\n  tag: v1\nlist: [3]\nkeep: null\n"));
        assert_eq!(tags(&base), vec![("image.tag".into(), "v1".into())]);
        assert!(base.get("keep").is_none());
        assert!(matches!(base.get("list"), Some(Values::Seq(..))));
        base.set_path("image.tag", v("none"));
        assert_eq!(tags(&base), vec![("image.tag".into(), "none".into())]);
        base.merge(v("image: {tag: null}\n"));
        assert!(tags(&base).is_empty());
    }

    #[test]
    fn merge_shares_what_it_does_not_change() {
        let file = v("image:\n  repository: r\n  tag: none\nresources:\n  limits: {cpu: 1}\n");
        let mut effective = Values::empty_map();
        effective.merge(file.clone());
        effective.set_path("image.tag", v("v1"));
        let shared = |a: &Values, b: &Values| match (a, b) {
            (Values::Map(a), Values::Map(b)) => Arc::ptr_eq(a, b),
            _ => false,
        };
        assert!(shared(
            file.get("resources").unwrap(),
            effective.get("resources").unwrap()
        ));
        assert!(!shared(
            file.get("image").unwrap(),
            effective.get("image").unwrap()
        ));
        assert_eq!(tags(&file), vec![("image.tag".into(), "none".into())]);
        assert_eq!(tags(&effective), vec![("image.tag".into(), "v1".into())]);
        effective.merge(v("resources: {limits: null}\n"));
        assert_eq!(
            file.path(&["resources", "limits", "cpu"])
                .and_then(Values::text),
            Some("1")
        );
        assert!(effective.path(&["resources", "limits"]).is_none());
    }

    #[test]
    fn finds_nested_image_tags_and_reference_strings() {
        let vals = v(
            "metricsExporter:\n  image:\n    tag: none\nsidecarImage:\n  tag: x\nworker:\n  image: reg:5000/app:none\nplain:\n  tag: none\n",
        );
        assert_eq!(
            tags(&vals),
            vec![
                ("metricsExporter.image.tag".into(), "none".into()),
                ("sidecarImage.tag".into(), "x".into()),
                ("worker.image".into(), "none".into()),
            ]
        );
        assert_eq!(tag_of_reference("reg:5000/app"), None);
        assert_eq!(tag_of_reference("app:1@sha256:abc"), Some("1"));
    }

    #[test]
    fn sequences_keep_their_items_and_truthiness_follows_helm() {
        let vals =
            v("args: [--insecure, x]\non: true\noff: false\nzero: 0\nstr: 'false'\nempty: []\n");
        let args = vals.get("args").unwrap();
        assert_eq!(
            args.items()
                .iter()
                .filter_map(Values::text)
                .collect::<Vec<_>>(),
            vec!["--insecure", "x"]
        );
        assert!(args.is_truthy() && vals.get("on").unwrap().is_truthy());
        assert!(
            vals.get("str").unwrap().is_truthy(),
            "a non-empty string is truthy"
        );
        for k in ["off", "zero", "empty"] {
            assert!(!vals.get(k).unwrap().is_truthy(), "{k}");
        }
        assert_eq!(vals.path(&["args"]).and_then(Values::span), args.span());
    }

    #[test]
    fn set_paths_split_on_unescaped_dots() {
        assert_eq!(split_set_path(r"a.b\.c.d"), vec!["a", "b.c", "d"]);
    }

    /// Random values trees over a few keys, every leaf at its own span.
    struct Trees {
        state: u64,
        next_span: usize,
    }

    impl Trees {
        fn roll(&mut self, n: u64) -> u64 {
            // xorshift64: deterministic, no dependency.
            self.state ^= self.state << 13;
            self.state ^= self.state >> 7;
            self.state ^= self.state << 17;
            self.state % n
        }

        fn scalar(&mut self, text: &str) -> Values {
            self.next_span += 1;
            Values::Scalar {
                text: text.into(),
                is_str: true,
                span: Span::new(FileId(0), self.next_span, self.next_span + 1),
            }
        }

        fn tree(&mut self, depth: u32) -> Values {
            match self.roll(if depth == 0 { 4 } else { 7 }) {
                0 => Values::Null,
                1 => self.scalar("none"),
                2 => self.scalar("reg/app:v1"),
                3 => Values::Seq(Span::new(FileId(0), 0, 0), Arc::from([])),
                _ => {
                    let keys = ["image", "tag", "a", "sidecarImage"];
                    let n = self.roll(4);
                    let mut entries: Entries = Vec::new();
                    for _ in 0..n {
                        let key = keys[self.roll(4) as usize];
                        if entries.iter().all(|(k, _)| k != key) {
                            let v = self.tree(depth - 1);
                            entries.push((key.into(), v));
                        }
                    }
                    Values::map(entries)
                }
            }
        }
    }

    fn sorted(tags: Vec<ImageTag>) -> Vec<(u32, String, String)> {
        let mut out: Vec<_> = tags
            .into_iter()
            .map(|t| (t.span.start, t.key(), t.tag.to_string()))
            .collect();
        out.sort();
        out
    }

    #[test]
    fn merged_tags_are_the_tags_of_the_merged_values() {
        let mut trees = Trees {
            state: 0x9e37_79b9_7f4a_7c15,
            next_span: 0,
        };
        let mut compared = 0;
        for _ in 0..5000 {
            let layers: Vec<Values> = (0..3).map(|_| trees.tree(3)).collect();
            let mut merged = Values::empty_map();
            merged.merge(layers[0].clone());
            let mut tags = image_tags(&layers[0]);
            for layer in &layers[1..] {
                merged.merge(layer.clone());
                merge_image_tags(&mut tags, layer);
            }
            let expected = sorted(image_tags(&merged));
            compared += expected.len();
            assert_eq!(sorted(tags), expected, "layers {layers:?}");
        }
        assert!(compared > 500, "the trees hold tags ({compared})");
    }

    #[test]
    fn a_layer_overrides_a_tag_at_its_path_or_above_it() {
        let base = v("x:\n  image:\n    tag: none\ny:\n  image: reg/app:none\n");
        let mut tags = image_tags(&base);
        merge_image_tags(&mut tags, &v("x:\n  image:\n    repository: r\ny: {}\n"));
        assert_eq!(tags.len(), 2, "maps around a tag keep it");
        merge_image_tags(&mut tags, &v("x:\n  image: reg/app:v2\n"));
        let kept: Vec<_> = tags.iter().map(|t| (t.key(), t.tag.as_str())).collect();
        assert_eq!(
            kept,
            vec![
                ("y.image".to_string(), "none"),
                ("x.image".to_string(), "v2")
            ]
        );
        merge_image_tags(&mut tags, &v("y: null\nx: 1\n"));
        assert!(tags.is_empty());
        let mut set = Values::empty_map();
        set.set_path("a.b", v("1"));
        assert_eq!(Values::at_set_path("a.b", v("1")), Some(set.clone()));
        assert_eq!(Values::at_set_path("a[0].b", v("1")), None);
    }
}
