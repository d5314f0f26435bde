//! Evaluation of parsed templates (Go 1.24's `text/template/exec.go`), with provenance.

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use crate::budget::{Budget, Stop, Walk, with_stack};
use crate::funcs::{self, FnError, Func};
use crate::parse::{Arg, Branch, Cmd, Node, Pipe};
use crate::text::{Source, Text, TextBuf};
use crate::value::Value;
use crate::{Error, ErrorKind, Limits, MissingKey, Templates, Tree};

/// Control flow out of a node: `{{break}}`, `{{continue}}` or an error.
pub(crate) enum Flow {
    Break,
    Continue,
    Err(Box<Error>),
}

type R<T> = Result<T, Flow>;

pub(crate) struct Exec<'a> {
    pub set: &'a Templates,
    /// Templates defined by `tpl` strings during this run.
    pub extra: HashMap<String, Rc<Tree>>,
    pub vars: Vec<(String, Value)>,
    pub limits: Limits,
    pub steps: u64,
    pub depth: usize,
    /// Blocks, parenthesised pipelines and template calls being evaluated, one in another.
    pub nesting: usize,
    pub produced: usize,
    /// What functions build.
    pub built: Budget,
    /// The tree being executed (for locations and literal provenance).
    pub tree: Rc<Tree>,
}

/// How deeply evaluation nests blocks, parenthesised pipelines and template calls, counted
/// over every template it enters: each level is a few stack frames (on the heap past the
/// thread's stack, see [`with_stack`]).
pub(crate) const MAX_NESTING: usize = 10_000;

impl Exec<'_> {
    pub fn err(&self, pos: usize, kind: ErrorKind, message: impl Into<String>) -> Flow {
        Flow::Err(Box::new(self.error(pos, kind, message)))
    }

    pub fn error(&self, pos: usize, kind: ErrorKind, message: impl Into<String>) -> Error {
        Error::new(kind, &self.tree, pos, message.into())
    }

    fn step(&mut self, pos: usize) -> R<()> {
        self.steps += 1;
        if self.steps > self.limits.steps {
            return Err(self.err(
                pos,
                ErrorKind::Budget,
                format!("evaluation exceeded {} steps", self.limits.steps),
            ));
        }
        Ok(())
    }

    fn emit(&mut self, out: &mut TextBuf, pos: usize, f: impl FnOnce(&mut TextBuf)) -> R<()> {
        let before = out.len();
        f(out);
        self.produced += out.len() - before;
        if self.produced > self.limits.output_bytes {
            return Err(self.err(
                pos,
                ErrorKind::Budget,
                format!("output exceeded {} bytes", self.limits.output_bytes),
            ));
        }
        Ok(())
    }

    /// Runs `f` one nesting level deeper.
    fn nested<T>(&mut self, pos: usize, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if self.nesting >= MAX_NESTING {
            return Err(self.err(
                pos,
                ErrorKind::Budget,
                format!("evaluation nested deeper than {MAX_NESTING} levels"),
            ));
        }
        self.nesting += 1;
        let r = with_stack(|| f(self));
        self.nesting -= 1;
        r
    }

    /// A stop of a function's walk, as this action's error.
    fn stopped(&self, pos: usize, stop: Stop) -> Flow {
        match stop {
            Stop::Value(m) => self.err(pos, ErrorKind::Exec, m),
            Stop::Budget(m) => self.err(pos, ErrorKind::Budget, m),
        }
    }

    /// The marker of [`MissingKey::Unknown`], when `v` holds it (a string that contains it).
    fn unknown_in(&self, v: &Value) -> Option<&Arc<str>> {
        match (&self.set.missing_key, v) {
            (MissingKey::Unknown(marker), Value::Str(t)) if t.as_str().contains(&**marker) => {
                Some(marker)
            }
            _ => None,
        }
    }

    /// What a lookup of the key `name` that a map does not have gives.
    fn missing_key(&self, pos: usize, name: &str) -> R<Value> {
        match &self.set.missing_key {
            MissingKey::Nil => Ok(Value::Nil),
            MissingKey::Error => Err(self.err(
                pos,
                ErrorKind::Exec,
                format!("map has no entry for key {name:?}"),
            )),
            MissingKey::Unknown(marker) => Ok(Value::str(marker)),
        }
    }

    /// An `if`, `with` or `range` that an unknown value decides: the marker stands for the
    /// whole block.
    fn unknown_block(&mut self, pos: usize, v: &Value, out: &mut TextBuf) -> Option<R<()>> {
        let marker = self.unknown_in(v)?.clone();
        let src = self.literal_source(pos, pos);
        Some(self.emit(out, pos, |o| o.push_source(&marker, src)))
    }

    fn literal_source(&self, start: usize, end: usize) -> Source {
        match self.tree.value_origin {
            Some(o) => Source::Value(o),
            None => Source::Template {
                name: self.tree.file.clone(),
                range: start..end,
            },
        }
    }

    pub fn walk_list(&mut self, dot: &Value, list: &[Node], out: &mut TextBuf) -> R<()> {
        for n in list {
            self.walk(dot, n, out)?;
        }
        Ok(())
    }

    fn walk(&mut self, dot: &Value, node: &Node, out: &mut TextBuf) -> R<()> {
        match node {
            Node::Text(a, b) => {
                self.step(*a)?;
                let text = self.tree.src[*a..*b].to_string();
                let src = self.literal_source(*a, *b);
                self.emit(out, *a, |o| o.push_source(&text, src))
            }
            Node::Action(pipe, start, end) => {
                self.step(*start)?;
                let v = self.eval_pipe(dot, pipe)?;
                if pipe.decl.is_empty() {
                    let fallback = self.literal_source(*start, *end);
                    let left = self.limits.output_bytes.saturating_sub(self.produced);
                    let text = go_text(&v, left).map_err(|stop| self.stopped(*start, stop))?;
                    self.emit(out, *start, |o| print_value(o, &v, text, &fallback))?;
                }
                Ok(())
            }
            Node::If(b) => self.nested(b.pos, |me| me.walk_if(dot, b, out, false)),
            Node::With(b) => self.nested(b.pos, |me| me.walk_if(dot, b, out, true)),
            Node::Range(b) => self.nested(b.pos, |me| me.walk_range(dot, b, out)),
            Node::Template(pos, name, pipe) => {
                self.step(*pos)?;
                let new_dot = match pipe {
                    Some(p) => self.eval_pipe(dot, p)?,
                    None => Value::Nil,
                };
                self.nested(*pos, |me| me.call_template(*pos, name, new_dot, out))
            }
            Node::Break => Err(Flow::Break),
            Node::Continue => Err(Flow::Continue),
        }
    }

    fn lookup_tree(&self, name: &str) -> Option<Rc<Tree>> {
        self.extra
            .get(name)
            .cloned()
            .or_else(|| self.set.trees.get(name).cloned())
    }

    pub fn call_template(
        &mut self,
        pos: usize,
        name: &str,
        dot: Value,
        out: &mut TextBuf,
    ) -> R<()> {
        let Some(tree) = self.lookup_tree(name) else {
            return Err(self.err(pos, ErrorKind::Exec, format!("no such template \"{name}\"")));
        };
        if self.depth >= self.limits.depth {
            return Err(self.err(
                pos,
                ErrorKind::Budget,
                format!("templates nested deeper than {} levels", self.limits.depth),
            ));
        }
        self.depth += 1;
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$".into(), dot.clone())]);
        let saved_tree = std::mem::replace(&mut self.tree, tree.clone());
        let r = self.walk_list(&dot, &tree.nodes, out);
        self.tree = saved_tree;
        self.vars = saved_vars;
        self.depth -= 1;
        match r {
            Err(Flow::Break | Flow::Continue) => Ok(()),
            other => other,
        }
    }

    /// Renders a named template into a new string (Helm's `include`).
    pub fn include(&mut self, pos: usize, name: &str, dot: Value) -> R<Value> {
        let mut buf = TextBuf::default();
        self.nested(pos, |me| me.call_template(pos, name, dot, &mut buf))?;
        Ok(Value::Str(buf.finish()))
    }

    /// Helm's `tpl`: parses `text` as a template and renders it with `dot`.
    pub fn tpl(&mut self, pos: usize, text: &Text, dot: Value) -> R<Value> {
        // Parsing costs what the text holds, each time.
        self.built
            .charge(text.as_str().len())
            .map_err(|stop| self.stopped(pos, stop))?;
        self.nested(pos, |me| me.tpl_here(pos, text, dot))
    }

    fn tpl_here(&mut self, pos: usize, text: &Text, dot: Value) -> R<Value> {
        let origin = match text.segments() {
            [(r, Source::Value(o))] if r.start == 0 && r.end == text.as_str().len() => Some(*o),
            _ => None,
        };
        let funcs = self.set.funcs;
        let parsed = crate::parse::parse(text.as_str(), &|f| funcs.is_defined(f)).map_err(|e| {
            self.err(
                pos,
                ErrorKind::Exec,
                format!(
                    "error calling tpl: cannot parse template {:?}: {}",
                    text.as_str(),
                    e.message
                ),
            )
        })?;
        let file: Arc<str> = Arc::from(format!("{}#tpl", self.tree.file));
        let src: Arc<str> = Arc::from(text.as_str());
        for (name, nodes) in parsed.defines {
            let t = Tree {
                file: file.clone(),
                src: src.clone(),
                nodes: Arc::new(nodes),
                value_origin: origin,
            };
            self.extra.insert(name, Rc::new(t));
        }
        let tree = Rc::new(Tree {
            file,
            src,
            nodes: Arc::new(parsed.root),
            value_origin: origin,
        });
        if self.depth >= self.limits.depth {
            return Err(self.err(pos, ErrorKind::Budget, "tpl nested too deeply"));
        }
        self.depth += 1;
        let saved_vars = std::mem::replace(&mut self.vars, vec![("$".into(), dot.clone())]);
        let saved_tree = std::mem::replace(&mut self.tree, tree.clone());
        let mut buf = TextBuf::default();
        let r = self.walk_list(&dot, &tree.nodes, &mut buf);
        self.tree = saved_tree;
        self.vars = saved_vars;
        self.depth -= 1;
        r?;
        Ok(Value::Str(buf.finish()))
    }

    fn walk_if(&mut self, dot: &Value, b: &Branch, out: &mut TextBuf, with: bool) -> R<()> {
        self.step(b.pos)?;
        let mark = self.vars.len();
        let v = self.eval_pipe(dot, &b.pipe)?;
        if let Some(r) = self.unknown_block(b.pos, &v, out) {
            self.vars.truncate(mark);
            return r;
        }
        let r = if v.truthy() {
            if with {
                self.walk_list(&v, &b.list, out)
            } else {
                self.walk_list(dot, &b.list, out)
            }
        } else if let Some(e) = &b.else_list {
            self.walk_list(dot, e, out)
        } else {
            Ok(())
        };
        self.vars.truncate(mark);
        r
    }

    fn walk_range(&mut self, dot: &Value, b: &Branch, out: &mut TextBuf) -> R<()> {
        self.step(b.pos)?;
        let mark = self.vars.len();
        // The pipeline's variables are declared by the loop, not by evaluating it.
        let mut pipe = b.pipe.clone();
        let decl = std::mem::take(&mut pipe.decl);
        let v = self.eval_pipe(dot, &pipe)?;
        if let Some(r) = self.unknown_block(b.pos, &v, out) {
            self.vars.truncate(mark);
            return r;
        }
        // A map is read before the loop (its body may change it); a list and an integer are
        // read item by item, so `range 1000000000` costs steps, not memory.
        let items: Items = match &v {
            Value::List(l) => Items::List(l.clone()),
            Value::Map(m) => Items::Pairs(
                m.borrow()
                    .iter()
                    .map(|(k, x)| (Value::str(k), x.clone()))
                    .collect(),
            ),
            Value::Int(n, _) => {
                if decl.len() > 1 {
                    return Err(self.err(
                        b.pos,
                        ErrorKind::Exec,
                        format!("can't use {n} to iterate over more than one variable"),
                    ));
                }
                Items::Count(*n)
            }
            Value::Nil => Items::Pairs(Vec::new()),
            other => {
                return Err(self.err(
                    b.pos,
                    ErrorKind::Exec,
                    format!("range can't iterate over {}", other.to_go_string()),
                ));
            }
        };
        if items.is_empty() {
            // Go binds the declared variables to the collection itself before iterating, so
            // `{{else}}` sees them with that value (and `=` leaves it assigned).
            for name in &decl {
                if b.pipe.is_assign {
                    self.set_var(name, v.clone());
                } else {
                    self.vars.push((name.clone(), v.clone()));
                }
            }
            let r = match &b.else_list {
                // Go's `range` recovers `{{break}}` even in its `{{else}}` (the parser lets an
                // enclosing range's `break` be there): it ends the else list, no more.
                Some(e) => match self.walk_list(dot, e, out) {
                    Err(Flow::Break) => Ok(()),
                    r => r,
                },
                None => Ok(()),
            };
            self.vars.truncate(mark);
            return r;
        }
        for i in 0..items.len() {
            let (key, elem) = items.get(i);
            self.step(b.pos)?;
            let inner = self.vars.len();
            if b.pipe.is_assign {
                // `range $i, $v = ...` assigns existing variables.
                match decl.as_slice() {
                    [v] => self.set_var(v, elem.clone()),
                    [k, v] => {
                        self.set_var(k, key.clone());
                        self.set_var(v, elem.clone());
                    }
                    _ => {}
                }
            } else {
                match decl.as_slice() {
                    [v] => self.vars.push((v.clone(), elem.clone())),
                    [k, v] => {
                        self.vars.push((k.clone(), key.clone()));
                        self.vars.push((v.clone(), elem.clone()));
                    }
                    _ => {}
                }
            }
            let r = self.walk_list(&elem, &b.list, out);
            self.vars.truncate(inner);
            match r {
                Ok(()) | Err(Flow::Continue) => {}
                Err(Flow::Break) => break,
                Err(e) => {
                    self.vars.truncate(mark);
                    return Err(e);
                }
            }
        }
        self.vars.truncate(mark);
        Ok(())
    }

    fn set_var(&mut self, name: &str, v: Value) {
        if let Some(slot) = self.vars.iter_mut().rev().find(|(n, _)| n == name) {
            slot.1 = v;
        }
    }

    fn var(&self, pos: usize, name: &str) -> R<Value> {
        match self.vars.iter().rev().find(|(n, _)| n == name) {
            Some((_, v)) => Ok(v.clone()),
            None => Err(self.err(pos, ErrorKind::Exec, format!("undefined variable: {name}"))),
        }
    }

    pub fn eval_pipe(&mut self, dot: &Value, pipe: &Pipe) -> R<Value> {
        let mut val: Option<Value> = None;
        for cmd in &pipe.cmds {
            val = Some(self.eval_cmd(dot, cmd, val)?);
        }
        let v = val.unwrap_or(Value::Nil);
        for name in &pipe.decl {
            if pipe.is_assign {
                self.set_var(name, v.clone());
            } else {
                self.vars.push((name.clone(), v.clone()));
            }
        }
        Ok(v)
    }

    fn eval_cmd(&mut self, dot: &Value, cmd: &Cmd, last: Option<Value>) -> R<Value> {
        self.step(cmd.pos)?;
        let (pos, first) = &cmd.args[0];
        let rest = &cmd.args[1..];
        match first {
            Arg::Field(names) => self.eval_fields(*pos, dot, dot.clone(), names, rest, last),
            Arg::Chain(term, names) => {
                let recv = self.eval_arg(dot, *pos, term)?;
                self.eval_fields(*pos, dot, recv, names, rest, last)
            }
            Arg::Variable(name, names) => {
                let v = self.var(*pos, name)?;
                if names.is_empty() {
                    self.not_a_function(*pos, rest, &last)?;
                    return Ok(v);
                }
                self.eval_fields(*pos, dot, v, names, rest, last)
            }
            Arg::Ident(name) => self.call_function(dot, *pos, name, rest, last),
            Arg::Pipe(p) => {
                self.not_a_function(*pos, rest, &last)?;
                self.nested(*pos, |me| me.eval_pipe(dot, p))
            }
            other => {
                self.not_a_function(*pos, rest, &last)?;
                self.eval_arg(dot, *pos, other)
            }
        }
    }

    fn not_a_function(&self, pos: usize, rest: &[(usize, Arg)], last: &Option<Value>) -> R<()> {
        if !rest.is_empty() || last.is_some() {
            return Err(self.err(pos, ErrorKind::Exec, "can't give argument to non-function"));
        }
        Ok(())
    }

    fn eval_fields(
        &mut self,
        pos: usize,
        dot: &Value,
        mut recv: Value,
        names: &[String],
        rest: &[(usize, Arg)],
        last: Option<Value>,
    ) -> R<Value> {
        let n = names.len();
        for (i, name) in names.iter().enumerate() {
            let is_last = i + 1 == n;
            let args: Vec<Value> = if is_last {
                let mut a = Vec::new();
                for (p, arg) in rest {
                    a.push(self.eval_arg(dot, *p, arg)?);
                }
                if let Some(l) = &last {
                    a.push(l.clone());
                }
                a
            } else {
                Vec::new()
            };
            let has_args = is_last && (!rest.is_empty() || last.is_some());
            recv = self.field(pos, &recv, name, &args, has_args)?;
        }
        Ok(recv)
    }

    fn field(
        &mut self,
        pos: usize,
        recv: &Value,
        name: &str,
        args: &[Value],
        has_args: bool,
    ) -> R<Value> {
        match recv {
            Value::Map(m) => {
                if has_args {
                    return Err(self.err(
                        pos,
                        ErrorKind::Exec,
                        format!("{name} is not a method but has arguments"),
                    ));
                }
                let found = m.borrow().get(name).cloned();
                match found {
                    Some(v) => Ok(v),
                    None => self.missing_key(pos, name),
                }
            }
            // A field of an unknown value is unknown.
            Value::Str(_) if self.unknown_in(recv).is_some() => Ok(recv.clone()),
            Value::Object(o) => match o.call(name, args) {
                // A host object's method builds its result (`.Files.Get` copies a file).
                Some(Ok(v)) => {
                    let size = match &v {
                        Value::Str(t) => t.as_str().len(),
                        Value::List(l) => l.len() * crate::budget::VALUE_BYTES,
                        _ => 0,
                    };
                    self.built
                        .charge(size)
                        .map_err(|stop| self.stopped(pos, stop))?;
                    Ok(v)
                }
                Some(Err(e)) => {
                    Err(self.err(pos, ErrorKind::Exec, format!("error calling {name}: {e}")))
                }
                None => Err(self.err(
                    pos,
                    ErrorKind::Exec,
                    format!("can't evaluate field {name} in type {}", o.type_name()),
                )),
            },
            Value::Nil => Err(self.err(
                pos,
                ErrorKind::Exec,
                format!("nil pointer evaluating interface {{}}.{name}"),
            )),
            other => Err(self.err(
                pos,
                ErrorKind::Exec,
                format!("can't evaluate field {name} in type {}", other.type_name()),
            )),
        }
    }

    fn eval_arg(&mut self, dot: &Value, pos: usize, arg: &Arg) -> R<Value> {
        Ok(match arg {
            Arg::Dot => dot.clone(),
            Arg::Nil => Value::Nil,
            Arg::Bool(b) => Value::Bool(*b, None),
            Arg::Int(i) => Value::Int(*i, None),
            Arg::Float(f) => Value::Float(*f, None),
            Arg::Str(s, a, b) => {
                if self.tree.src.get(*a..*b) == Some(s.as_str()) && self.tree.value_origin.is_none()
                {
                    Value::Str(Text::with_source(
                        s,
                        Source::Template {
                            name: self.tree.file.clone(),
                            range: *a..*b,
                        },
                    ))
                } else {
                    Value::str(s)
                }
            }
            Arg::Field(names) => self.eval_fields(pos, dot, dot.clone(), names, &[], None)?,
            Arg::Variable(name, names) => {
                let v = self.var(pos, name)?;
                if names.is_empty() {
                    v
                } else {
                    self.eval_fields(pos, dot, v, names, &[], None)?
                }
            }
            Arg::Chain(term, names) => {
                let recv = self.nested(pos, |me| me.eval_arg(dot, pos, term))?;
                self.eval_fields(pos, dot, recv, names, &[], None)?
            }
            Arg::Pipe(p) => self.nested(pos, |me| me.eval_pipe(dot, p))?,
            Arg::Ident(name) => self.call_function(dot, pos, name, &[], None)?,
        })
    }

    fn call_function(
        &mut self,
        dot: &Value,
        pos: usize,
        name: &str,
        rest: &[(usize, Arg)],
        last: Option<Value>,
    ) -> R<Value> {
        // `and` and `or` evaluate their arguments lazily.
        if name == "and" || name == "or" {
            let n = rest.len() + usize::from(last.is_some());
            if n == 0 {
                return Err(self.err(
                    pos,
                    ErrorKind::Exec,
                    format!("wrong number of args for {name}: want at least 1 got 0"),
                ));
            }
            let mut v = Value::Nil;
            for (p, a) in rest {
                v = self.eval_arg(dot, *p, a)?;
                if self.unknown_in(&v).is_some() {
                    return Ok(v);
                }
                let t = v.truthy();
                if (name == "and" && !t) || (name == "or" && t) {
                    return Ok(v);
                }
            }
            if let Some(l) = last {
                v = l;
            }
            return Ok(v);
        }
        let mut args = Vec::with_capacity(rest.len() + 1);
        for (p, a) in rest {
            args.push(self.eval_arg(dot, *p, a)?);
        }
        if let Some(l) = last {
            args.push(l);
        }
        // What is computed from an unknown value is unknown.
        if let Some(marker) = args.iter().find_map(|a| self.unknown_in(a)) {
            return Ok(Value::str(marker));
        }
        let fail = |me: &Self, e: String| {
            me.err(pos, ErrorKind::Exec, format!("error calling {name}: {e}"))
        };
        let native = match self.set.funcs.get(name) {
            Some(Func::Native(f)) => f,
            Some(Func::Exec) => return self.call_exec(pos, name, args),
            Some(Func::Unsupported) | None => {
                return Err(self.err(
                    pos,
                    ErrorKind::Unsupported(name.to_string()),
                    format!("function \"{name}\" is not supported"),
                ));
            }
        };
        match native(name, &args, &mut self.built) {
            Ok(v) => Ok(v),
            Err(FnError::Unsupported) => Err(self.err(
                pos,
                ErrorKind::Unsupported(name.to_string()),
                format!("function \"{name}\" is not supported"),
            )),
            Err(FnError::Msg(m)) => Err(fail(self, m)),
            Err(FnError::Budget(m)) => {
                Err(self.err(pos, ErrorKind::Budget, format!("error calling {name}: {m}")))
            }
        }
    }

    /// The functions the executor evaluates itself ([`Func::Exec`]).
    fn call_exec(&mut self, pos: usize, name: &str, args: Vec<Value>) -> R<Value> {
        let fail = |me: &Self, e: String| {
            me.err(pos, ErrorKind::Exec, format!("error calling {name}: {e}"))
        };
        match name {
            "include" => {
                let (Some(Value::Str(n)), Some(d)) = (args.first(), args.get(1)) else {
                    return Err(fail(self, format!("wrong args: {}", args.len())));
                };
                if args.len() != 2 {
                    return Err(fail(self, "wrong number of args".into()));
                }
                let n = n.as_str().to_string();
                self.include(pos, &n, d.clone())
            }
            "tpl" => {
                if args.len() != 2 {
                    return Err(fail(self, "wrong number of args".into()));
                }
                let Value::Str(t) = &args[0] else {
                    return Err(fail(
                        self,
                        format!("expected string; got {}", args[0].type_name()),
                    ));
                };
                let t = t.clone();
                self.tpl(pos, &t, args[1].clone())
            }
            "required" => {
                if args.len() != 2 {
                    return Err(fail(self, "wrong number of args".into()));
                }
                let msg = funcs::strval(&args[0]);
                match &args[1] {
                    Value::Nil => Err(self.err(pos, ErrorKind::Fail, msg)),
                    Value::Str(s) if s.as_str().is_empty() => {
                        Err(self.err(pos, ErrorKind::Fail, msg))
                    }
                    v => Ok(v.clone()),
                }
            }
            "fail" => {
                let msg = args.first().map(funcs::strval).unwrap_or_default();
                Err(self.err(pos, ErrorKind::Fail, msg))
            }
            _ => Err(self.err(
                pos,
                ErrorKind::Unsupported(name.to_string()),
                format!("function \"{name}\" is not supported"),
            )),
        }
    }
}

/// The `%v` text of a value that is not a string (`None` for a string or nil), within `left`
/// bytes.
fn go_text(v: &Value, left: usize) -> Result<Option<String>, Stop> {
    if matches!(v, Value::Nil | Value::Str(_)) {
        return Ok(None);
    }
    let mut s = String::new();
    let mut budget = Budget::new(left);
    crate::value::write_v(&mut s, v, &mut Walk::new(&mut budget)).map_err(|stop| match stop {
        Stop::Budget(_) => Stop::Budget(format!("output exceeded {left} bytes")),
        value => value,
    })?;
    Ok(Some(s))
}

/// Prints an action's value as Go's `fmt.Fprint` does, with provenance (`text`: its
/// [`go_text`]).
fn print_value(out: &mut TextBuf, v: &Value, text: Option<String>, fallback: &Source) {
    match (v, text) {
        (Value::Str(t), _) => out.push_text_or(t, fallback),
        (other, Some(s)) => match other.origin() {
            Some(o) => out.push_source(&s, Source::Value(o)),
            None => out.push_source(&s, fallback.clone()),
        },
        (_, None) => out.push_source("<no value>", fallback.clone()),
    }
}

/// What a `range` iterates over.
enum Items {
    List(Rc<Vec<Value>>),
    Pairs(Vec<(Value, Value)>),
    Count(i64),
}

impl Items {
    fn len(&self) -> usize {
        match self {
            Items::List(l) => l.len(),
            Items::Pairs(p) => p.len(),
            Items::Count(n) => usize::try_from(*n).unwrap_or(0),
        }
    }

    fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The key (index) and element of item `i`.
    fn get(&self, i: usize) -> (Value, Value) {
        match self {
            Items::List(l) => (Value::Int(i as i64, None), l[i].clone()),
            Items::Pairs(p) => p[i].clone(),
            Items::Count(_) => (Value::Int(i as i64, None), Value::Int(i as i64, None)),
        }
    }
}
