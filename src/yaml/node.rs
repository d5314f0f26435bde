//! The span-aware YAML tree that rules read.
//!
//! Trees of a large repository stay in memory for the whole run, so a node is kept to 40
//! bytes: its span, its value (a scalar's text inline up to 24 bytes, or an exact-size
//! collection), a one-byte set of flags (scalar style, flow style, merged entry, dropped text)
//! and a two-byte tag id. A map entry is two nodes, 80 bytes.

use std::collections::HashMap;
use std::sync::{LazyLock, RwLock};

use super::scalar::Resolved;
use crate::source::Span;

/// How a scalar was written. Quoted and block scalars are always strings.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ScalarStyle {
    Plain,
    SingleQuoted,
    DoubleQuoted,
    Literal,
    Folded,
}

impl ScalarStyle {
    const ALL: [ScalarStyle; 5] = [
        ScalarStyle::Plain,
        ScalarStyle::SingleQuoted,
        ScalarStyle::DoubleQuoted,
        ScalarStyle::Literal,
        ScalarStyle::Folded,
    ];
}

/// A node's tag as written (`!reference`, `!!str`), interned: tags are rare and few, and a
/// two-byte id keeps every node small. Ids live for the process; past [`Tag::MAX_DISTINCT`]
/// distinct tags, or for a tag longer than [`Tag::MAX_LEN`], the node keeps [`Tag::OTHER`],
/// which is still a tag but none that any rule reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Tag(std::num::NonZeroU16);

struct TagTable {
    texts: Vec<&'static str>,
    ids: HashMap<&'static str, Tag>,
}

static TAGS: LazyLock<RwLock<TagTable>> = LazyLock::new(|| {
    RwLock::new(TagTable {
        texts: vec!["", Tag::OTHER_TEXT],
        ids: HashMap::new(),
    })
});

impl Tag {
    /// Most distinct tags a process remembers.
    pub const MAX_DISTINCT: usize = 4096;
    /// Longest tag remembered as written.
    pub const MAX_LEN: usize = 256;
    const OTHER_TEXT: &'static str = "!<unrecorded>";
    /// The tag kept when a tag cannot be remembered.
    pub const OTHER: Tag = Tag(std::num::NonZeroU16::MIN);

    #[must_use]
    pub fn new(text: &str) -> Tag {
        if text.len() > Tag::MAX_LEN {
            return Tag::OTHER;
        }
        if let Some(tag) = TAGS.read().ok().and_then(|t| t.ids.get(text).copied()) {
            return tag;
        }
        let Ok(mut table) = TAGS.write() else {
            return Tag::OTHER;
        };
        if let Some(tag) = table.ids.get(text) {
            return *tag;
        }
        if table.texts.len() >= Tag::MAX_DISTINCT {
            return Tag::OTHER;
        }
        let id = u16::try_from(table.texts.len())
            .ok()
            .and_then(std::num::NonZeroU16::new)
            .map_or(Tag::OTHER, Tag);
        // Leaked on purpose: at most MAX_DISTINCT short strings per process.
        let text: &'static str = Box::leak(text.into());
        table.texts.push(text);
        table.ids.insert(text, id);
        id
    }

    #[must_use]
    pub fn as_str(self) -> &'static str {
        TAGS.read()
            .ok()
            .and_then(|t| t.texts.get(usize::from(self.0.get())).copied())
            .unwrap_or(Tag::OTHER_TEXT)
    }
}

/// A scalar's text: inline up to 24 bytes, so most keys and values of a tree cost no
/// allocation of their own.
pub type ScalarText = compact_str::CompactString;

/// A view of a scalar node: its text after escape processing and folding, and its style.
#[derive(Copy, Clone, Debug, PartialEq)]
pub struct Scalar<'a> {
    pub text: &'a ScalarText,
    pub style: ScalarStyle,
}

/// A node's value. Collections are allocated once at their exact size.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Scalar(ScalarText),
    Seq(Box<[Node]>),
    Map(Box<[Entry]>),
}

/// Edits an exact-size collection as a `Vec`. Trees are built once and rarely edited (a
/// kustomize patch, a test), so an edit may reallocate.
pub fn edit_items<T, R>(items: &mut Box<[T]>, f: impl FnOnce(&mut Vec<T>) -> R) -> R {
    let mut vec = std::mem::take(items).into_vec();
    let out = f(&mut vec);
    *items = vec.into_boxed_slice();
    out
}

/// A mapping entry. Whether it came from a `<<` merge key is a flag of its key node.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
}

impl Entry {
    #[must_use]
    pub fn new(key: Node, value: Node) -> Entry {
        Entry { key, value }
    }

    /// True when the entry came from a `<<` merge key rather than being written in this map.
    #[must_use]
    pub fn merged(&self) -> bool {
        self.key.flags & Node::MERGED != 0
    }

    pub fn set_merged(&mut self, merged: bool) {
        self.key.set_flag(Node::MERGED, merged);
    }
}

/// A YAML node. `span` covers the node's content in its file; for a node reached through an
/// alias, it is the span of the anchored definition, which is where a fix must edit.
/// Quoted scalars include their quotes; block scalars (`|`, `>`) start at their first content
/// character and end after their last line break; block collections end at their last child.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub value: Value,
    pub span: Span,
    tag: Option<Tag>,
    /// Bits 0-2: the scalar style; then `FLOW`, `MERGED` and `DROPPED`.
    flags: u8,
}

const _: () = assert!(std::mem::size_of::<Node>() == 40);
const _: () = assert!(std::mem::size_of::<Entry>() == 80);

impl Node {
    const STYLE: u8 = 0b111;
    const FLOW: u8 = 1 << 3;
    const MERGED: u8 = 1 << 4;
    const DROPPED: u8 = 1 << 5;

    /// A plain scalar (the style of an empty node too).
    #[must_use]
    pub fn scalar(span: Span, text: ScalarText, style: ScalarStyle) -> Node {
        Node {
            value: Value::Scalar(text),
            span,
            tag: None,
            flags: style as u8,
        }
    }

    /// A block collection or scalar with `value`; see [`Node::with_flow`] and
    /// [`Node::with_tag`].
    #[must_use]
    pub fn new(span: Span, value: Value) -> Node {
        Node {
            value,
            span,
            tag: None,
            flags: 0,
        }
    }

    #[must_use]
    pub fn with_tag(mut self, tag: Option<Tag>) -> Node {
        self.tag = tag;
        self
    }

    #[must_use]
    pub fn with_flow(mut self, flow: bool) -> Node {
        self.set_flag(Node::FLOW, flow);
        self
    }

    fn set_flag(&mut self, flag: u8, on: bool) {
        if on {
            self.flags |= flag;
        } else {
            self.flags &= !flag;
        }
    }

    /// The tag as written (`!reference`, `!!str`), if any.
    #[must_use]
    pub fn tag(&self) -> Option<&'static str> {
        self.tag.map(Tag::as_str)
    }

    /// The interned tag, to copy onto another node.
    #[must_use]
    pub fn tag_id(&self) -> Option<Tag> {
        self.tag
    }

    /// Flow style (`{}` / `[]`) for collections.
    #[must_use]
    pub fn flow(&self) -> bool {
        self.flags & Node::FLOW != 0
    }

    /// How a scalar was written (`Plain` for collections).
    #[must_use]
    pub fn style(&self) -> ScalarStyle {
        ScalarStyle::ALL
            .get(usize::from(self.flags & Node::STYLE))
            .copied()
            .unwrap_or(ScalarStyle::Plain)
    }

    /// True for a scalar whose text was dropped after the load because no reader declared it
    /// (see `repo::retention`): its text reads `""`, though the file's is longer.
    #[must_use]
    pub fn dropped(&self) -> bool {
        self.flags & Node::DROPPED != 0
    }

    /// Empties a scalar whose text the run does not keep, marking it [`Node::dropped`]; its
    /// span still covers the text as written.
    pub fn drop_text(&mut self) {
        if let Value::Scalar(text) = &mut self.value {
            *text = ScalarText::default();
            self.set_flag(Node::DROPPED, true);
        }
    }

    /// Sets a scalar's style.
    pub fn set_style(&mut self, style: ScalarStyle) {
        self.flags = (self.flags & !Node::STYLE) | style as u8;
    }

    #[must_use]
    pub fn as_map(&self) -> Option<&[Entry]> {
        match &self.value {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_seq(&self) -> Option<&[Node]> {
        match &self.value {
            Value::Seq(s) => Some(s),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_scalar(&self) -> Option<Scalar<'_>> {
        match &self.value {
            Value::Scalar(text) => Some(Scalar {
                text,
                style: self.style(),
            }),
            _ => None,
        }
    }

    /// The scalar's text, whatever its type (`true`, `1`, `abc`).
    #[must_use]
    pub fn scalar_text(&self) -> Option<&str> {
        match &self.value {
            Value::Scalar(text) => Some(text),
            _ => None,
        }
    }

    /// The value as a string, if it is a string after YAML 1.1 resolution.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self.resolve() {
            Some(Resolved::Str(s)) => Some(s),
            _ => None,
        }
    }

    #[must_use]
    pub fn as_bool(&self) -> Option<bool> {
        match self.resolve() {
            Some(Resolved::Bool(b)) => Some(b),
            _ => None,
        }
    }

    #[must_use]
    pub fn is_null(&self) -> bool {
        matches!(self.resolve(), Some(Resolved::Null))
    }

    /// Resolves a scalar by its style and tag; `None` for collections.
    #[must_use]
    pub fn resolve(&self) -> Option<Resolved<'_>> {
        let text = self.scalar_text()?;
        if let Some(tag) = self.tag() {
            match tag {
                "!!str" | "tag:yaml.org,2002:str" => return Some(Resolved::Str(text)),
                "!!null" | "tag:yaml.org,2002:null" => return Some(Resolved::Null),
                _ => {}
            }
        }
        if self.flags & Node::STYLE != ScalarStyle::Plain as u8 {
            return Some(Resolved::Str(text));
        }
        Some(super::scalar::resolve_plain(text))
    }

    /// Looks up `key` in a mapping; the last of duplicate keys wins, as in Kubernetes.
    #[must_use]
    pub fn get(&self, key: &str) -> Option<&Node> {
        self.entry(key).map(|e| &e.value)
    }

    #[must_use]
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.as_map()?
            .iter()
            .rev()
            .find(|e| e.key.scalar_text() == Some(key))
    }

    /// Follows a path of mapping keys.
    #[must_use]
    pub fn path(&self, keys: &[&str]) -> Option<&Node> {
        keys.iter().try_fold(self, |n, k| n.get(k))
    }

    /// `get(key)` as a string.
    #[must_use]
    pub fn get_str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Node::as_str)
    }

    /// Iterates over mapping entries as `(key text, entry)`.
    pub fn entries(&self) -> impl Iterator<Item = &Entry> {
        self.as_map().unwrap_or(&[]).iter()
    }

    /// Iterates over sequence items (nothing for other nodes).
    pub fn items(&self) -> impl Iterator<Item = &Node> {
        self.as_seq().unwrap_or(&[]).iter()
    }

    /// Every node of this subtree (keys included), without recursion.
    pub fn descendants(&self) -> impl Iterator<Item = &Node> {
        let mut stack = vec![self];
        std::iter::from_fn(move || {
            let node = stack.pop()?;
            match &node.value {
                Value::Scalar(_) => {}
                Value::Seq(items) => stack.extend(items),
                Value::Map(entries) => {
                    for e in entries {
                        stack.push(&e.key);
                        stack.push(&e.value);
                    }
                }
            }
            Some(node)
        })
    }

    /// Number of nodes in this subtree.
    #[must_use]
    pub fn size(&self) -> usize {
        self.descendants().count()
    }

    /// Converts to JSON the way sigs.k8s.io/yaml does (YAML 1.1 scalars, keys as strings).
    #[must_use]
    pub fn to_json(&self) -> serde_json::Value {
        self.to_json_keyed(false)
    }

    /// [`Node::to_json`]; `in_key` inside a non-scalar key, whose own non-scalar keys then
    /// become `"?"`: a key is JSON text in a string, and each level of keys in keys would
    /// escape the text below it again, doubling it (a 300-byte file made gigabytes).
    fn to_json_keyed(&self, in_key: bool) -> serde_json::Value {
        use serde_json::Value as J;
        match &self.value {
            Value::Scalar(_) => match self.resolve() {
                Some(Resolved::Null) | None => J::Null,
                Some(Resolved::Bool(b)) => J::Bool(b),
                Some(Resolved::Int(i)) => J::from(i),
                Some(Resolved::Float(f)) => serde_json::Number::from_f64(f)
                    .map_or_else(|| J::String(f.to_string()), J::Number),
                Some(Resolved::Str(s)) => J::String(s.to_string()),
            },
            Value::Seq(items) => J::Array(items.iter().map(|n| n.to_json_keyed(in_key)).collect()),
            Value::Map(entries) => {
                let mut map = serde_json::Map::new();
                for e in entries {
                    let key = match e.key.scalar_text() {
                        Some(k) => k.to_string(),
                        None if in_key => "?".to_string(),
                        None => e.key.to_json_keyed(true).to_string(),
                    };
                    map.insert(key, e.value.to_json_keyed(in_key));
                }
                J::Object(map)
            }
        }
    }
}
