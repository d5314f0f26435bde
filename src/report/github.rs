//! `--format github`: GitHub Actions workflow commands, which annotate the pull request.

use super::escape::escape;
use crate::diagnostic::Severity;
use crate::engine::Report;

/// Escapes a command's message (data), as GitHub's toolkit does.
#[must_use]
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a command property value (file, title): also `:` and `,`.
#[must_use]
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

#[must_use]
pub fn render(report: &Report) -> String {
    let sources = &report.repo.sources;
    let mut out = String::new();
    for d in &report.diagnostics {
        let f = sources.get(d.span.file);
        let start = f.line_col(d.span.start as usize);
        let end = f.line_col(d.span.end as usize);
        let kind = match d.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "notice",
        };
        // User text is escaped as in the other human formats first, so a name's line break
        // shows as `\n`; the break before the help is the annotation's own (`%0A`).
        let mut message = escape(&d.message).into_owned();
        if let Some(h) = &d.help {
            message.push('\n');
            message.push_str(&escape(h));
        }
        out.push_str(&format!(
            "::{kind} file={},line={},endLine={},col={},endColumn={},title={}::{}\n",
            escape_property(&escape(&f.path)),
            start.line,
            end.line,
            start.column,
            end.column,
            escape_property(&escape(&d.rule)),
            escape_data(&message)
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_follows_the_toolkit() {
        assert_eq!(escape_data("a%b\r\nc: d, e"), "a%25b%0D%0Ac: d, e");
        assert_eq!(escape_property("a:b,c%\n"), "a%3Ab%2Cc%25%0A");
    }
}
