//! Sprig's string functions and string lists (`splitList`, `join`, `toStrings`).

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("quote", Func::Native(quote)),
    ("squote", Func::Native(quote)),
    ("indent", Func::Native(indent)),
    ("nindent", Func::Native(indent)),
    ("trim", Func::Native(trim)),
    ("trimAll", Func::Native(trim_all)),
    ("trimall", Func::Native(trim_all)),
    ("trimPrefix", Func::Native(trim_prefix)),
    ("trimSuffix", Func::Native(trim_suffix)),
    ("upper", Func::Native(upper_lower)),
    ("lower", Func::Native(upper_lower)),
    ("title", Func::Native(title)),
    ("untitle", Func::Native(untitle)),
    ("replace", Func::Native(replace)),
    ("split", Func::Native(split)),
    ("splitList", Func::Native(split_list)),
    ("splitn", Func::Native(splitn)),
    ("join", Func::Native(join)),
    ("contains", Func::Native(contains)),
    ("hasPrefix", Func::Native(has_prefix)),
    ("hasSuffix", Func::Native(has_suffix)),
    ("repeat", Func::Native(repeat)),
    ("substr", Func::Native(substr)),
    ("trunc", Func::Native(trunc)),
    ("nospace", Func::Native(nospace)),
    ("cat", Func::Native(cat)),
    ("toString", Func::Native(to_string)),
    ("toStrings", Func::Native(to_strings)),
    ("kebabcase", Func::Native(case_separated)),
    ("snakecase", Func::Native(case_separated)),
    ("randAlphaNum", Func::Unsupported),
    ("randAlpha", Func::Unsupported),
    ("randNumeric", Func::Unsupported),
    ("randAscii", Func::Unsupported),
    ("shuffle", Func::Unsupported),
    ("wrap", Func::Unsupported),
    ("wrapWith", Func::Unsupported),
    ("camelcase", Func::Unsupported),
    ("swapcase", Func::Unsupported),
    ("plural", Func::Unsupported),
    ("initials", Func::Unsupported),
    ("abbrev", Func::Unsupported),
    ("abbrevboth", Func::Unsupported),
];

fn quote(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn indent(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn trim(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let t = text(&a[0])?;
    let s0 = t.as_str();
    let start = s0.len() - s0.trim_start().len();
    let end = s0.trim_end().len().max(start);
    sub_text(t, start, end, budget)
}

fn trim_all(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    let cut = st(&a[0])?.to_string();
    let t = text(&a[1])?;
    let s0 = t.as_str();
    let trimmed_start = s0.trim_start_matches(|c| cut.contains(c));
    let start = s0.len() - trimmed_start.len();
    let end = start + trimmed_start.trim_end_matches(|c| cut.contains(c)).len();
    sub_text(t, start, end, budget)
}

fn trim_prefix(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn trim_suffix(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn upper_lower(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn title(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    counted(budget, Value::str(&go_title(st(&a[0])?)))
}

fn untitle(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn replace(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn split(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn split_list(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    let (sep, orig) = (st(&a[0])?, st(&a[1])?);
    budget.charge(orig.len())?;
    new_list(
        budget,
        go_split(orig, sep).iter().map(|p| Value::str(p)).collect(),
    )
}

fn splitn(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn join(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn contains(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    b(st(&a[1])?.contains(st(&a[0])?))
}

fn has_prefix(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    b(st(&a[1])?.starts_with(st(&a[0])?))
}

fn has_suffix(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    b(st(&a[1])?.ends_with(st(&a[0])?))
}

fn repeat(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn substr(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn trunc(name: &str, a: &[Value], budget: &mut Budget) -> F {
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
    if !t.as_str().is_char_boundary(lo as usize) || !t.as_str().is_char_boundary(hi as usize) {
        return err("trunc: not at a character boundary");
    }
    sub_text(t, lo as usize, hi as usize, budget)
}

fn nospace(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn cat(_name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn to_string(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    Ok(Value::Str(strval_text(&a[0], budget)?))
}

fn to_strings(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    Ok(Value::list(strslice(&a[0], budget)?))
}

fn case_separated(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let sep = if name == "kebabcase" { '-' } else { '_' };
    counted(budget, Value::str(&case_words(st(&a[0])?, sep)))
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
