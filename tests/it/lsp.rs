//! `gitops-lint server` driven over stdio by a small LSP client (lsp-server's framing), as an
//! editor drives it.

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(60);

struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    incoming: mpsc::Receiver<Message>,
    /// Notifications received while waiting for something else.
    backlog: Vec<Notification>,
    next_id: i32,
}

impl Client {
    fn start(cwd: &Path) -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
            .arg("server")
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, incoming) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let m = match Message::read(&mut r) {
                    Ok(Some(m)) => m,
                    // lsp-server cannot represent a response with `"id": null` (the answer
                    // to a frame that is not JSON): hand it over as text.
                    Err(e) if e.kind() == std::io::ErrorKind::InvalidData => {
                        Notification::new("$/unparsed".into(), e.to_string()).into()
                    }
                    _ => return,
                };
                if tx.send(m).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Client {
            child,
            stdin,
            incoming,
            backlog: Vec::new(),
            next_id: 0,
        }
    }

    fn send(&mut self, m: Message) {
        m.write(self.stdin.as_mut().unwrap()).unwrap();
    }

    fn raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    fn next(&mut self, deadline: Instant) -> Message {
        let left = deadline.saturating_duration_since(Instant::now());
        self.incoming
            .recv_timeout(left)
            .expect("the server answered in time")
    }

    /// Sends a request and returns its response (`Ok(result)` or `Err(error)`).
    fn call(&mut self, method: &str, params: Value) -> Result<Value, Value> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(Request::new(id.clone(), method.into(), params).into());
        let deadline = Instant::now() + WAIT;
        loop {
            match self.next(deadline) {
                Message::Response(r) if r.id == id => {
                    return r
                        .response_result
                        .map_err(|e| serde_json::to_value(e).unwrap());
                }
                Message::Notification(n) => self.backlog.push(n),
                _ => {}
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        self.call(method, params)
            .unwrap_or_else(|e| panic!("{method} failed: {e}"))
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(Notification::new(method.into(), params).into());
    }

    /// Waits for diagnostics of `uri` that satisfy `done`, and returns them. Other files'
    /// notifications stay in the backlog for later calls.
    fn diagnostics(&mut self, uri: &str, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        let deadline = Instant::now() + WAIT;
        let mut seen = Vec::new();
        let mut backlog = std::mem::take(&mut self.backlog).into_iter();
        let mut kept = Vec::new();
        let found = loop {
            let n = match backlog.next() {
                Some(n) => n,
                None => match self
                    .incoming
                    .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                {
                    Ok(Message::Notification(n)) => n,
                    Ok(_) => continue,
                    Err(_) => panic!("no matching diagnostics for {uri}; got {seen:?}"),
                },
            };
            if n.method == "textDocument/publishDiagnostics" && n.params["uri"] == uri {
                let d = n.params["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                if done(&d) {
                    break d;
                }
                seen.push(d);
            } else {
                kept.push(n);
            }
        };
        kept.extend(backlog);
        self.backlog = kept;
        found
    }

    fn initialize(&mut self, root: &Path) {
        self.initialize_with(root, json!({}));
    }

    fn initialize_with(&mut self, root: &Path, capabilities: Value) {
        let result = self.request(
            "initialize",
            json!({"processId": null, "rootUri": uri(root), "capabilities": capabilities}),
        );
        assert_eq!(result["serverInfo"]["name"], "gitops-lint");
        assert_eq!(result["capabilities"]["textDocumentSync"]["change"], 1);
        self.notify("initialized", json!({}));
    }

    fn open(&mut self, path: &Path, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri(path), "languageId": "yaml", "version": 1, "text": text}}),
        );
    }

    fn change(&mut self, path: &Path, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri(path), "version": version}, "contentChanges": [{"text": text}]}),
        );
    }

    /// `shutdown`, `exit`, and the exit status.
    fn stop(mut self) -> i32 {
        assert_eq!(self.request("shutdown", Value::Null), Value::Null);
        self.notify("exit", Value::Null);
        self.wait()
    }

    fn wait(&mut self) -> i32 {
        drop(self.stdin.take());
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn uri(path: &Path) -> String {
    let mut s = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(char::from(b));
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The byte offset of an LSP position (UTF-16 columns).
fn offset(text: &str, pos: &Value) -> usize {
    let line = pos["line"].as_u64().unwrap() as usize;
    let character = pos["character"].as_u64().unwrap() as usize;
    let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
    let mut units = 0;
    for (i, c) in text[start..].char_indices() {
        if units >= character || c == '\n' || c == '\r' {
            return start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

/// The position of byte `at` (UTF-16 columns).
fn position(text: &str, at: usize) -> Value {
    let before = &text[..at];
    let line = before.matches('\n').count();
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    json!({"line": line, "character": before[line_start..].encode_utf16().count()})
}

/// Applies a workspace edit's changes for `uri` to `text`.
fn apply(text: &str, edit: &Value, uri: &str) -> String {
    let mut edits: Vec<(usize, usize, String)> = edit["changes"][uri]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                offset(text, &e["range"]["start"]),
                offset(text, &e["range"]["end"]),
                e["newText"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    edits.sort_by_key(|e| std::cmp::Reverse(e.0));
    let mut out = text.to_string();
    for (s, e, t) in edits {
        out.replace_range(s..e, &t);
    }
    out
}

const APP: &str = "apiVersion: argoproj.io/v1alpha1
kind: Application
metadata:
  name: api-prod
  namespace: argocd
  finalizers:
    - resources-finalizer.argocd.argoproj.io
spec:
  project: shop
  source:
    repoURL: https://git.example.com/platform/gitops.git
    path: apps/api
    targetRevision: v1.0.0
    helm:
      valueFiles:
        - values-prod.yaml
  destination:
    server: https://kubernetes.default.svc
    namespace: api-prod
  syncPolicy:
    automated: {prune: true}
";

const PROJECT: &str = "apiVersion: argoproj.io/v1alpha1
kind: AppProject
metadata:
  name: shop
  namespace: argocd
spec:
  sourceRepos: ['https://git.example.com/platform/gitops.git']
  destinations:
    - server: https://kubernetes.default.svc
      namespace: api-prod
";

fn repository() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(root.join("argocd")).unwrap();
    std::fs::create_dir_all(root.join("apps/api")).unwrap();
    std::fs::write(root.join("argocd/api.yaml"), APP).unwrap();
    std::fs::write(root.join("argocd/project.yaml"), PROJECT).unwrap();
    std::fs::write(
        root.join("apps/api/Chart.yaml"),
        "apiVersion: v2\nname: api\nversion: 0.1.0\n",
    )
    .unwrap();
    std::fs::write(
        root.join("apps/api/values-prod.yaml"),
        "image:\r\n  repository: registry.example.com/api\r\n  tag: v1.2.3\r\n",
    )
    .unwrap();
    dir
}

fn rules(diagnostics: &[Value]) -> Vec<&str> {
    diagnostics
        .iter()
        .map(|d| d["code"].as_str().unwrap_or(""))
        .collect()
}

#[test]
fn diagnostics_fixes_hover_completion_and_definition() {
    let dir = repository();
    let root = dir.path().canonicalize().unwrap();
    let app = root.join("argocd/api.yaml");
    let app_uri = uri(&app);
    let mut c = Client::start(&root);
    c.initialize(&root);

    // A finding, at its exact range, with its docs link.
    c.open(&app, APP);
    let found = c.diagnostics(&app_uri, |d| !d.is_empty());
    assert_eq!(rules(&found), ["argocd/sync-policy"], "{found:?}");
    let d = &found[0];
    let at = APP.find("automated").unwrap();
    assert_eq!(d["range"]["start"], position(APP, at));
    assert_eq!(d["range"]["end"], position(APP, at + "automated".len()));
    assert_eq!(d["severity"], 1);
    assert_eq!(d["source"], "gitops-lint");
    assert!(
        d["codeDescription"]["href"]
            .as_str()
            .unwrap()
            .ends_with("docs/rules/argocd/sync-policy.md")
    );

    // Hover on the finding: the rule's docs; on a field: the schema.
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": app_uri}, "position": position(APP, at + 2)}),
    );
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.contains("**argocd/sync-policy** (error)"), "{text}");
    assert!(text.contains("## What it does"), "{text}");
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": app_uri}, "position": position(APP, APP.find("targetRevision").unwrap() + 3)}),
    );
    let text = hover["contents"]["value"].as_str().unwrap();
    assert!(text.starts_with("**`targetRevision`**: string"), "{text}");

    // Go to definition: the AppProject, the values file.
    let def = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": app_uri}, "position": position(APP, APP.find("shop").unwrap() + 1)}),
    );
    assert_eq!(def["uri"], uri(&root.join("argocd/project.yaml")));
    assert_eq!(
        def["range"]["start"],
        position(PROJECT, PROJECT.find("shop").unwrap())
    );
    let def = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": app_uri}, "position": position(APP, APP.find("values-prod").unwrap())}),
    );
    assert_eq!(def["uri"], uri(&root.join("apps/api/values-prod.yaml")));
    let def = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": app_uri}, "position": position(APP, APP.find("apps/api").unwrap())}),
    );
    assert_eq!(def["uri"], uri(&root.join("apps/api/Chart.yaml")));

    // `$values/...` through the source with `ref: values`.
    let multi = root.join("argocd/multi.yaml");
    let text = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: api-chart\nspec:\n  sources:\n    - repoURL: https://charts.example.com\n      chart: api\n      helm:\n        valueFiles:\n          - $values/apps/api/values-prod.yaml\n    - repoURL: https://git.example.com/platform/gitops.git\n      ref: values\n";
    c.open(&multi, text);
    let def = c.request(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri(&multi)}, "position": position(text, text.find("$values").unwrap() + 3)}),
    );
    assert_eq!(def["uri"], uri(&root.join("apps/api/values-prod.yaml")));

    // Code actions: the fix (preferred), the suppression, fix-all; apply the fix.
    let actions = c.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": app_uri}, "range": d["range"], "context": {"diagnostics": [d]}}),
    );
    let actions = actions.as_array().unwrap();
    let titles: Vec<&str> = actions
        .iter()
        .map(|a| a["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        [
            "argocd/sync-policy: set `prune: true` and `selfHeal: true`",
            "Suppress `argocd/sync-policy` on this line (give a reason)",
            "Fix all safe gitops-lint findings in this file",
        ]
    );
    assert_eq!(actions[0]["isPreferred"], true);
    assert_eq!(actions[0]["kind"], "quickfix");
    let suppressed = apply(APP, &actions[1]["edit"], &app_uri);
    assert!(
        suppressed.contains(
            "    automated: {prune: true} # gitops-lint: disable=argocd/sync-policy -- \n"
        )
    );
    let fixed = apply(APP, &actions[0]["edit"], &app_uri);
    assert!(fixed.contains("automated: {prune: true, selfHeal: true}\n"));
    c.change(&app, 2, &fixed);
    c.diagnostics(&app_uri, <[Value]>::is_empty);

    // A values file deployed by the Application: `tag: none` appears as a finding there, at
    // the right UTF-16 column after non-ASCII text, in a CRLF file.
    let values = root.join("apps/api/values-prod.yaml");
    let values_uri = uri(&values);
    let edited = "image: {repository: \"registry.example.com/é😀\", tag: none}\r\n";
    c.open(&values, &std::fs::read_to_string(&values).unwrap());
    c.change(&values, 2, edited);
    let found = c.diagnostics(&values_uri, |d| !d.is_empty());
    assert_eq!(rules(&found), ["argocd/image-tag-none"], "{found:?}");
    let at = edited.find("none").unwrap();
    assert_eq!(found[0]["range"]["start"], position(edited, at));
    assert_eq!(found[0]["range"]["start"]["character"], 53);
    // Back to a real tag: cleared.
    c.change(&values, 3, "image:\r\n  tag: v2\r\n");
    c.diagnostics(&values_uri, <[Value]>::is_empty);
    // Hover on a values key: who deploys it, with which value, from where.
    let hover = c.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": values_uri}, "position": {"line": 1, "character": 8}}),
    );
    assert_eq!(
        hover["contents"]["value"],
        "`image.tag`, as deployed:\n\n\
         - Application `api-chart`: `v2`, from `apps/api/values-prod.yaml:2`\n\
         - Application `api-prod`: `v2`, from `apps/api/values-prod.yaml:2`"
    );

    // Completion: fields at the cursor's path, rule ids in a directive.
    let new = root.join("argocd/new.yaml");
    let typing =
        "apiVersion: argoproj.io/v1alpha1\nkind: Application\nspec:\n  syncPolicy:\n    sy";
    c.open(&new, typing);
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri(&new)}, "position": position(typing, typing.len())}),
    );
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"syncOptions") && labels.contains(&"automated"),
        "{labels:?}"
    );
    assert!(!labels.contains(&"project"), "{labels:?}");
    let typing = "# gitops-lint: disable=argocd/sy";
    c.change(&new, 2, typing);
    let items = c.request(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri(&new)}, "position": position(typing, typing.len())}),
    );
    let labels: Vec<&str> = items
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["label"].as_str().unwrap())
        .collect();
    assert!(
        labels.contains(&"argocd/sync-policy") && labels.contains(&"argocd/*"),
        "{labels:?}"
    );

    // A Helm template open in the editor is not checked, as the repository walk skips it.
    let template = root.join("apps/api/templates/deployment.yaml");
    std::fs::create_dir_all(template.parent().unwrap()).unwrap();
    std::fs::write(&template, "").unwrap();
    c.open(&template, "image: {{ .Values.image.tag }}\n");
    c.change(&app, 3, APP);
    c.diagnostics(&app_uri, |d| !d.is_empty());
    let template_uri = uri(&template);
    assert!(
        !c.backlog
            .iter()
            .any(|n| n.params["uri"] == template_uri.as_str()),
        "{:?}",
        c.backlog
    );

    assert_eq!(c.stop(), 0);
}

/// A tiny deterministic generator, so a failure reproduces.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

const PIECES: &[&str] = &[
    "apiVersion: argoproj.io/v1alpha1\n",
    "kind: Application\n",
    "kind: AppProject\n",
    "spec:\n",
    "  ",
    "    ",
    "- ",
    "source:",
    " {",
    "}",
    "[",
    "]",
    ": ",
    "\n",
    "\r\n",
    "\r",
    "\u{feff}",
    "é",
    "😀",
    "\t",
    "---\n",
    "&a ",
    "*a",
    "<<: *a\n",
    "'",
    "\"",
    "|\n",
    "# gitops-lint: disable=",
    "argocd/sync-policy",
    "syncPolicy:\n    automated: {}\n",
    "project: x\n",
    "valueFiles:\n",
    "path: .\n",
    "{{",
    "%",
    "!!str ",
    "?",
    ",",
];

#[test]
fn malformed_messages_and_random_documents_never_break_the_server() {
    let dir = repository();
    let root = dir.path().canonicalize().unwrap();
    let mut c = Client::start(&root);

    // Before `initialize`: an error, not a crash.
    let e = c.call("textDocument/hover", json!({})).unwrap_err();
    assert_eq!(e["code"], -32002);
    c.initialize(&root);

    // Not JSON, not JSON-RPC, no header: answered or skipped, and the server goes on.
    c.raw(b"Content-Length: 5\r\n\r\n{oops");
    c.raw(b"Content-Length: 20\r\n\r\n{\"id\": 9, \"x\": true}");
    c.raw(b"X-Nothing: 1\r\n\r\n");
    c.raw(b"Content-Length: 2\r\n\r\n[]");
    let e = c.call("workspace/unknown", json!({})).unwrap_err();
    assert_eq!(e["code"], -32601);
    let answers: Vec<String> = c.backlog.iter().map(|n| n.params.to_string()).collect();
    assert!(answers.iter().any(|a| a.contains("-32700")), "{answers:?}");
    c.backlog.clear();
    let e = c
        .call("textDocument/hover", json!({"nonsense": 1}))
        .unwrap_err();
    assert_eq!(e["code"], -32602);
    let e = c.call("workspace/unknown", json!({})).unwrap_err();
    assert_eq!(e["code"], -32601);
    c.notify("textDocument/didOpen", json!({"textDocument": 5}));
    c.notify("textDocument/didChange", json!(null));
    c.notify("$/unknown", json!([1, 2]));

    // Random documents through the whole loop: every request is answered.
    let path = root.join("argocd/fuzz.yaml");
    let file = uri(&path);
    c.open(&path, "");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    for version in 0..60 {
        let mut text = String::new();
        for _ in 0..rng.below(40) {
            text.push_str(PIECES[rng.below(PIECES.len())]);
        }
        c.change(&path, version, &text);
        let lines = i64::try_from(text.lines().count()).unwrap() + 1;
        let pos = json!({"line": rng.below(lines as usize + 1), "character": rng.below(12)});
        let range = json!({"start": {"line": 0, "character": 0}, "end": pos});
        c.request(
            "textDocument/hover",
            json!({"textDocument": {"uri": file}, "position": pos}),
        );
        c.request(
            "textDocument/completion",
            json!({"textDocument": {"uri": file}, "position": pos}),
        );
        c.request(
            "textDocument/definition",
            json!({"textDocument": {"uri": file}, "position": pos}),
        );
        c.request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": file}, "range": range, "context": {"diagnostics": []}}),
        );
    }
    // Diagnostics still arrive after all that.
    c.change(&path, 100, "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: z}\nspec:\n  project: shop\n  syncPolicy:\n    automated: {}\n");
    c.diagnostics(&file, |d| rules(d).contains(&"argocd/sync-policy"));
    assert_eq!(c.stop(), 0);
}

#[test]
fn exits_when_input_closes_and_after_exit_without_shutdown() {
    let dir = repository();
    let root = dir.path().canonicalize().unwrap();
    let mut c = Client::start(&root);
    c.initialize(&root);
    assert_eq!(c.wait(), 0);

    let mut c = Client::start(&root);
    c.initialize(&root);
    c.notify("exit", Value::Null);
    assert_eq!(c.wait(), 1);
}

/// Neovim's own LSP client (Debian's `neovim`, 0.7 and later) attached to the server, headless:
/// the diagnostics it shows for a file with a finding.
#[test]
#[ignore = "needs nvim (scripts/test installs Debian's neovim)"]
fn neovim_shows_the_diagnostics() {
    let have = Command::new("nvim")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        have,
        "nvim is not installed (apt-get install neovim); scripts/test installs it"
    );
    let dir = repository();
    let root = dir.path().canonicalize().unwrap();
    let out = root.join("nvim-diagnostics.txt");
    let script = root.join("attach.lua");
    std::fs::write(&script, NVIM_SCRIPT).unwrap();
    let status = Command::new("nvim")
        .args(["--headless", "--clean", "-c"])
        .arg(format!("luafile {}", script.display()))
        .env("GITOPS_LINT", env!("CARGO_BIN_EXE_gitops-lint"))
        .env("ROOT", &root)
        .env("OUT", &out)
        .current_dir(&root)
        .status()
        .expect("nvim is installed");
    assert!(status.success());
    let shown = std::fs::read_to_string(&out).unwrap();
    assert_eq!(
        shown,
        "argocd/api.yaml:21:5: ERROR argocd/sync-policy: Application `api-prod` syncs automatically with no `selfHeal`\n"
    );
}

/// Opens a file, attaches the server with `vim.lsp.start_client` (Neovim 0.7 has no
/// `vim.lsp.start`), waits for its diagnostics and writes them as `path:line:col: ...`.
const NVIM_SCRIPT: &str = r#"
local root = os.getenv("ROOT")
vim.cmd("edit " .. root .. "/argocd/api.yaml")
local id = vim.lsp.start_client({
  name = "gitops-lint",
  cmd = { os.getenv("GITOPS_LINT"), "server" },
  root_dir = root,
})
vim.lsp.buf_attach_client(0, id)
vim.wait(60000, function() return #vim.diagnostic.get(0) > 0 end, 50)
local lines = {}
for _, d in ipairs(vim.diagnostic.get(0)) do
  local code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code) or "?"
  local message = vim.split(d.message, "\n")[1]
  table.insert(lines, string.format("argocd/api.yaml:%d:%d: %s %s: %s",
    d.lnum + 1, d.col + 1, vim.diagnostic.severity[d.severity], code, message))
end
vim.fn.writefile(lines, os.getenv("OUT"))
vim.lsp.stop_client(id)
vim.cmd("qa!")
"#;

#[test]
fn configuration_errors_show_in_the_configuration_file_until_fixed() {
    let dir = repository();
    let root = dir.path().canonicalize().unwrap();
    let config = root.join(".gitops-lint.yaml");
    std::fs::write(&config, "rulez: 1\n").unwrap();
    let mut c = Client::start(&root);
    c.initialize_with(
        &root,
        json!({"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": true}}}),
    );
    // The server asks to watch configurations and policies.
    let deadline = Instant::now() + WAIT;
    let register = loop {
        if let Message::Request(r) = c.next(deadline) {
            break r;
        }
    };
    assert_eq!(register.method, "client/registerCapability");
    let watchers = register.params["registrations"][0]["registerOptions"]["watchers"].to_string();
    assert!(
        watchers.contains("**/.gitops-lint.yaml") && watchers.contains("**/*.rego"),
        "{watchers}"
    );
    c.send(lsp_server::Response::new_ok(register.id, Value::Null).into());
    let app = root.join("argocd/api.yaml");
    c.open(&app, APP);
    let found = c.diagnostics(&uri(&config), |d| !d.is_empty());
    assert_eq!(found[0]["range"]["end"], json!({"line": 0, "character": 5}));
    assert!(
        found[0]["message"]
            .as_str()
            .unwrap()
            .contains("unknown configuration key `rulez`")
    );
    // Fixed and saved: cleared, and the check runs again.
    std::fs::write(&config, "rules: {}\n").unwrap();
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri(&config), "type": 2}]}),
    );
    c.diagnostics(&uri(&config), <[Value]>::is_empty);
    c.diagnostics(&uri(&app), |d| !d.is_empty());
    assert_eq!(c.stop(), 0);
}

/// What the server has published, by URI: each diagnostic's line and rule.
type Published = std::collections::BTreeMap<String, Vec<(u64, String)>>;

/// Takes every notification until the server has been quiet for a while, keeping the latest
/// diagnostics of each file; returns the log messages.
fn settle(c: &mut Client, published: &mut Published) -> Vec<String> {
    let mut logs = Vec::new();
    let mut record = |n: &Notification| {
        if n.method == "window/logMessage" {
            logs.push(n.params["message"].as_str().unwrap_or("").to_string());
        }
        if n.method == "textDocument/publishDiagnostics" {
            let mut found: Vec<(u64, String)> = n.params["diagnostics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| {
                    (
                        d["range"]["start"]["line"].as_u64().unwrap(),
                        d["code"].as_str().unwrap_or("").to_string(),
                    )
                })
                .collect();
            found.sort();
            let uri = n.params["uri"].as_str().unwrap().to_string();
            if found.is_empty() {
                published.remove(&uri);
            } else {
                published.insert(uri, found);
            }
        }
    };
    for n in std::mem::take(&mut c.backlog) {
        record(&n);
    }
    while let Ok(m) = c.incoming.recv_timeout(Duration::from_millis(700)) {
        if let Message::Notification(n) = m {
            record(&n);
        }
    }
    logs
}

/// What a fresh `gitops-lint check` of the files on disk reports, as [`Published`].
fn fresh_check(root: &Path) -> Published {
    let out = Command::new(env!("CARGO_BIN_EXE_gitops-lint"))
        .args(["check", ".", "--format", "json", "--fail-on", "never"])
        .current_dir(root)
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut expected = Published::new();
    for d in report["diagnostics"].as_array().unwrap() {
        let file = root.join(d["file"].as_str().unwrap());
        expected.entry(uri(&file)).or_default().push((
            d["range"]["start"]["line"].as_u64().unwrap() - 1,
            d["rule"].as_str().unwrap().to_string(),
        ));
    }
    for found in expected.values_mut() {
        found.sort();
    }
    expected
}

/// Edits through the server (its re-lints reuse the parsed files that did not change) end with
/// what a fresh full check of the same files reports, in every file.
#[test]
fn relints_after_edits_match_a_fresh_check() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let copy = Command::new("cp")
        .arg("-r")
        .arg(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/testdata/examples/cnp-gitops/."
        ))
        .arg(&root)
        .status()
        .unwrap();
    assert!(copy.success());
    let values = root.join("apps/citation-api/values-prod.yaml");
    let app = root.join("argocd/citation-api/prod.yaml");
    let values_text = std::fs::read_to_string(&values).unwrap();
    let app_text = std::fs::read_to_string(&app).unwrap();
    let tag = values_text
        .lines()
        .find(|l| l.trim_start().starts_with("tag:"))
        .unwrap();

    let mut c = Client::start(&root);
    c.initialize(&root);
    let mut published = Published::new();
    c.open(&values, &values_text);
    c.open(&app, &app_text);
    let mut logs = settle(&mut c, &mut published);
    assert_eq!(published, fresh_check(&root), "after opening");

    let has = |p: &Published, file: &Path, rule: &str| {
        p.get(&uri(file))
            .is_some_and(|f| f.iter().any(|(_, r)| r == rule))
    };
    // (file, new text, rule whose presence shows the re-lint ran, expected presence)
    let edits = [
        (
            &values,
            values_text.replace(tag, "  tag: none"),
            "argocd/image-tag-none",
            true,
        ),
        (
            &app,
            app_text.replace("selfHeal: true", "selfHeal: false"),
            "argocd/sync-policy",
            true,
        ),
        (&values, values_text.clone(), "argocd/image-tag-none", false),
        (&app, app_text.clone(), "argocd/sync-policy", false),
    ];
    for (version, (file, text, rule, present)) in edits.iter().enumerate() {
        c.change(file, i32::try_from(version).unwrap() + 2, text);
        let deadline = Instant::now() + WAIT;
        loop {
            logs.extend(settle(&mut c, &mut published));
            if has(&published, file, rule) == *present {
                break;
            }
            assert!(Instant::now() < deadline, "no re-lint after edit {version}");
        }
        // The check reads the disk: give it the buffers' text.
        std::fs::write(file, text).unwrap();
        assert_eq!(published, fresh_check(&root), "after edit {version}");
    }
    // Re-lints after an edit parsed the edited file only.
    let relints = logs.iter().filter(|m| m.contains(": 1 parsed, ")).count();
    assert!(relints >= edits.len(), "{logs:#?}");
    assert_eq!(c.stop(), 0);
}

/// The release workflow's packaging of the VS Code extension, run here
/// (`editors/vscode/package-target` with the built binary): a `.vsix` for one platform holding
/// the extension, its language client and the binary it starts.
#[test]
#[ignore = "needs npm and npx with access to the npm registry (scripts/test runs it)"]
fn vscode_extension_packages_with_vsce() {
    let have = Command::new("npx")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(have, "npx is not installed (Node.js's npm)");
    let dir = tempfile::tempdir().unwrap();
    let ext = dir.path().join("vscode");
    let copy = Command::new("cp")
        .arg("-r")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/editors/vscode"))
        .arg(&ext)
        .status()
        .unwrap();
    assert!(copy.success());
    let out = Command::new(ext.join("package-target"))
        .args(["linux-x64", env!("CARGO_BIN_EXE_gitops-lint"), "9.8.7"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let vsix = ext.join("gitops-lint-linux-x64-9.8.7.vsix");
    let listing = Command::new("python3")
        .args(["-m", "zipfile", "-l"])
        .arg(&vsix)
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&listing.stdout);
    for file in [
        "extension/package.json",
        "extension/extension.js",
        "extension/bin/gitops-lint",
        "extension/node_modules/vscode-languageclient/package.json",
    ] {
        assert!(
            listing.contains(file),
            "{file} missing from the .vsix:\n{listing}"
        );
    }
    assert!(!listing.contains("extension/.gitignore"), "{listing}");
    assert!(!listing.contains("package-target"), "{listing}");
    let manifest = Command::new("python3")
        .args(["-c", "import sys, zipfile; print(zipfile.ZipFile(sys.argv[1]).read('extension.vsixmanifest').decode())"])
        .arg(&vsix)
        .output()
        .unwrap();
    let manifest = String::from_utf8_lossy(&manifest.stdout);
    assert!(
        manifest.contains("TargetPlatform=\"linux-x64\""),
        "{manifest}"
    );
}
