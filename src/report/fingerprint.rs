//! Stable fingerprints for findings: rule + file + the normalised offending node (its path of
//! keys in its document, the document's kind and name, and its text), never the line number.
//! Unrelated edits elsewhere in a file leave a finding's fingerprint unchanged, so baselines,
//! `--new-since` and GitLab's merge-request widget can tell new findings from old ones.

use std::collections::HashMap;
use std::sync::Arc;

use crate::diagnostic::Diagnostic;
use crate::model::Repository;
use crate::source::{FileId, Span};
use crate::yaml::{Node, Value};

/// One fingerprint per diagnostic, in the same order. Identical findings get an occurrence
/// suffix so that fingerprints stay unique.
#[must_use]
pub fn fingerprints(repo: &Repository, diagnostics: &[Diagnostic]) -> Vec<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    // A values document's tree is parsed again once, not once per finding in it.
    let mut trees: Trees = HashMap::new();
    diagnostics
        .iter()
        .map(|d| {
            let key = identity(repo, d, &mut trees);
            let n = seen.entry(key.clone()).or_insert(0);
            *n += 1;
            let full = format!("{key}\u{0}{n}");
            hex128(&full)
        })
        .collect()
}

/// The trees of the documents met so far, by file and index (see `Repository::tree`).
type Trees = HashMap<(FileId, usize), Arc<Node>>;

fn identity(repo: &Repository, d: &Diagnostic, trees: &mut Trees) -> String {
    let file = repo.source(d.span.file);
    let text = normalise(file.slice(d.span));
    let (doc_id, path) = node_path(repo, d.span, trees);
    format!(
        "{}\u{0}{}\u{0}{}\u{0}{}\u{0}{}",
        d.rule, file.path, doc_id, path, text
    )
}

fn normalise(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// `kind/name` of the document holding `span`, and the dotted key path of the deepest node
/// containing it (`spec.syncPolicy.automated.prune`, sequence items as `[i]`).
fn node_path(repo: &Repository, span: Span, trees: &mut Trees) -> (String, String) {
    let Some(doc) = repo
        .file_docs(span.file)
        .iter()
        .find(|d| d.span.start <= span.start && span.end <= d.span.end.max(d.root.span.end))
    else {
        return (String::new(), String::new());
    };
    let doc_id = format!(
        "{}/{}",
        doc.k8s_kind().unwrap_or(""),
        doc.name().unwrap_or("")
    );
    let mut path = String::new();
    let tree = trees
        .entry((doc.file, doc.index))
        .or_insert_with(|| repo.tree(doc))
        .clone();
    let mut node: &Node = &tree;
    let contains = |n: &Node| n.span.start <= span.start && span.end <= n.span.end;
    loop {
        let next = match &node.value {
            Value::Map(entries) => entries.iter().find_map(|e| {
                if e.key.span == span || contains(&e.value) && e.value.span.file == span.file {
                    Some((
                        e.key.scalar_text().unwrap_or("?").to_string(),
                        &e.value,
                        e.key.span == span,
                    ))
                } else {
                    None
                }
            }),
            Value::Seq(items) => items
                .iter()
                .enumerate()
                .find(|(_, n)| contains(n))
                .map(|(i, n)| (format!("[{i}]"), n, false)),
            Value::Scalar(_) => None,
        };
        let Some((seg, child, is_key)) = next else {
            break;
        };
        if !path.is_empty() && !seg.starts_with('[') {
            path.push('.');
        }
        path.push_str(&seg);
        if is_key || std::ptr::eq(child, node) {
            break;
        }
        node = child;
    }
    (doc_id, path)
}

/// 128-bit FNV-1a as 32 hex digits: stable across platforms and releases.
#[must_use]
pub fn hex128(s: &str) -> String {
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013B;
    let mut h: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    for b in s.as_bytes() {
        h ^= u128::from(*b);
        h = h.wrapping_mul(PRIME);
    }
    format!("{h:032x}")
}
