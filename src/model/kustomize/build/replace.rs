//! `replacements` (kustomize's `api/filters/replacement`): a value read from one object is
//! written into fields of others, with `delimiter`/`index` and `create` options.

use super::{Builder, Object, select, string};
use crate::model::paths;
use crate::yaml::{Node, ScalarStyle, Value};

pub(super) fn run(b: &mut Builder<'_>, k: usize, list: &Node, objects: &mut [Object]) {
    let dir = b.ks.node(k).dir.clone();
    for item in list.items() {
        if let Some(path) = item.get("path").and_then(Node::as_str) {
            if !b.may_load(&dir, path) {
                b.error(item.span, super::outside_message(path, &dir));
                continue;
            }
            let Some(rel) = paths::join(&dir, path) else {
                b.error(item.span, format!("`{path}` is outside the repository"));
                continue;
            };
            let Some(file) = b.repo.file_by_path(&rel).map(|f| f.id) else {
                b.error(item.span, format!("replacement file `{path}` not found"));
                continue;
            };
            let docs: Vec<Node> = b
                .repo
                .file_doc_range(file)
                .map(|i| (*b.repo.docs[i].root).clone())
                .collect();
            for d in &docs {
                if d.as_seq().is_some() {
                    for r in d.items() {
                        replace(b, r, objects);
                    }
                } else {
                    replace(b, d, objects);
                }
            }
            continue;
        }
        replace(b, item, objects);
    }
}

/// A `source` or `select`/`reject` id: fields compared exactly when given.
fn id_selects(sel: &Node, o: &Object) -> bool {
    let (group, version) = o.group_version();
    let eq = |key: &str, value: &str| sel.get_str(key).is_none_or(|v| v.is_empty() || v == value);
    let name_ok = sel
        .get_str("name")
        .is_none_or(|n| n.is_empty() || o.names.iter().any(|x| x == n) || o.name() == n);
    let ns = o.namespace().unwrap_or("default");
    let ns_ok = sel.get_str("namespace").is_none_or(|n| {
        n.is_empty() || n == ns || o.original_namespace.as_deref().unwrap_or("default") == n
    });
    eq("group", group) && eq("version", version) && eq("kind", o.kind()) && name_ok && ns_ok
}

fn labels_select(sel: &Node, o: &Object) -> bool {
    let labels = sel
        .get_str("labelSelector")
        .is_none_or(|s| select::label_selector(s, o.root.path(&["metadata", "labels"])));
    let annotations = sel
        .get_str("annotationSelector")
        .is_none_or(|s| select::label_selector(s, o.root.path(&["metadata", "annotations"])));
    labels && annotations
}

fn replace(b: &mut Builder<'_>, r: &Node, objects: &mut [Object]) {
    let (Some(source), Some(targets)) = (r.get("source"), r.get("targets")) else {
        b.error(r.span, "a replacement needs a `source` and `targets`");
        return;
    };
    let matches: Vec<usize> = objects
        .iter()
        .enumerate()
        .filter(|(_, o)| id_selects(source, o))
        .map(|(i, _)| i)
        .collect();
    let src = match matches.as_slice() {
        [one] => *one,
        [] => {
            b.unmatched(source.span, "nothing selected by the replacement source");
            return;
        }
        _ => {
            b.unmatched(source.span, "multiple matches for the replacement source");
            return;
        }
    };
    let field_path = source.get_str("fieldPath").unwrap_or("metadata.name");
    let path = split(field_path);
    let Some(mut value) = lookup(&objects[src].root, &path)
        .cloned()
        .filter(|v| !v.is_null() && v.as_map().is_none_or(|m| !m.is_empty()))
    else {
        b.unmatched(
            source.span,
            format!("fieldPath `{field_path}` is missing for replacement source"),
        );
        return;
    };
    if let Some(delim) = source
        .path(&["options", "delimiter"])
        .and_then(Node::as_str)
        .filter(|d| !d.is_empty())
    {
        let index = source
            .path(&["options", "index"])
            .and_then(|n| n.scalar_text()?.parse::<i64>().ok())
            .unwrap_or(0);
        let parts: Vec<&str> = value.scalar_text().unwrap_or("").split(delim).collect();
        let Some(part) = usize::try_from(index).ok().and_then(|i| parts.get(i)) else {
            b.error(
                source.span,
                format!("options.index {index} is out of bounds"),
            );
            return;
        };
        value = Node::scalar(value.span, (*part).into(), value.style());
    }
    for t in targets.items() {
        let Some(select) = t.get("select") else {
            b.error(t.span, "target must specify resources to select");
            continue;
        };
        let rejects: Vec<&Node> = t
            .get("reject")
            .map(|r| r.items().collect())
            .unwrap_or_default();
        let paths: Vec<String> = match t.get("fieldPaths") {
            Some(list) => list
                .items()
                .filter_map(Node::as_str)
                .map(str::to_string)
                .collect(),
            None => vec!["metadata.name".into()],
        };
        let create = t
            .path(&["options", "create"])
            .and_then(Node::as_bool)
            .unwrap_or(false);
        let delim = t
            .path(&["options", "delimiter"])
            .and_then(Node::as_str)
            .filter(|d| !d.is_empty());
        let index = t
            .path(&["options", "index"])
            .and_then(|n| n.scalar_text()?.parse::<i64>().ok())
            .unwrap_or(0);
        for o in objects.iter_mut() {
            let id_rejected = rejects.iter().any(|rj| {
                let has_id = ["group", "version", "kind", "name", "namespace"]
                    .iter()
                    .any(|k| rj.get(k).is_some());
                has_id && id_selects(rj, o)
            });
            let label_rejected = rejects.iter().any(|rj| {
                (rj.get("labelSelector").is_some() || rj.get("annotationSelector").is_some())
                    && labels_select(rj, o)
            });
            if !id_selects(select, o) || !labels_select(select, o) || id_rejected || label_rejected
            {
                continue;
            }
            for fp in &paths {
                let mut found = 0;
                set_path(&mut o.root, &split(fp), create, &value, &mut |target| {
                    found += 1;
                    write(target, &value, delim, index);
                });
                if found == 0 {
                    let verb = if create { "find or create" } else { "find" };
                    b.unmatched(
                        t.span,
                        format!("unable to {verb} field `{fp}` in replacement target"),
                    );
                }
            }
        }
    }
}

/// Writes `value` into `target`: a scalar keeps its style and takes the text (or one part of
/// it, with a delimiter); anything else is replaced.
fn write(target: &mut Node, value: &Node, delim: Option<&str>, index: i64) {
    if let (Some(d), Some(text)) = (delim, target.scalar_text()) {
        let mut parts: Vec<String> = text.split(d).map(str::to_string).collect();
        let v = value.scalar_text().unwrap_or("").to_string();
        match usize::try_from(index) {
            Err(_) => parts.insert(0, v),
            Ok(i) if i >= parts.len() => parts.push(v),
            Ok(i) => parts[i] = v,
        }
        *target = string(&parts.join(d), value.span);
        return;
    }
    match (&target.value, &value.value) {
        (Value::Scalar(_), Value::Scalar(text)) => {
            // kyaml sets the text and keeps the target's style (a created field is plain).
            let style = if target.is_null() {
                ScalarStyle::Plain
            } else {
                target.style()
            };
            *target = Node::scalar(value.span, text.clone(), style);
        }
        _ => *target = value.clone(),
    }
}

/// kyaml's `SmarterPathSplitter`: `.`-separated, brackets kept whole.
fn split(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut depth = 0usize;
    for c in path.chars() {
        match c {
            '[' => {
                depth += 1;
                cur.push(c);
            }
            ']' => {
                depth = depth.saturating_sub(1);
                cur.push(c);
            }
            '.' if depth == 0 => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out
}

/// A list item selector `[k=v]` (or `[=v]` for a primitive).
fn item_matches(item: &Node, sel: &str) -> bool {
    let Some((k, v)) = sel.split_once('=') else {
        return false;
    };
    if k.is_empty() {
        return item.scalar_text() == Some(v);
    }
    item.get(k).and_then(Node::scalar_text) == Some(v)
}

fn lookup<'n>(node: &'n Node, path: &[String]) -> Option<&'n Node> {
    let Some((first, rest)) = path.split_first() else {
        return Some(node);
    };
    let next = match (
        &node.value,
        first.strip_prefix('[').and_then(|s| s.strip_suffix(']')),
    ) {
        (Value::Seq(items), Some(sel)) => items.iter().find(|i| item_matches(i, sel))?,
        (Value::Seq(items), None) => items.get(first.parse::<usize>().ok()?)?,
        // `[a.b]` names a mapping key that holds dots.
        (Value::Map(_), Some(key)) if !key.contains('=') => node.get(key)?,
        (Value::Map(_), _) => node.get(first)?,
        _ => return None,
    };
    lookup(next, rest)
}

/// Calls `f` on every node at `path` (`*` any key or item, `[k=v]` matching items, an index);
/// with `create`, missing map fields are made (the last one as `value`'s kind).
fn set_path(
    node: &mut Node,
    path: &[String],
    create: bool,
    value: &Node,
    f: &mut dyn FnMut(&mut Node),
) {
    let Some((first, rest)) = path.split_first() else {
        f(node);
        return;
    };
    if node.is_null() && create {
        *node = super::map(value.span);
    }
    let bracket = first.strip_prefix('[').and_then(|s| s.strip_suffix(']'));
    // `[a.b]` names a mapping key that holds dots.
    let key = match bracket {
        Some(k) if !k.contains('=') => k,
        _ => first.as_str(),
    };
    match &mut node.value {
        Value::Seq(items) => {
            let mut hits = 0;
            for (i, item) in items.iter_mut().enumerate() {
                let hit = match bracket {
                    Some(sel) => item_matches(item, sel),
                    None => first == "*" || first.parse::<usize>().ok() == Some(i),
                };
                if hit {
                    hits += 1;
                    set_path(item, rest, create, value, f);
                }
            }
            // With `create`, `[k=v]` that matches nothing appends `{k: v}`.
            if let (0, true, Some((k, v))) = (hits, create, bracket.and_then(|b| b.split_once('=')))
            {
                if !k.is_empty() {
                    let mut item = super::map(value.span);
                    super::tree::set_key(&mut item, k, string(v, value.span));
                    crate::yaml::edit_items(items, |items| items.push(item));
                    let last = items.len() - 1;
                    set_path(&mut items[last], rest, create, value, f);
                }
            }
        }
        Value::Map(entries) => {
            if first == "*" {
                for e in entries.iter_mut() {
                    set_path(&mut e.value, rest, create, value, f);
                }
                return;
            }
            if let Some(i) = entries
                .iter()
                .rposition(|e| e.key.scalar_text() == Some(key))
            {
                set_path(&mut entries[i].value, rest, create, value, f);
            } else if create && !key.contains('=') {
                let new = if rest.is_empty() {
                    Node::scalar(value.span, "".into(), ScalarStyle::Plain)
                } else {
                    super::map(value.span)
                };
                let key = Node::scalar(value.span, key.into(), ScalarStyle::Plain);
                crate::yaml::edit_items(entries, |e| e.push(crate::yaml::Entry::new(key, new)));
                let last = entries.len() - 1;
                set_path(&mut entries[last].value, rest, create, value, f);
            }
        }
        Value::Scalar(_) => {}
    }
}
