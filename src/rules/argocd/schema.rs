//! `argocd/schema`: Argo CD objects validated against Argo CD's API types, for the configured
//! Argo CD version, so that a typo never makes Argo CD (or this linter) silently blind.

mod strings;
mod walk;

use crate::diagnostic::Finding;
use crate::fix::{Applicability, Edit, Fix};
use crate::model::argocd::schema::{CONFIG_MAPS, Shape, Version, schema};
use crate::model::{DocKind, Document};
use crate::rule::rule_options;
use crate::rules::{Context, FixAvailability, Payload, Reads, Rule, RuleMeta};
use crate::yaml::{Node, ScalarStyle};

pub struct Schema;

/// This rule's id.
pub const ID: &str = "argocd/schema";

static META: RuleMeta = RuleMeta {
    id: ID,
    summary: "an Argo CD object, annotation or ConfigMap key does not match Argo CD's schema (unknown field, wrong type or value, missing field)",
    default_severity: crate::diagnostic::Severity::Error,
    fix: FixAvailability::Sometimes,
    // Argo CD's ConfigMaps' keys and values (`strings::config_map`), and the values documents
    // with a top-level key the values checks read: the argo-cd chart's `configs` (also under
    // `argo-cd`, `strings::chart_values`), and the `metadata` and `kind` of an Argo CD object
    // saved under a values file name (`strings::misclassified`).
    reads: Reads {
        payloads: &[Payload::Named(&CONFIG_MAPS)],
        values_keys: &["configs", "argo-cd", "metadata", "kind"],
        ..Reads::NONE
    },
    applies_to: &[
        DocKind::Application,
        DocKind::ApplicationSet,
        DocKind::AppProject,
        DocKind::K8sObject,
        DocKind::HelmValues,
        DocKind::Other,
    ],
    options: Options::DECLARED,
    docs: include_str!("schema.md"),
};

rule_options! {
    /// The `argocd:` section's key of this rule.
    pub struct Options {
        /// `argocd.version`: the Argo CD release the repository targets; `None`: the latest
        /// modelled release.
        pub version: Option<Version>,
    }
}

impl Rule for Schema {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    // Every document is judged in `check_project`, the rendered ones included: the document
    // pass and the deployed pass have nothing to offer it.
    fn applies(&self, _: &Document, _: &Context<'_>) -> bool {
        false
    }

    fn may_apply_to(&self, _: DocKind) -> bool {
        false
    }

    // One pass over the documents with the set of files kustomize patches, computed once.
    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        use rayon::prelude::*;
        let patched = patched_paths(cx.repo);
        let written: Vec<Finding> = cx
            .repo
            .docs
            .par_iter()
            .enumerate()
            // A patch is judged merged into what it patches (the patched tree's nodes point
            // at the patch's lines), never as an object of its own.
            .filter(|(i, d)| META.applies_to.contains(&d.kind) && !cx.repo.is_patch(*i))
            .flat_map_iter(|(_, doc)| {
                let path = &cx.repo.source(doc.file).path;
                let partial = is_patched(&patched, path);
                // A values document loaded without its tree has none of the keys declared
                // in `META.reads` (it would have kept its tree): nothing here to check.
                if doc.kept.is_some() {
                    return Vec::new();
                }
                check_document(doc, cx, partial)
            })
            .collect();
        // The Argo CD objects charts render, as Argo CD receives them: findings land where the
        // value came from, labelled with the object, and carry no fix (the text there is not
        // the object's).
        let deployed = &cx.model.deployed().docs;
        if deployed.is_empty() {
            return written;
        }
        // One finding per place, however many objects a template renders there.
        let mut seen: std::collections::HashSet<(crate::source::Span, String)> = written
            .iter()
            .map(|f| (f.span, f.message.clone()))
            .collect();
        let mut out = written;
        for d in deployed {
            for mut f in check_document(&d.doc, cx, false) {
                if seen.insert((f.span, f.message.clone())) {
                    f.fix = None;
                    out.push(f.with_label(d.origin_span, d.origin.clone()));
                }
            }
        }
        out
    }
}

/// Checks one document; `partial` when kustomize patches may complete it (required fields are
/// then not judged).
fn check_document(doc: &Document, cx: &Context<'_>, partial: bool) -> Vec<Finding> {
    let schema = schema();
    let version = configured_version(cx);
    let mut out = Vec::new();
    let kind = match doc.kind {
        DocKind::Application => Some("Application"),
        DocKind::ApplicationSet => Some("ApplicationSet"),
        DocKind::AppProject => Some("AppProject"),
        DocKind::K8sObject | DocKind::Other => {
            strings::config_map(doc, schema, version, &mut out);
            strings::misclassified(doc, &mut out)
        }
        DocKind::HelmValues => {
            strings::chart_values(doc, schema, version, &mut out);
            // `values-app.yaml` holding an Application whose `apiVersion` is misspelled.
            strings::misclassified(doc, &mut out)
        }
        _ => None,
    };
    if matches!(
        doc.kind,
        DocKind::Application | DocKind::ApplicationSet | DocKind::AppProject
    ) {
        strings::api_version(doc, &mut out);
    }
    strings::annotations(doc, version, &mut out);
    if let Some(kind) = kind {
        let source = cx.repo.source(doc.file);
        let template_patch = kind == "ApplicationSet"
            && doc
                .root
                .path(&["spec", "templatePatch"])
                .is_some_and(|p| !p.is_null());
        let mut walker = walk::Walker::new(schema, version, source, partial, template_patch);
        let reported: Vec<_> = out.iter().map(|f| f.span).collect();
        walker.value(
            &doc.root,
            &Shape::Object(kind.to_string()),
            &[],
            doc.anchor_span(),
        );
        // A misspelled `apiVersion`/`kind` is reported once, above.
        out.extend(
            walker
                .out
                .into_iter()
                .filter(|f| !reported.contains(&f.span)),
        );
    }
    for f in &mut out {
        if f.fix
            .as_ref()
            .is_some_and(|fix| !crate::yaml::edit::keeps_yaml_valid(cx.text(doc), &fix.edits))
        {
            f.fix = None;
        }
    }
    out
}

/// `argocd.version`, in the modelled range; the latest modelled release when unset.
fn configured_version(cx: &Context<'_>) -> Version {
    let schema = schema();
    schema.clamp(
        cx.options::<Options>()
            .version
            .unwrap_or_else(|| schema.latest()),
    )
}

/// The field of the schema's struct `name` (`SyncPolicyAutomated`) that this rule reads an
/// unknown `key` as a typo of (`selfheal` for `selfHeal`), at the configured version: the rule
/// reports it with its rename, so other rules leave that key to it.
#[must_use]
pub fn meant_field(cx: &Context<'_>, name: &str, key: &str) -> Option<&'static str> {
    let st = schema().get(name)?;
    if st.field(key).is_some() {
        return None;
    }
    walk::meant_field(st, key, configured_version(cx)).map(|s| s.name)
}

/// Keys this rule reports as typos of a field (`selfheal`, `Automated`), with their rename,
/// when it runs: another rule then does not also report that field as missing, nor add it
/// beside the typo.
pub struct Typos<'c> {
    cx: Option<&'c Context<'c>>,
}

impl<'c> Typos<'c> {
    #[must_use]
    pub fn new(cx: &'c Context<'c>) -> Self {
        Typos {
            cx: cx.rule_enabled(ID).then_some(cx),
        }
    }

    /// The entry of `map` (a struct `st` of the schema) that is a typo of `field`.
    pub fn of<'n>(&self, map: &'n Node, st: &str, field: &str) -> Option<&'n crate::yaml::Entry> {
        let cx = self.cx?;
        map.entries().find(|e| {
            e.key
                .scalar_text()
                .is_some_and(|k| meant_field(cx, st, k) == Some(field))
        })
    }
}

/// Whether `path` or one of its folders is in `patched` (sorted; `""` is the root).
fn is_patched(patched: &[String], path: &str) -> bool {
    let mut at = path;
    loop {
        if patched.binary_search_by(|p| p.as_str().cmp(at)).is_ok() {
            return true;
        }
        match at.rsplit_once('/') {
            Some((parent, _)) => at = parent,
            None => return at.is_empty() || patched.first().is_some_and(String::is_empty),
        }
    }
}

/// Repository paths (files or folders) that a kustomization with patches lists as resources,
/// and its own folder: Argo CD sees their objects only after patching, so they may lack
/// required fields. `""` (the root) matches every file.
fn patched_paths(repo: &crate::model::Repository) -> Vec<String> {
    const PATCH_KEYS: [&str; 4] = [
        "patches",
        "patchesStrategicMerge",
        "patchesJson6902",
        "replacements",
    ];
    let mut out = Vec::new();
    for k in repo.docs_of(DocKind::Kustomization) {
        if !PATCH_KEYS.iter().any(|key| k.root.get(key).is_some()) {
            continue;
        }
        let path = &repo.source(k.file).path;
        let dir = path.rsplit_once('/').map_or("", |(d, _)| d);
        // Files below it too: a resource commented out of the list is still written to be
        // patched.
        out.push(dir.to_string());
        for list in ["resources", "bases", "components"] {
            for r in k.root.get(list).into_iter().flat_map(Node::items) {
                let Some(r) = r.as_str().filter(|r| !r.contains("://")) else {
                    continue;
                };
                if let Some(p) = crate::model::paths::join(dir, r) {
                    out.push(p);
                }
            }
        }
    }
    out.sort();
    out.dedup();
    out
}

/// The intended name of a misspelled key or value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Suggestion<'a> {
    pub name: &'a str,
    /// The two differ only in letter case.
    pub case_only: bool,
}

/// The candidate `word` most likely means: the one equal but for case, else the nearest by
/// edit distance (at most 1 for short words, 2 up to 8 characters, else 3).
#[must_use]
pub fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<Suggestion<'a>> {
    let lower = word.to_lowercase();
    let mut same_case = candidates
        .iter()
        .filter(|c| c.to_lowercase() == lower && **c != word);
    if let Some(first) = same_case.next() {
        return Some(Suggestion {
            name: first,
            case_only: same_case.next().is_none(),
        });
    }
    let limit = match word.chars().count() {
        0..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    candidates
        .iter()
        .filter(|c| **c != word)
        .map(|c| (strsim::osa_distance(&lower, &c.to_lowercase()), *c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, c)| (*d, *c))
        .map(|(_, name)| Suggestion {
            name,
            case_only: false,
        })
}

/// Renames a plain-scalar key: safe when only the letter case changes, else unsafe.
#[must_use]
pub fn rename_key(key: &Node, to: &str, case_only: bool) -> Option<Fix> {
    let plain = key
        .as_scalar()
        .is_some_and(|s| s.style == ScalarStyle::Plain);
    if !plain || key.tag().is_some() {
        return None;
    }
    let applicability = if case_only {
        Applicability::Safe
    } else {
        Applicability::Unsafe
    };
    Fix::new(
        format!("rename to `{to}`"),
        applicability,
        vec![Edit {
            span: key.span,
            replacement: to.to_string(),
        }],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patched_folders_and_files() {
        let patched = vec!["apps/base".to_string(), "infra/app.yaml".to_string()];
        assert!(is_patched(&patched, "apps/base/shop.yaml"));
        assert!(is_patched(&patched, "apps/base/x/y.yaml"));
        assert!(is_patched(&patched, "infra/app.yaml"));
        assert!(!is_patched(&patched, "apps/basement/shop.yaml"));
        assert!(!is_patched(&patched, "shop.yaml"));
        assert!(is_patched(&[String::new()], "shop.yaml"));
    }

    #[test]
    fn suggestions() {
        let names = ["selfHeal", "prune", "allowEmpty", "enabled"];
        assert_eq!(
            suggest("selfheal", &names),
            Some(Suggestion {
                name: "selfHeal",
                case_only: true
            })
        );
        assert_eq!(suggest("prunee", &names).unwrap().name, "prune");
        assert!(!suggest("prunee", &names).unwrap().case_only);
        assert_eq!(suggest("somethingElse", &names), None);
        assert_eq!(suggest("prune", &names), None);
        assert_eq!(
            suggest("valueFile", &["valueFiles", "values"])
                .unwrap()
                .name,
            "valueFiles"
        );
    }
}
