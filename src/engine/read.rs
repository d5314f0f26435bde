//! Reading one file: its text from disk (or the overlay given for it), parsed and classified,
//! and what the run keeps of it.

use std::path::PathBuf;

use crate::diagnostic::{Finding, Severity};
use crate::model::{self, Document};
use crate::rules::internal;
use crate::source::{FileId, SourceFile, Span};
use crate::suppress;
use crate::yaml::{self, YamlErrorKind};

#[derive(Clone)]
pub(super) struct Loaded {
    pub(super) source: SourceFile,
    pub(super) docs: Vec<Document>,
    pub(super) findings: Vec<(&'static str, Finding)>,
}

/// What loading keeps of the files beyond what the built-in rules read.
#[derive(Clone, Copy)]
pub(super) struct Keep {
    /// Every object's payload: user policies may read any field of any object.
    pub payloads: bool,
    /// Every Helm values file's values. Without, a values file keeps only its image tags,
    /// unless it is in the folder of a chart with default values (`values.yaml`), where
    /// chart sources layer it over them and read it whole (see `model::argocd::resolve`).
    pub values: bool,
}

/// One file: its overlay text if it has one, else the file on disk.
pub(super) fn load_one(
    id: FileId,
    rel: String,
    abs: PathBuf,
    problem: Option<(String, bool)>,
    overlay: &std::collections::BTreeMap<String, String>,
    keep: Keep,
) -> Loaded {
    /// The read buffer a thread keeps between files, when not larger than this.
    const KEPT_BUFFER_BYTES: usize = 4 * 1024 * 1024;
    thread_local! {
        static READ_BUFFER: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
    }
    if let Some(text) = overlay.get(&rel) {
        return parse_file(id, rel, abs, text.clone());
    }
    if let Some(problem) = problem {
        return unreadable(id, rel, abs, problem);
    }
    READ_BUFFER.with_borrow_mut(|buffer| {
        let loaded = match crate::source::read_text_into(&abs, buffer) {
            Ok((text, stamp)) => load_text(id, rel, abs, text, stamp, keep),
            Err(reason) => unreadable(id, rel, abs, (reason, false)),
        };
        if buffer.capacity() > KEPT_BUFFER_BYTES {
            *buffer = Vec::new();
        }
        loaded
    })
}

/// A file read from disk: parsed, and kept whole only when something reads its text again.
fn load_text(
    id: FileId,
    rel: String,
    abs: PathBuf,
    text: &str,
    stamp: crate::source::Stamp,
    keep: Keep,
) -> Loaded {
    let keep_payloads = keep.payloads;
    let (mut docs, findings) = parse_text(id, &rel, text);
    // A values file that may hold a cloudflared route keeps its tree and text: the route is
    // read from them (`model::k8s::routes::tunnels`).
    let may_hold_routes = docs.iter().any(|d| d.kind == model::DocKind::HelmValues)
        && model::k8s::routes::tunnels::text_may_hold_routes(text);
    if !keep_payloads {
        for d in &mut docs {
            model::k8s::drop_unread_payloads(d);
            if d.kind == model::DocKind::HelmValues && !may_hold_routes {
                let values = model::helm::values::Values::from_node(&d.root, None);
                d.kept = Some(model::KeptValues::new(values, keep.values));
                d.root = std::sync::Arc::new(crate::yaml::Node::new(
                    d.root.span,
                    crate::yaml::Value::Map(Box::default()),
                ));
            }
        }
    }
    // Plain manifests, charts' `Chart.yaml`, Helm values files and Argo CD objects are read
    // through their trees (values files through their values); their text is needed again
    // only to show a finding or build a fix, so it is read again then. Argo CD objects keep
    // theirs when user policies run (`data.gitops` may place every Application by line).
    // Suppression comments are parsed from the text, so files with one keep theirs. A file
    // that changed while read keeps it.
    let releasable = |kind: model::DocKind| match kind {
        model::DocKind::K8sObject | model::DocKind::HelmChart => true,
        model::DocKind::HelmValues => !may_hold_routes,
        model::DocKind::Application
        | model::DocKind::ApplicationSet
        | model::DocKind::AppProject => !keep_payloads,
        _ => false,
    };
    let release = docs
        .first()
        .is_some_and(|first| docs.iter().all(|d| d.kind == first.kind) && releasable(first.kind))
        && !text.contains(suppress::MARKER)
        && text.len() as u64 == stamp.0;
    let source = if release {
        SourceFile::released(id, rel, abs, stamp)
    } else {
        SourceFile::new(id, rel, abs, text.to_string())
    };
    Loaded {
        source,
        docs,
        findings,
    }
}

/// A file that cannot be read (`skipped`: deliberately, such as a link out of the root).
pub(super) fn unreadable(
    id: FileId,
    rel: String,
    abs: PathBuf,
    (reason, skipped): (String, bool),
) -> Loaded {
    let finding = if skipped {
        // A deliberate skip (a link out of the root): said, but not a failure.
        Finding::new(
            format!("`{rel}` was not read: {reason}"),
            Span::empty(id, 0),
        )
        .with_severity(Severity::Info)
        .with_help("Copy the file into the repository if Argo CD reads it from here.")
    } else {
        Finding::new(format!("cannot read `{rel}`: {reason}"), Span::empty(id, 0))
            .with_help("Fix the file or exclude it in `.gitops-lint.yaml`; it was not checked.")
    };
    Loaded {
        source: SourceFile::unreadable(id, rel, abs, (!skipped).then_some(reason)),
        docs: Vec::new(),
        findings: vec![(internal::IoUnreadable::ID, finding)],
    }
}

/// Files larger than this are checked in streaming mode: YAML syntax and duplicate keys only,
/// without building a tree, so memory stays at about the file's size.
pub const LARGE_FILE_BYTES: usize = 32 * 1024 * 1024;

pub(super) fn parse_file(id: FileId, rel: String, abs: PathBuf, text: String) -> Loaded {
    let (docs, findings) = parse_text(id, &rel, &text);
    Loaded {
        source: SourceFile::new(id, rel, abs, text),
        docs,
        findings,
    }
}

/// The documents of a file's text, classified, and its YAML problems.
fn parse_text(id: FileId, rel: &str, text: &str) -> (Vec<Document>, Vec<(&'static str, Finding)>) {
    let mut findings = Vec::new();
    let mut docs = Vec::new();
    let parsed = if text.len() > LARGE_FILE_BYTES {
        findings.push((
            internal::YamlResourceLimit::ID,
            Finding::new(
                format!(
                    "`{rel}` is {} MiB, more than the {} MiB analysed in full: only its YAML syntax and keys were checked, no rule ran on it",
                    text.len() / (1024 * 1024),
                    LARGE_FILE_BYTES / (1024 * 1024)
                ),
                Span::empty(id, 0),
            )
            .with_severity(Severity::Warning)
            .with_help("Split the file, or exclude it if Argo CD does not read it."),
        ));
        yaml::ParsedYaml {
            docs: Vec::new(),
            errors: yaml::validate_stream(id, text),
        }
    } else {
        yaml::parse(id, text)
    };
    for e in yaml::limit_duplicate_keys(parsed.errors) {
        let (rule, mut f) = match e.kind {
            YamlErrorKind::Syntax => (internal::YamlSyntax::ID, Finding::new(e.message, e.span)),
            YamlErrorKind::ResourceLimit => (
                internal::YamlResourceLimit::ID,
                Finding::new(e.message, e.span),
            ),
            YamlErrorKind::DuplicateKey { first } => (
                internal::YamlDuplicateKey::ID,
                Finding::new(e.message, e.span).with_label(first, "first defined here"),
            ),
        };
        if rule == internal::YamlSyntax::ID && text.contains("{{") {
            f = f.with_help("This file holds `{{`, so it may be a Go template: Helm templates belong in a chart's `templates/` folder; otherwise exclude it in `.gitops-lint.yaml`.");
        }
        findings.push((rule, f));
    }
    for d in parsed.docs {
        let kind = model::classify(rel, &d.root);
        docs.push(Document {
            file: id,
            index: d.index,
            span: d.span,
            root: std::sync::Arc::new(d.root),
            kind,
            kept: None,
            rendered: false,
        });
    }
    (docs, findings)
}
