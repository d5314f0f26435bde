//! Strategic merge as kustomize applies it (kyaml's `merge2`, lists growing by prepending): maps
//! merge key by key, a `null` deletes, `$patch: delete|replace` act on their map, and a list
//! merges only where the built-in kind's schema says so (by its merge key, or as a set of
//! primitives); every other list, and every list of a kind without a schema (CRDs, Argo CD's
//! kinds), is replaced. Nodes keep their spans: a value the patch sets points at the patch.

use super::schema::{self, FieldInfo};
use crate::yaml::{Entry, Node, Value};

fn directive(n: &Node) -> Option<&str> {
    n.get_str("$patch")
}

/// kyaml acts on `$patch` only; it keeps `$retainKeys`, `$setElementOrder/…` and
/// `$deleteFromPrimitiveList/…` as ordinary fields.
fn is_directive_key(k: &str) -> bool {
    k == "$patch"
}

/// New content from a patch as kustomize writes it: mappings without directives and null
/// values (lists are copied as written).
#[must_use]
pub fn clean(n: &Node) -> Node {
    let mut out = n.clone();
    let mut stack = vec![&mut out];
    while let Some(n) = stack.pop() {
        if let Value::Map(entries) = &mut n.value {
            crate::yaml::edit_items(entries, |entries| {
                entries.retain(|e| {
                    !e.key.scalar_text().is_some_and(is_directive_key) && !e.value.is_null()
                });
            });
            stack.extend(entries.iter_mut().map(|e| &mut e.value));
        }
    }
    out
}

/// Merges `patch` into `dest`, the whole object of type `ty` (`None`: no schema); `None` when
/// the patch deletes it (`$patch: delete`).
#[must_use]
pub fn merge(dest: &Node, patch: &Node, ty: Option<&str>) -> Option<Node> {
    merge_typed(dest, patch, ty)
}

fn merge_typed(dest: &Node, patch: &Node, ty: Option<&str>) -> Option<Node> {
    match (&dest.value, &patch.value) {
        (Value::Map(d), Value::Map(p)) => {
            match directive(patch) {
                Some("delete") => return None,
                Some("replace") => return Some(clean(patch)),
                _ => {}
            }
            let mut entries: Vec<Entry> = d.to_vec();
            for pe in p {
                let Some(key) = pe.key.scalar_text() else {
                    continue;
                };
                if is_directive_key(key) {
                    continue;
                }
                let info = ty.and_then(|t| schema::field(t, key));
                let at = entries
                    .iter()
                    .rposition(|e| e.key.scalar_text() == Some(key));
                if pe.value.is_null() {
                    if let Some(i) = at {
                        entries.remove(i);
                    }
                    continue;
                }
                match at {
                    Some(i) => match merge_field(&entries[i].value, &pe.value, info) {
                        Some(v) => entries[i].value = v,
                        None => {
                            entries.remove(i);
                        }
                    },
                    None => {
                        if directive(&pe.value) == Some("delete") {
                            continue;
                        }
                        entries.push(Entry::new(pe.key.clone(), new_value(&pe.value, info)));
                    }
                }
            }
            Some(
                Node::new(dest.span, Value::Map(entries.into_boxed_slice()))
                    .with_tag(dest.tag_id())
                    .with_flow(dest.flow()),
            )
        }
        _ => {
            if patch.as_map().is_some() && directive(patch) == Some("delete") {
                return None;
            }
            Some(clean(patch))
        }
    }
}

/// A field the patch adds: cleaned, and a merging list's items without `$patch: delete`.
fn new_value(patch: &Node, info: Option<FieldInfo>) -> Node {
    if let (Some(info), Some(items)) = (info, patch.as_seq()) {
        if info.list && info.merge {
            let kept: Vec<Node> = items
                .iter()
                .filter(|i| directive(i) != Some("delete"))
                .map(clean)
                .collect();
            return Node::new(patch.span, Value::Seq(kept.into_boxed_slice()));
        }
    }
    clean(patch)
}

/// Merges one field's value.
fn merge_field(dest: &Node, patch: &Node, info: Option<FieldInfo>) -> Option<Node> {
    let Some(info) = info else {
        return merge_typed(dest, patch, None);
    };
    match (&dest.value, &patch.value) {
        (Value::Seq(d), Value::Seq(p)) if info.list && info.merge => {
            Some(merge_list(dest, d, p, info))
        }
        (Value::Map(_), Value::Map(_)) if !info.list => merge_typed(dest, patch, info.target),
        _ => merge_typed(dest, patch, None),
    }
}

/// A merging list: the patch's items first, in its order, each merged with the item of `dest`
/// that has its key, then `dest`'s other items in their order (kyaml prepends); an item with
/// `$patch: delete` removes its match. Without a merge key, primitives form a set.
fn merge_list(dest: &Node, d: &[Node], p: &[Node], info: FieldInfo) -> Node {
    let key_of = |n: &Node| -> Option<String> {
        match info.key {
            Some(k) => n.get(k).and_then(Node::scalar_text).map(str::to_string),
            None => n.scalar_text().map(str::to_string),
        }
    };
    if let [only] = p {
        if directive(only) == Some("replace") && info.key.is_some() {
            // `- $patch: replace` replaces the whole list with the patch's other items.
            return Node::new(dest.span, Value::Seq(Box::default()));
        }
    }
    let replace = p
        .iter()
        .any(|i| directive(i) == Some("replace") && i.as_map().is_some_and(|m| m.len() == 1));
    if replace {
        let kept: Vec<Node> = p
            .iter()
            .filter(|i| directive(i).is_none())
            .map(clean)
            .collect();
        return Node::new(dest.span, Value::Seq(kept.into_boxed_slice()));
    }
    let mut out: Vec<Node> = Vec::with_capacity(d.len() + p.len());
    let mut seen: Vec<String> = Vec::new();
    let mut deleted: Vec<String> = Vec::new();
    for item in p {
        let Some(k) = key_of(item) else {
            out.push(clean(item));
            continue;
        };
        if seen.contains(&k) {
            continue;
        }
        seen.push(k.clone());
        if directive(item) == Some("delete") {
            deleted.push(k);
            continue;
        }
        match d.iter().find(|x| key_of(x).as_deref() == Some(k.as_str())) {
            Some(existing) if info.key.is_some() => {
                if let Some(m) = merge_typed(existing, item, info.target) {
                    out.push(m);
                } else {
                    deleted.push(k);
                }
            }
            Some(existing) => out.push(existing.clone()),
            None => out.push(clean(item)),
        }
    }
    for item in d {
        match key_of(item) {
            Some(k) if seen.contains(&k) || deleted.contains(&k) => {}
            _ => out.push(item.clone()),
        }
    }
    Node::new(dest.span, Value::Seq(out.into_boxed_slice()))
        .with_tag(dest.tag_id())
        .with_flow(dest.flow())
}
