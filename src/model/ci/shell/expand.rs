//! Variable expansion of a word, as far as the script's variables are known.

use super::scan::{Word, skip_backticks, skip_expansion};

/// A word after variable expansion.
#[derive(Clone, Debug, Default)]
pub struct Expanded {
    /// The known text (unknown parts are left out).
    pub text: String,
    /// Variables that have no known value.
    pub undefined: Vec<String>,
    /// A command substitution (`$(...)`, backticks) whose output is unknown.
    pub substitution: bool,
}

/// Expands `$NAME`, `${NAME}` and `${NAME:-default}` with `lookup`; command substitutions
/// and undefined variables are recorded, not guessed.
pub fn expand(word: &Word, lookup: &dyn Fn(&str) -> Option<String>) -> Expanded {
    expand_text(&word.text, Some(&word.literal), lookup)
}

/// [`expand`] on a plain string (YAML variable values, where nothing is quoted).
pub fn expand_text(
    text: &str,
    literal: Option<&[bool]>,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Expanded {
    let mut out = Expanded::default();
    let b = text.as_bytes();
    let lit = |i: usize| literal.and_then(|l| l.get(i).copied()).unwrap_or(false);
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b'`' && !lit(i) {
            out.substitution = true;
            i = skip_backticks(text, i);
            continue;
        }
        if c != b'$' || lit(i) {
            let ch = text[i..].chars().next().unwrap_or('\u{fffd}');
            out.text.push(ch);
            i += ch.len_utf8().max(1);
            continue;
        }
        if text[i..].starts_with("${{") {
            // A GitHub Actions expression, kept as written.
            let end = text[i..].find("}}").map_or(text.len(), |e| i + e + 2);
            out.text.push_str(&text[i..end]);
            i = end;
            continue;
        }
        match b.get(i + 1) {
            Some(b'(') => {
                out.substitution = true;
                i = skip_expansion(text, i);
            }
            Some(b'{') => {
                let end = skip_expansion(text, i);
                let inner = text.get(i + 2..end.saturating_sub(1)).unwrap_or("");
                let name_len = inner
                    .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                    .unwrap_or(inner.len());
                let name = &inner[..name_len];
                let rest = &inner[name_len..];
                match lookup(name) {
                    Some(v) if !(rest.starts_with(":-") && v.is_empty()) => out.text.push_str(&v),
                    _ => {
                        if let Some(d) = rest.strip_prefix(":-").or_else(|| rest.strip_prefix('-'))
                        {
                            let e = expand_text(d, None, lookup);
                            out.text.push_str(&e.text);
                            out.undefined.extend(e.undefined);
                            out.substitution |= e.substitution;
                        } else {
                            out.undefined.push(name.to_string());
                        }
                    }
                }
                i = end;
            }
            Some(&n) if n.is_ascii_alphabetic() || n == b'_' => {
                let start = i + 1;
                let mut j = start;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                let name = &text[start..j];
                match lookup(name) {
                    Some(v) => out.text.push_str(&v),
                    None => out.undefined.push(name.to_string()),
                }
                i = j;
            }
            Some(n)
                if n.is_ascii_digit() || matches!(n, b'@' | b'*' | b'#' | b'?' | b'$' | b'!') =>
            {
                out.undefined.push(text[i + 1..i + 2].to_string());
                i += 2;
            }
            _ => {
                out.text.push('$');
                i += 1;
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ci::shell::commands;

    #[test]
    fn expands_variables() {
        let w = &commands("x \"a $A ${B:-b} ${C} '$D' $(date)\"")[0].words[1];
        let e = expand(w, &|n| (n == "A").then(|| "1".to_string()));
        assert_eq!(e.text, "a 1 b  '' ");
        assert_eq!(e.undefined, vec!["C", "D"]);
        assert!(e.substitution);
        let w = &commands("x '$A'")[0].words[1];
        assert_eq!(expand(w, &|_| None).text, "$A");
    }
}
