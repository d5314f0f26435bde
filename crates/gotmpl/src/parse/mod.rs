//! Parser for Go `text/template` (Go 1.24's `text/template/parse`); the lexer is `lex.rs`.

mod lex;

use lex::{Tok, Token, lex};

/// A parse error at a byte offset of the template text.
#[derive(Debug, Clone)]
pub struct ParseError {
    pub offset: usize,
    pub message: String,
}

type PResult<T> = Result<T, ParseError>;

fn perr<T>(offset: usize, message: impl Into<String>) -> PResult<T> {
    Err(ParseError {
        offset,
        message: message.into(),
    })
}

/// An argument or command word.
#[derive(Debug, Clone)]
pub enum Arg {
    Field(Vec<String>),
    Variable(String, Vec<String>),
    Dot,
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    /// A string constant and the byte range of its contents in the template.
    Str(String, usize, usize),
    Ident(String),
    Pipe(Box<Pipe>),
    /// `(pipe).a.b`
    Chain(Box<Arg>, Vec<String>),
}

#[derive(Debug, Clone)]
pub struct Cmd {
    pub pos: usize,
    pub args: Vec<(usize, Arg)>,
}

#[derive(Debug, Clone)]
pub struct Pipe {
    pub decl: Vec<String>,
    pub is_assign: bool,
    pub cmds: Vec<Cmd>,
}

#[derive(Debug, Clone)]
pub enum Node {
    Text(usize, usize),
    /// An action and the byte range of `{{ ... }}`.
    Action(Pipe, usize, usize),
    If(Branch),
    With(Branch),
    Range(Branch),
    Template(usize, String, Option<Pipe>),
    Break,
    Continue,
}

#[derive(Debug, Clone)]
pub struct Branch {
    pub pos: usize,
    pub pipe: Pipe,
    pub list: Vec<Node>,
    pub else_list: Option<Vec<Node>>,
}

#[derive(Debug)]
pub struct Parsed {
    pub root: Vec<Node>,
    pub defines: Vec<(String, Vec<Node>)>,
}

/// How deeply blocks (`if`, `range`, `with`, `block`, each `else if`) and parentheses nest in
/// one template. Go stops parentheses at 10,000 and blocks only at its stack's end; real
/// templates nest a few levels, and each level is a stack frame here and when evaluated.
pub const MAX_PARSE_DEPTH: usize = 1000;

struct Parser<'a> {
    toks: Vec<Token>,
    i: usize,
    funcs: &'a dyn Fn(&str) -> bool,
    /// Blocks and parentheses open at this point.
    depth: usize,
    range_depth: usize,
    defines: Vec<(String, Vec<Node>)>,
    vars: Vec<String>,
}

enum End {
    End(usize),
    Else(usize),
}

/// Parses a template. `funcs` says whether a function name is defined (Go checks it at parse
/// time).
pub fn parse(src: &str, funcs: &dyn Fn(&str) -> bool) -> PResult<Parsed> {
    let toks = lex(src)?;
    let mut p = Parser {
        toks,
        i: 0,
        funcs,
        depth: 0,
        range_depth: 0,
        defines: Vec::new(),
        vars: vec!["$".into()],
    };
    let mut root = Vec::new();
    loop {
        if matches!(p.peek().tok, Tok::Eof) {
            break;
        }
        if matches!(p.peek().tok, Tok::LeftDelim)
            && matches!(p.peek_at(1).tok, Tok::Keyword("define"))
        {
            p.i += 2;
            p.parse_define()?;
            continue;
        }
        match p.text_or_action()? {
            Ok(n) => root.push(n),
            Err(End::End(pos)) => return perr(pos, "unexpected {{end}}"),
            Err(End::Else(pos)) => return perr(pos, "unexpected {{else}}"),
        }
    }
    Ok(Parsed {
        root,
        defines: p.defines,
    })
}

impl Parser<'_> {
    fn peek(&self) -> &Token {
        &self.toks[self.i.min(self.toks.len() - 1)]
    }
    fn peek_at(&self, k: usize) -> &Token {
        &self.toks[(self.i + k).min(self.toks.len() - 1)]
    }
    fn next(&mut self) -> Token {
        let t = self.peek().clone();
        if self.i < self.toks.len() {
            self.i += 1;
        }
        t
    }
    /// Runs `f` one block or parenthesis deeper.
    fn nested<T>(&mut self, pos: usize, f: impl FnOnce(&mut Self) -> PResult<T>) -> PResult<T> {
        if self.depth >= MAX_PARSE_DEPTH {
            return perr(
                pos,
                format!(
                    "max expression depth exceeded: nested deeper than {MAX_PARSE_DEPTH} levels"
                ),
            );
        }
        self.depth += 1;
        let r = crate::budget::with_stack(|| f(self));
        self.depth -= 1;
        r
    }

    fn expect_right(&mut self, ctx: &str) -> PResult<usize> {
        let t = self.next();
        match t.tok {
            Tok::RightDelim => Ok(t.pos),
            _ => perr(t.pos, format!("unexpected {:?} in {ctx}", t.tok)),
        }
    }

    fn parse_define(&mut self) -> PResult<()> {
        let t = self.next();
        let name = match t.tok {
            Tok::Str(s, ..) => s,
            _ => return perr(t.pos, "define clause: name must be a string"),
        };
        self.expect_right("define clause")?;
        let saved = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let (list, end) = self.item_list()?;
        self.vars = saved;
        if let End::Else(pos) = end {
            return perr(pos, "unexpected {{else}} in define");
        }
        self.defines.push((name, list));
        Ok(())
    }

    /// Parses nodes until `{{end}}` or `{{else ...` (the delimiter and keyword are consumed;
    /// for `else`, the rest of the action is left).
    fn item_list(&mut self) -> PResult<(Vec<Node>, End)> {
        let mut list = Vec::new();
        loop {
            if matches!(self.peek().tok, Tok::Eof) {
                return perr(self.peek().pos, "unexpected EOF");
            }
            match self.text_or_action()? {
                Ok(n) => list.push(n),
                Err(e) => return Ok((list, e)),
            }
        }
    }

    fn text_or_action(&mut self) -> PResult<Result<Node, End>> {
        let t = self.next();
        match t.tok {
            Tok::Text(a, b) => Ok(Ok(Node::Text(a, b))),
            Tok::LeftDelim => self.action(t.pos),
            other => perr(t.pos, format!("unexpected {other:?}")),
        }
    }

    fn action(&mut self, start: usize) -> PResult<Result<Node, End>> {
        let t = self.peek().clone();
        if let Tok::Keyword(k) = t.tok {
            self.i += 1;
            return match k {
                "block" => self.nested(t.pos, |p| p.block(t.pos)).map(Ok),
                "break" | "continue" => {
                    if self.range_depth == 0 {
                        return perr(t.pos, format!("{{{{{k}}}}} outside {{{{range}}}}"));
                    }
                    self.expect_right(k)?;
                    Ok(Ok(if k == "break" {
                        Node::Break
                    } else {
                        Node::Continue
                    }))
                }
                "define" => perr(t.pos, "unexpected define"),
                "else" => Ok(Err(End::Else(t.pos))),
                "end" => {
                    self.expect_right("end")?;
                    Ok(Err(End::End(t.pos)))
                }
                "if" => self
                    .nested(t.pos, |p| p.branch("if", t.pos))
                    .map(|b| Ok(Node::If(b))),
                "with" => self
                    .nested(t.pos, |p| p.branch("with", t.pos))
                    .map(|b| Ok(Node::With(b))),
                "range" => self
                    .nested(t.pos, |p| p.branch("range", t.pos))
                    .map(|b| Ok(Node::Range(b))),
                "template" => self.template(t.pos).map(Ok),
                _ => perr(t.pos, "unexpected keyword"),
            };
        }
        let pipe = self.pipeline("command", false)?;
        let end = self.toks[self.i - 1].pos + 2;
        Ok(Ok(Node::Action(pipe, start, end)))
    }

    fn template(&mut self, pos: usize) -> PResult<Node> {
        let t = self.next();
        let name = match t.tok {
            Tok::Str(s, ..) => s,
            _ => return perr(t.pos, "template clause: name must be a string"),
        };
        let pipe = if matches!(self.peek().tok, Tok::RightDelim) {
            self.next();
            None
        } else {
            Some(self.pipeline("template clause", false)?)
        };
        Ok(Node::Template(pos, name, pipe))
    }

    fn block(&mut self, pos: usize) -> PResult<Node> {
        let t = self.next();
        let name = match t.tok {
            Tok::Str(s, ..) => s,
            _ => return perr(t.pos, "block clause: name must be a string"),
        };
        let pipe = self.pipeline("block clause", false)?;
        let saved = std::mem::replace(&mut self.vars, vec!["$".into()]);
        let (list, end) = self.item_list()?;
        self.vars = saved;
        if let End::Else(p) = end {
            return perr(p, "unexpected {{else}} in block");
        }
        self.defines.push((name.clone(), list));
        Ok(Node::Template(pos, name, Some(pipe)))
    }

    fn branch(&mut self, kind: &str, pos: usize) -> PResult<Branch> {
        let nvars = self.vars.len();
        let pipe = self.pipeline(kind, kind == "range")?;
        if kind == "range" {
            self.range_depth += 1;
        }
        let (list, end) = self.item_list()?;
        if kind == "range" {
            self.range_depth -= 1;
        }
        let else_list = match end {
            End::End(_) => None,
            End::Else(epos) => {
                // `{{else if ...}}` / `{{else with ...}}` nest a branch that shares our {{end}}.
                let next = self.peek().clone();
                match next.tok {
                    Tok::Keyword(k)
                        if (k == "if" && kind == "if") || (k == "with" && kind == "with") =>
                    {
                        self.i += 1;
                        let inner = self.nested(next.pos, |p| p.branch(k, next.pos))?;
                        Some(vec![if k == "if" {
                            Node::If(inner)
                        } else {
                            Node::With(inner)
                        }])
                    }
                    _ => {
                        self.expect_right("else")?;
                        let (l, end2) = self.item_list()?;
                        if let End::Else(p) = end2 {
                            return perr(p, "expected end; found {{else}}");
                        }
                        let _ = epos;
                        Some(l)
                    }
                }
            }
        };
        self.vars.truncate(nvars);
        Ok(Branch {
            pos,
            pipe,
            list,
            else_list,
        })
    }

    fn pipeline(&mut self, ctx: &str, allow_two: bool) -> PResult<Pipe> {
        let pos = self.peek().pos;
        let mut decl = Vec::new();
        let mut is_assign = false;
        if let Tok::Variable(v) = &self.peek().tok {
            let v = v.clone();
            match self.peek_at(1).tok {
                Tok::Declare | Tok::Assign => {
                    is_assign = matches!(self.peek_at(1).tok, Tok::Assign);
                    self.i += 2;
                    if is_assign && !self.vars.contains(&v) {
                        return perr(pos, format!("undefined variable \"{v}\""));
                    }
                    decl.push(v);
                }
                Tok::Comma if allow_two => {
                    if let Tok::Variable(v2) = &self.peek_at(2).tok {
                        let v2 = v2.clone();
                        if matches!(self.peek_at(3).tok, Tok::Declare | Tok::Assign) {
                            is_assign = matches!(self.peek_at(3).tok, Tok::Assign);
                            self.i += 4;
                            decl.push(v);
                            decl.push(v2);
                        }
                    }
                }
                _ => {}
            }
        }
        let mut cmds = Vec::new();
        loop {
            let t = self.peek().clone();
            match t.tok {
                Tok::RightDelim | Tok::RParen => {
                    self.next();
                    if cmds.is_empty() {
                        return perr(t.pos, format!("missing value for {ctx}"));
                    }
                    break;
                }
                Tok::Pipe => return perr(t.pos, "missing command before |"),
                _ => {
                    cmds.push(self.command()?);
                }
            }
        }
        if !is_assign {
            for d in &decl {
                self.vars.push(d.clone());
            }
        }
        Ok(Pipe {
            decl,
            is_assign,
            cmds,
        })
    }

    fn command(&mut self) -> PResult<Cmd> {
        let pos = self.peek().pos;
        let mut args = Vec::new();
        loop {
            let t = self.peek().clone();
            match t.tok {
                Tok::RightDelim | Tok::RParen => break,
                Tok::Pipe => {
                    self.next();
                    if matches!(self.peek().tok, Tok::RightDelim | Tok::RParen) {
                        return perr(t.pos, "missing command after |");
                    }
                    break;
                }
                Tok::Eof => return perr(t.pos, "unclosed action"),
                _ => {
                    if !args.is_empty() && !t.after_space && !matches!(t.tok, Tok::LParen) {
                        // Go requires space between arguments.
                    }
                    let a = self.operand()?;
                    args.push((t.pos, a));
                }
            }
        }
        if args.is_empty() {
            return perr(pos, "empty command");
        }
        Ok(Cmd { pos, args })
    }

    fn operand(&mut self) -> PResult<Arg> {
        let t = self.next();
        let term = match t.tok {
            Tok::Ident(name) => {
                if !(self.funcs)(&name) {
                    return perr(t.pos, format!("function \"{name}\" not defined"));
                }
                Arg::Ident(name)
            }
            Tok::Dot => Arg::Dot,
            Tok::Nil => Arg::Nil,
            Tok::Variable(v) => {
                if !self.vars.contains(&v) {
                    return perr(t.pos, format!("undefined variable \"{v}\""));
                }
                Arg::Variable(v, Vec::new())
            }
            Tok::Field(f) => Arg::Field(vec![f]),
            Tok::Bool(b) => Arg::Bool(b),
            Tok::Number(n) => number(&n).ok_or_else(|| ParseError {
                offset: t.pos,
                message: format!("illegal number syntax: {n:?}"),
            })?,
            Tok::Char(c) => Arg::Int(c.chars().next().map_or(0, |c| c as i64)),
            Tok::Str(s, a, b) => Arg::Str(s, a, b),
            Tok::LParen => {
                let p = self.nested(t.pos, |p| p.pipeline("parenthesized pipeline", false))?;
                Arg::Pipe(Box::new(p))
            }
            other => return perr(t.pos, format!("unexpected {other:?} in operand")),
        };
        // A chain of fields written without spaces: `.a.b`, `$x.a`, `(...).a`.
        let mut chain = Vec::new();
        while let Tok::Field(f) = &self.peek().tok {
            if self.peek().after_space {
                break;
            }
            chain.push(f.clone());
            self.i += 1;
        }
        if chain.is_empty() {
            return Ok(term);
        }
        Ok(match term {
            Arg::Field(mut f) => {
                f.extend(chain);
                Arg::Field(f)
            }
            Arg::Variable(v, mut f) => {
                f.extend(chain);
                Arg::Variable(v, f)
            }
            Arg::Bool(_) | Arg::Str(..) | Arg::Int(_) | Arg::Float(_) | Arg::Nil | Arg::Dot => {
                return perr(t.pos, "unexpected . after term");
            }
            other => Arg::Chain(Box::new(other), chain),
        })
    }
}

fn number(text: &str) -> Option<Arg> {
    let clean: String = text.chars().filter(|c| *c != '_').collect();
    let (neg, body) = match clean.strip_prefix('-') {
        Some(b) => (true, b.to_string()),
        None => (false, clean.trim_start_matches('+').to_string()),
    };
    let lower = body.to_ascii_lowercase();
    let int = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()
    } else if let Some(bn) = lower.strip_prefix("0b") {
        i64::from_str_radix(bn, 2).ok()
    } else if lower.len() > 1 && lower.starts_with('0') && lower.bytes().all(|c| c.is_ascii_digit())
    {
        i64::from_str_radix(&lower[1..], 8).ok()
    } else if lower.bytes().all(|c| c.is_ascii_digit()) {
        lower.parse::<i64>().ok()
    } else {
        None
    };
    if let Some(i) = int {
        return Some(Arg::Int(if neg { -i } else { i }));
    }
    if lower.starts_with("0x") || lower.ends_with('i') {
        return None;
    }
    let f: f64 = lower.parse().ok()?;
    // Go: a float constant with an integral value still is an int when written without
    // '.', 'e' or 'p' — handled above; here the text had them.
    Some(Arg::Float(if neg { -f } else { f }))
}

/// Positions of line starts, for error messages.
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let before = &src[..offset.min(src.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.len() - before.rfind('\n').map_or(0, |i| i + 1);
    (line, col)
}
