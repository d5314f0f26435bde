//! Which objects a kustomize patch applies to: a `target` selector (group, version and kind
//! exact; name and namespace anchored regular expressions, against the current or the original
//! value; label and annotation selectors), or a strategic-merge patch's own kind and name.

use crate::model::kustomize::Selector;
use crate::yaml::{Node, Value, edit_items};

/// An object as a selector sees it: its tree and the name and namespace it had before any
/// transformer renamed it.
pub struct Ident<'a> {
    pub root: &'a Node,
    pub original_name: Option<&'a str>,
    pub original_namespace: Option<&'a str>,
}

impl Ident<'_> {
    fn root(&self) -> &Node {
        self.root
    }
}

/// A strategic merge patch without `target` applies to the object of its kind and name
/// (the name before or after prefixes), and namespace when it gives one.
pub fn patch_names(patch: &Node, o: &Ident<'_>) -> bool {
    let (pg, pv) = split_api_version(patch.get_str("apiVersion").unwrap_or(""));
    let (og, ov) = split_api_version(o.root().get_str("apiVersion").unwrap_or(""));
    if patch.get_str("kind") != o.root().get_str("kind") || pg != og || (!pv.is_empty() && pv != ov)
    {
        return false;
    }
    let Some(name) = patch.path(&["metadata", "name"]).and_then(Node::as_str) else {
        return false;
    };
    let current = o.root().path(&["metadata", "name"]).and_then(Node::as_str);
    if current != Some(name) && o.original_name != Some(name) {
        return false;
    }
    // Kustomize compares namespaces exactly (none is `default`), current or original.
    let effective = |ns: Option<&str>| match ns {
        None | Some("") => "default".to_string(),
        Some(ns) => ns.to_string(),
    };
    let wanted = effective(
        patch
            .path(&["metadata", "namespace"])
            .and_then(Node::as_str),
    );
    let current = effective(
        o.root
            .path(&["metadata", "namespace"])
            .and_then(Node::as_str),
    );
    wanted == current || wanted == effective(o.original_namespace)
}

pub fn split_api_version(api: &str) -> (&str, &str) {
    match api.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api),
    }
}

/// A patch renames nothing: its name and namespace select (or, with a `target`, are ignored).
pub fn without_identity(patch: &Node) -> Node {
    without(patch, false, false)
}

/// A patch without the identity fields it may not change: `kind` (unless `allow_kind`), and
/// the name (unless `allow_name`) and namespace (kustomize's `ApplySmPatch`).
pub fn without(patch: &Node, allow_name: bool, allow_kind: bool) -> Node {
    let mut p = patch.clone();
    if let Value::Map(entries) = &mut p.value {
        if !allow_kind {
            edit_items(entries, |e| {
                e.retain(|e| e.key.scalar_text() != Some("kind"))
            });
        }
        for e in entries.iter_mut() {
            if e.key.scalar_text() == Some("metadata") {
                if let Value::Map(meta) = &mut e.value.value {
                    edit_items(meta, |meta| {
                        meta.retain(|m| match m.key.scalar_text() {
                            Some("name") => allow_name,
                            Some("namespace") => false,
                            _ => true,
                        });
                    });
                }
            }
        }
    }
    p
}

/// Kustomize's selector: group, version and kind exact; name and namespace anchored regular
/// expressions matched against the current or the original value; label and annotation
/// selectors.
pub fn selects(t: &Selector, re: &Patterns, o: &Ident<'_>) -> bool {
    let root = o.root;
    let (group, version) = split_api_version(root.get_str("apiVersion").unwrap_or(""));
    let eq = |f: &Option<crate::repo::Field>, v: &str| {
        f.as_ref()
            .is_none_or(|f| f.value.is_empty() || f.value == v)
    };
    if !eq(&t.group, group) || !eq(&t.version, version) {
        return false;
    }
    if !eq(&t.kind, root.get_str("kind").unwrap_or("")) {
        return false;
    }
    if let Some(name) = &re.name {
        let current = root.path(&["metadata", "name"]).and_then(Node::as_str);
        let hit = [current, o.original_name]
            .into_iter()
            .flatten()
            .any(|n| name.is_match(n));
        if !hit {
            return false;
        }
    }
    if let Some(ns) = &re.namespace {
        let current = root
            .path(&["metadata", "namespace"])
            .and_then(Node::as_str)
            .unwrap_or("default");
        let original = o.original_namespace.unwrap_or("default");
        if !ns.is_match(current) && !ns.is_match(original) {
            return false;
        }
    }
    if let Some(sel) = &t.label_selector {
        if !label_selector(&sel.value, root.path(&["metadata", "labels"])) {
            return false;
        }
    }
    if let Some(sel) = &t.annotation_selector {
        if !label_selector(&sel.value, root.path(&["metadata", "annotations"])) {
            return false;
        }
    }
    true
}

/// A selector's `name` and `namespace`, compiled once per patch.
#[derive(Default)]
pub struct Patterns {
    name: Option<Pattern>,
    namespace: Option<Pattern>,
}

impl Patterns {
    pub fn of(t: &Selector) -> Patterns {
        let compile = |f: &Option<crate::repo::Field>| {
            f.as_ref()
                .filter(|f| !f.value.is_empty())
                .map(|f| Pattern::new(&f.value))
        };
        Patterns {
            name: compile(&t.name),
            namespace: compile(&t.namespace),
        }
    }
}

/// An anchored regular expression, as kustomize compiles selector names; a pattern that does
/// not compile matches itself only.
enum Pattern {
    Regex(regex::Regex),
    Exact(String),
}

impl Pattern {
    fn new(pattern: &str) -> Pattern {
        match regex::Regex::new(&format!("^(?:{pattern})$")) {
            Ok(re) => Pattern::Regex(re),
            Err(_) => Pattern::Exact(pattern.to_string()),
        }
    }

    fn is_match(&self, value: &str) -> bool {
        match self {
            Pattern::Regex(re) => re.is_match(value),
            Pattern::Exact(p) => p == value,
        }
    }
}

/// A Kubernetes label selector (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`,
/// `!a`, comma-separated, all required) against a `labels` mapping.
pub fn label_selector(selector: &str, labels: Option<&Node>) -> bool {
    let get = |k: &str| labels.and_then(|l| l.get(k)).and_then(Node::scalar_text);
    split_requirements(selector).iter().all(|req| {
        let req = req.trim();
        if req.is_empty() {
            return true;
        }
        if let Some((k, set)) = split_set(req, " notin ") {
            return get(k).is_none_or(|v| !set.contains(&v));
        }
        if let Some((k, set)) = split_set(req, " in ") {
            return get(k).is_some_and(|v| set.contains(&v));
        }
        if let Some((k, v)) = req.split_once("!=") {
            return get(k.trim()) != Some(v.trim());
        }
        if let Some((k, v)) = req.split_once("==").or_else(|| req.split_once('=')) {
            return get(k.trim()) == Some(v.trim());
        }
        if let Some(k) = req.strip_prefix('!') {
            return get(k.trim()).is_none();
        }
        get(req).is_some()
    })
}

/// Splits on commas outside parentheses.
fn split_requirements(s: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

fn split_set<'s>(req: &'s str, op: &str) -> Option<(&'s str, Vec<&'s str>)> {
    let (k, rest) = req.split_once(op)?;
    let inner = rest.trim().strip_prefix('(')?.strip_suffix(')')?;
    Some((k.trim(), inner.split(',').map(str::trim).collect()))
}
