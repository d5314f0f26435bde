//! Sprig's encodings: base64, base32 and JSON.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("toJson", Func::Native(to_json)),
    ("mustToJson", Func::Native(to_json)),
    ("toRawJson", Func::Native(to_json)),
    ("mustToRawJson", Func::Native(to_json)),
    ("toPrettyJson", Func::Native(to_pretty_json)),
    ("mustToPrettyJson", Func::Native(to_pretty_json)),
    ("b64enc", Func::Native(b64enc)),
    ("b64dec", Func::Native(b64dec)),
    ("b32enc", Func::Native(b32enc)),
    ("b32dec", Func::Native(b32dec)),
    ("fromJson", Func::Native(from_json)),
    ("mustFromJson", Func::Native(from_json)),
];

fn to_json(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let mut out = String::new();
    match yaml::to_json_within(&a[0], &mut out, &mut Walk::new(budget)) {
        Ok(()) => {
            if name.contains("Raw") {
                out = out
                    .replace("\\u003c", "<")
                    .replace("\\u003e", ">")
                    .replace("\\u0026", "&");
            }
            s(&out)
        }
        Err(Stop::Value(e)) if name.starts_with("must") => err(e),
        Err(Stop::Value(_)) => s(""),
        Err(stop) => Err(stop.into()),
    }
}

fn to_pretty_json(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let mut out = String::new();
    match yaml::to_json_within(&a[0], &mut out, &mut Walk::new(budget)) {
        Ok(()) => {}
        Err(Stop::Value(_)) => return s(""),
        Err(stop) => return Err(stop.into()),
    }
    let j: serde_json::Value = serde_json::from_str(&out).unwrap_or(serde_json::Value::Null);
    let pretty = serde_json::to_string_pretty(&j).unwrap_or_default();
    counted(budget, Value::str(&pretty))
}

fn b64enc(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let t = data_encoding::BASE64.encode(st(&a[0])?.as_bytes());
    counted(budget, Value::str(&t))
}

fn b64dec(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    match data_encoding::BASE64.decode(st(&a[0])?.as_bytes()) {
        Ok(bytes) => counted(budget, Value::str(&String::from_utf8_lossy(&bytes))),
        Err(e) => s(&format!("illegal base64 data at input byte {}", e.position)),
    }
}

fn b32enc(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    let t = data_encoding::BASE32.encode(st(&a[0])?.as_bytes());
    counted(budget, Value::str(&t))
}

fn b32dec(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    match data_encoding::BASE32.decode(st(&a[0])?.as_bytes()) {
        Ok(bytes) => counted(budget, Value::str(&String::from_utf8_lossy(&bytes))),
        Err(e) => s(&format!("illegal base32 data at input byte {}", e.position)),
    }
}

/// Sprig's `fromJson` (any JSON value; nil when the text is not JSON) and `mustFromJson` (an
/// error then). Helm's set replaces `fromJson` with its own (`helm.rs`).
fn from_json(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    budget.charge(st(&a[0])?.len())?;
    match yaml::from_json(st(&a[0])?) {
        Ok(v) => Ok(v),
        Err(e) if name == "mustFromJson" => err(e),
        Err(_) => Ok(Value::Nil),
    }
}
