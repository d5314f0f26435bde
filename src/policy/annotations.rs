//! Rule ids from `# METADATA` annotations (OPA's rich metadata: YAML in a comment block that
//! starts with `# METADATA` at column 1, before the package or rule it annotates). A result
//! rule's id is its annotation's `custom.id`, else its `title` when that is a single word (as
//! Regal's own rules are titled), under `policy/`: `custom: {id: no-latest}` gives
//! `policy/no-latest`. Without one, `policy/<package>/<rule>` stays the id.
//!
//! An annotation applies to the rule definition that follows it (OPA's default `scope: rule`),
//! or with `scope: document` to every definition of that rule in the package. When a rule is
//! defined more than once and only some definitions carry an id, each such definition is
//! compiled a second time under a name of its own (same package and imports) so that its
//! results can be told from the others' ([`Definition`]).
//!
//! Ids are unique in a policy set: a second rule with the same id, or one that takes another
//! rule's `policy/<package>/<rule>` id, is an error at the annotation.

use std::collections::BTreeMap;
use std::path::PathBuf;

use regorus::unstable::{Module, Rule, RuleHead};

use super::{PolicyError, PolicyFile, is_check_rule};
use crate::source::FileId;

/// One `# METADATA` block's id and what it annotates.
#[derive(Clone, Debug)]
pub(super) struct Annotation {
    /// 1-based line of the statement it annotates.
    target_line: usize,
    /// `scope: document`.
    document: bool,
    /// `custom.id` or a one-word `title`, with `policy/` in front.
    id: String,
    /// Byte range of the id's value in the `.rego` file.
    span: (usize, usize),
}

/// A definition of a result rule that has an id of its own while other definitions of the same
/// rule do not share it: evaluated under `query`, a rule compiled from its text alone.
#[derive(Clone, Debug)]
pub struct Definition {
    /// The rule it defines (`deny`).
    pub rule: String,
    pub id: String,
    /// The name it is compiled under in the same package.
    pub query: String,
    /// 1-based line of its head.
    pub line: usize,
    pub file: String,
}

/// The ids a package's annotations give.
#[derive(Clone, Debug, Default)]
pub struct RuleIds {
    /// Rules whose every definition has this id.
    pub whole: BTreeMap<String, String>,
    /// Single definitions with an id.
    pub definitions: Vec<Definition>,
}

impl RuleIds {
    pub fn is_empty(&self) -> bool {
        self.whole.is_empty() && self.definitions.is_empty()
    }
}

/// The `# METADATA` blocks of `file` that give an id.
pub(super) fn annotations(file: &PolicyFile) -> Result<Vec<Annotation>, PolicyError> {
    let text = &file.text;
    let lines: Vec<(usize, &str)> = text
        .split_inclusive('\n')
        .scan(0, |at, l| {
            let start = *at;
            *at += l.len();
            Some((start, l.trim_end_matches(['\n', '\r'])))
        })
        .collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].1.trim_end() != "# METADATA" {
            i += 1;
            continue;
        }
        // The YAML: each following comment line without its `#`, and where it starts in the
        // file.
        let mut yaml = String::new();
        let mut starts: Vec<(usize, usize)> = Vec::new();
        let mut j = i + 1;
        while j < lines.len() && lines[j].1.starts_with('#') {
            starts.push((yaml.len(), lines[j].0 + 1));
            yaml.push_str(&lines[j].1[1..]);
            yaml.push('\n');
            j += 1;
        }
        let block_start = lines[i].0;
        let in_file = |at: usize| {
            let (y, f) = starts
                .iter()
                .rev()
                .find(|(y, _)| *y <= at)
                .copied()
                .unwrap_or((0, block_start));
            f + (at - y)
        };
        let located = |span: (usize, usize), message: String, help: Option<String>| PolicyError {
            path: PathBuf::from(&file.path),
            text: text.clone(),
            span: Some(span),
            message,
            help,
        };
        let parsed = crate::yaml::parse(FileId(0), &yaml);
        if let Some(e) = parsed.errors.first() {
            let at = in_file(e.span.start as usize);
            return Err(located(
                (at, at),
                format!("invalid `# METADATA` block: {}", e.message),
                None,
            ));
        }
        // The statement it annotates: the next line that is neither blank nor a comment.
        let mut k = j;
        while k < lines.len() && (lines[k].1.trim().is_empty() || lines[k].1.starts_with('#')) {
            k += 1;
        }
        let target_line = k + 1;
        i = j;
        let Some(root) = parsed.docs.first().map(|d| &d.root) else {
            continue;
        };
        let scope = root.get_str("scope").unwrap_or("rule");
        if k >= lines.len()
            || lines[k].1.starts_with("package")
            || !matches!(scope, "rule" | "document")
        {
            continue;
        }
        let (node, from_title) = match root.path(&["custom", "id"]) {
            Some(n) => (n, false),
            None => match root.get("title") {
                Some(n) => (n, true),
                None => continue,
            },
        };
        let value = node.scalar_text().unwrap_or("").trim();
        let span = (
            in_file(node.span.start as usize),
            in_file(node.span.end as usize),
        );
        if !is_id(value) {
            if from_title {
                // A title that is a sentence names the rule for people, not as an id.
                continue;
            }
            return Err(located(
                span,
                format!("`custom.id` `{value}` is not a rule id"),
                Some(
                    "an id is letters, digits, `-`, `_`, `.` and `/`, such as `team/no-latest`."
                        .into(),
                ),
            ));
        }
        let id = if value.starts_with("policy/") {
            value.to_string()
        } else {
            format!("policy/{value}")
        };
        out.push(Annotation {
            target_line,
            document: scope == "document",
            id,
            span,
        });
    }
    Ok(out)
}

fn is_id(s: &str) -> bool {
    !s.is_empty()
        && !s.starts_with('/')
        && !s.ends_with('/')
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
}

/// A result rule's definition in a module: its name, head line and text.
struct Site<'m> {
    rule: String,
    line: usize,
    text: &'m str,
}

fn result_definitions(module: &Module) -> Vec<Site<'_>> {
    module
        .policy
        .iter()
        .filter_map(|r| match &**r {
            Rule::Spec { span, head, .. } => {
                let refr = match head {
                    RuleHead::Compr { refr, .. }
                    | RuleHead::Set { refr, .. }
                    | RuleHead::Func { refr, .. } => refr,
                };
                let name = super::kinds::base_name(refr)?;
                is_check_rule(&name).then(|| Site {
                    rule: name,
                    line: span.line as usize,
                    text: span.text(),
                })
            }
            Rule::Default { .. } => None,
        })
        .collect()
}

/// A module of the same package and imports as `module` (read from `source`, its file's text)
/// holding `text` renamed to `query`.
fn definition_module(module: &Module, source: &str, text: &str, rule: &str, query: &str) -> String {
    // Statements to the end of their line (an import's `as` included).
    let statement = |span: &regorus::unstable::Span| {
        let start = (span.start as usize).min(source.len());
        let end = source[start..]
            .find('\n')
            .map_or(source.len(), |i| start + i)
            .max((span.end as usize).min(source.len()));
        &source[start..end]
    };
    let mut out = String::new();
    out.push_str(statement(&module.package.span));
    out.push('\n');
    for import in &module.imports {
        out.push_str(statement(&import.span));
        out.push('\n');
    }
    out.push_str(query);
    out.push_str(&text[rule.len()..]);
    out.push('\n');
    out
}

/// A module to compile: its path, its text and the index of the file whose syntax it has.
pub(super) type AddedModule = (String, String, usize);

/// Each package's rule ids, and the modules to add for definitions with their own id (path,
/// text, which file's syntax). `files[i]` is the file of `modules[i]`, `packages[i]` its
/// package; `found[i]` its annotations.
pub(super) fn rule_ids(
    files: &[PolicyFile],
    modules: &[&Module],
    packages: &[String],
    found: &[Vec<Annotation>],
) -> Result<(BTreeMap<String, RuleIds>, Vec<AddedModule>), PolicyError> {
    let mut ids: BTreeMap<String, RuleIds> = BTreeMap::new();
    let mut added = Vec::new();
    // Every id given, with the place that gave it, to find duplicates.
    let mut given: BTreeMap<String, (String, usize)> = BTreeMap::new();
    let duplicate = |file: &PolicyFile, a: &Annotation, by: &(String, usize)| {
        PolicyError {
        path: PathBuf::from(&file.path),
        text: file.text.clone(),
        span: Some(a.span),
        message: format!(
            "rule id `{}` is already the id of the rule at {}:{}",
            a.id, by.0, by.1
        ),
        help: Some(
            "give each rule its own `custom.id`; `scope: document` gives every definition of a rule one id."
                .into(),
        ),
    }
    };
    // The fallback ids of rules without an annotation are taken too.
    let mut fallback: BTreeMap<String, (String, usize)> = BTreeMap::new();
    for (i, module) in modules.iter().enumerate() {
        for site in result_definitions(module) {
            fallback
                .entry(format!("policy/{}/{}", packages[i], site.rule))
                .or_insert((files[i].path.clone(), site.line));
        }
    }
    for (i, module) in modules.iter().enumerate() {
        let file = &files[i];
        if found[i].is_empty() || file.path.ends_with("_test.rego") {
            continue;
        }
        let package = &packages[i];
        let sites = result_definitions(module);
        let count = |rule: &str| {
            modules
                .iter()
                .zip(packages)
                .filter(|(_, p)| *p == package)
                .map(|(m, _)| {
                    result_definitions(m)
                        .iter()
                        .filter(|s| s.rule == rule)
                        .count()
                })
                .sum::<usize>()
        };
        let entry = ids.entry(package.clone()).or_default();
        for a in &found[i] {
            let Some(site) = sites.iter().find(|s| s.line == a.target_line) else {
                continue;
            };
            if let Some(by) = given.get(&a.id).or_else(|| fallback.get(&a.id)) {
                return Err(duplicate(file, a, by));
            }
            given.insert(a.id.clone(), (file.path.clone(), site.line));
            if a.document || count(&site.rule) == 1 {
                entry.whole.insert(site.rule.clone(), a.id.clone());
                continue;
            }
            let query = format!("__gitops_lint_{}_{}", site.rule, entry.definitions.len());
            added.push((
                format!("{}#{}", file.path, site.line),
                definition_module(module, &file.text, site.text, &site.rule, &query),
                i,
            ));
            entry.definitions.push(Definition {
                rule: site.rule.clone(),
                id: a.id.clone(),
                query,
                line: site.line,
                file: file.path.clone(),
            });
        }
    }
    ids.retain(|_, v| !v.is_empty());
    Ok((ids, added))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> PolicyFile {
        PolicyFile {
            path: "p.rego".into(),
            text: text.into(),
        }
    }

    #[test]
    fn ids_come_from_custom_id_or_a_one_word_title() {
        let text = "package main\n\n# METADATA\n# title: No latest tags\n# custom:\n#   id: team/no-latest\ndeny contains m if { m := 1 }\n\n# METADATA\n# title: STY-001\n\ndeny contains m if { m := 2 }\n# METADATA\n# title: a sentence\ndeny contains m if { m := 3 }\n";
        let found = annotations(&file(text)).unwrap();
        let got: Vec<(usize, &str)> = found
            .iter()
            .map(|a| (a.target_line, a.id.as_str()))
            .collect();
        assert_eq!(got, [(7, "policy/team/no-latest"), (12, "policy/STY-001")]);
        assert_eq!(&text[found[0].span.0..found[0].span.1], "team/no-latest");
    }

    #[test]
    fn a_bad_id_is_located() {
        let text = "package main\n# METADATA\n# custom:\n#   id: no latest\ndeny contains m if { m := 1 }\n";
        let e = annotations(&file(text)).unwrap_err();
        assert_eq!(e.span.map(|(s, _)| &text[s..s + 9]), Some("no latest"));
    }
}
