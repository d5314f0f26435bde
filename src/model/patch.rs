//! Kustomize's transformations applied to Argo CD objects, in-process: strategic merge and
//! JSON 6902 patches (inline or from files, with `target` selectors), `namespace`,
//! `namePrefix` and `nameSuffix`, through nested overlays and components in kustomize's
//! order. The result is a tree of our own nodes: a value a patch sets keeps the patch's span,
//! the rest keep their own, so a finding on a patched value points at the patch line.
//!
//! Only `Application`, `ApplicationSet` and `AppProject` objects are transformed (the rules
//! read no other patched object); `replacements`, labels and annotations transformers are not
//! applied. A document that several kustomizations deploy with different results keeps its
//! text as written: the model holds one tree per document.

use std::collections::{HashMap, HashSet};

use super::is_argocd_kind;
use super::kustomize::{
    EntryField, Kustomization, Kustomizations, Patch, PatchBody, PatchField, PatchKind, Reference,
    Selector,
};
use super::{Document, Repository};
use crate::source::Span;
use crate::yaml::{Entry, Node, ScalarStyle, Value, edit_items};

/// Kustomizations entered at most per build (overlay stacks are shallow; this bounds a
/// repository of many overlays sharing deep bases).
const DEPTH_LIMIT: usize = 32;

/// Kustomizations entered and objects held at most by one build: a graph that includes a
/// folder twice at every level would otherwise grow exponentially.
const STEP_BUDGET: usize = 100_000;
const OBJECT_LIMIT: usize = 100_000;

/// What applying the repository's kustomizations changes.
#[derive(Debug, Default)]
pub struct Patched {
    /// Document index → its tree after kustomize's transformations (only changed documents
    /// that every kustomization deploying them transforms alike).
    pub roots: HashMap<usize, Node>,
    /// Argo CD documents of patch files that no kustomization lists as a resource: a patch,
    /// not an object.
    pub patch_docs: HashSet<usize>,
    /// Documents that kustomizations deploy with different results: kept as written, but
    /// what Argo CD reads is not known.
    pub ambiguous: HashSet<usize>,
}

/// One object of a build: a document and its current tree.
#[derive(Clone)]
struct Obj {
    doc: usize,
    root: Node,
    /// The name before any prefix or suffix (kustomize matches patches on either).
    original_name: Option<String>,
    /// The namespace before any `namespace:` transformer.
    original_namespace: Option<String>,
    changed: bool,
}

/// Applies every kustomization of `project` to the Argo CD objects it deploys.
#[must_use]
pub fn apply(repo: &Repository, ks: &Kustomizations) -> Patched {
    let mut out = Patched::default();
    let nodes = ks.nodes();
    if nodes.is_empty() {
        return out;
    }
    let mut included = vec![false; nodes.len()];
    let mut resource_files = HashSet::new();
    for k in nodes {
        for e in &k.entries {
            match e.reference {
                Reference::Kustomization(n) => included[n] = true,
                Reference::File(f) => {
                    resource_files.insert(f);
                }
                _ => {}
            }
        }
    }
    // Patch files holding Argo CD kinds are patches, not objects.
    for k in nodes {
        for p in &k.patches {
            if let PatchBody::File {
                reference: Reference::File(f),
                ..
            } = &p.body
            {
                if resource_files.contains(f) {
                    continue;
                }
                for i in repo.file_doc_range(*f) {
                    if is_argocd_kind(repo.docs[i].kind) {
                        out.patch_docs.insert(i);
                    }
                }
            }
        }
    }
    // Nothing to do unless some kustomization transforms something.
    if !nodes.iter().any(transforms) {
        return out;
    }
    let builder = Builder {
        repo,
        ks,
        memo: std::cell::RefCell::new(HashMap::new()),
        steps: std::cell::Cell::new(STEP_BUDGET),
    };
    // Document → the trees the builds of top-level kustomizations give it (`None`: unchanged).
    let mut variants: HashMap<usize, Vec<Option<Node>>> = HashMap::new();
    for (start, _) in included.iter().enumerate().filter(|(_, inc)| !**inc) {
        for obj in builder.build(start, &mut Vec::new()) {
            variants
                .entry(obj.doc)
                .or_default()
                .push(obj.changed.then_some(obj.root));
        }
    }
    for (doc, trees) in variants {
        let Some(Some(first)) = trees.first() else {
            if trees.iter().any(Option::is_some) {
                out.ambiguous.insert(doc);
            }
            continue;
        };
        let json = first.to_json();
        let alike = trees[1..]
            .iter()
            .all(|t| t.as_ref().is_some_and(|t| t.to_json() == json));
        if alike {
            out.roots.insert(doc, first.clone());
        } else {
            out.ambiguous.insert(doc);
        }
    }
    out
}

/// True when a kustomization may change an object.
fn transforms(k: &Kustomization) -> bool {
    !k.patches.is_empty()
        || k.namespace.is_some()
        || k.name_prefix.is_some()
        || k.name_suffix.is_some()
        || k.entries.iter().any(|e| e.field == EntryField::Components)
}

struct Builder<'a> {
    repo: &'a Repository,
    ks: &'a Kustomizations,
    /// Kustomization → the objects its build gives.
    memo: std::cell::RefCell<HashMap<usize, Vec<Obj>>>,
    /// Kustomizations this run may still enter.
    steps: std::cell::Cell<usize>,
}

impl Builder<'_> {
    /// The Argo CD objects `kustomize build` of kustomization `k` gives.
    fn build(&self, k: usize, stack: &mut Vec<usize>) -> Vec<Obj> {
        if let Some(done) = self.memo.borrow().get(&k) {
            return done.clone();
        }
        let mut objs = Vec::new();
        self.accumulate(k, &mut objs, stack);
        self.memo.borrow_mut().insert(k, objs.clone());
        objs
    }

    /// Adds what kustomization `k` lists to `objs`, then applies its components and its own
    /// transformations to all of them (a component transforms what its parent accumulated).
    fn accumulate(&self, k: usize, objs: &mut Vec<Obj>, stack: &mut Vec<usize>) {
        if stack.contains(&k) || stack.len() >= DEPTH_LIMIT || self.steps.get() == 0 {
            return;
        }
        self.steps.set(self.steps.get() - 1);
        stack.push(k);
        let node = self.ks.node(k);
        for e in node
            .entries
            .iter()
            .filter(|e| e.field != EntryField::Components)
        {
            match e.reference {
                Reference::File(f) => {
                    for i in self.repo.file_doc_range(f) {
                        let d = &self.repo.docs[i];
                        if is_argocd_kind(d.kind) && objs.len() < OBJECT_LIMIT {
                            objs.push(Obj {
                                doc: i,
                                root: Node::clone(&d.root),
                                original_name: d.name().map(str::to_string),
                                original_namespace: d.namespace().map(str::to_string),
                                changed: false,
                            });
                        }
                    }
                }
                Reference::Kustomization(n) if !stack.contains(&n) => {
                    let sub = self.build(n, stack);
                    let room = OBJECT_LIMIT.saturating_sub(objs.len());
                    objs.extend(sub.into_iter().take(room));
                }
                _ => {}
            }
        }
        for e in node
            .entries
            .iter()
            .filter(|e| e.field == EntryField::Components)
        {
            if let Reference::Kustomization(n) = e.reference {
                self.accumulate(n, objs, stack);
            }
        }
        self.transform(node, objs);
        stack.pop();
    }

    /// Kustomize's order: strategic merge and `patches`, `namespace`, `namePrefix` and
    /// `nameSuffix`, then `patchesJson6902`.
    fn transform(&self, k: &Kustomization, objs: &mut [Obj]) {
        if objs.is_empty() {
            return;
        }
        for p in k
            .patches
            .iter()
            .filter(|p| p.field != PatchField::PatchesJson6902)
        {
            self.apply_patch(p, objs);
        }
        if let Some(ns) = &k.namespace {
            for o in objs.iter_mut() {
                let node = scalar(&ns.value, ns.span);
                if set_metadata(&mut o.root, "namespace", node, ns.span) {
                    o.changed = true;
                }
            }
        }
        if k.name_prefix.is_some() || k.name_suffix.is_some() {
            let prefix = k.name_prefix.as_ref().map_or("", |f| f.value.as_str());
            let suffix = k.name_suffix.as_ref().map_or("", |f| f.value.as_str());
            for o in objs.iter_mut() {
                let Some(name_node) = o.root.path(&["metadata", "name"]) else {
                    continue;
                };
                let Some(name) = name_node.as_str() else {
                    continue;
                };
                let renamed = scalar(&format!("{prefix}{name}{suffix}"), name_node.span);
                let span = name_node.span;
                if set_metadata(&mut o.root, "name", renamed, span) {
                    o.changed = true;
                }
            }
        }
        for p in k
            .patches
            .iter()
            .filter(|p| p.field == PatchField::PatchesJson6902)
        {
            self.apply_patch(p, objs);
        }
    }

    fn apply_patch(&self, p: &Patch, objs: &mut [Obj]) {
        let file_docs = |f| self.repo.file_docs(f);
        let docs: Vec<&Node> = p.docs(&file_docs);
        let patterns = p.target.as_ref().map(Patterns::of).unwrap_or_default();
        match p.kind {
            PatchKind::StrategicMerge => {
                for d in docs.into_iter().filter(|d| d.as_map().is_some()) {
                    for o in objs.iter_mut() {
                        let hit = match &p.target {
                            Some(t) => selects(t, &patterns, o),
                            None => patch_names(d, o),
                        };
                        if !hit {
                            continue;
                        }
                        let merged = merge(&o.root, &without_identity(d));
                        if let Some(merged) = merged {
                            o.root = merged;
                            o.changed = true;
                        }
                    }
                }
            }
            PatchKind::Json6902 => {
                let (Some(target), Some(ops)) = (&p.target, docs.first()) else {
                    return;
                };
                let Some(ops) = ops.as_seq() else { return };
                for o in objs.iter_mut().filter(|o| selects(target, &patterns, o)) {
                    let mut root = o.root.clone();
                    if json6902(&mut root, ops).is_some() {
                        o.root = root;
                        o.changed = true;
                    }
                }
            }
        }
    }
}

/// A strategic merge patch without `target` applies to the object of its kind and name
/// (the name before or after prefixes), and namespace when it gives one.
fn patch_names(patch: &Node, o: &Obj) -> bool {
    let (pg, pv) = split_api_version(patch.get_str("apiVersion").unwrap_or(""));
    let (og, ov) = split_api_version(o.root.get_str("apiVersion").unwrap_or(""));
    if patch.get_str("kind") != o.root.get_str("kind") || pg != og || (!pv.is_empty() && pv != ov) {
        return false;
    }
    let Some(name) = patch.path(&["metadata", "name"]).and_then(Node::as_str) else {
        return false;
    };
    let current = o.root.path(&["metadata", "name"]).and_then(Node::as_str);
    if current != Some(name) && o.original_name.as_deref() != Some(name) {
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
    wanted == current || wanted == effective(o.original_namespace.as_deref())
}

fn split_api_version(api: &str) -> (&str, &str) {
    match api.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api),
    }
}

/// A patch renames nothing: its name and namespace select (or, with a `target`, are ignored).
fn without_identity(patch: &Node) -> Node {
    let mut p = patch.clone();
    if let Value::Map(entries) = &mut p.value {
        for e in entries.iter_mut() {
            if e.key.scalar_text() == Some("metadata") {
                if let Value::Map(meta) = &mut e.value.value {
                    edit_items(meta, |meta| {
                        meta.retain(|m| !matches!(m.key.scalar_text(), Some("name" | "namespace")));
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
fn selects(t: &Selector, re: &Patterns, o: &Obj) -> bool {
    let root = &o.root;
    let (group, version) = split_api_version(root.get_str("apiVersion").unwrap_or(""));
    let eq = |f: &Option<super::Field>, v: &str| {
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
        let hit = [current, o.original_name.as_deref()]
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
        let original = o.original_namespace.as_deref().unwrap_or("default");
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
struct Patterns {
    name: Option<Pattern>,
    namespace: Option<Pattern>,
}

impl Patterns {
    fn of(t: &Selector) -> Patterns {
        let compile = |f: &Option<super::Field>| {
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
fn label_selector(selector: &str, labels: Option<&Node>) -> bool {
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

/// A plain scalar at `span`.
fn scalar(text: &str, span: Span) -> Node {
    let style = if text.is_empty() {
        ScalarStyle::DoubleQuoted
    } else {
        ScalarStyle::Plain
    };
    Node::scalar(span, text.into(), style)
}

/// Sets `metadata.<key>`; false when it already has that value.
fn set_metadata(root: &mut Node, key: &str, value: Node, key_span: Span) -> bool {
    let Value::Map(entries) = &mut root.value else {
        return false;
    };
    let meta = match entries
        .iter()
        .rposition(|e| e.key.scalar_text() == Some("metadata"))
    {
        Some(i) => &mut entries[i].value,
        None => {
            edit_items(entries, |entries| {
                entries.push(Entry::new(
                    scalar("metadata", key_span),
                    Node::new(key_span, Value::Map(Box::default())),
                ));
            });
            let last = entries.len() - 1;
            &mut entries[last].value
        }
    };
    if meta.is_null() {
        meta.value = Value::Map(Box::default());
    }
    let Value::Map(meta) = &mut meta.value else {
        return false;
    };
    match meta.iter().rposition(|e| e.key.scalar_text() == Some(key)) {
        Some(i) if meta[i].value.scalar_text() == value.scalar_text() => false,
        Some(i) => {
            meta[i].value = value;
            true
        }
        None => {
            edit_items(meta, |meta| {
                meta.push(Entry::new(scalar(key, key_span), value))
            });
            true
        }
    }
}

// ---- strategic merge (kyaml's merge2 for kinds without a schema) ----

fn directive(n: &Node) -> Option<&str> {
    n.get_str("$patch")
}

fn is_directive_key(k: &str) -> bool {
    k == "$patch"
        || k == "$retainKeys"
        || k.starts_with("$setElementOrder/")
        || k.starts_with("$deleteFromPrimitiveList/")
}

/// New content from a patch as kustomize writes it: mappings without directives and null
/// values (lists are copied as written).
fn clean(n: &Node) -> Node {
    let mut out = n.clone();
    let mut stack = vec![&mut out];
    while let Some(n) = stack.pop() {
        if let Value::Map(entries) = &mut n.value {
            edit_items(entries, |entries| {
                entries.retain(|e| {
                    !e.key.scalar_text().is_some_and(is_directive_key) && !e.value.is_null()
                });
            });
            stack.extend(entries.iter_mut().map(|e| &mut e.value));
        }
    }
    out
}

/// Merges `patch` into `dest`; `None` deletes `dest` (`$patch: delete`).
fn merge(dest: &Node, patch: &Node) -> Option<Node> {
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
                    Some(i) => match merge(&entries[i].value, &pe.value) {
                        Some(v) => entries[i].value = v,
                        None => {
                            entries.remove(i);
                        }
                    },
                    None => {
                        if directive(&pe.value) == Some("delete") {
                            continue;
                        }
                        entries.push(Entry::new(pe.key.clone(), clean(&pe.value)));
                    }
                }
            }
            Some(
                Node::new(dest.span, Value::Map(entries.into_boxed_slice()))
                    .with_tag(dest.tag_id())
                    .with_flow(dest.flow()),
            )
        }
        // Without a schema (Argo CD's kinds have none in kustomize), lists are replaced as
        // written, directives included.
        (Value::Seq(_), Value::Seq(_)) => Some(patch.clone()),
        _ => {
            if patch.as_map().is_some() && directive(patch) == Some("delete") {
                return None;
            }
            Some(clean(patch))
        }
    }
}

// ---- JSON 6902 ----

/// Applies RFC 6902 operations in order; `None` (and `root` left half-done: the caller works
/// on a copy) when one fails, as kustomize then fails the build.
fn json6902(root: &mut Node, ops: &[Node]) -> Option<()> {
    for op in ops {
        let path_node = op.get("path")?;
        let path = pointer(path_node.as_str()?)?;
        match op.get_str("op")? {
            "add" => add(root, &path, op.get("value")?.clone(), path_node.span)?,
            "remove" => {
                remove(root, &path)?;
            }
            "replace" => {
                let target = get_mut(root, &path)?;
                *target = op.get("value")?.clone();
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
    }
    Some(())
}

/// A JSON pointer's tokens (`~1` is `/`, `~0` is `~`).
fn pointer(p: &str) -> Option<Vec<String>> {
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

fn index(token: &str) -> Option<usize> {
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

/// The documents of `project` with the outcome applied: patched trees and patch documents
/// classified as such.
pub(crate) fn apply_to(docs: &mut [Document], patched: Patched) {
    for (i, root) in patched.roots {
        if let Some(d) = docs.get_mut(i) {
            d.root = std::sync::Arc::new(root);
        }
    }
    for &i in &patched.patch_docs {
        if let Some(d) = docs.get_mut(i) {
            d.kind = super::DocKind::Other;
        }
    }
}

#[cfg(test)]
mod tests;
