//! Template values: the dynamic types Helm templates see (`interface{}` holding YAML/JSON data).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

use crate::budget::{Budget, Stop, VALUE_BYTES, Walk, with_stack};
use crate::text::{Origin, Source, Text};

/// A map with Go reference semantics: `set` and `merge` mutate it where it is shared.
pub type MapRef = Rc<RefCell<BTreeMap<String, Value>>>;

/// Methods and fields of host objects (`.Files`, `.Capabilities.APIVersions`).
pub trait Object: fmt::Debug {
    /// Go type name, for messages.
    fn type_name(&self) -> &str;
    /// A field or a method called with `args`; `None` when there is no such member.
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>>;
}

#[derive(Clone, Debug)]
pub enum Value {
    /// Go's nil (a missing map key, YAML `null`).
    Nil,
    Bool(bool, Option<Origin>),
    /// Go `int`/`int64`.
    Int(i64, Option<Origin>),
    /// Go `float64`: every YAML or JSON number in Helm values.
    Float(f64, Option<Origin>),
    Str(Text),
    List(Rc<Vec<Value>>),
    Map(MapRef),
    Object(Rc<dyn Object>),
}

impl Value {
    #[must_use]
    pub fn str(s: &str) -> Value {
        Value::Str(Text::plain(s))
    }

    #[must_use]
    pub fn str_at(s: &str, origin: Option<Origin>) -> Value {
        match origin {
            Some(o) => Value::Str(Text::with_source(s, Source::Value(o))),
            None => Value::str(s),
        }
    }

    #[must_use]
    pub fn list(items: Vec<Value>) -> Value {
        Value::List(Rc::new(items))
    }

    #[must_use]
    pub fn map(m: BTreeMap<String, Value>) -> Value {
        let map = Rc::new(RefCell::new(m));
        MapScope::track(&map);
        Value::Map(map)
    }

    #[must_use]
    pub fn empty_map() -> Value {
        Value::map(BTreeMap::new())
    }

    /// The origin of a scalar printed whole.
    #[must_use]
    pub fn origin(&self) -> Option<Origin> {
        match self {
            Value::Bool(_, o) | Value::Int(_, o) | Value::Float(_, o) => *o,
            _ => None,
        }
    }

    /// Go's type name as `%T` and error messages print it.
    #[must_use]
    pub fn type_name(&self) -> String {
        match self {
            Value::Nil => "<nil>".into(),
            Value::Bool(..) => "bool".into(),
            Value::Int(..) => "int".into(),
            Value::Float(..) => "float64".into(),
            Value::Str(_) => "string".into(),
            Value::List(_) => "[]interface {}".into(),
            Value::Map(_) => "map[string]interface {}".into(),
            Value::Object(o) => o.type_name().into(),
        }
    }

    /// Sprig `kindOf`.
    #[must_use]
    pub fn kind_name(&self) -> &'static str {
        match self {
            Value::Nil => "invalid",
            Value::Bool(..) => "bool",
            Value::Int(..) => "int",
            Value::Float(..) => "float64",
            Value::Str(_) => "string",
            Value::List(_) => "slice",
            Value::Map(_) => "map",
            Value::Object(_) => "ptr",
        }
    }

    /// Go template truth (`if`, `with`, `and`, `or`, `not`).
    #[must_use]
    pub fn truthy(&self) -> bool {
        match self {
            Value::Nil => false,
            Value::Bool(b, _) => *b,
            Value::Int(i, _) => *i != 0,
            Value::Float(f, _) => *f != 0.0,
            Value::Str(s) => !s.as_str().is_empty(),
            Value::List(l) => !l.is_empty(),
            Value::Map(m) => !m.borrow().is_empty(),
            Value::Object(_) => true,
        }
    }

    /// Sprig's `empty` (the same as falsy for these types).
    #[must_use]
    pub fn is_empty(&self) -> bool {
        !self.truthy()
    }

    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::Str(t) => Some(t.as_str()),
            _ => None,
        }
    }

    /// A deep copy (maps are shared references otherwise). A map that contains itself, or a
    /// value nested past [`crate::budget::MAX_VALUE_DEPTH`], is shared there, not copied.
    #[must_use]
    pub fn deep_copy(&self) -> Value {
        let mut budget = Budget::new(usize::MAX);
        self.copy_within(&mut Walk::new(&mut budget))
            .unwrap_or_else(|_| self.clone())
    }

    /// Sprig's `deepCopy`, each copied node counted in the walk's budget.
    pub(crate) fn copy_within(&self, walk: &mut Walk<'_>) -> Result<Value, Stop> {
        with_stack(|| match self {
            Value::List(l) => {
                walk.enter(self)?;
                walk.charge(l.len().saturating_mul(VALUE_BYTES))?;
                let mut items = Vec::with_capacity(l.len());
                for x in l.iter() {
                    items.push(x.copy_within(walk)?);
                }
                walk.leave(self);
                Ok(Value::list(items))
            }
            Value::Map(m) => {
                walk.enter(self)?;
                let mut out = BTreeMap::new();
                for (k, v) in m.borrow().iter() {
                    walk.charge(k.len() + VALUE_BYTES)?;
                    out.insert(k.clone(), v.copy_within(walk)?);
                }
                walk.leave(self);
                Ok(Value::map(out))
            }
            other => Ok(other.clone()),
        })
    }

    /// Go `fmt` `%v` text, for messages: at most [`MESSAGE_BYTES`], cut short past that, at a
    /// map that contains itself, or past the depth limit.
    #[must_use]
    pub fn to_go_string(&self) -> String {
        let mut budget = Budget::new(MESSAGE_BYTES);
        let mut s = String::new();
        let _ = write_v(&mut s, self, &mut Walk::new(&mut budget));
        s
    }
}

/// How much of a value a message prints.
const MESSAGE_BYTES: usize = 64 << 10;

/// Drops a deep value without one stack frame per level: the items of a list or map that is
/// dropped for good are moved to a heap stack first.
impl Drop for Value {
    fn drop(&mut self) {
        let mut pending: Vec<Value> = Vec::new();
        take_items(self, &mut pending);
        while let Some(mut v) = pending.pop() {
            take_items(&mut v, &mut pending);
        }
    }
}

/// Moves the items of `v` into `out` when `v` holds the last reference to its list or map and
/// one of them would drop items of its own (a list of scalars drops as usual, with no copy).
fn take_items(v: &mut Value, out: &mut Vec<Value>) {
    match v {
        Value::List(l) => {
            if let Some(items) = Rc::get_mut(l) {
                if items.iter().any(owns_items) {
                    out.append(items);
                }
            }
        }
        // The last strong reference, not `Rc::get_mut`: a `MapScope` holds weak ones.
        Value::Map(m) if Rc::strong_count(m) == 1 => {
            if let Ok(mut map) = m.try_borrow_mut()
                && map.values().any(owns_items)
            {
                out.extend(std::mem::take(&mut *map).into_values());
            }
        }
        _ => {}
    }
}

/// Whether dropping `v` drops a list or map with items: one level of recursion.
fn owns_items(v: &Value) -> bool {
    match v {
        Value::List(l) => Rc::strong_count(l) == 1 && !l.is_empty(),
        Value::Map(m) => Rc::strong_count(m) == 1 && m.try_borrow().is_ok_and(|m| !m.is_empty()),
        _ => false,
    }
}

/// Whether `a` equals `b` as Go's `reflect.DeepEqual` sees template values, each compared node
/// counted in the walk's budget.
pub(crate) fn equal_within(a: &Value, b: &Value, walk: &mut Walk<'_>) -> Result<bool, Stop> {
    with_stack(|| {
        Ok(match (a, b) {
            (Value::List(x), Value::List(y)) => {
                if Rc::ptr_eq(x, y) {
                    return Ok(true);
                }
                if x.len() != y.len() {
                    return Ok(false);
                }
                walk.enter(a)?;
                walk.charge(x.len().saturating_mul(VALUE_BYTES))?;
                for (p, q) in x.iter().zip(y.iter()) {
                    if !equal_within(p, q, walk)? {
                        return Ok(false);
                    }
                }
                walk.leave(a);
                true
            }
            (Value::Map(x), Value::Map(y)) => {
                if Rc::ptr_eq(x, y) {
                    return Ok(true);
                }
                let (x, y) = (x.borrow(), y.borrow());
                if x.len() != y.len() {
                    return Ok(false);
                }
                walk.enter(a)?;
                walk.charge(x.len().saturating_mul(VALUE_BYTES))?;
                for ((k1, v1), (k2, v2)) in x.iter().zip(y.iter()) {
                    if k1 != k2 || !equal_within(v1, v2, walk)? {
                        return Ok(false);
                    }
                }
                walk.leave(a);
                true
            }
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(x, _), Value::Bool(y, _)) => x == y,
            (Value::Int(x, _), Value::Int(y, _)) => x == y,
            (Value::Float(x, _), Value::Float(y, _)) => x == y,
            (Value::Str(x), Value::Str(y)) => x.as_str() == y.as_str(),
            (Value::Object(x), Value::Object(y)) => Rc::ptr_eq(x, y),
            _ => false,
        })
    })
}

/// Nodes a plain `==` compares before it gives up (and answers unequal).
const EQ_BYTES: usize = 1 << 24;

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        let mut budget = Budget::new(EQ_BYTES);
        equal_within(self, other, &mut Walk::new(&mut budget)).unwrap_or(false)
    }
}
/// `%v` formatting of `v` into `out`, each byte counted in the walk's budget (a list's or map's
/// punctuation in what entering it costs).
pub(crate) fn write_v(out: &mut String, v: &Value, walk: &mut Walk<'_>) -> Result<(), Stop> {
    with_stack(|| {
        match v {
            Value::List(l) => {
                walk.enter(v)?;
                out.push('[');
                for (i, x) in l.iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    write_v(out, x, walk)?;
                }
                out.push(']');
                walk.leave(v);
            }
            Value::Map(m) => {
                walk.enter(v)?;
                out.push_str("map[");
                for (i, (k, x)) in m.borrow().iter().enumerate() {
                    if i > 0 {
                        out.push(' ');
                    }
                    walk.charge(k.len())?;
                    out.push_str(k);
                    out.push(':');
                    write_v(out, x, walk)?;
                }
                out.push(']');
                walk.leave(v);
            }
            Value::Str(s) => {
                walk.charge(s.as_str().len())?;
                out.push_str(s.as_str());
            }
            scalar => {
                let before = out.len();
                match scalar {
                    Value::Bool(b, _) => out.push_str(if *b { "true" } else { "false" }),
                    Value::Int(i, _) => out.push_str(&i.to_string()),
                    Value::Float(f, _) => out.push_str(&format_float_g(*f)),
                    Value::Object(o) => {
                        out.push('&');
                        out.push_str(o.type_name());
                    }
                    _ => out.push_str("<nil>"),
                }
                walk.charge(out.len() - before)?;
            }
        }
        Ok(())
    })
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)` (what `%v` prints): shortest digits, with an
/// exponent when it is below -4 or at least 6 (strconv uses precision 6 for that choice).
#[must_use]
pub fn format_float_g(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    if f == 0.0 {
        return if f.is_sign_negative() { "-0" } else { "0" }.into();
    }
    // Shortest digits via Rust's `{:e}` (also shortest round-trip).
    let e = format!("{f:e}");
    let (mant, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    if !(-4..6).contains(&exp) {
        let sign = if exp < 0 { '-' } else { '+' };
        return format!("{mant}e{sign}{:02}", exp.abs());
    }
    // Plain decimal from the shortest digits.
    let neg = mant.starts_with('-');
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let point = exp + 1; // digits before the decimal point
    let mut s = String::new();
    if neg {
        s.push('-');
    }
    if point <= 0 {
        s.push_str("0.");
        for _ in 0..(-point) {
            s.push('0');
        }
        s.push_str(&digits);
    } else if (point as usize) >= digits.len() {
        s.push_str(&digits);
        for _ in 0..(point as usize - digits.len()) {
            s.push('0');
        }
    } else {
        s.push_str(&digits[..point as usize]);
        s.push('.');
        s.push_str(&digits[point as usize..]);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_print_like_go() {
        assert_eq!(format_float_g(3.0), "3");
        assert_eq!(format_float_g(1.5), "1.5");
        assert_eq!(format_float_g(1e6), "1e+06");
        assert_eq!(format_float_g(123456.0), "123456");
        assert_eq!(format_float_g(0.0001), "0.0001");
        assert_eq!(format_float_g(0.00001), "1e-05");
        assert_eq!(format_float_g(1234567.0), "1.234567e+06");
    }
}

/// A map as its scope tracks it: without keeping it alive.
type WeakMap = std::rc::Weak<RefCell<BTreeMap<String, Value>>>;

thread_local! {
    /// The maps made on this thread while a [`MapScope`] is open (see there).
    static SCOPED_MAPS: RefCell<Option<Vec<WeakMap>>> = const { RefCell::new(None) };
}

/// Frees, when dropped, the maps made on this thread since it was opened, cycles included.
///
/// Maps are shared and mutable (`set`, `unset`, `merge` change them in place, as in Go), so a
/// template can make a map that holds itself (`set $d "self" $d`) or two that hold each other.
/// Go's collector frees those; reference counts never do. A caller opens a scope around
/// everything that uses one render's values (Helm: every template of a chart, which share
/// `.Values`) and drops it when none of them is used any more: the maps still alive then are
/// emptied, which breaks every cycle. Scopes nest; a map made outside any scope is not tracked.
#[must_use = "the maps are freed when the scope is dropped"]
pub struct MapScope {
    /// How many maps were tracked when the scope opened.
    mark: usize,
    /// Whether this scope opened the thread's list (the outermost one).
    outermost: bool,
}

impl MapScope {
    pub fn new() -> Self {
        SCOPED_MAPS.with(|maps| {
            let mut maps = maps.borrow_mut();
            let outermost = maps.is_none();
            let list = maps.get_or_insert_with(Vec::new);
            MapScope {
                mark: list.len(),
                outermost,
            }
        })
    }

    fn track(map: &Rc<RefCell<BTreeMap<String, Value>>>) {
        SCOPED_MAPS.with(|maps| {
            if let Some(list) = maps.borrow_mut().as_mut() {
                list.push(Rc::downgrade(map));
            }
        });
    }
}

impl Default for MapScope {
    fn default() -> Self {
        Self::new()
    }
}

impl Drop for MapScope {
    fn drop(&mut self) {
        let made = SCOPED_MAPS.with(|maps| {
            let mut maps = maps.borrow_mut();
            let made = maps
                .as_mut()
                .map(|list| list.split_off(self.mark.min(list.len())))
                .unwrap_or_default();
            if self.outermost {
                *maps = None;
            }
            made
        });
        // Emptied after the list is released: a map's values may hold other tracked maps.
        for weak in made {
            if let Some(map) = weak.upgrade() {
                let values = map.try_borrow_mut().map(|mut m| std::mem::take(&mut *m));
                drop(values);
            }
        }
    }
}
