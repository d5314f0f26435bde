//! The span-aware YAML tree that rules read.

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

/// A node's tag as written. Tags are rare: one pointer keeps every node 8 bytes smaller than
/// a `Box<str>` would.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag(Box<Box<str>>);

impl Tag {
    #[must_use]
    pub fn new(text: &str) -> Tag {
        Tag(Box::new(text.into()))
    }
}

impl std::ops::Deref for Tag {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

/// A scalar's text: inline up to 24 bytes, so most keys and values of a tree cost no
/// allocation of their own.
pub type ScalarText = compact_str::CompactString;

#[derive(Clone, Debug, PartialEq)]
pub struct Scalar {
    /// The value after escape processing and folding.
    pub text: ScalarText,
    pub style: ScalarStyle,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub key: Node,
    pub value: Node,
    /// True when the entry came from a `<<` merge key rather than being written in this map.
    pub merged: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Scalar(Scalar),
    Seq(Vec<Node>),
    Map(Vec<Entry>),
}

/// A YAML node. `span` covers the node's content in its file; for a node reached through an
/// alias, it is the span of the anchored definition, which is where a fix must edit.
/// Quoted scalars include their quotes; block scalars (`|`, `>`) start at their first content
/// character and end after their last line break; block collections end at their last child.
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub span: Span,
    /// The tag as written (`!reference`, `!!str`), if any.
    pub tag: Option<Tag>,
    /// Flow style (`{}` / `[]`) for collections.
    pub flow: bool,
    pub value: Value,
}

impl Node {
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
    pub fn as_scalar(&self) -> Option<&Scalar> {
        match &self.value {
            Value::Scalar(s) => Some(s),
            _ => None,
        }
    }

    /// The scalar's text, whatever its type (`true`, `1`, `abc`).
    #[must_use]
    pub fn scalar_text(&self) -> Option<&str> {
        self.as_scalar().map(|s| s.text.as_str())
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
        let s = self.as_scalar()?;
        if let Some(tag) = self.tag.as_deref() {
            match tag {
                "!!str" | "tag:yaml.org,2002:str" => return Some(Resolved::Str(&s.text)),
                "!!null" | "tag:yaml.org,2002:null" => return Some(Resolved::Null),
                _ => {}
            }
        }
        if s.style != ScalarStyle::Plain {
            return Some(Resolved::Str(&s.text));
        }
        Some(super::scalar::resolve_plain(&s.text))
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
            Value::Seq(items) => J::Array(items.iter().map(Node::to_json).collect()),
            Value::Map(entries) => {
                let mut map = serde_json::Map::new();
                for e in entries {
                    let key = match e.key.scalar_text() {
                        Some(k) => k.to_string(),
                        None => e.key.to_json().to_string(),
                    };
                    map.insert(key, e.value.to_json());
                }
                J::Object(map)
            }
        }
    }
}
