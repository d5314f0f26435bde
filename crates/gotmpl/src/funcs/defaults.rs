//! Sprig's defaults and flow control: `default`, `empty`, `coalesce`, `all`, `any`, `ternary`,
//! `fail`.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("default", Func::Native(default)),
    ("empty", Func::Native(empty)),
    ("coalesce", Func::Native(coalesce)),
    ("all", Func::Native(all)),
    ("any", Func::Native(any)),
    ("ternary", Func::Native(ternary)),
    ("fail", Func::Exec),
];

fn default(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    min_arity(name, a, 1)?;
    if a.len() == 1 || a[1].is_empty() {
        Ok(a[0].clone())
    } else {
        Ok(a[1].clone())
    }
}

fn empty(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    b(a[0].is_empty())
}

fn coalesce(_name: &str, a: &[Value], _budget: &mut Budget) -> F {
    Ok(a.iter()
        .find(|v| !v.is_empty())
        .cloned()
        .unwrap_or(Value::Nil))
}

fn all(_name: &str, a: &[Value], _budget: &mut Budget) -> F {
    b(a.iter().all(|v| !v.is_empty()))
}

fn any(_name: &str, a: &[Value], _budget: &mut Budget) -> F {
    b(a.iter().any(|v| !v.is_empty()))
}

fn ternary(name: &str, a: &[Value], _budget: &mut Budget) -> F {
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
