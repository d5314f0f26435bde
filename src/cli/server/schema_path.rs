//! Where the cursor is in an Argo CD object: the key path from the document's root, from the
//! parsed tree (hover, definition) or, while the user types and the YAML is incomplete, from
//! the indentation of the lines above (completion).

use gitops_lint::model::argocd::schema::{Field, Shape, Struct, schema};
use gitops_lint::yaml::{Node, Value};

/// One step from a node to its child: a mapping key or a list index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

impl Step {
    fn segment(&self) -> String {
        match self {
            Step::Key(k) => k.clone(),
            Step::Index(i) => i.to_string(),
        }
    }
}

/// What is under a byte offset in a parsed document.
pub struct At<'a> {
    /// Steps from the root to the node (or key) under the cursor.
    pub steps: Vec<Step>,
    /// The nodes along the way: `nodes[i]` is reached by `steps[..i]` (the root first).
    pub nodes: Vec<&'a Node>,
    /// The cursor is on the last step's key rather than its value.
    pub on_key: bool,
}

/// The path to the innermost node holding `offset`.
pub fn at_offset(root: &Node, offset: usize) -> At<'_> {
    let mut at = At {
        steps: Vec::new(),
        nodes: vec![root],
        on_key: false,
    };
    let contains = |n: &Node| n.span.start as usize <= offset && offset <= n.span.end as usize;
    let mut node = root;
    // Depth is bounded by the parser's nesting cap; a loop, not recursion.
    'descend: loop {
        match &node.value {
            Value::Map(entries) => {
                for e in entries {
                    if contains(&e.key) {
                        at.steps
                            .push(Step::Key(e.key.as_str().unwrap_or("").to_string()));
                        at.nodes.push(&e.value);
                        at.on_key = true;
                        break 'descend;
                    }
                    if contains(&e.value) {
                        at.steps
                            .push(Step::Key(e.key.as_str().unwrap_or("").to_string()));
                        at.nodes.push(&e.value);
                        node = &e.value;
                        continue 'descend;
                    }
                }
                break;
            }
            Value::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    if contains(item) {
                        at.steps.push(Step::Index(i));
                        at.nodes.push(item);
                        node = item;
                        continue 'descend;
                    }
                }
                break;
            }
            _ => break,
        }
    }
    at
}

/// The Argo CD kind of a document (`Application`, `ApplicationSet`, `AppProject`), when the
/// schema models it.
pub fn argo_kind(root: &Node) -> Option<String> {
    let api = map_get(root, "apiVersion")?.as_str()?;
    let kind = map_get(root, "kind")?.as_str()?;
    (api.starts_with("argoproj.io/") && schema().root(kind).is_some()).then(|| kind.to_string())
}

pub fn map_get<'a>(node: &'a Node, key: &str) -> Option<&'a Node> {
    node.as_map()?
        .iter()
        .rev()
        .find(|e| e.key.as_str() == Some(key))
        .map(|e| &e.value)
}

/// What a path leads to in the schema: a struct (the fields that can go there) and the field
/// that was last named.
pub struct Resolved {
    pub field: Option<&'static Field>,
    pub fields_of: Option<&'static Struct>,
}

/// Walks the schema along `steps` (keys and list indexes).
pub fn resolve(kind: &str, steps: &[Step]) -> Option<Resolved> {
    let s = schema();
    let mut shape: Option<&Shape> = None;
    let mut current: &Struct = s.root(kind)?;
    let mut field = None;
    for step in steps {
        if let Some(sh) = shape {
            match sh {
                Shape::List(inner) | Shape::Map(inner) => {
                    shape = Some(inner);
                    if let Shape::Object(name) = &**inner {
                        current = s.get(name)?;
                    }
                    continue;
                }
                Shape::Object(_) => {}
                _ => return None,
            }
        }
        let Step::Key(k) = step else { return None };
        let f = current.field(k)?;
        field = Some(f);
        shape = Some(&f.shape);
        if let Shape::Object(name) = &f.shape {
            current = s.get(name)?;
        }
    }
    let fields_of = match shape {
        None => Some(current),
        Some(Shape::Object(name)) => s.get(name),
        _ => None,
    };
    Some(Resolved { field, fields_of })
}

/// How a hover names a field's type.
pub fn shape_name(shape: &Shape) -> String {
    match shape {
        Shape::String => "string".into(),
        Shape::Bool => "boolean".into(),
        Shape::Int => "integer".into(),
        Shape::Number => "number".into(),
        Shape::IntOrString => "integer or string".into(),
        Shape::Any => "any".into(),
        Shape::List(inner) => format!("list of {}", shape_name(inner)),
        Shape::Map(inner) => format!("map of string to {}", shape_name(inner)),
        Shape::Object(name) => name.clone(),
    }
}

/// The hover text of a schema field.
pub fn field_markdown(field: &Field) -> String {
    let mut out = format!("**`{}`**: {}", field.name, shape_name(&field.shape));
    if field.required {
        out.push_str(" (required)");
    }
    if !field.doc.is_empty() {
        out.push_str("\n\n");
        out.push_str(&field.doc);
    }
    if !field.allowed.is_empty() {
        out.push_str("\n\nOne of: ");
        let values: Vec<String> = field.allowed.iter().map(|v| format!("`{v}`")).collect();
        out.push_str(&values.join(", "));
    }
    if let Some(v) = field.since {
        out.push_str(&format!("\n\nSince Argo CD {v}."));
    }
    if let Some(v) = field.until {
        out.push_str(&format!("\n\nRemoved in Argo CD {v}."));
    }
    out
}

/// One line's layout: the columns of its list dashes, where its key starts, and the key.
struct LineShape<'a> {
    dashes: Vec<usize>,
    indent: usize,
    key: Option<&'a str>,
    /// `key:` with nothing after it: a parent of the lines below.
    opens: bool,
}

fn line_shape(line: &str) -> Option<LineShape<'_>> {
    let mut dashes = Vec::new();
    let mut i = 0;
    let bytes = line.as_bytes();
    loop {
        while i < bytes.len() && bytes[i] == b' ' {
            i += 1;
        }
        if bytes.get(i) == Some(&b'-') && matches!(bytes.get(i + 1), None | Some(b' ')) {
            dashes.push(i);
            i += 1;
            continue;
        }
        break;
    }
    let rest = &line[i..];
    if rest.is_empty() && dashes.is_empty() || rest.starts_with('#') {
        return None;
    }
    let (key, opens) = match rest.find(':') {
        Some(c) if rest[c + 1..].is_empty() || rest[c + 1..].starts_with([' ', '\t']) => {
            let after = rest[c + 1..].trim();
            (
                Some(rest[..c].trim().trim_matches(['"', '\''])),
                after.is_empty() || after.starts_with('#'),
            )
        }
        _ => (None, false),
    };
    Some(LineShape {
        dashes,
        indent: i,
        key,
        opens,
    })
}

/// The key path of the mapping the cursor's line belongs to, from the indentation of the lines
/// above it (YAML being typed rarely parses). Stops at `---`.
pub fn parent_steps(lines: &[&str], cursor_line: usize) -> Vec<Step> {
    let Some(current) = lines.get(cursor_line) else {
        return Vec::new();
    };
    let mut steps = Vec::new();
    let mut indent = current.len() - current.trim_start_matches([' ', '-']).len();
    if let Some(shape) = line_shape(current) {
        indent = shape.indent;
        for _ in &shape.dashes {
            steps.push(Step::Index(0));
        }
        if let Some(&d) = shape.dashes.first() {
            indent = d;
        }
    }
    for line in lines[..cursor_line].iter().rev() {
        if line.starts_with("---") {
            break;
        }
        let Some(shape) = line_shape(line) else {
            continue;
        };
        let dash = shape.dashes.first().copied();
        if shape.indent < indent || dash.is_some_and(|d| d < indent) {
            if shape.indent < indent && shape.opens {
                if let Some(k) = shape.key {
                    steps.push(Step::Key(k.to_string()));
                }
            }
            // An item of a list whose dash is left of us: we are inside that item.
            if let Some(d) = dash.filter(|d| *d < indent) {
                if shape.indent >= indent {
                    steps.push(Step::Index(0));
                }
                indent = d;
            } else {
                indent = shape.indent;
            }
            for _ in shape.dashes.iter().skip(1) {
                steps.push(Step::Index(0));
            }
            if indent == 0 && dash.is_none() {
                break;
            }
        } else if shape.indent == indent
            && dash.is_none()
            && shape.opens
            && steps.last() == Some(&Step::Index(0))
        {
            // `key:` followed by a list at the same indentation (`- a` under `key:`).
            if let Some(k) = shape.key {
                steps.push(Step::Key(k.to_string()));
            }
            if indent == 0 {
                break;
            }
        }
    }
    steps.reverse();
    steps
}

/// The `kind:` of the YAML document holding `cursor_line`, read from its top-level lines.
pub fn kind_around(lines: &[&str], cursor_line: usize) -> Option<String> {
    let first = lines[..cursor_line.min(lines.len())]
        .iter()
        .rposition(|l| l.starts_with("---"))
        .map_or(0, |i| i + 1);
    lines[first..]
        .iter()
        .take_while(|l| !l.starts_with("---"))
        .find_map(|l| l.strip_prefix("kind:"))
        .map(|k| {
            k.split('#')
                .next()
                .unwrap_or("")
                .trim()
                .trim_matches(['"', '\''])
                .to_string()
        })
        .filter(|k| schema().root(k).is_some())
}

/// Render a path for messages and tests: `spec.sources[].helm`.
pub fn display(steps: &[Step]) -> String {
    let segments: Vec<String> = steps.iter().map(Step::segment).collect();
    segments.join(".")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn steps_of(text: &str) -> String {
        let lines: Vec<&str> = text.lines().collect();
        let last = lines.len() - 1;
        display(&parent_steps(&lines, last))
    }

    #[test]
    fn indentation_paths() {
        assert_eq!(
            steps_of("spec:\n  syncPolicy:\n    auto"),
            "spec.syncPolicy"
        );
        assert_eq!(
            steps_of("spec:\n  sources:\n    - repoURL: x\n      pa"),
            "spec.sources.0"
        );
        assert_eq!(
            steps_of("spec:\n  sources:\n  - repoURL: x\n    pa"),
            "spec.sources.0"
        );
        assert_eq!(steps_of("spec:\n  sources:\n    - pa"), "spec.sources.0");
        assert_eq!(steps_of("metadata:\n  name: a\nsp"), "");
        assert_eq!(steps_of("a:\n  b: 1\n---\nspec:\n  "), "spec");
    }

    #[test]
    fn schema_paths() {
        let r = resolve(
            "Application",
            &[
                Step::Key("spec".into()),
                Step::Key("sources".into()),
                Step::Index(0),
            ],
        )
        .unwrap();
        assert!(r.fields_of.unwrap().field("repoURL").is_some());
        let r = resolve(
            "Application",
            &[Step::Key("spec".into()), Step::Key("syncPolicy".into())],
        )
        .unwrap();
        assert_eq!(r.field.unwrap().name, "syncPolicy");
        assert!(r.fields_of.unwrap().field("automated").is_some());
    }
}
