//! The `diff` mode of the GitLab component (`templates/gitops-lint-diff.yml`) and of the GitHub
//! Action (`action.yml`, `mode: diff`): their shell run for real against the built binary on a
//! `testdata/diff/` case, posting to a local stub of each API (Python's `http.server` on
//! 127.0.0.1, a free port) that records every request. The first run creates the note, the
//! second updates the same one.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use crate::integrations::{bash, load, project_root, step, steps};

const GITLAB_DIFF_COMPONENT: &str = "templates/gitops-lint-diff.yml";
const SCRIPT: &str = "ci/post-diff-comment.py";
const MARKER: &str = "<!-- gitops-lint diff -->";

/// The API stub: answers listings page by page (`per_page`, `page`) from 150 unrelated notes,
/// so the one to update is not on the first page; POST creates a note, PUT and PATCH replace
/// one's body. A token containing `bad` is refused (403). Each request is appended to the log file as a JSON line, header names in lower
/// case. Prints its port, then serves.
const STUB: &str = r#"
import http.server, json, sys, urllib.parse
log = open(sys.argv[1], "a")
notes = [{"id": i, "body": f"unrelated {i}", "system": False} for i in range(1, 151)]
class Stub(http.server.BaseHTTPRequestHandler):
    def record(self, body):
        headers = {k.lower(): v for k, v in self.headers.items()}
        log.write(json.dumps({"method": self.command, "path": self.path,
                              "headers": headers, "body": body}) + "\n")
        log.flush()
    def reply(self, code, value):
        data = json.dumps(value).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
    def read(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.record(body)
        return body
    def refused(self):
        if "bad" in (self.headers.get("PRIVATE-TOKEN", "") + self.headers.get("Authorization", "")):
            self.reply(403, {"message": "403 Forbidden"})
            return True
        return False
    def do_GET(self):
        self.record(None)
        if self.refused():
            return
        q = urllib.parse.parse_qs(urllib.parse.urlsplit(self.path).query)
        n, p = int(q.get("per_page", ["20"])[0]), int(q.get("page", ["1"])[0])
        self.reply(200, notes[(p - 1) * n:p * n])
    def do_POST(self):
        note = {"id": 1000 + len(notes), "body": self.read()["body"], "system": False}
        notes.append(note)
        self.reply(201, note)
    def do_PUT(self):
        body = self.read()
        wanted = int(urllib.parse.urlsplit(self.path).path.rsplit("/", 1)[1])
        for note in notes:
            if note["id"] == wanted:
                note["body"] = body["body"]
                return self.reply(200, note)
        self.reply(404, {"message": "404 Not found"})
    do_PATCH = do_PUT
    def log_message(self, *args):
        pass
server = http.server.HTTPServer(("127.0.0.1", 0), Stub)
print(server.server_address[1], flush=True)
server.serve_forever()
"#;

/// The running stub, stopped when dropped.
struct Api {
    child: Child,
    port: u16,
    log: tempfile::NamedTempFile,
}

impl Api {
    fn start() -> Api {
        let log = tempfile::NamedTempFile::new().unwrap();
        let mut child = Command::new("python3")
            .arg("-c")
            .arg(STUB)
            .arg(log.path())
            .stdout(Stdio::piped())
            .spawn()
            .expect("python3 runs the API stub");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line.trim().parse().expect("the stub prints its port");
        Api { child, port, log }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The requests so far, then forgotten.
    fn take(&self) -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(self.log.path()).unwrap();
        std::fs::write(self.log.path(), "").unwrap();
        text.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for Api {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The requests other than GET.
fn writes(requests: &[serde_json::Value]) -> Vec<&serde_json::Value> {
    requests.iter().filter(|r| r["method"] != "GET").collect()
}

/// The `values-edit` case (a replica count and an image tag changed in a values file), its
/// base committed; returns the repository and the base commit.
fn changed_repo() -> (tempfile::TempDir, String) {
    let repo = crate::diff::repository("values-edit");
    let base = crate::support::git_output(repo.path(), &["rev-parse", "HEAD"]);
    (repo, base)
}

fn log_of(o: &std::process::Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// The posting script of `ci/` and its copy in the GitLab component (a component's job sees
/// only the including project's files) stay equal; `BLESS=1` copies the script in.
#[test]
fn gitlab_diff_component_inlines_the_posting_script() {
    let path = project_root().join(GITLAB_DIFF_COMPONENT);
    let text = std::fs::read_to_string(&path).unwrap();
    let open = "<<'PY' || exit 2\n";
    let close = "      PY\n";
    let start = text.find(open).expect("the heredoc") + open.len();
    let end = start + text[start..].find(close).expect("its end");
    let inlined: String = text[start..end]
        .lines()
        .map(|l| format!("{}\n", l.strip_prefix("      ").unwrap_or(l)))
        .collect();
    let script = std::fs::read_to_string(project_root().join(SCRIPT)).unwrap();
    if inlined != script && crate::support::bless() {
        let indented: String = script
            .lines()
            .map(|l| {
                if l.is_empty() {
                    "\n".to_string()
                } else {
                    format!("      {l}\n")
                }
            })
            .collect();
        let blessed = format!("{}{indented}{}", &text[..start], &text[end..]);
        std::fs::write(&path, blessed).unwrap();
        return;
    }
    assert!(
        inlined == script,
        "{GITLAB_DIFF_COMPONENT} holds another version of {SCRIPT} (BLESS=1 copies it)"
    );
}

/// The component's job script, run as a GitLab runner would in a merge-request pipeline:
/// the note is created, then updated in place; the job fails on the `diff/` findings.
#[test]
fn gitlab_diff_component_creates_then_updates_one_note() {
    let component = load(GITLAB_DIFF_COMPONENT);
    for input in [
        "stage",
        "version",
        "args",
        "fail-on",
        "root",
        "token-variable",
    ] {
        assert!(
            component.path(&["spec", "inputs", input]).is_some(),
            "input `{input}`"
        );
    }
    let text = std::fs::read_to_string(project_root().join(GITLAB_DIFF_COMPONENT)).unwrap();
    let default = |name: &str| {
        component
            .path(&["spec", "inputs", name, "default"])
            .and_then(gitops_lint::yaml::Node::scalar_text)
            .map(str::to_string)
    };
    assert_eq!(
        default("version").as_deref(),
        Some(env!("CARGO_PKG_VERSION"))
    );
    assert_eq!(default("token-variable").as_deref(), Some("GITLAB_TOKEN"));
    let jobs = yaml_docs(&text).pop().unwrap();
    let job = jobs
        .get("gitops-lint-diff")
        .expect("a `gitops-lint-diff` job");
    assert_eq!(
        job.get("rules").map(|r| r.items().count()),
        Some(1),
        "merge-request pipelines only"
    );
    let script: String = job
        .get("script")
        .unwrap()
        .items()
        .map(|s| format!("{}\n", s.as_str().unwrap()))
        .collect();
    let script = script.replace("$[[ inputs.args ]]", "");
    assert!(!script.contains("$[["), "{script}");

    let api = Api::start();
    let (repo, base) = changed_repo();
    let v4 = format!("{}/api/v4", api.url());
    let mut env = vec![
        ("GITOPS_LINT_ROOT", "."),
        ("GITOPS_LINT_FAIL_ON", "warning"),
        ("GITOPS_LINT_TOKEN_VARIABLE", "DIFF_NOTE_TOKEN"),
        ("DIFF_NOTE_TOKEN", "glpat-test-token"),
        ("CI_API_V4_URL", v4.as_str()),
        ("CI_PROJECT_ID", "42"),
        ("CI_MERGE_REQUEST_IID", "7"),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", base.as_str()),
    ];
    let notes = "/api/v4/projects/42/merge_requests/7/notes";

    let o = bash(&script, repo.path(), &env);
    let log = log_of(&o);
    assert_eq!(
        o.status.code(),
        Some(1),
        "the diff/ warnings fail it (fail-on warning):\n{log}"
    );
    assert!(log.contains("created 1150"), "{log}");
    let requests = api.take();
    assert!(
        requests
            .iter()
            .any(|r| r["method"] == "GET" && r["path"].as_str().unwrap().contains("page=2")),
        "every page is read: {requests:#?}"
    );
    let posted = writes(&requests);
    assert_eq!(posted.len(), 1, "{posted:#?}");
    assert_eq!(posted[0]["method"], "POST");
    assert_eq!(posted[0]["path"], notes);
    assert_eq!(posted[0]["headers"]["private-token"], "glpat-test-token");
    let body = posted[0]["body"]["body"].as_str().unwrap();
    assert!(body.starts_with(MARKER), "{body}");
    let report = std::fs::read_to_string(repo.path().join("gitops-lint-diff.md")).unwrap();
    assert!(
        body.ends_with(&report) && report.contains("web-prod"),
        "{body}"
    );
    assert!(repo.path().join("gl-code-quality-report.json").is_file());

    // A later pipeline updates the note it wrote.
    let o = bash(&script, repo.path(), &env);
    let log = log_of(&o);
    assert_eq!(o.status.code(), Some(1), "{log}");
    assert!(log.contains("updated 1150"), "{log}");
    let requests = api.take();
    let put = writes(&requests);
    assert_eq!(put.len(), 1, "one update, no new note: {put:#?}");
    assert_eq!(put[0]["method"], "PUT");
    assert_eq!(put[0]["path"], format!("{notes}/1150"));
    assert_eq!(put[0]["headers"]["private-token"], "glpat-test-token");
    assert!(put[0]["body"]["body"].as_str().unwrap().starts_with(MARKER));

    // A token that may not read or write notes: the API's answer and what the token needs.
    env.retain(|(k, _)| *k != "DIFF_NOTE_TOKEN");
    env.push(("DIFF_NOTE_TOKEN", "bad-token"));
    let o = bash(&script, repo.path(), &env);
    let log = log_of(&o);
    assert_eq!(o.status.code(), Some(2), "{log}");
    assert!(
        log.contains("HTTP 403") && log.contains("`api` scope"),
        "{log}"
    );
    assert!(writes(&api.take()).is_empty());

    // Without the token: a clear error, nothing posted.
    env.retain(|(k, _)| *k != "DIFF_NOTE_TOKEN");
    let o = bash(&script, repo.path(), &env);
    let log = log_of(&o);
    assert_eq!(o.status.code(), Some(2), "{log}");
    assert!(log.contains("$DIFF_NOTE_TOKEN is not set"), "{log}");
    assert!(writes(&api.take()).is_empty());
}

fn yaml_docs(text: &str) -> Vec<gitops_lint::yaml::Node> {
    let parsed = gitops_lint::yaml::parse(gitops_lint::source::FileId(0), text);
    assert!(parsed.errors.is_empty(), "{:?}", parsed.errors);
    parsed.docs.into_iter().map(|d| d.root).collect()
}

/// The action's `diff` step on a pull request: one comment, created then updated, with the
/// workflow's token; outside a pull request, nothing is posted.
#[test]
fn github_action_diff_mode_creates_then_updates_one_comment() {
    let action = load("action.yml");
    for input in ["mode", "token"] {
        assert!(action.path(&["inputs", input]).is_some(), "input `{input}`");
    }
    let steps = steps(&action);
    // A mode that is neither `check` nor `diff` stops at once.
    let work = tempfile::tempdir().unwrap();
    let output = work.path().join("output");
    let setup = step(&steps, "setup").get_str("run").unwrap();
    let root = project_root().to_str().unwrap();
    let out = output.to_str().unwrap();
    let mode = |m: &str| {
        bash(
            setup,
            work.path(),
            &[
                ("INPUT_VERSION", ""),
                ("INPUT_MODE", m),
                ("GITHUB_ACTION_PATH", root),
                ("GITHUB_OUTPUT", out),
            ],
        )
    };
    assert_eq!(mode("diff").status.code(), Some(0));
    let o = mode("Diff");
    assert_eq!(o.status.code(), Some(2));
    assert!(log_of(&o).contains("neither `check` nor `diff`"));
    assert_eq!(
        step(&steps, "check").get_str("if"),
        Some("inputs.mode != 'diff'")
    );
    let diff = step(&steps, "diff");
    assert_eq!(diff.get_str("if"), Some("inputs.mode == 'diff'"));
    let script = diff.get_str("run").unwrap();

    let api = Api::start();
    let (repo, base) = changed_repo();
    let temp = tempfile::tempdir().unwrap();
    let summary = temp.path().join("summary.md");
    let args = format!("--base {base}");
    let url = api.url();
    let mut env = vec![
        ("GITOPS_LINT_DIR", "/nonexistent"),
        ("GITHUB_ACTION_PATH", project_root().to_str().unwrap()),
        ("RUNNER_TEMP", temp.path().to_str().unwrap()),
        ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ("INPUT_ARGS", args.as_str()),
        ("INPUT_FAIL_ON", "warning"),
        ("GITOPS_LINT_PR", "5"),
        ("GITHUB_TOKEN", "ghs-test-token"),
        ("GITHUB_API_URL", url.as_str()),
        ("GITHUB_REPOSITORY", "platform/deploy"),
    ];
    let run = |env: &[(&str, &str)]| {
        let o = bash(script, repo.path(), env);
        (o.status.code(), log_of(&o))
    };

    let (code, log) = run(&env);
    assert_eq!(
        code,
        Some(1),
        "the diff/ warnings fail it (fail-on warning):\n{log}"
    );
    let requests = api.take();
    let posted = writes(&requests);
    assert_eq!(posted.len(), 1, "{posted:#?}");
    assert_eq!(posted[0]["method"], "POST");
    assert_eq!(
        posted[0]["path"],
        "/repos/platform/deploy/issues/5/comments"
    );
    assert_eq!(
        posted[0]["headers"]["authorization"],
        "Bearer ghs-test-token"
    );
    assert_eq!(
        posted[0]["headers"]["accept"],
        "application/vnd.github+json"
    );
    let body = posted[0]["body"]["body"].as_str().unwrap();
    assert!(
        body.starts_with(MARKER) && body.contains("web-prod"),
        "{body}"
    );
    let md = std::fs::read_to_string(&summary).unwrap();
    assert!(body.ends_with(&md), "the step summary holds the report");

    let (code, log) = run(&env);
    assert_eq!(code, Some(1), "{log}");
    let requests = api.take();
    let patched = writes(&requests);
    assert_eq!(patched.len(), 1, "one update, no new comment: {patched:#?}");
    assert_eq!(patched[0]["method"], "PATCH");
    assert_eq!(
        patched[0]["path"],
        "/repos/platform/deploy/issues/comments/1150"
    );
    assert_eq!(
        patched[0]["headers"]["authorization"],
        "Bearer ghs-test-token"
    );

    // A push, not a pull request: the report in the log and summary, no comment.
    env.retain(|(k, _)| *k != "GITOPS_LINT_PR");
    let (code, log) = run(&env);
    assert_eq!(code, Some(1), "{log}");
    assert!(log.contains("not a pull request"), "{log}");
    assert!(api.take().is_empty(), "no request");
}

/// The component's job run by gitlab-ci-local in a merge-request pipeline (shell executor,
/// the built binary in place of the wheel): the note is created, then updated.
#[test]
#[ignore = "needs gitlab-ci-local (scripts/test installs it)"]
fn gitlab_diff_component_runs_under_gitlab_ci_local() {
    crate::integrations::require_tool("gitlab-ci-local", "npm install -g gitlab-ci-local@4.73.0");
    let (repo, base) = changed_repo();
    let ci = repo.path().join("pipeline-under-test");
    std::fs::create_dir_all(&ci).unwrap();
    std::fs::copy(
        project_root().join(GITLAB_DIFF_COMPONENT),
        ci.join("template.yml"),
    )
    .unwrap();
    std::fs::write(
        ci.join("pipeline.yml"),
        "stages: [build]\n\ninclude:\n  - local: /pipeline-under-test/template.yml\n    inputs:\n      \
         token-variable: NOTE_TOKEN\n      fail-on: warning\n\nbuild:\n  stage: build\n  script: [echo built]\n",
    )
    .unwrap();
    // gitlab-ci-local reads tracked files only: the change is committed on top of the base.
    crate::support::git(repo.path(), &["add", "."]);
    crate::support::git(repo.path(), &["commit", "-qm", "head"]);
    let api = Api::start();
    let v4 = format!("{}/api/v4", api.url());
    let vars = [
        ("CI_PIPELINE_SOURCE", "merge_request_event"),
        ("CI_MERGE_REQUEST_DIFF_BASE_SHA", base.as_str()),
        ("CI_MERGE_REQUEST_IID", "7"),
        ("CI_PROJECT_ID", "42"),
        ("CI_API_V4_URL", v4.as_str()),
        ("NOTE_TOKEN", "glpat-test-token"),
    ];
    let notes = "/api/v4/projects/42/merge_requests/7/notes";
    for (run, method, path) in [
        (1, "POST", notes.to_string()),
        (2, "PUT", format!("{notes}/1150")),
    ] {
        let (code, log) = crate::integrations::gitlab_ci_local(repo.path(), &vars);
        assert_ne!(
            code,
            Some(0),
            "run {run}: the diff/ warnings fail it:\n{log}"
        );
        assert!(log.contains("diff/mutable-image-tag"), "{log}");
        let requests = api.take();
        let written = writes(&requests);
        assert_eq!(written.len(), 1, "run {run}: {written:#?}\n{log}");
        assert_eq!(written[0]["method"], method);
        assert_eq!(written[0]["path"], path.as_str());
        assert_eq!(written[0]["headers"]["private-token"], "glpat-test-token");
        let body = written[0]["body"]["body"].as_str().unwrap();
        assert!(
            body.starts_with(MARKER) && body.contains("web-prod"),
            "{body}"
        );
    }
}
