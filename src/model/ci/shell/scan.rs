//! The shell word scanner: a script split into simple commands, each word with its unexpanded
//! text and the script offset of every byte.

use std::ops::Range;

/// One shell word after quote removal (variables are not expanded).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Word {
    pub text: String,
    /// Script offset of each byte of `text`, plus one entry for the word's end.
    pub offs: Vec<usize>,
    /// True for bytes that came from single quotes or a backslash escape (`$` there is literal).
    pub literal: Vec<bool>,
    /// Raw range of the word in the script.
    pub start: usize,
    pub end: usize,
    /// Script offset where text appended to the word's value belongs (before its closing
    /// quote), when that is a single insertion.
    pub append_at: Option<usize>,
    /// The raw word has quotes.
    pub quoted: bool,
}

impl Word {
    fn new(start: usize) -> Word {
        Word {
            text: String::new(),
            offs: Vec::new(),
            literal: Vec::new(),
            start,
            end: start,
            append_at: None,
            quoted: false,
        }
    }

    fn push(&mut self, c: char, at: usize, literal: bool) {
        self.text.push(c);
        for _ in 0..c.len_utf8() {
            self.offs.push(at);
            self.literal.push(literal);
        }
    }

    /// The part `range` of the word's text (byte range on char boundaries).
    #[must_use]
    pub fn slice(&self, range: Range<usize>) -> Word {
        let r = range.start.min(self.text.len())..range.end.min(self.text.len());
        let at = |i: usize| self.offs.get(i).copied().unwrap_or(self.end);
        let mut offs = self.offs[r.clone()].to_vec();
        offs.push(at(r.end));
        Word {
            text: self.text[r.clone()].to_string(),
            offs,
            literal: self.literal[r.clone()].to_vec(),
            start: at(r.start),
            end: at(r.end),
            append_at: if r.end < self.text.len() {
                Some(at(r.end))
            } else {
                self.append_at
            },
            quoted: self.quoted,
        }
    }

    /// Script offset of byte `i` of the text.
    #[must_use]
    pub fn offset(&self, i: usize) -> usize {
        self.offs.get(i).copied().unwrap_or(self.end)
    }

    /// `NAME` when the word is exactly one variable reference (`$NAME`, `${NAME}`).
    #[must_use]
    pub fn sole_variable(&self) -> Option<&str> {
        if self.literal.iter().any(|&l| l) {
            return None;
        }
        let t = self.text.as_str();
        let name = if let Some(inner) = t.strip_prefix("${").and_then(|r| r.strip_suffix('}')) {
            inner
        } else {
            t.strip_prefix('$')?
        };
        is_name(name).then_some(name)
    }
}

/// A simple command: its words and where it is in the script.
#[derive(Clone, Debug)]
pub struct Command {
    pub words: Vec<Word>,
    pub start: usize,
    pub end: usize,
}

/// `[A-Za-z_][A-Za-z0-9_]*`
#[must_use]
pub fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

struct Scanner<'a> {
    s: &'a str,
    i: usize,
    cmds: Vec<Command>,
    words: Vec<Word>,
    cur: Option<Word>,
    heredocs: Vec<(String, bool)>,
}

impl Scanner<'_> {
    fn byte(&self, i: usize) -> Option<u8> {
        self.s.as_bytes().get(i).copied()
    }

    fn ch(&self, i: usize) -> Option<char> {
        self.s.get(i..).and_then(|r| r.chars().next())
    }

    fn word(&mut self) -> &mut Word {
        let i = self.i;
        self.cur.get_or_insert_with(|| Word::new(i))
    }

    fn end_word(&mut self) {
        if let Some(mut w) = self.cur.take() {
            w.end = self.i;
            w.offs.push(self.i);
            let raw = &self.s[w.start..w.end];
            if raw.len() >= 2 && (raw.ends_with('"') || raw.ends_with('\'')) {
                w.append_at = Some(w.end - 1);
            }
            self.words.push(w);
        }
    }

    fn end_command(&mut self) {
        self.end_word();
        if !self.words.is_empty() {
            let words = std::mem::take(&mut self.words);
            let start = words[0].start;
            let end = words[words.len() - 1].end;
            self.cmds.push(Command { words, start, end });
        }
    }

    /// Copies a `$(...)`, `${...}` or backtick substitution starting here into the word as
    /// written (it is not expanded); false when none starts here.
    fn take_substitution(&mut self) -> bool {
        let end = match self.byte(self.i) {
            Some(b'$') if matches!(self.byte(self.i + 1), Some(b'(' | b'{')) => {
                skip_expansion(self.s, self.i)
            }
            Some(b'`') => skip_backticks(self.s, self.i),
            _ => return false,
        };
        self.push_raw(end);
        true
    }

    /// Copies raw text `[self.i, to)` into the current word.
    fn push_raw(&mut self, to: usize) {
        let to = to.min(self.s.len());
        let mut j = self.i;
        while j < to {
            let Some(c) = self.ch(j) else { break };
            self.word().push(c, j, false);
            j += c.len_utf8();
        }
        self.i = to;
    }

    fn skip_heredocs(&mut self) {
        for (delim, strip_tabs) in std::mem::take(&mut self.heredocs) {
            while self.i < self.s.len() {
                let line_end = self.s[self.i..]
                    .find('\n')
                    .map_or(self.s.len(), |j| self.i + j);
                let line = &self.s[self.i..line_end];
                let line = if strip_tabs {
                    line.trim_start_matches('\t')
                } else {
                    line
                };
                self.i = (line_end + 1).min(self.s.len());
                if line.trim_end_matches('\r') == delim {
                    break;
                }
            }
        }
    }

    fn run(mut self) -> Vec<Command> {
        while self.i < self.s.len() {
            let Some(c) = self.ch(self.i) else { break };
            if self.take_substitution() {
                continue;
            }
            match c {
                ' ' | '\t' | '\r' => {
                    self.end_word();
                    self.i += 1;
                }
                '\n' => {
                    self.end_command();
                    self.i += 1;
                    self.skip_heredocs();
                }
                '#' if self.cur.is_none() => {
                    self.i = self.s[self.i..]
                        .find('\n')
                        .map_or(self.s.len(), |j| self.i + j);
                }
                '\\' => match self.ch(self.i + 1) {
                    Some('\n') => self.i += 2,
                    Some(n) => {
                        let at = self.i;
                        self.word().push(n, at, true);
                        self.i += 1 + n.len_utf8();
                    }
                    None => self.i += 1,
                },
                '\'' => {
                    self.word().quoted = true;
                    let close = self.s[self.i + 1..]
                        .find('\'')
                        .map_or(self.s.len(), |j| self.i + 1 + j);
                    let mut j = self.i + 1;
                    while j < close {
                        let Some(ch) = self.ch(j) else { break };
                        self.word().push(ch, j, true);
                        j += ch.len_utf8();
                    }
                    self.i = (close + 1).min(self.s.len());
                }
                '"' => {
                    self.word().quoted = true;
                    self.i += 1;
                    while self.i < self.s.len() {
                        let Some(ch) = self.ch(self.i) else { break };
                        if self.take_substitution() {
                            continue;
                        }
                        match ch {
                            '"' => {
                                self.i += 1;
                                break;
                            }
                            '\\' => match self.ch(self.i + 1) {
                                Some('\n') => self.i += 2,
                                Some(n @ ('$' | '`' | '"' | '\\')) => {
                                    let at = self.i;
                                    self.word().push(n, at, true);
                                    self.i += 2;
                                }
                                _ => {
                                    let at = self.i;
                                    self.word().push('\\', at, false);
                                    self.i += 1;
                                }
                            },
                            _ => {
                                let at = self.i;
                                self.word().push(ch, at, false);
                                self.i += ch.len_utf8();
                            }
                        }
                    }
                }
                '&' if self
                    .cur
                    .as_ref()
                    .is_some_and(|w| w.text.ends_with(['>', '<'])) =>
                {
                    let at = self.i;
                    self.word().push('&', at, false);
                    self.i += 1;
                }
                ';' | '&' | '|' | '(' | ')' => {
                    self.end_command();
                    self.i += 1;
                }
                '<' if self.byte(self.i + 1) == Some(b'<')
                    && self.byte(self.i + 2) != Some(b'<') =>
                {
                    self.end_word();
                    self.i += 2;
                    let strip = self.byte(self.i) == Some(b'-');
                    if strip {
                        self.i += 1;
                    }
                    while matches!(self.byte(self.i), Some(b' ' | b'\t')) {
                        self.i += 1;
                    }
                    let start = self.i;
                    while let Some(b) = self.byte(self.i) {
                        if b.is_ascii_whitespace() || matches!(b, b';' | b'&' | b'|' | b')') {
                            break;
                        }
                        self.i += 1;
                    }
                    let delim: String = self.s[start..self.i]
                        .chars()
                        .filter(|c| !matches!(c, '\'' | '"' | '\\'))
                        .collect();
                    if !delim.is_empty() {
                        self.heredocs.push((delim, strip));
                    }
                }
                _ => {
                    let at = self.i;
                    self.word().push(c, at, false);
                    self.i += c.len_utf8();
                }
            }
        }
        self.end_command();
        self.cmds
    }
}

/// End of the `$(...)`, `$((...))` or `${...}` starting at `i`.
pub(super) fn skip_expansion(s: &str, i: usize) -> usize {
    let b = s.as_bytes();
    let (open, close) = if b.get(i + 1) == Some(&b'{') {
        (b'{', b'}')
    } else {
        (b'(', b')')
    };
    let mut depth = 0usize;
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            c if c == open => depth += 1,
            c if c == close => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return j + 1;
                }
            }
            b'\'' if open == b'(' => {
                j = s[j + 1..].find('\'').map_or(b.len(), |k| j + 1 + k);
            }
            b'"' if open == b'(' => {
                j += 1;
                while j < b.len() && b[j] != b'"' {
                    if b[j] == b'\\' {
                        j += 1;
                    }
                    j += 1;
                }
            }
            b'\\' => j += 1,
            _ => {}
        }
        j += 1;
    }
    b.len()
}

pub(super) fn skip_backticks(s: &str, i: usize) -> usize {
    let b = s.as_bytes();
    let mut j = i + 1;
    while j < b.len() {
        match b[j] {
            b'\\' => j += 1,
            b'`' => return j + 1,
            _ => {}
        }
        j += 1;
    }
    b.len()
}

/// Splits a script into simple commands.
#[must_use]
pub fn commands(script: &str) -> Vec<Command> {
    Scanner {
        s: script,
        i: 0,
        cmds: Vec::new(),
        words: Vec::new(),
        cur: None,
        heredocs: Vec::new(),
    }
    .run()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(script: &str) -> Vec<Vec<String>> {
        commands(script)
            .into_iter()
            .map(|c| c.words.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn splits_commands() {
        assert_eq!(
            texts("a 'b c' \"d $X\" && e; f | g\nh \\\n  i # comment\nfor x in $L; do j; done"),
            vec![
                vec!["a", "b c", "d $X"],
                vec!["e"],
                vec!["f"],
                vec!["g"],
                vec!["h", "i"],
                vec!["for", "x", "in", "$L"],
                vec!["do", "j"],
                vec!["done"],
            ]
        );
        assert_eq!(
            texts("cat <<EOF > f\nhello; world\nEOF\ngit push 2>&1"),
            vec![vec!["cat", ">", "f"], vec!["git", "push", "2>&1"]]
        );
        assert_eq!(
            texts("echo \"$(date +\"%Y\")\" x"),
            vec![vec!["echo", "$(date +\"%Y\")", "x"]]
        );
    }
}
