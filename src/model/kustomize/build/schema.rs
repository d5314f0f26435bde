//! What kustomize knows of Kubernetes' built-in kinds, vendored from its sources by
//! `scripts/kustomize-tables`: which lists a strategic-merge patch merges and by which key
//! (`merge_keys.tsv`, from the OpenAPI document kustomize embeds), the kinds it knows to be
//! cluster-scoped, and its builtin transformers' default field specs (`fieldspecs.yaml`).

use std::collections::{HashMap, HashSet};
use std::sync::LazyLock;

use crate::source::FileId;
use crate::yaml::Node;

/// How a field of a built-in type merges.
#[derive(Debug, Clone, Copy)]
pub struct FieldInfo {
    /// The field's type (of its items, for a list), when it leads to more merge facts.
    pub target: Option<&'static str>,
    pub list: bool,
    /// `x-kubernetes-patch-strategy` holds `merge`.
    pub merge: bool,
    /// `x-kubernetes-patch-strategy` holds `retainKeys`.
    pub retain_keys: bool,
    pub key: Option<&'static str>,
}

pub struct Tables {
    kinds: HashMap<(&'static str, &'static str), &'static str>,
    fields: HashMap<(&'static str, &'static str), FieldInfo>,
    cluster: HashSet<(&'static str, &'static str)>,
}

static TABLES: LazyLock<Tables> = LazyLock::new(|| {
    let mut t = Tables {
        kinds: HashMap::new(),
        fields: HashMap::new(),
        cluster: HashSet::new(),
    };
    for line in include_str!("merge_keys.tsv").lines() {
        let cols: Vec<&'static str> = line.split('\t').collect();
        let opt = |s: &'static str| (s != "-").then_some(s);
        match cols.as_slice() {
            ["kind", api, kind, ty] => {
                t.kinds.insert((*api, *kind), *ty);
            }
            ["field", ty, field, target, list, strategy, key] => {
                t.fields.insert(
                    (*ty, *field),
                    FieldInfo {
                        target: opt(target),
                        list: *list == "list",
                        merge: strategy.split(',').any(|s| s == "merge"),
                        retain_keys: strategy.split(',').any(|s| s == "retainKeys"),
                        key: opt(key),
                    },
                );
            }
            ["cluster", api, kind] => {
                t.cluster.insert((*api, *kind));
            }
            _ => {}
        }
    }
    t
});

/// The built-in type of `apiVersion`/`kind`; `None` for a kind without a schema (a CRD's),
/// whose lists a strategic-merge patch replaces.
#[must_use]
pub fn type_of(api_version: &str, kind: &str) -> Option<&'static str> {
    TABLES.kinds.get(&(api_version, kind)).copied()
}

#[must_use]
pub fn field(ty: &str, field: &str) -> Option<FieldInfo> {
    TABLES.fields.get(&(ty, field)).copied()
}

/// True when kustomize knows the kind to be cluster-scoped (an unknown kind is namespaced).
#[must_use]
pub fn is_cluster_scoped(api_version: &str, kind: &str) -> bool {
    TABLES.cluster.contains(&(api_version, kind))
}

/// A field spec: where a builtin transformer reads or writes, for which kinds.
#[derive(Debug, Clone)]
pub struct FieldSpec {
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: Option<String>,
    /// The path's segments; `[]` after a segment (`containers[]`) is dropped: lists are
    /// crossed wherever they are met.
    pub path: Vec<String>,
    pub create: bool,
}

impl FieldSpec {
    fn of(n: &Node) -> Option<FieldSpec> {
        let text = |k: &str| n.get_str(k).map(str::to_string);
        Some(FieldSpec {
            group: text("group"),
            version: text("version"),
            kind: text("kind"),
            path: split_path(n.get_str("path")?),
            create: n.get("create").and_then(Node::as_bool).unwrap_or(false),
        })
    }

    /// True when the spec applies to an object of this group, version and kind.
    #[must_use]
    pub fn applies(&self, group: &str, version: &str, kind: &str) -> bool {
        self.group.as_deref().is_none_or(|g| g == group)
            && self.version.as_deref().is_none_or(|v| v == version)
            && self.kind.as_deref().is_none_or(|k| k == kind)
    }
}

/// A field spec path's segments: `/` separated, `\/` an escaped slash, `[]` dropped.
#[must_use]
pub fn split_path(path: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = path.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' if chars.peek() == Some(&'/') => {
                cur.push('/');
                chars.next();
            }
            '/' => out.push(std::mem::take(&mut cur)),
            _ => cur.push(c),
        }
    }
    out.push(cur);
    out.into_iter()
        .map(|s| s.strip_suffix("[]").map_or(s.clone(), str::to_string))
        .filter(|s| !s.is_empty())
        .collect()
}

/// A `nameReference` entry: fields of other objects that name an object of this kind.
#[derive(Debug, Clone)]
pub struct NameReference {
    pub group: Option<String>,
    pub version: Option<String>,
    pub kind: String,
    pub fields: Vec<FieldSpec>,
}

pub struct FieldSpecs {
    pub common_labels: Vec<FieldSpec>,
    pub template_labels: Vec<FieldSpec>,
    pub common_annotations: Vec<FieldSpec>,
    pub namespace: Vec<FieldSpec>,
    pub name_reference: Vec<NameReference>,
    pub images: Vec<FieldSpec>,
    pub replicas: Vec<FieldSpec>,
}

static FIELD_SPECS: LazyLock<FieldSpecs> = LazyLock::new(|| {
    let parsed = crate::yaml::parse(FileId(u32::MAX), include_str!("fieldspecs.yaml"));
    let root = parsed.docs.into_iter().next().map(|d| d.root);
    let list = |key: &str| -> Vec<FieldSpec> {
        root.as_ref()
            .and_then(|r| r.get(key))
            .map(|l| l.items().filter_map(FieldSpec::of).collect())
            .unwrap_or_default()
    };
    let name_reference = root
        .as_ref()
        .and_then(|r| r.get("nameReference"))
        .map(|l| {
            l.items()
                .filter_map(|n| {
                    Some(NameReference {
                        group: n.get_str("group").map(str::to_string),
                        version: n.get_str("version").map(str::to_string),
                        kind: n.get_str("kind")?.to_string(),
                        fields: n
                            .get("fieldSpecs")
                            .map(|f| f.items().filter_map(FieldSpec::of).collect())
                            .unwrap_or_default(),
                    })
                })
                .collect()
        })
        .unwrap_or_default();
    FieldSpecs {
        common_labels: list("commonLabels"),
        template_labels: list("templateLabels"),
        common_annotations: list("commonAnnotations"),
        namespace: list("namespace"),
        name_reference,
        images: list("images"),
        replicas: list("replicas"),
    }
});

#[must_use]
pub fn field_specs() -> &'static FieldSpecs {
    &FIELD_SPECS
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_hold_kubernetes_merge_keys() {
        let deployment = type_of("apps/v1", "Deployment").unwrap();
        let spec = field(deployment, "spec").unwrap().target.unwrap();
        let template = field(spec, "template").unwrap().target.unwrap();
        let pod = field(template, "spec").unwrap().target.unwrap();
        let containers = field(pod, "containers").unwrap();
        assert!(containers.merge && containers.list);
        assert_eq!(containers.key, Some("name"));
        assert!(field(pod, "volumes").unwrap().retain_keys);
        assert!(type_of("argoproj.io/v1alpha1", "Application").is_none());
        assert!(is_cluster_scoped("v1", "Namespace"));
        assert!(!is_cluster_scoped("v1", "ConfigMap"));
    }

    #[test]
    fn field_specs_are_read() {
        let specs = field_specs();
        assert!(specs.common_labels.len() > 10);
        assert!(specs.name_reference.iter().any(|r| r.kind == "ConfigMap"));
        assert_eq!(
            split_path("spec/template/spec/containers[]/image"),
            ["spec", "template", "spec", "containers", "image"]
        );
    }
}
