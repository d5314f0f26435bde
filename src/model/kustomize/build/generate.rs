//! `configMapGenerator` and `secretGenerator` (kustomize's `api/kv` and `generators`), and the
//! content hash kustomize appends to generated names (`api/hasher/hasher.go`).

use super::{Builder, Generated, Object, map, string};
use crate::source::Span;
use crate::yaml::{Entry, Node, ScalarStyle, Value, edit_items};

pub(super) fn run(b: &mut Builder<'_>, k: usize, tree: &Node, objects: &mut Vec<Object>) {
    let options = tree.get("generatorOptions");
    for (field, kind) in [
        ("configMapGenerator", "ConfigMap"),
        ("secretGenerator", "Secret"),
    ] {
        for g in tree.get(field).map(Node::items).into_iter().flatten() {
            generate(b, k, kind, g, options, objects);
        }
    }
}

/// One generator item.
fn generate(
    b: &mut Builder<'_>,
    k: usize,
    kind: &str,
    g: &Node,
    global: Option<&Node>,
    objects: &mut Vec<Object>,
) {
    let Some(name) = g.get_str("name") else {
        b.error(g.span, format!("a {kind} generator needs a `name`"));
        return;
    };
    let span = g.span;
    let mut pairs: Vec<(String, String, Span)> = Vec::new();
    let dir = b.ks.node(k).dir.clone();
    for env in g
        .get("envs")
        .map(Node::items)
        .into_iter()
        .flatten()
        .chain(g.get("env"))
    {
        let Some(path) = env.as_str() else { continue };
        let Some(text) = b.read(&dir, path, env.span) else {
            continue;
        };
        for line in text.lines() {
            let line = line.trim_start_matches('\u{feff}').trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            match line.split_once('=') {
                Some((key, value)) => pairs.push((key.to_string(), value.to_string(), env.span)),
                None => pairs.push((line.to_string(), String::new(), env.span)),
            }
        }
    }
    for lit in g.get("literals").map(Node::items).into_iter().flatten() {
        let Some(text) = lit.as_str() else { continue };
        let Some((key, value)) = text.split_once('=') else {
            b.error(lit.span, format!("literal `{text}` is not `key=value`"));
            continue;
        };
        pairs.push((key.to_string(), unquote(value), lit.span));
    }
    for file in g.get("files").map(Node::items).into_iter().flatten() {
        let Some(text) = file.as_str() else { continue };
        let (key, path) = match text.split_once('=') {
            Some((key, path)) => (key.to_string(), path),
            None => (text.rsplit('/').next().unwrap_or(text).to_string(), text),
        };
        if let Some(content) = b.read(&dir, path, file.span) {
            pairs.push((key, content, file.span));
        }
    }
    let opt = |key: &str| -> Option<&Node> {
        g.path(&["options", key])
            .or_else(|| global.and_then(|o| o.get(key)))
    };
    // kustomize's `MergeGlobalOptionsIntoLocal`: either one disables the hash.
    let disabled = |n: Option<&Node>| n.and_then(Node::as_bool).unwrap_or(false);
    let hash = !disabled(g.path(&["options", "disableNameSuffixHash"]))
        && !disabled(global.and_then(|o| o.get("disableNameSuffixHash")));
    let behavior = g.get_str("behavior").unwrap_or("create");
    let namespace = g.get_str("namespace").filter(|n| !n.is_empty());
    let mut root = map(span);
    super::tree::set_key(&mut root, "apiVersion", string("v1", span));
    super::tree::set_key(&mut root, "kind", string(kind, span));
    let mut meta = map(span);
    super::tree::set_key(
        &mut meta,
        "name",
        string(name, g.get("name").map_or(span, |n| n.span)),
    );
    if let Some(ns) = namespace {
        super::tree::set_key(&mut meta, "namespace", string(ns, span));
    }
    for (key, field) in [("labels", "labels"), ("annotations", "annotations")] {
        let mut m = map(span);
        for source in [global.and_then(|o| o.get(key)), g.path(&["options", key])] {
            for e in source.map(Node::entries).into_iter().flatten() {
                if let Some(k) = e.key.scalar_text() {
                    super::tree::set_key(
                        &mut m,
                        k,
                        string(e.value.scalar_text().unwrap_or(""), e.value.span),
                    );
                }
            }
        }
        if m.as_map().is_some_and(|e| !e.is_empty()) {
            super::tree::set_key(&mut meta, field, m);
        }
    }
    super::tree::set_key(&mut root, "metadata", meta);
    let mut data = map(span);
    for (key, value, at) in &pairs {
        let value = if kind == "Secret" {
            base64_lines(value.as_bytes())
        } else {
            value.clone()
        };
        set_block(&mut data, key, &value, *at);
    }
    if kind == "Secret" {
        let ty = g.get_str("type").unwrap_or("Opaque");
        super::tree::set_key(&mut root, "type", string(ty, span));
    }
    if opt("immutable").and_then(Node::as_bool) == Some(true) {
        super::tree::set_key(
            &mut root,
            "immutable",
            Node::scalar(span, "true".into(), ScalarStyle::Plain),
        );
    }
    let mut new = Object::from_tree(root, None);
    new.generated = Some(Generated { hash });
    let same = |o: &Object| {
        o.kind() == kind
            && o.names.first().map(String::as_str) == Some(name)
            && o.namespace().unwrap_or("default") == namespace.unwrap_or("default")
    };
    // kustomize reads any other behavior as `create`.
    match behavior {
        other if other != "merge" && other != "replace" => {
            if !pairs_unique(b, &pairs) {
                return;
            }
            if objects.iter().any(same) {
                b.error(
                    span,
                    format!("may not add resource with an already registered id: {kind} `{name}`"),
                );
                return;
            }
            if !pairs.is_empty() {
                super::tree::set_key(&mut new.root, "data", data);
            }
            objects.push(new);
        }
        _ => {
            let Some(existing) = objects.iter_mut().find(|o| same(o)) else {
                b.unmatched(
                    span,
                    format!("{kind} `{name}` does not exist; cannot {behavior} it"),
                );
                return;
            };
            if behavior == "replace" {
                existing.root = new.root;
                if !pairs.is_empty() {
                    super::tree::set_key(&mut existing.root, "data", data);
                }
            } else {
                merge_into(&mut existing.root, &data, &new.root);
            }
            existing.generated = Some(Generated {
                hash: hash && existing.generated.is_some_and(|g| g.hash),
            });
        }
    }
}

/// Base64 as kustomize writes Secret data: past 70 characters, lines of 70, each ending with
/// a line break.
fn base64_lines(bytes: &[u8]) -> String {
    const LINE: usize = 70;
    let text = data_encoding::BASE64.encode(bytes);
    if text.len() <= LINE {
        return text;
    }
    let mut out = String::with_capacity(text.len() + text.len() / LINE + 1);
    for chunk in text.as_bytes().chunks(LINE) {
        out.push_str(std::str::from_utf8(chunk).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// kustomize rejects a key given twice by one generator.
fn pairs_unique(b: &mut Builder<'_>, pairs: &[(String, String, Span)]) -> bool {
    for (i, (key, _, at)) in pairs.iter().enumerate() {
        if pairs[..i].iter().any(|(k, _, _)| k == key) {
            b.error(*at, format!("key `{key}` already exists in this generator"));
            return false;
        }
    }
    true
}

/// `merge`: the new data's keys and the options' labels and annotations over the existing.
fn merge_into(existing: &mut Node, data: &Node, new: &Node) {
    if let Some(entries) = data.as_map().filter(|e| !e.is_empty()) {
        let mut current = existing
            .get("data")
            .cloned()
            .unwrap_or_else(|| map(data.span));
        if current.is_null() {
            current = map(data.span);
        }
        for e in entries {
            if let Some(k) = e.key.scalar_text() {
                super::tree::set_key(&mut current, k, e.value.clone());
            }
        }
        super::tree::set_key(existing, "data", current);
    }
    for key in ["labels", "annotations"] {
        let Some(add) = new.path(&["metadata", key]) else {
            continue;
        };
        super::tree::set_at(
            existing,
            &["metadata".into(), key.into()],
            true,
            add.span,
            &mut |m| {
                if m.is_null() || m.as_map().is_none() {
                    *m = map(add.span);
                }
                for e in add.entries() {
                    if let Some(k) = e.key.scalar_text() {
                        super::tree::set_key(m, k, e.value.clone());
                    }
                }
            },
        );
    }
}

/// A data value: a literal block when it holds line breaks, else a string scalar.
fn set_block(data: &mut Node, key: &str, value: &str, at: Span) {
    let node = if value.contains('\n') {
        Node::scalar(at, value.into(), ScalarStyle::Literal)
    } else {
        string(value, at)
    };
    let Value::Map(entries) = &mut data.value else {
        return;
    };
    let key = Node::scalar(at, key.into(), ScalarStyle::Plain);
    edit_items(entries, |e| e.push(Entry::new(key, node)));
}

/// A literal's value: one pair of surrounding quotes removed, as kustomize does.
fn unquote(v: &str) -> String {
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_string();
        }
    }
    v.to_string()
}

/// Appends the content hash to the name of every generated object that takes one.
pub(super) fn add_hashes(objects: &mut [Object]) {
    for o in objects.iter_mut() {
        if o.generated.is_none_or(|g| !g.hash) {
            continue;
        }
        let name = format!("{}-{}", o.name(), hash(&o.root));
        let span = o
            .root
            .path(&["metadata", "name"])
            .map_or(o.root.span, |n| n.span);
        super::tree::set_at(
            &mut o.root,
            &["metadata".into(), "name".into()],
            true,
            span,
            &mut |n| {
                *n = string(&name, span);
            },
        );
        o.names.push(name);
    }
}

/// kustomize's hash of a ConfigMap or Secret: the SHA-256 of Go's JSON encoding of its kind,
/// an empty name, data (and binaryData, or type and stringData), first ten hex digits with `0 1 3 a e`
/// replaced.
#[must_use]
pub fn hash(root: &Node) -> String {
    let kind = root.get_str("kind").unwrap_or("");
    // kustomize looks the name up as one field called `metadata/name`, which no object has:
    // its hash never covers the name.
    let name = "";
    let field = |k: &str| -> serde_json::Value {
        match root.get(k) {
            None => serde_json::Value::String(String::new()),
            Some(n) if n.as_map().is_some() => n.to_json(),
            Some(n) => serde_json::Value::String(n.scalar_text().unwrap_or("").to_string()),
        }
    };
    let mut m = serde_json::Map::new();
    m.insert("kind".into(), kind.into());
    m.insert("name".into(), name.into());
    m.insert("data".into(), field("data"));
    if kind == "Secret" {
        m.insert("type".into(), field("type"));
        if root.get("stringData").is_some_and(|n| n.as_map().is_some()) {
            m.insert("stringData".into(), field("stringData"));
        }
    } else if root.get("binaryData").is_some_and(|n| n.as_map().is_some()) {
        m.insert("binaryData".into(), field("binaryData"));
    }
    let encoded = go_json(&serde_json::Value::Object(m));
    let hex = gotmpl::sha256::hex_digest(encoded.as_bytes());
    hex[..10]
        .chars()
        .map(|c| match c {
            '0' => 'g',
            '1' => 'h',
            '3' => 'k',
            'a' => 'm',
            'e' => 't',
            c => c,
        })
        .collect()
}

/// Whether `suffix` could be a name hash [`hash`] gives: 10 characters of hex digits with
/// `0 1 3 a e` replaced.
#[must_use]
pub fn is_hash(suffix: &str) -> bool {
    suffix.len() == 10 && suffix.bytes().all(|b| b"2456789bcdfghkmt".contains(&b))
}

/// JSON as Go's `encoding/json` writes it: keys sorted, and `<`, `>`, `&`, U+2028 and U+2029
/// escaped.
fn go_json(v: &serde_json::Value) -> String {
    let text = serde_json::to_string(v).unwrap_or_default();
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(text: &str) -> Node {
        crate::yaml::parse(crate::source::FileId(0), text)
            .docs
            .remove(0)
            .root
    }

    #[test]
    fn hashes_as_kustomize() {
        // kustomize's own cases (api/hasher/hasher_test.go).
        assert_eq!(
            hash(&tree("apiVersion: v1\nkind: ConfigMap\n")),
            "6ct58987ht"
        );
        assert_eq!(
            hash(&tree(
                "apiVersion: v1\nkind: ConfigMap\ndata:\n  one: \"\"\n"
            )),
            "9g67k2htb6"
        );
        assert_eq!(
            hash(&tree(
                "apiVersion: v1\nkind: ConfigMap\ndata:\n  two: 2\n  one: \"\"\n  three: 3\n"
            )),
            "7757f9kkct"
        );
    }
}
