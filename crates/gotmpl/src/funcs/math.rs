//! Sprig's integer and float math, and integer sequences (`until`, `untilStep`, `seq`).

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("add", Func::Native(add)),
    ("add1", Func::Native(add_1)),
    ("sub", Func::Native(sub)),
    ("mul", Func::Native(mul)),
    ("div", Func::Native(div_mod)),
    ("mod", Func::Native(div_mod)),
    ("max", Func::Native(max_min)),
    ("min", Func::Native(max_min)),
    ("floor", Func::Native(floor_ceil)),
    ("ceil", Func::Native(floor_ceil)),
    ("round", Func::Native(round)),
    ("addf", Func::Native(float_op)),
    ("subf", Func::Native(float_op)),
    ("mulf", Func::Native(float_op)),
    ("divf", Func::Native(float_op)),
    ("until", Func::Native(until)),
    ("untilStep", Func::Native(until_step)),
    ("seq", Func::Native(seq)),
    ("randInt", Func::Unsupported),
];

fn add(_name: &str, a: &[Value], _budget: &mut Budget) -> F {
    Ok(Value::Int(
        a.iter().map(to_i64).fold(0i64, i64::wrapping_add),
        None,
    ))
}

fn add_1(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    Ok(Value::Int(to_i64(&a[0]).wrapping_add(1), None))
}

fn sub(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    Ok(Value::Int(to_i64(&a[0]).wrapping_sub(to_i64(&a[1])), None))
}

fn mul(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    min_arity(name, a, 1)?;
    Ok(Value::Int(
        a.iter().map(to_i64).fold(1i64, i64::wrapping_mul),
        None,
    ))
}

fn div_mod(name: &str, a: &[Value], _budget: &mut Budget) -> F {
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

fn max_min(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    min_arity(name, a, 1)?;
    let it = a.iter().map(to_i64);
    let v = if name == "max" { it.max() } else { it.min() };
    Ok(Value::Int(v.unwrap_or(0), None))
}

fn floor_ceil(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let f = to_f64(&a[0]);
    Ok(Value::Float(
        if name == "floor" { f.floor() } else { f.ceil() },
        None,
    ))
}

fn round(name: &str, a: &[Value], _budget: &mut Budget) -> F {
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

fn float_op(name: &str, a: &[Value], _budget: &mut Budget) -> F {
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

fn until(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let n = int_param(&a[0])?;
    counted_result(budget, range_list(0, n, if n < 0 { -1 } else { 1 }))
}

fn until_step(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 3)?;
    let list = range_list(int_param(&a[0])?, int_param(&a[1])?, int_param(&a[2])?);
    counted_result(budget, list)
}

fn seq(_name: &str, a: &[Value], budget: &mut Budget) -> F {
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
