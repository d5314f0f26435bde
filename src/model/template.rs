//! ApplicationSet templating: fasttemplate (`{{path.basename}}`) and Go templates
//! (`goTemplate: true`, `{{.path.basename}}`, `{{index .path.segments 1}}` and a subset of Sprig:
//! `default`, `replace`, `lower`, `upper`, `trim`, `trimPrefix`, `trimSuffix`, `printf`, ...).
//!
//! Parameters that only exist at run time (an unexpandable generator) are "open": looking one up
//! gives [`UNKNOWN`], which callers detect with [`is_unknown`] and never check against.

use serde_json::{Map, Value};

/// Written in place of a value that depends on parameters unknown offline.
pub const UNKNOWN: &str = "\u{1}unknown\u{1}";

#[must_use]
pub fn is_unknown(s: &str) -> bool {
    s.contains(UNKNOWN)
}

/// `s` as a message shows it: each unknown part reads `<unknown>`.
#[must_use]
pub fn readable(s: &str) -> String {
    s.replace(UNKNOWN, "<unknown>")
}

/// One set of generator parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    pub values: Map<String, Value>,
    /// Keys not in `values` are unknown (from an unexpandable generator), not missing.
    pub open: bool,
}

impl Params {
    #[must_use]
    pub fn new(values: Map<String, Value>) -> Self {
        Params {
            values,
            open: false,
        }
    }

    /// `other` merged over `self`.
    #[must_use]
    pub fn merged(&self, other: &Params) -> Params {
        let mut values = self.values.clone();
        for (k, v) in &other.values {
            values.insert(k.clone(), v.clone());
        }
        Params {
            values,
            open: self.open || other.open,
        }
    }

    /// Dotted lookup (`path.basename`); also a flat key containing dots.
    fn lookup(&self, key: &str) -> Option<Value> {
        if let Some(v) = self.values.get(key) {
            return Some(v.clone());
        }
        let mut cur: Option<&Value> = None;
        for (i, part) in key.split('.').enumerate() {
            cur = if i == 0 {
                self.values.get(part)
            } else {
                cur.and_then(|c| c.get(part))
            };
            cur?;
        }
        cur.cloned()
    }
}

/// Renders `text` with the ApplicationSet's template syntax.
#[must_use]
pub fn render(text: &str, params: &Params, go: bool) -> String {
    if !text.contains("{{") {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        let mut head = &rest[..start];
        let mut inner = &rest[start + 2..start + 2 + len];
        let mut after = &rest[start + 4 + len..];
        if go {
            // `{{-` and `-}}` trim the surrounding whitespace.
            if let Some(i) = inner.strip_prefix('-') {
                inner = i;
                head = head.trim_end();
            }
            if let Some(i) = inner.strip_suffix('-') {
                inner = i;
                after = after.trim_start();
            }
        }
        out.push_str(head);
        if go {
            match eval_go(inner.trim(), params) {
                Some(v) => out.push_str(&to_text(&v)),
                None => out.push_str(UNKNOWN),
            }
        } else {
            let tag = inner.trim();
            match fast_lookup(params, tag) {
                Some(v) => out.push_str(&to_text(&v)),
                None if params.open => out.push_str(UNKNOWN),
                // fasttemplate leaves unknown tags as written.
                None => {
                    out.push_str("{{");
                    out.push_str(&rest[start + 2..start + 2 + len]);
                    out.push_str("}}");
                }
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// fasttemplate keys: flattened (`path.basename`, `path[1]`).
fn fast_lookup(params: &Params, tag: &str) -> Option<Value> {
    if let Some((key, idx)) = tag.strip_suffix(']').and_then(|t| t.split_once('[')) {
        let i: usize = idx.parse().ok()?;
        let v = params.lookup(&format!("{key}.segments"))?;
        return v.get(i).cloned();
    }
    params.lookup(tag)
}

fn to_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<no value>".to_string(),
        other => other.to_string(),
    }
}

fn unknown() -> Value {
    Value::String(UNKNOWN.to_string())
}

fn is_unknown_value(v: &Value) -> bool {
    v.as_str().is_some_and(is_unknown)
}

/// Evaluates a Go template action; `None` when it is not supported or fails (the caller writes
/// [`UNKNOWN`]).
fn eval_go(action: &str, params: &Params) -> Option<Value> {
    let tokens = tokenize(action)?;
    let first = tokens.first()?;
    if let Tok::Ident(id) = first {
        if matches!(
            id.as_str(),
            "if" | "range" | "with" | "end" | "else" | "define" | "template" | "block"
        ) {
            return None;
        }
    }
    let mut pos = 0;
    let v = eval_pipeline(&tokens, &mut pos, params)?;
    (pos == tokens.len()).then_some(v)
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Field(String),
    Ident(String),
    Str(String),
    Num(f64),
    Pipe,
    Open,
    Close,
}

fn tokenize(s: &str) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    let chars: Vec<char> = s.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            c if c.is_whitespace() => i += 1,
            '|' => {
                out.push(Tok::Pipe);
                i += 1;
            }
            '(' => {
                out.push(Tok::Open);
                i += 1;
            }
            ')' => {
                out.push(Tok::Close);
                i += 1;
            }
            '"' => {
                let mut v = String::new();
                i += 1;
                while i < chars.len() && chars[i] != '"' {
                    if chars[i] == '\\' && i + 1 < chars.len() {
                        i += 1;
                        v.push(match chars[i] {
                            'n' => '\n',
                            't' => '\t',
                            c => c,
                        });
                    } else {
                        v.push(chars[i]);
                    }
                    i += 1;
                }
                if i >= chars.len() {
                    return None;
                }
                i += 1;
                out.push(Tok::Str(v));
            }
            '`' => {
                let start = i + 1;
                let end = chars[start..].iter().position(|&c| c == '`')? + start;
                out.push(Tok::Str(chars[start..end].iter().collect()));
                i = end + 1;
            }
            _ => {
                let start = i;
                while i < chars.len()
                    && !chars[i].is_whitespace()
                    && !matches!(chars[i], '|' | '(' | ')' | '"' | '`')
                {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                if word.starts_with('.') || word.starts_with('$') {
                    let w = word.trim_start_matches('$').trim_start_matches('.');
                    out.push(Tok::Field(w.to_string()));
                } else if let Ok(n) = word.parse::<f64>() {
                    out.push(Tok::Num(n));
                } else {
                    out.push(Tok::Ident(word));
                }
            }
        }
    }
    Some(out)
}

fn eval_pipeline(toks: &[Tok], pos: &mut usize, params: &Params) -> Option<Value> {
    let mut value = eval_command(toks, pos, params, None)?;
    while toks.get(*pos) == Some(&Tok::Pipe) {
        *pos += 1;
        value = eval_command(toks, pos, params, Some(value))?;
    }
    Some(value)
}

fn eval_operand(toks: &[Tok], pos: &mut usize, params: &Params) -> Option<Value> {
    let t = toks.get(*pos)?.clone();
    *pos += 1;
    match t {
        Tok::Field(f) if f.is_empty() => Some(Value::Object(params.values.clone())),
        Tok::Field(f) => match params.lookup(&f) {
            Some(v) => Some(v),
            None if params.open => Some(unknown()),
            // `missingkey=error`, as Argo CD renders Go templates.
            None => None,
        },
        Tok::Str(s) => Some(Value::String(s)),
        Tok::Num(n) => Some(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number)),
        Tok::Open => {
            let v = eval_pipeline(toks, pos, params)?;
            if toks.get(*pos) != Some(&Tok::Close) {
                return None;
            }
            *pos += 1;
            Some(v)
        }
        Tok::Ident(id) if id == "true" || id == "false" => Some(Value::Bool(id == "true")),
        Tok::Ident(id) if id == "nil" => Some(Value::Null),
        Tok::Ident(id) => call(&id, Vec::new()),
        Tok::Pipe | Tok::Close => None,
    }
}

fn eval_command(
    toks: &[Tok],
    pos: &mut usize,
    params: &Params,
    piped: Option<Value>,
) -> Option<Value> {
    if let Some(Tok::Ident(name)) = toks.get(*pos) {
        if !matches!(name.as_str(), "true" | "false" | "nil") {
            let name = name.clone();
            *pos += 1;
            let mut args = Vec::new();
            while let Some(t) = toks.get(*pos) {
                if matches!(t, Tok::Pipe | Tok::Close) {
                    break;
                }
                args.push(eval_operand(toks, pos, params)?);
            }
            if let Some(p) = piped {
                args.push(p);
            }
            if args.iter().any(is_unknown_value) && name != "default" {
                return Some(unknown());
            }
            return call(&name, args);
        }
    }
    if piped.is_some() {
        return None;
    }
    eval_operand(toks, pos, params)
}

fn text_of(v: &Value) -> String {
    to_text(v)
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64().is_some_and(|f| f != 0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// The functions supported; `None` for the others (the result is then unknown).
fn call(name: &str, args: Vec<Value>) -> Option<Value> {
    let s = |i: usize| args.get(i).map(text_of);
    let str_fn =
        |f: &dyn Fn(&str) -> String| Some(Value::String(f(&s(args.len().checked_sub(1)?)?)));
    match name {
        "index" => {
            let mut cur = args.first()?.clone();
            for key in &args[1..] {
                cur = match (&cur, key) {
                    (Value::Array(a), Value::Number(n)) => {
                        a.get(usize::try_from(n.as_f64()? as i64).ok()?)?.clone()
                    }
                    (Value::Object(o), k) => o.get(&text_of(k))?.clone(),
                    _ if is_unknown_value(&cur) => return Some(unknown()),
                    _ => return None,
                };
            }
            Some(cur)
        }
        "default" => {
            let (d, v) = (args.first()?, args.get(1));
            if v.is_some_and(is_unknown_value) {
                return Some(unknown());
            }
            Some(match v {
                Some(v) if truthy(v) => v.clone(),
                _ => d.clone(),
            })
        }
        "lower" => str_fn(&|x| x.to_lowercase()),
        "upper" => str_fn(&|x| x.to_uppercase()),
        "trim" => str_fn(&|x| x.trim().to_string()),
        "title" => str_fn(&|x| {
            let mut c = x.chars();
            c.next()
                .map_or(String::new(), |f| f.to_uppercase().chain(c).collect())
        }),
        "quote" => str_fn(&|x| format!("{x:?}")),
        "squote" => str_fn(&|x| format!("'{x}'")),
        "toString" | "toJson" if args.len() == 1 => Some(Value::String(text_of(&args[0]))),
        "base" => str_fn(&|x| x.rsplit('/').next().unwrap_or(x).to_string()),
        "dir" => str_fn(&|x| super::repo::parent(x).to_string()),
        "normalize" => str_fn(&|x| normalize(x)),
        "replace" => Some(Value::String(s(2)?.replace(&s(0)?, &s(1)?))),
        "trimPrefix" => {
            let (p, x) = (s(0)?, s(1)?);
            Some(Value::String(x.strip_prefix(&p).unwrap_or(&x).to_string()))
        }
        "trimSuffix" => {
            let (p, x) = (s(0)?, s(1)?);
            Some(Value::String(x.strip_suffix(&p).unwrap_or(&x).to_string()))
        }
        "trunc" => {
            let n = args.first()?.as_f64()? as i64;
            let x = s(1)?;
            let n = usize::try_from(n).ok()?.min(x.chars().count());
            Some(Value::String(x.chars().take(n).collect()))
        }
        "join" => {
            let sep = s(0)?;
            let list = args.get(1)?.as_array()?;
            Some(Value::String(
                list.iter().map(text_of).collect::<Vec<_>>().join(&sep),
            ))
        }
        "printf" => {
            let fmt = s(0)?;
            let mut out = String::new();
            let mut it = args[1..].iter();
            let mut chars = fmt.chars().peekable();
            while let Some(c) = chars.next() {
                if c == '%' {
                    match chars.next() {
                        Some('%') => out.push('%'),
                        Some('s' | 'v' | 'd') => out.push_str(&text_of(it.next()?)),
                        Some('q') => out.push_str(&format!("{:?}", text_of(it.next()?))),
                        _ => return None,
                    }
                } else {
                    out.push(c);
                }
            }
            Some(Value::String(out))
        }
        _ => None,
    }
}

/// Argo CD's `basenameNormalized` (and the template function `normalize`): lowercase,
/// characters other than `[a-z0-9.-]` as `-`.
pub(crate) fn normalize(s: &str) -> String {
    s.to_lowercase()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        let v: Value = serde_json::json!({
            "path": {"path": "apps/team-a/api", "basename": "api", "segments": ["apps", "team-a", "api"]},
            "cluster": "Prod-EU",
            "empty": ""
        });
        Params::new(v.as_object().unwrap().clone())
    }

    fn flat() -> Params {
        let v: Value = serde_json::json!({
            "path": "apps/team-a/api", "path.basename": "api",
            "path.segments": ["apps", "team-a", "api"], "cluster": "prod"
        });
        Params::new(v.as_object().unwrap().clone())
    }

    #[test]
    fn go_templates() {
        let p = params();
        let r = |t: &str| render(t, &p, true);
        assert_eq!(
            r("{{.path.basename}}-{{ .cluster | lower }}"),
            "api-prod-eu"
        );
        assert_eq!(r("{{index .path.segments 1}}"), "team-a");
        assert_eq!(r("{{ .empty | default \"dflt\" }}"), "dflt");
        assert_eq!(r("{{ default \"x\" .cluster }}"), "Prod-EU");
        assert_eq!(r("{{ replace \"-\" \"_\" .cluster }}"), "Prod_EU");
        assert_eq!(r("{{ trimPrefix \"apps/\" .path.path }}"), "team-a/api");
        assert_eq!(
            r("{{ printf \"%s/%s\" .cluster .path.basename }}"),
            "Prod-EU/api"
        );
        assert_eq!(
            r("values-{{ .path.basename | upper }}.yaml"),
            "values-API.yaml"
        );
        assert!(is_unknown(&r("{{ .nope }}")));
        assert!(is_unknown(&r("{{ if .cluster }}x{{ end }}")));
        let open = Params {
            open: true,
            ..Params::default()
        };
        assert!(is_unknown(&render("{{.name}}-x", &open, true)));
    }

    #[test]
    fn fasttemplate() {
        let p = flat();
        assert_eq!(
            render("{{path.basename}}-{{ cluster }}", &p, false),
            "api-prod"
        );
        assert_eq!(render("{{path[1]}}", &p, false), "team-a");
        assert_eq!(render("{{nope}}", &p, false), "{{nope}}");
    }
}
