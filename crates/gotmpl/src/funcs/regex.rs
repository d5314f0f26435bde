//! Sprig's regular expression functions. Each pattern is compiled once per thread (a small
//! cache), not on every call.

use std::cell::RefCell;

use super::*;

/// Patterns a thread keeps compiled; past this many the cache starts again.
const CACHED_PATTERNS: usize = 256;

thread_local! {
    static COMPILED: RefCell<HashMap<String, Result<::regex::Regex, String>>> =
        RefCell::new(HashMap::new());
}

/// `pattern` compiled (Go's `regexp.Compile`), or why it does not compile. A `Regex` clone
/// shares the compiled program.
fn compiled(pattern: &str) -> Result<::regex::Regex, String> {
    COMPILED.with(|cache| {
        if let Some(r) = cache.borrow().get(pattern) {
            return r.clone();
        }
        let r = ::regex::Regex::new(pattern).map_err(|e| e.to_string());
        let mut cache = cache.borrow_mut();
        if cache.len() >= CACHED_PATTERNS {
            cache.clear();
        }
        cache.insert(pattern.to_string(), r.clone());
        r
    })
}

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("regexMatch", Func::Native(regex_match)),
    ("mustRegexMatch", Func::Native(regex_match)),
    ("regexReplaceAll", Func::Native(regex_replace_all)),
    ("mustRegexReplaceAll", Func::Native(regex_replace_all)),
    ("regexReplaceAllLiteral", Func::Native(regex_replace_all)),
    ("regexFind", Func::Native(regex_find)),
    ("regexFindAll", Func::Native(regex_find_all)),
    ("regexSplit", Func::Native(regex_split)),
    ("mustRegexFind", Func::Unsupported),
    ("mustRegexFindAll", Func::Unsupported),
    ("mustRegexSplit", Func::Unsupported),
    ("regexQuoteMeta", Func::Unsupported),
];

fn regex_match(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    match compiled(st(&a[0])?) {
        Ok(r) => b(r.is_match(st(&a[1])?)),
        Err(e) if name == "mustRegexMatch" => err(e),
        Err(_) => b(false),
    }
}

fn regex_replace_all(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 3)?;
    let r = compiled(st(&a[0])?).map_err(FnError::Msg)?;
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
        s(&r.replace_all(src, ::regex::NoExpand(rep)))
    } else {
        s(&r.replace_all(src, rep))
    }
}

fn regex_find(name: &str, a: &[Value], _budget: &mut Budget) -> F {
    arity(name, a, 2)?;
    let r = compiled(st(&a[0])?).map_err(FnError::Msg)?;
    s(r.find(st(&a[1])?).map_or("", |m| m.as_str()))
}

fn regex_find_all(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 3)?;
    let r = compiled(st(&a[0])?).map_err(FnError::Msg)?;
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

fn regex_split(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 3)?;
    let r = compiled(st(&a[0])?).map_err(FnError::Msg)?;
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
