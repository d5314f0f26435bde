//! YAML and JSON as Helm's `toYaml`/`fromYaml`/`toJson`/`fromJson` see them:
//! `sigs.k8s.io/yaml` over go-yaml v2 (YAML 1.1 scalars, every number a `float64`, map keys
//! sorted the go-yaml way).

use std::collections::BTreeMap;

use granit_parser::{Event, Parser, ScalarStyle};

use crate::budget::{Budget, Stop, VALUE_BYTES, Walk, with_stack};
use crate::text::{Source, TextBuf};
use crate::value::{Value, format_float_g};

// ----------------------------------------------------------------------------- reading

/// Parses the first YAML document of `text` into values (`fromYaml`, values files).
pub fn from_yaml(text: &str) -> Result<Value, String> {
    read_yaml(text, &mut Budget::new(MAX_ALIAS_BYTES))
}

/// What aliases may copy in one document: a million nodes, as the YAML layer of gitops-lint
/// allows (go-yaml v2 refuses excessive aliasing too).
const MAX_ALIAS_BYTES: usize = 1_000_000 * VALUE_BYTES;

/// [`from_yaml`], the nodes that aliases copy counted in `budget` too.
pub(crate) fn from_yaml_within(text: &str, budget: &mut Budget) -> Result<Value, String> {
    let mut aliases = Budget::new(MAX_ALIAS_BYTES);
    let v = read_yaml(text, &mut aliases);
    budget
        .charge(aliases.used())
        .map_err(|(Stop::Value(m) | Stop::Budget(m))| m)?;
    v
}

fn read_yaml(text: &str, budget: &mut Budget) -> Result<Value, String> {
    let mut parser = Parser::new_from_str(text);
    let mut stack: Vec<(Value, Option<String>)> = Vec::new();
    let mut anchors: BTreeMap<usize, Value> = BTreeMap::new();
    let mut anchor_stack: Vec<usize> = Vec::new();
    let mut root: Option<Value> = None;
    let mut seen_doc = false;
    // Returns true when the document is complete.
    fn attach(
        stack: &mut [(Value, Option<String>)],
        root: &mut Option<Value>,
        v: Value,
    ) -> Result<(), String> {
        match stack.last_mut() {
            None => {
                *root = Some(v);
                Ok(())
            }
            Some((Value::List(l), _)) => {
                std::rc::Rc::make_mut(l).push(v);
                Ok(())
            }
            Some((Value::Map(m), key)) => match key.take() {
                None => {
                    *key = Some(key_string(&v)?);
                    Ok(())
                }
                Some(k) => {
                    if k == "<<" {
                        if let Value::Map(src) = &v {
                            let src = src.borrow().clone();
                            let mut mm = m.borrow_mut();
                            for (sk, sv) in src {
                                mm.entry(sk).or_insert(sv);
                            }
                            return Ok(());
                        }
                    }
                    m.borrow_mut().insert(k, v);
                    Ok(())
                }
            },
            Some(_) => Err("bad YAML structure".into()),
        }
    }
    loop {
        let ev = match parser.next_event() {
            None => break,
            Some(Ok((ev, _))) => ev,
            Some(Err(e)) => {
                return Err(format!("error converting YAML to JSON: yaml: {}", e.info()));
            }
        };
        match ev {
            Event::DocumentStart(..) => {
                if seen_doc {
                    break;
                }
                seen_doc = true;
            }
            Event::DocumentEnd | Event::StreamEnd if root.is_some() || seen_doc => break,
            Event::Scalar(s, style, anchor, tag) => {
                let v = if style == ScalarStyle::Plain && tag.is_none() {
                    resolve_plain(&s)
                } else if let Some(t) = tag.as_ref().map(|t| t.to_string()) {
                    if t.ends_with(":str") || t.ends_with("!str") {
                        Value::str(&s)
                    } else {
                        resolve_plain(&s)
                    }
                } else {
                    Value::str(&s)
                };
                if anchor > 0 {
                    anchors.insert(anchor, v.clone());
                }
                attach(&mut stack, &mut root, v)?;
            }
            Event::Alias(id) => {
                let v = anchors.get(&id).cloned().unwrap_or(Value::Nil);
                let copy = v
                    .copy_within(&mut Walk::new(budget))
                    .map_err(|_| "yaml: document contains excessive aliasing".to_string())?;
                attach(&mut stack, &mut root, copy)?;
            }
            Event::SequenceStart(_, anchor, _) => {
                stack.push((Value::list(Vec::new()), None));
                anchor_stack.push(anchor);
            }
            Event::MappingStart(_, anchor, _) => {
                stack.push((Value::empty_map(), None));
                anchor_stack.push(anchor);
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some((v, _)) = stack.pop() else {
                    return Err("bad YAML structure".into());
                };
                if let Some(a) = anchor_stack.pop() {
                    if a > 0 {
                        anchors.insert(a, v.clone());
                    }
                }
                attach(&mut stack, &mut root, v)?;
            }
            _ => {}
        }
    }
    Ok(root.unwrap_or(Value::Nil))
}

fn key_string(v: &Value) -> Result<String, String> {
    Ok(match v {
        Value::Nil => "null".into(),
        Value::Bool(b, _) => b.to_string(),
        Value::Float(f, _) => format_float_g(*f),
        Value::Int(i, _) => i.to_string(),
        Value::Str(s) => s.as_str().to_string(),
        _ => return Err("error converting YAML to JSON: unsupported map key".into()),
    })
}

/// YAML 1.1 resolution of a plain scalar as go-yaml v2 does, numbers as `float64` (JSON).
#[must_use]
pub fn resolve_plain(s: &str) -> Value {
    match s {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Nil,
        "y" | "Y" | "yes" | "Yes" | "YES" | "on" | "On" | "ON" | "true" | "True" | "TRUE" => {
            return Value::Bool(true, None);
        }
        "n" | "N" | "no" | "No" | "NO" | "off" | "Off" | "OFF" | "false" | "False" | "FALSE" => {
            return Value::Bool(false, None);
        }
        ".inf" | ".Inf" | ".INF" | "+.inf" | "+.Inf" | "+.INF" => {
            return Value::Float(f64::INFINITY, None);
        }
        "-.inf" | "-.Inf" | "-.INF" => return Value::Float(f64::NEG_INFINITY, None),
        ".nan" | ".NaN" | ".NAN" => return Value::Float(f64::NAN, None),
        _ => {}
    }
    if let Some(n) = parse_yaml_int(s) {
        return Value::Float(n as f64, None);
    }
    if is_yaml_float(s) {
        if let Ok(f) = s.replace('_', "").parse::<f64>() {
            return Value::Float(f, None);
        }
    }
    Value::str(s)
}

fn parse_yaml_int(s: &str) -> Option<i128> {
    let (neg, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    if body.is_empty() {
        return None;
    }
    let clean: String = body.chars().filter(|c| *c != '_').collect();
    if clean.is_empty() {
        return None;
    }
    let v = if let Some(b) = clean.strip_prefix("0b") {
        i128::from_str_radix(b, 2).ok()?
    } else if let Some(h) = clean.strip_prefix("0x") {
        i128::from_str_radix(h, 16).ok()?
    } else if clean.len() > 1 && clean.starts_with('0') {
        i128::from_str_radix(&clean[1..], 8).ok()?
    } else if clean.bytes().all(|c| c.is_ascii_digit()) {
        clean.parse().ok()?
    } else {
        return None;
    };
    Some(if neg { -v } else { v })
}

fn is_yaml_float(s: &str) -> bool {
    // go-yaml v2: ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$
    let b = s.as_bytes();
    let mut i = 0;
    if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
        i += 1;
    }
    let digits = |i: &mut usize| {
        let s = *i;
        while *i < b.len() && (b[*i].is_ascii_digit() || b[*i] == b'_') {
            *i += 1;
        }
        *i > s
    };
    if i < b.len() && b[i] == b'.' {
        i += 1;
        if !digits(&mut i) {
            return false;
        }
    } else {
        if !digits(&mut i) {
            return false;
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            digits(&mut i);
        }
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'-' || b[i] == b'+') {
            i += 1;
        }
        if !digits(&mut i) {
            return false;
        }
    }
    i == b.len()
}

// ----------------------------------------------------------------------------- writing

/// Helm's `toYaml` (without the trailing newline), with each scalar keeping its provenance.
pub fn to_yaml(v: &Value) -> Result<TextBuf, String> {
    let mut budget = Budget::new(usize::MAX);
    to_yaml_within(v, &mut Walk::new(&mut budget)).map_err(|(Stop::Value(m) | Stop::Budget(m))| m)
}

/// [`to_yaml`], each byte counted in the walk's budget.
pub(crate) fn to_yaml_within(v: &Value, walk: &mut Walk<'_>) -> Result<TextBuf, Stop> {
    let mut out = TextBuf::default();
    match v {
        Value::Map(m) if !m.borrow().is_empty() => write_map(&mut out, v, 0, walk)?,
        Value::List(l) if !l.is_empty() => write_list(&mut out, v, 0, walk)?,
        other => {
            write_scalar(&mut out, other, 0, walk)?;
            out.push_plain("\n");
        }
    }
    // Helm trims the final newline.
    if out.as_str().ends_with('\n') {
        out.s.pop();
    }
    Ok(out)
}

fn indent(out: &mut TextBuf, n: usize, walk: &mut Walk<'_>) -> Result<(), Stop> {
    walk.charge(n)?;
    for _ in 0..n {
        out.push_plain(" ");
    }
    Ok(())
}

fn sorted_entries(v: &Value) -> Vec<(String, Value)> {
    let Value::Map(m) = v else {
        return Vec::new();
    };
    let mut e: Vec<(String, Value)> = m
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    e.sort_by(|a, b| go_yaml_key_order(&a.0, &b.0));
    e
}

fn write_map(out: &mut TextBuf, v: &Value, ind: usize, walk: &mut Walk<'_>) -> Result<(), Stop> {
    with_stack(|| {
        walk.enter(v)?;
        for (i, (k, x)) in sorted_entries(v).iter().enumerate() {
            if i > 0 {
                indent(out, ind, walk)?;
            }
            write_string(out, &crate::text::Text::plain(k), ind, true, walk)?;
            out.push_plain(":");
            write_value_after_key(out, x, ind, walk)?;
        }
        walk.leave(v);
        Ok(())
    })
}

fn write_value_after_key(
    out: &mut TextBuf,
    x: &Value,
    ind: usize,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    match x {
        Value::Map(m) if !m.borrow().is_empty() => {
            out.push_plain("\n");
            indent(out, ind + 2, walk)?;
            write_map(out, x, ind + 2, walk)
        }
        Value::List(l) if !l.is_empty() => {
            out.push_plain("\n");
            indent(out, ind, walk)?;
            write_list(out, x, ind, walk)
        }
        _ => {
            out.push_plain(" ");
            write_scalar(out, x, ind + 2, walk)?;
            out.push_plain("\n");
            Ok(())
        }
    }
}

fn write_list(out: &mut TextBuf, v: &Value, ind: usize, walk: &mut Walk<'_>) -> Result<(), Stop> {
    let Value::List(l) = v else { return Ok(()) };
    with_stack(|| {
        walk.enter(v)?;
        for (i, x) in l.iter().enumerate() {
            if i > 0 {
                indent(out, ind, walk)?;
            }
            out.push_plain("-");
            match x {
                Value::Map(m) if !m.borrow().is_empty() => {
                    out.push_plain(" ");
                    write_map(out, x, ind + 2, walk)?;
                }
                Value::List(l2) if !l2.is_empty() => {
                    out.push_plain(" ");
                    write_list(out, x, ind + 2, walk)?;
                }
                _ => {
                    out.push_plain(" ");
                    write_scalar(out, x, ind + 2, walk)?;
                    out.push_plain("\n");
                }
            }
        }
        walk.leave(v);
        Ok(())
    })
}

fn write_scalar(out: &mut TextBuf, v: &Value, ind: usize, walk: &mut Walk<'_>) -> Result<(), Stop> {
    // A string is counted as written; any other scalar is a few bytes.
    walk.charge(8)?;
    let src = v.origin().map(Source::Value);
    let push = |out: &mut TextBuf, s: &str| match &src {
        Some(o) => out.push_source(s, o.clone()),
        None => out.push_plain(s),
    };
    match v {
        Value::Nil => out.push_plain("null"),
        Value::Bool(b, _) => push(out, if *b { "true" } else { "false" }),
        Value::Int(i, _) => push(out, &i.to_string()),
        Value::Float(f, _) => {
            if !f.is_finite() {
                return Err(Stop::Value("json: unsupported value".into()));
            }
            push(out, &yaml_float(*f));
        }
        Value::Str(t) => write_string(out, t, ind, false, walk)?,
        Value::Map(_) => out.push_plain("{}"),
        Value::List(_) => out.push_plain("[]"),
        Value::Object(_) => out.push_plain("{}"),
    }
    Ok(())
}

/// A float as JSON prints it and go-yaml reads and prints it back.
fn yaml_float(f: f64) -> String {
    if f == f.trunc() && f.abs() < 1e21 {
        format!("{f:.0}")
    } else {
        format_float_g(f)
    }
}

#[derive(PartialEq)]
enum Style {
    Plain,
    Single,
    Double,
}

/// go-yaml v2's choice: double quotes when the text would read back as another type, single
/// quotes when YAML syntax forbids it plain.
fn string_style(s: &str) -> Style {
    if s.chars()
        .any(|c| (c.is_control() && c != '\t') || c == '\u{feff}')
    {
        return Style::Double;
    }
    if s.is_empty() || !matches!(resolve_plain(s), Value::Str(_)) {
        return Style::Double;
    }
    // Base 60 floats and timestamps, which go-yaml v2 also resolves.
    let b = s.as_bytes();
    if b[0].is_ascii_digit() && (s.contains(':') || s.matches('-').count() >= 2) {
        return Style::Double;
    }
    let first = s.chars().next().unwrap_or(' ');
    let second = s[first.len_utf8()..].chars().next();
    let blank_after = |c: Option<char>| c.is_none_or(|c| c == ' ' || c == '\t');
    if "#,[]{}&*!|>'\"%@`".contains(first)
        || ("-?:".contains(first) && blank_after(second))
        || s.starts_with("---")
        || s.starts_with("...")
    {
        return Style::Single;
    }
    if s.starts_with([' ', '\t'])
        || s.ends_with([' ', '\t'])
        || s.contains(": ")
        || s.contains(":\t")
        || s.contains(" #")
        || s.contains("\t#")
        || s.ends_with(':')
    {
        return Style::Single;
    }
    Style::Plain
}

fn write_string(
    out: &mut TextBuf,
    t: &crate::text::Text,
    ind: usize,
    key: bool,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    // Counted once written: at most six bytes for one, and an indent per line.
    let before = out.len();
    write_string_unmetered(out, t, ind, key);
    walk.charge(out.len() - before)
}

fn write_string_unmetered(out: &mut TextBuf, t: &crate::text::Text, ind: usize, key: bool) {
    let s = t.as_str();
    if s.contains('\n') && !key {
        // Literal block scalar with chomping from the trailing newlines.
        let trailing = s.len() - s.trim_end_matches('\n').len();
        let chomp = match trailing {
            0 => "-",
            1 => "",
            _ => "+",
        };
        let ind_ind = if s.starts_with(' ') || s.starts_with('\n') {
            "2"
        } else {
            ""
        };
        out.push_plain(&format!("|{ind_ind}{chomp}\n"));
        let body = if trailing > 0 { &s[..s.len() - 1] } else { s };
        let mut at = 0;
        for line in body.split('\n') {
            if !line.is_empty() {
                for _ in 0..ind.max(2) {
                    out.push_plain(" ");
                }
            }
            out.push_text_range(t, at..at + line.len());
            out.push_plain("\n");
            at += line.len() + 1;
        }
        // The caller adds the newline after a scalar.
        out.s.pop();
        return;
    }
    let style = string_style(s);
    if style == Style::Single {
        out.push_plain("'");
        if s.contains('\'') {
            out.push_plain(&s.replace('\'', "''"));
        } else {
            out.push_text(t);
        }
        out.push_plain("'");
    } else if style == Style::Double {
        out.push_plain("\"");
        let mut b = TextBuf::default();
        for c in s.chars() {
            match c {
                '"' => b.push_plain("\\\""),
                '\\' => b.push_plain("\\\\"),
                '\n' => b.push_plain("\\n"),
                '\t' => b.push_plain("\\t"),
                '\r' => b.push_plain("\\r"),
                c if c.is_control() => b.push_plain(&format!("\\u{:04X}", c as u32)),
                c => b.push_plain(&c.to_string()),
            }
        }
        if b.as_str() == s {
            out.push_text(t);
        } else {
            out.push_plain(b.as_str());
        }
        out.push_plain("\"");
    } else {
        out.push_text(t);
    }
}

/// go-yaml v2's map key order: letters before other characters, digit runs compared as numbers.
#[must_use]
pub fn go_yaml_key_order(a: &str, b: &str) -> std::cmp::Ordering {
    use std::cmp::Ordering;
    let ar: Vec<char> = a.chars().collect();
    let br: Vec<char> = b.chars().collect();
    let mut i = 0;
    while i < ar.len() && i < br.len() {
        if ar[i] == br[i] {
            i += 1;
            continue;
        }
        let al = ar[i].is_alphabetic();
        let bl = br[i].is_alphabetic();
        if al && bl {
            return ar[i].cmp(&br[i]);
        }
        if al || bl {
            return if bl {
                Ordering::Less
            } else {
                Ordering::Greater
            };
        }
        let mut an: i64 = 0;
        let mut bn: i64 = 0;
        if ar[i] == '0' || br[i] == '0' {
            let mut j = i;
            while j > 0 && ar[j - 1].is_ascii_digit() {
                j -= 1;
                if ar[j] != '0' {
                    an = 1;
                    bn = 1;
                    break;
                }
            }
        }
        let mut ai = i;
        while ai < ar.len() && ar[ai].is_ascii_digit() {
            an = an.wrapping_mul(10).wrapping_add(ar[ai] as i64 - '0' as i64);
            ai += 1;
        }
        let mut bi = i;
        while bi < br.len() && br[bi].is_ascii_digit() {
            bn = bn.wrapping_mul(10).wrapping_add(br[bi] as i64 - '0' as i64);
            bi += 1;
        }
        if an != bn {
            return an.cmp(&bn);
        }
        if ai != bi {
            return ai.cmp(&bi);
        }
        return ar[i].cmp(&br[i]);
    }
    ar.len().cmp(&br.len())
}

// ----------------------------------------------------------------------------- JSON

/// Go's `json.Marshal` (keys sorted, `<>&` escaped).
pub fn to_json(v: &Value, out: &mut String) -> Result<(), String> {
    let mut budget = Budget::new(usize::MAX);
    to_json_within(v, out, &mut Walk::new(&mut budget))
        .map_err(|(Stop::Value(m) | Stop::Budget(m))| m)
}

/// [`to_json`], each byte counted in the walk's budget.
pub(crate) fn to_json_within(v: &Value, out: &mut String, walk: &mut Walk<'_>) -> Result<(), Stop> {
    with_stack(|| {
        match v {
            Value::Nil => {
                walk.charge(4)?;
                out.push_str("null");
            }
            Value::Bool(b, _) => {
                walk.charge(5)?;
                out.push_str(if *b { "true" } else { "false" });
            }
            Value::Int(i, _) => {
                let s = i.to_string();
                walk.charge(s.len())?;
                out.push_str(&s);
            }
            Value::Float(f, _) => {
                if !f.is_finite() {
                    return Err(Stop::Value(format!(
                        "json: unsupported value: {}",
                        format_float_g(*f)
                    )));
                }
                let s = json_float(*f);
                walk.charge(s.len())?;
                out.push_str(&s);
            }
            Value::Str(s) => {
                // Counted once written: an escape is at most six bytes for one.
                let before = out.len();
                json_string(s.as_str(), out);
                walk.charge(out.len() - before)?;
            }
            Value::List(l) => {
                walk.enter(v)?;
                out.push('[');
                for (i, x) in l.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    to_json_within(x, out, walk)?;
                }
                out.push(']');
                walk.leave(v);
            }
            Value::Map(m) => {
                walk.enter(v)?;
                out.push('{');
                for (i, (k, x)) in m.borrow().iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    let before = out.len();
                    json_string(k, out);
                    walk.charge(out.len() - before)?;
                    out.push(':');
                    to_json_within(x, out, walk)?;
                }
                out.push('}');
                walk.leave(v);
            }
            Value::Object(_) => out.push_str("{}"),
        }
        Ok(())
    })
}

fn json_float(f: f64) -> String {
    let a = f.abs();
    if a != 0.0 && !(1e-6..1e21).contains(&a) {
        // Go: 'e' format, exponent as is ("1e+21", "1e-7").
        let s = format!("{f:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let e: i32 = e.parse().unwrap_or(0);
        format!("{m}e{}{}", if e < 0 { '-' } else { '+' }, e.abs())
    } else {
        let s = format!("{f}");
        s
    }
}

fn json_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '<' => out.push_str("\\u003c"),
            '>' => out.push_str("\\u003e"),
            '&' => out.push_str("\\u0026"),
            '\u{2028}' => out.push_str("\\u2028"),
            '\u{2029}' => out.push_str("\\u2029"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// JSON into values (numbers are `float64`).
pub fn from_json(text: &str) -> Result<Value, String> {
    let j: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    Ok(json_value(&j))
}

fn json_value(j: &serde_json::Value) -> Value {
    match j {
        serde_json::Value::Null => Value::Nil,
        serde_json::Value::Bool(b) => Value::Bool(*b, None),
        serde_json::Value::Number(n) => Value::Float(n.as_f64().unwrap_or(0.0), None),
        serde_json::Value::String(s) => Value::str(s),
        serde_json::Value::Array(a) => Value::list(a.iter().map(json_value).collect()),
        serde_json::Value::Object(o) => {
            Value::map(o.iter().map(|(k, v)| (k.clone(), json_value(v))).collect())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn y(src: &str) -> String {
        to_yaml(&from_yaml(src).unwrap())
            .unwrap()
            .as_str()
            .to_string()
    }

    #[test]
    fn round_trips_like_helm() {
        assert_eq!(y("b: 1\na: [x, {c: d}]\n"), "a:\n- x\n- c: d\nb: 1");
        assert_eq!(
            y("a: 'true'\nb: ''\nc: null\n"),
            "a: \"true\"\nb: \"\"\nc: null"
        );
        assert_eq!(y("a: [[1, 2], []]"), "a:\n- - 1\n  - 2\n- []");
        assert_eq!(y("n: 3"), "\"false\": 3");
    }

    #[test]
    fn key_order() {
        let mut k = vec!["a10", "a2", "b", "_x", "A"];
        k.sort_by(|a, b| go_yaml_key_order(a, b));
        assert_eq!(k, ["_x", "A", "a2", "a10", "b"]);
    }
}
