//! What Argo CD adds to an object or ignores when it compares it (`argocd app diff`): the
//! tracking label and annotation, `status`, server-side metadata, and the Application's
//! `ignoreDifferences` (JSON pointers, and jq paths that are plain field paths).

use crate::yaml::Node;

/// Paths Argo CD never compares, whatever the object.
fn always_ignored(path: &[String]) -> bool {
    match path {
        [status] => status == "status",
        [m, field] if m == "metadata" => matches!(
            field.as_str(),
            "managedFields"
                | "creationTimestamp"
                | "generation"
                | "resourceVersion"
                | "uid"
                | "selfLink"
        ),
        [m, labels, key] if m == "metadata" => {
            (labels == "labels" && key == "app.kubernetes.io/instance")
                || (labels == "annotations"
                    && matches!(
                        key.as_str(),
                        "argocd.argoproj.io/tracking-id"
                            | "kubectl.kubernetes.io/last-applied-configuration"
                    ))
        }
        _ => false,
    }
}

/// One `ignoreDifferences` entry: which objects, and the paths to leave out (`*`: any item).
#[derive(Clone, Debug, Default)]
pub struct Ignore {
    pub group: Option<String>,
    pub kind: Option<String>,
    pub name: Option<String>,
    pub namespace: Option<String>,
    pub paths: Vec<Vec<String>>,
}

impl Ignore {
    /// The entries of an Application's `spec.ignoreDifferences`; jq expressions other than a
    /// plain field path (`.spec.replicas`, `.spec.containers[].image`) are not understood and
    /// are skipped.
    #[must_use]
    pub fn of_spec(spec: Option<&Node>) -> Vec<Ignore> {
        let Some(items) = spec
            .and_then(|s| s.get("ignoreDifferences"))
            .and_then(Node::as_seq)
        else {
            return Vec::new();
        };
        let text = |n: &Node, k: &str| n.get(k).and_then(Node::as_str).map(str::to_string);
        items
            .iter()
            .map(|i| {
                let list = |k: &str| -> Vec<&str> {
                    i.get(k)
                        .and_then(Node::as_seq)
                        .map(|s| s.iter().filter_map(Node::as_str).collect())
                        .unwrap_or_default()
                };
                let mut paths: Vec<Vec<String>> =
                    list("jsonPointers").into_iter().map(pointer).collect();
                paths.extend(list("jqPathExpressions").into_iter().filter_map(jq_path));
                Ignore {
                    group: text(i, "group"),
                    kind: text(i, "kind"),
                    name: text(i, "name"),
                    namespace: text(i, "namespace"),
                    paths,
                }
            })
            .collect()
    }

    /// Whether the entry applies to this object (an empty `group` is the core group).
    #[must_use]
    pub fn applies(&self, group: &str, kind: &str, namespace: &str, name: &str) -> bool {
        let same = |want: &Option<String>, got: &str| want.as_deref().is_none_or(|w| w == got);
        same(&self.group, group)
            && same(&self.kind, kind)
            && same(&self.name, name)
            && same(&self.namespace, namespace)
    }
}

/// `/spec/template/0/x` → `["spec", "template", "0", "x"]`, with `~1` and `~0` unescaped.
fn pointer(p: &str) -> Vec<String> {
    p.trim_start_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .map(|s| s.replace("~1", "/").replace("~0", "~"))
        .collect()
}

/// `.spec.containers[].image` → `["spec", "containers", "*", "image"]`; `None` for jq that
/// is more than a field path.
fn jq_path(e: &str) -> Option<Vec<String>> {
    let e = e.trim();
    let rest = e.strip_prefix('.')?;
    let mut out = Vec::new();
    for part in rest.split('.') {
        let (field, items) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if field.is_empty()
            || !field
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            return None;
        }
        out.push(field.to_string());
        let mut items = items;
        while let Some(r) = items.strip_prefix("[]") {
            out.push("*".into());
            items = r;
        }
        if !items.is_empty() {
            return None;
        }
    }
    Some(out)
}

/// Whether Argo CD leaves `path` out of the comparison of an object that `ignores` apply to.
#[must_use]
pub fn ignored(path: &[String], ignores: &[&Ignore]) -> bool {
    always_ignored(path)
        || ignores.iter().any(|i| {
            i.paths.iter().any(|p| {
                p.len() <= path.len()
                    && p.iter()
                        .zip(path)
                        .all(|(want, got)| want == "*" || want == got)
            })
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| (*x).to_string()).collect()
    }

    #[test]
    fn pointers_and_plain_jq_paths() {
        assert_eq!(pointer("/spec/a~1b"), p(&["spec", "a/b"]));
        assert_eq!(
            jq_path(".spec.template.spec.containers[].image"),
            Some(p(&["spec", "template", "spec", "containers", "*", "image"]))
        );
        assert_eq!(jq_path(".spec | del(.x)"), None);
        let i = Ignore {
            paths: vec![p(&["spec", "replicas"])],
            ..Ignore::default()
        };
        assert!(ignored(&p(&["spec", "replicas"]), &[&i]));
        assert!(!ignored(&p(&["spec", "selector"]), &[&i]));
        assert!(ignored(&p(&["status", "x"]), &[]) || ignored(&p(&["status"]), &[]));
    }
}
