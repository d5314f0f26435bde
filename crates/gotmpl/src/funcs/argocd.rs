//! Argo CD's ApplicationSet functions (`applicationset/utils`): what its controller adds to
//! Sprig's set (`normalize`, `slugify`, and Helm-like `toYaml`, `fromYaml`, `fromYamlArray`
//! that report errors instead of swallowing them) and what it deletes from it.

use super::*;

pub(crate) const FUNCS: &[(&str, Func)] = &[
    ("normalize", Func::Native(normalize_fn)),
    ("slugify", Func::Native(slugify_fn)),
    ("toYaml", Func::Native(to_yaml)),
    ("fromYaml", Func::Native(from_yaml)),
    ("fromYamlArray", Func::Native(from_yaml_array)),
];

/// Deleted from Sprig's set, "to avoid allowing the user to learn things about the
/// environment": a template that names one does not parse.
pub(crate) const REMOVED: &[&str] = &["env", "expandenv", "getHostByName"];

/// Argo CD's `SanitizeName` (the `normalize` function, and the generators' `*Normalized`
/// parameters): lowercase, each character other than `[-a-z0-9.]` as `-`, at most 253 bytes,
/// without leading or trailing `-` and `.`.
#[must_use]
pub fn normalize(name: &str) -> String {
    let mut out: String = name
        .chars()
        .map(|c| match go_to_lower(c) {
            l @ ('a'..='z' | '0'..='9' | '-' | '.') => l,
            _ => '-',
        })
        .collect();
    // Only ASCII is left: any byte is a character boundary.
    out.truncate(253);
    out.trim_matches(['-', '.']).to_string()
}

/// Go's `unicode.ToLower`: one character for one (`İ` is `i`, where Rust's full mapping adds a
/// combining dot).
fn go_to_lower(c: char) -> char {
    if c == '\u{130}' {
        return 'i';
    }
    let mut lower = c.to_lowercase();
    match (lower.next(), lower.next()) {
        (Some(l), None) => l,
        _ => c,
    }
}

fn normalize_fn(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    counted(budget, Value::str(&normalize(st(&a[0])?)))
}

/// Argo CD's `SlugifyName`: [`normalize`], then `gosimple/slug`'s `Make` with `max_size`
/// (a maximum length, 0 for none) and `smart_truncate` (cut after a whole word).
///
/// # Errors
/// Where Go panics: a negative `max_size` without smart truncation.
pub fn slugify(max_size: i64, smart_truncate: bool, name: &str) -> Result<String, String> {
    let mut slug = normalize(name);
    // `slug.Make` on that text: no space to trim, no `&` or `@` to spell out, nothing to
    // transliterate, already lowercase.
    if !smart_truncate && slug.len() as i64 >= max_size {
        let Ok(max) = usize::try_from(max_size) else {
            return Err(format!(
                "runtime error: slice bounds out of range [:{max_size}]"
            ));
        };
        slug.truncate(max);
    }
    let mut out = String::with_capacity(slug.len());
    for c in slug.chars() {
        let c = if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
            c
        } else {
            '-'
        };
        if !(c == '-' && out.ends_with('-')) {
            out.push(c);
        }
    }
    let out = out.trim_matches(['-', '_']);
    match usize::try_from(max_size) {
        Ok(max) if max > 0 && smart_truncate && out.len() > max => {
            // The last `-` at or before `max` ends the slug; with none, it is cut at `max`.
            let cut = out.as_bytes()[..=max]
                .iter()
                .rposition(|&b| b == b'-')
                .unwrap_or(max);
            Ok(out[..cut].to_string())
        }
        _ => Ok(out.to_string()),
    }
}

/// `slugify [maxSize [smartTruncate]] name`: the last argument is the name, the first the
/// maximum length (default 50), the second whether to truncate after a whole word (default
/// true); Go's type assertions refuse other types (a `float64` length too).
fn slugify_fn(_name: &str, a: &[Value], budget: &mut Budget) -> F {
    let (mut max_size, mut smart, mut text) = (50, true, "");
    for (i, arg) in a.iter().enumerate() {
        let want = if i + 1 == a.len() {
            "string"
        } else if i == 0 {
            "int"
        } else if i == 1 {
            "bool"
        } else {
            // Argo CD logs "Bad 'slugify' arguments." and goes on.
            continue;
        };
        match (want, arg) {
            ("string", Value::Str(t)) => text = t.as_str(),
            ("int", Value::Int(n, _)) => max_size = *n,
            ("bool", Value::Bool(b, _)) => smart = *b,
            (want, Value::Nil) => {
                return err(format!(
                    "interface conversion: interface is nil, not {want}"
                ));
            }
            (want, other) => {
                return err(format!(
                    "interface conversion: interface {{}} is {}, not {want}",
                    other.type_name()
                ));
            }
        }
    }
    let slug = slugify(max_size, smart, text).map_err(FnError::Msg)?;
    counted(budget, Value::str(&slug))
}

/// Helm's `toYaml` (the same `sigs.k8s.io/yaml` output), but a value that cannot be written
/// is an error.
fn to_yaml(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    match yaml::to_yaml_within(&a[0], &mut Walk::new(budget)) {
        Ok(t) => Ok(Value::Str(t.finish())),
        Err(stop) => Err(stop.into()),
    }
}

/// A YAML map (empty text: an empty map); anything else is an error.
fn from_yaml(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    budget.charge(st(&a[0])?.len())?;
    match yaml::from_yaml_within(st(&a[0])?, budget).map_err(FnError::Msg)? {
        m @ Value::Map(_) => Ok(m),
        Value::Nil => Ok(Value::empty_map()),
        other => err(unmarshal_error(&other, "map[string]interface {}")),
    }
}

/// A YAML list (empty text: an empty list); anything else is an error.
fn from_yaml_array(name: &str, a: &[Value], budget: &mut Budget) -> F {
    arity(name, a, 1)?;
    budget.charge(st(&a[0])?.len())?;
    match yaml::from_yaml_within(st(&a[0])?, budget).map_err(FnError::Msg)? {
        l @ Value::List(_) => Ok(l),
        Value::Nil => Ok(Value::list(Vec::new())),
        other => err(unmarshal_error(&other, "[]interface {}")),
    }
}

/// `sigs.k8s.io/yaml`'s message for YAML of another shape than `go_type`.
fn unmarshal_error(v: &Value, go_type: &str) -> String {
    format!(
        "error unmarshaling JSON: while decoding JSON: json: cannot unmarshal {} into Go value of type {go_type}",
        helm::json_kind(v)
    )
}
