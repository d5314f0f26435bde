//! Differential suite: every case of `charts/cases.txt` is rendered by this engine and by Helm's
//! own Go SDK (the `helm-python-sdk` wheel, driven by `oracle.py` in one process) and the two
//! outputs are compared as YAML documents. It needs `helm_python` (`pip install
//! helm-python-sdk pyyaml`; `scripts/test` installs it), so a plain `cargo test` lists it as
//! ignored.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use gotmpl::{Limits, Templates, Value};

/// Cases where this engine knowingly differs from Helm (documented in the crate's README).
const KNOWN_DIFFERENCES: &[&str] = &[
    // Random functions are refused on purpose: their output cannot be linted.
    "unsupported-random-errors",
];

struct Case {
    name: String,
    template: String,
}

fn cases() -> Vec<Case> {
    let text = include_str!("charts/cases.txt");
    let mut out: Vec<Case> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(name) = line.strip_prefix("### ") {
            out.push(Case {
                name: name.trim().to_string(),
                template: String::new(),
            });
        } else if let Some(c) = out.last_mut() {
            c.template.push_str(line);
        }
    }
    out
}

fn map(entries: &[(&str, Value)]) -> Value {
    Value::map(
        entries
            .iter()
            .map(|(k, v)| (k.to_string(), v.clone()))
            .collect::<BTreeMap<_, _>>(),
    )
}

/// What Helm gives a chart named `c` with release `rel` in namespace `ns`.
fn helm_data(values: Value) -> Value {
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

fn write_chart(dir: &Path, template: &str) {
    let t = dir.join("templates");
    std::fs::create_dir_all(&t).unwrap();
    std::fs::write(
        dir.join("Chart.yaml"),
        "apiVersion: v2\nname: c\nversion: 0.1.0\nappVersion: \"1.0\"\n",
    )
    .unwrap();
    std::fs::write(dir.join("values.yaml"), include_str!("charts/values.yaml")).unwrap();
    std::fs::write(t.join("_helpers.tpl"), include_str!("charts/_helpers.tpl")).unwrap();
    std::fs::write(t.join("t.yaml"), template).unwrap();
}

fn render_ours(template: &str) -> Result<String, String> {
    let values =
        gotmpl::yaml::from_yaml(include_str!("charts/values.yaml")).map_err(|e| e.to_string())?;
    let mut set = Templates::helm();
    set.add(
        "c/templates/_helpers.tpl",
        include_str!("charts/_helpers.tpl"),
    )
    .map_err(|e| e.to_string())?;
    set.add("c/templates/t.yaml", template)
        .map_err(|e| e.to_string())?;
    let limits = Limits {
        steps: 1_000_000,
        depth: 200,
        output_bytes: 1 << 20,
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

fn oracle_available() -> bool {
    Command::new("python3")
        .args(["-c", "import helm_python, yaml"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

#[test]
fn the_suite_has_enough_cases() {
    assert!(cases().len() >= 200, "only {} cases", cases().len());
}

#[test]
#[ignore = "needs helm-python-sdk (scripts/test installs it)"]
fn differential_against_helm() {
    let cases = cases();
    assert!(
        oracle_available(),
        "the Helm oracle is missing: pip install helm-python-sdk pyyaml"
    );
    let root = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("gotmpl-differential");
    let _ = std::fs::remove_dir_all(&root);
    let mut batch = Vec::new();
    let mut ours = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        let dir = root.join(format!("{i:03}"));
        write_chart(&dir, &c.template);
        let r = render_ours(&c.template);
        batch.push(serde_json::json!({
            "dir": dir.to_string_lossy(),
            "ours": r.as_ref().ok(),
            "error": r.as_ref().err(),
        }));
        ours.push(r);
    }
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
            .write_all(serde_json::to_string(&batch).unwrap().as_bytes())
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "oracle failed");
    let results: Vec<serde_json::Value> = serde_json::from_slice(&out.stdout).unwrap();
    let mut failures = Vec::new();
    let mut same_text = 0;
    for ((c, r), ours) in cases.iter().zip(&results).zip(&ours) {
        if r["same_text"].as_bool() == Some(true) {
            same_text += 1;
        } else if std::env::var_os("GOTMPL_DIFF_VERBOSE").is_some() {
            eprintln!(
                "~~~ {} not byte-identical\nours: {:?}\nhelm: {}",
                c.name, ours, r["helm"]
            );
        }
        let pass = r["same_yaml"].as_bool() == Some(true);
        if pass == KNOWN_DIFFERENCES.contains(&c.name.as_str()) {
            failures.push(format!(
                "--- {} ({})\ntemplate:\n{}\nours: {:?}\nhelm: {}\nhelm error: {}\n",
                c.name,
                if pass {
                    "passes but is listed as a known difference"
                } else {
                    "differs"
                },
                c.template,
                ours,
                r["helm"],
                r["helm_error"],
            ));
        }
    }
    eprintln!(
        "differential: {} cases, {} same YAML, {} byte-identical, {} known differences",
        cases.len(),
        cases.len() - failures.len() - KNOWN_DIFFERENCES.len(),
        same_text,
        KNOWN_DIFFERENCES.len()
    );
    assert!(
        failures.is_empty(),
        "{} cases differ from Helm:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
