//! RFC 6902 JSON patches on span trees, as kustomize applies them: a value the patch adds keeps
//! the patch's span.

use crate::source::Span;
use crate::yaml::{Entry, Node, ScalarStyle, Value, edit_items};

/// Applies RFC 6902 operations in order; `Err(i)` (and `root` left half-done: the caller
/// works on a copy) when operation `i` fails, as kustomize then fails the build.
pub fn apply(root: &mut Node, ops: &[Node]) -> Result<(), usize> {
    for (i, op) in ops.iter().enumerate() {
        apply_one(root, op).ok_or(i)?;
    }
    Ok(())
}

fn apply_one(root: &mut Node, op: &Node) -> Option<()> {
    let path_node = op.get("path")?;
    let path = pointer(path_node.as_str()?)?;
    match op.get_str("op")? {
        "add" => add(root, &path, op.get("value")?.clone(), path_node.span)?,
        "remove" => {
            remove(root, &path)?;
        }
        "replace" => {
            let value = op.get("value")?.clone();
            match get_mut(root, &path) {
                Some(target) => *target = value,
                // kustomize's JSON patch library adds a missing mapping key on replace.
                None => add(root, &path, value, path_node.span)?,
            }
        }
        "move" => {
            let from = pointer(op.get_str("from")?)?;
            let value = remove(root, &from)?;
            add(root, &path, value, path_node.span)?;
        }
        "copy" => {
            let from = pointer(op.get_str("from")?)?;
            let value = get_mut(root, &from)?.clone();
            add(root, &path, value, path_node.span)?;
        }
        "test" => {
            let target = get_mut(root, &path)?;
            if target.to_json() != op.get("value")?.to_json() {
                return None;
            }
        }
        _ => return None,
    }
    Some(())
}

/// A JSON pointer's tokens (`~1` is `/`, `~0` is `~`).
pub(crate) fn pointer(p: &str) -> Option<Vec<String>> {
    if p.is_empty() {
        return Some(Vec::new());
    }
    let rest = p.strip_prefix('/')?;
    Some(
        rest.split('/')
            .map(|t| t.replace("~1", "/").replace("~0", "~"))
            .collect(),
    )
}

fn get_mut<'n>(root: &'n mut Node, path: &[String]) -> Option<&'n mut Node> {
    let mut cur = root;
    for token in path {
        cur = match &mut cur.value {
            Value::Map(entries) => {
                let i = entries
                    .iter()
                    .rposition(|e| e.key.scalar_text() == Some(token.as_str()))?;
                &mut entries[i].value
            }
            Value::Seq(items) => {
                let i = index(token)?;
                items.get_mut(i)?
            }
            Value::Scalar(_) => return None,
        };
    }
    Some(cur)
}

pub(crate) fn index(token: &str) -> Option<usize> {
    if token.len() > 1 && token.starts_with('0') {
        return None;
    }
    token.parse().ok()
}

fn add(root: &mut Node, path: &[String], value: Node, key_span: Span) -> Option<()> {
    let Some((last, parent)) = path.split_last() else {
        *root = value;
        return Some(());
    };
    let parent = get_mut(root, parent)?;
    match &mut parent.value {
        Value::Map(entries) => {
            match entries
                .iter()
                .rposition(|e| e.key.scalar_text() == Some(last.as_str()))
            {
                Some(i) => entries[i].value = value,
                None => edit_items(entries, |entries| {
                    entries.push(Entry::new(scalar(last, key_span), value));
                }),
            }
        }
        Value::Seq(items) => {
            let at = if last == "-" {
                items.len()
            } else {
                index(last).filter(|i| *i <= items.len())?
            };
            edit_items(items, |items| items.insert(at, value));
        }
        Value::Scalar(_) => {
            // `null` parent: kustomize's library fails too.
            return None;
        }
    }
    Some(())
}

fn remove(root: &mut Node, path: &[String]) -> Option<Node> {
    let (last, parent) = path.split_last()?;
    let parent = get_mut(root, parent)?;
    match &mut parent.value {
        Value::Map(entries) => {
            let i = entries
                .iter()
                .rposition(|e| e.key.scalar_text() == Some(last.as_str()))?;
            Some(edit_items(entries, |entries| entries.remove(i)).value)
        }
        Value::Seq(items) => {
            let i = index(last)?;
            (i < items.len()).then(|| edit_items(items, |items| items.remove(i)))
        }
        Value::Scalar(_) => None,
    }
}

/// A plain scalar at `span`.
fn scalar(text: &str, span: Span) -> Node {
    let style = if text.is_empty() {
        ScalarStyle::DoubleQuoted
    } else {
        ScalarStyle::Plain
    };
    Node::scalar(span, text.into(), style)
}
