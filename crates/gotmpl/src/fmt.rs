//! Go's `fmt.Sprintf`, `Sprint` and `Sprintln` for template values, keeping provenance.

use crate::budget::{Stop, Walk, with_stack};
use crate::text::{Source, Text, TextBuf};
use crate::value::{Value, format_float_g};

#[derive(Default, Clone, Copy)]
struct Spec {
    minus: bool,
    plus: bool,
    sharp: bool,
    zero: bool,
    space: bool,
    width: Option<usize>,
    prec: Option<usize>,
}

/// `fmt.Sprintf(format, args...)`, each byte counted in the walk's budget.
pub(crate) fn sprintf(format: &Text, args: &[Value], walk: &mut Walk<'_>) -> Result<Text, Stop> {
    let f = format.as_str();
    let b = f.as_bytes();
    let mut out = TextBuf::default();
    let mut argi = 0;
    let mut i = 0;
    let mut lit_start = 0;
    while i < b.len() {
        if b[i] != b'%' {
            i += 1;
            continue;
        }
        walk.charge(i - lit_start)?;
        out.push_text_range(format, lit_start..i);
        i += 1;
        let mut sp = Spec::default();
        while i < b.len() {
            match b[i] {
                b'-' => sp.minus = true,
                b'+' => sp.plus = true,
                b'#' => sp.sharp = true,
                b'0' => sp.zero = true,
                b' ' => sp.space = true,
                _ => break,
            }
            i += 1;
        }
        // Width.
        if i < b.len() && b[i] == b'*' {
            i += 1;
            match args.get(argi) {
                Some(Value::Int(w, _)) if !too_large(*w) => {
                    if *w < 0 {
                        sp.minus = true;
                    }
                    sp.width = Some(w.unsigned_abs() as usize);
                }
                _ => out.push_plain("%!(BADWIDTH)"),
            }
            argi += 1;
        } else {
            match parse_num(b, i) {
                Some((n, next)) => {
                    sp.width = n;
                    i = next;
                }
                None => i = b.len(),
            }
        }
        if i < b.len() && b[i] == b'.' {
            i += 1;
            if i < b.len() && b[i] == b'*' {
                i += 1;
                match args.get(argi) {
                    // Go: a negative precision is no precision.
                    Some(Value::Int(p, _)) if !too_large(*p) => {
                        sp.prec = usize::try_from(*p).ok();
                    }
                    _ => out.push_plain("%!(BADPREC)"),
                }
                argi += 1;
            } else {
                match parse_num(b, i) {
                    Some((n, next)) => {
                        sp.prec = Some(n.unwrap_or(0));
                        i = next;
                    }
                    None => i = b.len(),
                }
            }
        }
        if sp.minus {
            sp.zero = false;
        }
        let Some(verb) = f.get(i..).and_then(|rest| rest.chars().next()) else {
            out.push_plain("%!(NOVERB)");
            lit_start = b.len();
            break;
        };
        i += verb.len_utf8();
        lit_start = i;
        if verb == '%' {
            out.push_plain("%");
            continue;
        }
        let Some(arg) = args.get(argi) else {
            out.push_plain(&format!("%!{verb}(MISSING)"));
            continue;
        };
        argi += 1;
        format_arg(&mut out, arg, verb, &sp, walk)?;
    }
    walk.charge(b.len() - lit_start.min(b.len()))?;
    out.push_text_range(format, lit_start.min(b.len())..b.len());
    if argi < args.len() {
        out.push_plain("%!(EXTRA ");
        for (k, a) in args[argi..].iter().enumerate() {
            if k > 0 {
                out.push_plain(", ");
            }
            let mut s = a.type_name();
            s.push('=');
            let mut v = String::new();
            write_verb(&mut v, a, 'v', &Spec::default(), 0, walk)?;
            s.push_str(&v);
            out.push_plain(&s);
        }
        out.push_plain(")");
    }
    Ok(out.finish())
}

/// Go's `tooLarge`: a width or precision past a million is refused.
fn too_large(n: i64) -> bool {
    !(-1_000_000..=1_000_000).contains(&n)
}

/// Go's `parsenum` at `b[i..]`: the number (`None` when no digit) and where it ends; `None`
/// overall when it is too large (Go then reads the rest of the format as consumed).
fn parse_num(b: &[u8], mut i: usize) -> Option<(Option<usize>, usize)> {
    let mut num: Option<usize> = None;
    while i < b.len() && b[i].is_ascii_digit() {
        let n = num.unwrap_or(0);
        if n > 1_000_000 {
            return None;
        }
        num = Some(n * 10 + usize::from(b[i] - b'0'));
        i += 1;
    }
    Some((num, i))
}

fn format_arg(
    out: &mut TextBuf,
    arg: &Value,
    verb: char,
    sp: &Spec,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    // Provenance survives when a value is printed as itself, without padding.
    if sp.width.is_none() && sp.prec.is_none() {
        match (arg, verb) {
            (Value::Str(t), 's' | 'v') => {
                walk.charge(t.as_str().len())?;
                out.push_text(t);
                return Ok(());
            }
            (Value::Int(_, Some(o)) | Value::Float(_, Some(o)) | Value::Bool(_, Some(o)), 'v')
            | (Value::Int(_, Some(o)), 'd') => {
                let mut s = String::new();
                write_verb(&mut s, arg, verb, sp, 0, walk)?;
                out.push_source(&s, Source::Value(*o));
                return Ok(());
            }
            _ => {}
        }
    }
    let mut s = String::new();
    write_verb(&mut s, arg, verb, sp, 0, walk)?;
    out.push_plain(&s);
    Ok(())
}

/// Go's `%!verb(type=value)`: the value is printed with `%v` and the same flags, width and
/// precision (`%5.2f` of "mode" is `%!f(string=   mo)`).
fn bad_verb(
    out: &mut String,
    v: &Value,
    verb: char,
    sp: &Spec,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    out.push_str("%!");
    out.push(verb);
    out.push('(');
    match v {
        Value::Nil => out.push_str("<nil>"),
        _ => {
            out.push_str(&v.type_name());
            out.push('=');
            write_verb(out, v, 'v', sp, 0, walk)?;
        }
    }
    out.push(')');
    Ok(())
}

fn pad(out: &mut String, s: &str, sp: &Spec, numeric: bool) {
    let len = s.chars().count();
    let w = sp.width.unwrap_or(0);
    if len >= w {
        out.push_str(s);
        return;
    }
    let fill = w - len;
    if sp.minus {
        out.push_str(s);
        out.extend(std::iter::repeat_n(' ', fill));
    } else if sp.zero && numeric {
        let (sign, rest) = match s.chars().next() {
            Some(c @ ('-' | '+' | ' ')) => (Some(c), &s[1..]),
            _ => (None, s),
        };
        if let Some(c) = sign {
            out.push(c);
        }
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(rest);
    } else if sp.zero {
        // Go pads strings, booleans and `<nil>` with zeros too (`%05s` of "ab" is `000ab`).
        out.extend(std::iter::repeat_n('0', fill));
        out.push_str(s);
    } else {
        out.extend(std::iter::repeat_n(' ', fill));
        out.push_str(s);
    }
}

/// One operand, each byte counted in the walk's budget (a padding before it is written).
fn write_verb(
    out: &mut String,
    v: &Value,
    verb: char,
    sp: &Spec,
    depth: usize,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    with_stack(|| write_verb_here(out, v, verb, sp, depth, walk))
}

fn write_verb_here(
    out: &mut String,
    v: &Value,
    verb: char,
    sp: &Spec,
    depth: usize,
    walk: &mut Walk<'_>,
) -> Result<(), Stop> {
    walk.charge(sp.width.unwrap_or(0).saturating_add(sp.prec.unwrap_or(0)))?;
    if verb == 'T' {
        pad(out, &v.type_name(), sp, false);
        return Ok(());
    }
    match v {
        Value::Nil => {
            if verb == 'v' || depth > 0 {
                pad(out, "<nil>", sp, false);
            } else {
                return bad_verb(out, v, verb, sp, walk);
            }
        }
        Value::Bool(b, _) => match verb {
            'v' | 't' => pad(out, if *b { "true" } else { "false" }, sp, false),
            _ => return bad_verb(out, v, verb, sp, walk),
        },
        Value::Int(i, _) => {
            let i = *i;
            let sign = if i < 0 {
                "-"
            } else if sp.plus {
                "+"
            } else if sp.space {
                " "
            } else {
                ""
            };
            let a = i.unsigned_abs();
            let body = match verb {
                'v' | 'd' => a.to_string(),
                'b' => format!("{a:b}"),
                'o' => {
                    if sp.sharp {
                        format!("0{a:o}")
                    } else {
                        format!("{a:o}")
                    }
                }
                'O' => format!("0o{a:o}"),
                'x' => {
                    if sp.sharp {
                        format!("0x{a:x}")
                    } else {
                        format!("{a:x}")
                    }
                }
                'X' => {
                    if sp.sharp {
                        format!("0X{a:X}")
                    } else {
                        format!("{a:X}")
                    }
                }
                'c' => {
                    pad(
                        out,
                        &char::from_u32(i as u32).unwrap_or('\u{fffd}').to_string(),
                        sp,
                        false,
                    );
                    return Ok(());
                }
                'q' => {
                    let c = char::from_u32(i as u32).unwrap_or('\u{fffd}');
                    pad(
                        out,
                        &format!("'{}'", quote_inner(&c.to_string(), '\'')),
                        sp,
                        false,
                    );
                    return Ok(());
                }
                'U' => format!("U+{a:04X}"),
                _ => {
                    return bad_verb(out, v, verb, sp, walk);
                }
            };
            let body = match sp.prec {
                Some(p) if body.len() < p => format!("{}{body}", "0".repeat(p - body.len())),
                _ => body,
            };
            // With a precision, Go ignores the `0` flag and pads with spaces.
            let sp = Spec {
                zero: sp.zero && sp.prec.is_none(),
                ..*sp
            };
            pad(out, &format!("{sign}{body}"), &sp, true);
        }
        Value::Float(f, _) => {
            let s = match verb {
                'v' | 'g' | 'G' => match sp.prec {
                    None => format_float_g(*f),
                    Some(p) => format_g_prec(*f, p.max(1)),
                },
                'f' | 'F' => format!("{:.*}", sp.prec.unwrap_or(6), f),
                'e' | 'E' => format_e(*f, sp.prec.unwrap_or(6)),
                _ => {
                    return bad_verb(out, v, verb, sp, walk);
                }
            };
            let s = if verb == 'E' || verb == 'G' {
                s.to_uppercase()
            } else {
                s
            };
            let s = if *f >= 0.0 && sp.plus {
                format!("+{s}")
            } else if *f >= 0.0 && sp.space {
                format!(" {s}")
            } else {
                s
            };
            pad(out, &s, sp, true);
        }
        Value::Str(t) => {
            let s = t.as_str();
            // Hex doubles the text (a quoted text's escapes are a few bytes for one).
            let grows = if matches!(verb, 'x' | 'X') { 2 } else { 1 };
            walk.charge(s.len().saturating_mul(grows))?;
            match verb {
                'v' | 's' => {
                    let s = match sp.prec {
                        Some(p) => s.chars().take(p).collect::<String>(),
                        None => s.to_string(),
                    };
                    pad(out, &s, sp, false);
                }
                'q' => {
                    if sp.sharp
                        && !s.contains('`')
                        && !s.chars().any(|c| c.is_control() && c != '\t')
                    {
                        pad(out, &format!("`{s}`"), sp, false);
                    } else {
                        pad(out, &go_quote(s), sp, false);
                    }
                }
                'x' | 'X' => {
                    let mut h = String::new();
                    for byte in s.bytes() {
                        if verb == 'x' {
                            h.push_str(&format!("{byte:02x}"));
                        } else {
                            h.push_str(&format!("{byte:02X}"));
                        }
                    }
                    pad(out, &h, sp, false);
                }
                _ => return bad_verb(out, v, verb, sp, walk),
            }
        }
        Value::List(l) => {
            walk.enter(v)?;
            out.push('[');
            for (k, x) in l.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                write_verb(out, x, verb, sp, depth + 1, walk)?;
            }
            out.push(']');
            walk.leave(v);
        }
        Value::Map(m) => {
            walk.enter(v)?;
            out.push_str("map[");
            for (k, (key, x)) in m.borrow().iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                write_verb(out, &Value::str(key), verb, sp, depth + 1, walk)?;
                out.push(':');
                write_verb(out, x, verb, sp, depth + 1, walk)?;
            }
            out.push(']');
            walk.leave(v);
        }
        Value::Object(o) => {
            out.push('&');
            out.push_str(o.type_name());
        }
    }
    Ok(())
}

fn format_e(f: f64, prec: usize) -> String {
    let s = format!("{f:.prec$e}");
    let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
    let e: i32 = e.parse().unwrap_or(0);
    format!("{m}e{}{:02}", if e < 0 { '-' } else { '+' }, e.abs())
}

fn format_g_prec(f: f64, p: usize) -> String {
    if f == 0.0 {
        return "0".into();
    }
    let e = format!("{:.*e}", p - 1, f);
    let (m, ex) = e.split_once('e').unwrap_or((&e, "0"));
    let ex: i32 = ex.parse().unwrap_or(0);
    if ex < -4 || ex >= p as i32 {
        let m = if m.contains('.') {
            m.trim_end_matches('0').trim_end_matches('.')
        } else {
            m
        };
        return format!("{m}e{}{:02}", if ex < 0 { '-' } else { '+' }, ex.abs());
    }
    let decimals = (p as i32 - 1 - ex).max(0) as usize;
    let s = format!("{f:.decimals$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// Go's `strconv.Quote`.
pub fn go_quote(s: &str) -> String {
    format!("\"{}\"", quote_inner(s, '"'))
}

fn quote_inner(s: &str, q: char) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            '\\' => out.push_str("\\\\"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c == '\x7f' => out.push_str(&format!("\\x{:02x}", c as u32)),
            c if c.is_control() => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// `fmt.Sprint`: spaces between operands when neither side is a string.
pub(crate) fn sprint(args: &[Value], walk: &mut Walk<'_>) -> Result<Text, Stop> {
    let mut out = TextBuf::default();
    for (i, a) in args.iter().enumerate() {
        if i > 0 && !matches!(a, Value::Str(_)) && !matches!(args[i - 1], Value::Str(_)) {
            out.push_plain(" ");
        }
        format_arg(&mut out, a, 'v', &Spec::default(), walk)?;
    }
    Ok(out.finish())
}

/// `fmt.Sprintln`: always spaces, and a newline.
pub(crate) fn sprintln(args: &[Value], walk: &mut Walk<'_>) -> Result<Text, Stop> {
    let mut out = TextBuf::default();
    for (i, a) in args.iter().enumerate() {
        if i > 0 {
            out.push_plain(" ");
        }
        format_arg(&mut out, a, 'v', &Spec::default(), walk)?;
    }
    out.push_plain("\n");
    Ok(out.finish())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pf(f: &str, args: &[Value]) -> String {
        let mut budget = crate::budget::Budget::new(1 << 20);
        sprintf(&Text::plain(f), args, &mut Walk::new(&mut budget))
            .unwrap()
            .as_str()
            .to_string()
    }

    #[test]
    fn printf_like_go() {
        assert_eq!(pf("%s-%d", &[Value::str("a"), Value::Int(3, None)]), "a-3");
        assert_eq!(pf("%d", &[Value::Float(3.0, None)]), "%!d(float64=3)");
        assert_eq!(pf("%s", &[Value::Nil]), "%!s(<nil>)");
        assert_eq!(pf("%v", &[Value::Nil]), "<nil>");
        assert_eq!(
            pf(
                "%05d|%-4s|%4s",
                &[Value::Int(-42, None), Value::str("ab"), Value::str("cd")]
            ),
            "-0042|ab  |  cd"
        );
        assert_eq!(
            pf(
                "%.2f %e",
                &[Value::Float(1.23456, None), Value::Float(1e6, None)]
            ),
            "1.23 1.000000e+06"
        );
        assert_eq!(pf("%q", &[Value::str("a\"b\n")]), "\"a\\\"b\\n\"");
        assert_eq!(pf("%d %d", &[Value::Int(1, None)]), "1 %!d(MISSING)");
        assert_eq!(
            pf("%d", &[Value::Int(1, None), Value::str("x")]),
            "1%!(EXTRA string=x)"
        );
        assert_eq!(
            pf(
                "%v",
                &[Value::list(vec![Value::str("a"), Value::Int(1, None)])]
            ),
            "[a 1]"
        );
        assert_eq!(pf("%x", &[Value::Int(255, None)]), "ff");
        assert_eq!(pf("100%%", &[]), "100%");
    }
}
