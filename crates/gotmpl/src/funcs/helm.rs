//! Helm's own functions (`pkg/engine/funcs.go`): they replace Sprig's of the same name in
//! Helm's set and are in no other.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("include", Func::Exec),
    ("tpl", Func::Exec),
    ("required", Func::Exec),
    ("toYaml", Func::Native(to_yaml)),
    ("mustToYaml", Func::Native(to_yaml)),
    ("toYamlPretty", Func::Native(to_yaml)),
    ("fromYaml", Func::Native(from_yaml)),
    ("fromYamlArray", Func::Native(from_yaml_array)),
    ("fromJson", Func::Native(from_json)),
    ("fromJsonArray", Func::Native(from_json_array)),
    ("lookup", Func::Native(lookup)),
    ("toToml", Func::Unsupported),
    ("fromToml", Func::Unsupported),
];

fn to_yaml(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    match yaml::to_yaml_within(&a[0], &mut Walk::new(budget)) {
        Ok(t) => Ok(Value::Str(t.finish())),
        Err(Stop::Value(e)) if name == "mustToYaml" => err(e),
        Err(Stop::Value(_)) => s(""),
        Err(stop) => Err(stop.into()),
    }
}

fn from_yaml(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    // Reading costs what the text holds; aliases what they copy.
    budget.charge(st(&a[0])?.len())?;
    match yaml::from_yaml_within(st(&a[0])?, budget) {
        Ok(m @ Value::Map(_)) => Ok(m),
        Ok(Value::Nil) => Ok(Value::empty_map()),
        Ok(other) => Ok(error_map(&format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type map[string]interface {{}}",
            json_kind(&other)
        ))),
        Err(e) => Ok(error_map(&e)),
    }
}

fn from_yaml_array(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    budget.charge(st(&a[0])?.len())?;
    match yaml::from_yaml_within(st(&a[0])?, budget) {
        Ok(l @ Value::List(_)) => Ok(l),
        Ok(Value::Nil) => Ok(Value::list(Vec::new())),
        Ok(other) => Ok(Value::list(vec![Value::str(&format!(
            "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type []interface {{}}",
            json_kind(&other)
        ))])),
        Err(e) => Ok(Value::list(vec![Value::str(&e)])),
    }
}

fn from_json(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    budget.charge(st(&a[0])?.len())?;
    match yaml::from_json(st(&a[0])?) {
        Ok(m @ Value::Map(_)) => Ok(m),
        Ok(_) => Ok(error_map(
            "json: cannot unmarshal into Go value of type map[string]interface {}",
        )),
        Err(e) => Ok(error_map(&e)),
    }
}

fn from_json_array(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    budget.charge(st(&a[0])?.len())?;
    match yaml::from_json(st(&a[0])?) {
        Ok(l @ Value::List(_)) => Ok(l),
        Ok(_) => Ok(Value::list(vec![Value::str(
            "json: cannot unmarshal into Go value of type []interface {}",
        )])),
        Err(e) => Ok(Value::list(vec![Value::str(&e)])),
    }
}

fn lookup(_name: &str, _a: &[Value], _budget: &mut Budget) -> F {
    Ok(Value::empty_map())
}

fn error_map(msg: &str) -> Value {
    let mut m = BTreeMap::new();
    m.insert("Error".to_string(), Value::str(msg));
    Value::map(m)
}

pub(super) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Str(_) => "string",
        Value::Float(..) | Value::Int(..) => "number",
        Value::Bool(..) => "bool",
        Value::List(_) => "array",
        _ => "object",
    }
}
