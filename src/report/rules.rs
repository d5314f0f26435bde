//! `gitops-lint rules` and `gitops-lint explain`: rendered from the registry metadata.

use serde::Serialize;

use crate::rule::{FixAvailability, RuleMeta};

#[derive(Serialize)]
struct JsonRule<'a> {
    id: &'a str,
    default_severity: &'static str,
    fixable: bool,
    summary: &'a str,
    options: Vec<JsonOption<'a>>,
}

#[derive(Serialize)]
struct JsonOption<'a> {
    name: &'a str,
    doc: &'a str,
}

fn fixable(m: &RuleMeta) -> bool {
    m.fix != FixAvailability::None
}

/// An aligned table: id, default severity, fixable, summary.
#[must_use]
pub fn table(metas: &[&RuleMeta]) -> String {
    let width = metas.iter().map(|m| m.id.len()).max().unwrap_or(4).max(4);
    let mut out = format!(
        "{:width$}  {:8}  {:7}  SUMMARY\n",
        "RULE", "SEVERITY", "FIXABLE"
    );
    for m in metas {
        out.push_str(&format!(
            "{:width$}  {:8}  {:7}  {}\n",
            m.id,
            m.default_severity.as_str(),
            if fixable(m) { "yes" } else { "no" },
            m.summary
        ));
    }
    out
}

#[must_use]
pub fn json(metas: &[&RuleMeta]) -> String {
    let rules: Vec<JsonRule<'_>> = metas
        .iter()
        .map(|m| JsonRule {
            id: m.id,
            default_severity: m.default_severity.as_str(),
            fixable: fixable(m),
            summary: m.summary,
            options: m
                .options
                .iter()
                .map(|o| JsonOption {
                    name: o.name,
                    doc: o.doc,
                })
                .collect(),
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&rules).unwrap_or_default();
    s.push('\n');
    s
}

/// The rule's full documentation as Markdown.
#[must_use]
pub fn explain(m: &RuleMeta) -> String {
    let mut out = format!(
        "# {}\n\n{}.\n\n- Default severity: {}\n- Fixable: {}\n",
        m.id,
        capitalize(m.summary),
        m.default_severity.as_str(),
        match m.fix {
            FixAvailability::None => "no",
            FixAvailability::Sometimes => "sometimes",
            FixAvailability::Always => "always",
        }
    );
    out.push('\n');
    let options: String = m
        .options
        .iter()
        .map(|o| format!("- `{}`: {}\n", o.name, o.doc))
        .collect();
    // The options come from the rule's metadata; a hand-written `## Options` section (examples,
    // settings outside `rules:`) follows the generated list under one heading.
    let docs = m.docs.trim_end();
    match docs.split_once("\n## Options\n") {
        Some((before, after)) if !options.is_empty() => {
            out.push_str(before);
            out.push_str("\n## Options\n");
            out.push_str(&options);
            out.push('\n');
            out.push_str(after);
            out.push('\n');
        }
        _ => {
            out.push_str(docs);
            out.push('\n');
            if !options.is_empty() {
                out.push_str("\n## Options\n");
                out.push_str(&options);
            }
        }
    }
    out
}

fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().collect::<String>() + c.as_str(),
        None => String::new(),
    }
}
