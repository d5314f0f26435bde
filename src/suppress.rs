//! Inline suppression comments:
//! `# gitops-lint: disable=RULE[,RULE] -- reason` on the finding's line or the line above it,
//! `# gitops-lint: disable-file=RULE[,RULE] -- reason` anywhere in a file.

use crate::source::{LineIndex, Span};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The directive's own line and the line below it (0-based line of the directive).
    Line(usize),
    File,
}

/// One rule selector of a directive (`argocd/sync-policy` or `argocd/*`).
#[derive(Clone, Debug)]
pub struct Selector {
    pub pattern: String,
    /// Span of the selector text, for reporting it as unused.
    pub span: Span,
    pub used: bool,
}

impl Selector {
    #[must_use]
    pub fn matches(&self, rule: &str) -> bool {
        match self.pattern.strip_suffix("/*") {
            Some(group) => rule.split('/').next() == Some(group),
            None => self.pattern == rule,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Directive {
    pub scope: Scope,
    pub selectors: Vec<Selector>,
    pub reason: Option<String>,
    /// The whole comment, for messages.
    pub span: Span,
}

impl Directive {
    #[must_use]
    pub fn covers_line(&self, line: usize) -> bool {
        match self.scope {
            Scope::File => true,
            Scope::Line(l) => line == l || line == l + 1,
        }
    }
}

/// What every directive starts with; a file without it has none.
pub const MARKER: &str = "gitops-lint:";

/// Finds every directive in a file's text.
#[must_use]
pub fn parse_directives(
    file: crate::source::FileId,
    text: &str,
    lines: &LineIndex,
) -> Vec<Directive> {
    let mut out = Vec::new();
    if !text.contains(MARKER) {
        return out;
    }
    for line in 0..lines.line_count() {
        let range = lines.line_range(text, line);
        let Some(content) = text.get(range.clone()) else {
            continue;
        };
        let Some(pos) = content.find(MARKER) else {
            continue;
        };
        // The marker must open a comment: `#`, then optional spaces.
        let before = content[..pos].trim_end();
        if !before.ends_with('#') {
            continue;
        }
        let hash = range.start + before.len() - 1;
        let body_start = range.start + pos + MARKER.len();
        let body = &text[body_start..range.end];
        let trimmed = body.trim_start();
        let lead = body.len() - trimmed.len();
        let (scope, rest, rest_off) = if let Some(r) = trimmed.strip_prefix("disable-file=") {
            (Scope::File, r, body_start + lead + "disable-file=".len())
        } else if let Some(r) = trimmed.strip_prefix("disable=") {
            (Scope::Line(line), r, body_start + lead + "disable=".len())
        } else {
            continue;
        };
        let (list, reason) = match rest.find("--") {
            Some(i) => (
                &rest[..i],
                Some(rest[i + 2..].trim().to_string()).filter(|r| !r.is_empty()),
            ),
            None => (rest, None),
        };
        let list_end = list.find(char::is_whitespace).unwrap_or(list.len());
        let mut selectors = Vec::new();
        let mut off = rest_off;
        for part in list[..list_end].split(',') {
            let name = part.trim();
            if !name.is_empty() {
                let start = off + (part.len() - part.trim_start().len());
                selectors.push(Selector {
                    pattern: name.to_string(),
                    span: Span::new(file, start, start + name.len()),
                    used: false,
                });
            }
            off += part.len() + 1;
        }
        if selectors.is_empty() {
            continue;
        }
        out.push(Directive {
            scope,
            selectors,
            reason,
            span: Span::new(file, hash, range.end),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::FileId;

    #[test]
    fn parses_line_and_file_directives() {
        let text = "a: 1 # gitops-lint: disable=argocd/sync-policy,yaml/* -- legacy\n# gitops-lint: disable-file=ci/writeback-skip-ci\nb: '# gitops-lint: nope'\n";
        let idx = LineIndex::new(text);
        let d = parse_directives(FileId(0), text, &idx);
        assert_eq!(d.len(), 2);
        assert_eq!(d[0].scope, Scope::Line(0));
        assert_eq!(d[0].reason.as_deref(), Some("legacy"));
        assert_eq!(d[0].selectors.len(), 2);
        assert_eq!(&text[d[0].selectors[1].span.range()], "yaml/*");
        assert!(d[0].selectors[1].matches("yaml/syntax"));
        assert!(!d[0].selectors[1].matches("argocd/sync-policy"));
        assert_eq!(d[1].scope, Scope::File);
        assert!(d[0].covers_line(1));
        assert!(!d[0].covers_line(2));
    }
}
