//! `--format text`: miette graphical reports with code frames and labels, a diff under each
//! fixable finding, and a one-line summary.

use std::fmt;

use miette::{
    Diagnostic as MietteDiagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan,
    MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};

use crate::diagnostic::{Diagnostic, Severity};
use crate::engine::Report;
use crate::source::{SourceDb, SourceFile};

/// One file's text with its name, borrowed: no copy per diagnostic.
struct Named<'a> {
    file: &'a SourceFile,
}

impl SourceCode for Named<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let inner = self.file.text.as_str().read_span(span, before, after)?;
        Ok(Box::new(
            MietteSpanContents::new_named(
                self.file.path.clone(),
                inner.data(),
                *inner.span(),
                inner.line(),
                inner.column(),
                inner.line_count(),
            )
            .with_language("yaml"),
        ))
    }
}

struct Adapter<'a> {
    message: String,
    code: Option<&'a str>,
    severity: miette::Severity,
    help: Option<String>,
    source: Named<'a>,
    labels: Vec<LabeledSpan>,
    related: Vec<Adapter<'a>>,
}

impl fmt::Debug for Adapter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl fmt::Display for Adapter<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Adapter<'_> {}

impl MietteDiagnostic for Adapter<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.code.map(|c| Box::new(c) as Box<dyn fmt::Display>)
    }
    fn severity(&self) -> Option<miette::Severity> {
        Some(self.severity)
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.help
            .as_ref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }
    fn source_code(&self) -> Option<&dyn SourceCode> {
        Some(&self.source)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        Some(Box::new(self.labels.iter().cloned()))
    }
    fn related<'b>(&'b self) -> Option<Box<dyn Iterator<Item = &'b dyn MietteDiagnostic> + 'b>> {
        if self.related.is_empty() {
            return None;
        }
        Some(Box::new(
            self.related.iter().map(|r| r as &dyn MietteDiagnostic),
        ))
    }
}

fn sspan(start: u32, end: u32) -> SourceSpan {
    SourceSpan::new((start as usize).into(), (end - start) as usize)
}

fn adapt<'a>(d: &'a Diagnostic, sources: &'a SourceDb) -> Adapter<'a> {
    let file = sources.get(d.span.file);
    let mut labels = vec![LabeledSpan::new_primary_with_span(
        None,
        sspan(d.span.start, d.span.end),
    )];
    let mut related = Vec::new();
    for l in &d.labels {
        if l.span.file == d.span.file {
            labels.push(LabeledSpan::new_with_span(
                Some(l.message.clone()),
                sspan(l.span.start, l.span.end),
            ));
        } else {
            related.push(Adapter {
                message: l.message.clone(),
                code: None,
                severity: miette::Severity::Advice,
                help: None,
                source: Named {
                    file: sources.get(l.span.file),
                },
                labels: vec![LabeledSpan::new_with_span(
                    None,
                    sspan(l.span.start, l.span.end),
                )],
                related: Vec::new(),
            });
        }
    }
    let mut help = d.help.clone();
    if let Some(fix) = &d.fix {
        let line = format!(
            "fix available ({}): {}",
            fix_kind(fix.applicability),
            fix.title
        );
        help = Some(match help {
            Some(h) => format!("{h}\n{line}"),
            None => line,
        });
    }
    Adapter {
        message: d.message.clone(),
        code: Some(&d.rule),
        severity: match d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        },
        help,
        source: Named { file },
        labels,
        related,
    }
}

fn fix_kind(a: crate::fix::Applicability) -> &'static str {
    match a {
        crate::fix::Applicability::Safe => "safe",
        crate::fix::Applicability::Unsafe => "unsafe",
        crate::fix::Applicability::DisplayOnly => "display only",
    }
}

/// Renders every diagnostic and the summary line. `color` selects ANSI colours.
#[must_use]
pub fn render(report: &Report, color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_links(false)
        .with_context_lines(2)
        .with_width(100)
        .without_syntax_highlighting();
    let sources = &report.project.sources;
    let mut out = String::new();
    for d in &report.diagnostics {
        let a = adapt(d, sources);
        if handler.render_report(&mut out, &a).is_err() {
            // A span miette cannot show (e.g. in an unreadable file): fall back to one line.
            let lc = sources.get(d.span.file).line_col(d.span.start as usize);
            out.push_str(&format!(
                "{}[{}]: {}\n  --> {}:{}:{}\n",
                d.severity.as_str(),
                d.rule,
                d.message,
                sources.get(d.span.file).path,
                lc.line,
                lc.column
            ));
        }
        if let Some(fix) = &d.fix {
            for line in super::diff::fix_diff(fix, sources).lines() {
                out.push_str("    ");
                out.push_str(line);
                out.push('\n');
            }
        }
        out.push('\n');
    }
    for note in &report.notes {
        out.push_str(&format!("note[{}]: {}\n\n", note.rule, note.message));
    }
    out.push_str(&summary_line(report));
    out.push('\n');
    out
}

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

#[must_use]
pub fn summary_line(report: &Report) -> String {
    let s = &report.summary;
    let mut line = format!(
        "{}, {}, {} in {} ({})",
        plural(s.errors, "error", "errors"),
        plural(s.warnings, "warning", "warnings"),
        plural(s.infos, "info", "infos"),
        plural(s.files, "file", "files"),
        plural(s.documents, "document", "documents"),
    );
    if s.unreadable > 0 {
        line.push_str(&format!(
            "; {} not read",
            plural(s.unreadable, "file", "files")
        ));
    }
    if s.suppressed > 0 {
        line.push_str(&format!("; {} suppressed", s.suppressed));
    }
    if s.fixable > 0 {
        let count = |a| {
            report
                .diagnostics
                .iter()
                .filter(|d| d.fix.as_ref().is_some_and(|f| f.applicability == a))
                .count()
        };
        let unsafe_fixes = count(crate::fix::Applicability::Unsafe);
        line.push_str(&format!(
            "; {} fixable with `--fix`",
            count(crate::fix::Applicability::Safe)
        ));
        if unsafe_fixes > 0 {
            line.push_str(&format!(" ({unsafe_fixes} more with `--unsafe-fixes`)"));
        }
    }
    line.push_str(&format!(" [{} ms]", s.elapsed_ms));
    line
}

/// Renders a configuration error with a code frame of the config file.
#[must_use]
pub fn render_config_error(e: &crate::config::ConfigError, color: bool) -> String {
    render_file_error(
        &e.path,
        &e.text,
        e.span,
        &format!(
            "invalid configuration: {}",
            e.message.trim_start_matches("invalid configuration: ")
        ),
        e.help.as_deref(),
        &e.to_string(),
        color,
    )
}

/// Renders a policy that does not load with a code frame at its `.rego` line.
#[must_use]
pub fn render_policy_error(e: &crate::policy::PolicyError, color: bool) -> String {
    render_file_error(
        &e.path,
        &e.text,
        e.span,
        &format!("invalid policy: {}", e.message),
        e.help.as_deref(),
        &e.to_string(),
        color,
    )
}

fn render_file_error(
    path: &std::path::Path,
    text: &str,
    span: Option<(usize, usize)>,
    message: &str,
    help: Option<&str>,
    plain: &str,
    color: bool,
) -> String {
    let file = SourceFile {
        id: crate::source::FileId(0),
        path: path.display().to_string(),
        abs: path.to_path_buf(),
        lines: crate::source::LineIndex::new(text),
        text: text.to_string(),
        unreadable: None,
    };
    let Some((start, end)) = span else {
        let mut s = format!("error: {plain}\n");
        if let Some(h) = help {
            s.push_str(&format!("help: {h}\n"));
        }
        return s;
    };
    let adapter = Adapter {
        message: message.to_string(),
        code: None,
        severity: miette::Severity::Error,
        help: help.map(str::to_string),
        source: Named { file: &file },
        labels: vec![LabeledSpan::new_primary_with_span(
            None,
            SourceSpan::new(start.into(), end.saturating_sub(start)),
        )],
        related: Vec::new(),
    };
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let mut out = String::new();
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_links(false)
        .without_syntax_highlighting();
    if handler.render_report(&mut out, &adapter).is_err() {
        out = format!("error: {plain}\n");
    }
    out
}
