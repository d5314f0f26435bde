//! `--format text`: miette graphical reports with code frames and labels, a diff under each
//! fixable finding, and a one-line summary.

use std::fmt;

use miette::{
    Diagnostic as MietteDiagnostic, GraphicalReportHandler, GraphicalTheme, LabeledSpan,
    MietteError, MietteSpanContents, SourceCode, SourceSpan, SpanContents,
};

use super::escape::{escape, frame_text};
use crate::diagnostic::{Diagnostic, Severity};
use crate::engine::Report;
use crate::source::{FileId, SourceDb, SourceFile};

/// One file's text with its name, borrowed: no copy per diagnostic.
struct Named<'a> {
    file: &'a SourceFile,
    /// Prepended to the root-relative path, so the name is relative to the current directory.
    base: &'a str,
    /// The text as code frames show it, when it holds control characters
    /// ([`frame_text`]); else the file's own text is shown.
    shown: Option<&'a str>,
}

/// The longest line a code frame shows: miette pads a frame to its columns with format
/// widths, which cannot pass 65,535 (it panics), and a tab is 4 columns.
const MAX_FRAME_LINE_BYTES: usize = 16 * 1024;

/// Whether every line a frame of `span` would show (with 2 lines of context) is short enough
/// to draw (see [`MAX_FRAME_LINE_BYTES`]).
fn frame_fits(file: &SourceFile, start: usize, end: usize) -> bool {
    let text = file.text();
    let lines = file.lines();
    let first = lines.line_of(start).saturating_sub(2);
    let last = (lines.line_of(end) + 2).min(lines.line_count().saturating_sub(1));
    (first..=last).all(|l| lines.line_range(text, l).len() <= MAX_FRAME_LINE_BYTES)
}

/// Whether every frame of `d` can be drawn.
fn frames_fit(d: &Diagnostic, sources: &SourceDb) -> bool {
    std::iter::once(d.span)
        .chain(d.labels.iter().map(|l| l.span))
        .all(|s| frame_fits(sources.get(s.file), s.start as usize, s.end as usize))
}

impl SourceCode for Named<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        before: usize,
        after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let text = self.shown.unwrap_or_else(|| self.file.text());
        // Miette counts lines from the start of the text it is given: it is given the text
        // from the first context line on, so a finding near the end of a large file costs its
        // context, not the file (100,000 findings in one file were quadratic).
        let lines = self.file.lines();
        let first = lines.line_of(span.offset()).saturating_sub(before);
        let window_start = if first == 0 {
            0
        } else {
            lines.line_start(first).min(text.len())
        };
        let local = SourceSpan::new(
            span.offset().saturating_sub(window_start).into(),
            span.len(),
        );
        let inner = text[window_start..].read_span(&local, before, after)?;
        Ok(Box::new(
            MietteSpanContents::new_named(
                format!("{}{}", self.base, escape(&self.file.path)),
                inner.data(),
                SourceSpan::new(
                    (inner.span().offset() + window_start).into(),
                    inner.span().len(),
                ),
                inner.line() + first,
                inner.column(),
                inner.line_count() + first,
            )
            .with_language("yaml"),
        ))
    }
}

/// The texts code frames show instead of their files' ([`frame_text`]): only files that
/// hold control characters, each checked once.
#[derive(Default)]
struct FrameTexts(std::collections::HashMap<FileId, Option<String>>);

impl FrameTexts {
    fn prepare(&mut self, sources: &SourceDb, d: &Diagnostic) {
        for file in std::iter::once(d.span.file).chain(d.labels.iter().map(|l| l.span.file)) {
            self.0
                .entry(file)
                .or_insert_with(|| frame_text(sources.get(file).text()));
        }
    }

    fn get(&self, file: FileId) -> Option<&str> {
        self.0.get(&file).and_then(Option::as_deref)
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

/// Lines between a finding and a label in the same file shown in one code frame.
const MAX_LABEL_GAP: usize = 8;

/// Whether a label gets a code frame of its own (a `note:`): one in another file, or one far
/// from the finding, whose lines between miette would all print (a job's key above thousands
/// of script lines).
fn own_frame(d: &Diagnostic, l: &crate::diagnostic::Label, sources: &SourceDb) -> bool {
    if l.span.file != d.span.file {
        return true;
    }
    let lines = sources.get(d.span.file).lines();
    lines
        .line_of(l.span.start as usize)
        .abs_diff(lines.line_of(d.span.start as usize))
        > MAX_LABEL_GAP
}

fn sspan(start: u32, end: u32) -> SourceSpan {
    SourceSpan::new((start as usize).into(), (end - start) as usize)
}

fn adapt<'a>(
    d: &'a Diagnostic,
    sources: &'a SourceDb,
    base: &'a str,
    frames: &'a FrameTexts,
) -> Adapter<'a> {
    let file = sources.get(d.span.file);
    let mut labels = vec![LabeledSpan::new_primary_with_span(
        None,
        sspan(d.span.start, d.span.end),
    )];
    let mut related = Vec::new();
    for l in &d.labels {
        if !own_frame(d, l, sources) {
            labels.push(LabeledSpan::new_with_span(
                Some(escape(&l.message).into_owned()),
                sspan(l.span.start, l.span.end),
            ));
        } else {
            related.push(Adapter {
                message: escape(&l.message).into_owned(),
                code: None,
                severity: miette::Severity::Advice,
                help: None,
                source: Named {
                    file: sources.get(l.span.file),
                    base,
                    shown: frames.get(l.span.file),
                },
                labels: vec![LabeledSpan::new_with_span(
                    None,
                    sspan(l.span.start, l.span.end),
                )],
                related: Vec::new(),
            });
        }
    }
    let mut help = d.help.as_deref().map(|h| escape(h).into_owned());
    if let Some(fix) = &d.fix {
        let line = format!(
            "fix available ({}): {}",
            fix_kind(fix.applicability),
            escape(&fix.title)
        );
        help = Some(match help {
            Some(h) => format!("{h}\n{line}"),
            None => line,
        });
    }
    Adapter {
        message: escape(&d.message).into_owned(),
        code: Some(&d.rule),
        severity: match d.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
            Severity::Info => miette::Severity::Advice,
        },
        help,
        source: Named {
            file,
            base,
            shown: frames.get(d.span.file),
        },
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

/// How the text formats render.
#[derive(Clone, Debug, Default)]
pub struct TextOptions {
    /// ANSI colours.
    pub color: bool,
    /// The path from the current directory to the root (`""`, `"../"`, `"deploy/"`), put in
    /// front of every file path so it can be opened from where the command ran.
    pub base: String,
    /// Findings only: no note and no summary line.
    pub quiet: bool,
}

/// Renders every diagnostic and the summary line. `color` selects ANSI colours.
#[must_use]
pub fn render(report: &Report, color: bool) -> String {
    render_with(
        report,
        &TextOptions {
            color,
            ..TextOptions::default()
        },
    )
}

/// Renders every diagnostic (a rustc-style `error[rule]: message` header, the code frame, help
/// and the fix's diff), then the summary line.
#[must_use]
pub fn render_with(report: &Report, opts: &TextOptions) -> String {
    let theme = if opts.color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    // Help and labels are wrapped at 100 columns, only at spaces: a URL or a path is never
    // split (at a hyphen or after a `/`).
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_links(false)
        .with_context_lines(2)
        .with_width(100)
        .with_word_separator(textwrap::WordSeparator::AsciiSpace)
        .with_word_splitter(textwrap::WordSplitter::NoHyphenation)
        .without_syntax_highlighting();
    let sources = &report.repo.sources;
    let mut frames = FrameTexts::default();
    for d in &report.diagnostics {
        frames.prepare(sources, d);
    }
    let mut out = String::new();
    for d in &report.diagnostics {
        let mut a = adapt(d, sources, &opts.base, &frames);
        // The header is ours (`error[rule]: message`, as rustc prints it); miette draws the
        // message line after its severity icon, which the header replaces.
        a.code = None;
        let mut rendered = String::new();
        if frames_fit(d, sources) && handler.render_report(&mut rendered, &a).is_ok() {
            out.push_str(&with_notes(
                &with_header(&rendered, d, opts.color),
                d,
                sources,
                opts.color,
            ));
        } else {
            // A span miette cannot show (e.g. in an unreadable file): fall back to one line.
            let lc = sources.get(d.span.file).line_col(d.span.start as usize);
            out.push_str(&format!(
                "{}: {}\n  --> {}{}:{}:{}\n",
                header(d, opts.color),
                escape(&d.message),
                opts.base,
                escape(&sources.get(d.span.file).path),
                lc.line,
                lc.column
            ));
        }
        if let Some(fix) = &d.fix {
            for line in super::diff::fix_diff(fix, sources).lines() {
                out.push_str("    ");
                out.push_str(&escape(line));
                out.push('\n');
            }
        }
        out.push('\n');
    }
    if opts.quiet {
        return out;
    }
    for note in &report.notes {
        out.push_str(&format!(
            "note[{}]: {}\n\n",
            escape(note.rule),
            escape(&note.message)
        ));
    }
    out.push_str(&summary_line(report));
    out.push('\n');
    out
}

/// `error[argocd/sync-policy]`, the severity word coloured as rustc does.
fn header(d: &Diagnostic, color: bool) -> String {
    let word = d.severity.as_str();
    // A user policy's result may name its own rule id.
    let rule = escape(&d.rule);
    if !color {
        return format!("{word}[{rule}]");
    }
    let style = match d.severity {
        Severity::Error => "\x1b[1;31m",
        Severity::Warning => "\x1b[1;33m",
        Severity::Info => "\x1b[1;36m",
    };
    format!("{style}{word}[{rule}]\x1b[0m")
}

/// Replaces miette's `  × ` (or `⚠`, `☞`, coloured or not) before the message on the first line
/// with the rustc-style header.
fn with_header(rendered: &str, d: &Diagnostic, color: bool) -> String {
    let (first, rest) = rendered.split_once('\n').unwrap_or((rendered, ""));
    if !['×', '⚠', '☞'].iter().any(|icon| first.contains(*icon)) {
        return rendered.to_string();
    }
    // Miette wrapped the message; rustc does not. Its lines are dropped and the message is
    // written whole: wrapping may break a word (after the `/` of a URL), so the lines cannot
    // be joined back with spaces.
    let mut rest = rest;
    while let Some((line, after)) = rest.split_once('\n') {
        if !is_continuation(line) {
            break;
        }
        rest = after;
    }
    format!("{}: {}\n{rest}", header(d, color), escape(&d.message))
}

/// Replaces miette's heading of each label with a frame of its own (`Advice: ` and the `☞` line with
/// its wrapped message) with a rustc-style `note: message` line; the code frame stays.
fn with_notes(rendered: &str, d: &Diagnostic, sources: &SourceDb, color: bool) -> String {
    let mut notes = d
        .labels
        .iter()
        .filter(|l| own_frame(d, l, sources))
        .map(|l| escape(&l.message));
    let mut out = String::with_capacity(rendered.len());
    let mut lines = rendered.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.trim_end() != "Advice:" {
            out.push_str(line);
            continue;
        }
        let Some(message) = notes.next() else {
            out.push_str(line);
            continue;
        };
        // The `☞` line, then its continuation lines.
        lines.next();
        while lines
            .peek()
            .is_some_and(|l| is_continuation(l.trim_end_matches('\n')))
        {
            lines.next();
        }
        let word = if color { "\x1b[1mnote\x1b[0m" } else { "note" };
        out.push_str(&format!("{word}: {message}\n"));
    }
    out
}

/// Whether a line continues a wrapped message: `  │ text` (the bar possibly coloured).
fn is_continuation(line: &str) -> bool {
    let Some(mut s) = line.strip_prefix("  ") else {
        return false;
    };
    if s.starts_with('\x1b') {
        let Some(end) = s.find('m') else {
            return false;
        };
        s = &s[end + 1..];
    }
    s.strip_prefix('│')
        .map(|s| s.strip_prefix("\x1b[0m").unwrap_or(s))
        .is_some_and(|s| s.starts_with(' '))
}

/// `--format concise`: one line per finding, `path:line:col: severity[rule] message`.
#[must_use]
pub fn render_concise(report: &Report, opts: &TextOptions) -> String {
    let sources = &report.repo.sources;
    let mut out = String::new();
    for d in &report.diagnostics {
        let f = sources.get(d.span.file);
        let lc = f.line_col(d.span.start as usize);
        out.push_str(&format!(
            "{}{}:{}:{}: {} {}\n",
            opts.base,
            escape(&f.path),
            lc.line,
            lc.column,
            header(d, opts.color),
            escape(&d.message)
        ));
    }
    if !opts.quiet {
        out.push_str(&summary_line(report));
        out.push('\n');
    }
    out
}

/// `--statistics`: the number of findings per rule, most frequent first, with how many have a
/// fix, like ruff's.
#[must_use]
pub fn render_statistics(report: &Report) -> String {
    let mut counts: std::collections::BTreeMap<&str, (usize, usize, Severity)> =
        std::collections::BTreeMap::new();
    for d in &report.diagnostics {
        let e = counts.entry(&d.rule).or_insert((0, 0, d.severity));
        e.0 += 1;
        e.1 += usize::from(d.fix.is_some());
        e.2 = e.2.max(d.severity);
    }
    let mut rows: Vec<_> = counts.into_iter().collect();
    rows.sort_by(|a, b| b.1.0.cmp(&a.1.0).then(a.0.cmp(b.0)));
    let width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let count_width = rows
        .iter()
        .map(|r| r.1.0.to_string().len())
        .max()
        .unwrap_or(1);
    let mut out = String::new();
    for (rule, (n, fixable, severity)) in rows {
        let fix = match fixable {
            0 => String::new(),
            f if f == n => "  [fixable]".to_string(),
            f => format!("  [{f} fixable]"),
        };
        out.push_str(&format!(
            "{n:>count_width$}  {:<width$}  {}{fix}\n",
            escape(rule),
            severity.as_str()
        ));
    }
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
    let file = SourceFile::new(
        crate::source::FileId(0),
        path.display().to_string(),
        path.to_path_buf(),
        text.to_string(),
    );
    let Some((start, end)) = span.filter(|&(start, end)| frame_fits(&file, start, end)) else {
        let mut s = format!("error: {}\n", escape(plain));
        if let Some(h) = help {
            s.push_str(&format!("help: {}\n", escape(h)));
        }
        return s;
    };
    let shown = frame_text(text);
    let adapter = Adapter {
        message: escape(message).into_owned(),
        code: None,
        severity: miette::Severity::Error,
        help: help.map(|h| escape(h).into_owned()),
        source: Named {
            file: &file,
            base: "",
            shown: shown.as_deref(),
        },
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
        out = format!("error: {}\n", escape(plain));
    }
    out
}
