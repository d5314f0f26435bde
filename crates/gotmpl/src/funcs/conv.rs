//! Sprig's type conversions: `int`, `int64`, `float64`, `atoi`, `toDecimal`.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("int", Func::Native(int)),
    ("int64", Func::Native(int)),
    ("float64", Func::Native(float_64)),
    ("atoi", Func::Native(atoi)),
    ("toDecimal", Func::Native(to_decimal)),
];

fn int(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    Ok(Value::Int(to_i64(&a[0]), None))
}

fn float_64(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    Ok(Value::Float(to_f64(&a[0]), None))
}

fn atoi(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    Ok(Value::Int(st(&a[0])?.parse().unwrap_or(0), None))
}

fn to_decimal(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    Ok(Value::Int(
        i64::from_str_radix(&strval_in(&a[0], budget)?, 8).unwrap_or(0),
        None,
    ))
}
