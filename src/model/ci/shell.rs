//! A small scanner for the POSIX shell of CI scripts: it splits a script into simple commands
//! (quotes, `&&`, `||`, `;`, pipes, line continuations, `for ...; do ...; done`, comments,
//! here-documents) and recognises the git and API commands that write back to a repository.
//!
//! It is not a shell: words keep their unexpanded text, with the script offset of every byte,
//! so a finding can point at a command and a fix can insert text inside a quoted message.

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

    /// Copies raw text `[self.i, to)` into the current word.
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
fn skip_expansion(s: &str, i: usize) -> usize {
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

fn skip_backticks(s: &str, i: usize) -> usize {
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

/// Where a commit message comes from.
#[derive(Clone, Debug)]
pub enum Message {
    /// `-m` / `--message` values, in order (git joins them with blank lines).
    Words(Vec<Word>),
    /// The message cannot be read from the script; the reason, for humans.
    Unknown(&'static str),
}

#[derive(Clone, Debug)]
pub struct Commit {
    /// `git -C DIR`.
    pub dir: Option<Word>,
    pub message: Message,
    pub amend: bool,
}

#[derive(Clone, Debug)]
pub struct Push {
    pub dir: Option<Word>,
    /// The remote name or URL, if given.
    pub target: Option<Word>,
    /// `-o ci.skip` / `--push-option=ci.skip`.
    pub ci_skip: bool,
    /// `-o merge_request.create`.
    pub mr_create: bool,
}

/// What a command does, as far as write-backs are concerned.
#[derive(Clone, Debug)]
pub enum Action {
    Assign {
        name: String,
        value: Word,
    },
    Cd(Option<Word>),
    Clone {
        url: Word,
        dir: Option<Word>,
    },
    RemoteUrl {
        name: String,
        url: Word,
    },
    Commit(Commit),
    Push(Push),
    /// `glab mr create`, `gh pr create`, `hub pull-request`.
    ReviewRequest,
    /// A POST to GitLab's Commits API (`/repository/commits`) with curl or glab.
    ApiCommit {
        url: Word,
        message: Message,
    },
}

/// An action and the command it came from.
#[derive(Clone, Debug)]
pub struct Step {
    pub action: Action,
    /// Script range of the command.
    pub start: usize,
    pub end: usize,
}

/// The write-back related actions of a script, in order.
#[must_use]
pub fn actions(script: &str) -> Vec<Step> {
    let mut out = Vec::new();
    for cmd in commands(script) {
        let step = |action| Step {
            action,
            start: cmd.start,
            end: cmd.end,
        };
        let mut w: &[Word] = &cmd.words;
        while let Some(first) = w.first() {
            if matches!(
                first.text.as_str(),
                "if" | "then"
                    | "else"
                    | "elif"
                    | "do"
                    | "while"
                    | "until"
                    | "!"
                    | "{"
                    | "}"
                    | "time"
                    | "exec"
                    | "command"
                    | "sudo"
            ) && !first.quoted
            {
                w = &w[1..];
            } else {
                break;
            }
        }
        // Leading assignments (`A=1 cmd`), or `export A=1`.
        let mut assigns = Vec::new();
        let exported = w.first().is_some_and(|f| {
            matches!(f.text.as_str(), "export" | "local" | "readonly" | "declare")
        });
        if exported {
            w = &w[1..];
        }
        while let Some(first) = w.first() {
            match assignment(first) {
                Some(a) => {
                    assigns.push(a);
                    w = &w[1..];
                }
                None if exported && first.text.starts_with('-') => w = &w[1..],
                None => break,
            }
        }
        if w.is_empty() || exported {
            for (name, value) in assigns {
                out.push(step(Action::Assign { name, value }));
            }
            continue;
        }
        let w: Vec<&Word> = strip_redirections(w);
        let Some(first) = w.first() else { continue };
        let action = match first.text.as_str() {
            "cd" | "pushd" => Some(Action::Cd(w.get(1).map(|x| (*x).clone()))),
            "git" => git(&w[1..]),
            "glab" => glab(&w[1..]),
            "gh" if word_is(&w, 1, "pr") && word_is(&w, 2, "create") => Some(Action::ReviewRequest),
            "hub" if word_is(&w, 1, "pull-request") => Some(Action::ReviewRequest),
            "curl" => curl(&w[1..]),
            _ => None,
        };
        if let Some(a) = action {
            out.push(step(a));
        }
    }
    out
}

fn word_is(w: &[&Word], i: usize, s: &str) -> bool {
    w.get(i).is_some_and(|x| x.text == s)
}

fn assignment(w: &Word) -> Option<(String, Word)> {
    let eq = w.text.find('=')?;
    let name = &w.text[..eq];
    if !is_name(name) || w.literal.get(..eq).is_some_and(|l| l.iter().any(|&x| x)) {
        return None;
    }
    Some((name.to_string(), w.slice(eq + 1..w.text.len())))
}

/// Drops redirections (`> file`, `2>/dev/null`, `2>&1`).
fn strip_redirections(words: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for w in words {
        if skip_next {
            skip_next = false;
            continue;
        }
        let t = w.text.trim_start_matches(|c: char| c.is_ascii_digit());
        if !w.quoted && (t.starts_with('>') || t.starts_with('<')) {
            let op = t.trim_start_matches(['>', '<', '&', '|']);
            if op.is_empty() {
                skip_next = true;
            }
            continue;
        }
        out.push(w);
    }
    out
}

fn git(args: &[&Word]) -> Option<Action> {
    let mut dir = None;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.text.as_str() {
            "-C" => {
                dir = args.get(i + 1).map(|x| (*x).clone());
                i += 2;
            }
            "-c" | "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            t if t.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let sub = args.get(i)?;
    let rest = &args[i + 1..];
    match sub.text.as_str() {
        "commit" => Some(Action::Commit(commit(rest, dir))),
        "push" => Some(Action::Push(push(rest, dir))),
        "clone" => clone(rest),
        "remote" => {
            let verb = rest.first()?;
            let pos: Vec<&&Word> = rest[1..]
                .iter()
                .filter(|w| !w.text.starts_with('-'))
                .collect();
            match verb.text.as_str() {
                "set-url" | "add" if pos.len() >= 2 => Some(Action::RemoteUrl {
                    name: pos[0].text.clone(),
                    url: (*pos[1]).clone(),
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

fn commit(args: &[&Word], dir: Option<Word>) -> Commit {
    let mut msgs: Vec<Word> = Vec::new();
    let mut unknown: Option<&'static str> = None;
    let (mut amend, mut no_edit) = (false, false);
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        match t {
            "--" => break,
            "-m" | "--message" => {
                if let Some(m) = args.get(i) {
                    msgs.push((*m).clone());
                    i += 1;
                }
            }
            "--amend" => amend = true,
            "--no-edit" => no_edit = true,
            "-F" | "--file" => {
                unknown = Some("the message is read from a file (`-F`)");
                i += 1;
            }
            "-C" | "-c" | "--reuse-message" | "--reedit-message" | "--fixup" | "--squash" => {
                unknown = Some("the message is taken from another commit");
                i += 1;
            }
            "-t" | "--template" => {
                unknown = Some("the message comes from a template file");
                i += 1;
            }
            "--author" | "--date" | "--cleanup" | "--trailer" | "-S" | "--gpg-sign" => {}
            _ if t.starts_with("--message=") => {
                msgs.push(a.slice("--message=".len()..a.text.len()));
            }
            _ if t.starts_with("--file=") => {
                unknown = Some("the message is read from a file (`--file`)");
            }
            _ if t.starts_with("--reuse-message=")
                || t.starts_with("--reedit-message=")
                || t.starts_with("--fixup=")
                || t.starts_with("--squash=") =>
            {
                unknown = Some("the message is taken from another commit");
            }
            _ if t.starts_with('-') && !t.starts_with("--") && !a.literal[..1].contains(&true) => {
                // A cluster of short options: `-am`, `-sm msg`, `-m"msg"`.
                for (k, c) in t.char_indices().skip(1) {
                    match c {
                        'm' => {
                            if k + 1 < t.len() {
                                msgs.push(a.slice(k + 1..t.len()));
                            } else if let Some(m) = args.get(i) {
                                msgs.push((*m).clone());
                                i += 1;
                            }
                            break;
                        }
                        _ => {
                            if let Some(reason) = message_elsewhere(c) {
                                unknown = Some(reason);
                                // The option's value is the next word.
                                if k + 1 == t.len() {
                                    i += 1;
                                }
                                break;
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let message = if !msgs.is_empty() {
        Message::Words(msgs)
    } else if let Some(u) = unknown {
        Message::Unknown(u)
    } else if amend && no_edit {
        Message::Unknown("`--amend --no-edit` keeps the previous message")
    } else if amend {
        Message::Unknown("`--amend` keeps or edits the previous message")
    } else {
        Message::Unknown("no message is given on the command line")
    };
    Commit {
        dir,
        message,
        amend,
    }
}

/// Why the message is not on the command line, for a short `git commit` option that takes it
/// from elsewhere (`-F file`, `-C commit`, `-t template`).
fn message_elsewhere(option: char) -> Option<&'static str> {
    match option {
        'F' => Some("the message is read from a file (`-F`)"),
        'C' | 'c' => Some("the message is taken from another commit"),
        't' => Some("the message comes from a template file"),
        _ => None,
    }
}

fn push_option(p: &mut Push, value: &str) {
    let v = value.trim();
    if v == "ci.skip" || v.starts_with("ci.skip=") {
        p.ci_skip = true;
    } else if v == "merge_request.create" || v.starts_with("merge_request.create=") {
        p.mr_create = true;
    }
}

fn push(args: &[&Word], dir: Option<Word>) -> Push {
    let mut p = Push {
        dir,
        target: None,
        ci_skip: false,
        mr_create: false,
    };
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        match t {
            "-o" | "--push-option" => {
                if let Some(v) = args.get(i) {
                    push_option(&mut p, &v.text);
                    i += 1;
                }
            }
            "--repo" => {
                if let Some(v) = args.get(i) {
                    p.target = Some((*v).clone());
                    i += 1;
                }
            }
            "--receive-pack" | "--exec" => i += 1,
            _ if t.starts_with("--push-option=") => {
                push_option(&mut p, &t["--push-option=".len()..]);
            }
            _ if t.starts_with("--repo=") => p.target = Some(a.slice(7..t.len())),
            _ if t.starts_with("-o") && !t.starts_with("--") => push_option(&mut p, &t[2..]),
            _ if t.starts_with('-') => {}
            _ => {
                if p.target.is_none() {
                    p.target = Some((*a).clone());
                }
            }
        }
    }
    p
}

fn clone(args: &[&Word]) -> Option<Action> {
    let mut pos = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        match t {
            "-b" | "--branch" | "--depth" | "-o" | "--origin" | "-c" | "--config"
            | "--reference" | "-j" | "--jobs" | "--template" | "--separate-git-dir" | "-u"
            | "--upload-pack" | "--filter" | "--shallow-since" | "--shallow-exclude" => i += 1,
            "--" => {}
            _ if t.starts_with('-') => {}
            _ => pos.push(*a),
        }
    }
    let url = (*pos.first()?).clone();
    Some(Action::Clone {
        url,
        dir: pos.get(1).map(|d| (*d).clone()),
    })
}

fn glab(args: &[&Word]) -> Option<Action> {
    match args.first()?.text.as_str() {
        "mr" if word_is(args, 1, "create") => Some(Action::ReviewRequest),
        "api" => {
            let path = args.get(1)?;
            if !path.text.contains("repository/commits") {
                return None;
            }
            let mut method_post = false;
            let mut has_fields = false;
            let mut message = None;
            let mut i = 2;
            while let Some(a) = args.get(i) {
                let t = a.text.as_str();
                i += 1;
                match t {
                    "-X" | "--method" => {
                        method_post = args
                            .get(i)
                            .is_some_and(|m| m.text.eq_ignore_ascii_case("post"));
                        i += 1;
                    }
                    "-f" | "-F" | "--field" | "--raw-field" => {
                        has_fields = true;
                        if let Some(v) = args.get(i) {
                            if let Some(rest) = v.text.strip_prefix("commit_message=") {
                                message = Some(if rest.starts_with('@') {
                                    Message::Unknown("the message is read from a file")
                                } else {
                                    Message::Words(vec![
                                        v.slice("commit_message=".len()..v.text.len()),
                                    ])
                                });
                            }
                            i += 1;
                        }
                    }
                    "--input" => {
                        has_fields = true;
                        message = Some(Message::Unknown("the request body is read from a file"));
                        i += 1;
                    }
                    _ => {}
                }
            }
            (method_post || has_fields).then(|| Action::ApiCommit {
                url: (*path).clone(),
                message: message.unwrap_or(Message::Unknown("no `commit_message` field is given")),
            })
        }
        _ => None,
    }
}

fn curl(args: &[&Word]) -> Option<Action> {
    let mut url: Option<Word> = None;
    let mut post = false;
    let mut get = false;
    let mut message = None;
    let mut saw_data = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        let data_opt = matches!(
            t,
            "-d" | "--data"
                | "--data-raw"
                | "--data-binary"
                | "--data-urlencode"
                | "--json"
                | "-F"
                | "--form"
        );
        if data_opt {
            post = true;
            saw_data = true;
            if let Some(v) = args.get(i) {
                i += 1;
                if message.is_none() {
                    message = data_message(v);
                }
            }
            continue;
        }
        match t {
            "-X" | "--request" => {
                if let Some(m) = args.get(i) {
                    post |= m.text.eq_ignore_ascii_case("post");
                    get |= m.text.eq_ignore_ascii_case("get");
                    i += 1;
                }
            }
            "-H" | "--header" | "-o" | "--output" | "-u" | "--user" | "--cacert" | "-A"
            | "--user-agent" | "--retry" | "-w" | "--write-out" | "--max-time" | "-m" => i += 1,
            _ if t.starts_with("--data") && t.contains('=') => {
                post = true;
                saw_data = true;
            }
            _ if t.starts_with('-') => {}
            _ => {
                if t.contains("/repository/commits") {
                    let after = &t[t.find("/repository/commits").unwrap_or(0) + 19..];
                    // `/repository/commits/<sha>/...` reads a commit; only the collection creates.
                    if after.is_empty() || after.starts_with('?') || after.starts_with('"') {
                        url = Some((*a).clone());
                    }
                }
            }
        }
    }
    let url = url?;
    if !post || get {
        return None;
    }
    Some(Action::ApiCommit {
        url,
        message: message.unwrap_or(if saw_data {
            Message::Unknown("the request body is built elsewhere")
        } else {
            Message::Unknown("no `commit_message` is given")
        }),
    })
}

/// The `commit_message` in a curl data argument: a JSON body or a form field.
fn data_message(w: &Word) -> Option<Message> {
    let t = w.text.as_str();
    if t.starts_with('@') {
        return Some(Message::Unknown("the request body is read from a file"));
    }
    if t.starts_with("commit_message=") {
        return Some(Message::Words(vec![
            w.slice("commit_message=".len()..t.len()),
        ]));
    }
    let key = t.find("\"commit_message\"")?;
    let b = t.as_bytes();
    let mut j = key + "\"commit_message\"".len();
    while matches!(b.get(j), Some(b' ' | b'\t' | b'\n')) {
        j += 1;
    }
    if b.get(j) != Some(&b':') {
        return None;
    }
    j += 1;
    while matches!(b.get(j), Some(b' ' | b'\t' | b'\n')) {
        j += 1;
    }
    if b.get(j) != Some(&b'"') {
        return Some(Message::Unknown(
            "the `commit_message` is not a JSON string literal",
        ));
    }
    let start = j + 1;
    let mut k = start;
    while k < b.len() && b[k] != b'"' {
        if b[k] == b'\\' {
            k += 1;
        }
        k += 1;
    }
    let end = k.min(b.len());
    if !t.is_char_boundary(start) || !t.is_char_boundary(end) {
        return None;
    }
    Some(Message::Words(vec![w.slice(start..end)]))
}

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

    /// The message words of a commit.
    fn commit_words(a: &Action) -> &[Word] {
        match a {
            Action::Commit(Commit {
                message: Message::Words(m),
                ..
            }) => m,
            _ => panic!("not a commit with a message: {a:?}"),
        }
    }

    /// The message words of a Commits API call.
    fn api_words(a: &Action) -> &[Word] {
        match a {
            Action::ApiCommit {
                message: Message::Words(m),
                ..
            } => m,
            _ => panic!("not an API commit with a message: {a:?}"),
        }
    }

    #[test]
    fn finds_commits_and_pushes() {
        let s = "git commit -am \"bump [skip ci]\" && git push -o ci.skip origin HEAD:main";
        let a = actions(s);
        assert_eq!(a.len(), 2);
        let m = commit_words(&a[0].action);
        assert_eq!(m[0].text, "bump [skip ci]");
        assert_eq!(m[0].append_at, Some(s.find("]\"").unwrap() + 1));
        let Action::Push(p) = &a[1].action else {
            panic!()
        };
        assert!(p.ci_skip);
        assert_eq!(p.target.as_ref().unwrap().text, "origin");
        let a = actions(
            "git commit --message=\"x\" -m y; git commit -F msg.txt; git commit --amend --no-edit",
        );
        let m = commit_words(&a[0].action);
        assert_eq!((m[0].text.as_str(), m[1].text.as_str()), ("x", "y"));
        assert!(matches!(
            &a[1].action,
            Action::Commit(Commit {
                message: Message::Unknown(_),
                ..
            })
        ));
        assert!(matches!(
            &a[2].action,
            Action::Commit(Commit {
                message: Message::Unknown(_),
                ..
            })
        ));
    }

    #[test]
    fn finds_api_commits() {
        let s = r#"curl --request POST --header "PRIVATE-TOKEN: $T" --data '{"branch": "main", "commit_message": "bump", "actions": []}' "$API/projects/1/repository/commits""#;
        let a = actions(s);
        let m = api_words(&a[0].action);
        assert_eq!(m[0].text, "bump");
        assert_eq!(
            &s[m[0].append_at.unwrap()..m[0].append_at.unwrap() + 1],
            "\""
        );
        let a = actions(
            "glab api projects/:id/repository/commits -X POST -f branch=main -f 'commit_message=bump [skip ci]'",
        );
        assert_eq!(api_words(&a[0].action)[0].text, "bump [skip ci]");
    }

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

    #[test]
    fn never_panics_on_odd_input() {
        for s in [
            "\"",
            "'",
            "$(",
            "${",
            "`",
            "\\",
            "<<",
            "git commit -m",
            "curl -d",
            "é\"é",
            "git -C",
        ] {
            // Every step stays inside the script, on character boundaries.
            for step in actions(s) {
                assert!(
                    step.start <= step.end && step.end <= s.len(),
                    "{s:?}: step {}..{} outside the script",
                    step.start,
                    step.end
                );
                assert!(s.is_char_boundary(step.start) && s.is_char_boundary(step.end));
            }
        }
    }
}
