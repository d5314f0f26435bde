//! The YAML layer: the only module that touches the parser (`granit-parser`).
//!
//! It turns a file into span-aware [`Node`] trees, one per document. Anchors, aliases and `<<`
//! merge keys are resolved here, with a budget against alias bombs. Syntax errors, duplicate keys
//! and exceeded limits are returned as [`YamlError`]s with exact locations; later documents of a
//! multi-document file are still parsed after a broken one.

pub mod edit;
pub mod embedded;
pub mod emit;
pub mod locate;
pub mod node;
pub mod path;
pub mod scalar;

use std::collections::HashMap;

use granit_parser::{Event, Options, Parser, StructureStyle};

pub use node::{Entry, Node, Scalar, ScalarStyle, ScalarText, Tag, Value, edit_items};
pub use scalar::Resolved;

use crate::source::{FileId, Span};

/// Most nodes a file's aliases may expand to, beyond the nodes written in the file.
pub const ALIAS_EXPANSION_BUDGET: usize = 1_000_000;
/// Deepest nesting of collections accepted, per style (the parser's own limit).
pub const MAX_NESTING: usize = 256;

/// One YAML document of a file.
#[derive(Clone, Debug)]
pub struct YamlDoc {
    /// 0-based index of the document in its file.
    pub index: usize,
    pub span: Span,
    pub root: Node,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum YamlErrorKind {
    Syntax,
    DuplicateKey { first: Span },
    ResourceLimit,
}

#[derive(Clone, Debug)]
pub struct YamlError {
    pub kind: YamlErrorKind,
    pub span: Span,
    pub message: String,
}

#[derive(Debug, Default)]
pub struct ParsedYaml {
    pub docs: Vec<YamlDoc>,
    pub errors: Vec<YamlError>,
}

struct Frame {
    start: usize,
    anchor: usize,
    tag: Option<Tag>,
    flow: bool,
    kind: FrameKind,
}

/// An open collection. Its children so far are the tail of the builder's `items` or
/// `entries` from `first`: one scratch stack for all collections, so each collection is
/// allocated once, at its exact size, when it closes.
enum FrameKind {
    Seq { first: usize },
    Map { first: usize, key: Option<Node> },
}

struct Builder<'t> {
    file: FileId,
    text: &'t str,
    stack: Vec<Frame>,
    /// Items of the open sequences, innermost last.
    items: Vec<Node>,
    /// Entries of the open maps, innermost last.
    entries: Vec<Entry>,
    anchors: HashMap<usize, Node>,
    root: Option<Node>,
    expanded: usize,
    budget_hit: bool,
    errors: Vec<YamlError>,
}

/// Parses every document of `text`. Never panics; problems are returned as errors.
#[must_use]
pub fn parse(file: FileId, text: &str) -> ParsedYaml {
    let mut options = Options::default();
    options.emit_comments = false;
    options.block_nesting_limit = MAX_NESTING;
    options.flow_nesting_limit = MAX_NESTING;
    let mut parser = Parser::new_from_str_with_options(text, options);
    // The scratch stacks of the last parse on this thread, already grown.
    let (items, entries) = SCRATCH.with(|s| std::mem::take(&mut *s.borrow_mut()));
    let mut b = Builder {
        file,
        text,
        stack: Vec::new(),
        items,
        entries,
        anchors: HashMap::new(),
        root: None,
        expanded: 0,
        budget_hit: false,
        errors: Vec::new(),
    };
    let mut out = ParsedYaml::default();
    let mut doc_start = 0;
    let mut doc_index = 0;
    loop {
        match parser.next_event() {
            None => break,
            Some(Ok((event, span))) => {
                let start = b.offset(span.start);
                let end = b.offset(span.end).max(start);
                match event {
                    Event::StreamStart | Event::Comment(..) | Event::Anchor(..) => {}
                    Event::StreamEnd => break,
                    Event::DocumentStart(..) => {
                        doc_start = start;
                        b.reset();
                    }
                    Event::DocumentEnd => {
                        let root = b.root.take().unwrap_or_else(|| {
                            Node::scalar(
                                Span::empty(file, doc_start),
                                ScalarText::default(),
                                ScalarStyle::Plain,
                            )
                        });
                        let doc_end = end.max(root.span.end as usize);
                        out.docs.push(YamlDoc {
                            index: doc_index,
                            span: Span::new(file, doc_start, doc_end),
                            root,
                        });
                        doc_index += 1;
                        b.reset();
                    }
                    Event::Alias(id) => b.alias(id, start, end),
                    Event::UnresolvedAlias(name) => {
                        b.error(
                            YamlErrorKind::Syntax,
                            start,
                            end,
                            format!("unknown anchor `{name}`"),
                        );
                        b.push(b.null_at(start, end));
                    }
                    Event::Scalar(text, style, anchor, tag) => {
                        let text = without_eof_break(text, style, end, b.text);
                        let node = Node::scalar(
                            Span::new(file, start, end),
                            scalar_text(text),
                            convert_style(style),
                        )
                        .with_tag(tag.map(|t| Tag::new(&t.original())));
                        if anchor != 0 {
                            b.anchors.insert(anchor, node.clone());
                        }
                        b.push(node);
                    }
                    Event::SequenceStart(style, anchor, tag) => b.stack.push(Frame {
                        start,
                        anchor,
                        tag: tag.map(|t| Tag::new(&t.original())),
                        flow: style == StructureStyle::Flow,
                        kind: FrameKind::Seq {
                            first: b.items.len(),
                        },
                    }),
                    Event::MappingStart(style, anchor, tag) => b.stack.push(Frame {
                        start,
                        anchor,
                        tag: tag.map(|t| Tag::new(&t.original())),
                        flow: style == StructureStyle::Flow,
                        kind: FrameKind::Map {
                            first: b.entries.len(),
                            key: None,
                        },
                    }),
                    Event::SequenceEnd | Event::MappingEnd => b.end_collection(end),
                    _ => {}
                }
            }
            Some(Err(e)) => {
                let at = b.offset(*e.marker());
                let message = e.info();
                let message = if message.is_empty() {
                    "invalid YAML".to_string()
                } else {
                    message
                };
                if matches!(e.kind(), granit_parser::ErrorKind::RecursionLimitExceeded) {
                    b.error(
                        YamlErrorKind::ResourceLimit,
                        at,
                        at,
                        format!("collections nested deeper than {MAX_NESTING} levels"),
                    );
                } else {
                    b.error(YamlErrorKind::Syntax, at, at, message);
                }
                b.reset();
                match parser.proceed_next_document() {
                    Ok(true) => {
                        doc_index += 1;
                    }
                    Ok(false) | Err(_) => break,
                }
            }
        }
    }
    out.errors = b.errors;
    out.errors.sort_by_key(|e| (e.span.start, e.span.end));
    b.items.clear();
    b.entries.clear();
    if b.items.capacity() + b.entries.capacity() <= MAX_KEPT_SCRATCH {
        SCRATCH.with(|s| *s.borrow_mut() = (b.items, b.entries));
    }
    out
}

thread_local! {
    /// The builder's scratch stacks, kept between the files a thread parses.
    static SCRATCH: std::cell::RefCell<(Vec<Node>, Vec<Entry>)> =
        const { std::cell::RefCell::new((Vec::new(), Vec::new())) };
}

/// Most scratch slots kept for the next parse (a file with a huge flat map does not pin
/// its stacks).
const MAX_KEPT_SCRATCH: usize = 1 << 16;

impl Builder<'_> {
    fn offset(&self, m: granit_parser::Marker) -> usize {
        m.byte_offset()
            .unwrap_or_else(|| {
                self.text
                    .char_indices()
                    .nth(m.index())
                    .map_or(self.text.len(), |(i, _)| i)
            })
            .min(self.text.len())
    }

    fn reset(&mut self) {
        self.stack.clear();
        self.items.clear();
        self.entries.clear();
        self.anchors.clear();
        self.root = None;
    }

    fn error(&mut self, kind: YamlErrorKind, start: usize, end: usize, message: String) {
        self.errors.push(YamlError {
            kind,
            span: Span::new(self.file, start, end),
            message,
        });
    }

    fn null_at(&self, start: usize, end: usize) -> Node {
        Node::scalar(
            Span::new(self.file, start, end),
            ScalarText::default(),
            ScalarStyle::Plain,
        )
    }

    fn alias(&mut self, id: usize, start: usize, end: usize) {
        let Some(target) = self.anchors.get(&id) else {
            self.error(
                YamlErrorKind::Syntax,
                start,
                end,
                "alias to an unknown anchor".into(),
            );
            let n = self.null_at(start, end);
            self.push(n);
            return;
        };
        let size = target.size();
        if self.budget_hit || self.expanded + size > ALIAS_EXPANSION_BUDGET {
            if !self.budget_hit {
                self.budget_hit = true;
                self.error(
                    YamlErrorKind::ResourceLimit,
                    start,
                    end,
                    format!(
                        "aliases expand to more than {ALIAS_EXPANSION_BUDGET} nodes; the rest are read as null"
                    ),
                );
            }
            let n = self.null_at(start, end);
            self.push(n);
            return;
        }
        self.expanded += size;
        let node = target.clone();
        self.push(node);
    }

    fn push(&mut self, node: Node) {
        match self.stack.last_mut() {
            None => self.root = Some(node),
            Some(frame) => match &mut frame.kind {
                FrameKind::Seq { .. } => self.items.push(node),
                FrameKind::Map { key, .. } => match key.take() {
                    None => *key = Some(node),
                    Some(k) => self.entries.push(Entry::new(k, node)),
                },
            },
        }
    }

    fn end_collection(&mut self, event_end: usize) {
        let Some(frame) = self.stack.pop() else {
            return;
        };
        // Trees of a large repository stay in memory for the whole run: collections are
        // allocated at their exact size (draining an exact-size iterator), never grown.
        let value = match frame.kind {
            FrameKind::Seq { first } => {
                Value::Seq(self.items.drain(first.min(self.items.len())..).collect())
            }
            FrameKind::Map { first, key } => {
                if let Some(k) = key {
                    // A key without a value (`? key` at the end of a flow map).
                    let v = self.null_at(k.span.end as usize, k.span.end as usize);
                    self.entries.push(Entry::new(k, v));
                }
                let first = first.min(self.entries.len());
                let duplicates = duplicate_keys(&self.entries[first..]);
                self.errors.extend(duplicates);
                let entries: Vec<Entry> = self.entries.drain(first..).collect();
                Value::Map(resolve_merges(entries).into_boxed_slice())
            }
        };
        // Block collections end where their last child ends; the parser's end event points at
        // the next token, which may be lines further down.
        let end = if frame.flow {
            event_end
        } else {
            last_child_end(&value).unwrap_or(frame.start)
        };
        let node = Node::new(
            Span::new(self.file, frame.start, end.max(frame.start)),
            value,
        )
        .with_tag(frame.tag)
        .with_flow(frame.flow);
        if frame.anchor != 0 {
            self.anchors.insert(frame.anchor, node.clone());
        }
        self.push(node);
    }
}

/// Duplicate keys reported one by one in a file; the others are counted in one more error.
pub const MAX_DUPLICATE_KEY_ERRORS: usize = 100;

/// `errors` (in file order) with at most [`MAX_DUPLICATE_KEY_ERRORS`] duplicate keys, the
/// rest counted in one error at the first of them: a file of a million repeated keys gives a
/// hundred findings, not a million. Other errors are kept.
#[must_use]
pub fn limit_duplicate_keys(errors: Vec<YamlError>) -> Vec<YamlError> {
    let duplicates = errors
        .iter()
        .filter(|e| matches!(e.kind, YamlErrorKind::DuplicateKey { .. }))
        .count();
    if duplicates <= MAX_DUPLICATE_KEY_ERRORS {
        return errors;
    }
    let more = duplicates - MAX_DUPLICATE_KEY_ERRORS;
    let mut seen = 0;
    let mut out = Vec::with_capacity(errors.len() - more + 1);
    for e in errors {
        if !matches!(e.kind, YamlErrorKind::DuplicateKey { .. }) {
            out.push(e);
            continue;
        }
        seen += 1;
        if seen <= MAX_DUPLICATE_KEY_ERRORS {
            out.push(e);
        } else if seen == MAX_DUPLICATE_KEY_ERRORS + 1 {
            out.push(YamlError {
                message: format!(
                    "{more} more duplicate keys from here on, not reported one by one; the last of each wins"
                ),
                ..e
            });
        }
    }
    out
}

/// `yaml/duplicate-key` errors of a map's entries (merged `<<` keys aside). Most maps are
/// small: they are compared pairwise, without allocating.
fn duplicate_keys(entries: &[Entry]) -> Vec<YamlError> {
    fn key(e: &Entry) -> Option<&str> {
        if is_merge_key(&e.key) {
            None
        } else {
            e.key.scalar_text()
        }
    }
    let mut dups = Vec::new();
    if entries.len() <= 32 {
        for (i, e) in entries.iter().enumerate() {
            let Some(k) = key(e) else { continue };
            if let Some(first) = entries[..i].iter().rev().find(|p| key(p) == Some(k)) {
                dups.push((k, e.key.span, first.key.span));
            }
        }
    } else {
        let mut seen: HashMap<&str, Span> = HashMap::with_capacity(entries.len());
        for e in entries {
            let Some(k) = key(e) else { continue };
            if let Some(first) = seen.insert(k, e.key.span) {
                dups.push((k, e.key.span, first));
            }
        }
    }
    dups.into_iter()
        .map(|(k, span, first)| YamlError {
            kind: YamlErrorKind::DuplicateKey { first },
            span,
            message: format!("duplicate key `{k}`; the last one wins"),
        })
        .collect()
}

fn last_child_end(value: &Value) -> Option<usize> {
    match value {
        Value::Scalar(_) => None,
        Value::Seq(items) => items.iter().map(|n| n.span.end as usize).max(),
        Value::Map(entries) => entries
            .iter()
            .filter(|e| !e.merged())
            .map(|e| e.value.span.end.max(e.key.span.end) as usize)
            .max(),
    }
}

fn is_merge_key(key: &Node) -> bool {
    matches!(&key.value, Value::Scalar(s) if s == "<<" && key.style() == ScalarStyle::Plain)
}

/// Applies `<<` merge keys: entries written in the map win, then earlier merge sources win
/// over later ones. Merged entries take the place of the `<<` entry and are marked `merged`.
fn resolve_merges(entries: Vec<Entry>) -> Vec<Entry> {
    if !entries.iter().any(|e| is_merge_key(&e.key)) {
        return entries;
    }
    let explicit: std::collections::HashSet<String> = entries
        .iter()
        .filter(|e| !is_merge_key(&e.key))
        .filter_map(|e| e.key.scalar_text().map(str::to_string))
        .collect();
    let mut taken = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(entries.len());
    for e in entries {
        if !is_merge_key(&e.key) {
            out.push(e);
            continue;
        }
        let sources: Vec<Node> = match e.value.value {
            Value::Map(_) => vec![e.value],
            Value::Seq(items) if items.iter().all(|n| n.as_map().is_some()) => items.into_vec(),
            _ => {
                out.push(e);
                continue;
            }
        };
        for src in sources {
            if let Value::Map(src_entries) = src.value {
                for mut se in src_entries.into_vec() {
                    let k = se.key.scalar_text().map(str::to_string);
                    if let Some(k) = k
                        && (explicit.contains(&k) || !taken.insert(k))
                    {
                        continue;
                    }
                    se.set_merged(true);
                    out.push(se);
                }
            }
        }
    }
    out
}

/// Checks a large file without building its tree: syntax errors (with recovery at the next
/// document) and duplicate keys, from the parser's events. Memory stays at the text plus the
/// open mappings' keys, whatever the file's size.
#[must_use]
pub fn validate_stream(file: FileId, text: &str) -> Vec<YamlError> {
    let mut options = Options::default();
    options.emit_comments = false;
    options.block_nesting_limit = MAX_NESTING;
    options.flow_nesting_limit = MAX_NESTING;
    let mut parser = Parser::new_from_str_with_options(text, options);
    // For each open collection: for a mapping, its keys so far and whether the next scalar
    // is a key; `None` for a sequence.
    let mut stack: Vec<Option<(HashMap<String, Span>, bool)>> = Vec::new();
    let mut errors = Vec::new();
    let offset = |m: granit_parser::Marker| m.byte_offset().unwrap_or(0).min(text.len());
    // Marks the value slot of the enclosing mapping as filled; returns whether the node just
    // read was a key.
    let advance = |stack: &mut Vec<Option<(HashMap<String, Span>, bool)>>| -> bool {
        match stack.last_mut() {
            Some(Some((_, expect_key))) => {
                let was_key = *expect_key;
                *expect_key = !*expect_key;
                was_key
            }
            _ => false,
        }
    };
    loop {
        match parser.next_event() {
            None => break,
            Some(Ok((event, span))) => {
                let (start, end) = (offset(span.start), offset(span.end));
                match event {
                    Event::Scalar(value, style, ..)
                        if advance(&mut stack)
                            && !(value == "<<" && style == granit_parser::ScalarStyle::Plain) =>
                    {
                        let here = Span::new(file, start, end);
                        if let Some(Some((keys, _))) = stack.last_mut() {
                            if let Some(first) = keys.insert(value.to_string(), here) {
                                errors.push(YamlError {
                                    kind: YamlErrorKind::DuplicateKey { first },
                                    span: here,
                                    message: format!("duplicate key `{value}`; the last one wins"),
                                });
                            }
                        }
                    }
                    Event::Alias(_) | Event::UnresolvedAlias(_) => {
                        advance(&mut stack);
                    }
                    Event::SequenceStart(..) => {
                        advance(&mut stack);
                        stack.push(None);
                    }
                    Event::MappingStart(..) => {
                        advance(&mut stack);
                        stack.push(Some((HashMap::new(), true)));
                    }
                    Event::SequenceEnd | Event::MappingEnd => {
                        stack.pop();
                    }
                    Event::DocumentStart(..) | Event::DocumentEnd => stack.clear(),
                    Event::StreamEnd => break,
                    _ => {}
                }
            }
            Some(Err(e)) => {
                let at = offset(*e.marker());
                let (kind, message) =
                    if matches!(e.kind(), granit_parser::ErrorKind::RecursionLimitExceeded) {
                        (
                            YamlErrorKind::ResourceLimit,
                            format!("collections nested deeper than {MAX_NESTING} levels"),
                        )
                    } else {
                        (
                            YamlErrorKind::Syntax,
                            Some(e.info())
                                .filter(|m| !m.is_empty())
                                .unwrap_or_else(|| "invalid YAML".into()),
                        )
                    };
                errors.push(YamlError {
                    kind,
                    span: Span::new(file, at, at),
                    message,
                });
                stack.clear();
                match parser.proceed_next_document() {
                    Ok(true) => {}
                    Ok(false) | Err(_) => break,
                }
            }
        }
    }
    errors
}

/// A scalar's text without copying a long one: the parser's own buffer is kept (block
/// scalars, a dashboard's JSON), trimmed to its length.
fn scalar_text(text: std::borrow::Cow<'_, str>) -> ScalarText {
    match text {
        std::borrow::Cow::Owned(mut s) if s.len() > std::mem::size_of::<ScalarText>() => {
            s.shrink_to_fit();
            ScalarText::from_string_buffer(s)
        }
        text => ScalarText::from(text.as_ref()),
    }
}

/// A block scalar that runs to the end of a file with no final line break has none to keep:
/// YAML's clip and keep chomping preserve the line break that ends the last line, and here
/// there is none (kustomize and Argo CD read `key: |` + `text` at the end of a file as `text`).
fn without_eof_break<'t>(
    text: std::borrow::Cow<'t, str>,
    style: granit_parser::ScalarStyle,
    end: usize,
    source: &str,
) -> std::borrow::Cow<'t, str> {
    let block = matches!(
        style,
        granit_parser::ScalarStyle::Literal | granit_parser::ScalarStyle::Folded
    );
    if !block || end < source.len() || source.ends_with('\n') || !text.ends_with('\n') {
        return text;
    }
    let mut owned = text.into_owned();
    owned.pop();
    std::borrow::Cow::Owned(owned)
}

fn convert_style(style: granit_parser::ScalarStyle) -> ScalarStyle {
    match style {
        granit_parser::ScalarStyle::Plain => ScalarStyle::Plain,
        granit_parser::ScalarStyle::SingleQuoted => ScalarStyle::SingleQuoted,
        granit_parser::ScalarStyle::DoubleQuoted => ScalarStyle::DoubleQuoted,
        granit_parser::ScalarStyle::Literal => ScalarStyle::Literal,
        granit_parser::ScalarStyle::Folded => ScalarStyle::Folded,
    }
}

#[cfg(test)]
mod tests;
