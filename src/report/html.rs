//! What the self-contained HTML pages share (`diff --format html`, `graph --format html`): the
//! escaping of repository text, the page shell (a filterable list on the left, the report on the
//! right, inline CSS and script, nothing fetched) and the box of a finding.

use std::fmt::Write as _;

use crate::diagnostic::Diagnostic;
use crate::model::Repository;

use super::escape::escape;

/// Text for HTML, in an element or a double- or single-quoted attribute: `&`, `<`, `>` and
/// quotes escaped. Repository text is hostile: a name or a message must not open a tag.
#[must_use]
pub fn html(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// The style every page starts with: the list, the main pane, status badges and findings.
const STYLE: &str = r#"
body{margin:0;font:14px/1.4 system-ui,sans-serif;color:#1f2328;display:flex;height:100vh}
nav{width:18rem;overflow:auto;border-right:1px solid #d0d7de;background:#f6f8fa;padding:.5rem}
nav #q{width:95%;margin-bottom:.5rem}
nav label{display:block;margin-bottom:.5rem;font-size:12px}
nav a{display:block;padding:.15rem .3rem;color:inherit;text-decoration:none;border-radius:4px}
nav a:hover{background:#eaeef2}
main{flex:1;overflow:auto;padding:0 1.5rem 2rem}
.st{font-size:11px;padding:0 .35rem;border-radius:8px;margin-left:.3rem;color:#fff;white-space:nowrap}
.finding{border-left:3px solid #cf222e;padding:.2rem .6rem;margin:.3rem 0;background:#fff8f8}
.finding.warning{border-color:#9a6700;background:#fffbe6}.finding.info{border-color:#0969da}
.hidden{display:none}
"#;

/// A page's parts. The texts are plain; `style`, `nav`, `main` and `script` are given as they
/// are (HTML whose repository text is already escaped).
pub struct Page<'a> {
    pub title: &'a str,
    /// The page's own style, after the shared one.
    pub style: &'a str,
    /// The placeholder of the filter box (`#q`) that heads the list.
    pub filter: &'a str,
    /// The list, after the filter box.
    pub nav: &'a str,
    pub main: &'a str,
    pub script: &'a str,
}

impl Page<'_> {
    /// The whole document.
    #[must_use]
    pub fn render(&self) -> String {
        let mut s =
            String::from("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
        let _ = writeln!(
            s,
            "<title>{}</title><style>{STYLE}{}</style></head><body>",
            html(self.title),
            self.style
        );
        let _ = write!(
            s,
            "<nav><input id=\"q\" placeholder=\"{}\">{}</nav>\n<main>\n{}</main>\n<script>{}</script>\n</body></html>\n",
            html(self.filter),
            self.nav,
            self.main,
            self.script
        );
        s
    }
}

/// A finding as a box: severity, rule id, `file:line` and message (control and bidirectional
/// characters written as escapes, as the text output does).
#[must_use]
pub fn finding(repo: &Repository, d: &Diagnostic) -> String {
    let f = repo.source(d.span.file);
    let lc = f.line_col(d.span.start as usize);
    format!(
        "<div class=\"finding {0}\"><b>{0}</b> <code>{1}</code> at <code>{2}:{3}</code>: {4}</div>",
        d.severity.as_str(),
        html(&escape(&d.rule)),
        html(&escape(&f.path)),
        lc.line,
        html(&escape(&d.message))
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            super::html("<a href='x' title=\"y\">&</a>"),
            "&lt;a href=&#39;x&#39; title=&quot;y&quot;&gt;&amp;&lt;/a&gt;"
        );
    }
}
