//! The lexer of Go `text/template` (Go 1.24's `text/template/parse/lex.go`).

use super::{PResult, perr};

#[derive(Debug, Clone, PartialEq)]
pub(super) enum Tok {
    Text(usize, usize), // byte range of (trimmed) text
    LeftDelim,
    RightDelim,
    Field(String), // without the dot
    Variable(String),
    Dot,
    Ident(String),
    Keyword(&'static str),
    Bool(bool),
    Nil,
    Number(String),
    Str(String, usize, usize), // value and byte range of the contents
    Char(String),
    LParen,
    RParen,
    Pipe,
    Declare,
    Assign,
    Comma,
    Eof,
}

#[derive(Debug, Clone)]
pub(super) struct Token {
    pub(super) tok: Tok,
    pub(super) pos: usize,
    /// Whether the token directly follows whitespace (fields chain only without it).
    pub(super) after_space: bool,
}

const KEYWORDS: &[&str] = &[
    "block", "break", "continue", "define", "else", "end", "if", "range", "template", "with",
];

fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\r' | b'\n')
}

fn is_alnum(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

pub(super) fn lex(src: &str) -> PResult<Vec<Token>> {
    let b = src.as_bytes();
    let mut out = Vec::new();
    let mut pos = 0;
    let mut trim_next = false;
    loop {
        // Text up to the next "{{".
        let start = pos;
        let next = src[pos..].find("{{").map(|i| pos + i);
        let text_end = next.unwrap_or(src.len());
        let mut ts = start;
        let mut te = text_end;
        if trim_next {
            while ts < te && is_space(b[ts]) {
                ts += 1;
            }
        }
        let Some(ld) = next else {
            if ts < te {
                out.push(Token {
                    tok: Tok::Text(ts, te),
                    pos: ts,
                    after_space: false,
                });
            }
            out.push(Token {
                tok: Tok::Eof,
                pos: src.len(),
                after_space: false,
            });
            return Ok(out);
        };
        let mut p = ld + 2;
        let left_trim = b.len() >= p + 2 && b[p] == b'-' && is_space(b[p + 1]);
        if left_trim {
            while te > ts && is_space(b[te - 1]) {
                te -= 1;
            }
            p += 2;
        }
        if ts < te {
            out.push(Token {
                tok: Tok::Text(ts, te),
                pos: ts,
                after_space: false,
            });
        }
        // Comment: "/*" right after the delimiter (and trim marker).
        let mut q = p;
        while left_trim && q < b.len() && is_space(b[q]) {
            q += 1;
        }
        if src[q..].starts_with("/*") {
            let Some(close) = src[q + 2..].find("*/") else {
                return perr(ld, "unclosed comment");
            };
            let mut r = q + 2 + close + 2;
            let mut rt = false;
            if b.len() >= r + 2 && is_space(b[r]) && b[r + 1] == b'-' {
                // " -}}"
                let mut k = r;
                while k < b.len() && is_space(b[k]) {
                    k += 1;
                }
                if src[k..].starts_with("-}}") {
                    rt = true;
                    r = k + 1;
                }
            }
            if !src[r..].starts_with("}}") {
                return perr(r, "comment ends before closing delimiter");
            }
            pos = r + 2;
            trim_next = rt;
            continue;
        }
        out.push(Token {
            tok: Tok::LeftDelim,
            pos: ld,
            after_space: false,
        });
        pos = p;
        // Inside the action.
        let mut paren = 0i32;
        loop {
            let mut after_space = false;
            // Right delimiter with trim marker: " -}}" (any whitespace before the dash).
            if pos < b.len() && is_space(b[pos]) {
                let mut k = pos;
                while k < b.len() && is_space(b[k]) {
                    k += 1;
                }
                if src[k..].starts_with("-}}") {
                    out.push(Token {
                        tok: Tok::RightDelim,
                        pos: k,
                        after_space: true,
                    });
                    pos = k + 3;
                    trim_next = true;
                    break;
                }
                pos = k;
                after_space = true;
            }
            if pos >= b.len() {
                return perr(pos, "unclosed action");
            }
            if src[pos..].starts_with("}}") {
                if paren > 0 {
                    return perr(pos, "unclosed left paren");
                }
                out.push(Token {
                    tok: Tok::RightDelim,
                    pos,
                    after_space,
                });
                pos += 2;
                trim_next = false;
                break;
            }
            let c = src[pos..].chars().next().unwrap_or('\0');
            let at = pos;
            let tok = match c {
                '"' => {
                    let (v, end) = lex_quote(src, pos)?;
                    pos = end;
                    Tok::Str(v, at + 1, end - 1)
                }
                '`' => {
                    let Some(e) = src[pos + 1..].find('`') else {
                        return perr(pos, "unterminated raw quoted string");
                    };
                    let v = src[pos + 1..pos + 1 + e].to_string();
                    pos = pos + 2 + e;
                    Tok::Str(v, at + 1, pos - 1)
                }
                '\'' => {
                    let (v, end) = lex_char(src, pos)?;
                    pos = end;
                    Tok::Char(v)
                }
                '$' => {
                    let mut e = pos + 1;
                    for ch in src[e..].chars() {
                        if is_alnum(ch) {
                            e += ch.len_utf8();
                        } else {
                            break;
                        }
                    }
                    let v = src[pos..e].to_string();
                    pos = e;
                    Tok::Variable(v)
                }
                '.' => {
                    let nc = b.get(pos + 1).copied().unwrap_or(0);
                    if nc.is_ascii_digit() {
                        let e = scan_number(src, pos);
                        let v = src[pos..e].to_string();
                        pos = e;
                        Tok::Number(v)
                    } else {
                        let mut e = pos + 1;
                        for ch in src[e..].chars() {
                            if is_alnum(ch) {
                                e += ch.len_utf8();
                            } else {
                                break;
                            }
                        }
                        if e == pos + 1 {
                            pos = e;
                            Tok::Dot
                        } else {
                            let v = src[pos + 1..e].to_string();
                            pos = e;
                            Tok::Field(v)
                        }
                    }
                }
                '(' => {
                    pos += 1;
                    paren += 1;
                    Tok::LParen
                }
                ')' => {
                    pos += 1;
                    paren -= 1;
                    if paren < 0 {
                        return perr(at, "unexpected right paren");
                    }
                    Tok::RParen
                }
                '|' => {
                    pos += 1;
                    Tok::Pipe
                }
                ',' => {
                    pos += 1;
                    Tok::Comma
                }
                ':' => {
                    if b.get(pos + 1) == Some(&b'=') {
                        pos += 2;
                        Tok::Declare
                    } else {
                        return perr(pos, "expected :=");
                    }
                }
                '=' => {
                    pos += 1;
                    Tok::Assign
                }
                '+' | '-' | '0'..='9' => {
                    let e = scan_number(src, pos);
                    if e == pos || (e == pos + 1 && (c == '+' || c == '-')) {
                        let bad: String = src[pos..].chars().take(2).collect();
                        return perr(pos, format!("bad number syntax: {bad:?}"));
                    }
                    let v = src[pos..e].to_string();
                    pos = e;
                    Tok::Number(v)
                }
                c if is_alnum(c) => {
                    let mut e = pos;
                    for ch in src[e..].chars() {
                        if is_alnum(ch) {
                            e += ch.len_utf8();
                        } else {
                            break;
                        }
                    }
                    let w = &src[pos..e];
                    pos = e;
                    match w {
                        "true" => Tok::Bool(true),
                        "false" => Tok::Bool(false),
                        "nil" => Tok::Nil,
                        _ => match KEYWORDS.iter().find(|k| **k == w) {
                            Some(k) => Tok::Keyword(k),
                            None => Tok::Ident(w.to_string()),
                        },
                    }
                }
                other => return perr(pos, format!("unrecognized character in action: {other:?}")),
            };
            out.push(Token {
                tok,
                pos: at,
                after_space,
            });
        }
    }
}

fn scan_number(src: &str, start: usize) -> usize {
    let b = src.as_bytes();
    let mut p = start;
    if p < b.len() && (b[p] == b'+' || b[p] == b'-') {
        p += 1;
    }
    let mut digits: &[u8] = b"0123456789_";
    if p + 1 < b.len() && b[p] == b'0' {
        match b[p + 1] {
            b'x' | b'X' => {
                p += 2;
                digits = b"0123456789abcdefABCDEF_";
            }
            b'o' | b'O' => {
                p += 2;
                digits = b"01234567_";
            }
            b'b' | b'B' => {
                p += 2;
                digits = b"01_";
            }
            _ => {}
        }
    }
    while p < b.len() && digits.contains(&b[p]) {
        p += 1;
    }
    if p < b.len() && b[p] == b'.' {
        p += 1;
        while p < b.len() && digits.contains(&b[p]) {
            p += 1;
        }
    }
    if digits.len() == 11 && p < b.len() && (b[p] == b'e' || b[p] == b'E') {
        let mut q = p + 1;
        if q < b.len() && (b[q] == b'+' || b[q] == b'-') {
            q += 1;
        }
        if q < b.len() && b[q].is_ascii_digit() {
            p = q;
            while p < b.len() && b[p].is_ascii_digit() {
                p += 1;
            }
        }
    }
    if p < b.len() && b[p] == b'i' {
        p += 1;
    }
    p
}

fn lex_quote(src: &str, start: usize) -> PResult<(String, usize)> {
    let mut out = String::new();
    let mut chars = src[start + 1..].char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((out, start + 1 + i + 1)),
            '\n' => return perr(start, "unterminated quoted string"),
            '\\' => {
                let Some((_, e)) = chars.next() else {
                    break;
                };
                match e {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'a' => out.push('\x07'),
                    'b' => out.push('\x08'),
                    'f' => out.push('\x0c'),
                    'v' => out.push('\x0b'),
                    '\\' => out.push('\\'),
                    '"' => out.push('"'),
                    '\'' => return perr(start, "invalid syntax in quoted string"),
                    'x' | 'u' | 'U' => {
                        let n = match e {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let mut v = 0u32;
                        for _ in 0..n {
                            let Some((_, h)) = chars.next() else {
                                return perr(start, "invalid syntax in quoted string");
                            };
                            let Some(d) = h.to_digit(16) else {
                                return perr(start, "invalid syntax in quoted string");
                            };
                            v = v * 16 + d;
                        }
                        match char::from_u32(v) {
                            Some(ch) => out.push(ch),
                            None => return perr(start, "invalid syntax in quoted string"),
                        }
                    }
                    '0'..='7' => {
                        let mut v = e.to_digit(8).unwrap_or(0);
                        for _ in 0..2 {
                            let Some((_, h)) = chars.next() else {
                                return perr(start, "invalid syntax in quoted string");
                            };
                            let Some(d) = h.to_digit(8) else {
                                return perr(start, "invalid syntax in quoted string");
                            };
                            v = v * 8 + d;
                        }
                        out.push(char::from_u32(v).unwrap_or('\u{fffd}'));
                    }
                    _ => return perr(start, "invalid syntax in quoted string"),
                }
            }
            c => out.push(c),
        }
    }
    perr(start, "unterminated quoted string")
}

fn lex_char(src: &str, start: usize) -> PResult<(String, usize)> {
    let rest = &src[start + 1..];
    let Some(end) = rest.find('\'') else {
        return perr(start, "unterminated character constant");
    };
    let body = &rest[..end];
    let c = if let Some(esc) = body.strip_prefix('\\') {
        match esc {
            "n" => '\n',
            "t" => '\t',
            "\\" => '\\',
            "'" => '\'',
            "r" => '\r',
            _ => return perr(start, "unsupported character escape"),
        }
    } else {
        let mut it = body.chars();
        match (it.next(), it.next()) {
            (Some(c), None) => c,
            _ => return perr(start, "malformed character constant"),
        }
    };
    Ok((c.to_string(), start + 1 + end + 1))
}

// ---------------------------------------------------------------------------------------------
