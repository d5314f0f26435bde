//! Plumbing shared by the differential suites: chart writing, this engine's rendering with
//! Helm's built-in objects, and the Helm oracle (`oracle.py`, one Python process per batch).

// Each test binary uses a different subset of these helpers.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Stdio};

use gotmpl::{Limits, Templates, Value};

pub fn map(entries: &[(&str, Value)]) -> Value {
    Value::map(
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

/// What Helm gives a chart named `c` with release `rel` in namespace `ns`.
pub fn helm_data(values: Value) -> Value {
    map(&[
        ("Values", values),
        (
            "Release",
            map(&[
                ("Name", Value::str("rel")),
                ("Namespace", Value::str("ns")),
                ("Service", Value::str("Helm")),
                ("Revision", Value::Int(1, None)),
                ("IsInstall", Value::Bool(false, None)),
                ("IsUpgrade", Value::Bool(false, None)),
            ]),
        ),
        (
            "Chart",
            map(&[
                ("Name", Value::str("c")),
                ("Version", Value::str("0.1.0")),
                ("AppVersion", Value::str("1.0")),
                ("APIVersion", Value::str("v2")),
            ]),
        ),
        (
            "Template",
            map(&[
                ("Name", Value::str("c/templates/t.yaml")),
                ("BasePath", Value::str("c/templates")),
            ]),
        ),
    ])
}

/// Helm's `CoalesceValues` drops the keys whose value is `null` from every map of the values
/// (gitops-lint does it in `model::helm::values`, before calling this engine).
pub fn without_nulls(v: Value) -> Value {
    match &v {
        Value::Map(m) => Value::map(
            m.borrow()
                .iter()
                .filter(|(_, v)| !matches!(v, Value::Nil))
                .map(|(k, v)| (k.clone(), without_nulls(v.clone())))
                .collect(),
        ),
        _ => v,
    }
}

/// Writes chart `c` with `templates/t.yaml`, `values.yaml` and (if not empty) `_helpers.tpl`.
pub fn write_chart(dir: &Path, template: &str, values_yaml: &str, helpers: &str) {
    let t = dir.join("templates");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        dir.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\nappVersion: \"1.0\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("values.yaml"), values_yaml).unwrap();
    if !helpers.is_empty() {
        std::fs::write(t.join("_helpers.tpl"), helpers).unwrap();
    }
    std::fs::write(t.join("t.yaml"), template).unwrap();
}

/// Renders `t.yaml` as Helm would, and checks the provenance segments on the way.
pub fn render_ours(template: &str, values_yaml: &str, helpers: &str) -> Result<String, String> {
    let values = without_nulls(gotmpl::yaml::from_yaml(values_yaml).map_err(|e| e.to_string())?);
    let mut set = Templates::helm();
    if !helpers.is_empty() {
        set.add("c/templates/_helpers.tpl", helpers)
            .map_err(|e| e.to_string())?;
    }
    set.add("c/templates/t.yaml", template)
        .map_err(|e| e.to_string())?;
    let limits = Limits {
        steps: 1_000_000,
        depth: 200,
        output_bytes: 1 << 20,
        ..Limits::default()
    };
    let out = set
        .render("c/templates/t.yaml", &helm_data(values), &limits)
        .map_err(|e| e.to_string())?;
    // Provenance segments: sorted, disjoint, inside the text, on character boundaries.
    let mut at = 0;
    for (r, _) in &out.segments {
        assert!(
            r.start >= at && r.start < r.end && r.end <= out.text.len(),
            "{r:?}"
        );
        assert!(out.text.is_char_boundary(r.start) && out.text.is_char_boundary(r.end));
        at = r.end;
    }
    Ok(out.text)
}

/// Writes one case's chart under `dir` and renders it ours: our result, and the case's entry in
/// the oracle's batch (`{"dir", "ours", "error"}`).
pub fn oracle_case(
    dir: &Path,
    template: &str,
    values_yaml: &str,
    helpers: &str,
) -> (Result<String, String>, serde_json::Value) {
    write_chart(dir, template, values_yaml, helpers);
    let r = render_ours(template, values_yaml, helpers);
    let entry = serde_json::json!({
        "dir": dir.to_string_lossy(),
        "ours": r.as_ref().ok(),
        "error": r.as_ref().err(),
    });
    (r, entry)
}

pub fn oracle_available() -> bool {
    Command::new("python3")
        .args(["-c", "import helm_python, yaml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// Runs `oracle.py` once on the whole batch (`{"dir", "ours", "error"}` each) and returns its
/// results (`{"helm", "helm_error", "same_yaml", "same_text"}` each), in order.
pub fn run_oracle(batch: &[serde_json::Value]) -> Vec<serde_json::Value> {
    let mut child = Command::new("python3")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/oracle.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("python3 runs");
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin
            .write_all(serde_json::to_string(batch).unwrap().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "oracle failed");
    let results: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(results.len(), batch.len(), "oracle answered every case");
    results
}
