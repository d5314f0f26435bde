//! Recursive functions, refused at load as OPA refuses them when compiling
//! (`rego_recursion_error`): regorus evaluates a function that calls itself, directly or
//! through others, until the thread's stack overflows, which aborts the process. (regorus
//! itself reports a rule whose value depends on itself when it is evaluated.)
//!
//! The call graph is read from regorus' syntax tree (`regorus::unstable`): each call names a
//! function of its package, of an imported package, or by its full `data.` path.

use std::collections::BTreeMap;

use regorus::unstable::{Expr, Literal, Module, Query, Rule, RuleHead, Span};

/// A call that closes a cycle of functions.
pub(super) struct Recursion {
    /// The file of the call, as given to regorus.
    pub file: String,
    /// Byte offsets of the call in that file.
    pub span: (usize, usize),
    /// The functions of the cycle, from the called one back to it.
    pub cycle: Vec<String>,
}

/// The functions a call can name, and where it is written.
type Candidates = (Vec<String>, Span);

/// A call from one function to another: the callee's path and where the call is written.
struct Call {
    callee: String,
    at: Span,
}

/// The first cycle of function calls in `modules`, if any.
pub(super) fn find<'m>(modules: impl IntoIterator<Item = &'m Module>) -> Option<Recursion> {
    // Every function and what it calls, by full path (`data.pkg.name`).
    let mut calls: BTreeMap<String, Vec<Call>> = BTreeMap::new();
    // Each function's calls, with the paths each call can name (resolved once all are known).
    let mut unresolved: Vec<(String, Vec<Candidates>)> = Vec::new();
    for module in modules {
        let Some(package) = path_of(&module.package.refr) else {
            continue;
        };
        let package = if package.starts_with("data.") {
            package
        } else {
            format!("data.{package}")
        };
        let imports: Vec<(String, String)> = module
            .imports
            .iter()
            .filter_map(|i| {
                let path = path_of(&i.refr)?;
                let alias = match &i.r#as {
                    Some(alias) => alias.text().to_string(),
                    None => path.rsplit('.').next()?.to_string(),
                };
                Some((alias, path))
            })
            .collect();
        for rule in &module.policy {
            let Rule::Spec {
                head: RuleHead::Func {
                    refr, args, assign, ..
                },
                bodies,
                ..
            } = &**rule
            else {
                continue;
            };
            let Some(name) = path_of(refr) else {
                continue;
            };
            let mut found = Vec::new();
            for arg in args {
                expr_calls(arg, &mut found);
            }
            if let Some(a) = assign {
                expr_calls(&a.value, &mut found);
            }
            for body in bodies {
                if let Some(a) = &body.assign {
                    expr_calls(&a.value, &mut found);
                }
                query_calls(&body.query, &mut found);
            }
            let candidates = found
                .into_iter()
                .map(|(path, at)| (resolutions(&path, &package, &imports), at))
                .collect();
            let function = format!("{package}.{name}");
            calls.entry(function.clone()).or_default();
            unresolved.push((function, candidates));
        }
    }
    for (function, found) in unresolved {
        let resolved: Vec<Call> = found
            .into_iter()
            .filter_map(|(candidates, at)| {
                let callee = candidates.into_iter().find(|c| calls.contains_key(c))?;
                Some(Call { callee, at })
            })
            .collect();
        calls.entry(function).or_default().extend(resolved);
    }
    first_cycle(&calls)
}

/// What a call's path can name: a function of the package, of an imported package, or the
/// path itself when it starts with `data.`.
fn resolutions(path: &str, package: &str, imports: &[(String, String)]) -> Vec<String> {
    if path.starts_with("data.") {
        return vec![path.to_string()];
    }
    let mut out = vec![format!("{package}.{path}")];
    let (first, rest) = path.split_once('.').unwrap_or((path, ""));
    for (alias, target) in imports {
        if alias == first && !rest.is_empty() {
            out.push(format!("{target}.{rest}"));
        }
    }
    out
}

/// Depth-first search over the call graph, without recursion (a graph can be deep).
fn first_cycle(calls: &BTreeMap<String, Vec<Call>>) -> Option<Recursion> {
    #[derive(Clone, Copy, PartialEq)]
    enum State {
        New,
        OnPath,
        Done,
    }
    let mut state: BTreeMap<&str, State> = calls.keys().map(|k| (k.as_str(), State::New)).collect();
    for start in calls.keys() {
        if state[start.as_str()] != State::New {
            continue;
        }
        // The path being explored: a function and the index of its next call.
        let mut path: Vec<(&str, usize)> = vec![(start.as_str(), 0)];
        state.insert(start.as_str(), State::OnPath);
        while let Some((function, next)) = path.last_mut() {
            let function: &str = function;
            let Some(call) = calls[function].get(*next) else {
                state.insert(function, State::Done);
                path.pop();
                continue;
            };
            *next += 1;
            match state[call.callee.as_str()] {
                State::New => {
                    state.insert(call.callee.as_str(), State::OnPath);
                    path.push((call.callee.as_str(), 0));
                }
                State::OnPath => {
                    let from = path.iter().position(|(f, _)| *f == call.callee)?;
                    let mut cycle: Vec<String> =
                        path[from..].iter().map(|(f, _)| (*f).to_string()).collect();
                    cycle.push(call.callee.clone());
                    return Some(Recursion {
                        file: call.at.source.file().clone(),
                        span: (call.at.start as usize, call.at.end as usize),
                        cycle,
                    });
                }
                State::Done => {}
            }
        }
    }
    None
}

/// `a.b.c`, `data.a["b"]`: a reference as a dotted path (`None` for anything else).
fn path_of(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Var { value, .. } => value.as_string().ok().map(ToString::to_string),
        Expr::RefDot { refr, field, .. } => {
            Some(format!("{}.{}", path_of(refr)?, field.1.as_string().ok()?))
        }
        Expr::RefBrack { refr, index, .. } => match &**index {
            Expr::String { value, .. } => {
                Some(format!("{}.{}", path_of(refr)?, value.as_string().ok()?))
            }
            _ => None,
        },
        _ => None,
    }
}

type Found = Vec<(String, Span)>;

fn query_calls(query: &Query, out: &mut Found) {
    for stmt in &query.stmts {
        match &stmt.literal {
            Literal::SomeVars { .. } => {}
            Literal::SomeIn {
                key,
                value,
                collection,
                ..
            } => {
                if let Some(k) = key {
                    expr_calls(k, out);
                }
                expr_calls(value, out);
                expr_calls(collection, out);
            }
            Literal::Expr { expr, .. } | Literal::NotExpr { expr, .. } => expr_calls(expr, out),
            Literal::Every { domain, query, .. } => {
                expr_calls(domain, out);
                query_calls(query, out);
            }
        }
        for w in &stmt.with_mods {
            expr_calls(&w.r#as, out);
        }
    }
}

/// The calls in an expression (its depth is bounded by regorus' parser).
fn expr_calls(expr: &Expr, out: &mut Found) {
    match expr {
        Expr::String { .. }
        | Expr::RawString { .. }
        | Expr::Number { .. }
        | Expr::Bool { .. }
        | Expr::Null { .. }
        | Expr::Var { .. } => {}
        Expr::Array { items, .. } | Expr::Set { items, .. } => {
            for i in items {
                expr_calls(i, out);
            }
        }
        Expr::Object { fields, .. } => {
            for (_, k, v) in fields {
                expr_calls(k, out);
                expr_calls(v, out);
            }
        }
        Expr::ArrayCompr { term, query, .. } | Expr::SetCompr { term, query, .. } => {
            expr_calls(term, out);
            query_calls(query, out);
        }
        Expr::ObjectCompr {
            key, value, query, ..
        } => {
            expr_calls(key, out);
            expr_calls(value, out);
            query_calls(query, out);
        }
        Expr::Call {
            span, fcn, params, ..
        } => {
            if let Some(path) = path_of(fcn) {
                out.push((path, span.clone()));
            }
            for p in params {
                expr_calls(p, out);
            }
        }
        Expr::UnaryExpr { expr, .. } => expr_calls(expr, out),
        Expr::RefDot { refr, .. } => expr_calls(refr, out),
        Expr::RefBrack { refr, index, .. } => {
            expr_calls(refr, out);
            expr_calls(index, out);
        }
        Expr::BinExpr { lhs, rhs, .. }
        | Expr::BoolExpr { lhs, rhs, .. }
        | Expr::ArithExpr { lhs, rhs, .. }
        | Expr::AssignExpr { lhs, rhs, .. } => {
            expr_calls(lhs, out);
            expr_calls(rhs, out);
        }
        Expr::Membership {
            key,
            value,
            collection,
            ..
        } => {
            if let Some(k) = key {
                expr_calls(k, out);
            }
            expr_calls(value, out);
            expr_calls(collection, out);
        }
        #[allow(unreachable_patterns)]
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    /// The cycle `find` sees in these files, if any.
    fn cycle(files: &[(&str, &str)]) -> Option<Vec<String>> {
        let mut engine = regorus::Engine::new();
        for (path, text) in files {
            engine
                .add_policy((*path).to_string(), (*text).to_string())
                .expect("parses");
        }
        super::find(engine.get_modules().iter().map(|m| &**m)).map(|r| r.cycle)
    }

    #[test]
    fn calls_are_followed_through_imports_and_full_paths() {
        let lib = "package lib\n\nimport rego.v1\n\ng(x) := data.main.f(x)\n";
        let main = "package main\n\nimport rego.v1\nimport data.lib as l\n\nf(x) := l.g(x)\n";
        assert_eq!(
            cycle(&[("lib.rego", lib), ("main.rego", main)]).expect("a cycle"),
            ["data.lib.g", "data.main.f", "data.lib.g"]
        );
    }

    #[test]
    fn chains_and_same_names_elsewhere_are_not_recursion() {
        // `f` calls a `g` of another package that calls a builtin named like nothing here;
        // `lib.f` is not `main.f`.
        let lib = "package lib\n\nimport rego.v1\n\nf(x) := upper(x)\n";
        let main = "package main\n\nimport rego.v1\nimport data.lib\n\nf(x) := lib.f(x)\n\nh(x) := f(f(x))\n\ndeny contains h(\"a\") if { true }\n";
        assert!(cycle(&[("lib.rego", lib), ("main.rego", main)]).is_none());
    }
}
