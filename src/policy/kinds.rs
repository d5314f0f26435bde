//! Which documents a user package can report on, decided from its rules before any
//! evaluation: when every body of every result rule (`deny*`, `violation*`, `warn*`) tests
//! `input.kind` against string literals at its top level (`input.kind == "Deployment"`,
//! `input.kind in {"Deployment", "StatefulSet"}`), a document of another kind cannot give a
//! result, and is not evaluated. Anything else (a default result, a body without such a test,
//! a test through a helper rule or under `with`) keeps every document: the answer is
//! conservative, never a missed result.
//!
//! The rules are read from regorus' syntax tree (`regorus::unstable`: not covered by semver,
//! so a regorus update that moves it fails to compile here rather than misreading a policy).

use std::collections::BTreeSet;

use regorus::unstable::{AssignOp, BoolOp, Expr, Literal, Module, Query, Rule, RuleHead};

/// The kinds a package's documents must have to give a result; `None` when any document may.
/// `modules` are the package's modules (its test files included: their `test_` rules are not
/// result rules).
pub(super) fn guarded_kinds<'m>(
    modules: impl IntoIterator<Item = &'m Module>,
    is_result_rule: impl Fn(&str) -> bool,
) -> Option<BTreeSet<String>> {
    let mut kinds = BTreeSet::new();
    let mut any = false;
    for module in modules {
        for rule in &module.policy {
            match &**rule {
                Rule::Default { refr, .. } => {
                    if base_name(refr).as_deref().is_none_or(&is_result_rule) {
                        return None;
                    }
                }
                Rule::Spec { head, bodies, .. } => {
                    let refr = match head {
                        RuleHead::Compr { refr, .. }
                        | RuleHead::Set { refr, .. }
                        | RuleHead::Func { refr, .. } => refr,
                    };
                    if !base_name(refr).as_deref().is_none_or(&is_result_rule) {
                        continue;
                    }
                    if bodies.is_empty() {
                        return None;
                    }
                    for body in bodies {
                        kinds.extend(query_kinds(&body.query)?);
                    }
                    any = true;
                }
            }
        }
    }
    any.then_some(kinds)
}

/// The name a rule head defines (`deny` in `deny contains msg`, `deny[msg]`, `deny.x`).
pub(super) fn base_name(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Var { value, .. } => value.as_string().ok().map(ToString::to_string),
        Expr::RefDot { refr, .. } | Expr::RefBrack { refr, .. } => base_name(refr),
        _ => None,
    }
}

/// The kinds a query's first top-level `input.kind` test allows (a later test can only narrow
/// them).
fn query_kinds(query: &Query) -> Option<BTreeSet<String>> {
    query
        .stmts
        .iter()
        .filter(|s| s.with_mods.is_empty())
        .find_map(|s| match &s.literal {
            Literal::Expr { expr, .. } => expr_kinds(expr),
            _ => None,
        })
}

fn expr_kinds(expr: &Expr) -> Option<BTreeSet<String>> {
    match expr {
        Expr::BoolExpr {
            op: BoolOp::Eq,
            lhs,
            rhs,
            ..
        }
        | Expr::AssignExpr {
            op: AssignOp::Eq,
            lhs,
            rhs,
            ..
        } => {
            let (kind, other) = if is_input_kind(lhs) {
                (lhs, rhs)
            } else {
                (rhs, lhs)
            };
            is_input_kind(kind).then(|| string(other).map(|s| BTreeSet::from([s])))?
        }
        Expr::Membership {
            key: None,
            value,
            collection,
            ..
        } if is_input_kind(value) => match &**collection {
            Expr::Set { items, .. } | Expr::Array { items, .. } => {
                items.iter().map(|i| string(i)).collect()
            }
            _ => None,
        },
        _ => None,
    }
}

/// `input.kind` or `input["kind"]`.
fn is_input_kind(expr: &Expr) -> bool {
    let (refr, field) = match expr {
        Expr::RefDot { refr, field, .. } => (refr, field.1.as_string().ok().cloned()),
        Expr::RefBrack { refr, index, .. } => (refr, string(index).map(Into::into)),
        _ => return false,
    };
    field.as_deref() == Some("kind")
        && matches!(&**refr, Expr::Var { value, .. } if value.as_string().is_ok_and(|v| &**v == "input"))
}

fn string(expr: &Expr) -> Option<String> {
    match expr {
        Expr::String { value, .. } | Expr::RawString { value, .. } => {
            value.as_string().ok().map(ToString::to_string)
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(rego: &str) -> Option<Vec<String>> {
        let mut engine = regorus::Engine::new();
        engine.set_rego_v0(!rego.contains("import rego.v1"));
        engine
            .add_policy("p.rego".into(), rego.into())
            .expect("policy compiles");
        let modules: Vec<&Module> = engine.get_modules().iter().map(|m| &**m).collect();
        guarded_kinds(modules, super::super::is_check_rule).map(|k| k.into_iter().collect())
    }

    #[test]
    fn kinds_tested_in_every_result_body_are_read() {
        let v1 = "package p\nimport rego.v1\n\
            deny contains msg if {\n  input.kind == \"Deployment\"\n  msg := \"x\"\n}\n\
            warn_replicas contains msg if {\n  input.kind in {\"StatefulSet\", \"Deployment\"}\n  msg := \"y\"\n}\n\
            helper if input.spec\n";
        assert_eq!(
            kinds(v1),
            Some(vec!["Deployment".to_string(), "StatefulSet".to_string()])
        );
        let v0 = "package p\ndeny[msg] {\n  \"Service\" = input[\"kind\"]\n  msg := \"x\"\n}\n";
        assert_eq!(kinds(v0), Some(vec!["Service".to_string()]));
    }

    #[test]
    fn anything_less_certain_keeps_every_document() {
        for rego in [
            // A body without the test.
            "package p\nimport rego.v1\ndeny contains \"x\" if input.kind == \"A\"\ndeny contains \"y\" if input.spec\n",
            // A test through a helper rule.
            "package p\nimport rego.v1\nis_a if input.kind == \"A\"\ndeny contains \"x\" if is_a\n",
            // A negated test, and a default result.
            "package p\nimport rego.v1\ndeny contains \"x\" if not input.kind == \"A\"\n",
            "package p\nimport rego.v1\ndefault violation := false\nviolation if input.kind == \"A\"\n",
            // A test under `with`, and one against a variable.
            "package p\nimport rego.v1\ndeny contains \"x\" if {\n  input.kind == \"A\" with input as {\"kind\": \"A\"}\n}\n",
            "package p\nimport rego.v1\nk := \"A\"\ndeny contains \"x\" if input.kind == k\n",
            // No result rule at all.
            "package p\nimport rego.v1\nx := 1\n",
        ] {
            assert_eq!(kinds(rego), None, "{rego}");
        }
    }
}
