//! Edits of span trees the transformers share: set a mapping key, reach every node at a field
//! spec path.

use super::map;
use crate::source::Span;
use crate::yaml::{Entry, Node, ScalarStyle, Value, edit_items};

/// Sets `key` of mapping `m` to `value` (added at the end when absent).
pub(crate) fn set_key(m: &mut Node, key: &str, value: Node) {
    let Value::Map(entries) = &mut m.value else {
        return;
    };
    match entries
        .iter()
        .rposition(|e| e.key.scalar_text() == Some(key))
    {
        Some(i) => entries[i].value = value,
        None => {
            let key = Node::scalar(value.span, key.into(), ScalarStyle::Plain);
            edit_items(entries, |entries| entries.push(Entry::new(key, value)));
        }
    }
}

/// Calls `f` on every node at `path` (lists met on the way are crossed), creating the missing
/// mappings and the last field (as null) when `create`.
pub(crate) fn set_at(
    node: &mut Node,
    path: &[String],
    create: bool,
    span: Span,
    f: &mut dyn FnMut(&mut Node),
) {
    let Some((first, rest)) = path.split_first() else {
        f(node);
        return;
    };
    if node.is_null() && create {
        *node = map(span);
    }
    match &mut node.value {
        Value::Seq(items) => {
            for item in items.iter_mut() {
                set_at(item, path, create, span, f);
            }
        }
        Value::Map(entries) => {
            if let Some(i) = entries
                .iter()
                .rposition(|e| e.key.scalar_text() == Some(first.as_str()))
            {
                let value = &mut entries[i].value;
                if value.is_null() && !rest.is_empty() {
                    if !create {
                        return;
                    }
                    *value = map(span);
                }
                set_at(value, rest, create, span, f);
            } else if create {
                let value = if rest.is_empty() {
                    Node::scalar(span, "".into(), ScalarStyle::Plain)
                } else {
                    map(span)
                };
                let key = Node::scalar(span, first.as_str().into(), ScalarStyle::Plain);
                edit_items(entries, |e| e.push(Entry::new(key, value)));
                let last = entries.len() - 1;
                set_at(&mut entries[last].value, rest, create, span, f);
            }
        }
        Value::Scalar(_) => {}
    }
}
