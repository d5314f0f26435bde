//! What the server tells the client: its capabilities, and reports and configuration errors
//! as LSP diagnostics by file.

use std::collections::{BTreeMap, HashMap};
use std::path::Path;

use lsp_types::{
    CodeActionKind, CodeActionOptions, CodeActionProviderCapability, CompletionOptions,
    DiagnosticSeverity, DiagnosticTag, HoverProviderCapability, InitializeResult, OneOf,
    ServerCapabilities, ServerInfo, TextDocumentSyncCapability, TextDocumentSyncKind,
    TextDocumentSyncOptions, TextDocumentSyncSaveOptions, Uri,
};

use gitops_lint::diagnostic::Severity;
use gitops_lint::engine::Report;

use super::position::{Lines, path_to_uri};
use super::repository::on_disk;

pub(super) fn to_json<T: serde::Serialize>(value: T) -> serde_json::Value {
    serde_json::to_value(value).unwrap_or(serde_json::Value::Null)
}

pub(super) fn initialize_result() -> InitializeResult {
    InitializeResult {
        capabilities: ServerCapabilities {
            text_document_sync: Some(TextDocumentSyncCapability::Options(
                TextDocumentSyncOptions {
                    open_close: Some(true),
                    change: Some(TextDocumentSyncKind::FULL),
                    save: Some(TextDocumentSyncSaveOptions::Supported(true)),
                    ..TextDocumentSyncOptions::default()
                },
            )),
            code_action_provider: Some(CodeActionProviderCapability::Options(CodeActionOptions {
                code_action_kinds: Some(vec![
                    CodeActionKind::QUICKFIX,
                    CodeActionKind::SOURCE_FIX_ALL,
                ]),
                ..CodeActionOptions::default()
            })),
            hover_provider: Some(HoverProviderCapability::Simple(true)),
            completion_provider: Some(CompletionOptions {
                trigger_characters: Some(vec!["=".into(), ",".into(), "/".into()]),
                ..CompletionOptions::default()
            }),
            definition_provider: Some(OneOf::Left(true)),
            ..ServerCapabilities::default()
        },
        server_info: Some(ServerInfo {
            name: "gitops-lint".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    }
}

/// Configuration errors as diagnostics in the files they are about.
pub(super) fn file_errors(
    root: &Path,
    errors: &[gitops_lint::source::FileError],
) -> BTreeMap<Uri, Vec<lsp_types::Diagnostic>> {
    let mut out: BTreeMap<Uri, Vec<lsp_types::Diagnostic>> = BTreeMap::new();
    for e in errors {
        let Some(uri) = path_to_uri(&root.join(&e.path)) else {
            continue;
        };
        let (start, end) = e.span.unwrap_or((0, 0));
        let mut message = e.message.clone();
        if let Some(help) = &e.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        out.entry(uri).or_default().push(lsp_types::Diagnostic {
            range: Lines::new(&e.text).range(start, end),
            severity: Some(DiagnosticSeverity::ERROR),
            source: Some("gitops-lint".into()),
            message,
            ..lsp_types::Diagnostic::default()
        });
    }
    out
}

pub(super) fn severity(s: Severity) -> DiagnosticSeverity {
    match s {
        Severity::Error => DiagnosticSeverity::ERROR,
        Severity::Warning => DiagnosticSeverity::WARNING,
        Severity::Info => DiagnosticSeverity::INFORMATION,
    }
}

/// A report's findings as LSP diagnostics, by file.
pub(super) fn diagnostics_by_file(report: &Report) -> BTreeMap<Uri, Vec<lsp_types::Diagnostic>> {
    let repo = &report.repo;
    let mut out: BTreeMap<Uri, Vec<lsp_types::Diagnostic>> = BTreeMap::new();
    let mut lines: HashMap<gitops_lint::source::FileId, Lines<'_>> = HashMap::new();
    let mut range_of = |span: gitops_lint::source::Span| {
        let file = repo.source(span.file);
        let l = lines
            .entry(span.file)
            .or_insert_with(|| Lines::new(file.text()));
        l.range(span.start as usize, span.end as usize)
    };
    for d in &report.diagnostics {
        let file = repo.source(d.span.file);
        let Some(uri) = path_to_uri(&on_disk(repo, file)) else {
            continue;
        };
        let range = range_of(d.span);
        let related: Vec<lsp_types::DiagnosticRelatedInformation> = d
            .labels
            .iter()
            .filter_map(|label| {
                let uri = path_to_uri(&on_disk(repo, repo.source(label.span.file)))?;
                Some(lsp_types::DiagnosticRelatedInformation {
                    location: lsp_types::Location {
                        uri,
                        range: range_of(label.span),
                    },
                    message: label.message.clone(),
                })
            })
            .collect();
        let mut message = d.message.clone();
        if let Some(help) = &d.help {
            message.push_str("\nhelp: ");
            message.push_str(help);
        }
        let code_description = gitops_lint::registry::find(&d.rule)
            .and_then(|_| gitops_lint::report::sarif::help_uri(&d.rule).parse().ok())
            .map(|href| lsp_types::CodeDescription { href });
        out.entry(uri).or_default().push(lsp_types::Diagnostic {
            range,
            severity: Some(severity(d.severity)),
            code: Some(lsp_types::NumberOrString::String(d.rule.clone())),
            code_description,
            source: Some("gitops-lint".into()),
            message,
            related_information: (!related.is_empty()).then_some(related),
            tags: (d.rule == "lint/unused-suppression").then(|| vec![DiagnosticTag::UNNECESSARY]),
            data: None,
        });
    }
    out
}
