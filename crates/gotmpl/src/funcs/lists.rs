//! Sprig's list functions.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("list", Func::Native(list)),
    ("tuple", Func::Native(list)),
    ("first", Func::Native(first)),
    ("mustFirst", Func::Native(first)),
    ("last", Func::Native(last)),
    ("mustLast", Func::Native(last)),
    ("rest", Func::Native(rest)),
    ("mustRest", Func::Native(rest)),
    ("initial", Func::Native(initial)),
    ("mustInitial", Func::Native(initial)),
    ("append", Func::Native(push)),
    ("mustAppend", Func::Native(push)),
    ("push", Func::Native(push)),
    ("mustPush", Func::Native(push)),
    ("prepend", Func::Native(prepend)),
    ("mustPrepend", Func::Native(prepend)),
    ("uniq", Func::Native(uniq)),
    ("mustUniq", Func::Native(uniq)),
    ("has", Func::Native(has)),
    ("mustHas", Func::Native(has)),
    ("without", Func::Native(without)),
    ("mustWithout", Func::Native(without)),
    ("compact", Func::Native(compact)),
    ("mustCompact", Func::Native(compact)),
    ("concat", Func::Native(concat)),
    ("reverse", Func::Native(reverse)),
    ("mustReverse", Func::Native(reverse)),
    ("sortAlpha", Func::Native(sort_alpha)),
    ("slice", Func::Native(slice)),
    ("chunk", Func::Native(chunk)),
    ("mustSlice", Func::Unsupported),
    ("mustChunk", Func::Unsupported),
];

fn list(_name: &str, a: &[Value], budget: &mut Budget) -> F {
    new_list(budget, a.to_vec())
}

fn first(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let l = list_items("first", &a[0])?;
    Ok(l.first().cloned().unwrap_or(Value::Nil))
}

fn last(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let l = list_items("last", &a[0])?;
    Ok(l.last().cloned().unwrap_or(Value::Nil))
}

fn rest(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let l = list_items("rest", &a[0])?;
    if l.is_empty() {
        // Sprig returns a nil `[]interface{}`: it prints as `[]`, not as nil.
        return Ok(Value::list(Vec::new()));
    }
    new_list(budget, l[1..].to_vec())
}

fn initial(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let l = list_items("initial", &a[0])?;
    if l.is_empty() {
        // Sprig returns a nil `[]interface{}`: it prints as `[]`, not as nil.
        return Ok(Value::list(Vec::new()));
    }
    new_list(budget, l[..l.len() - 1].to_vec())
}

fn push(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    let mut l = list_of("push", &a[0])?;
    l.push(a[1].clone());
    new_list(budget, l)
}

fn prepend(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    let mut l = list_of("prepend", &a[0])?;
    l.insert(0, a[1].clone());
    new_list(budget, l)
}

fn uniq(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn has(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    match &a[1] {
        Value::Nil => b(false),
        Value::List(l) => b(in_list(&a[0], l, budget)?),
        other => err(format!("Cannot find has on type {}", other.type_name())),
    }
}

fn without(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn compact(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let l = list_of("compact", &a[0])?;
    new_list(budget, l.into_iter().filter(|x| !x.is_empty()).collect())
}

fn concat(_name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn reverse(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let mut l = list_of("reverse", &a[0])?;
    l.reverse();
    new_list(budget, l)
}

fn sort_alpha(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let mut l: Vec<String> = match &a[0] {
        Value::List(_) => strslice(&a[0], budget)?.iter().map(strval).collect(),
        other => vec![strval_in(other, budget)?],
    };
    l.sort();
    Ok(Value::list(l.iter().map(|x| Value::str(x)).collect()))
}

fn slice(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn chunk(name: &str, a: &[Value], budget: &mut Budget) -> F {
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
