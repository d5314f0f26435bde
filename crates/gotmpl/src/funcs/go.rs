//! Go's builtin template functions (`text/template`'s `builtins`). Sprig's `slice` replaces
//! Go's (`lists.rs`), as in Helm.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("and", Func::Exec),
    ("or", Func::Exec),
    ("not", Func::Native(not)),
    ("eq", Func::Native(eq)),
    ("ne", Func::Native(ne)),
    ("lt", Func::Native(compare)),
    ("le", Func::Native(compare)),
    ("gt", Func::Native(compare)),
    ("ge", Func::Native(compare)),
    ("index", Func::Native(index)),
    ("len", Func::Native(len)),
    ("print", Func::Native(print)),
    ("println", Func::Native(println)),
    ("printf", Func::Native(printf)),
    ("html", Func::Native(html)),
    ("js", Func::Native(js)),
    ("urlquery", Func::Native(urlquery)),
    ("call", Func::Unsupported),
];

fn not(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    b(!a[0].truthy())
}

fn eq(name: &str, a: &[Value], _budget: &mut Budget) -> F {
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

fn ne(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    b(!go_eq(&a[0], &a[1])?)
}

fn compare(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    let o = go_cmp(&a[0], &a[1])?;
    b(match name {
        "lt" => o == Ordering::Less,
        "le" => o != Ordering::Greater,
        "gt" => o == Ordering::Greater,
        _ => o != Ordering::Less,
    })
}

fn index(name: &str, a: &[Value], _budget: &mut Budget) -> F {
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

fn len(name: &str, a: &[Value], _budget: &mut Budget) -> F {
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

fn print(_name: &str, a: &[Value], budget: &mut Budget) -> F {
    Ok(Value::Str(sprint(a, &mut Walk::new(budget))?))
}

fn println(_name: &str, a: &[Value], budget: &mut Budget) -> F {
    Ok(Value::Str(sprintln(a, &mut Walk::new(budget))?))
}

fn printf(name: &str, a: &[Value], budget: &mut Budget) -> F {
    min_arity(name, a, 1)?;
    let f = text(&a[0])?.clone();
    Ok(Value::Str(sprintf(&f, &a[1..], &mut Walk::new(budget))?))
}

fn html(_name: &str, a: &[Value], budget: &mut Budget) -> F {
    let t = html_escape(&eval_args_string(a, budget)?);
    counted(budget, Value::str(&t))
}

fn js(_name: &str, a: &[Value], budget: &mut Budget) -> F {
    let t = js_escape(&eval_args_string(a, budget)?);
    counted(budget, Value::str(&t))
}

fn urlquery(_name: &str, a: &[Value], budget: &mut Budget) -> F {
    let t = query_escape(&eval_args_string(a, budget)?);
    counted(budget, Value::str(&t))
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
