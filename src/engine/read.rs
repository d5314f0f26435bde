//! Reading one file: its text from disk (or the overlay given for it), parsed and classified,
//! and what the run keeps of it.

use std::path::PathBuf;

use crate::diagnostic::{Finding, Severity};
use crate::model::{self, Document};
use crate::repo::retention::Retention;
use crate::rules::internal;
use crate::source::{FileId, SourceFile, Span};
use crate::yaml::{self, YamlErrorKind};

#[derive(Clone)]
pub(super) struct Loaded {
    pub(super) source: SourceFile,
    pub(super) docs: Vec<Document>,
    pub(super) findings: Vec<(&'static str, Finding)>,
}

/// One file: its overlay text if it has one, else the file on disk.
pub(super) fn load_one(
    id: FileId,
    rel: String,
    abs: PathBuf,
    problem: Option<(String, bool)>,
    overlay: &std::collections::BTreeMap<String, String>,
    retention: &Retention,
    keeps_values: bool,
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
            Ok((text, stamp)) => load_text(id, rel, abs, text, stamp, retention, keeps_values),
            Err(reason) => unreadable(id, rel, abs, (reason, false)),
        };
        if buffer.capacity() > KEPT_BUFFER_BYTES {
            *buffer = Vec::new();
        }
        loaded
    })
}

/// A file read from disk: parsed, and of it kept what the run's readers declared (see
/// [`Retention::retain`]; `keeps_values`: it is in one of
/// [`Retention::folders_keeping_values`]).
fn load_text(
    id: FileId,
    rel: String,
    abs: PathBuf,
    text: &str,
    stamp: crate::source::Stamp,
    retention: &Retention,
    keeps_values: bool,
) -> Loaded {
    let (mut docs, findings) = parse_text(id, &rel, text);
    // A file that changed while read keeps its text: it could not be read again as parsed.
    let release = retention.retain(&mut docs, text, keeps_values) && text.len() as u64 == stamp.0;
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

/// A text that is not on disk (`diff`'s base revision, read from git): parsed and retained
/// as [`load_text`] does, its text kept in memory, since the file on disk is another one.
pub(super) fn load_kept(
    id: FileId,
    rel: &str,
    abs: PathBuf,
    text: &str,
    retention: &Retention,
    keeps_values: bool,
) -> Loaded {
    let (mut docs, findings) = parse_text(id, rel, text);
    retention.retain(&mut docs, text, keeps_values);
    Loaded {
        source: SourceFile::new(id, rel.to_string(), abs, text.to_string()),
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

/// The template language whose directives `text` holds, if any: Jinja (`{% %}`, `{# #}`),
/// Terraform's `templatefile` (`%{ }`), or Go templates (`{{ }}`). A YAML file with one of
/// these that parses is YAML and is checked; one that does not parse is that tool's template.
fn template_syntax(text: &str) -> Option<&'static str> {
    let has = |open: &str, close: &str| {
        text.find(open)
            .is_some_and(|at| text[at + open.len()..].contains(close))
    };
    if has("{%", "%}") || has("{#", "#}") {
        Some("Jinja `{% %}`")
    } else if has("%{", "}") {
        Some("Terraform `%{ }`")
    } else if has("{{", "}}") {
        Some("Go template `{{ }}`")
    } else {
        None
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
    // A template of another tool (Jinja, Terraform's `templatefile`, a Go template outside a
    // chart) is not YAML until rendered: one info at the first error, not errors.
    // Looked for only in a file that does not parse.
    let template = parsed
        .errors
        .iter()
        .any(|e| matches!(e.kind, YamlErrorKind::Syntax))
        .then(|| template_syntax(text))
        .flatten();
    let mut template_reported = false;
    for e in yaml::limit_duplicate_keys(parsed.errors) {
        if let (Some(what), YamlErrorKind::Syntax) = (template, &e.kind) {
            if !template_reported {
                template_reported = true;
                findings.push((
                    internal::YamlSyntax::ID,
                    Finding::new(
                        format!("`{rel}` is a template ({what}), not YAML until it is rendered: it is not checked ({})", e.message),
                        e.span,
                    )
                    .with_severity(Severity::Info)
                    .with_help("Exclude it in `.gitops-lint.yaml` (`exclude:`) if a tool renders it first; if it is meant to be YAML, fix the syntax."),
                ));
            }
            continue;
        }
        let (rule, f) = match e.kind {
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
