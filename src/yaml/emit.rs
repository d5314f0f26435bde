//! Block-style YAML of a tree, line by line, each line with the span of the node that wrote
//! it: `render` prints it, `diff` compares it and follows a changed line back to its source.

use serde_json::Value as J;

use super::Node;
use crate::source::Span;

/// One emitted line (without its newline) and the node it shows: a scalar's value, or the
/// key of a collection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Line {
    pub text: String,
    pub span: Span,
}

/// How to emit: keys sorted (what Argo CD compares) or in written order, and which paths to
/// leave out (keys as written; a sequence item's path segment is its index).
pub struct Style<'a> {
    pub sort_keys: bool,
    pub skip: &'a dyn Fn(&[String]) -> bool,
}

impl Style<'_> {
    /// Written order, nothing left out.
    #[must_use]
    pub fn written() -> Style<'static> {
        Style {
            sort_keys: false,
            skip: &|_| false,
        }
    }
}

/// The tree as YAML text (`render`'s output): strings YAML would read as another type or
/// misparse are written as JSON strings (valid YAML double-quoted scalars).
#[must_use]
pub fn to_text(v: &Node) -> String {
    let mut s = String::new();
    for l in lines(v, &Style::written()) {
        s.push_str(&l.text);
        s.push('\n');
    }
    s
}

/// The tree as YAML lines.
#[must_use]
pub fn lines(v: &Node, style: &Style<'_>) -> Vec<Line> {
    let mut e = Emitter {
        style,
        out: Vec::new(),
        cur: String::new(),
        path: Vec::new(),
    };
    e.emit(v, 0);
    e.out
}

struct Emitter<'a, 's> {
    style: &'a Style<'s>,
    out: Vec<Line>,
    cur: String,
    path: Vec<String>,
}

impl Emitter<'_, '_> {
    fn end_line(&mut self, span: Span) {
        self.out.push(Line {
            text: std::mem::take(&mut self.cur),
            span,
        });
    }

    fn entries<'n>(&self, v: &'n Node) -> Vec<&'n super::Entry> {
        let mut entries: Vec<&super::Entry> = v.as_map().unwrap_or(&[]).iter().collect();
        if self.style.sort_keys {
            entries.sort_by_key(|e| key_text(&e.key));
        }
        entries
            .into_iter()
            .filter(|e| {
                let mut p = self.path.clone();
                p.push(key_plain(&e.key));
                !self.emptied(&mut p, &e.value)
            })
            .collect()
    }

    /// Whether `path` is skipped, or holds a map whose every entry is (`labels` that held only
    /// a skipped label is left out, not shown empty).
    fn emptied(&self, path: &mut Vec<String>, v: &Node) -> bool {
        if (self.style.skip)(path) {
            return true;
        }
        match v.as_map().filter(|m| !m.is_empty()) {
            Some(entries) => entries.iter().all(|e| {
                path.push(key_plain(&e.key));
                let gone = self.emptied(path, &e.value);
                path.pop();
                gone
            }),
            None => false,
        }
    }

    fn emit(&mut self, v: &Node, indent: usize) {
        let pad = " ".repeat(indent);
        if v.as_map().is_some_and(|m| !m.is_empty()) {
            for e in self.entries(v) {
                self.cur.push_str(&pad);
                self.cur.push_str(&key_text(&e.key));
                self.cur.push(':');
                self.path.push(key_plain(&e.key));
                self.nested(&e.key, &e.value, indent);
                self.path.pop();
            }
        } else if let Some(items) = v.as_seq().filter(|a| !a.is_empty()) {
            for (i, item) in items.iter().enumerate() {
                self.path.push(i.to_string());
                if (self.style.skip)(&self.path) {
                    self.path.pop();
                    continue;
                }
                self.cur.push_str(&pad);
                self.cur.push('-');
                let entries = if item.as_map().is_some_and(|m| !m.is_empty()) {
                    self.entries(item)
                } else {
                    Vec::new()
                };
                if entries.is_empty() {
                    self.nested(item, item, indent);
                } else {
                    // The first key on the dash's line, the rest below it.
                    for (n, e) in entries.iter().enumerate() {
                        if n == 0 {
                            self.cur.push(' ');
                        } else {
                            self.cur.push_str(&pad);
                            self.cur.push_str("  ");
                        }
                        self.cur.push_str(&key_text(&e.key));
                        self.cur.push(':');
                        self.path.push(key_plain(&e.key));
                        self.nested(&e.key, &e.value, indent + 2);
                        self.path.pop();
                    }
                }
                self.path.pop();
            }
        } else {
            self.cur.push_str(&pad);
            self.cur.push_str(&leaf(v));
            self.end_line(v.span);
        }
    }

    /// A value after `key:` or `-`: on the same line when it is a leaf, else below, indented.
    fn nested(&mut self, key: &Node, v: &Node, indent: usize) {
        let collection =
            v.as_map().is_some_and(|m| !m.is_empty()) || v.as_seq().is_some_and(|a| !a.is_empty());
        if collection {
            self.end_line(key.span);
            self.emit(v, indent + 2);
        } else {
            self.cur.push(' ');
            self.cur.push_str(&leaf(v));
            self.end_line(v.span);
        }
    }
}

fn key_plain(k: &Node) -> String {
    match k.to_json() {
        J::String(s) => s,
        other => other.to_string(),
    }
}

fn key_text(k: &Node) -> String {
    scalar_text(&key_plain(k))
}

fn leaf(v: &Node) -> String {
    match v.to_json() {
        J::String(s) => scalar_text(&s),
        J::Object(_) => "{}".into(),
        J::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

/// A string as a plain scalar when YAML reads it back as that string, else JSON-quoted.
fn scalar_text(s: &str) -> String {
    if is_plain(s) {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

fn is_plain(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let reserved = matches!(
        s.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
    );
    let numeric = s.parse::<f64>().is_ok()
        || s.starts_with("0x")
        || s.starts_with("0o")
        || s.chars()
            .all(|c| c.is_ascii_digit() || c == ':' || c == '_');
    !reserved
        && !numeric
        && (first.is_ascii_alphanumeric() || matches!(first, '/' | '.' | '_' | '$' | '('))
        && !s.ends_with(' ')
        && !s.ends_with(':')
        && !s.contains(": ")
        && !s.contains(" #")
        && s.chars()
            .all(|c| !c.is_control() && !matches!(c, '\u{feff}'))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_reads_back_as_the_same_value() {
        let v = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "web"}},
            "data": {
                "a": "true", "b": "1.5", "c": "", "d": "line\nnext", "e": "x: y", "f": "#c",
                "g": " lead", "h": "01", "i": "- item", "j": "{x}", "k": "plain text", "l": "10:30"
            },
            "spec": {"list": [{"name": "a", "ports": [80, 443]}, "s", [], {}], "n": null, "t": true}
        });
        let tree = crate::yaml::parse(crate::source::FileId(0), &v.to_string())
            .docs
            .remove(0)
            .root;
        let s = to_text(&tree);
        let back = crate::yaml::parse(crate::source::FileId(0), &s);
        assert!(back.errors.is_empty(), "{s}");
        assert_eq!(back.docs[0].root.to_json(), v, "{s}");
    }

    #[test]
    fn sorted_lines_skip_paths_and_keep_value_spans() {
        let text = "b: 1\na:\n  keep: x\n  drop: y\nc: [p, q]\nd:\n  drop: z\n";
        let tree = crate::yaml::parse(crate::source::FileId(0), text)
            .docs
            .remove(0)
            .root;
        let skip = |p: &[String]| p.last().is_some_and(|k| k == "drop") || p == ["c", "1"];
        let style = Style {
            sort_keys: true,
            skip: &skip,
        };
        let ls = lines(&tree, &style);
        let texts: Vec<&str> = ls.iter().map(|l| l.text.as_str()).collect();
        assert_eq!(texts, ["a:", "  keep: x", "b: 1", "c:", "  - p"]);
        assert_eq!(&text[ls[1].span.range()], "x");
        assert_eq!(&text[ls[2].span.range()], "1");
    }
}
