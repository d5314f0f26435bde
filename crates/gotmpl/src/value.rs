//! Template values: the dynamic types Helm templates see (`interface{}` holding YAML/JSON data).

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::fmt;
use std::rc::Rc;

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
        Value::Map(Rc::new(RefCell::new(m)))
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

    /// A deep copy (maps are shared references otherwise).
    #[must_use]
    pub fn deep_copy(&self) -> Value {
        match self {
            Value::List(l) => Value::list(l.iter().map(Value::deep_copy).collect()),
            Value::Map(m) => Value::map(
                m.borrow()
                    .iter()
                    .map(|(k, v)| (k.clone(), v.deep_copy()))
                    .collect(),
            ),
            other => other.clone(),
        }
    }

    /// Go `fmt` `%v` text.
    #[must_use]
    pub fn to_go_string(&self) -> String {
        let mut s = String::new();
        write_v(&mut s, self, true);
        s
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Nil, Value::Nil) => true,
            (Value::Bool(a, _), Value::Bool(b, _)) => a == b,
            (Value::Int(a, _), Value::Int(b, _)) => a == b,
            (Value::Float(a, _), Value::Float(b, _)) => a == b,
            (Value::Str(a), Value::Str(b)) => a.as_str() == b.as_str(),
            (Value::List(a), Value::List(b)) => a == b,
            (Value::Map(a), Value::Map(b)) => Rc::ptr_eq(a, b) || *a.borrow() == *b.borrow(),
            (Value::Object(a), Value::Object(b)) => Rc::ptr_eq(a, b),
            _ => false,
        }
    }
}

/// `%v` formatting; `top` is false inside composites, where nil prints `<nil>` too.
pub fn write_v(out: &mut String, v: &Value, _top: bool) {
    match v {
        Value::Nil => out.push_str("<nil>"),
        Value::Bool(b, _) => out.push_str(if *b { "true" } else { "false" }),
        Value::Int(i, _) => out.push_str(&i.to_string()),
        Value::Float(f, _) => out.push_str(&format_float_g(*f)),
        Value::Str(s) => out.push_str(s.as_str()),
        Value::List(l) => {
            out.push('[');
            for (i, x) in l.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                write_v(out, x, false);
            }
            out.push(']');
        }
        Value::Map(m) => {
            out.push_str("map[");
            for (i, (k, x)) in m.borrow().iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                out.push_str(k);
                out.push(':');
                write_v(out, x, false);
            }
            out.push(']');
        }
        Value::Object(o) => {
            out.push('&');
            out.push_str(o.type_name());
        }
    }
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
