//! The builtin transformers of one kustomization, in kustomize's order (`configureBuiltinTransformers`
//! in `api/internal/target/kusttarget_configplugin.go`), and the field-spec walk they share.

use super::schema::{self, FieldSpec, field_specs};
use super::tree::{set_at, set_key};
use super::{Builder, Object, json6902, map, select, smp, string};
use crate::model::kustomize::{PatchBody, PatchField, PatchKind, Reference};
use crate::source::Span;
use crate::yaml::{Node, ScalarStyle, Value};

pub(super) fn run(b: &mut Builder<'_>, k: usize, tree: &Node, objects: &mut Vec<Object>) {
    let node = b.ks.node(k);
    for p in node
        .patches
        .iter()
        .filter(|p| p.field != PatchField::PatchesJson6902)
    {
        patch(b, k, tree, p, objects);
    }
    if let Some(ns) = tree
        .get("namespace")
        .filter(|n| n.as_str().is_some_and(|s| !s.is_empty()))
    {
        namespace(ns, objects);
    }
    let prefix = tree.get("namePrefix").filter(|n| n.as_str().is_some());
    let suffix = tree.get("nameSuffix").filter(|n| n.as_str().is_some());
    if prefix.is_some() || suffix.is_some() {
        rename(prefix, suffix, objects);
    }
    for label in tree.get("labels").map(Node::items).into_iter().flatten() {
        let Some(pairs) = label.get("pairs").filter(|p| p.as_map().is_some()) else {
            continue;
        };
        let flag = |k: &str| label.get(k).and_then(Node::as_bool).unwrap_or(false);
        let mut specs: Vec<FieldSpec> = label
            .get("fields")
            .map(|f| f.items().filter_map(custom_spec).collect())
            .unwrap_or_default();
        if flag("includeSelectors") {
            specs.extend(field_specs().common_labels.iter().cloned());
        } else {
            if flag("includeTemplates") {
                specs.extend(field_specs().template_labels.iter().cloned());
            }
            specs.push(FieldSpec {
                group: None,
                version: None,
                kind: None,
                path: vec!["metadata".into(), "labels".into()],
                create: true,
            });
        }
        set_pairs(pairs, &specs, objects);
    }
    if let Some(pairs) = tree.get("commonLabels").filter(|p| p.as_map().is_some()) {
        set_pairs(pairs, &field_specs().common_labels, objects);
    }
    if let Some(pairs) = tree
        .get("commonAnnotations")
        .filter(|p| p.as_map().is_some())
    {
        set_pairs(pairs, &field_specs().common_annotations, objects);
    }
    for p in node
        .patches
        .iter()
        .filter(|p| p.field == PatchField::PatchesJson6902)
    {
        patch(b, k, tree, p, objects);
    }
    for r in tree.get("replicas").map(Node::items).into_iter().flatten() {
        replicas(b, r, objects);
    }
    for image in tree.get("images").map(Node::items).into_iter().flatten() {
        images(image, objects);
    }
}

/// A `fields` item of `labels` (a field spec written in the kustomization).
fn custom_spec(n: &Node) -> Option<FieldSpec> {
    Some(FieldSpec {
        group: n.get_str("group").map(str::to_string),
        version: n.get_str("version").map(str::to_string),
        kind: n.get_str("kind").map(str::to_string),
        path: schema::split_path(n.get_str("path")?),
        create: n.get("create").and_then(Node::as_bool).unwrap_or(false),
    })
}

/// The documents of a patch: written inline, or its file's as written.
fn patch_docs(b: &mut Builder<'_>, k: usize, body: &PatchBody) -> Option<Vec<Node>> {
    match body {
        PatchBody::Inline { docs, .. } => Some(docs.clone()),
        PatchBody::File { path, .. } if !b.may_load(&b.ks.node(k).dir, &path.value) => {
            let dir = b.ks.node(k).dir.clone();
            b.error(path.span, super::outside_message(&path.value, &dir));
            None
        }
        PatchBody::File {
            reference: Reference::File(f),
            ..
        } => {
            let text = b.repo.source(*f).text().to_string();
            Some(
                crate::yaml::parse(*f, &text)
                    .docs
                    .into_iter()
                    .map(|d| d.root)
                    .collect(),
            )
        }
        PatchBody::File {
            path,
            reference: Reference::Other(_),
        } => {
            // A file discovery does not list (a `.json` patch): read from the disk.
            let dir = b.ks.node(k).dir.clone();
            let text = b.read(&dir, &path.value, path.span)?;
            Some(
                crate::yaml::parse(path.span.file, &text)
                    .docs
                    .into_iter()
                    .map(|d| relocate(d.root, path.span))
                    .collect(),
            )
        }
        PatchBody::File { path, .. } => {
            b.error(path.span, format!("patch file `{}` not found", path.value));
            None
        }
    }
}

/// A tree parsed from a file the repository does not index: every node at `span`.
fn relocate(mut n: Node, span: Span) -> Node {
    n.span = span;
    match &mut n.value {
        Value::Map(entries) => {
            for e in entries.iter_mut() {
                let (k, v) = (
                    std::mem::replace(&mut e.key, map(span)),
                    std::mem::replace(&mut e.value, map(span)),
                );
                e.key = relocate(k, span);
                e.value = relocate(v, span);
            }
        }
        Value::Seq(items) => {
            for i in items.iter_mut() {
                let v = std::mem::replace(i, map(span));
                *i = relocate(v, span);
            }
        }
        Value::Scalar(_) => {}
    }
    n
}

/// A `patches` item's `options` flag.
fn patch_option(tree: &Node, p: &crate::model::kustomize::Patch, key: &str) -> bool {
    tree.get("patches")
        .into_iter()
        .flat_map(Node::items)
        .find(|i| i.span == p.span)
        .and_then(|i| i.path(&["options", key]))
        .and_then(Node::as_bool)
        .unwrap_or(false)
}

fn patch(
    b: &mut Builder<'_>,
    k: usize,
    tree: &Node,
    p: &crate::model::kustomize::Patch,
    objects: &mut Vec<Object>,
) {
    let Some(docs) = patch_docs(b, k, &p.body) else {
        return;
    };
    let allow_name = patch_option(tree, p, "allowNameChange");
    let allow_kind = patch_option(tree, p, "allowKindChange");
    let patterns = p
        .target
        .as_ref()
        .map(select::Patterns::of)
        .unwrap_or_default();
    match p.kind {
        PatchKind::StrategicMerge => {
            for d in docs.iter().filter(|d| d.as_map().is_some()) {
                let mut hits = 0;
                let mut deleted = Vec::new();
                for (i, o) in objects.iter_mut().enumerate() {
                    let hit = match &p.target {
                        Some(t) => select::selects(t, &patterns, &o.ident()),
                        None => select::patch_names(d, &o.ident()),
                    };
                    if !hit {
                        continue;
                    }
                    hits += 1;
                    let ty = schema::type_of(o.api_version(), o.kind());
                    match smp::merge(&o.root, &select::without(d, allow_name, allow_kind), ty) {
                        Some(merged) => {
                            o.root = merged;
                            let name = o.name().to_string();
                            if o.names.last() != Some(&name) {
                                o.names.push(name);
                            }
                        }
                        None => deleted.push(i),
                    }
                }
                for i in deleted.into_iter().rev() {
                    objects.remove(i);
                }
                if hits == 0 && p.target.is_none() {
                    let name = d
                        .path(&["metadata", "name"])
                        .and_then(Node::as_str)
                        .unwrap_or("");
                    b.unmatched(
                        p.span,
                        format!(
                            "no resource matches strategic merge patch {} `{name}`",
                            d.get_str("kind").unwrap_or("")
                        ),
                    );
                }
            }
        }
        PatchKind::Json6902 => {
            let Some(target) = &p.target else {
                b.error(p.span, "a JSON 6902 patch needs a `target`");
                return;
            };
            let Some(ops) = docs.iter().find_map(Node::as_seq) else {
                return;
            };
            let mut failed = None;
            for o in objects
                .iter_mut()
                .filter(|o| select::selects(target, &patterns, &o.ident()))
            {
                let mut root = o.root.clone();
                match json6902::apply(&mut root, ops) {
                    Ok(()) => o.root = root,
                    Err(i) => {
                        failed.get_or_insert_with(|| (i, format!("{} `{}`", o.kind(), o.name())));
                    }
                }
            }
            if let Some((i, object)) = failed {
                let op = &ops[i];
                let (what, path) = (
                    op.get_str("op").unwrap_or("?"),
                    op.get_str("path").unwrap_or(""),
                );
                // At the operation when its lines are the kustomization's (an inline patch).
                let at = if op.span.file == p.span.file {
                    op.span
                } else {
                    p.span
                };
                b.unmatched(
                    at,
                    format!(
                        "JSON 6902 patch failed: `{what}` at `{path}` does not apply to {object}"
                    ),
                );
            }
        }
    }
}

/// `namespace:`: every namespaced object's, the kinds' namespace fields, and (cluster) role
/// binding subjects named `default`.
fn namespace(ns: &Node, objects: &mut [Object]) {
    for o in objects.iter_mut() {
        let (api, kind) = (o.api_version().to_string(), o.kind().to_string());
        let (group, version) = select::split_api_version(&api);
        let (group, version) = (group.to_string(), version.to_string());
        if !schema::is_cluster_scoped(&api, &kind) {
            set_at(
                &mut o.root,
                &["metadata".into(), "namespace".into()],
                true,
                ns.span,
                &mut |n| {
                    *n = string(ns.as_str().unwrap_or(""), ns.span);
                },
            );
        }
        for fs in &field_specs().namespace {
            let meta_name = fs.path == ["metadata", "name"];
            if !fs.applies(&group, &version, &kind) || (meta_name && api != "v1") {
                continue;
            }
            set_at(&mut o.root, &fs.path, fs.create, ns.span, &mut |n| {
                *n = string(ns.as_str().unwrap_or(""), ns.span);
            });
        }
        if kind == "RoleBinding" || kind == "ClusterRoleBinding" {
            if let Some(Value::Map(entries)) = root_map_mut(&mut o.root) {
                for e in entries.iter_mut() {
                    if e.key.scalar_text() != Some("subjects") {
                        continue;
                    }
                    if let Value::Seq(items) = &mut e.value.value {
                        for s in items.iter_mut() {
                            if s.get_str("name") == Some("default") {
                                set_key(s, "namespace", string(ns.as_str().unwrap_or(""), ns.span));
                            }
                        }
                    }
                }
            }
        }
    }
}

fn root_map_mut(n: &mut Node) -> Option<&mut Value> {
    matches!(n.value, Value::Map(_)).then_some(&mut n.value)
}

/// Kinds kustomize never renames (`prefixFieldSpecsToSkip`).
fn keeps_name(o: &Object) -> bool {
    let (group, _) = o.group_version();
    matches!(o.kind(), "CustomResourceDefinition" | "Namespace")
        || (o.kind() == "APIService" && group == "apiregistration.k8s.io")
}

fn rename(prefix: Option<&Node>, suffix: Option<&Node>, objects: &mut [Object]) {
    for o in objects.iter_mut().filter(|o| !keeps_name(o)) {
        let p = prefix.and_then(Node::as_str).unwrap_or("");
        let s = suffix.and_then(Node::as_str).unwrap_or("");
        let name = format!("{p}{}{s}", o.name());
        let span = prefix.or(suffix).map(|n| n.span).unwrap_or(o.root.span);
        set_at(
            &mut o.root,
            &["metadata".into(), "name".into()],
            true,
            span,
            &mut |n| {
                *n = string(&name, span);
            },
        );
        if o.names.last() != Some(&name) {
            o.names.push(name);
        }
    }
}

/// Sets each pair of `pairs` in the mappings the specs name.
fn set_pairs(pairs: &Node, specs: &[FieldSpec], objects: &mut [Object]) {
    for o in objects.iter_mut() {
        let (api, kind) = (o.api_version().to_string(), o.kind().to_string());
        let (group, version) = select::split_api_version(&api);
        for fs in specs.iter().filter(|fs| fs.applies(group, version, &kind)) {
            set_at(&mut o.root, &fs.path, fs.create, pairs.span, &mut |m| {
                if m.is_null() {
                    *m = map(pairs.span);
                }
                if m.as_map().is_none() {
                    return;
                }
                for e in pairs.entries() {
                    let (Some(k), v) = (e.key.scalar_text(), &e.value) else {
                        continue;
                    };
                    let text = v.scalar_text().unwrap_or("");
                    set_key(m, k, string(text, v.span));
                }
            });
        }
    }
}

/// `replicas:` sets the count of the workloads of that name; kustomize fails when no object
/// with a replicas field it knows has the name.
fn replicas(b: &mut Builder<'_>, r: &Node, objects: &mut [Object]) {
    let (Some(name), Some(count)) = (r.get_str("name"), r.get("count")) else {
        return;
    };
    let mut matched = false;
    for o in objects.iter_mut() {
        if !o.names.iter().any(|n| n == name) && o.name() != name {
            continue;
        }
        let (api, kind) = (o.api_version().to_string(), o.kind().to_string());
        let (group, version) = select::split_api_version(&api);
        for fs in field_specs()
            .replicas
            .iter()
            .filter(|fs| fs.applies(group, version, &kind))
        {
            matched = true;
            set_at(&mut o.root, &fs.path, fs.create, count.span, &mut |n| {
                *n = Node::scalar(
                    count.span,
                    count.scalar_text().unwrap_or("0").into(),
                    ScalarStyle::Plain,
                );
            });
        }
    }
    if !matched {
        b.unmatched(r.span, format!("replicas: no workload is named `{name}`"));
    }
}

/// `name[:tag][@digest]` split as kustomize's `image.Split` does.
fn split_image(image: &str) -> (&str, &str, &str) {
    let (rest, digest) = image.split_once('@').unwrap_or((image, ""));
    let slash = rest.rfind('/').map_or(0, |i| i + 1);
    match rest[slash..].rfind(':') {
        Some(i) => (&rest[..slash + i], &rest[slash + i + 1..], digest),
        None => (rest, "", digest),
    }
}

fn images(image: &Node, objects: &mut [Object]) {
    let Some(name) = image.get_str("name") else {
        return;
    };
    let text = |k: &str| image.get(k).and_then(Node::scalar_text).unwrap_or("");
    let (new_name, new_tag, digest, suffix) = (
        text("newName"),
        text("newTag"),
        text("digest"),
        text("tagSuffix"),
    );
    let span = image.span;
    let mut update = |n: &mut Node| {
        let Some(value) = n.as_str() else { return };
        let (old_name, tag, old_digest) = split_image(value);
        if old_name != name {
            return;
        }
        let mut out = if new_name.is_empty() {
            old_name
        } else {
            new_name
        }
        .to_string();
        let (tag, dg) = match (new_tag.is_empty(), digest.is_empty()) {
            (false, false) => (new_tag.to_string(), digest),
            (false, true) => (new_tag.to_string(), ""),
            (true, false) => (String::new(), digest),
            (true, true) if !suffix.is_empty() => (format!("{tag}{suffix}"), ""),
            (true, true) => (tag.to_string(), old_digest),
        };
        if !tag.is_empty() {
            out = format!("{out}:{tag}");
        }
        if !dg.is_empty() {
            out = format!("{out}@{dg}");
        }
        *n = string(&out, span);
    };
    for o in objects.iter_mut() {
        legacy_images(&mut o.root, &mut update);
        let (api, kind) = (o.api_version().to_string(), o.kind().to_string());
        let (group, version) = select::split_api_version(&api);
        for fs in field_specs()
            .images
            .iter()
            .filter(|fs| fs.applies(group, version, &kind))
        {
            set_at(&mut o.root, &fs.path, false, span, &mut update);
        }
    }
}

/// kustomize's `imagetag.LegacyFilter`: the `image` of every item of any `containers` or
/// `initContainers` list, at any depth.
fn legacy_images(node: &mut Node, update: &mut dyn FnMut(&mut Node)) {
    match &mut node.value {
        Value::Map(entries) => {
            for e in entries.iter_mut() {
                let containers =
                    matches!(e.key.scalar_text(), Some("containers" | "initContainers"));
                if let (true, Value::Seq(items)) = (containers, &mut e.value.value) {
                    for item in items.iter_mut() {
                        if let Value::Map(fields) = &mut item.value {
                            for f in fields.iter_mut() {
                                if f.key.scalar_text() == Some("image") {
                                    update(&mut f.value);
                                }
                            }
                        }
                    }
                } else {
                    legacy_images(&mut e.value, update);
                }
            }
        }
        Value::Seq(items) => {
            for item in items.iter_mut() {
                legacy_images(item, update);
            }
        }
        Value::Scalar(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::split_image;

    #[test]
    fn images_split_like_kustomize() {
        assert_eq!(split_image("nginx"), ("nginx", "", ""));
        assert_eq!(split_image("nginx:1.2"), ("nginx", "1.2", ""));
        assert_eq!(
            split_image("reg:5000/app:v1@sha256:ab"),
            ("reg:5000/app", "v1", "sha256:ab")
        );
        assert_eq!(split_image("reg:5000/app"), ("reg:5000/app", "", ""));
    }
}
