//! `gitops-lint diff`'s reports: what a change does to what Argo CD deploys, per Application,
//! with each hunk's causes, what was not rendered, and the `diff/` findings. Text (coloured
//! when asked), Markdown for a merge-request comment (size-capped), JSON (version 1,
//! documented in `docs/json-output.md`). SARIF and GitLab Code Quality are the check's
//! reporters on [`DiffReport::report`].

use std::fmt::Write as _;

use serde_json::Value as J;

use crate::engine::diff::DiffReport;
use crate::model::diff::{AppChange, AppStatus, Cause, Change, Hunk, ObjectChange};

use super::escape::escape;
use super::html::html;

const RED: &str = "\x1b[31m";
const GREEN: &str = "\x1b[32m";
const CYAN: &str = "\x1b[36m";
const BOLD: &str = "\x1b[1m";
const DIM: &str = "\x1b[2m";
const RESET: &str = "\x1b[0m";

/// The causes as `file:line`, consecutive lines of a file as `file:first-last`, at base
/// marked `(base)`.
fn cause_texts(causes: &[Cause]) -> Vec<String> {
    let mut out: Vec<(&Cause, usize)> = Vec::new();
    for c in causes {
        match out.last_mut() {
            Some((first, last))
                if first.file == c.file && first.at_base == c.at_base && *last + 1 == c.line =>
            {
                *last = c.line;
            }
            _ => out.push((c, c.line)),
        }
    }
    out.into_iter()
        .map(|(c, last)| {
            let lines = if last == c.line {
                c.line.to_string()
            } else {
                format!("{}-{last}", c.line)
            };
            let side = if c.at_base { " (base)" } else { "" };
            format!("{}:{lines}{side}", c.file)
        })
        .collect()
}

fn causes_line(h: &Hunk) -> String {
    if h.causes.is_empty() {
        "cause not traced".to_string()
    } else {
        format!("caused by {}", cause_texts(&h.causes).join(", "))
    }
}

fn object_title(o: &ObjectChange) -> String {
    let ns = if o.key.namespace.is_empty() {
        String::new()
    } else {
        format!("{}/", o.key.namespace)
    };
    format!("{} {} {ns}{}", o.api_version, o.key.kind, o.key.name)
}

fn summary(app: &AppChange) -> String {
    let count = |c: Change| app.objects.iter().filter(|o| o.change == c).count();
    let mut parts = Vec::new();
    for (c, word) in [
        (Change::Added, "added"),
        (Change::Removed, "removed"),
        (Change::Modified, "modified"),
    ] {
        let n = count(c);
        if n > 0 {
            parts.push(format!("{n} {word}"));
        }
    }
    if app.unchanged > 0 {
        parts.push(format!("{} unchanged", app.unchanged));
    }
    if parts.is_empty() {
        "no object".to_string()
    } else {
        parts.join(", ")
    }
}

/// How many Applications have each status, for the heading line.
fn totals(dr: &DiffReport) -> String {
    let n = |s: AppStatus| dr.changes.apps.iter().filter(|a| a.status == s).count();
    let unaffected = dr.changes.apps.iter().filter(|a| !a.affected).count();
    let skipped = if unaffected > 0 {
        format!(" ({unaffected} not affected by the change, not rendered)")
    } else {
        String::new()
    };
    format!(
        "{} Applications: {} added, {} removed, {} modified, {} unchanged, {} not rendered{skipped}",
        dr.changes.apps.len(),
        n(AppStatus::Added),
        n(AppStatus::Removed),
        n(AppStatus::Modified),
        n(AppStatus::Unchanged),
        n(AppStatus::NotRendered)
    )
}

/// Text: per changed Application its objects' unified diffs, each hunk followed by its
/// causes; then what was not rendered, then the findings as `check` prints them.
#[must_use]
pub fn text(dr: &DiffReport, base: &str, opts: &super::text::TextOptions) -> String {
    let c = |code: &'static str| if opts.color { code } else { "" };
    let mut s = String::new();
    let _ = writeln!(
        s,
        "{}gitops-lint diff against {}{}: {}",
        c(BOLD),
        escape(base),
        c(RESET),
        totals(dr)
    );
    for app in &dr.changes.apps {
        // Unchanged ones are counted; not rendered ones are listed below.
        if matches!(app.status, AppStatus::Unchanged | AppStatus::NotRendered) {
            continue;
        }
        let _ = writeln!(
            s,
            "\n{}Application `{}`: {}{} ({})",
            c(BOLD),
            escape(&app.name),
            app.status.as_str(),
            c(RESET),
            summary(app)
        );
        if app.partial {
            let _ = writeln!(
                s,
                "some of its sources are not rendered: not compared (listed below)"
            );
        }
        for o in &app.objects {
            let _ = writeln!(
                s,
                "{}{} {}{}",
                c(BOLD),
                o.change.as_str(),
                escape(&object_title(o)),
                c(RESET)
            );
            for h in &o.hunks {
                for line in h.text.lines() {
                    let color = match line.as_bytes().first() {
                        Some(b'+') => c(GREEN),
                        Some(b'-') => c(RED),
                        Some(b'@') => c(CYAN),
                        _ => "",
                    };
                    let reset = if color.is_empty() { "" } else { c(RESET) };
                    let _ = writeln!(s, "{color}{}{reset}", escape(line));
                }
                let _ = writeln!(s, "{}  {}{}", c(DIM), escape(&causes_line(h)), c(RESET));
            }
        }
    }
    if !dr.changes.not_rendered.is_empty() {
        let _ = writeln!(s, "\n{}not rendered: not compared{}", c(BOLD), c(RESET));
        for n in &dr.changes.not_rendered {
            let _ = writeln!(
                s,
                "  Application `{}`, source {} ({}): {}",
                escape(&n.application),
                n.source,
                escape(&n.what),
                escape(&n.reason)
            );
        }
    }
    s.push('\n');
    s.push_str(&super::text::render_with(&dr.report, opts));
    s
}

/// A code span's text: backticks would end it.
fn code(s: &str) -> String {
    format!("`{}`", s.replace('`', "'").replace('\n', " "))
}

/// Markdown for a merge-request comment: a table of the changed Applications, the findings,
/// what was not rendered, then each changed Application's diffs in a `<details>` section,
/// until `max_bytes`; what does not fit is counted, never silently left out.
#[must_use]
pub fn markdown(dr: &DiffReport, base: &str, max_bytes: usize) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "### gitops-lint diff against {}\n", code(base));
    let _ = writeln!(s, "{}\n", totals(dr));
    let changed: Vec<&AppChange> = dr
        .changes
        .apps
        .iter()
        .filter(|a| !matches!(a.status, AppStatus::Unchanged | AppStatus::NotRendered))
        .collect();
    if !changed.is_empty() {
        s.push_str("| Application | Status | Objects |\n|---|---|---|\n");
        for a in &changed {
            let _ = writeln!(
                s,
                "| {} | {} | {} |",
                code(&a.name),
                a.status.as_str(),
                summary(a)
            );
        }
        s.push('\n');
    }
    let repo = &dr.report.repo;
    if !dr.report.diagnostics.is_empty() {
        s.push_str("#### Findings\n\n");
        for d in &dr.report.diagnostics {
            let f = repo.source(d.span.file);
            let lc = f.line_col(d.span.start as usize);
            let _ = writeln!(
                s,
                "- **{}** {} at {}: {}",
                d.severity.as_str(),
                code(&d.rule),
                code(&format!("{}:{}", f.path, lc.line)),
                d.message.replace('\n', " ")
            );
        }
        s.push('\n');
    }
    if !dr.changes.not_rendered.is_empty() {
        s.push_str("#### Not rendered: not compared\n\n");
        for n in &dr.changes.not_rendered {
            let _ = writeln!(
                s,
                "- {} source {} ({}): {}",
                code(&n.application),
                n.source,
                n.what.replace('\n', " "),
                n.reason.replace('\n', " ")
            );
        }
        s.push('\n');
    }
    let mut left_out = 0;
    for a in &changed {
        let mut section = format!(
            "<details><summary><code>{}</code>: {} ({})</summary>\n\n",
            html(&a.name),
            a.status.as_str(),
            summary(a)
        );
        if a.partial {
            section.push_str("Some of its sources are not rendered: not compared.\n\n");
        }
        for o in &a.objects {
            let _ = writeln!(
                section,
                "**{}** {}\n",
                o.change.as_str(),
                code(&object_title(o))
            );
            let fence = if o.diff.contains("```") {
                "~~~~"
            } else {
                "```"
            };
            for h in &o.hunks {
                let _ = writeln!(section, "{fence}diff\n{}{fence}", h.text);
                let _ = writeln!(section, "{}\n", causes_md(h));
            }
        }
        section.push_str("</details>\n\n");
        if s.len() + section.len() > max_bytes {
            left_out += 1;
            continue;
        }
        s.push_str(&section);
    }
    if left_out > 0 {
        let _ = writeln!(
            s,
            "_{left_out} Application diff{} left out to fit the comment: run `gitops-lint diff` to see {}._",
            if left_out == 1 { "" } else { "s" },
            if left_out == 1 { "it" } else { "them" }
        );
    }
    s
}

fn causes_md(h: &Hunk) -> String {
    if h.causes.is_empty() {
        "_cause not traced_".to_string()
    } else {
        format!(
            "caused by {}",
            cause_texts(&h.causes)
                .iter()
                .map(|c| code(c))
                .collect::<Vec<_>>()
                .join(", ")
        )
    }
}

/// The JSON note of an Application that is not rendered because nothing it reads changed.
const NOT_AFFECTED: &str = "not affected by the change: nothing it reads changed, not rendered";

#[derive(serde::Serialize)]
struct JsonDiff<'a> {
    version: u32,
    base: &'a str,
    applications: Vec<JsonApp<'a>>,
    diagnostics: J,
    not_rendered: Vec<JsonNotRendered<'a>>,
}

#[derive(serde::Serialize)]
struct JsonApp<'a> {
    name: &'a str,
    status: &'static str,
    /// Only for an Application the change cannot affect, which is not rendered.
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'static str>,
    objects: Vec<JsonObject<'a>>,
}

#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct JsonObject<'a> {
    api_version: &'a str,
    kind: &'a str,
    namespace: &'a str,
    name: &'a str,
    change: &'static str,
    diff: &'a str,
    causes: Vec<JsonCause<'a>>,
}

#[derive(serde::Serialize)]
struct JsonCause<'a> {
    file: &'a str,
    line: usize,
}

#[derive(serde::Serialize)]
struct JsonNotRendered<'a> {
    application: &'a str,
    source: usize,
    what: &'a str,
    reason: &'a str,
}

/// JSON, version 1: `{"version", "base", "applications", "diagnostics", "not_rendered"}`;
/// the diagnostics are `check --format json`'s. A cause's line is at head, or at base for a
/// file whose lines the change only removed.
#[must_use]
pub fn json(dr: &DiffReport, base: &str) -> String {
    let applications = dr
        .changes
        .apps
        .iter()
        .map(|a| JsonApp {
            name: &a.name,
            status: a.status.as_str(),
            note: (!a.affected).then_some(NOT_AFFECTED),
            objects: a
                .objects
                .iter()
                .map(|o| JsonObject {
                    api_version: &o.api_version,
                    kind: &o.key.kind,
                    namespace: &o.key.namespace,
                    name: &o.key.name,
                    change: o.change.as_str(),
                    diff: &o.diff,
                    causes: o
                        .causes()
                        .into_iter()
                        .map(|c| JsonCause {
                            file: &c.file,
                            line: c.line,
                        })
                        .collect(),
                })
                .collect(),
        })
        .collect();
    let check: J = serde_json::from_str(&super::json::render(&dr.report)).unwrap_or(J::Null);
    let doc = JsonDiff {
        version: 1,
        base,
        applications,
        diagnostics: check
            .get("diagnostics")
            .cloned()
            .unwrap_or(J::Array(Vec::new())),
        not_rendered: dr
            .changes
            .not_rendered
            .iter()
            .map(|n| JsonNotRendered {
                application: &n.application,
                source: n.source,
                what: &n.what,
                reason: &n.reason,
            })
            .collect(),
    };
    serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n"
}
