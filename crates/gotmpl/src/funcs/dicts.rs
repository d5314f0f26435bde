//! Sprig's dictionary functions, with Go's reference semantics for `set`, `unset` and the
//! merges.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("dict", Func::Native(dict)),
    ("get", Func::Native(get)),
    ("set", Func::Native(set)),
    ("unset", Func::Native(unset)),
    ("hasKey", Func::Native(has_key)),
    ("keys", Func::Native(keys)),
    ("values", Func::Native(values)),
    ("pick", Func::Native(pick_omit)),
    ("omit", Func::Native(pick_omit)),
    ("merge", Func::Native(merge)),
    ("mustMerge", Func::Native(merge)),
    ("mergeOverwrite", Func::Native(merge)),
    ("mustMergeOverwrite", Func::Native(merge)),
    ("deepCopy", Func::Native(deep_copy)),
    ("mustDeepCopy", Func::Native(deep_copy)),
    ("dig", Func::Native(dig)),
    ("pluck", Func::Native(pluck)),
    ("mustDig", Func::Unsupported),
];

fn dict(_name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn get(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    let m = map_param(&a[0])?;
    let k = st(&a[1])?;
    Ok(m.borrow().get(k).cloned().unwrap_or_else(|| Value::str("")))
}

fn set(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 3)?;
    let m = map_param(&a[0])?;
    let k = st(&a[1])?.to_string();
    m.borrow_mut().insert(k, a[2].clone());
    Ok(a[0].clone())
}

fn unset(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    let m = map_param(&a[0])?;
    let k = st(&a[1])?.to_string();
    m.borrow_mut().remove(&k);
    Ok(a[0].clone())
}

fn has_key(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    let m = map_param(&a[0])?;
    b(m.borrow().contains_key(st(&a[1])?))
}

fn keys(_name: &str, a: &[Value], budget: &mut Budget) -> F {
    let mut out = Vec::new();
    for d in a {
        for k in map_param(d)?.borrow().keys() {
            out.push(Value::str(k));
        }
    }
    new_list(budget, out)
}

fn values(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let values = map_param(&a[0])?.borrow().values().cloned().collect();
    new_list(budget, values)
}

fn pick_omit(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn merge(name: &str, a: &[Value], budget: &mut Budget) -> F {
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

fn deep_copy(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    Ok(a[0].copy_within(&mut Walk::new(budget))?)
}

fn dig(name: &str, a: &[Value], _budget: &mut Budget) -> F {
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

fn pluck(name: &str, a: &[Value], budget: &mut Budget) -> F {
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
