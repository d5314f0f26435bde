//! What a run keeps of the files it reads, declared by their readers. Each reader says what it
//! reads beyond what every document keeps (its tree, less ConfigMap and Secret payload values
//! of [`UNREAD_PAYLOAD_BYTES`] or more; of a Helm values document, its image tags) in a
//! [`Reads`]: a rule in its `RuleMeta::reads`, the model once for its facts (`model::READS`),
//! the engine for user policies and the language server. [`Retention`] is their union, computed once per
//! run, and loading keeps exactly that: an emptied payload is marked ([`Node::dropped`]), and a
//! values document loaded without its tree says what it kept ([`Document::kept`]).

use std::collections::HashSet;

use super::document::{DocKind, Document, KeptValues};
use super::values::{self, Values};
use crate::yaml::{Node, Value};

/// ConfigMap and Secret payload values of this many bytes or more are emptied (and marked
/// dropped) unless a reader declared them: dashboards, certificates and scripts are most of
/// a large repository's bytes, and no built-in check reads them.
pub const UNREAD_PAYLOAD_BYTES: usize = 1024;

/// ConfigMap and Secret payloads (`data`, `stringData`, `binaryData`) a reader reads whole.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Payload {
    /// Every payload of the ConfigMaps and Secrets of these names.
    Named(&'static [&'static str]),
    /// Every payload of the ConfigMaps and Secrets with this label.
    Labelled(&'static str),
    /// The payloads under these keys, in any ConfigMap or Secret.
    Keys(&'static [&'static str]),
    /// Every payload (user policies may read any field of any object).
    All,
}

/// How much of each Helm values document a reader reads, least first.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum ValuesRead {
    /// Nothing: a values document keeps only its image tags, and anything else is parsed
    /// again from its file when asked for ([`super::Documents::helm_values`]).
    #[default]
    ImageTags,
    /// The values of the values files in the folder of a chart with default values
    /// (`values.yaml`), where chart sources layer them over the defaults, or with templates,
    /// which chart sources render with them.
    BesideChartDefaults,
    /// Every values document's values.
    Values,
    /// Every values document's tree.
    Trees,
}

/// What one reader (a rule, a fact of the model, a user policy, the language server) reads
/// beyond what every document keeps. Declared once, as a constant beside the reader.
#[derive(Clone, Copy, Debug)]
pub struct Reads {
    pub payloads: &'static [Payload],
    pub values: ValuesRead,
    /// Top-level keys of Helm values documents the reader walks: a document with one keeps
    /// its tree.
    pub values_keys: &'static [&'static str],
    /// Texts the reader reads when they may hold what it looks for (see [`TextsWhen`]).
    pub texts_when: Option<TextsWhen>,
    /// Kinds whose texts the reader reads, among those otherwise released after the load
    /// ([`RELEASED_KINDS`]).
    pub texts: &'static [DocKind],
}

impl Reads {
    /// What most readers declare: nothing beyond what every document keeps.
    pub const NONE: Reads = Reads {
        payloads: &[],
        values: ValuesRead::ImageTags,
        values_keys: &[],
        texts_when: None,
        texts: &[],
    };

    /// Everything: user policies may read any field of any object, and `data.gitops` places
    /// every Argo CD object by line.
    pub const EVERYTHING: Reads = Reads {
        payloads: &[Payload::All],
        values: ValuesRead::Trees,
        texts: &[
            DocKind::Application,
            DocKind::ApplicationSet,
            DocKind::AppProject,
        ],
        ..Reads::NONE
    };

    /// Every values document's values (the language server's hovers, a policy reading
    /// `data.gitops` values).
    pub const VALUES: Reads = Reads {
        values: ValuesRead::Values,
        ..Reads::NONE
    };
}

/// The texts a reader reads of the files whose documents are of `kinds`: those `test` says
/// may hold what it looks for (values or a configuration embedded as a string). They are kept,
/// and so are the trees of their values documents (the reader walks them too).
#[derive(Clone, Copy, Debug)]
pub struct TextsWhen {
    pub kinds: &'static [DocKind],
    pub test: fn(&str) -> bool,
}

impl PartialEq for TextsWhen {
    fn eq(&self, other: &Self) -> bool {
        self.kinds == other.kinds && std::ptr::fn_addr_eq(self.test, other.test)
    }
}

/// Kinds read through their trees (values files through their values): their texts are
/// needed again only to show a finding or build a fix, so they are released after the load
/// and read again then (`SourceFile::text`), unless a reader declares it reads them. Other
/// kinds' texts are kept.
pub const RELEASED_KINDS: [DocKind; 6] = [
    DocKind::K8sObject,
    DocKind::HelmChart,
    DocKind::HelmValues,
    DocKind::Application,
    DocKind::ApplicationSet,
    DocKind::AppProject,
];

/// What a run keeps: the union of its readers' [`Reads`].
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Retention {
    payloads: Vec<Payload>,
    values: ValuesRead,
    values_keys: Vec<&'static str>,
    texts_when: Vec<TextsWhen>,
    texts: Vec<DocKind>,
}

impl Retention {
    /// The union of `reads`.
    pub fn of<'a>(reads: impl IntoIterator<Item = &'a Reads>) -> Retention {
        let mut r = Retention::default();
        for read in reads {
            r.values = r.values.max(read.values);
            add_new(&mut r.payloads, read.payloads);
            add_new(&mut r.values_keys, read.values_keys);
            add_new(&mut r.texts, read.texts);
            if let Some(when) = read.texts_when {
                add_new(&mut r.texts_when, &[when]);
            }
        }
        if r.payloads.contains(&Payload::All) {
            r.payloads = vec![Payload::All];
        }
        r
    }

    /// Whether every values document keeps at least its values: the model's sources may then
    /// not drop their effective values after resolution (see `Model::dropping_unread_values`).
    #[must_use]
    pub fn keeps_all_values(&self) -> bool {
        self.values >= ValuesRead::Values
    }

    /// The folders among `paths` whose values files keep their values although the run keeps
    /// only image tags elsewhere: those of charts with default values or with a `templates`
    /// folder (`with_templates`, sorted), which a chart source renders with its values whole
    /// (see [`ValuesRead::BesideChartDefaults`]). Empty when every values file keeps them
    /// anyway.
    #[must_use]
    pub fn folders_keeping_values<'a>(
        &self,
        paths: impl Iterator<Item = &'a str> + Clone,
        with_templates: &[String],
    ) -> HashSet<&'a str> {
        if self.values != ValuesRead::BesideChartDefaults {
            return HashSet::new();
        }
        let with_values: HashSet<&str> = paths
            .clone()
            .filter_map(|p| {
                let (dir, name) = p.rsplit_once('/').unwrap_or(("", p));
                matches!(name, "values.yaml" | "values.yml").then_some(dir)
            })
            .collect();
        super::memory::chart_dirs(paths)
            .into_iter()
            .filter(|d| {
                with_values.contains(d)
                    || with_templates
                        .binary_search_by(|t| t.as_str().cmp(d))
                        .is_ok()
            })
            .collect()
    }

    /// Keeps of one file's documents what the run reads (`keeps_values`: the file is in one of
    /// [`Retention::folders_keeping_values`]). Returns whether the file's text may be released
    /// once loaded: its documents are read through their trees, nothing declared reading its
    /// text, and it has no suppression comment (they are parsed from the text).
    pub fn retain(&self, docs: &mut [Document], text: &str, keeps_values: bool) -> bool {
        let text_read = self
            .texts_when
            .iter()
            .any(|when| docs.iter().any(|d| when.kinds.contains(&d.kind)) && (when.test)(text));
        for d in docs.iter_mut() {
            self.drop_unread_payloads(d);
            if d.kind == DocKind::HelmValues && !text_read {
                self.keep_values(d, keeps_values);
            }
        }
        let releasable = |kind: DocKind| {
            RELEASED_KINDS.contains(&kind) && !self.texts.contains(&kind) && !text_read
        };
        docs.first().is_some_and(|first| {
            docs.iter().all(|d| d.kind == first.kind) && releasable(first.kind)
        }) && !text.contains(crate::suppress::MARKER)
    }

    /// Empties the payload values of at least [`UNREAD_PAYLOAD_BYTES`] of a v1 ConfigMap or
    /// Secret that no reader declared, keeping every key and span and marking each emptied
    /// value ([`Node::dropped`]). An object without a name keeps them all: it may be a
    /// kustomize patch of any object (a patch's `target` names it). Returns true when
    /// something was emptied.
    pub fn drop_unread_payloads(&self, doc: &mut Document) -> bool {
        if doc.kind != DocKind::K8sObject
            || doc.api_version() != Some("v1")
            || !matches!(doc.k8s_kind(), Some("ConfigMap" | "Secret"))
            || doc.name().is_none()
            || self.payloads.iter().any(|p| reads_object(*p, doc))
        {
            return false;
        }
        let Value::Map(entries) = &mut std::sync::Arc::make_mut(&mut doc.root).value else {
            return false;
        };
        let mut dropped = false;
        for e in entries.iter_mut().filter(|e| {
            matches!(
                e.key.scalar_text(),
                Some("data" | "stringData" | "binaryData")
            )
        }) {
            let Value::Map(payloads) = &mut e.value.value else {
                continue;
            };
            for p in payloads.iter_mut() {
                let key = p.key.scalar_text().unwrap_or("");
                if self
                    .payloads
                    .iter()
                    .any(|p| matches!(p, Payload::Keys(keys) if keys.contains(&key)))
                {
                    continue;
                }
                if p.value
                    .scalar_text()
                    .is_some_and(|s| s.len() >= UNREAD_PAYLOAD_BYTES)
                {
                    p.value.drop_text();
                    dropped = true;
                }
            }
        }
        dropped
    }

    /// What a values document keeps: its tree when the run reads trees or it has one of the
    /// declared keys, else its values (`keeps_values`, or when the run reads them) or only its
    /// image tags, and then its tree is dropped.
    fn keep_values(&self, doc: &mut Document, keeps_values: bool) {
        if self.values == ValuesRead::Trees
            || self.values_keys.iter().any(|k| doc.root.get(k).is_some())
        {
            return;
        }
        let values = Values::from_node(&doc.root, None);
        doc.kept = Some(if keeps_values || self.keeps_all_values() {
            KeptValues::Values(values)
        } else {
            KeptValues::ImageTags(values::image_tags(&values).into())
        });
        doc.root = std::sync::Arc::new(Node::new(doc.root.span, Value::Map(Box::default())));
    }
}

/// Whether `payload` names all of `doc`'s payloads.
fn reads_object(payload: Payload, doc: &Document) -> bool {
    match payload {
        Payload::All => true,
        Payload::Named(names) => doc.name().is_some_and(|n| names.contains(&n)),
        Payload::Labelled(label) => doc.root.path(&["metadata", "labels", label]).is_some(),
        Payload::Keys(_) => false,
    }
}

fn add_new<T: PartialEq + Copy>(to: &mut Vec<T>, items: &[T]) {
    for item in items {
        if !to.contains(item) {
            to.push(*item);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_files_keep_their_values_beside_a_chart_with_defaults_or_templates() {
        let paths = [
            "defaults/Chart.yaml",
            "defaults/values.yaml",
            "defaults/values-prod.yaml",
            "templated/Chart.yaml",
            "templated/values-prod.yaml",
            "plain/Chart.yaml",
            "plain/values-prod.yaml",
            "env/values-prod.yaml",
        ];
        let with_templates = ["templated".to_string()];
        let resolver = Retention::of(&[Reads {
            values: ValuesRead::BesideChartDefaults,
            ..Reads::NONE
        }]);
        let mut folders: Vec<&str> = resolver
            .folders_keeping_values(paths.iter().copied(), &with_templates)
            .into_iter()
            .collect();
        folders.sort_unstable();
        assert_eq!(folders, ["defaults", "templated"]);
        // A run that keeps every values document's values, or none, names no folder.
        for reads in [Reads::VALUES, Reads::NONE] {
            let r = Retention::of(&[reads]);
            assert!(
                r.folders_keeping_values(paths.iter().copied(), &with_templates)
                    .is_empty()
            );
        }
    }

    #[test]
    fn unread_payloads_are_dropped_and_marked_and_declared_ones_kept() {
        let big = "x".repeat(UNREAD_PAYLOAD_BYTES);
        let mut repo = super::super::memory::documents(
            &[
                (
                    "dash.yaml",
                    &format!(
                        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: dash}}\ndata:\n  small: ok\n  config.yaml: {big}\n  dashboard.json: |\n    {big}\n  empty: \"\"\n"
                    ),
                ),
                (
                    "argocd.yaml",
                    &format!(
                        "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: argocd-cm}}\ndata:\n  a: {big}\n"
                    ),
                ),
                (
                    "cluster.yaml",
                    &format!(
                        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: prod\n  labels: {{argocd.argoproj.io/secret-type: cluster}}\nstringData:\n  config: {big}\n"
                    ),
                ),
                (
                    "deploy.yaml",
                    &format!(
                        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {{name: dash}}\ndata:\n  a: {big}\n"
                    ),
                ),
            ],
            std::path::PathBuf::from("."),
            false,
        );
        let retention = Retention::of(&[Reads {
            payloads: &[
                Payload::Labelled("argocd.argoproj.io/secret-type"),
                Payload::Named(&["argocd-cm"]),
                Payload::Keys(&["config.yaml"]),
            ],
            ..Reads::NONE
        }]);
        let written = repo.docs[2]
            .root
            .path(&["data", "dashboard.json"])
            .unwrap()
            .span;
        let docs = &mut repo.docs;
        let dropped: Vec<bool> = docs
            .iter_mut()
            .map(|d| retention.drop_unread_payloads(d))
            .collect();
        assert_eq!(
            dropped,
            [false, false, true, false],
            "argocd, cluster, dash, deploy"
        );
        let dash = &docs[2].root;
        let small = dash.path(&["data", "small"]).unwrap();
        assert_eq!(small.as_str(), Some("ok"));
        assert!(!small.dropped());
        assert_eq!(
            dash.path(&["data", "config.yaml"]).and_then(Node::as_str),
            Some(big.as_str())
        );
        let emptied = dash.path(&["data", "dashboard.json"]).unwrap();
        assert_eq!(emptied.as_str(), Some(""));
        // Dropped, not empty: the mark tells them apart.
        assert!(emptied.dropped());
        assert!(!dash.path(&["data", "empty"]).unwrap().dropped());
        // The span still covers the payload as written.
        assert_eq!(emptied.span, written);
        // A run that reads every payload (user policies) keeps them.
        let all = Retention::of(&[Reads::EVERYTHING, Reads::NONE]);
        let mut fresh = super::super::memory::documents(
            &[(
                "dash.yaml",
                &format!(
                    "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: dash}}\ndata:\n  a: {big}\n"
                ),
            )],
            std::path::PathBuf::from("."),
            false,
        );
        assert!(!all.drop_unread_payloads(&mut fresh.docs[0]));
    }

    #[test]
    fn values_documents_keep_what_their_readers_declare() {
        let files = [
            ("a/values.yaml", "image:\n  tag: \"1.0\"\nreplicas: 2\n"),
            ("b/values.yaml", "configs:\n  cm: {url: x}\n"),
        ];
        let kept = |retention: &Retention| {
            let mut repo =
                super::super::memory::documents(&files, std::path::PathBuf::from("."), false);
            for d in &mut repo.docs {
                let text = files[d.file.0 as usize].1;
                retention.retain(std::slice::from_mut(d), text, false);
            }
            repo.docs
                .iter()
                .map(|d| match &d.kept {
                    None => "tree",
                    Some(KeptValues::Values(_)) => "values",
                    Some(KeptValues::ImageTags(_)) => "tags",
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(kept(&Retention::of(&[Reads::NONE])), ["tags", "tags"]);
        let schema = Reads {
            values_keys: &["configs"],
            ..Reads::NONE
        };
        assert_eq!(kept(&Retention::of(&[schema])), ["tags", "tree"]);
        assert_eq!(
            kept(&Retention::of(&[schema, Reads::VALUES])),
            ["values", "tree"]
        );
        assert_eq!(kept(&Retention::of(&[Reads::EVERYTHING])), ["tree", "tree"]);
    }
}
