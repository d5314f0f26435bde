//! Paths of keys and indexes (`["spec", "sources", 0, "repoURL"]` or `spec.sources.0.repoURL`)
//! resolved to nodes: how Rego findings get exact locations.

use super::Node;

/// One step of a path: a mapping key or a sequence index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Step {
    Key(String),
    Index(usize),
}

/// Parses a dotted path. `a.b.0.c` is keys `a`, `b`, index-or-key `0`, key `c`; a step in
/// brackets or quotes (`a["b.c"]`, `a[0]`) is taken whole.
#[must_use]
pub fn parse_dotted(s: &str) -> Vec<Step> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = s.chars().peekable();
    let flush = |cur: &mut String, out: &mut Vec<Step>| {
        if !cur.is_empty() {
            out.push(step_of(cur));
            cur.clear();
        }
    };
    while let Some(c) = chars.next() {
        match c {
            '.' => flush(&mut cur, &mut out),
            '[' => {
                flush(&mut cur, &mut out);
                let mut inner = String::new();
                for c in chars.by_ref() {
                    if c == ']' {
                        break;
                    }
                    inner.push(c);
                }
                let t = inner.trim();
                let unq = t
                    .strip_prefix('"')
                    .and_then(|t| t.strip_suffix('"'))
                    .or_else(|| t.strip_prefix('\'').and_then(|t| t.strip_suffix('\'')));
                match unq {
                    Some(k) => out.push(Step::Key(k.to_string())),
                    None => out.push(step_of(t)),
                }
            }
            _ => cur.push(c),
        }
    }
    flush(&mut cur, &mut out);
    out
}

fn step_of(s: &str) -> Step {
    match s.parse::<usize>() {
        Ok(i) => Step::Index(i),
        Err(_) => Step::Key(s.to_string()),
    }
}

/// What a path reached: the deepest node, and whether the whole path was found.
pub struct Located<'a> {
    pub node: &'a Node,
    /// The key node of the last step when it was a mapping key (findings about a key point at
    /// the key).
    pub key: Option<&'a Node>,
    /// True when every step was found; otherwise `node` is the deepest existing ancestor.
    pub complete: bool,
}

/// Follows `steps` from `root`. An index step on a mapping, or a numeric key on a sequence,
/// is tried both ways (`0` may be a key).
#[must_use]
pub fn locate<'a>(root: &'a Node, steps: &[Step]) -> Located<'a> {
    let mut node = root;
    let mut key = None;
    for step in steps {
        let next = match step {
            Step::Key(k) => match node.entry(k) {
                Some(e) => Some((&e.value, Some(&e.key))),
                None => k
                    .parse::<usize>()
                    .ok()
                    .and_then(|i| node.as_seq().and_then(|s| s.get(i)))
                    .map(|n| (n, None)),
            },
            Step::Index(i) => match node.as_seq() {
                Some(s) => s.get(*i).map(|n| (n, None)),
                None => node.entry(&i.to_string()).map(|e| (&e.value, Some(&e.key))),
            },
        };
        match next {
            Some((n, k)) => {
                node = n;
                key = k;
            }
            None => {
                return Located {
                    node,
                    key,
                    complete: false,
                };
            }
        }
    }
    Located {
        node,
        key,
        complete: true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    #[test]
    fn dotted_paths_and_brackets() {
        assert_eq!(
            parse_dotted("spec.sources.0.repoURL"),
            vec![
                Step::Key("spec".into()),
                Step::Key("sources".into()),
                Step::Index(0),
                Step::Key("repoURL".into())
            ]
        );
        assert_eq!(
            parse_dotted(r#"metadata.annotations["a.b/c"]"#),
            vec![
                Step::Key("metadata".into()),
                Step::Key("annotations".into()),
                Step::Key("a.b/c".into())
            ]
        );
        assert_eq!(
            parse_dotted("a[1].b"),
            vec![Step::Key("a".into()), Step::Index(1), Step::Key("b".into())]
        );
    }

    #[test]
    fn locate_reaches_nodes_and_stops_at_the_deepest_ancestor() {
        let text = "spec:\n  sources:\n    - repoURL: a\n    - repoURL: b\n";
        let doc = &crate::yaml::parse(FileId(0), text).docs[0];
        let l = locate(&doc.root, &parse_dotted("spec.sources.1.repoURL"));
        assert!(l.complete);
        assert_eq!(&text[l.node.span.range()], "b");
        let l = locate(&doc.root, &parse_dotted("spec.nope.x"));
        assert!(!l.complete);
        assert_eq!(l.key.map(|k| &text[k.span.range()]), Some("spec"));
        assert!(text[l.node.span.range()].starts_with("sources"));
    }
}
