//! `gitops-lint test-policies`: runs `test_*` rules as `opa test` does. A test passes when it
//! evaluates to `true`; it fails when it is false or undefined, or when evaluation fails.

use super::{CompileOptions, PolicyError, PolicyFile, PolicySet};

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Pass,
    Fail,
    Error(String),
}

#[derive(Clone, Debug)]
pub struct TestResult {
    /// `data.<package>.<test>`.
    pub name: String,
    /// `file:line`.
    pub location: String,
    pub outcome: Outcome,
    /// What the test printed.
    pub prints: Vec<String>,
}

#[derive(Clone, Debug, Default)]
pub struct TestReport {
    pub results: Vec<TestResult>,
}

impl TestReport {
    #[must_use]
    pub fn passed(&self) -> usize {
        self.results
            .iter()
            .filter(|r| r.outcome == Outcome::Pass)
            .count()
    }

    #[must_use]
    pub fn failed(&self) -> usize {
        self.results.len() - self.passed()
    }

    /// Text like `opa test`: failures with their prints, then the counts.
    #[must_use]
    pub fn render(&self, verbose: bool) -> String {
        let mut out = String::new();
        for r in &self.results {
            let show = verbose || r.outcome != Outcome::Pass;
            if !show {
                continue;
            }
            let status = match &r.outcome {
                Outcome::Pass => "PASS".to_string(),
                Outcome::Fail => "FAIL".to_string(),
                Outcome::Error(e) => format!("ERROR: {e}"),
            };
            out.push_str(&format!("{} ({}): {status}\n", r.name, r.location));
            for p in &r.prints {
                out.push_str(&format!("  {p}\n"));
            }
        }
        if !out.is_empty() {
            out.push_str("--------------------------------------------------------------------------------\n");
        }
        out.push_str(&format!(
            "{} test{}, {} passed, {} failed\n",
            self.results.len(),
            if self.results.len() == 1 { "" } else { "s" },
            self.passed(),
            self.failed()
        ));
        out
    }
}

/// Compiles the files (tests included) with data and runs every `test_*` rule.
pub fn run(
    files: &[PolicyFile],
    data: &[(String, serde_json::Value)],
    opts: &CompileOptions,
) -> Result<TestReport, PolicyError> {
    let set = PolicySet::compile(files, data, opts)?;
    let mut report = TestReport::default();
    let mut engine = set.engine.clone();
    for pkg in set.packages.values() {
        for test in &pkg.tests {
            let name = format!("data.{}.{}", pkg.name, test);
            let location = pkg
                .sites
                .get(test)
                .map(|s| format!("{}:{}", s.file, s.line))
                .unwrap_or_default();
            let r = engine.eval_rule(format!("data.{}.{}", super::rego_path(&pkg.name), test));
            let prints = engine.take_prints().unwrap_or_default();
            let outcome = match r {
                Ok(v) if v == regorus::Value::from(true) => Outcome::Pass,
                Ok(_) => Outcome::Fail,
                Err(e) => Outcome::Error(super::summarize_error(&format!("{e:#}"))),
            };
            report.results.push(TestResult {
                name,
                location,
                outcome,
                prints,
            });
        }
    }
    Ok(report)
}
