//! Policy results as findings: where each lands (file, document, path or line), its rule id
//! and severity.

use super::eval::{EvalFailure, Hit, site};
use super::{Package, is_warning_rule, location};
use crate::diagnostic::{Finding, Severity};
use crate::model::{Document, Repository};
use crate::rule::{Context, Emitted};
use crate::source::Span;

/// The id of evaluation failures.
pub const EVALUATION_ERROR: &str = "policy/evaluation-error";

/// Where results land. Cheap to make (it runs for every evaluation): files are found by the
/// source database's sorted index, not by a map built here.
pub(super) struct Env<'a> {
    repo: &'a Repository,
}

impl<'a> Env<'a> {
    fn new(repo: &'a Repository) -> Self {
        Env { repo }
    }

    /// The document a hit is about: its `file`/`document`, else `default`.
    fn target(&self, hit: &Hit, default: Option<&'a Document>) -> Option<&'a Document> {
        if let Some(file) = &hit.file {
            let rel = file.trim_start_matches("./");
            if let Some(id) = self.repo.file_by_path(rel).map(|f| f.id) {
                let docs = self.repo.file_docs(id);
                let idx = hit.document.unwrap_or(0);
                return docs.iter().find(|d| d.index == idx).or(docs.first());
            }
        }
        default
    }

    fn finding(
        &self,
        hit: &Hit,
        default: Option<&'a Document>,
        severity: Option<Severity>,
    ) -> Option<Finding> {
        let doc = self
            .target(hit, default)
            .or_else(|| self.repo.docs.first())?;
        let mut note = None;
        let span = if let Some(steps) = &hit.path {
            let (span, complete) = location::span_of(&doc.root, steps);
            if !complete {
                note = Some("the result's `path` does not exist in this document; this is its deepest existing part".to_string());
            }
            span
        } else if let Some(line) = hit.loc_line {
            let f = self.repo.source(doc.file);
            if line >= 1 && line <= f.lines().line_count() {
                let r = f.lines().line_range(f.text(), line - 1);
                Span::new(doc.file, r.start, r.end)
            } else {
                doc.anchor_span()
            }
        } else {
            doc.anchor_span()
        };
        if default.is_none() && hit.file.is_none() {
            note = Some("the result names no `file`, so it is shown at the first document".into());
        }
        let mut f = Finding::new(hit.msg.clone(), span);
        f.help = match (&hit.help, note) {
            (Some(h), Some(n)) => Some(format!("{h} ({n})")),
            (Some(h), None) => Some(h.clone()),
            (None, n) => n,
        };
        f.severity = severity;
        Some(f)
    }
}

/// A rule that failed on the repository-scope input: said once, at the first document.
pub(super) fn failure_finding(
    pkg: &Package,
    f: &EvalFailure,
    doc: Option<&Document>,
    repo: &Repository,
) -> Option<Emitted> {
    let doc = doc.or_else(|| repo.docs.first())?;
    Some(Emitted {
        rule: EVALUATION_ERROR,
        finding: Finding::new(
            format!(
                "policy rule `data.{}.{}`{} failed on this document: {}",
                pkg.name,
                f.rule,
                site(pkg, &f.rule),
                f.message
            ),
            doc.anchor_span(),
        )
        .with_help("Fix the policy; its other results are still reported."),
    })
}

/// A user result's id: the result's own `id`, else its rule's `# METADATA` id, else
/// `policy/<package>/<rule>`.
pub(super) fn user_rule_id(pkg: &Package, hit: &Hit) -> &'static str {
    match hit.id.as_ref().or(hit.meta_id.as_ref()) {
        Some(id) => super::intern(id),
        None => super::intern(&format!("policy/{}/{}", pkg.name, hit.rule)),
    }
}

/// Severity of a result: `warn*` rules warn; user `deny`/`violation` rules are errors, pack
/// ones take the rule's configured severity.
pub(super) fn hit_severity(set: usize, hit: &Hit) -> Option<Severity> {
    if is_warning_rule(&hit.rule) {
        Some(Severity::Warning)
    } else if set == 1 {
        Some(Severity::Error)
    } else {
        None
    }
}

pub(super) fn hits_to_findings(
    cx: &Context<'_>,
    set: usize,
    pkg: &Package,
    hits: Vec<Hit>,
    doc: Option<&Document>,
    pack_id: Option<&'static str>,
) -> Vec<Emitted> {
    let env = Env::new(cx.repo);
    hits.into_iter()
        .filter_map(|h| {
            let finding = env.finding(&h, doc, hit_severity(set, &h))?;
            let rule = pack_id.unwrap_or_else(|| user_rule_id(pkg, &h));
            Some(Emitted { rule, finding })
        })
        .collect()
}
