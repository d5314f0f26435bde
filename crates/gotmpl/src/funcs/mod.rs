//! The template functions, as name → function tables by family: Go's builtins (`go.rs`),
//! Sprig v3's (`defaults`, `strings`, `conv`, `math`, `lists`, `dicts`, `encoding`, `paths`,
//! `regex`, `semver`, `crypto`, `reflect`, `dates`, `system`), Helm 4's (`helm.rs`) and Argo CD's
//! ApplicationSet functions (`argocd.rs`). A [`FuncSet`] is the union that one template engine
//! registers; the names it defines are its tables' names.

mod argocd;
mod conv;
mod crypto;
mod dates;
mod defaults;
mod dicts;
mod encoding;
mod go;
mod helm;
mod lists;
mod math;
mod paths;
mod reflect;
mod regex;
mod semver;
mod strings;
mod system;

use std::cmp::Ordering;
use std::collections::{BTreeMap, HashMap};
use std::sync::LazyLock;

use crate::budget::{Budget, Stop, VALUE_BYTES, Walk};
use crate::fmt::{go_quote, sprint, sprintf, sprintln};
use crate::text::{Text, TextBuf};
use crate::value::{Value, equal_within};
use crate::yaml;

pub use argocd::{normalize, slugify};

pub enum FnError {
    Unsupported,
    Msg(String),
    /// Past the rendering's budget: rendering stops.
    Budget(String),
}

impl From<Stop> for FnError {
    fn from(s: Stop) -> Self {
        match s {
            Stop::Value(m) => FnError::Msg(m),
            Stop::Budget(m) => FnError::Budget(m),
        }
    }
}

type F = Result<Value, FnError>;

fn err<T>(m: impl Into<String>) -> Result<T, FnError> {
    Err(FnError::Msg(m.into()))
}

/// A function evaluated from its arguments: its name (one function may serve several), the
/// arguments, and the budget what it builds is counted in.
pub(crate) type Native = fn(&str, &[Value], &mut Budget) -> F;

/// One entry of a family's table.
#[derive(Clone, Copy)]
pub(crate) enum Func {
    Native(Native),
    /// Evaluated by the executor, which it needs: `and`/`or` (lazy arguments), `fail`,
    /// `include`, `tpl`, `required`.
    Exec,
    /// Defined (a template that mentions it parses) but not evaluated here: random, time,
    /// crypto, network and environment functions. Calling one is an
    /// [`crate::ErrorKind::Unsupported`] error at the call.
    Unsupported,
}

/// The functions one template engine registers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum FuncSet {
    /// Helm 4's engine: Go's builtins, Sprig's text functions, and Helm's own (`include`,
    /// `tpl`, `required`, `lookup`, `toYaml`, `fromYaml`, ...).
    #[default]
    Helm,
    /// Argo CD's ApplicationSet controller (`goTemplate: true`): Go's builtins and Sprig's text
    /// functions less `env`, `expandenv` and `getHostByName`, plus `normalize`, `slugify`,
    /// `toYaml`, `fromYaml` and `fromYamlArray`. No Helm function.
    ArgoCd,
}

/// Sprig's families, as `sprig.TxtFuncMap()` holds them.
const SPRIG: &[&[(&str, Func)]] = &[
    defaults::FUNCS,
    strings::FUNCS,
    conv::FUNCS,
    math::FUNCS,
    lists::FUNCS,
    dicts::FUNCS,
    encoding::FUNCS,
    paths::FUNCS,
    regex::FUNCS,
    semver::FUNCS,
    crypto::FUNCS,
    reflect::FUNCS,
    dates::FUNCS,
    system::FUNCS,
];

type Table = HashMap<&'static str, Func>;

/// The families in registration order: a later entry replaces an earlier one of the same
/// name (as Go's `Funcs` does), and the `removed` names are then deleted.
fn table(families: &[&[(&'static str, Func)]], removed: &[&str]) -> Table {
    let mut t = Table::new();
    for family in families {
        t.extend(family.iter().copied());
    }
    for name in removed {
        t.remove(*name);
    }
    t
}

static HELM: LazyLock<Table> = LazyLock::new(|| {
    let mut families = vec![go::FUNCS];
    families.extend_from_slice(SPRIG);
    families.push(helm::FUNCS);
    table(&families, &[])
});

static ARGOCD: LazyLock<Table> = LazyLock::new(|| {
    let mut families = vec![go::FUNCS];
    families.extend_from_slice(SPRIG);
    families.push(argocd::FUNCS);
    table(&families, argocd::REMOVED)
});

impl FuncSet {
    fn table(self) -> &'static Table {
        match self {
            FuncSet::Helm => &HELM,
            FuncSet::ArgoCd => &ARGOCD,
        }
    }

    pub(crate) fn get(self, name: &str) -> Option<Func> {
        self.table().get(name).copied()
    }

    /// Whether a template may name `name` (Go reports any other at parse time).
    #[must_use]
    pub fn is_defined(self, name: &str) -> bool {
        self.table().contains_key(name)
    }

    /// Whether `name` is defined and evaluated here (not refused as unsupported).
    #[must_use]
    pub fn is_supported(self, name: &str) -> bool {
        matches!(self.get(name), Some(Func::Native(_) | Func::Exec))
    }

    /// The names this set defines, sorted.
    #[must_use]
    pub fn names(self) -> Vec<&'static str> {
        let mut names: Vec<&'static str> = self.table().keys().copied().collect();
        names.sort_unstable();
        names
    }

    /// Calls `name`, one that needs no template context; what it builds is counted in
    /// `budget`.
    pub(crate) fn call(self, name: &str, args: &[Value], budget: &mut Budget) -> F {
        match self.get(name) {
            Some(Func::Native(f)) => f(name, args, budget),
            _ => Err(FnError::Unsupported),
        }
    }
}

pub(super) fn arity(name: &str, args: &[Value], n: usize) -> Result<(), FnError> {
    if args.len() != n {
        return err(format!(
            "wrong number of args for {name}: want {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

pub(super) fn min_arity(name: &str, args: &[Value], n: usize) -> Result<(), FnError> {
    if args.len() < n {
        return err(format!(
            "wrong number of args for {name}: want at least {n} got {}",
            args.len()
        ));
    }
    Ok(())
}

/// A `string` parameter: Go's reflection refuses anything else.
pub(super) fn text(v: &Value) -> Result<&Text, FnError> {
    match v {
        Value::Str(t) => Ok(t),
        Value::Nil => err("invalid value; expected string"),
        other => err(format!(
            "wrong type for value; expected string; got {}",
            other.type_name()
        )),
    }
}

pub(super) fn st(v: &Value) -> Result<&str, FnError> {
    text(v).map(Text::as_str)
}

pub(super) fn int_param(v: &Value) -> Result<i64, FnError> {
    match v {
        Value::Int(i, _) => Ok(*i),
        Value::Nil => err("invalid value; expected int"),
        other => err(format!(
            "wrong type for value; expected int; got {}",
            other.type_name()
        )),
    }
}

pub(super) fn map_param(v: &Value) -> Result<&crate::value::MapRef, FnError> {
    match v {
        Value::Map(m) => Ok(m),
        Value::Nil => err("invalid value; expected map[string]interface {}"),
        other => err(format!(
            "wrong type for value; expected map[string]interface {{}}; got {}",
            other.type_name()
        )),
    }
}

/// Sprig's `strval`, for a message (a value past [`Value::to_go_string`]'s length is cut).
pub(crate) fn strval(v: &Value) -> String {
    match v {
        Value::Str(s) => s.as_str().to_string(),
        other => other.to_go_string(),
    }
}

/// Sprig's `strval`, a value's `%v` text counted in the budget.
pub(super) fn strval_in(v: &Value, budget: &mut Budget) -> Result<String, Stop> {
    Ok(strval_text(v, budget)?.as_str().to_string())
}

pub(super) fn strval_text(v: &Value, budget: &mut Budget) -> Result<Text, Stop> {
    match v {
        Value::Str(s) => Ok(s.clone()),
        other => sprint(std::slice::from_ref(other), &mut Walk::new(budget)),
    }
}

/// Sprig's `strslice`.
pub(super) fn strslice(v: &Value, budget: &mut Budget) -> Result<Vec<Value>, Stop> {
    Ok(match v {
        Value::List(l) => {
            budget.charge(l.len().saturating_mul(VALUE_BYTES))?;
            let mut out = Vec::with_capacity(l.len());
            for x in l.iter().filter(|x| !matches!(x, Value::Nil)) {
                out.push(Value::Str(strval_text(x, budget)?));
            }
            out
        }
        Value::Nil => Vec::new(),
        other => vec![Value::Str(strval_text(other, budget)?)],
    })
}

/// The bytes of `v` as a function's new result: a string's, a list's or map's items.
pub(super) fn size_of(v: &Value) -> usize {
    match v {
        Value::Str(t) => t.as_str().len(),
        Value::List(l) => l.len().saturating_mul(VALUE_BYTES),
        Value::Map(m) => m.borrow().len().saturating_mul(VALUE_BYTES),
        _ => 0,
    }
}

/// `v`, a new value, counted in the budget (its size is bounded by the arguments').
pub(super) fn counted(budget: &mut Budget, v: Value) -> F {
    budget.charge(size_of(&v))?;
    Ok(v)
}

/// A new list of `items`, counted in the budget.
pub(super) fn new_list(budget: &mut Budget, items: Vec<Value>) -> F {
    counted(budget, Value::list(items))
}

/// Whether `x` is in `list`, as Sprig's `reflect.DeepEqual` finds it.
pub(super) fn in_list(x: &Value, list: &[Value], budget: &mut Budget) -> Result<bool, Stop> {
    for y in list {
        if equal_within(x, y, &mut Walk::new(budget))? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// `cast.ToInt64`, which Sprig's arithmetic uses (errors become 0).
pub(crate) fn to_i64(v: &Value) -> i64 {
    match v {
        Value::Int(i, _) => *i,
        Value::Float(f, _) => *f as i64,
        Value::Bool(b, _) => i64::from(*b),
        Value::Str(s) => parse_go_int(s.as_str()).unwrap_or(0),
        _ => 0,
    }
}

pub(super) fn parse_go_int(s: &str) -> Option<i64> {
    // cast trims a zero decimal part ("3.0" → "3") then parses with base 0.
    let s = match s.split_once('.') {
        Some((i, d)) if !d.is_empty() && d.bytes().all(|c| c == b'0') => i,
        _ => s,
    };
    let (neg, body) = match s.strip_prefix('-') {
        Some(b) => (true, b),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let lower = body.to_ascii_lowercase();
    let v = if let Some(h) = lower.strip_prefix("0x") {
        i64::from_str_radix(h, 16).ok()?
    } else if let Some(b) = lower.strip_prefix("0b") {
        i64::from_str_radix(b, 2).ok()?
    } else if let Some(o) = lower.strip_prefix("0o") {
        i64::from_str_radix(o, 8).ok()?
    } else if lower.len() > 1 && lower.starts_with('0') {
        i64::from_str_radix(&lower[1..], 8).ok()?
    } else {
        if lower.is_empty() || !lower.bytes().all(|c| c.is_ascii_digit()) {
            return None;
        }
        lower.parse().ok()?
    };
    Some(if neg { -v } else { v })
}

pub(super) fn to_f64(v: &Value) -> f64 {
    match v {
        Value::Int(i, _) => *i as f64,
        Value::Float(f, _) => *f,
        Value::Bool(b, _) => f64::from(u8::from(*b)),
        Value::Str(s) => s.as_str().trim().parse().unwrap_or(0.0),
        _ => 0.0,
    }
}

pub(super) fn list_items(name: &str, v: &Value) -> Result<Vec<Value>, FnError> {
    match v {
        Value::List(l) => Ok(l.as_ref().clone()),
        other => err(format!(
            "Cannot find {name} on type {}",
            other.type_name().trim_start_matches("[]")
        )),
    }
}

pub(super) fn list_of(name: &str, v: &Value) -> Result<Vec<Value>, FnError> {
    match v {
        Value::List(l) => Ok(l.as_ref().clone()),
        // Sprig reflects on the type of nil and panics.
        Value::Nil => err("runtime error: invalid memory address or nil pointer dereference"),
        other => err(format!("Cannot {name} on type {}", other.type_name())),
    }
}

pub(super) fn b(v: bool) -> F {
    Ok(Value::Bool(v, None))
}

pub(super) fn s(v: &str) -> F {
    Ok(Value::str(v))
}

pub(super) fn sub_text(t: &Text, start: usize, end: usize, budget: &mut Budget) -> F {
    budget.charge(end - start)?;
    let mut out = TextBuf::default();
    out.push_text_range(t, start..end);
    Ok(Value::Str(out.finish()))
}

pub(super) fn counted_result(budget: &mut Budget, v: F) -> F {
    counted(budget, v?)
}
