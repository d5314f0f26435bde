//! The parameter overrides Argo CD's repo server merges into a source before rendering it:
//! `.argocd-source.yaml`, then `.argocd-source-<app>.yaml`, in the source's folder (Argo CD
//! Image Updater writes the second by default). Each is a JSON merge patch (RFC 7386) of the
//! source; `chart`, `path`, `repoURL` and `targetRevision` keep the Application's values
//! (`reposerver/repository.mergeSourceParameters`). Merged nodes keep the override file's
//! spans, so a finding on an overridden value points at the override line.

use crate::model::Repository;
use crate::model::paths::join;
use crate::source::FileId;
use crate::yaml::{Entry, Node, Value};

/// The source fields an override cannot change.
const KEPT: &[&str] = &["chart", "path", "repoURL", "targetRevision"];

/// The override files of source folder `dir` for Application `app`, in the order Argo CD
/// merges them, with the document each holds.
#[must_use]
pub fn files<'r>(repo: &'r Repository, dir: &str, app: &str) -> Vec<(FileId, &'r Node)> {
    let names = [
        ".argocd-source.yaml".to_string(),
        format!(".argocd-source-{app}.yaml"),
    ];
    names
        .iter()
        .filter_map(|n| join(dir, n))
        .filter_map(|p| repo.file_by_path(&p))
        .filter_map(|f| {
            let doc = repo.file_docs(f.id).first()?;
            Some((f.id, &*doc.root))
        })
        .collect()
}

/// `source` with the overrides merged in, or `None` when there are none.
#[must_use]
pub fn apply(source: &Node, overrides: &[(FileId, &Node)]) -> Option<Node> {
    if overrides.is_empty() {
        return None;
    }
    let mut merged = source.clone();
    for (_, patch) in overrides {
        let Some(entries) = patch.as_map() else {
            continue;
        };
        let top = Node::new(
            patch.span,
            Value::Map(
                entries
                    .iter()
                    .filter(|e| e.key.scalar_text().is_none_or(|k| !KEPT.contains(&k)))
                    .cloned()
                    .collect(),
            ),
        );
        merged = merge_patch(Some(&merged), &top);
    }
    Some(merged)
}

/// RFC 7386: a mapping patch merges key by key (a null value removes the key); anything else
/// replaces the target, lists included.
fn merge_patch(target: Option<&Node>, patch: &Node) -> Node {
    let Some(patch_entries) = patch.as_map() else {
        return patch.clone();
    };
    let mut entries: Vec<Entry> = target
        .and_then(Node::as_map)
        .map(<[Entry]>::to_vec)
        .unwrap_or_default();
    for p in patch_entries {
        let Some(key) = p.key.scalar_text() else {
            continue;
        };
        let at = entries
            .iter()
            .position(|e| e.key.scalar_text() == Some(key));
        if p.value.is_null() {
            if let Some(i) = at {
                entries.remove(i);
            }
            continue;
        }
        match at {
            Some(i) => {
                let value = merge_patch(Some(&entries[i].value), &p.value);
                entries[i] = Entry::new(p.key.clone(), value);
            }
            None => entries.push(Entry::new(p.key.clone(), merge_patch(None, &p.value))),
        }
    }
    // The merged mapping is where the target was, if anywhere.
    let span = target
        .filter(|t| t.as_map().is_some())
        .map_or(patch.span, |t| t.span);
    Node::new(span, Value::Map(entries.into_boxed_slice()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    fn node(text: &str) -> Node {
        crate::yaml::parse(FileId(0), text).docs.remove(0).root
    }

    #[test]
    fn merges_as_a_json_merge_patch_and_keeps_the_location() {
        let source = node(
            "repoURL: https://git.example.com/gitops.git\npath: apps/web\nhelm:\n  releaseName: web\n  parameters:\n    - {name: replicas, value: '2'}\n",
        );
        let over = node(
            "path: elsewhere\nhelm:\n  releaseName: null\n  parameters:\n    - {name: image.tag, value: none}\n",
        );
        let merged = apply(&source, &[(FileId(1), &over)]).unwrap();
        assert_eq!(merged.get_str("path"), Some("apps/web"));
        let helm = merged.get("helm").unwrap();
        assert!(helm.get("releaseName").is_none());
        let params: Vec<_> = helm.get("parameters").unwrap().items().collect();
        assert_eq!(params.len(), 1, "a list is replaced, not merged");
        assert_eq!(params[0].get_str("value"), Some("none"));
        assert_eq!(
            params[0].span,
            over.path(&["helm", "parameters"])
                .unwrap()
                .items()
                .next()
                .unwrap()
                .span
        );
    }
}
