//! Rego policies: the shipped pack's own tests, conftest compatibility on our own fixtures
//! (`testdata/policies/`), locations, `data.gitops`, time limits, compile errors, and conftest's
//! examples when a local copy is given (`CONFTEST_EXAMPLES=/path/to/conftest/examples`).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use gitops_lint::diagnostic::{Diagnostic, Severity};
use gitops_lint::engine::{self, Error, Options, PolicyArgs, Report};
use gitops_lint::policy::{self, CompileOptions, RegoVersion, pack, test_runner};

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testdata/policies")
}

fn check(policy: PolicyArgs) -> Result<Report, Error> {
    engine::run(&Options {
        paths: vec![data_dir().join("repo")],
        policy,
        ..Options::default()
    })
}

fn with_policies(dirs: &[&str]) -> PolicyArgs {
    PolicyArgs {
        paths: dirs.iter().map(|d| data_dir().join(d)).collect(),
        ..PolicyArgs::default()
    }
}

/// `(rule, file:line, message)` of the user-policy findings.
fn policy_findings(r: &Report) -> Vec<(String, String, Severity, String)> {
    r.diagnostics
        .iter()
        .filter(|d| d.rule.starts_with("policy/") || d.rule.starts_with("team/"))
        .map(|d: &Diagnostic| {
            let f = r.repo.source(d.span.file);
            let lc = f.line_col(d.span.start as usize);
            (
                d.rule.clone(),
                format!("{}:{}", f.path, lc.line),
                d.severity,
                d.message.clone(),
            )
        })
        .collect()
}

#[test]
fn shipped_pack_tests_pass_through_test_policies() {
    let report = test_runner::run(
        &pack::policy_files(true),
        &[],
        &CompileOptions {
            rego_version: Some(RegoVersion::V1),
            ..CompileOptions::default()
        },
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let text = report.render(false);
    assert!(report.results.len() >= 20, "{text}");
    assert_eq!(report.failed(), 0, "{text}");
    // Every shipped rule has tests.
    for r in &pack::get().rules {
        let test_pkg = format!("data.{}_test.", r.package);
        assert!(
            report.results.iter().any(|t| t.name.starts_with(&test_pkg)),
            "`{}` has no tests in {}",
            r.meta.id,
            r.file.replace(".rego", "_test.rego")
        );
    }
}

#[test]
fn every_file_under_rules_is_embedded() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut on_disk = Vec::new();
    let mut stack = vec![root.join("rules")];
    while let Some(dir) = stack.pop() {
        for e in std::fs::read_dir(&dir).unwrap().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "rego" || x == "md")
                && p.file_name().is_some_and(|n| n != "README.md")
            {
                on_disk.push(
                    p.strip_prefix(root)
                        .unwrap()
                        .to_string_lossy()
                        .replace('\\', "/"),
                );
            }
        }
    }
    on_disk.sort();
    let embedded: Vec<String> = pack::FILES.iter().map(|(p, _)| p.to_string()).collect();
    assert_eq!(
        on_disk, embedded,
        "list every file of rules/ in pack_files! (src/policy/pack.rs), sorted"
    );
}

#[test]
fn conftest_rule_prefixes_severities_ids_and_exceptions() {
    let r = check(with_policies(&["policy"])).unwrap();
    let found = policy_findings(&r);
    let expected = [
        (
            "policy/main/deny",
            "workloads.yaml:2",
            Severity::Error,
            "Deployment api must set runAsNonRoot",
        ),
        (
            "team/replicas",
            "workloads.yaml:6",
            Severity::Error,
            "too many replicas",
        ),
        (
            "policy/main/deny_latest",
            "workloads.yaml:11",
            Severity::Error,
            "container api uses a `latest` tag",
        ),
        (
            "policy/main/warn",
            "workloads.yaml:14",
            Severity::Warning,
            "Service api is exposed through a load balancer",
        ),
    ];
    let got: Vec<(&str, &str, Severity, &str)> = found
        .iter()
        .map(|(a, b, c, d)| (a.as_str(), b.as_str(), *c, d.as_str()))
        .collect();
    assert_eq!(got, expected);
    // legacy.yaml's `latest` is an exception; it sets runAsNonRoot, so nothing is reported.
    assert!(!found.iter().any(|f| f.1.starts_with("legacy.yaml")));
}

/// A user policy's rule ids are selected like built-in ones, though the package runs as one
/// rule: `--select` and `--ignore` apply to each finding's id.
#[test]
fn user_policy_ids_are_selected_one_by_one() {
    let rules_with = |select: &[&str], ignore: &[&str]| -> Vec<String> {
        let r = engine::run(&Options {
            paths: vec![data_dir().join("repo")],
            policy: with_policies(&["policy"]),
            selection: gitops_lint::config::Selection {
                select: select.iter().map(|s| s.to_string()).collect(),
                ignore: ignore.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            },
            ..Options::default()
        })
        .unwrap();
        let mut rules: Vec<String> = r.diagnostics.iter().map(|d| d.rule.clone()).collect();
        rules.dedup();
        rules
    };
    assert_eq!(rules_with(&["policy/main/warn"], &[]), ["policy/main/warn"]);
    assert_eq!(
        rules_with(&["policy/"], &["policy/main/deny"]),
        ["policy/main/deny_latest", "policy/main/warn"]
    );
}

#[test]
fn namespaces_select_packages_like_conftest() {
    let all = ["policy", "other", "nested"];
    let rules = |args: PolicyArgs| -> Vec<String> {
        let mut v: Vec<String> = policy_findings(&check(args).unwrap())
            .into_iter()
            .map(|f| f.0)
            .collect();
        v.sort();
        v.dedup();
        v
    };
    assert_eq!(
        rules(with_policies(&all)),
        [
            "policy/main/deny",
            "policy/main/deny_latest",
            "policy/main/warn",
            "team/replicas"
        ],
        "default namespace: main only"
    );
    assert_eq!(
        rules(PolicyArgs {
            namespaces: vec!["other".into()],
            ..with_policies(&all)
        }),
        ["policy/other/deny"]
    );
    assert_eq!(
        rules(PolicyArgs {
            namespaces: vec!["main.*".into()],
            ..with_policies(&all)
        }),
        ["policy/main.extra/warn"]
    );
    let every = rules(PolicyArgs {
        all_namespaces: true,
        ..with_policies(&all)
    });
    assert!(
        every.contains(&"policy/other/deny".to_string()),
        "{every:?}"
    );
    assert!(every.contains(&"policy/main.extra/warn".to_string()));
    assert!(every.contains(&"policy/main/deny".to_string()));
}

#[test]
fn data_folders_are_merged_under_data() {
    let r = check(PolicyArgs {
        data: vec![data_dir().join("data")],
        ..with_policies(&["data-policy"])
    })
    .unwrap();
    let found = policy_findings(&r);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].3,
        "image docker.io/legacy:latest is not from an allowed registry"
    );
    assert_eq!(found[0].1, "legacy.yaml:2", "no path: the `kind` line");
}

#[test]
fn combine_gives_one_input_of_every_document() {
    let r = check(PolicyArgs {
        combine: true,
        ..with_policies(&["combine-policy"])
    })
    .unwrap();
    let found = policy_findings(&r);
    assert!(found.is_empty(), "{found:?}");
    // Two documents with the same kind and name, in two files.
    let dir = tempfile::tempdir().unwrap();
    let doc = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: same\n";
    std::fs::write(dir.path().join("a.yaml"), doc).unwrap();
    std::fs::write(dir.path().join("b.yaml"), doc).unwrap();
    let r = engine::run(&Options {
        paths: vec![dir.path().to_path_buf()],
        policy: PolicyArgs {
            combine: true,
            ..with_policies(&["combine-policy"])
        },
        ..Options::default()
    })
    .unwrap();
    let found = policy_findings(&r);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        found[0].3,
        "ConfigMap same is defined twice (a.yaml, b.yaml)"
    );
    assert!(
        r.diagnostics
            .iter()
            .find(|d| d.rule == "policy/main/deny")
            .and_then(|d| d.help.as_deref())
            .is_some_and(|h| h.contains("names no `file`")),
        "a result without `file` says where it is shown"
    );
}

#[test]
fn gitops_repo_packages_run_once_on_the_model() {
    let r = check(with_policies(&["repo-policy"])).unwrap();
    let found = policy_findings(&r);
    assert_eq!(
        found,
        [(
            "policy/gitops.repo.system/deny".to_string(),
            "app.yaml:12".to_string(),
            Severity::Error,
            "Application system-tools deploys into kube-system".to_string()
        )]
    );
}

#[test]
fn the_model_has_generated_applications_with_effective_values_and_files() {
    let r = engine::run(&Options {
        paths: vec![data_dir().join("model-repo")],
        policy: with_policies(&["model-policy"]),
        ..Options::default()
    })
    .unwrap();
    let found = policy_findings(&r);
    let msgs: Vec<(&str, &str)> = found.iter().map(|f| (f.1.as_str(), f.3.as_str())).collect();
    assert_eq!(
        msgs,
        [
            (
                "argocd/shop.yaml:19",
                "shop-dev: 1 replicas, tag dev, reads apps/shop/values.yaml, apps/shop/values-dev.yaml"
            ),
            (
                "argocd/shop.yaml:19",
                "shop-prod: 3 replicas, tag 1.0, reads apps/shop/values.yaml, apps/shop/values-prod.yaml"
            ),
        ]
    );
}

#[test]
fn locations_path_loc_and_gitops_location() {
    let r = check(with_policies(&["loc-policy"])).unwrap();
    let found = policy_findings(&r);
    assert!(
        found.contains(&(
            "policy/main/warn".into(),
            "workloads.yaml:14".into(),
            Severity::Warning,
            "type is set on line 18 of workloads.yaml".into()
        )),
        "{found:?}"
    );
    assert!(
        found.contains(&(
            "policy/main/warn_loc".into(),
            "workloads.yaml:6".into(),
            Severity::Warning,
            "replicas set here".into()
        )),
        "{found:?}"
    );
}

#[test]
fn a_runaway_policy_hits_the_time_limit_and_the_run_goes_on() {
    let started = std::time::Instant::now();
    let r = check(PolicyArgs {
        timeout: Some(Duration::from_millis(300)),
        ..with_policies(&["slow-policy"])
    })
    .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(30),
        "took {:?}",
        started.elapsed()
    );
    let errors: Vec<&Diagnostic> = r
        .diagnostics
        .iter()
        .filter(|d| d.rule == "policy/evaluation-error")
        .collect();
    assert_eq!(errors.len(), 1, "{:?}", r.diagnostics);
    assert!(
        errors[0].message.contains("data.main.deny")
            && errors[0].message.contains("slow.rego:6")
            && errors[0].message.contains("time limit"),
        "{}",
        errors[0].message
    );
    assert!(
        r.diagnostics
            .iter()
            .any(|d| d.rule == "policy/main/warn" && d.message == "still evaluated")
    );
}

#[test]
fn compile_errors_stop_the_run_at_the_rego_line() {
    let Err(Error::Policy(e)) = check(with_policies(&["bad-policy"])) else {
        panic!("a broken policy must be an error");
    };
    let (start, _) = e.span.expect("the error has a position");
    let line = e.text[..start].lines().count();
    assert!((7..=8).contains(&line), "line {line}: {e}");
    let rendered = gitops_lint::report::text::render_policy_error(&e, false);
    assert!(rendered.contains("broken.rego"), "{rendered}");
    assert!(rendered.contains("invalid policy"), "{rendered}");

    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["check", "--policy"])
        .arg(data_dir().join("bad-policy"))
        .arg(data_dir().join("repo"))
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("broken.rego:7") || err.contains("broken.rego:8"),
        "{err}"
    );
}

#[test]
fn rego_versions_are_detected_or_forced() {
    // v0 policies load without a flag; forcing v1 on them fails with a hint.
    assert!(check(with_policies(&["policy"])).is_ok());
    let Err(Error::Policy(e)) = check(PolicyArgs {
        rego_version: Some(RegoVersion::V1),
        ..with_policies(&["policy"])
    }) else {
        panic!("v0 syntax must not compile as v1");
    };
    assert!(e.path.ends_with("deny.rego"), "{e}");
    let files = policy::collect_rego_files(&[data_dir().join("policy")]).unwrap();
    let versions: Vec<RegoVersion> = files.iter().map(|f| RegoVersion::detect(&f.text)).collect();
    assert_eq!(
        versions,
        [RegoVersion::V0, RegoVersion::V1, RegoVersion::V1],
        "deny.rego is v0, the others v1"
    );
}

#[test]
fn user_policy_ids_are_configured_and_suppressed_like_rules() {
    let dir = tempfile::tempdir().unwrap();
    let src = data_dir().join("repo/workloads.yaml");
    let text = std::fs::read_to_string(src).unwrap().replace(
        "kind: Service\n",
        "kind: Service # gitops-lint: disable=policy/main/warn -- reviewed\n",
    );
    std::fs::write(dir.path().join("workloads.yaml"), text).unwrap();
    // A repository's `policies:` stay in the repository: the policies are copied into it.
    std::fs::create_dir(dir.path().join("policy")).unwrap();
    for f in std::fs::read_dir(data_dir().join("policy")).unwrap() {
        let f = f.unwrap();
        std::fs::copy(f.path(), dir.path().join("policy").join(f.file_name())).unwrap();
    }
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "policies: [policy]\nrules:\n  policy/main/deny: warning\n  team/replicas: off\n",
    )
    .unwrap();
    // `team/replicas` is not a `policy/` id: config rejects unknown ids, so use a level on
    // `policy/` ids only.
    let r = engine::run(&Options {
        paths: vec![dir.path().to_path_buf()],
        ..Options::default()
    });
    let Err(Error::Config(e)) = r else {
        panic!("unknown non-policy id must be a config error");
    };
    assert!(e.message.contains("team/replicas"), "{e}");
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "policies: [policy]\nrules:\n  policy/main/deny: warning\n  policy/main/deny_latest: off\n",
    )
    .unwrap();
    let r = engine::run(&Options {
        paths: vec![dir.path().to_path_buf()],
        ..Options::default()
    })
    .unwrap();
    let found = policy_findings(&r);
    let rules: Vec<(&str, Severity)> = found.iter().map(|f| (f.0.as_str(), f.2)).collect();
    assert_eq!(
        rules,
        [
            ("policy/main/deny", Severity::Warning),
            ("team/replicas", Severity::Error)
        ],
        "configured level, `off`, and the suppressed warn: {found:?}"
    );
    assert_eq!(r.summary.suppressed, 1);
}

#[test]
fn test_policies_reports_counts_and_fails_on_a_failing_test() {
    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg("test-policies")
        .arg(data_dir().join("tests-failing"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("2 tests, 1 passed, 1 failed"), "{out}");
    assert!(
        out.contains("data.p_test.test_guest_allowed_fails"),
        "{out}"
    );
    let o = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .arg("test-policies")
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "the shipped pack: {out}");
    assert!(out.contains(" passed, 0 failed"), "{out}");
}

/// conftest's own examples, run where a copy is present: `CONFTEST_EXAMPLES` is the path of
/// conftest's `examples/` folder. Expectations come from conftest's `acceptance.bats`; see
/// docs/policy-authoring.md for which pass and why the others cannot.
#[test]
#[ignore = "needs CONFTEST_EXAMPLES=/path/to/conftest/examples"]
fn conftest_examples_when_present() {
    let root = std::env::var_os("CONFTEST_EXAMPLES")
        .map(PathBuf::from)
        .expect("set CONFTEST_EXAMPLES=/path/to/conftest/examples to run conftest's examples");
    struct Case {
        name: &'static str,
        policies: &'static [&'static str],
        inputs: &'static [&'static str],
        namespaces: &'static [&'static str],
        all: bool,
        data: &'static [&'static str],
        combine: bool,
        /// conftest's exit status (0 or 1) and texts its output must contain.
        status: i32,
        contains: &'static [&'static str],
        /// Failures (deny/violation) and warnings conftest counts, when the bats test says.
        counts: Option<(usize, usize)>,
        /// Why gitops-lint cannot give conftest's outcome (the case is then only reported).
        known_difference: Option<&'static str>,
    }
    let cases = [
        Case {
            name: "service with a warning passes",
            policies: &["kubernetes/policy"],
            inputs: &["kubernetes/service.yaml"],
            namespaces: &[],
            all: false,
            data: &[],
            combine: false,
            status: 0,
            contains: &["Found service hello-kubernetes but services are not allowed"],
            counts: Some((0, 1)),
            known_difference: None,
        },
        Case {
            name: "deployment with root containers fails",
            policies: &["kubernetes/policy"],
            inputs: &["kubernetes/deployment.yaml"],
            namespaces: &[],
            all: false,
            data: &[],
            combine: false,
            status: 1,
            contains: &[],
            counts: None,
            known_difference: None,
        },
        Case {
            name: "a namespace without policies passes",
            policies: &["kubernetes/policy"],
            inputs: &["kubernetes/deployment.yaml"],
            namespaces: &["notpresent"],
            all: false,
            data: &[],
            combine: false,
            status: 0,
            contains: &[],
            counts: Some((0, 0)),
            known_difference: None,
        },
        Case {
            name: "all namespaces",
            policies: &["kubernetes/policy"],
            inputs: &["kubernetes/deployment.yaml"],
            namespaces: &[],
            all: true,
            data: &[],
            combine: false,
            status: 1,
            contains: &[],
            counts: Some((4, 0)),
            known_difference: None,
        },
        Case {
            name: "multi-file: fails when the last file is fine",
            policies: &["kubernetes/policy"],
            inputs: &["kubernetes/deployment.yaml", "kubernetes/service.yaml"],
            namespaces: &[],
            all: false,
            data: &[],
            combine: false,
            status: 1,
            contains: &[],
            counts: None,
            known_difference: None,
        },
        Case {
            name: "data with policies",
            policies: &["data/policy"],
            inputs: &["data/service.yaml"],
            namespaces: &[],
            all: false,
            data: &["data/exclusions"],
            combine: false,
            status: 1,
            contains: &["Cannot expose port"],
            counts: None,
            known_difference: None,
        },
        Case {
            name: "docker-compose that does not conform",
            policies: &["compose/policy"],
            inputs: &["compose/docker-compose.yml"],
            namespaces: &[],
            all: false,
            data: &[],
            combine: false,
            status: 1,
            contains: &[],
            counts: Some((2, 0)),
            known_difference: None,
        },
        Case {
            name: "docker-compose that conforms",
            policies: &["compose/policy"],
            inputs: &["compose/docker-compose-valid.yml"],
            namespaces: &[],
            all: false,
            data: &[],
            combine: false,
            status: 0,
            contains: &[],
            counts: Some((0, 0)),
            known_difference: None,
        },
        Case {
            name: "exceptions",
            policies: &["exceptions/policy"],
            inputs: &["exceptions/deployments.yaml"],
            namespaces: &[],
            all: false,
            data: &[],
            combine: false,
            status: 1,
            contains: &[],
            counts: Some((1, 0)),
            known_difference: None,
        },
        Case {
            name: "combine yaml files",
            policies: &["combine/policy"],
            inputs: &[
                "combine/team.yaml",
                "combine/user1.yaml",
                "combine/user2.yaml",
            ],
            namespaces: &[],
            all: false,
            data: &[],
            combine: true,
            status: 1,
            contains: &[],
            counts: Some((1, 0)),
            known_difference: Some(COMBINE_SCOPING),
        },
        Case {
            name: "combine a multi-document file",
            policies: &["combine/policy"],
            inputs: &["combine/team.yaml", "combine/users.yaml"],
            namespaces: &[],
            all: false,
            data: &[],
            combine: true,
            status: 1,
            contains: &[],
            counts: Some((1, 0)),
            known_difference: Some(COMBINE_SCOPING),
        },
        Case {
            name: "configfile policies",
            policies: &["configfile/test"],
            inputs: &["configfile/deployment.yaml"],
            namespaces: &["conftest"],
            all: false,
            data: &[],
            combine: false,
            status: 1,
            contains: &["Containers must not run as root"],
            counts: None,
            known_difference: None,
        },
    ];
    let mut failures = Vec::new();
    let mut known = Vec::new();
    for c in &cases {
        let dir = tempfile::tempdir().unwrap();
        for input in c.inputs {
            let src = root.join(input);
            let name = src.file_name().unwrap();
            std::fs::copy(&src, dir.path().join(name)).unwrap();
        }
        let r = engine::run(&Options {
            paths: vec![dir.path().to_path_buf()],
            policy: PolicyArgs {
                paths: c.policies.iter().map(|p| root.join(p)).collect(),
                namespaces: c.namespaces.iter().map(|n| n.to_string()).collect(),
                all_namespaces: c.all,
                data: c.data.iter().map(|p| root.join(p)).collect(),
                combine: c.combine,
                ..PolicyArgs::default()
            },
            ..Options::default()
        });
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                failures.push(format!("{}: {e}", c.name));
                continue;
            }
        };
        let policy: Vec<&Diagnostic> = r
            .diagnostics
            .iter()
            .filter(|d| d.rule.starts_with("policy/") && d.rule != "policy/evaluation-error")
            .collect();
        let errors = policy
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        let warnings = policy.len() - errors;
        let status = i32::from(errors > 0);
        let eval_errors: Vec<&str> = r
            .diagnostics
            .iter()
            .filter(|d| d.rule == "policy/evaluation-error")
            .map(|d| d.message.as_str())
            .collect();
        let mut problems = Vec::new();
        if !eval_errors.is_empty() {
            problems.push(format!("evaluation errors: {eval_errors:?}"));
        }
        if status != c.status {
            problems.push(format!("status {status}, conftest {}", c.status));
        }
        for text in c.contains {
            if !policy.iter().any(|d| d.message.contains(text)) {
                problems.push(format!("no message containing {text:?}"));
            }
        }
        if let Some(counts) = c.counts {
            if (errors, warnings) != counts {
                problems.push(format!(
                    "{errors} failures and {warnings} warnings, conftest {counts:?}"
                ));
            }
        }
        if let Some(why) = c.known_difference {
            known.push(format!(
                "{}: {} ({})",
                c.name,
                if problems.is_empty() {
                    "now matches conftest: update docs/policy-authoring.md".to_string()
                } else {
                    problems.join("; ")
                },
                why
            ));
            continue;
        }
        if !problems.is_empty() {
            let msgs: Vec<String> = policy
                .iter()
                .map(|d| format!("{}: {}", d.rule, d.message))
                .collect();
            failures.push(format!(
                "{}: {}\n  {}",
                c.name,
                problems.join("; "),
                msgs.join("\n  ")
            ));
        }
    }
    // Capabilities: conftest refuses `http.send` and `opa.runtime` with a capabilities file;
    // gitops-lint always does, when loading the policy.
    let r = engine::run(&Options {
        paths: vec![root.join("kubernetes/deployment.yaml")],
        policy: PolicyArgs {
            paths: vec![
                root.join("kubernetes/policy"),
                root.join("capabilities/malicious.rego"),
            ],
            ..PolicyArgs::default()
        },
        ..Options::default()
    });
    match r {
        Err(Error::Policy(e)) if e.message.contains("is not available") => {}
        Err(e) => failures.push(format!("capabilities: unexpected error {e}")),
        Ok(_) => failures.push("capabilities: malicious.rego was accepted".into()),
    }
    // `conftest verify` cases: the policies' own tests.
    let verify: [VerifyCase; 3] = [
        ("kubernetes/policy", &["kubernetes/policy"], &[], 4, 4, None),
        (
            "data/policy",
            &["data/policy"],
            &["data/exclusions"],
            1,
            1,
            None,
        ),
        (
            "kubernetes/combine",
            &["kubernetes/combine"],
            &[],
            2,
            2,
            Some(
                "uses conftest's own builtin `parse_combined_config_files`, which regorus does not have",
            ),
        ),
    ];
    for (name, pols, data, total, passed, why) in verify {
        let files =
            policy::collect_rego_files(&pols.iter().map(|p| root.join(p)).collect::<Vec<_>>())
                .unwrap();
        let data =
            policy::load_data_dirs(&data.iter().map(|p| root.join(p)).collect::<Vec<_>>()).unwrap();
        let got = test_runner::run(&files, &data, &CompileOptions::default())
            .map(|r| (r.results.len(), r.passed()));
        let ok = matches!(got, Ok((t, p)) if t == total && p == passed);
        match (ok, why) {
            (true, None) => {}
            (false, None) => failures.push(format!(
                "verify {name}: {:?}, conftest {total} tests, {passed} passed",
                got.map_err(|e| e.to_string())
            )),
            (_, Some(why)) => known.push(format!(
                "verify {name}: {:?} ({why})",
                got.map(|(t, p)| format!("{t} tests, {p} passed"))
                    .map_err(|e| e.to_string())
            )),
        }
    }
    for k in &known {
        eprintln!("known difference: {k}");
    }
    assert!(
        failures.is_empty(),
        "conftest examples that differ:\n{}",
        failures.join("\n")
    );
}

/// `conftest verify` case: name, policy folders, data folders, tests, passed, known difference.
type VerifyCase = (
    &'static str,
    &'static [&'static str],
    &'static [&'static str],
    usize,
    usize,
    Option<&'static str>,
);

/// regorus rejects a comprehension that reads the outer `name` and then assigns a new local
/// `name` ("var `name` used before definition below"); OPA accepts it.
const COMBINE_SCOPING: &str = "regorus rejects the example's comprehension that uses `name` before re-assigning it with `:=`, which OPA accepts";

/// The shipped pack and a user policy judge the Applications a Helm app-of-apps chart renders,
/// and their findings land at the values lines that set what they judge. On one thread, so
/// that the two children rendered from one template are evaluated one after the other (their
/// inputs were once taken for each other's: they share a file and an index).
#[test]
fn pack_and_user_policies_fire_on_rendered_children_at_their_values_lines() {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    write(".gitops-lint.yaml", "policies: [policy]\n");
    write(
        "argocd/root.yaml",
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: root\n  namespace: argocd\n  finalizers: [resources-finalizer.argocd.argoproj.io]\nspec:\n  project: platform\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/apps\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: argocd\n  syncPolicy:\n    automated: {prune: true, selfHeal: true}\n",
    );
    write(
        "charts/apps/Chart.yaml",
        "apiVersion: v2\nname: apps\nversion: 1.0.0\n",
    );
    write(
        "charts/apps/values.yaml",
        "apps:\n  web:\n    project: default\n    namespace: web\n  agent:\n    project: platform\n    namespace: kube-system\n",
    );
    write(
        "charts/apps/templates/apps.yaml",
        "{{- range $name, $app := .Values.apps }}\n---\napiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: {{ $name }}\n  namespace: argocd\n  finalizers: [resources-finalizer.argocd.argoproj.io]\nspec:\n  project: {{ $app.project }}\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: apps/{{ $name }}\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: {{ $app.namespace }}\n  syncPolicy:\n    automated: {prune: true, selfHeal: true}\n{{- end }}\n",
    );
    write(
        "policy/namespaces.rego",
        "package main\n\nimport rego.v1\n\ndeny contains {\"msg\": sprintf(\"Application `%s` deploys into `kube-system`\", [input.metadata.name]), \"path\": [\"spec\", \"destination\", \"namespace\"]} if {\n\tinput.kind == \"Application\"\n\tinput.spec.destination.namespace == \"kube-system\"\n}\n",
    );
    let r = engine::run(&Options {
        paths: vec![dir.path().to_path_buf()],
        jobs: Some(1),
        ..Options::default()
    })
    .unwrap();
    let at = |rule: &str| -> Vec<(String, String)> {
        r.diagnostics
            .iter()
            .filter(|d| d.rule == rule)
            .map(|d| {
                let f = r.repo.source(d.span.file);
                let lc = f.line_col(d.span.start as usize);
                let labels = d
                    .labels
                    .iter()
                    .map(|l| l.message.clone())
                    .collect::<Vec<_>>()
                    .join("; ");
                (format!("{}:{}:{}", f.path, lc.line, lc.column), labels)
            })
            .collect()
    };
    let all: Vec<String> = r
        .diagnostics
        .iter()
        .map(|d| format!("{} {}", d.rule, d.message))
        .collect();
    let pack = at("argocd/no-default-project");
    assert_eq!(pack.len(), 1, "{pack:?} among {all:#?}");
    assert_eq!(pack[0].0, "charts/apps/values.yaml:3:14", "{pack:?}");
    assert!(
        pack[0]
            .1
            .contains("rendered from `templates/apps.yaml:3` by Application `root`"),
        "{pack:?}"
    );
    let user = at("policy/main/deny");
    assert_eq!(user.len(), 1, "{user:?}");
    assert_eq!(user[0].0, "charts/apps/values.yaml:7:16", "{user:?}");
    assert!(user[0].1.contains("by Application `root`"), "{user:?}");
}

/// `# METADATA` annotations name rules: each definition with a `custom.id` (or a one-word
/// `title`) has that id under `policy/`, `scope: document` names every definition, and the
/// rest keep `policy/<package>/<rule>`.
#[test]
fn metadata_ids_name_each_rego_rule() {
    let r = check(with_policies(&["meta-policy"])).unwrap();
    let mut found: Vec<(String, String)> = policy_findings(&r)
        .into_iter()
        .map(|f| (f.0, f.1))
        .collect();
    found.sort();
    let expected = [
        ("policy/main/deny", "workloads.yaml:14"),
        ("policy/replicas", "workloads.yaml:2"),
        ("policy/replicas", "workloads.yaml:2"),
        ("policy/team/no-latest", "legacy.yaml:2"),
        ("policy/team/no-latest", "workloads.yaml:2"),
        ("policy/team/run-as-non-root", "workloads.yaml:2"),
    ];
    let got: Vec<(&str, &str)> = found
        .iter()
        .map(|(a, b)| (a.as_str(), b.as_str()))
        .collect();
    assert_eq!(got, expected);
}

/// Selected, configured, suppressed and baselined alone: one definition of `deny`.
#[test]
fn one_metadata_id_is_selected_suppressed_and_baselined_alone() {
    let run = |select: &[&str], ignore: &[&str]| -> Vec<String> {
        let r = engine::run(&Options {
            paths: vec![data_dir().join("repo")],
            policy: with_policies(&["meta-policy"]),
            selection: gitops_lint::config::Selection {
                select: select.iter().map(|s| s.to_string()).collect(),
                ignore: ignore.iter().map(|s| s.to_string()).collect(),
                ..Default::default()
            },
            ..Options::default()
        })
        .unwrap();
        let mut rules: Vec<String> = r.diagnostics.iter().map(|d| d.rule.clone()).collect();
        rules.sort();
        rules.dedup();
        rules
    };
    assert_eq!(
        run(&["policy/team/no-latest"], &[]),
        ["policy/team/no-latest"]
    );
    assert_eq!(
        run(&["policy/"], &["policy/team/no-latest", "policy/replicas"]),
        ["policy/main/deny", "policy/team/run-as-non-root"]
    );

    // A repository with the policy: a suppression comment and a level for one id each.
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(data_dir().join("repo/workloads.yaml"))
        .unwrap()
        .replace(
            "kind: Deployment\n",
            "kind: Deployment # gitops-lint: disable=policy/team/no-latest -- pinned by the release job\n",
        );
    std::fs::write(dir.path().join("workloads.yaml"), text).unwrap();
    std::fs::create_dir(dir.path().join("policy")).unwrap();
    std::fs::copy(
        data_dir().join("meta-policy/ids.rego"),
        dir.path().join("policy/ids.rego"),
    )
    .unwrap();
    std::fs::write(
        dir.path().join(".gitops-lint.yaml"),
        "policies: [policy]\nrules:\n  policy/team/run-as-non-root: warning\n  policy/replicas: off\n",
    )
    .unwrap();
    let r = engine::run(&Options {
        paths: vec![dir.path().to_path_buf()],
        ..Options::default()
    })
    .unwrap();
    let rules: Vec<(String, Severity)> = policy_findings(&r)
        .into_iter()
        .map(|f| (f.0, f.2))
        .collect();
    assert_eq!(
        rules,
        [
            ("policy/team/run-as-non-root".to_string(), Severity::Warning),
            ("policy/main/deny".to_string(), Severity::Error),
        ]
    );
    assert_eq!(r.summary.suppressed, 1);

    // A baseline taken while `no-latest` is suppressed: once the suppression goes, its finding
    // is the one new finding at a place where the baseline holds other rules' findings.
    let bin = || {
        let mut c = Command::new(env!("CARGO_BIN_EXE_gitops-lint"));
        c.current_dir(dir.path()).env("NO_COLOR", "1");
        c
    };
    let o = bin().arg("baseline").output().unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::write(dir.path().join("baseline.json"), &o.stdout).unwrap();
    let o = bin()
        .args(["check", "--baseline", "baseline.json", "--format", "json"])
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // The suppression removed: `no-latest`'s finding is new, no other.
    let text = std::fs::read_to_string(dir.path().join("workloads.yaml"))
        .unwrap()
        .replace(
            " # gitops-lint: disable=policy/team/no-latest -- pinned by the release job",
            "",
        );
    std::fs::write(dir.path().join("workloads.yaml"), text).unwrap();
    let o = bin()
        .args(["check", "--baseline", "baseline.json", "--format", "json"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let new: Vec<&str> = v["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["rule"].as_str().unwrap())
        .collect();
    assert_eq!(new, ["policy/team/no-latest"]);
}

#[test]
fn a_duplicate_metadata_id_is_an_error_at_the_annotation() {
    let Err(Error::Policy(e)) = check(with_policies(&["meta-duplicate"])) else {
        panic!("a duplicate id must be an error");
    };
    let (start, end) = e.span.expect("the error has a position");
    assert_eq!(&e.text[start..end], "team/no-latest");
    assert_eq!(e.text[..start].lines().count(), 15, "{e}");
    assert!(
        e.message
            .contains("rule id `policy/team/no-latest` is already the id of the rule at"),
        "{e}"
    );
}
