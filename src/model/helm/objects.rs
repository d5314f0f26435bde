//! The objects whose methods templates call: `.Capabilities.APIVersions` and `.Files`.

use std::collections::BTreeMap;

use gotmpl::Value;

/// `.Capabilities.APIVersions`: `Has` answers for built-in groups and the configured ones.
#[derive(Debug)]
pub(super) struct ApiVersions(pub(super) Vec<String>);

impl gotmpl::Object for ApiVersions {
    fn type_name(&self) -> &str {
        "chartutil.VersionSet"
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        (name == "Has").then(|| {
            let Some(v) = args.first().and_then(Value::as_str) else {
                return Err("Has needs an API version".into());
            };
            let builtin = [
                "v1",
                "apps/v1",
                "batch/v1",
                "networking.k8s.io/v1",
                "rbac.authorization.k8s.io/v1",
                "policy/v1",
                "autoscaling/v2",
                "apiextensions.k8s.io/v1",
                "storage.k8s.io/v1",
                "admissionregistration.k8s.io/v1",
                "coordination.k8s.io/v1",
                "discovery.k8s.io/v1",
                "scheduling.k8s.io/v1",
            ];
            let known = builtin.contains(&v)
                || self
                    .0
                    .iter()
                    .any(|a| a == v || a.starts_with(&format!("{v}/")));
            Ok(Value::Bool(known, None))
        })
    }
}

/// `.Files`: the chart's other files (`Get`, `GetBytes`, `Lines`, `Glob`, `AsConfig`,
/// `AsSecrets`).
#[derive(Debug)]
pub(super) struct Files {
    pub(super) files: BTreeMap<String, String>,
}

impl gotmpl::Object for Files {
    fn type_name(&self) -> &str {
        "chart.Files"
    }
    fn call(&self, name: &str, args: &[Value]) -> Option<Result<Value, String>> {
        let path = args.first().and_then(Value::as_str).unwrap_or("");
        match name {
            "Get" => Some(Ok(Value::str(
                self.files.get(path).map_or("", String::as_str),
            ))),
            "Lines" => Some(Ok(Value::list(
                self.files
                    .get(path)
                    .filter(|t| !t.is_empty())
                    // Helm drops one trailing newline before splitting.
                    .map(|t| {
                        t.strip_suffix('\n')
                            .unwrap_or(t)
                            .split('\n')
                            .map(Value::str)
                            .collect()
                    })
                    .unwrap_or_default(),
            ))),
            "GetBytes" => Some(Ok(Value::str(
                self.files.get(path).map_or("", String::as_str),
            ))),
            "Glob" => {
                let glob = globset::GlobBuilder::new(path)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| e.to_string());
                Some(glob.map(|g| {
                    let m = g.compile_matcher();
                    Value::Object(std::rc::Rc::new(Files {
                        files: self
                            .files
                            .iter()
                            .filter(|(p, _)| m.is_match(p.as_str()))
                            .map(|(p, t)| (p.clone(), t.clone()))
                            .collect(),
                    }))
                }))
            }
            "AsConfig" | "AsSecrets" => {
                let mut map = BTreeMap::new();
                for (p, t) in &self.files {
                    let base = p.rsplit('/').next().unwrap_or(p).to_string();
                    let v = if name == "AsSecrets" {
                        match gotmpl::call_function("b64enc", vec![Value::str(t)]) {
                            Ok(v) => v,
                            Err(e) => return Some(Err(e)),
                        }
                    } else {
                        Value::str(t)
                    };
                    map.insert(base, v);
                }
                if map.is_empty() {
                    return Some(Ok(Value::str("")));
                }
                Some(gotmpl::call_function("toYaml", vec![Value::map(map)]))
            }
            _ => None,
        }
    }
}
