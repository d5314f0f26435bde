//! Go's builtin template functions, Sprig's (v3) and Helm's, as Helm 4 registers them.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use crate::budget::{Budget, Stop, VALUE_BYTES, Walk};
use crate::fmt::{go_quote, sprint, sprintf, sprintln};
use crate::text::{Text, TextBuf};
use crate::value::{Value, equal_within};
use crate::yaml;

pub enum FnError {
    Unsupported,
    Msg(String),
    /// Past the rendering's budget: rendering stops.
    Budget(String),
}

impl From<Stop> for FnError {
    fn from(s: Stop) -> Self {
        match s {
            Stop::Value(m) => FnError::Msg(m),
            Stop::Budget(m) => FnError::Budget(m),
        }
    }
}

type F = Result<Value, FnError>;

fn err<T>(m: impl Into<String>) -> Result<T, FnError> {
    Err(FnError::Msg(m.into()))
}

/// Functions implemented here, and those `include`/`tpl`/`required`/`fail`/`and`/`or` that the
/// evaluator handles itself.
pub const SUPPORTED: &[&str] = &[
    // Go builtins
    "and",
    "or",
    "not",
    "eq",
    "ne",
    "lt",
    "le",
    "gt",
    "ge",
    "index",
    "len",
    "slice",
    "print",
    "printf",
    "println",
    "html",
    "js",
    "urlquery",
    // Helm
    "include",
    "tpl",
    "required",
    "fail",
    "toYaml",
    "mustToYaml",
    "toYamlPretty",
    "fromYaml",
    "fromYamlArray",
    "toJson",
    "mustToJson",
    "fromJson",
    "fromJsonArray",
    "lookup",
    // Sprig
    "default",
    "empty",
    "coalesce",
    "ternary",
    "all",
    "any",
    "quote",
    "squote",
    "indent",
    "nindent",
    "trim",
    "trimAll",
    "trimall",
    "trimPrefix",
    "trimSuffix",
    "upper",
    "lower",
    "title",
    "untitle",
    "replace",
    "split",
    "splitList",
    "splitn",
    "join",
    "contains",
    "hasPrefix",
    "hasSuffix",
    "repeat",
    "substr",
    "trunc",
    "nospace",
    "cat",
    "toString",
    "toStrings",
    "int",
    "int64",
    "float64",
    "atoi",
    "add",
    "add1",
    "sub",
    "mul",
    "div",
    "mod",
    "max",
    "min",
    "floor",
    "ceil",
    "round",
    "addf",
    "subf",
    "mulf",
    "divf",
    "list",
    "tuple",
    "dict",
    "get",
    "set",
    "unset",
    "hasKey",
    "keys",
    "values",
    "pick",
    "omit",
    "merge",
    "mustMerge",
    "mergeOverwrite",
    "mustMergeOverwrite",
    "deepCopy",
    "mustDeepCopy",
    "dig",
    "pluck",
    "first",
    "mustFirst",
    "last",
    "mustLast",
    "rest",
    "mustRest",
    "initial",
    "mustInitial",
    "append",
    "mustAppend",
    "push",
    "mustPush",
    "prepend",
    "mustPrepend",
    "uniq",
    "mustUniq",
    "has",
    "mustHas",
    "without",
    "mustWithout",
    "compact",
    "mustCompact",
    "concat",
    "reverse",
    "mustReverse",
    "sortAlpha",
    "until",
    "untilStep",
    "seq",
    "semverCompare",
    "regexMatch",
    "mustRegexMatch",
    "regexReplaceAll",
    "mustRegexReplaceAll",
    "regexReplaceAllLiteral",
    "regexFind",
    "regexFindAll",
    "regexSplit",
    "b64enc",
    "b64dec",
    "b32enc",
    "b32dec",
    "sha256sum",
    "kindOf",
    "kindIs",
    "typeOf",
    "typeIs",
    "toPrettyJson",
    "toRawJson",
    "mustToPrettyJson",
    "mustToRawJson",
    "base",
    "dir",
    "ext",
    "clean",
    "isAbs",
    "kebabcase",
    "snakecase",
    "toDecimal",
    "chunk",
    "toToml",
];

/// Sprig and Helm functions that exist but that this engine does not evaluate: random, time,
/// crypto, network and environment functions. Calling one is an [`crate::ErrorKind::Unsupported`]
/// error at the call, not a parse error.
pub const UNSUPPORTED: &[&str] = &[
    "now",
    "date",
    "dateInZone",
    "date_in_zone",
    "dateModify",
    "date_modify",
    "mustDateModify",
    "ago",
    "toDate",
    "mustToDate",
    "unixEpoch",
    "duration",
    "durationRound",
    "htmlDate",
    "htmlDateInZone",
    "randAlphaNum",
    "randAlpha",
    "randNumeric",
    "randAscii",
    "randInt",
    "randBytes",
    "uuidv4",
    "genPrivateKey",
    "derivePassword",
    "buildCustomCert",
    "genCA",
    "genCAWithKey",
    "genSelfSignedCert",
    "genSelfSignedCertWithKey",
    "genSignedCert",
    "genSignedCertWithKey",
    "encryptAES",
    "decryptAES",
    "bcrypt",
    "htpasswd",
    "sha1sum",
    "sha512sum",
    "adler32sum",
    "shuffle",
    "wrap",
    "wrapWith",
    "fromToml",
    "getHostByName",
    "osBase",
    "osDir",
    "osExt",
    "osClean",
    "osIsAbs",
    "camelcase",
    "swapcase",
    "plural",
    "initials",
    "abbrev",
    "abbrevboth",
    "semver",
    "urlParse",
    "urlJoin",
    "call",
    "mustToDate",
    "mustRegexFind",
    "mustRegexFindAll",
    "mustRegexSplit",
    "mustSlice",
    "mustChunk",
    "mustFromJson",
    "mustDig",
    "mustToPrettyJson",
    "mustToRawJson",
    "expandenv",
    "env",
    "regexQuoteMeta",
    "mustCompact",
];

pub fn is_defined(name: &str) -> bool {
    SUPPORTED.contains(&name) || UNSUPPORTED.contains(&name)
}

fn arity(name: &str, args: &[Value], n: usize) -> Result<(), FnError> {
    if args.len() != n {
        return err(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

fn min_arity(name: &str, args: &[Value], n: usize) -> Result<(), FnError> {
    if args.len() < n {
        return err(format!(
            "wrong number of args for {name}: want at least {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

/// A `string` parameter: Go's reflection refuses anything else.
fn text(v: &Value) -> Result<&Text, FnError> {
    match v {
        Value::Str(t) => Ok(t),
        Value::Nil => err("invalid value; expected string"),
        other => err(format!(
            "wrong type for value; expected string; got {}",
            other.type_name()
        )),
    }
}

fn st(v: &Value) -> Result<&str, FnError> {
    text(v).map(Text::as_str)
}

fn int_param(v: &Value) -> Result<i64, FnError> {
    match v {
        Value::Int(i, _) => Ok(*i),
        Value::Nil => err("invalid value; expected int"),
        other => err(format!(
            "wrong type for value; expected int; got {}",
            other.type_name()
        )),
    }
}

fn map_param(v: &Value) -> Result<&crate::value::MapRef, FnError> {
    match v {
        Value::Map(m) => Ok(m),
        Value::Nil => err("invalid value; expected map[string]interface {}"),
        other => err(format!(
            "wrong type for value; expected map[string]interface {{}}; got {}",
            other.type_name()
        )),
    }
}

/// Sprig's `strval`, for a message (a value past [`Value::to_go_string`]'s length is cut).
pub fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.as_str().to_string(),
        other => other.to_go_string(),
    }
}

/// Sprig's `strval`, a value's `%v` text counted in the budget.
fn strval_in(v: &Value, budget: &mut Budget) -> Result<String, Stop> {
    Ok(strval_text(v, budget)?.as_str().to_string())
}

fn strval_text(v: &Value, budget: &mut Budget) -> Result<Text, Stop> {
    match v {
        Value::Str(s) => Ok(s.clone()),
        other => sprint(std::slice::from_ref(other), &mut Walk::new(budget)),
    }
}

/// Sprig's `strslice`.
fn strslice(v: &Value, budget: &mut Budget) -> Result<Vec<Value>, Stop> {
    Ok(match v {
        Value::List(l) => {
            budget.charge(l.len().saturating_mul(VALUE_BYTES))?;
            let mut out = Vec::with_capacity(l.len());
            for x in l.iter().filter(|x| !matches!(x, Value::Nil)) {
                out.push(Value::Str(strval_text(x, budget)?));
            }
            out
        }
        Value::Nil => Vec::new(),
        other => vec![Value::Str(strval_text(other, budget)?)],
    })
}

/// The bytes of `v` as a function's new result: a string's, a list's or map's items.
fn size_of(v: &Value) -> usize {
    match v {
        Value::Str(t) => t.as_str().len(),
        Value::List(l) => l.len().saturating_mul(VALUE_BYTES),
        Value::Map(m) => m.borrow().len().saturating_mul(VALUE_BYTES),
        _ => 0,
    }
}

/// `v`, a new value, counted in the budget (its size is bounded by the arguments').
fn counted(budget: &mut Budget, v: Value) -> F {
    budget.charge(size_of(&v))?;
    Ok(v)
}

/// A new list of `items`, counted in the budget.
fn new_list(budget: &mut Budget, items: Vec<Value>) -> F {
    counted(budget, Value::list(items))
}

/// Whether `x` is in `list`, as Sprig's `reflect.DeepEqual` finds it.
fn in_list(x: &Value, list: &[Value], budget: &mut Budget) -> Result<bool, Stop> {
    for y in list {
        if equal_within(x, y, &mut Walk::new(budget))? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `cast.ToInt64`, which Sprig's arithmetic uses (errors become 0).
pub fn to_i64(v: &Value) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        Value::Float(f, _) => *f as i64,
        Value::Bool(b, _) => i64::from(*b),
        Value::Str(s) => parse_go_int(s.as_str()).unwrap_or(0),
        _ => 0,
    }
}

fn parse_go_int(s: &str) -> Option<i64> {
    // cast trims a zero decimal part ("3.0" → "3") then parses with base 0.
    let s = match s.split_once('.') {
        Some((i, d)) if !d.is_empty() && d.bytes().all(|c| c == b'0') => i,
        _ => s,
    };
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = body.to_ascii_lowercase();
    let v = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()?
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()?
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..], 8).ok()?
    } else {
        if lower.is_empty() || !lower.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        lower.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

fn to_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i, _) => *i as f64,
        Value::Float(f, _) => *f,
        Value::Bool(b, _) => f64::from(u8::from(*b)),
        Value::Str(s) => s.as_str().trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

fn list_items(name: &str, v: &Value) -> Result<Vec<Value>, FnError> {
    match v {
        Value::List(l) => Ok(l.as_ref().clone()),
        other => err(format!(
            "Cannot find {name} on type {}",
            other.type_name().trim_start_matches("[]")
        )),
    }
}

fn list_of(name: &str, v: &Value) -> Result<Vec<Value>, FnError> {
    match v {
        Value::List(l) => Ok(l.as_ref().clone()),
        // Sprig reflects on the type of nil and panics.
        Value::Nil => err("runtime error: invalid memory address or nil pointer dereference"),
        other => err(format!("Cannot {name} on type {}", other.type_name())),
    }
}

fn b(v: bool) -> F {
    Ok(Value::Bool(v, None))
}

fn s(v: &str) -> F {
    Ok(Value::str(v))
}

/// Calls function `name`; what it builds is counted in `budget`.
pub fn call(name: &str, args: Vec<Value>, budget: &mut Budget) -> F {
    let a = &args;
    match name {
        // ------------------------------------------------------------------ Go builtins
        "not" => {
            arity(name, a, 1)?;
            b(!a[0].truthy())
        }
        "eq" => {
            min_arity(name, a, 1)?;
            if a.len() == 1 {
                return err("missing argument for comparison");
            }
            for x in &a[1..] {
                if go_eq(&a[0], x)? {
                    return b(true);
                }
            }
            b(false)
        }
        "ne" => {
            arity(name, a, 2)?;
            b(!go_eq(&a[0], &a[1])?)
        }
        "lt" | "le" | "gt" | "ge" => {
            arity(name, a, 2)?;
            let o = go_cmp(&a[0], &a[1])?;
            b(match name {
                "lt" => o == Ordering::Less,
                "le" => o != Ordering::Greater,
                "gt" => o == Ordering::Greater,
                _ => o != Ordering::Less,
            })
        }
        "index" => {
            min_arity(name, a, 1)?;
            let mut v = a[0].clone();
            for k in &a[1..] {
                v = match (&v, k) {
                    (Value::Map(m), Value::Str(key)) => {
                        m.borrow().get(key.as_str()).cloned().unwrap_or(Value::Nil)
                    }
                    (Value::Map(_), Value::Nil) => Value::Nil,
                    (Value::Map(_), other) => {
                        return err(format!(
                            "value has type {}; should be string",
                            other.type_name()
                        ));
                    }
                    (Value::List(l), Value::Int(i, _)) => {
                        if *i < 0 || *i as usize >= l.len() {
                            return err(format!("error calling index: index out of range: {i}"));
                        }
                        l[*i as usize].clone()
                    }
                    (Value::List(_), other) => {
                        return err(format!(
                            "cannot index slice/array with type {}",
                            other.type_name()
                        ));
                    }
                    (Value::Str(t), Value::Int(i, _)) => {
                        let bytes = t.as_str().as_bytes();
                        if *i < 0 || *i as usize >= bytes.len() {
                            return err(format!("error calling index: index out of range: {i}"));
                        }
                        Value::Int(i64::from(bytes[*i as usize]), None)
                    }
                    (Value::Nil, _) => return err("index of untyped nil"),
                    (other, _) => {
                        return err(format!("can't index item of type {}", other.type_name()));
                    }
                };
            }
            Ok(v)
        }
        "len" => {
            arity(name, a, 1)?;
            let n = match &a[0] {
                Value::Str(t) => t.as_str().len(),
                Value::List(l) => l.len(),
                Value::Map(m) => m.borrow().len(),
                Value::Nil => return err("len of nil pointer"),
                other => return err(format!("len of type {}", other.type_name())),
            };
            Ok(Value::Int(n as i64, None))
        }
        "print" => Ok(Value::Str(sprint(a, &mut Walk::new(budget))?)),
        "println" => Ok(Value::Str(sprintln(a, &mut Walk::new(budget))?)),
        "printf" => {
            min_arity(name, a, 1)?;
            let f = text(&a[0])?.clone();
            Ok(Value::Str(sprintf(&f, &a[1..], &mut Walk::new(budget))?))
        }
        "html" => {
            let t = html_escape(&eval_args_string(a, budget)?);
            counted(budget, Value::str(&t))
        }
        "js" => {
            let t = js_escape(&eval_args_string(a, budget)?);
            counted(budget, Value::str(&t))
        }
        "urlquery" => {
            let t = query_escape(&eval_args_string(a, budget)?);
            counted(budget, Value::str(&t))
        }

        // ------------------------------------------------------------------ Helm
        "toYaml" | "mustToYaml" | "toYamlPretty" => {
            arity(name, a, 1)?;
            match yaml::to_yaml_within(&a[0], &mut Walk::new(budget)) {
                Ok(t) => Ok(Value::Str(t.finish())),
                Err(Stop::Value(e)) if name == "mustToYaml" => err(e),
                Err(Stop::Value(_)) => s(""),
                Err(stop) => Err(stop.into()),
            }
        }
        "fromYaml" => {
            arity(name, a, 1)?;
            // Reading costs what the text holds; aliases what they copy.
            budget.charge(st(&a[0])?.len())?;
            match yaml::from_yaml_within(st(&a[0])?, budget) {
                Ok(m @ Value::Map(_)) => Ok(m),
                Ok(Value::Nil) => Ok(Value::empty_map()),
                Ok(other) => Ok(error_map(&format!(
                    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
                    json_kind(&other)
                ))),
                Err(e) => Ok(error_map(&e)),
            }
        }
        "fromYamlArray" => {
            arity(name, a, 1)?;
            budget.charge(st(&a[0])?.len())?;
            match yaml::from_yaml_within(st(&a[0])?, budget) {
                Ok(l @ Value::List(_)) => Ok(l),
                Ok(Value::Nil) => Ok(Value::list(Vec::new())),
                Ok(other) => Ok(Value::list(vec![Value::str(&format!(
                    "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
                    json_kind(&other)
                ))])),
                Err(e) => Ok(Value::list(vec![Value::str(&e)])),
            }
        }
        "toJson" | "mustToJson" | "toRawJson" | "mustToRawJson" => {
            arity(name, a, 1)?;
            let mut out = String::new();
            match yaml::to_json_within(&a[0], &mut out, &mut Walk::new(budget)) {
                Ok(()) => {
                    if name.contains("Raw") {
                        out = out
                            .replace("\\u003c", "<")
                            .replace("\\u003e", ">")
                            .replace("\\u0026", "&");
                    }
                    s(&out)
                }
                Err(Stop::Value(e)) if name.starts_with("must") => err(e),
                Err(Stop::Value(_)) => s(""),
                Err(stop) => Err(stop.into()),
            }
        }
        "toPrettyJson" | "mustToPrettyJson" => {
            arity(name, a, 1)?;
            let mut out = String::new();
            match yaml::to_json_within(&a[0], &mut out, &mut Walk::new(budget)) {
                Ok(()) => {}
                Err(Stop::Value(_)) => return s(""),
                Err(stop) => return Err(stop.into()),
            }
            let j: serde_json::Value =
                serde_json::from_str(&out).unwrap_or(serde_json::Value::Null);
            let pretty = serde_json::to_string_pretty(&j).unwrap_or_default();
            counted(budget, Value::str(&pretty))
        }
        "fromJson" => {
            arity(name, a, 1)?;
            budget.charge(st(&a[0])?.len())?;
            match yaml::from_json(st(&a[0])?) {
                Ok(m @ Value::Map(_)) => Ok(m),
                Ok(_) => Ok(error_map(
                    "json: cannot unmarshal into Go value of type map[string]interface {}",
                )),
                Err(e) => Ok(error_map(&e)),
            }
        }
        "fromJsonArray" => {
            arity(name, a, 1)?;
            budget.charge(st(&a[0])?.len())?;
            match yaml::from_json(st(&a[0])?) {
                Ok(l @ Value::List(_)) => Ok(l),
                Ok(_) => Ok(Value::list(vec![Value::str(
                    "json: cannot unmarshal into Go value of type []interface {}",
                )])),
                Err(e) => Ok(Value::list(vec![Value::str(&e)])),
            }
        }
        "lookup" => Ok(Value::empty_map()),
        "toToml" => Err(FnError::Unsupported),

        // ------------------------------------------------------------------ Sprig: defaults
        "default" => {
            min_arity(name, a, 1)?;
            if a.len() == 1 || a[1].is_empty() {
                Ok(a[0].clone())
            } else {
                Ok(a[1].clone())
            }
        }
        "empty" => {
            arity(name, a, 1)?;
            b(a[0].is_empty())
        }
        "coalesce" => Ok(a
            .iter()
            .find(|v| !v.is_empty())
            .cloned()
            .unwrap_or(Value::Nil)),
        "all" => b(a.iter().all(|v| !v.is_empty())),
        "any" => b(a.iter().any(|v| !v.is_empty())),
        "ternary" => {
            arity(name, a, 3)?;
            match &a[2] {
                Value::Bool(c, _) => Ok(if *c { a[0].clone() } else { a[1].clone() }),
                Value::Nil => err("invalid value; expected bool"),
                other => err(format!(
                    "wrong type for value; expected bool; got {}",
                    other.type_name()
                )),
            }
        }

        // ------------------------------------------------------------------ Sprig: strings
        "quote" | "squote" => {
            let mut out = TextBuf::default();
            let mut first = true;
            for v in a.iter().filter(|v| !matches!(v, Value::Nil)) {
                if !first {
                    out.push_plain(" ");
                }
                first = false;
                let t = strval_text(v, budget)?;
                budget.charge(t.as_str().len() + 3)?;
                if name == "squote" {
                    out.push_plain("'");
                    out.push_text(&t);
                    out.push_plain("'");
                } else {
                    let q = go_quote(t.as_str());
                    if q.len() == t.as_str().len() + 2 {
                        out.push_plain("\"");
                        out.push_text(&t);
                        out.push_plain("\"");
                    } else {
                        out.push_plain(&q);
                    }
                }
            }
            Ok(Value::Str(out.finish()))
        }
        "indent" | "nindent" => {
            arity(name, a, 2)?;
            let n = int_param(&a[0])?;
            let t = text(&a[1])?;
            // The padding once per line, counted before it is built.
            let width = usize::try_from(n.max(0)).unwrap_or(usize::MAX);
            let lines = t.as_str().matches('\n').count() + 1;
            budget.charge(
                width
                    .saturating_mul(lines)
                    .saturating_add(t.as_str().len() + 1),
            )?;
            let pad = " ".repeat(width);
            let mut out = TextBuf::default();
            if name == "nindent" {
                out.push_plain("\n");
            }
            out.push_plain(&pad);
            let s = t.as_str();
            let mut at = 0;
            while let Some(i) = s[at..].find('\n') {
                out.push_text_range(t, at..at + i + 1);
                out.push_plain(&pad);
                at += i + 1;
            }
            out.push_text_range(t, at..s.len());
            Ok(Value::Str(out.finish()))
        }
        "trim" => {
            arity(name, a, 1)?;
            let t = text(&a[0])?;
            let s0 = t.as_str();
            let start = s0.len() - s0.trim_start().len();
            let end = s0.trim_end().len().max(start);
            sub_text(t, start, end, budget)
        }
        "trimAll" | "trimall" => {
            arity(name, a, 2)?;
            let cut = st(&a[0])?.to_string();
            let t = text(&a[1])?;
            let s0 = t.as_str();
            let trimmed_start = s0.trim_start_matches(|c| cut.contains(c));
            let start = s0.len() - trimmed_start.len();
            let end = start + trimmed_start.trim_end_matches(|c| cut.contains(c)).len();
            sub_text(t, start, end, budget)
        }
        "trimPrefix" => {
            arity(name, a, 2)?;
            let p = st(&a[0])?.to_string();
            let t = text(&a[1])?;
            let start = if t.as_str().starts_with(&p) {
                p.len()
            } else {
                0
            };
            sub_text(t, start, t.as_str().len(), budget)
        }
        "trimSuffix" => {
            arity(name, a, 2)?;
            let p = st(&a[0])?.to_string();
            let t = text(&a[1])?;
            let n = t.as_str().len();
            let end = if t.as_str().ends_with(&p) {
                n - p.len()
            } else {
                n
            };
            sub_text(t, 0, end, budget)
        }
        "upper" | "lower" => {
            arity(name, a, 1)?;
            let t = text(&a[0])?;
            let r = if name == "upper" {
                t.as_str().to_uppercase()
            } else {
                t.as_str().to_lowercase()
            };
            if r.len() == t.as_str().len() {
                let mut out = TextBuf::default();
                let base = TextBuf::default();
                drop(base);
                // Same length: keep the segments over the converted text.
                out.push_text(t);
                let (_, segs) = out.into_parts();
                let mut nb = TextBuf::default();
                nb.push_plain(&r);
                nb.segs = segs;
                return counted(budget, Value::Str(nb.finish()));
            }
            counted(budget, Value::str(&r))
        }
        "title" => {
            arity(name, a, 1)?;
            counted(budget, Value::str(&go_title(st(&a[0])?)))
        }
        "untitle" => {
            arity(name, a, 1)?;
            let mut out = String::new();
            let mut prev_space = true;
            for c in st(&a[0])?.chars() {
                if prev_space {
                    out.extend(c.to_lowercase());
                } else {
                    out.push(c);
                }
                prev_space = c.is_whitespace();
            }
            counted(budget, Value::str(&out))
        }
        "replace" => {
            arity(name, a, 3)?;
            let (old, new, src) = (st(&a[0])?, st(&a[1])?, text(&a[2])?);
            // The result's length, counted before it is built: `new` once per match (once per
            // character and once more for an empty `old`).
            let matches = if old.is_empty() {
                src.as_str().chars().count() + 1
            } else {
                src.as_str().matches(old).count()
            };
            budget.charge(
                matches
                    .saturating_mul(new.len())
                    .saturating_add(src.as_str().len()),
            )?;
            if old.is_empty() || matches == 0 {
                if old.is_empty() {
                    return s(&go_replace_empty(src.as_str(), new));
                }
                return Ok(Value::Str(src.clone()));
            }
            let mut out = TextBuf::default();
            let s0 = src.as_str();
            let mut at = 0;
            while let Some(i) = s0[at..].find(old) {
                out.push_text_range(src, at..at + i);
                out.push_plain(new);
                at += i + old.len();
            }
            out.push_text_range(src, at..s0.len());
            Ok(Value::Str(out.finish()))
        }
        "split" => {
            arity(name, a, 2)?;
            let (sep, orig) = (st(&a[0])?, st(&a[1])?);
            let parts = go_split(orig, sep);
            budget.charge(
                parts
                    .len()
                    .saturating_mul(VALUE_BYTES)
                    .saturating_add(orig.len()),
            )?;
            let m: BTreeMap<String, Value> = parts
                .into_iter()
                .enumerate()
                .map(|(i, p)| (format!("_{i}"), Value::str(&p)))
                .collect();
            Ok(Value::map(m))
        }
        "splitList" => {
            arity(name, a, 2)?;
            let (sep, orig) = (st(&a[0])?, st(&a[1])?);
            budget.charge(orig.len())?;
            new_list(
                budget,
                go_split(orig, sep).iter().map(|p| Value::str(p)).collect(),
            )
        }
        "splitn" => {
            arity(name, a, 3)?;
            let sep = st(&a[0])?;
            let n = int_param(&a[1])?;
            let orig = st(&a[2])?;
            let parts: Vec<String> = if n < 0 {
                go_split(orig, sep)
            } else if n == 0 {
                Vec::new()
            } else {
                orig.splitn(n as usize, sep).map(str::to_string).collect()
            };
            budget.charge(
                parts
                    .len()
                    .saturating_mul(VALUE_BYTES)
                    .saturating_add(orig.len()),
            )?;
            let m: BTreeMap<String, Value> = parts
                .into_iter()
                .enumerate()
                .map(|(i, p)| (format!("_{i}"), Value::str(&p)))
                .collect();
            Ok(Value::map(m))
        }
        "join" => {
            arity(name, a, 2)?;
            let sep = text(&a[0])?.clone();
            let items = strslice(&a[1], budget)?;
            // The result's length, counted before it is built.
            let len = items
                .iter()
                .map(size_of)
                .fold(0usize, usize::saturating_add)
                .saturating_add(items.len().saturating_mul(sep.as_str().len()));
            budget.charge(len)?;
            let mut out = TextBuf::default();
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push_text(&sep);
                }
                if let Value::Str(t) = v {
                    out.push_text(t);
                }
            }
            Ok(Value::Str(out.finish()))
        }
        "contains" => {
            arity(name, a, 2)?;
            b(st(&a[1])?.contains(st(&a[0])?))
        }
        "hasPrefix" => {
            arity(name, a, 2)?;
            b(st(&a[1])?.starts_with(st(&a[0])?))
        }
        "hasSuffix" => {
            arity(name, a, 2)?;
            b(st(&a[1])?.ends_with(st(&a[0])?))
        }
        "repeat" => {
            arity(name, a, 2)?;
            let n = int_param(&a[0])?;
            if n < 0 {
                return err("strings: negative Repeat count");
            }
            let s0 = st(&a[1])?;
            let len = s0
                .len()
                .saturating_mul(usize::try_from(n).unwrap_or(usize::MAX));
            if len > 16 << 20 {
                return err("repeat: result too large");
            }
            budget.charge(len)?;
            s(&s0.repeat(n as usize))
        }
        "substr" => {
            arity(name, a, 3)?;
            let (start, end) = (int_param(&a[0])?, int_param(&a[1])?);
            let t = text(&a[2])?;
            let n = t.as_str().len() as i64;
            let (lo, hi) = if start < 0 {
                (0, end)
            } else if end < 0 || end > n {
                (start, n)
            } else {
                (start, end)
            };
            if lo > hi
                || hi > n
                || !t.as_str().is_char_boundary(lo as usize)
                || !t.as_str().is_char_boundary(hi as usize)
            {
                return err("slice bounds out of range");
            }
            sub_text(t, lo as usize, hi as usize, budget)
        }
        "trunc" => {
            arity(name, a, 2)?;
            let c = int_param(&a[0])?;
            let t = text(&a[1])?;
            let n = t.as_str().len() as i64;
            let (lo, hi) = if c < 0 && n + c > 0 {
                (n + c, n)
            } else if c >= 0 && n > c {
                (0, c)
            } else {
                (0, n)
            };
            if !t.as_str().is_char_boundary(lo as usize)
                || !t.as_str().is_char_boundary(hi as usize)
            {
                return err("trunc: not at a character boundary");
            }
            sub_text(t, lo as usize, hi as usize, budget)
        }
        "nospace" => {
            arity(name, a, 1)?;
            // goutils' DeleteWhiteSpace reads bytes as Latin-1 runes: when it removes any,
            // non-ASCII text comes out re-encoded ("ü" is "Ã¼"), and the bytes 0x85 and 0xA0
            // count as spaces. With nothing to remove, the string is returned as it is.
            let text = st(&a[0])?;
            let is_space = |b: &u8| matches!(b, b'\t'..=b'\r' | b' ' | 0x85 | 0xa0);
            if !text.bytes().any(|b| is_space(&b)) {
                return Ok(a[0].clone());
            }
            let out: String = text
                .bytes()
                .filter(|b| !is_space(b))
                .map(char::from)
                .collect();
            counted(budget, Value::str(&out))
        }
        "cat" => {
            let parts: Vec<Value> = a
                .iter()
                .filter(|v| !matches!(v, Value::Nil))
                .cloned()
                .collect();
            let mut texts = Vec::with_capacity(parts.len());
            for v in &parts {
                let t = strval_text(v, budget)?;
                budget.charge(t.as_str().len() + 1)?;
                texts.push(t);
            }
            let mut out = TextBuf::default();
            for (i, t) in texts.iter().enumerate() {
                if i > 0 {
                    out.push_plain(" ");
                }
                out.push_text(t);
            }
            Ok(Value::Str(out.finish()))
        }
        "toString" => {
            arity(name, a, 1)?;
            Ok(Value::Str(strval_text(&a[0], budget)?))
        }
        "toStrings" => {
            arity(name, a, 1)?;
            Ok(Value::list(strslice(&a[0], budget)?))
        }
        "kebabcase" | "snakecase" => {
            arity(name, a, 1)?;
            let sep = if name == "kebabcase" { '-' } else { '_' };
            counted(budget, Value::str(&case_words(st(&a[0])?, sep)))
        }
        "base" | "dir" | "ext" | "clean" | "isAbs" => {
            arity(name, a, 1)?;
            let p = st(&a[0])?;
            match name {
                "base" => s(&path_base(p)),
                "dir" => s(&path_dir(p)),
                "ext" => {
                    let base = p.rsplit('/').next().unwrap_or("");
                    s(base.rfind('.').map_or("", |i| &base[i..]))
                }
                "clean" => s(&path_clean(p)),
                _ => b(p.starts_with('/')),
            }
        }

        // ------------------------------------------------------------------ Sprig: conversion
        "int" | "int64" => {
            arity(name, a, 1)?;
            Ok(Value::Int(to_i64(&a[0]), None))
        }
        "float64" => {
            arity(name, a, 1)?;
            Ok(Value::Float(to_f64(&a[0]), None))
        }
        "atoi" => {
            arity(name, a, 1)?;
            Ok(Value::Int(st(&a[0])?.parse().unwrap_or(0), None))
        }
        "toDecimal" => {
            arity(name, a, 1)?;
            Ok(Value::Int(
                i64::from_str_radix(&strval_in(&a[0], budget)?, 8).unwrap_or(0),
                None,
            ))
        }

        // ------------------------------------------------------------------ Sprig: math
        "add" => Ok(Value::Int(
            a.iter().map(to_i64).fold(0i64, i64::wrapping_add),
            None,
        )),
        "add1" => {
            arity(name, a, 1)?;
            Ok(Value::Int(to_i64(&a[0]).wrapping_add(1), None))
        }
        "sub" => {
            arity(name, a, 2)?;
            Ok(Value::Int(to_i64(&a[0]).wrapping_sub(to_i64(&a[1])), None))
        }
        "mul" => {
            min_arity(name, a, 1)?;
            Ok(Value::Int(
                a.iter().map(to_i64).fold(1i64, i64::wrapping_mul),
                None,
            ))
        }
        "div" | "mod" => {
            arity(name, a, 2)?;
            let d = to_i64(&a[1]);
            if d == 0 {
                return err("runtime error: integer divide by zero");
            }
            let n = to_i64(&a[0]);
            Ok(Value::Int(
                if name == "div" {
                    n.wrapping_div(d)
                } else {
                    n.wrapping_rem(d)
                },
                None,
            ))
        }
        "max" | "min" => {
            min_arity(name, a, 1)?;
            let it = a.iter().map(to_i64);
            let v = if name == "max" { it.max() } else { it.min() };
            Ok(Value::Int(v.unwrap_or(0), None))
        }
        "floor" | "ceil" => {
            arity(name, a, 1)?;
            let f = to_f64(&a[0]);
            Ok(Value::Float(
                if name == "floor" { f.floor() } else { f.ceil() },
                None,
            ))
        }
        "round" => {
            min_arity(name, a, 2)?;
            let f = to_f64(&a[0]);
            let p = int_param(&a[1])?;
            let pow = 10f64.powi(p as i32);
            let r = if a.len() > 2 { to_f64(&a[2]) } else { 0.5 };
            let digit = f * pow;
            let (int_part, frac) = (digit.trunc(), digit.fract());
            let rounded = if frac.abs() >= r {
                int_part + digit.signum()
            } else {
                int_part
            };
            Ok(Value::Float(rounded / pow, None))
        }
        "addf" | "subf" | "mulf" | "divf" => {
            min_arity(name, a, 1)?;
            let mut it = a.iter().map(to_f64);
            let first = it.next().unwrap_or(0.0);
            let v = it.fold(first, |acc, x| match name {
                "addf" => acc + x,
                "subf" => acc - x,
                "mulf" => acc * x,
                _ => acc / x,
            });
            Ok(Value::Float(v, None))
        }
        "until" => {
            arity(name, a, 1)?;
            let n = int_param(&a[0])?;
            counted_result(budget, range_list(0, n, if n < 0 { -1 } else { 1 }))
        }
        "untilStep" => {
            arity(name, a, 3)?;
            let list = range_list(int_param(&a[0])?, int_param(&a[1])?, int_param(&a[2])?);
            counted_result(budget, list)
        }
        "seq" => {
            let n: Vec<i64> = a.iter().map(to_i64).collect();
            let (start, end, step) = match n.as_slice() {
                [] => return s(""),
                [e] => (1, *e, if *e >= 1 { 1 } else { -1 }),
                [st, e] => (*st, *e, if e >= st { 1 } else { -1 }),
                [st, stp, e] => (*st, *e, *stp),
                _ => return err("seq: too many args"),
            };
            if step == 0 || (step > 0 && start > end) || (step < 0 && start < end) {
                return s("");
            }
            let mut out = Vec::new();
            let mut i = start;
            while (step > 0 && i <= end) || (step < 0 && i >= end) {
                out.push(i.to_string());
                i += step;
                if out.len() > 1_000_000 {
                    return err("seq: too many items");
                }
            }
            counted(budget, Value::str(&out.join(" ")))
        }

        // ------------------------------------------------------------------ Sprig: lists
        "list" | "tuple" => new_list(budget, a.clone()),
        "first" | "mustFirst" => {
            arity(name, a, 1)?;
            let l = list_items("first", &a[0])?;
            Ok(l.first().cloned().unwrap_or(Value::Nil))
        }
        "last" | "mustLast" => {
            arity(name, a, 1)?;
            let l = list_items("last", &a[0])?;
            Ok(l.last().cloned().unwrap_or(Value::Nil))
        }
        "rest" | "mustRest" => {
            arity(name, a, 1)?;
            let l = list_items("rest", &a[0])?;
            if l.is_empty() {
                // Sprig returns a nil `[]interface{}`: it prints as `[]`, not as nil.
                return Ok(Value::list(Vec::new()));
            }
            new_list(budget, l[1..].to_vec())
        }
        "initial" | "mustInitial" => {
            arity(name, a, 1)?;
            let l = list_items("initial", &a[0])?;
            if l.is_empty() {
                // Sprig returns a nil `[]interface{}`: it prints as `[]`, not as nil.
                return Ok(Value::list(Vec::new()));
            }
            new_list(budget, l[..l.len() - 1].to_vec())
        }
        "append" | "mustAppend" | "push" | "mustPush" => {
            arity(name, a, 2)?;
            let mut l = list_of("push", &a[0])?;
            l.push(a[1].clone());
            new_list(budget, l)
        }
        "prepend" | "mustPrepend" => {
            arity(name, a, 2)?;
            let mut l = list_of("prepend", &a[0])?;
            l.insert(0, a[1].clone());
            new_list(budget, l)
        }
        "uniq" | "mustUniq" => {
            arity(name, a, 1)?;
            let l = list_of("uniq", &a[0])?;
            let mut out: Vec<Value> = Vec::new();
            for x in l {
                if !in_list(&x, &out, budget)? {
                    out.push(x);
                }
            }
            new_list(budget, out)
        }
        "has" | "mustHas" => {
            arity(name, a, 2)?;
            match &a[1] {
                Value::Nil => b(false),
                Value::List(l) => b(in_list(&a[0], l, budget)?),
                other => err(format!("Cannot find has on type {}", other.type_name())),
            }
        }
        "without" | "mustWithout" => {
            min_arity(name, a, 1)?;
            let l = list_of("without", &a[0])?;
            let mut out = Vec::with_capacity(l.len());
            for x in l {
                if !in_list(&x, &a[1..], budget)? {
                    out.push(x);
                }
            }
            new_list(budget, out)
        }
        "compact" | "mustCompact" => {
            arity(name, a, 1)?;
            let l = list_of("compact", &a[0])?;
            new_list(budget, l.into_iter().filter(|x| !x.is_empty()).collect())
        }
        "concat" => {
            let mut out = Vec::new();
            for x in a {
                match x {
                    Value::List(l) => {
                        budget.charge(l.len().saturating_mul(VALUE_BYTES))?;
                        out.extend(l.iter().cloned());
                    }
                    other => {
                        return err(format!("Cannot concat type {} as list", other.type_name()));
                    }
                }
            }
            Ok(Value::list(out))
        }
        "reverse" | "mustReverse" => {
            arity(name, a, 1)?;
            let mut l = list_of("reverse", &a[0])?;
            l.reverse();
            new_list(budget, l)
        }
        "sortAlpha" => {
            arity(name, a, 1)?;
            let mut l: Vec<String> = match &a[0] {
                Value::List(_) => strslice(&a[0], budget)?.iter().map(strval).collect(),
                other => vec![strval_in(other, budget)?],
            };
            l.sort();
            Ok(Value::list(l.iter().map(|x| Value::str(x)).collect()))
        }
        "slice" => {
            min_arity(name, a, 1)?;
            let l = match &a[0] {
                Value::List(l) => l.as_ref().clone(),
                other => {
                    return err(format!(
                        "list should be type of slice or array but {}",
                        other.kind_name()
                    ));
                }
            };
            let n = l.len() as i64;
            let lo = a.get(1).map_or(0, to_i64);
            let hi = a.get(2).map_or(n, to_i64);
            if lo < 0 || hi > n || lo > hi {
                return err(format!("slice bounds out of range [{lo}:{hi}]"));
            }
            new_list(budget, l[lo as usize..hi as usize].to_vec())
        }
        "chunk" => {
            arity(name, a, 2)?;
            let size = int_param(&a[0])?;
            let l = list_of("chunk", &a[1])?;
            if size <= 0 {
                return err("chunk size must be positive");
            }
            budget.charge(l.len().saturating_mul(2 * VALUE_BYTES))?;
            Ok(Value::list(
                l.chunks(size as usize)
                    .map(|c| Value::list(c.to_vec()))
                    .collect(),
            ))
        }

        // ------------------------------------------------------------------ Sprig: dicts
        "dict" => {
            let mut m = BTreeMap::new();
            let mut i = 0;
            budget.charge(a.len().saturating_mul(VALUE_BYTES))?;
            while i < a.len() {
                let k = strval_in(&a[i], budget)?;
                let v = a.get(i + 1).cloned().unwrap_or_else(|| Value::str(""));
                m.insert(k, v);
                i += 2;
            }
            Ok(Value::map(m))
        }
        "get" => {
            arity(name, a, 2)?;
            let m = map_param(&a[0])?;
            let k = st(&a[1])?;
            Ok(m.borrow().get(k).cloned().unwrap_or_else(|| Value::str("")))
        }
        "set" => {
            arity(name, a, 3)?;
            let m = map_param(&a[0])?;
            let k = st(&a[1])?.to_string();
            m.borrow_mut().insert(k, a[2].clone());
            Ok(a[0].clone())
        }
        "unset" => {
            arity(name, a, 2)?;
            let m = map_param(&a[0])?;
            let k = st(&a[1])?.to_string();
            m.borrow_mut().remove(&k);
            Ok(a[0].clone())
        }
        "hasKey" => {
            arity(name, a, 2)?;
            let m = map_param(&a[0])?;
            b(m.borrow().contains_key(st(&a[1])?))
        }
        "keys" => {
            let mut out = Vec::new();
            for d in a {
                for k in map_param(d)?.borrow().keys() {
                    out.push(Value::str(k));
                }
            }
            new_list(budget, out)
        }
        "values" => {
            arity(name, a, 1)?;
            let values = map_param(&a[0])?.borrow().values().cloned().collect();
            new_list(budget, values)
        }
        "pick" | "omit" => {
            min_arity(name, a, 1)?;
            let m = map_param(&a[0])?;
            let mut ks = Vec::new();
            for k in &a[1..] {
                ks.push(st(k)?.to_string());
            }
            let out: BTreeMap<String, Value> = m
                .borrow()
                .iter()
                .filter(|(k, _)| ks.contains(k) == (name == "pick"))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            counted(budget, Value::map(out))
        }
        "merge" | "mustMerge" | "mergeOverwrite" | "mustMergeOverwrite" => {
            min_arity(name, a, 1)?;
            let dst = map_param(&a[0])?.clone();
            for src in &a[1..] {
                let src = map_param(src)?;
                if std::rc::Rc::ptr_eq(&dst, src) {
                    continue;
                }
                // A snapshot: `src` may also be reachable from `dst`, which is mutated.
                let src = src.borrow().clone();
                merge_into(
                    &dst,
                    &src,
                    name.contains("Overwrite"),
                    &mut Walk::new(budget),
                )?;
            }
            Ok(Value::Map(dst))
        }
        "deepCopy" | "mustDeepCopy" => {
            arity(name, a, 1)?;
            Ok(a[0].copy_within(&mut Walk::new(budget))?)
        }
        "dig" => {
            min_arity(name, a, 3)?;
            let dict = map_param(&a[a.len() - 1])?.clone();
            let default = a[a.len() - 2].clone();
            let mut cur = Value::Map(dict);
            for k in &a[..a.len() - 2] {
                let k = st(k)?;
                let next = match &cur {
                    Value::Map(m) => m.borrow().get(k).cloned(),
                    _ => return err("dig: not a map"),
                };
                match next {
                    Some(v) => cur = v,
                    None => return Ok(default),
                }
            }
            Ok(cur)
        }
        "pluck" => {
            min_arity(name, a, 1)?;
            let k = st(&a[0])?;
            let mut out = Vec::new();
            for d in &a[1..] {
                if let Some(v) = map_param(d)?.borrow().get(k) {
                    out.push(v.clone());
                }
            }
            new_list(budget, out)
        }

        // ------------------------------------------------------------------ Sprig: misc
        "semverCompare" => {
            arity(name, a, 2)?;
            crate::semver::compare(st(&a[0])?, st(&a[1])?)
                .map(|x| Value::Bool(x, None))
                .map_err(FnError::Msg)
        }
        "regexMatch" | "mustRegexMatch" => {
            arity(name, a, 2)?;
            match regex::Regex::new(st(&a[0])?) {
                Ok(r) => b(r.is_match(st(&a[1])?)),
                Err(e) if name == "mustRegexMatch" => err(e.to_string()),
                Err(_) => b(false),
            }
        }
        "regexReplaceAll" | "mustRegexReplaceAll" | "regexReplaceAllLiteral" => {
            arity(name, a, 3)?;
            let r = regex::Regex::new(st(&a[0])?).map_err(|e| FnError::Msg(e.to_string()))?;
            let src = st(&a[1])?;
            let rep = st(&a[2])?;
            // The result's length at most, counted before it is built: each match replaced by
            // `rep`, where each `$` may expand to a match as long as the longest.
            let (mut matches, mut longest) = (0usize, 0usize);
            for m in r.find_iter(src) {
                matches += 1;
                longest = longest.max(m.len());
            }
            let expansions = if name == "regexReplaceAllLiteral" {
                0
            } else {
                rep.matches('$').count()
            };
            let per_match = rep.len().saturating_add(expansions.saturating_mul(longest));
            budget.charge(matches.saturating_mul(per_match).saturating_add(src.len()))?;
            if name == "regexReplaceAllLiteral" {
                s(&r.replace_all(src, regex::NoExpand(rep)))
            } else {
                s(&r.replace_all(src, rep))
            }
        }
        "regexFind" => {
            arity(name, a, 2)?;
            let r = regex::Regex::new(st(&a[0])?).map_err(|e| FnError::Msg(e.to_string()))?;
            s(r.find(st(&a[1])?).map_or("", |m| m.as_str()))
        }
        "regexFindAll" => {
            arity(name, a, 3)?;
            let r = regex::Regex::new(st(&a[0])?).map_err(|e| FnError::Msg(e.to_string()))?;
            let n = int_param(&a[2])?;
            budget.charge(st(&a[1])?.len())?;
            let it = r.find_iter(st(&a[1])?).map(|m| Value::str(m.as_str()));
            let v: Vec<Value> = if n < 0 {
                it.collect()
            } else {
                it.take(n as usize).collect()
            };
            new_list(budget, v)
        }
        "regexSplit" => {
            arity(name, a, 3)?;
            let r = regex::Regex::new(st(&a[0])?).map_err(|e| FnError::Msg(e.to_string()))?;
            let n = int_param(&a[2])?;
            let src = st(&a[1])?;
            budget.charge(src.len())?;
            let v: Vec<Value> = if n < 0 {
                r.split(src).map(Value::str).collect()
            } else if n == 0 {
                Vec::new()
            } else {
                r.splitn(src, n as usize).map(Value::str).collect()
            };
            new_list(budget, v)
        }
        "b64enc" => {
            arity(name, a, 1)?;
            let t = data_encoding::BASE64.encode(st(&a[0])?.as_bytes());
            counted(budget, Value::str(&t))
        }
        "b64dec" => {
            arity(name, a, 1)?;
            match data_encoding::BASE64.decode(st(&a[0])?.as_bytes()) {
                Ok(bytes) => counted(budget, Value::str(&String::from_utf8_lossy(&bytes))),
                Err(e) => s(&format!("illegal base64 data at input byte {}", e.position)),
            }
        }
        "b32enc" => {
            arity(name, a, 1)?;
            let t = data_encoding::BASE32.encode(st(&a[0])?.as_bytes());
            counted(budget, Value::str(&t))
        }
        "b32dec" => {
            arity(name, a, 1)?;
            match data_encoding::BASE32.decode(st(&a[0])?.as_bytes()) {
                Ok(bytes) => counted(budget, Value::str(&String::from_utf8_lossy(&bytes))),
                Err(e) => s(&format!("illegal base32 data at input byte {}", e.position)),
            }
        }
        "sha256sum" => {
            arity(name, a, 1)?;
            // Hashing costs what the text holds.
            budget.charge(st(&a[0])?.len())?;
            s(&crate::sha256::hex_digest(st(&a[0])?.as_bytes()))
        }
        "kindOf" => {
            arity(name, a, 1)?;
            s(a[0].kind_name())
        }
        "kindIs" => {
            arity(name, a, 2)?;
            b(st(&a[0])? == a[1].kind_name())
        }
        "typeOf" => {
            arity(name, a, 1)?;
            s(&a[0].type_name())
        }
        "typeIs" => {
            arity(name, a, 2)?;
            b(st(&a[0])? == a[1].type_name())
        }
        _ => Err(FnError::Unsupported),
    }
}

fn error_map(msg: &str) -> Value {
    let mut m = BTreeMap::new();
    m.insert("Error".to_string(), Value::str(msg));
    Value::map(m)
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Str(_) => "string",
        Value::Float(..) | Value::Int(..) => "number",
        Value::Bool(..) => "bool",
        Value::List(_) => "array",
        _ => "object",
    }
}

fn sub_text(t: &Text, start: usize, end: usize, budget: &mut Budget) -> F {
    budget.charge(end - start)?;
    let mut out = TextBuf::default();
    out.push_text_range(t, start..end);
    Ok(Value::Str(out.finish()))
}

fn counted_result(budget: &mut Budget, v: F) -> F {
    counted(budget, v?)
}

fn range_list(start: i64, stop: i64, step: i64) -> F {
    let mut v = Vec::new();
    if step == 0 {
        return Ok(Value::list(v));
    }
    // Refused before any item is built.
    let count = (i128::from(stop) - i128::from(start)) / i128::from(step);
    if count > 1_000_000 {
        return err("until: too many items");
    }
    let mut i = start;
    while (step > 0 && i < stop) || (step < 0 && i > stop) {
        v.push(Value::Int(i, None));
        i += step;
        if v.len() > 1_000_000 {
            return err("until: too many items");
        }
    }
    Ok(Value::list(v))
}

fn merge_into(
    dst: &crate::value::MapRef,
    src: &BTreeMap<String, Value>,
    overwrite: bool,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    // mergo's rules: a nil source value is skipped (`mergeOverwrite` copies it), maps merge
    // key by key, and anything else fills a missing or empty destination (or any, when
    // overwriting).
    let at = Value::Map(dst.clone());
    walk.enter(&at)?;
    for (k, sv) in src {
        walk.charge(VALUE_BYTES)?;
        let dv = dst.borrow().get(k).cloned();
        match (&dv, sv) {
            (_, Value::Nil) => {
                if overwrite {
                    dst.borrow_mut().insert(k.clone(), Value::Nil);
                }
            }
            (Some(Value::Map(dm)), Value::Map(sm)) => {
                if !std::rc::Rc::ptr_eq(dm, sm) {
                    let sm = sm.borrow().clone();
                    crate::budget::with_stack(|| merge_into(dm, &sm, overwrite, walk))?;
                }
            }
            (None, sv) => {
                dst.borrow_mut().insert(k.clone(), sv.clone());
            }
            (Some(d), sv) => {
                if overwrite || d.is_empty() {
                    dst.borrow_mut().insert(k.clone(), sv.clone());
                }
            }
        }
    }
    walk.leave(&at);
    Ok(())
}

fn go_eq(a: &Value, b: &Value) -> Result<bool, FnError> {
    use Value::*;
    Ok(match (a, b) {
        (Nil, Nil) => true,
        (Nil, _) | (_, Nil) => false,
        (Bool(x, _), Bool(y, _)) => x == y,
        (Int(x, _), Int(y, _)) => x == y,
        (Float(x, _), Float(y, _)) => x == y,
        (Str(x), Str(y)) => x.as_str() == y.as_str(),
        (Bool(..) | Int(..) | Float(..) | Str(_), Bool(..) | Int(..) | Float(..) | Str(_)) => {
            return err(format!(
                "incompatible types for comparison: {} and {}",
                a.type_name(),
                b.type_name()
            ));
        }
        _ => {
            return err(format!(
                "non-comparable type {}: {}",
                b.type_name(),
                b.to_go_string()
            ));
        }
    })
}

fn go_cmp(a: &Value, b: &Value) -> Result<Ordering, FnError> {
    use Value::*;
    match (a, b) {
        (Int(x, _), Int(y, _)) => Ok(x.cmp(y)),
        (Float(x, _), Float(y, _)) => Ok(x.partial_cmp(y).unwrap_or(Ordering::Equal)),
        (Str(x), Str(y)) => Ok(x.as_str().cmp(y.as_str())),
        (Int(..) | Float(..) | Str(_), Int(..) | Float(..) | Str(_)) => {
            err("incompatible types for comparison")
        }
        _ => err("invalid type for comparison"),
    }
}

/// Go's `evalArgs` for `html`/`js`/`urlquery`: one string argument as is, else `fmt.Sprint`.
fn eval_args_string(a: &[Value], budget: &mut Budget) -> Result<String, Stop> {
    Ok(match a {
        [Value::Str(s)] => s.as_str().to_string(),
        _ => sprint(a, &mut Walk::new(budget))?.as_str().to_string(),
    })
}

fn html_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => o.push_str("&#34;"),
            '\'' => o.push_str("&#39;"),
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '\0' => o.push('\u{FFFD}'),
            c => o.push(c),
        }
    }
    o
}

fn js_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '\'' => o.push_str("\\'"),
            '"' => o.push_str("\\\""),
            '<' => o.push_str("\\u003C"),
            '>' => o.push_str("\\u003E"),
            '&' => o.push_str("\\u0026"),
            '=' => o.push_str("\\u003D"),
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\t' => o.push_str("\\t"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04X}", c as u32)),
            c => o.push(c),
        }
    }
    o
}

fn query_escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len());
    for byte in s.bytes() {
        match byte {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                o.push(byte as char)
            }
            b' ' => o.push('+'),
            _ => o.push_str(&format!("%{byte:02X}")),
        }
    }
    o
}

/// Go's deprecated `strings.Title`.
fn go_title(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut prev_sep = true;
    for c in s.chars() {
        if prev_sep {
            out.extend(c.to_uppercase());
        } else {
            out.push(c);
        }
        prev_sep = if c.is_ascii() {
            !(c.is_ascii_alphanumeric() || c == '_')
        } else if c.is_alphanumeric() {
            false
        } else {
            c.is_whitespace()
        };
    }
    out
}

/// `strings.Split`: an empty separator splits into characters.
fn go_split(s: &str, sep: &str) -> Vec<String> {
    if sep.is_empty() {
        return s.chars().map(|c| c.to_string()).collect();
    }
    s.split(sep).map(str::to_string).collect()
}

fn go_replace_empty(s: &str, new: &str) -> String {
    let mut out = String::from(new);
    for c in s.chars() {
        out.push(c);
        out.push_str(new);
    }
    out
}

fn case_words(s: &str, sep: char) -> String {
    let mut out = String::new();
    let chars: Vec<char> = s.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        if c.is_uppercase() {
            if i > 0
                && (chars[i - 1].is_lowercase() || chars[i - 1].is_ascii_digit())
                && !out.ends_with(sep)
            {
                out.push(sep);
            }
            out.extend(c.to_lowercase());
        } else if c.is_alphanumeric() {
            out.push(*c);
        } else if !out.is_empty() && !out.ends_with(sep) {
            out.push(sep);
        }
    }
    out.trim_end_matches(sep).to_string()
}

fn path_clean(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let rooted = p.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for seg in p.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else if !rooted {
                    parts.push("..");
                }
            }
            s => parts.push(s),
        }
    }
    let body = parts.join("/");
    match (rooted, body.is_empty()) {
        (true, _) => format!("/{body}"),
        (false, true) => ".".into(),
        (false, false) => body,
    }
}

fn path_base(p: &str) -> String {
    if p.is_empty() {
        return ".".into();
    }
    let t = p.trim_end_matches('/');
    if t.is_empty() {
        return "/".into();
    }
    t.rsplit('/').next().unwrap_or(t).to_string()
}

fn path_dir(p: &str) -> String {
    let i = p.rfind('/').map_or(0, |i| i + 1);
    path_clean(&p[..i])
}
