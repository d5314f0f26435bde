//! Go `text/template` with the Sprig and Helm functions charts use, or Argo CD's ApplicationSet
//! set ([`FuncSet`]), evaluated in-process with a budget, and with provenance: every byte range
//! of the output says whether it came from a template's literal text or from one of the
//! caller's values.
//!
//! ```
//! use gotmpl::{Templates, Value, Limits};
//! let mut t = Templates::new();
//! t.add("x.yaml", "name: {{ .name | upper }}").unwrap();
//! let data = Value::map([("name".to_string(), Value::str("web"))].into_iter().collect());
//! let out = t.render("x.yaml", &data, &Limits::default()).unwrap();
//! assert_eq!(out.text, "name: WEB");
//! ```

mod budget;
mod exec;
mod fmt;
mod funcs;
mod parse;
pub mod sha256;
mod text;
mod value;
pub mod yaml;

use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

pub use funcs::FuncSet;

/// Argo CD's name functions, which its generators also apply to their parameters
/// (`path.basenameNormalized`).
pub mod argocd {
    pub use crate::funcs::{normalize, slugify};
}

/// Calls a Sprig or Helm function that needs no template context (`b64enc`, `toYaml`...), for
/// host objects that implement Helm methods.
pub fn call_function(name: &str, args: Vec<Value>) -> Result<Value, String> {
    let mut budget = budget::Budget::new(Limits::default().built_bytes);
    match FuncSet::Helm.call(name, &args, &mut budget) {
        Ok(v) => Ok(v),
        Err(funcs::FnError::Msg(m) | funcs::FnError::Budget(m)) => Err(m),
        Err(funcs::FnError::Unsupported) => Err(format!("function \"{name}\" is not supported")),
    }
}
pub use text::{Origin, Segment, Source, Text, TextBuf};
pub use value::{MapRef, MapScope, Object, Value, format_float_g};

/// Evaluation limits: rendering stops with an [`ErrorKind::Budget`] error past any of them.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Nodes and commands evaluated.
    pub steps: u64,
    /// Nested `template`/`include`/`tpl` calls.
    pub depth: usize,
    /// Bytes produced, counting `include` results.
    pub output_bytes: usize,
    /// Bytes that functions build: strings, list and map items, copies; a value that
    /// `toJson`, `toYaml`, `%v` or a comparison walks counts what it writes or visits.
    pub built_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            steps: 10_000_000,
            // Helm stops `include` recursion at 1,000.
            depth: 1000,
            output_bytes: 64 << 20,
            built_bytes: 64 << 20,
        }
    }
}

/// What renderings spent, added up over the renderings it is given to (see
/// [`Templates::render_metered`]), failed ones included.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Usage {
    pub steps: u64,
    pub output_bytes: usize,
    pub built_bytes: usize,
}

/// What went wrong.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    Parse,
    Exec,
    /// A Sprig or Helm function this engine does not implement (named).
    Unsupported(String),
    /// `fail` or `required`.
    Fail,
    /// A limit of [`Limits`] was reached.
    Budget,
}

/// An error with its location: template file, byte offset, line and column (1-based).
#[derive(Clone, Debug)]
pub struct Error {
    pub kind: ErrorKind,
    pub template: Arc<str>,
    pub offset: usize,
    pub line: usize,
    pub column: usize,
    pub message: String,
    /// Set when the failing template text came from a value (`tpl`).
    pub value_origin: Option<Origin>,
}

impl Error {
    fn new(kind: ErrorKind, tree: &Tree, offset: usize, message: String) -> Self {
        let (line, column) = parse::line_col(&tree.src, offset);
        Self {
            kind,
            template: tree.file.clone(),
            offset,
            line,
            column,
            message,
            value_origin: tree.value_origin,
        }
    }
}

impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}:{}:{}: {}",
            self.template, self.line, self.column, self.message
        )
    }
}

impl std::error::Error for Error {}

/// Rendered text and where each byte range of it came from (sorted, non-overlapping).
#[derive(Clone, Debug, Default)]
pub struct Output {
    pub text: String,
    pub segments: Vec<Segment>,
    /// Helm mode: the offsets in `text` where a `<no value>` (a missing value printed) was
    /// removed, ascending. A caller that renders with incomplete values can tell a value left
    /// out from one written empty.
    pub dropped: Vec<usize>,
}

impl Output {
    /// The source of the byte at `offset`, if known.
    #[must_use]
    pub fn source_at(&self, offset: usize) -> Option<(&std::ops::Range<usize>, &Source)> {
        let i = self.segments.partition_point(|(r, _)| r.end <= offset);
        self.segments
            .get(i)
            .filter(|(r, _)| r.start <= offset)
            .map(|(r, s)| (r, s))
    }
}

/// One parsed template body.
#[derive(Debug)]
pub(crate) struct Tree {
    /// The file it was written in (the name given to [`Templates::add`]).
    file: Arc<str>,
    src: Arc<str>,
    nodes: Arc<Vec<parse::Node>>,
    /// For `tpl`: the template text is one value; its literal text is that value's.
    value_origin: Option<Origin>,
}

/// What looking up a key a map does not have gives.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MissingKey {
    /// Go's default (`missingkey=default`, and `zero` for these maps): nil, printed as
    /// `<no value>`.
    #[default]
    Nil,
    /// `missingkey=error`: the lookup is an error, `map has no entry for key "x"`.
    Error,
    /// Partial data: the key's value is not known yet. The lookup gives this marker text, and
    /// so do a field of it, a function given it and an `if`, `with` or `range` that it decides
    /// (the block is not rendered): the output holds the marker wherever the data was needed.
    Unknown(Arc<str>),
}

/// Template texts parsed once, to add to many sets ([`Templates::add_cached`]): the charts of a
/// repository often share their template files byte for byte. One thread uses it at a time;
/// it may move to another between uses (the language server keeps one across re-lints), and
/// [`ParseCache::sweep`] keeps its size to the texts still in use.
#[derive(Default)]
pub struct ParseCache {
    /// The functions the texts were parsed for (whether a name is a function decides the
    /// parse); a set of other functions clears the cache.
    funcs: Option<FuncSet>,
    /// Text → its parse, and whether it was used since the last [`ParseCache::sweep`].
    parsed: HashMap<Box<str>, (Arc<ParsedText>, bool)>,
}

impl ParseCache {
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Forgets the texts not added to a set since the last sweep, so that a cache kept from
    /// one use to the next holds only what the last one parsed or reused.
    pub fn sweep(&mut self) {
        self.parsed.retain(|_, (_, used)| std::mem::take(used));
    }

    /// How many distinct texts it holds.
    #[must_use]
    pub fn len(&self) -> usize {
        self.parsed.len()
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.parsed.is_empty()
    }
}

/// One template text parsed: its body and its `define`s, shared by every set that adds it.
struct ParsedText {
    src: Arc<str>,
    root: Arc<Vec<parse::Node>>,
    defines: Vec<(String, Arc<Vec<parse::Node>>)>,
}

/// A set of templates that can call each other (Go's `*template.Template` namespace).
#[derive(Default)]
pub struct Templates {
    trees: HashMap<String, Rc<Tree>>,
    /// Go replaces an earlier definition only with a non-empty one.
    helm_no_value: bool,
    funcs: FuncSet,
    missing_key: MissingKey,
}

impl Templates {
    /// Go's `text/template` with Helm's function set.
    #[must_use]
    pub fn new() -> Self {
        Self::default()
    }

    /// Helm mode: the final text has every `<no value>` removed (Helm's engine does this).
    #[must_use]
    pub fn helm() -> Self {
        Self {
            helm_no_value: true,
            ..Self::default()
        }
    }

    /// Argo CD's ApplicationSet templates (`goTemplate: true`): Argo CD's function set.
    #[must_use]
    pub fn argocd() -> Self {
        Self {
            funcs: FuncSet::ArgoCd,
            ..Self::default()
        }
    }

    /// The functions templates of this set may call.
    #[must_use]
    pub fn funcs(&self) -> FuncSet {
        self.funcs
    }

    /// Sets what a missing map key gives.
    pub fn set_missing_key(&mut self, missing_key: MissingKey) {
        self.missing_key = missing_key;
    }

    /// Go's `Template.Option`: `missingkey=default`, `invalid`, `zero` or `error` (what Argo CD's
    /// `goTemplateOptions` hold). Go panics on anything else; this is an error.
    pub fn option(&mut self, option: &str) -> Result<(), String> {
        self.missing_key = match option.strip_prefix("missingkey=") {
            Some("default" | "invalid" | "zero") => MissingKey::Nil,
            Some("error") => MissingKey::Error,
            _ => return Err(format!("unrecognized option: {option}")),
        };
        Ok(())
    }

    /// Parses `text` as the template `name`; its `define`s join the set.
    pub fn add(&mut self, name: &str, text: &str) -> Result<(), Error> {
        let parsed = self.parse(name, text)?;
        self.add_parsed(name, &parsed);
        Ok(())
    }

    /// [`Templates::add`], taking the parse of `text` from `cache` when the same text was
    /// parsed before for a set of the same functions (charts that share their templates), and
    /// keeping it there otherwise. A text that does not parse is not kept.
    pub fn add_cached(
        &mut self,
        name: &str,
        text: &str,
        cache: &mut ParseCache,
    ) -> Result<(), Error> {
        if cache.funcs != Some(self.funcs) {
            cache.parsed.clear();
            cache.funcs = Some(self.funcs);
        }
        let parsed = match cache.parsed.get_mut(text) {
            Some((p, used)) => {
                *used = true;
                p.clone()
            }
            None => {
                let p = Arc::new(self.parse(name, text)?);
                cache.parsed.insert(text.into(), (p.clone(), true));
                p
            }
        };
        self.add_parsed(name, &parsed);
        Ok(())
    }

    fn parse(&self, name: &str, text: &str) -> Result<ParsedText, Error> {
        let funcs = self.funcs;
        let parsed = parse::parse(text, &|f| funcs.is_defined(f)).map_err(|e| {
            let (line, column) = parse::line_col(text, e.offset);
            Error {
                kind: ErrorKind::Parse,
                template: Arc::from(name),
                offset: e.offset,
                line,
                column,
                message: e.message,
                value_origin: None,
            }
        })?;
        Ok(ParsedText {
            src: Arc::from(text),
            root: Arc::new(parsed.root),
            defines: parsed
                .defines
                .into_iter()
                .map(|(n, nodes)| (n, Arc::new(nodes)))
                .collect(),
        })
    }

    /// The parsed text as the template `name`, and its `define`s.
    fn add_parsed(&mut self, name: &str, parsed: &ParsedText) {
        let file: Arc<str> = Arc::from(name);
        for (dname, nodes) in &parsed.defines {
            self.insert(
                dname.clone(),
                file.clone(),
                parsed.src.clone(),
                nodes.clone(),
            );
        }
        self.insert(
            name.to_string(),
            file,
            parsed.src.clone(),
            parsed.root.clone(),
        );
    }

    fn insert(
        &mut self,
        name: String,
        file: Arc<str>,
        src: Arc<str>,
        nodes: Arc<Vec<parse::Node>>,
    ) {
        let empty = nodes.iter().all(|n| match n {
            parse::Node::Text(a, b) => src[*a..*b].trim().is_empty(),
            _ => false,
        });
        if empty && self.trees.contains_key(&name) {
            return;
        }
        self.trees.insert(
            name,
            Rc::new(Tree {
                file,
                src,
                nodes,
                value_origin: None,
            }),
        );
    }

    #[must_use]
    pub fn has(&self, name: &str) -> bool {
        self.trees.contains_key(name)
    }

    /// Executes template `name` with `data` as dot and `$`.
    pub fn render(&self, name: &str, data: &Value, limits: &Limits) -> Result<Output, Error> {
        self.render_metered(name, data, limits, &mut Usage::default())
    }

    /// [`Templates::render`], adding what it spent to `usage`.
    pub fn render_metered(
        &self,
        name: &str,
        data: &Value,
        limits: &Limits,
        usage: &mut Usage,
    ) -> Result<Output, Error> {
        let Some(tree) = self.trees.get(name).cloned() else {
            return Err(Error {
                kind: ErrorKind::Exec,
                template: Arc::from(name),
                offset: 0,
                line: 1,
                column: 1,
                message: format!("no template \"{name}\""),
                value_origin: None,
            });
        };
        let mut ex = exec::Exec {
            set: self,
            extra: HashMap::new(),
            vars: vec![("$".into(), data.clone())],
            limits: *limits,
            steps: 0,
            depth: 0,
            nesting: 0,
            produced: 0,
            built: budget::Budget::new(limits.built_bytes),
            tree: tree.clone(),
        };
        let mut buf = TextBuf::default();
        let walked = ex.walk_list(data, &tree.nodes, &mut buf);
        usage.steps += ex.steps;
        usage.output_bytes += ex.produced;
        usage.built_bytes += ex.built.used();
        match walked {
            Ok(()) => {}
            Err(exec::Flow::Err(e)) => return Err(*e),
            Err(_) => {}
        }
        let text = buf.finish();
        let mut dropped = Vec::new();
        let text = if self.helm_no_value && text.as_str().contains("<no value>") {
            let mut b = TextBuf::default();
            let s = text.as_str();
            let mut at = 0;
            while let Some(i) = s[at..].find("<no value>") {
                b.push_text_range(&text, at..at + i);
                dropped.push(b.len());
                at += i + "<no value>".len();
            }
            b.push_text_range(&text, at..s.len());
            b.finish()
        } else {
            text
        };
        Ok(Output {
            text: text.as_str().to_string(),
            segments: text.segments().to_vec(),
            dropped,
        })
    }
}

/// A parse cache may be kept from one rendering thread to the next.
const _: fn() = || {
    fn send<T: Send>() {}
    send::<ParseCache>();
};
