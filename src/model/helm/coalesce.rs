//! Effective values as Helm coalesces them: which subcharts are enabled (`condition`, `tags`),
//! their defaults under their keys, `global` copied down, `import-values` brought up; and values
//! with spans turned into template values that keep their origins.

use gotmpl::{Origin, Value};

use super::chart::{Chart, Dependency, ImportValue};
use super::values::Values;
use crate::source::Span;

/// Subcharts that are enabled, with the values key each one reads (its alias or name).
pub(super) fn enabled_subcharts<'c>(chart: &'c Chart, values: &Value) -> Vec<(&'c Chart, String)> {
    let mut out = Vec::new();
    for sub in &chart.subcharts {
        let deps: Vec<&Dependency> = chart
            .dependencies
            .iter()
            .filter(|d| d.name == sub.name)
            .collect();
        if deps.is_empty() {
            // A folder under charts/ without a dependencies entry is still a subchart.
            out.push((sub, sub.name.clone()));
            continue;
        }
        for d in deps {
            if dependency_enabled(d, values) {
                out.push((sub, d.alias.clone().unwrap_or_else(|| d.name.clone())));
            }
        }
    }
    out
}

/// Helm's `condition` (the first path that resolves to a bool decides), then `tags` (any true).
fn dependency_enabled(d: &Dependency, values: &Value) -> bool {
    if let Some(cond) = &d.condition {
        for path in cond.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if let Some(Value::Bool(b, _)) = lookup_path(values, path) {
                return b;
            }
        }
    }
    if d.tags.is_empty() {
        return true;
    }
    let mut any_set = false;
    for t in &d.tags {
        if let Some(Value::Bool(b, _)) = lookup_path(values, &format!("tags.{t}")) {
            if b {
                return true;
            }
            any_set = true;
        }
    }
    !any_set
}

fn lookup_path(values: &Value, path: &str) -> Option<Value> {
    let mut cur = values.clone();
    for key in path.split('.') {
        let next = match &cur {
            Value::Map(m) => m.borrow().get(key).cloned(),
            _ => None,
        };
        cur = next?;
    }
    Some(cur)
}

/// Coalesces each enabled subchart's defaults under its key, and `global` down, recursively
/// (Helm's `CoalesceValues`): values already set win; `null` deletes a default. Which
/// subcharts are enabled is read from `enabled_from` (the values with the user's layers).
pub(super) fn coalesce_deps(
    chart: &Chart,
    values: &Value,
    enabled_from: &Value,
    origins: &mut Vec<Span>,
) {
    let Value::Map(top) = values else {
        return;
    };
    let global = top.borrow().get("global").cloned();
    for (sub, key) in enabled_subcharts(chart, enabled_from) {
        let sub_enabled = lookup_path(enabled_from, &key).unwrap_or_else(Value::empty_map);
        let defaults = to_value(&sub.defaults, origins);
        // The subchart's own `import-values` have become part of its defaults.
        if let Some(imported) = imports(sub, &sub_enabled, origins) {
            coalesce_into(&defaults, &imported);
        }
        let current = top.borrow().get(&key).cloned();
        let merged = match current {
            Some(v @ Value::Map(_)) => {
                coalesce_into(&v, &defaults);
                v
            }
            Some(Value::Nil) | None => defaults,
            // A non-map value where the subchart expects a map: Helm keeps the user's value.
            Some(other) => other,
        };
        if let (Value::Map(sm), Some(Value::Map(g))) = (&merged, &global) {
            let sub_global = sm.borrow().get("global").cloned();
            let combined = match sub_global {
                Some(sg @ Value::Map(_)) => {
                    let parent = Value::Map(g.clone()).deep_copy();
                    coalesce_into(&parent, &sg);
                    parent
                }
                _ => Value::Map(g.clone()).deep_copy(),
            };
            sm.borrow_mut().insert("global".into(), combined);
        } else if let Value::Map(sm) = &merged {
            // Helm gives every subchart a `global` table, empty when no chart sets one.
            let has = matches!(sm.borrow().get("global"), Some(Value::Map(_)));
            if !has {
                sm.borrow_mut().insert("global".into(), Value::empty_map());
            }
        }
        coalesce_deps(sub, &merged, &sub_enabled, origins);
        top.borrow_mut().insert(key, merged);
    }
}

/// The values `chart`'s `import-values` bring in (Helm's `processImportValues`), `None` when it
/// has none. As in Helm they are read from the defaults (the chart's and its subcharts', not
/// the user's values); an earlier import wins over a later one, and the caller puts them below
/// the chart's own values.
pub(super) fn imports(
    chart: &Chart,
    enabled_from: &Value,
    origins: &mut Vec<Span>,
) -> Option<Value> {
    let keyed: Vec<(String, &[ImportValue])> = chart
        .dependencies
        .iter()
        .filter(|d| !d.import_values.is_empty())
        .map(|d| {
            (
                d.alias.clone().unwrap_or_else(|| d.name.clone()),
                &d.import_values[..],
            )
        })
        .filter(|(key, _)| {
            enabled_subcharts(chart, enabled_from)
                .iter()
                .any(|(_, k)| k == key)
        })
        .collect();
    if keyed.is_empty() {
        return None;
    }
    let defaults = to_value(&chart.defaults, origins);
    coalesce_deps(chart, &defaults, enabled_from, origins);
    let out = Value::empty_map();
    for (key, ivs) in keyed {
        for iv in ivs {
            let (child, parent) = match iv {
                ImportValue::Export(name) => (format!("exports.{name}"), "."),
                ImportValue::Path { child, parent } => (child.clone(), parent.as_str()),
            };
            let Some(table @ Value::Map(_)) = lookup_path(&defaults, &format!("{key}.{child}"))
            else {
                continue;
            };
            let mut piece = table.deep_copy();
            if parent != "." {
                for k in parent.split('.').rev() {
                    piece = Value::map([(k.to_string(), piece)].into_iter().collect());
                }
            }
            coalesce_into(&out, &piece);
        }
    }
    Some(out)
}

/// Fills `dst` with `defaults` where `dst` has no key; maps merge recursively.
pub(super) fn coalesce_into(dst: &Value, defaults: &Value) {
    let (Value::Map(d), Value::Map(s)) = (dst, defaults) else {
        return;
    };
    let src: Vec<(String, Value)> = s
        .borrow()
        .iter()
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect();
    for (k, v) in src {
        let cur = d.borrow().get(&k).cloned();
        match cur {
            None => {
                d.borrow_mut().insert(k, v);
            }
            Some(Value::Nil) => {
                d.borrow_mut().remove(&k);
            }
            Some(existing @ Value::Map(_)) => coalesce_into(&existing, &v),
            Some(_) => {}
        }
    }
}

/// Converts values with spans into template values whose origins index `origins`.
#[must_use]
pub fn to_value(v: &Values, origins: &mut Vec<Span>) -> Value {
    match v {
        Values::Null => Value::Nil,
        Values::Scalar { text, is_str, span } => {
            let origin = Some(Origin(origins.len() as u64));
            origins.push(*span);
            if *is_str {
                return Value::str_at(text, origin);
            }
            match gotmpl::yaml::resolve_plain(text) {
                Value::Bool(b, _) => Value::Bool(b, origin),
                Value::Float(f, _) => Value::Float(f, origin),
                Value::Nil => Value::Nil,
                _ => Value::str_at(text, origin),
            }
        }
        Values::Seq(_, items) => Value::list(items.iter().map(|i| to_value(i, origins)).collect()),
        Values::Map(entries) => Value::map(
            entries
                .iter()
                .filter(|(_, v)| !matches!(v, Values::Null))
                .map(|(k, v)| (k.to_string(), to_value(v, origins)))
                .collect(),
        ),
    }
}
