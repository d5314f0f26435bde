//! Fixes and messages of `ci/writeback-skip-ci` on small inline pipelines.

use crate::config::Config;
use crate::diagnostic::{Diagnostic, Severity};
use crate::engine::check_texts;
use crate::fix::{self, Fix};

fn lint_with(path: &str, text: &str, config: Config) -> Vec<Diagnostic> {
    let r = check_texts(&[(path, text)], config);
    r.diagnostics
        .into_iter()
        .filter(|d| d.rule == super::ID)
        .collect()
}

/// Asserts that a finding's message holds `text`.
fn assert_says(d: &Diagnostic, text: &str) {
    assert!(d.message.contains(text), "{}", d.message);
}

/// A configuration from `.gitops-lint.yaml` text.
fn parse_config(yaml: &str) -> Result<Config, crate::config::ConfigErrors> {
    crate::config::parse(
        std::path::Path::new(".gitops-lint.yaml"),
        yaml,
        &crate::registry::all_meta(),
    )
}

/// Applies every fix of the rule and checks the result lints clean.
fn fixed(path: &str, text: &str) -> String {
    let ds = lint_with(path, text, Config::default());
    assert!(!ds.is_empty(), "no finding in:\n{text}");
    let fixes: Vec<&Fix> = ds.iter().filter_map(|d| d.fix.as_ref()).collect();
    assert_eq!(fixes.len(), ds.len(), "every finding has a fix: {ds:#?}");
    let (out, _) = fix::apply_fixes(text, &fixes);
    let again = check_texts(&[(path, out.as_str())], Config::default());
    assert!(
        again.diagnostics.is_empty(),
        "after the fix:\n{out}\n{:#?}",
        again.diagnostics
    );
    out
}

#[test]
fn fix_goes_before_the_shell_quote_inside_a_yaml_single_quoted_scalar() {
    let src = "bump:\n  script:\n    - 'git commit -m \"ci: bump ${SERVICE}\"'\n    - git push origin HEAD:main\n";
    assert_eq!(
        fixed(".gitlab-ci.yml", src),
        "bump:\n  script:\n    - 'git commit -m \"ci: bump ${SERVICE} [skip ci]\"'\n    - git push origin HEAD:main\n"
    );
}

#[test]
fn fix_edits_the_variable_the_message_comes_from() {
    let src = "variables:\n  COMMIT_MSG: \"ci: bump $CI_COMMIT_SHORT_SHA\"\nbump:\n  script:\n    - git commit -am \"$COMMIT_MSG\"\n    - git push\n";
    assert_eq!(
        fixed(".gitlab-ci.yml", src),
        "variables:\n  COMMIT_MSG: \"ci: bump $CI_COMMIT_SHORT_SHA [skip ci]\"\nbump:\n  script:\n    - git commit -am \"$COMMIT_MSG\"\n    - git push\n"
    );
    let src = "bump:\n  script:\n    - MSG=\"bump\"\n    - git commit -m \"$MSG\" && git push\n";
    assert_eq!(
        fixed(".gitlab-ci.yml", src),
        "bump:\n  script:\n    - MSG=\"bump [skip ci]\"\n    - git commit -m \"$MSG\" && git push\n"
    );
}

#[test]
fn fix_quotes_a_bare_message_and_escapes_in_double_quoted_yaml() {
    let src =
        "bump:\n  script:\n    - git commit -m bump\n    - \"git commit -m 'two' && git push\"\n";
    assert_eq!(
        fixed(".gitlab-ci.yml", src),
        "bump:\n  script:\n    - git commit -m \"bump [skip ci]\"\n    - \"git commit -m 'two [skip ci]' && git push\"\n"
    );
    let src = "bump:\n  script:\n    - \"git commit -m \\\"bump\\\" && git push\"\n";
    assert_eq!(
        fixed(".gitlab-ci.yml", src),
        "bump:\n  script:\n    - \"git commit -m \\\"bump [skip ci]\\\" && git push\"\n"
    );
}

#[test]
fn fix_in_a_commits_api_json_body() {
    let src = "p:\n  script:\n    - 'curl -X POST -d \"{\\\"branch\\\": \\\"main\\\", \\\"commit_message\\\": \\\"ci: x\\\"}\" \"$API/projects/$CI_PROJECT_ID/repository/commits\"'\n";
    let out = fixed(".gitlab-ci.yml", src);
    assert!(out.contains("\\\"ci: x [skip ci]\\\"}"), "{out}");
}

#[test]
fn fix_in_a_crlf_run_block_and_an_action_input() {
    let src = "on: push\r\njobs:\r\n  b:\r\n    runs-on: x\r\n    steps:\r\n      - uses: actions/checkout@v4\r\n        with:\r\n          token: ${{ secrets.PAT }}\r\n      - run: |\r\n          echo hi\r\n          git commit -am \"ci: bump\"\r\n          git push\r\n      - uses: stefanzweifel/git-auto-commit-action@v5\r\n        with:\r\n          commit_message: regenerate\r\n";
    let ds = lint_with(".github/workflows/b.yml", src, Config::default());
    assert_eq!(ds.len(), 2);
    let out = fixed(".github/workflows/b.yml", src);
    assert!(
        out.contains("          git commit -am \"ci: bump [skip ci]\"\r\n"),
        "{out:?}"
    );
    assert!(
        out.contains("commit_message: regenerate [skip ci]\r\n"),
        "{out:?}"
    );
}

#[test]
fn the_finding_is_on_the_commit_line_of_a_block() {
    let src = "b:\n  script:\n    - |\n      echo one\n      git add . &&\n        git commit -m 'x'\n      git push\n";
    let ds = lint_with(".gitlab-ci.yml", src, Config::default());
    assert_eq!(ds.len(), 1);
    assert_eq!(&src[ds[0].span.range()], "git commit -m 'x'");
}

#[test]
fn cannot_verify_is_info_and_other_repositories_are_named() {
    let src = "b:\n  script:\n    - git clone https://oauth2:$T@gitlab.example.com/platform/gitops.git\n    - cd gitops\n    - git commit -F msg\n    - git push\n";
    let ds = lint_with(".gitlab-ci.yml", src, Config::default());
    assert_eq!(ds.len(), 1);
    assert_eq!(ds[0].severity, Severity::Info);
    assert_says(&ds[0], "cannot verify");
    assert_says(
        &ds[0],
        "another repository (`https://gitlab.example.com/platform/gitops.git`)",
    );
    // `cd` is followed through relative paths and `..`.
    let src2 = "b:\n  script:\n    - cd /tmp && git clone https://h.example/g/gitops.git\n    - cd gitops\n    - cd apps/../apps\n    - git commit -m x\n    - git push\n    - cd ../..\n    - git commit -m y\n    - git push\n";
    let ds = lint_with(".gitlab-ci.yml", src2, Config::default());
    assert_eq!(ds.len(), 2);
    assert_says(&ds[0], "another repository");
    assert_says(&ds[1], "this repository");
    // A remote URL built from predefined variables still names this repository.
    let src3 = "b:\n  script:\n    - git remote set-url origin \"https://oauth2:${TOKEN}@${CI_SERVER_HOST}/${CI_PROJECT_PATH}.git\"\n    - git commit -m x\n    - git push origin HEAD:main\n";
    let ds = lint_with(".gitlab-ci.yml", src3, Config::default());
    assert_says(&ds[0], "this repository");
    let src4 = "b:\n  script:\n    - git clone \"https://oauth2:${TOKEN}@${GITOPS_HOST}/platform/gitops.git\"\n    - cd gitops && git commit -m x && git push\n";
    let ds = lint_with(".gitlab-ci.yml", src4, Config::default());
    assert_says(&ds[0], "(`https://${GITOPS_HOST}/platform/gitops.git`)");
    // The repository's own URL (from `repo_urls`) is this repository: a loop.
    let config = Config {
        repo_urls: vec!["https://gitlab.example.com/platform/gitops".into()],
        ..Config::default()
    };
    let ds = lint_with(".gitlab-ci.yml", src, config);
    assert_says(&ds[0], "to this repository");
}

#[test]
fn github_token_pushes_are_reported_only_with_always() {
    let src = "on: push\njobs:\n  b:\n    runs-on: x\n    steps:\n      - uses: actions/checkout@v4\n      - run: git commit -am bump && git push\n";
    assert!(lint_with(".github/workflows/b.yml", src, Config::default()).is_empty());
    let config =
        parse_config("rules:\n  ci/writeback-skip-ci:\n    require_skip_ci: always\n").unwrap();
    assert_eq!(lint_with(".github/workflows/b.yml", src, config).len(), 1);
}

/// Odd pipelines give findings only where a commit is pushed, never an internal error, and
/// every span inside the file.
#[test]
fn odd_inputs_do_not_panic() {
    for src in [
        "a: {script: [git commit -m x, git push]}",
        "a:\n  extends: a\n  script: !reference [a, script]\n",
        "a:\n  script:\n    - !reference [.nope]\n    - !reference []\n",
        "include: [{local: '*.yml'}, 'x', {local: '/[bad'}]\nb: {script: 'git commit -m \"x'}\n",
        "jobs: {a: {steps: [{uses: actions/checkout@v4, with: {token: 1}}, {run: 'git commit -m $'}, {run: git push}]}}",
        "variables: {A: $B, B: $A}\nj:\n  script:\n    - git commit -m \"$A\"\n    - git push\n",
    ] {
        for path in [".gitlab-ci.yml", ".github/workflows/x.yml"] {
            let report = check_texts(&[(path, src)], Config::default());
            for d in &report.diagnostics {
                assert!(
                    !d.message.starts_with("internal error"),
                    "{path}: {src:?}: {}",
                    d.message
                );
                for s in std::iter::once(d.span).chain(d.labels.iter().map(|l| l.span)) {
                    assert!(
                        s.start <= s.end && s.end as usize <= src.len(),
                        "{src:?}: {s:?}"
                    );
                }
            }
        }
    }
}

#[test]
fn other_repositories_are_a_warning_unless_configured() {
    let src = "b:\n  script:\n    - git clone https://h.example/g/gitops.git && cd gitops\n    - git commit -am x && git push\n    - cd .. && git commit -am y && git push\n    - 'curl -X POST -d \"{\\\"commit_message\\\": \\\"z\\\"}\" \"$API/projects/7/repository/commits\"'\n";
    let with = |yaml: &str| {
        lint_with(".gitlab-ci.yml", src, parse_config(yaml).unwrap())
            .into_iter()
            .map(|d| (d.message.contains("to this repository"), d.severity))
            .collect::<Vec<_>>()
    };
    let (this, other) = (true, false);
    assert_eq!(
        with(""),
        [
            (other, Severity::Warning),
            (this, Severity::Error),
            (other, Severity::Warning)
        ]
    );
    assert_eq!(
        with("ci:\n  other_repositories: error\n"),
        [
            (other, Severity::Error),
            (this, Severity::Error),
            (other, Severity::Error)
        ]
    );
    assert_eq!(
        with("ci: {other_repositories: off}\n"),
        [(this, Severity::Error)]
    );
    // A rule configured lower lowers both.
    assert_eq!(
        with("ci: {other_repositories: error}\nrules: {ci/writeback-skip-ci: warning}\n"),
        [
            (other, Severity::Warning),
            (this, Severity::Warning),
            (other, Severity::Warning)
        ]
    );
    let bad = parse_config("ci: {other_repositories: info}\n").unwrap_err();
    assert!(
        bad.message.contains("`error`, `warning` or `off`"),
        "{}",
        bad.message
    );
    let typo = parse_config("ci: {other_repository: off}\n").unwrap_err();
    assert_eq!(
        typo.help.as_deref(),
        Some("did you mean `other_repositories`?")
    );
}
