//! ApplicationSet templating, as Argo CD's `Render.Replace` (`applicationset/utils/utils.go`)
//! does it: Go templates (`goTemplate: true`) render with `gotmpl` and Argo CD's function set
//! (Sprig's less `env`, `expandenv` and `getHostByName`, plus `normalize`, `slugify`, `toYaml`,
//! `fromYaml`, `fromYamlArray`) and the ApplicationSet's `goTemplateOptions`; fasttemplate
//! (`{{path.basename}}`, the default) is the small substitution here.
//!
//! Parameters that only exist at run time (an unexpandable generator) are "open": looking one up
//! gives [`UNKNOWN`], and so does whatever is computed from it, which callers detect with
//! [`is_unknown`] and never check against. A string that Argo CD would fail to render is
//! [`UNKNOWN`] too.

use serde_json::{Map, Value};

/// Written in place of a value that depends on parameters unknown offline.
pub const UNKNOWN: &str = "\u{1}unknown\u{1}";

#[must_use]
pub fn is_unknown(s: &str) -> bool {
    s.contains(UNKNOWN)
}

/// `s` as a message shows it: each unknown part reads `<unknown>`.
#[must_use]
pub fn readable(s: &str) -> String {
    s.replace(UNKNOWN, "<unknown>")
}

/// One set of generator parameters.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Params {
    pub values: Map<String, Value>,
    /// Keys not in `values` are unknown (from an unexpandable generator), not missing.
    pub open: bool,
}

impl Params {
    #[must_use]
    pub fn new(values: Map<String, Value>) -> Self {
        Params {
            values,
            open: false,
        }
    }

    /// `other` merged over `self`.
    #[must_use]
    pub fn merged(&self, other: &Params) -> Params {
        let mut values = self.values.clone();
        for (k, v) in &other.values {
            values.insert(k.clone(), v.clone());
        }
        Params {
            values,
            open: self.open || other.open,
        }
    }

    /// Dotted lookup (`path.basename`); also a flat key containing dots.
    fn lookup(&self, key: &str) -> Option<Value> {
        if let Some(v) = self.values.get(key) {
            return Some(v.clone());
        }
        let mut cur: Option<&Value> = None;
        for (i, part) in key.split('.').enumerate() {
            cur = if i == 0 {
                self.values.get(part)
            } else {
                cur.and_then(|c| c.get(part))
            };
            cur?;
        }
        cur.cloned()
    }
}

/// How an ApplicationSet's strings are templated.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum Syntax {
    /// fasttemplate: `{{key}}` replaced by a flattened parameter's text.
    #[default]
    Fast,
    /// Go templates (`goTemplate: true`), with the ApplicationSet's `goTemplateOptions`
    /// (`missingkey=error`).
    Go { options: Vec<String> },
}

/// What rendering one string may spend: far more than any real template needs, and little
/// enough that thousands of parameter sets stay quick.
const LIMITS: gotmpl::Limits = gotmpl::Limits {
    steps: 100_000,
    depth: 100,
    output_bytes: 1 << 20,
    built_bytes: 4 << 20,
};

/// Renders `text` with the ApplicationSet's template syntax.
#[must_use]
pub fn render(text: &str, params: &Params, syntax: &Syntax) -> String {
    // Argo CD leaves the template as it is for an empty parameter set.
    if !text.contains("{{") || (params.values.is_empty() && !params.open) {
        return text.to_string();
    }
    match syntax {
        Syntax::Fast => render_fast(text, params),
        Syntax::Go { options } => render_go(text, params, options).unwrap_or_else(unknown),
    }
}

fn unknown() -> String {
    UNKNOWN.to_string()
}

/// A Go template rendered as Argo CD renders it; `None` where Argo CD reports an error (a parse
/// or execution error, a bad option).
fn render_go(text: &str, params: &Params, options: &[String]) -> Option<String> {
    // A template's `set` may make a map hold itself: freed when this returns.
    let _maps = gotmpl::MapScope::new();
    let mut templates = gotmpl::Templates::argocd();
    for option in options {
        templates.option(option).ok()?;
    }
    if params.open {
        templates.set_missing_key(gotmpl::MissingKey::Unknown(UNKNOWN.into()));
    }
    templates.add("template", text).ok()?;
    let data = to_value(&Value::Object(params.values.clone()));
    templates
        .render("template", &data, &LIMITS)
        .ok()
        .map(|out| out.text)
}

/// A parameter as Go's `encoding/json` gives it to Argo CD: every number a `float64`.
fn to_value(v: &Value) -> gotmpl::Value {
    match v {
        Value::Null => gotmpl::Value::Nil,
        Value::Bool(b) => gotmpl::Value::Bool(*b, None),
        Value::Number(n) => gotmpl::Value::Float(n.as_f64().unwrap_or(0.0), None),
        Value::String(s) => gotmpl::Value::str(s),
        Value::Array(items) => gotmpl::Value::list(items.iter().map(to_value).collect()),
        Value::Object(m) => {
            gotmpl::Value::map(m.iter().map(|(k, v)| (k.clone(), to_value(v))).collect())
        }
    }
}

/// fasttemplate: each `{{tag}}` replaced by the parameter of that name; an unknown tag is
/// left as written.
fn render_fast(text: &str, params: &Params) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(len) = rest[start + 2..].find("}}") else {
            break;
        };
        out.push_str(&rest[..start]);
        let tag = rest[start + 2..start + 2 + len].trim();
        match fast_lookup(params, tag) {
            Some(v) => out.push_str(&to_text(&v)),
            None if params.open => out.push_str(UNKNOWN),
            None => out.push_str(&rest[start..start + 4 + len]),
        }
        rest = &rest[start + 4 + len..];
    }
    out.push_str(rest);
    out
}

/// fasttemplate keys: flattened (`path.basename`, `path[1]`).
fn fast_lookup(params: &Params, tag: &str) -> Option<Value> {
    if let Some((key, idx)) = tag.strip_suffix(']').and_then(|t| t.split_once('[')) {
        let i: usize = idx.parse().ok()?;
        let v = params.lookup(&format!("{key}.segments"))?;
        return v.get(i).cloned();
    }
    params.lookup(tag)
}

fn to_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "<no value>".to_string(),
        other => other.to_string(),
    }
}

/// Argo CD's `SanitizeName`, which the generators' `*Normalized` parameters use (the template
/// function `normalize`).
#[must_use]
pub fn normalize(s: &str) -> String {
    gotmpl::argocd::normalize(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params() -> Params {
        let v: Value = serde_json::json!({
            "path": {"path": "apps/team-a/api", "basename": "api", "segments": ["apps", "team-a", "api"]},
            "cluster": "Prod-EU",
            "empty": ""
        });
        Params::new(v.as_object().unwrap().clone())
    }

    fn flat() -> Params {
        let v: Value = serde_json::json!({
            "path": "apps/team-a/api", "path.basename": "api",
            "path.segments": ["apps", "team-a", "api"], "cluster": "prod"
        });
        Params::new(v.as_object().unwrap().clone())
    }

    fn go() -> Syntax {
        Syntax::Go {
            options: Vec::new(),
        }
    }

    #[test]
    fn go_templates() {
        let p = params();
        let r = |t: &str| render(t, &p, &go());
        assert_eq!(
            r("{{.path.basename}}-{{ .cluster | lower }}"),
            "api-prod-eu"
        );
        assert_eq!(r("{{index .path.segments 1}}"), "team-a");
        assert_eq!(r("{{ .empty | default \"dflt\" }}"), "dflt");
        assert_eq!(r("{{ default \"x\" .cluster }}"), "Prod-EU");
        assert_eq!(r("{{ replace \"-\" \"_\" .cluster }}"), "Prod_EU");
        assert_eq!(r("{{ trimPrefix \"apps/\" .path.path }}"), "team-a/api");
        assert_eq!(
            r("{{ printf \"%s/%s\" .cluster .path.basename }}"),
            "Prod-EU/api"
        );
        assert_eq!(
            r("values-{{ .path.basename | upper }}.yaml"),
            "values-API.yaml"
        );
        assert_eq!(r("{{ if .cluster }}x{{ end }}"), "x");
        assert_eq!(r("{{ .cluster | normalize }}"), "prod-eu");
        // Argo CD's default options print a missing key as Go does; `missingkey=error` fails.
        assert_eq!(r("{{ .nope }}"), "<no value>");
        let strict = Syntax::Go {
            options: vec!["missingkey=error".into()],
        };
        assert!(is_unknown(&render("{{ .nope }}", &p, &strict)));
        // Helm's functions are not Argo CD's; `env` is deleted.
        assert!(is_unknown(&r("{{ include \"x\" . }}")));
        assert!(is_unknown(&r("{{ env \"HOME\" }}")));
    }

    #[test]
    fn open_parameters() {
        let open = Params {
            open: true,
            ..params()
        };
        let r = |t: &str| readable(&render(t, &open, &go()));
        assert_eq!(r("{{.name}}-x"), "<unknown>-x");
        assert_eq!(
            r("{{.name | lower}}-{{.cluster | lower}}"),
            "<unknown>-prod-eu"
        );
        assert_eq!(r("{{.server.host}}"), "<unknown>");
        assert_eq!(r("{{ printf \"%s-%s\" .name .cluster }}"), "<unknown>");
        assert_eq!(
            r("a-{{ if eq .name \"x\" }}b{{ else }}c{{ end }}"),
            "a-<unknown>"
        );
        assert_eq!(r("{{ default \"d\" .name }}"), "<unknown>");
    }

    #[test]
    fn fasttemplate() {
        let p = flat();
        assert_eq!(
            render("{{path.basename}}-{{ cluster }}", &p, &Syntax::Fast),
            "api-prod"
        );
        assert_eq!(render("{{path[1]}}", &p, &Syntax::Fast), "team-a");
        assert_eq!(render("{{nope}}", &p, &Syntax::Fast), "{{nope}}");
    }
}
