//! Differential suite: every case of `charts/cases.txt` is rendered by this engine and by Helm's
//! own Go SDK (the `helm-python-sdk` wheel, driven by `oracle.py` in one process) and the two
//! outputs are compared as YAML documents. It needs `helm_python` (`pip install
//! helm-python-sdk pyyaml`; `scripts/test` installs it), so a plain `cargo test` lists it as
//! ignored.

mod common;

use std::path::PathBuf;

use common::{oracle_available, oracle_case, run_oracle};

const VALUES: &str = include_str!("charts/values.yaml");
const HELPERS: &str = include_str!("charts/_helpers.tpl");

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
        let (r, entry) = oracle_case(&root.join(format!("{i:03}")), &c.template, VALUES, HELPERS);
        batch.push(entry);
        ours.push(r);
    }
    let results = run_oracle(&batch);
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
