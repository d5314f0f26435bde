//! `gitops.location(path)`: a builtin extension that tells a policy where a node of the
//! current input document is written (conftest's `_loc`, computed on demand).
//!
//! regorus extensions are plain closures without access to the evaluation, so the current
//! document is set per worker thread before each evaluation (only when some policy calls
//! `gitops.location`). It returns `{"file", "line", "column", "end_line", "end_column"}`
//! (1-based) or is undefined when the path does not exist.

use std::cell::RefCell;
use std::sync::Arc;

use regorus::{Engine, Value};

use crate::source::{LineIndex, Span};
use crate::yaml::Node;
use crate::yaml::path::{self, Step};

/// The document a worker is evaluating.
pub struct Current {
    pub file: Arc<str>,
    pub text: Arc<str>,
    pub lines: Arc<LineIndex>,
    pub root: std::sync::Arc<Node>,
}

thread_local! {
    static CURRENT: RefCell<Option<Current>> = const { RefCell::new(None) };
}

/// Sets (or clears) this thread's current document.
pub fn set_current(current: Option<Current>) {
    CURRENT.with(|c| *c.borrow_mut() = current);
}

/// The file of this thread's current document, to reuse its shared text.
pub fn current_file() -> Option<(Arc<str>, Arc<str>, Arc<LineIndex>)> {
    CURRENT.with(|c| {
        c.borrow()
            .as_ref()
            .map(|c| (c.file.clone(), c.text.clone(), c.lines.clone()))
    })
}

/// Steps from a Rego value: an array of keys and indexes, or a dotted string.
#[must_use]
pub fn steps_of_json(v: &serde_json::Value) -> Option<Vec<Step>> {
    match v {
        serde_json::Value::String(s) => Some(path::parse_dotted(s)),
        serde_json::Value::Array(items) => items
            .iter()
            .map(|i| match i {
                serde_json::Value::String(s) => Some(Step::Key(s.clone())),
                serde_json::Value::Number(n) => n
                    .as_u64()
                    .and_then(|u| usize::try_from(u).ok())
                    .map(Step::Index),
                _ => None,
            })
            .collect(),
        _ => None,
    }
}

/// The span a path points at: the value when found (the key for a mapping entry whose value
/// is a collection, so the line reads naturally), else the deepest existing ancestor's key.
#[must_use]
pub fn span_of(root: &Node, steps: &[Step]) -> (Span, bool) {
    let l = path::locate(root, steps);
    let span = match (l.key, l.node.as_scalar()) {
        (Some(k), None) => k.span,
        (Some(k), Some(_)) if !l.complete => k.span,
        _ => l.node.span,
    };
    (span, l.complete)
}

pub(crate) fn register(engine: &mut Engine) -> anyhow::Result<()> {
    engine.add_extension(
        "gitops.location".to_string(),
        1,
        Box::new(|args: Vec<Value>| {
            let Some(arg) = args.first() else {
                return Ok(Value::Undefined);
            };
            let json = serde_json::to_value(arg)?;
            let Some(steps) = steps_of_json(&json) else {
                anyhow::bail!("gitops.location: the path must be an array of keys and indexes or a dotted string");
            };
            Ok(CURRENT.with(|c| {
                let c = c.borrow();
                let Some(cur) = c.as_ref() else {
                    return Value::Undefined;
                };
                let (span, complete) = span_of(&cur.root, &steps);
                if !complete {
                    return Value::Undefined;
                }
                let start = cur.lines.line_col(&cur.text, span.start as usize);
                let end = cur.lines.line_col(&cur.text, span.end as usize);
                let obj = serde_json::json!({
                    "file": &*cur.file,
                    "line": start.line,
                    "column": start.column,
                    "end_line": end.line,
                    "end_column": end.column,
                });
                Value::from(obj)
            }))
        }),
    )
}
