//! `ci/script-not-string`: a CI script line that YAML reads as a mapping, which GitLab and
//! GitHub reject.

use crate::diagnostic::{Finding, Severity};
use crate::fix::{Applicability, Edit, Fix};
use crate::model::ci::gitlab::GITLAB_RESERVED;
use crate::model::{DocKind, Document};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::yaml::Node;

pub struct ScriptNotString;

static META: RuleMeta = RuleMeta {
    id: "ci/script-not-string",
    summary: "a CI script line is a YAML mapping, not a string, so GitLab or GitHub rejects the pipeline",
    default_severity: Severity::Error,
    fix: FixAvailability::Sometimes,
    reads: Reads::NONE,
    applies_to: &[DocKind::GitlabCi, DocKind::GithubWorkflow],
    options: &[],
    docs: include_str!("script_not_string.md"),
};

/// GitLab's script keywords.
const GITLAB_SCRIPTS: &[&str] = &["before_script", "script", "after_script"];

impl Rule for ScriptNotString {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    /// Reads the document and its file's text only.
    fn document_memo_key(&self, _cx: &Context<'_>) -> Option<String> {
        Some(META.id.to_string())
    }

    fn check(&self, doc: &Document, cx: &Context<'_>) -> Vec<Finding> {
        let text = cx.text(doc);
        let mut out = Vec::new();
        match doc.kind {
            DocKind::GitlabCi => {
                // Jobs, hidden templates (`.x`), `default:` and the old top-level scripts.
                for e in doc.root.entries() {
                    let Some(key) = e.key.scalar_text() else {
                        continue;
                    };
                    if GITLAB_SCRIPTS.contains(&key) {
                        gitlab_script(key, &e.value, text, &mut out);
                    } else if key == "default" || !GITLAB_RESERVED.contains(&key) {
                        for s in GITLAB_SCRIPTS {
                            if let Some(v) = e.value.get(s) {
                                gitlab_script(s, v, text, &mut out);
                            }
                        }
                    }
                }
            }
            DocKind::GithubWorkflow => {
                for job in doc.root.get("jobs").into_iter().flat_map(Node::entries) {
                    for step in job.value.get("steps").into_iter().flat_map(Node::items) {
                        if let Some(run) = step.get("run").filter(|r| r.as_map().is_some()) {
                            out.push(finding("`run`", run, text, true));
                        }
                    }
                }
            }
            _ => {}
        }
        out
    }
}

/// A script: a string, or a list of strings and lists of strings (GitLab flattens them).
fn gitlab_script(key: &str, v: &Node, text: &str, out: &mut Vec<Finding>) {
    if v.as_map().is_some() {
        out.push(finding(&format!("`{key}`"), v, text, false));
        return;
    }
    for item in v.items() {
        if item.as_map().is_some() {
            out.push(finding(&format!("a line of `{key}`"), item, text, true));
        } else if item.as_seq().is_some() {
            gitlab_script(key, item, text, out);
        }
    }
}

fn finding(what: &str, node: &Node, text: &str, quotable: bool) -> Finding {
    let written = text.get(node.span.range()).unwrap_or("");
    let f = Finding::new(
        format!(
            "{what} is a YAML mapping, not a string: `: ` makes `{}` a key",
            mapping_key(written)
        ),
        node.span,
    )
    .with_help("Quote the line (single quotes, doubling any `'` inside), or use a block scalar (`- |`), so YAML reads it as one command.");
    // One line, written as a plain mapping: quoting it keeps the command as written. A quote
    // left open means YAML took the rest of the line (` #...`) for a comment, which quoting
    // the mapping's text would drop from the command.
    let balanced = ['"', '\'']
        .iter()
        .all(|q| written.matches(*q).count().is_multiple_of(2));
    let plain = quotable
        && balanced
        && !node.flow()
        && !written.contains('\n')
        && node.as_map().is_some_and(|m| m.len() == 1);
    if !plain {
        return f;
    }
    let quoted = format!("'{}'", written.trim_end().replace('\'', "''"));
    f.with_fix(Fix::new(
        "quote the line",
        Applicability::Safe,
        vec![Edit {
            span: node.span,
            replacement: quoted,
        }],
    ))
}

/// The key YAML read: the text before the first `: ` of the first line.
fn mapping_key(s: &str) -> String {
    let first = s.lines().next().unwrap_or("");
    match first.split_once(": ") {
        Some((key, _)) => key.to_string(),
        None => first.to_string(),
    }
}
