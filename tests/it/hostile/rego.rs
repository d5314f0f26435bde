//! Hostile Rego policies (a repository's `policies:`): what regorus cannot stop itself (a
//! range built in one call, a recursive function, exponential parsing, one long step) is
//! refused or stopped, located at the policy's line, and nothing hangs, aborts or takes the
//! machine's memory. Each check runs under a 4 GB address-space limit when `prlimit` is available.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use super::{assert_canary, bin, findings, repo};

/// A repository whose `.gitops-lint.yaml` loads `policy/p.rego`.
fn repo_with_policy(policy: &str) -> tempfile::TempDir {
    repo(&[
        (".gitops-lint.yaml", b"policies: [policy]\n"),
        ("policy/p.rego", policy.as_bytes()),
    ])
}

/// Runs `check --format json` with a ceiling that catches a hang and, where `prlimit` exists,
/// a 4 GB address-space limit: (exit code, stdout, stderr).
fn run_check(dir: &Path) -> (Option<i32>, String, String) {
    let limited = Command::new("prlimit")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let mut cmd = if limited {
        let mut c = Command::new("prlimit");
        c.arg("--as=4000000000")
            .arg(env!("CARGO_BIN_EXE_gitops-lint"));
        c.env("NO_COLOR", "1");
        c
    } else {
        bin()
    };
    let mut child = cmd
        .args(["check", "--format", "json"])
        .arg(dir)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let limit = Duration::from_secs(60);
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > limit {
            let _ = child.kill();
            panic!("gitops-lint did not finish within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let o = child.wait_with_output().unwrap();
    (
        o.status.code(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// The run went on: exit 1, the canary and the policy's other result are reported, and the
/// refused rule is a `policy/evaluation-error` naming its line and the range limit.
fn assert_range_refused(policy: &str, rule_line: u64) {
    let dir = repo_with_policy(policy);
    let (code, stdout, stderr) = run_check(dir.path());
    assert_eq!(code, Some(1), "{stderr}");
    let v: serde_json::Value =
        serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stderr}"));
    assert_canary(&v);
    assert!(
        findings(&v)
            .iter()
            .any(|(_, r, _)| r == "policy/main/deny_other"),
        "{:?}",
        findings(&v)
    );
    let messages: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|d| d["rule"] == "policy/evaluation-error")
        .filter_map(|d| d["message"].as_str())
        .collect();
    let site = format!("policy/p.rego:{rule_line})");
    assert!(
        messages
            .iter()
            .any(|m| m.contains(&site) && m.contains("more than 1000000 numbers")),
        "{messages:?}"
    );
}

const OTHER_RULE: &str =
    "\ndeny_other contains \"still reported\" if {\n  input.kind == \"Application\"\n}\n";

/// `numbers.range(1, 100000000)` ran 10.7 s past the 2 s time limit and took 4.7 GB (the time
/// limit is checked between steps, and the builtin is one step).
#[test]
fn a_range_that_would_outrun_the_time_limit_is_refused() {
    let policy = format!(
        "package main\n\ndeny contains msg if {{\n  n := count(numbers.range(1, 100000000))\n  msg := sprintf(\"%d\", [n])\n}}\n{OTHER_RULE}"
    );
    assert_range_refused(&policy, 3);
}

/// `numbers.range_step(0, 4000000000, 2)` asked for 48 GB at once: an abort.
#[test]
fn a_range_that_would_ask_48_gb_is_refused() {
    let policy = format!(
        "package main\n\ndeny contains msg if {{\n  xs := numbers.range_step(0, 4000000000, 2)\n  msg := sprintf(\"%d\", [count(xs)])\n}}\n{OTHER_RULE}"
    );
    assert_range_refused(&policy, 3);
}

/// Refused when loaded: exit 2 and a code frame at `policy/p.rego:LINE:COL`.
fn assert_refused_at_load(policy: &str, at: &str, message: &str) {
    let dir = repo_with_policy(policy);
    let (code, _, stderr) = run_check(dir.path());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains(message), "{stderr}");
    assert!(stderr.contains(&format!("policy/p.rego:{at}")), "{stderr}");
}

/// A recursive function overflowed the stack (an abort); OPA refuses it when compiling.
#[test]
fn a_recursive_function_is_refused_at_load() {
    assert_refused_at_load(
        "package main\n\nf(x) := y if {\n  y := f(x + 1)\n}\n\ndeny contains msg if {\n  msg := sprintf(\"%v\", [f(1)])\n}\n",
        "4:8",
        "function `data.main.f` is recursive: data.main.f -> data.main.f",
    );
    // Through another function, named by its full path.
    assert_refused_at_load(
        "package main\n\ng(x) := data.main.h(x)\n\nh(x) := g(x)\n\ndeny contains msg if {\n  msg := sprintf(\"%v\", [g(1)])\n}\n",
        "5:9",
        "function `data.main.g` is recursive: data.main.g -> data.main.h -> data.main.g",
    );
}

/// 25 levels of nested array literals took regorus' parser 33 s (twice as long per level);
/// 30 levels, about 17 minutes.
#[test]
fn deeply_nested_literals_are_refused_before_parsing() {
    let nested = format!("{}1{}", "[".repeat(30), "]".repeat(30));
    assert_refused_at_load(
        &format!(
            "package main\n\ndeny contains msg if {{\n  x := {nested}\n  msg := sprintf(\"%v\", [x])\n}}\n"
        ),
        "4:8",
        "this literal nests too deeply for the Rego parser",
    );
}

/// `replace(s, "0", s)` squares a string of zeros: the fourth call asks for 10^16 bytes in
/// one step, which the time limit (checked between steps) cannot interrupt; it took the
/// process to the 4 GB limit and aborted. The run now stops at the policies' memory limit,
/// naming the rule.
#[test]
fn a_policy_that_grows_a_string_stops_at_the_memory_limit() {
    let mut policy =
        String::from("package main\n\ndeny contains msg if {\n  s0 := \"0000000000\"\n");
    for k in 1..=4 {
        policy.push_str(&format!("  s{k} := replace(s{0}, \"0\", s{0})\n", k - 1));
    }
    policy.push_str("  msg := sprintf(\"%d\", [count(s4)])\n}\n");
    let dir = repo_with_policy(&policy);
    let (code, _, stderr) = run_check(dir.path());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("policy rule `data.main.deny`")
            && stderr.contains("policy/p.rego:3) on canary.yaml made the process grow by")
            && stderr.contains("over the limit of 1024 MiB for policies"),
        "{stderr}"
    );
}

/// Comparing two arrays that share their halves 40 levels deep is 2^40 comparisons in one step,
/// which the time limit cannot interrupt: it ran until killed. The run now stops at 4 times the
/// time limit, naming the rule.
#[test]
fn a_comparison_that_outlives_the_time_limit_stops_the_run() {
    let mut policy =
        String::from("package main\n\ndeny contains msg if {\n  a0 := [1]\n  b0 := [1]\n");
    for k in 1..=40 {
        policy.push_str(&format!(
            "  a{k} := [a{0}, a{0}]\n  b{k} := [b{0}, b{0}]\n",
            k - 1
        ));
    }
    policy.push_str("  a40 == b40\n  msg := \"equal\"\n}\n");
    let dir = repo_with_policy(&policy);
    let (code, _, stderr) = run_check(dir.path());
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("policy/p.rego:3) on canary.yaml is still running")
            && stderr.contains("past its time limit of 2s"),
        "{stderr}"
    );
}
