//! What a CI job does to Git repositories: it follows the job's scripts (and GitHub commit
//! actions) through `cd`, `git clone`, `git remote set-url`, `actions/checkout` credentials and
//! variables, and records every commit, push and Commits API call with where it goes and with
//! which credentials. Rules judge the result; nothing here decides what is wrong.

use std::collections::{BTreeMap, HashMap};

use super::shell::{self, Action, Message, Word};
use super::{GithubJob, GithubStep, GitlabJob};
use crate::model::paths;
use crate::source::Span;
use crate::yaml::Node;

/// Where a variable's value was written.
#[derive(Clone, Debug)]
pub enum Var<'a> {
    /// A GitLab `variables:` value.
    Yaml(&'a Node),
    /// A GitHub `env:` value.
    Env(&'a Node),
    /// A shell assignment: its expanded value (None when unknown), the value with unknown
    /// variables kept as `${NAME}` (for URLs), and where it was written.
    Shell {
        value: Option<String>,
        kept: String,
        node: &'a Node,
        word: Word,
    },
}

/// Credentials a push uses.
#[derive(Clone, Debug, PartialEq)]
pub enum Cred {
    /// GitHub's default `GITHUB_TOKEN`: GitHub starts no workflow for its pushes.
    GithubToken,
    /// A personal access token, an app token or an SSH key (what it is, for messages).
    Strong(&'static str),
    /// GitLab's `CI_JOB_TOKEN` (also inside `CI_REPOSITORY_URL`): GitLab refuses its pushes
    /// unless the project allows them.
    JobToken,
    /// No credentials (`persist-credentials: false` and a plain URL).
    None,
}

/// The repository a write goes to.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    This,
    /// Another repository, by URL (credentials removed; `""` when unknown).
    Other(String),
    /// Another GitLab project, by id or path (Commits API).
    Repository(String),
}

/// Where a commit message comes from.
#[derive(Debug)]
pub enum MessageSource<'a> {
    /// `-m` words in a script.
    Shell { node: &'a Node, words: Vec<Word> },
    /// A YAML action input (`commit_message:`).
    Input(&'a Node),
    /// An action's default message.
    Default(&'static str),
    /// Not knowable from the file, and why.
    Unknown(&'static str),
}

/// The branch a push writes.
#[derive(Clone, Debug, PartialEq)]
pub enum Branch {
    /// A branch named in the refspec (`HEAD:main`, `origin main`).
    Named(String),
    /// The branch the job runs for: no refspec, `HEAD`, `$CI_COMMIT_BRANCH`,
    /// `${{ github.ref_name }}`.
    Current,
    /// A refspec the job's variables do not say (what it was written as).
    Unknown(String),
}

/// What a commit is made of, as far as the job's script says.
#[derive(Clone, Debug, Default)]
pub struct CommitMeta {
    /// `user.name` (`git config`, `-c`, `--author`, `GIT_AUTHOR_NAME`), when known.
    pub author_name: Option<String>,
    /// `user.email`, when known.
    pub author_email: Option<String>,
    /// The files it writes, relative to the repository's root, when the script names them
    /// (`git add PATH`); `None` after `-a`, `git add .` or a glob.
    pub files: Option<Vec<String>>,
}

#[derive(Debug)]
pub enum EventKind<'a> {
    Commit {
        message: MessageSource<'a>,
        meta: CommitMeta,
    },
    Push {
        target: Target,
        /// The branch it writes.
        branch: Branch,
        /// `-o ci.skip`.
        ci_skip: bool,
        /// `-o merge_request.create`.
        mr_create: bool,
        cred: Cred,
    },
    /// A commit made through GitLab's Commits API.
    Api {
        target: Target,
        message: MessageSource<'a>,
    },
}

/// Where an event is written.
#[derive(Clone, Copy, Debug)]
pub enum Site<'a> {
    /// A command in a script scalar: the node and the command's range in its text.
    Command(&'a Node, usize, usize),
    /// A YAML node (an action's `uses:` or input).
    Node(Span),
}

#[derive(Debug)]
pub struct Event<'a> {
    pub kind: EventKind<'a>,
    pub site: Site<'a>,
}

/// A job's Git activity, in run order, with the variables as they are after the job.
pub struct GitTrace<'a> {
    pub events: Vec<Event<'a>>,
    /// The job opens a merge or pull request (`glab mr create`, `gh pr create`, ...).
    pub review: bool,
    pub vars: BTreeMap<String, Var<'a>>,
    /// Normalised URLs of this repository.
    this_repo: &'a [String],
    cwd: Option<String>,
    clones: Vec<ClonedRepo>,
    remotes: HashMap<String, String>,
    checkout: Cred,
    /// `git config user.name` / `user.email` set so far.
    identity: HashMap<String, String>,
    /// The files `git add` staged since the last commit (`None`: not known).
    staged: Option<Vec<String>>,
}

struct ClonedRepo {
    dir: String,
    url: String,
    cred: Option<Cred>,
}

const GITHUB_TOKEN_REFS: &[&str] = &["secrets.GITHUB_TOKEN", "github.token", "GITHUB_TOKEN"];

fn is_github_token(s: &str) -> bool {
    GITHUB_TOKEN_REFS.iter().any(|r| s.contains(r))
}

/// The Git activity of a GitLab job. `this_repo`: normalised URLs of this repository
/// ([`paths::normalize_url`]).
#[must_use]
pub fn gitlab<'a>(job: &'a GitlabJob, this_repo: &'a [String]) -> GitTrace<'a> {
    let mut t = GitTrace::new(this_repo);
    for (name, node) in job.variable_values() {
        t.vars.insert(name.to_string(), Var::Yaml(node));
    }
    for s in &job.scripts {
        t.script(s);
    }
    t
}

/// The Git activity of a GitHub job.
#[must_use]
pub fn github<'a>(job: &'a GithubJob, this_repo: &'a [String]) -> GitTrace<'a> {
    let mut t = GitTrace::new(this_repo);
    for step in &job.steps {
        // Each step is a new shell: only its environment carries over.
        t.vars.clear();
        for (k, v) in &step.env {
            t.vars.insert(k.clone(), Var::Env(v));
        }
        if let Some(run) = step.run.as_ref().filter(|r| r.as_scalar().is_some()) {
            // Each step runs in a new shell, in the workspace or its working directory.
            t.cwd.clone_from(&step.working_directory);
            t.script(run);
        } else if step.uses.is_some() {
            t.uses(step);
        }
    }
    t
}

impl<'a> GitTrace<'a> {
    fn new(this_repo: &'a [String]) -> Self {
        GitTrace {
            events: Vec::new(),
            review: false,
            vars: BTreeMap::new(),
            this_repo,
            cwd: None,
            clones: Vec::new(),
            remotes: HashMap::new(),
            checkout: Cred::GithubToken,
            identity: HashMap::new(),
            staged: Some(Vec::new()),
        }
    }

    /// The value of a variable, expanded, when it is known.
    #[must_use]
    pub fn lookup(&self, name: &str) -> Option<String> {
        self.lookup_at(name, 0)
    }

    fn lookup_at(&self, name: &str, depth: usize) -> Option<String> {
        if depth > 8 {
            return None;
        }
        match self.vars.get(name)? {
            Var::Yaml(n) | Var::Env(n) => {
                let raw = n.scalar_text()?;
                let e = shell::expand_text(raw, None, &|v| self.lookup_at(v, depth + 1));
                Some(e.text)
            }
            Var::Shell { value, .. } => value.clone(),
        }
    }

    /// The value of a variable with unknown variables kept as `${NAME}`.
    fn lookup_keep_at(&self, name: &str, depth: usize) -> Option<String> {
        if depth > 8 {
            return None;
        }
        match self.vars.get(name)? {
            Var::Yaml(n) | Var::Env(n) => {
                let raw = n.scalar_text()?;
                Some(shell::expand_text(raw, None, &|v| self.keep(v, depth + 1)).text)
            }
            Var::Shell { kept, .. } => Some(kept.clone()),
        }
    }

    /// A variable's value for [`GitTrace::expand_keep`]: its value, else `${NAME}`.
    fn keep(&self, name: &str, depth: usize) -> Option<String> {
        self.lookup_keep_at(name, depth)
            .or_else(|| (!name.is_empty()).then(|| format!("${{{name}}}")))
    }

    /// A word with the variables known here expanded.
    #[must_use]
    pub fn expand(&self, w: &Word) -> shell::Expanded {
        shell::expand(w, &|n| self.lookup(n))
    }

    /// Expands known variables and keeps unknown ones as `${NAME}`: for URLs and paths,
    /// where `${CI_PROJECT_PATH}` still says which repository it is.
    fn expand_keep(&self, w: &Word) -> String {
        shell::expand(w, &|n| self.keep(n, 0)).text
    }

    fn cd(&self, dir: &str) -> String {
        paths::join_shell_dir(self.cwd.as_deref(), dir)
    }

    fn script(&mut self, node: &'a Node) {
        let Some(text) = node.scalar_text() else {
            return;
        };
        for step in shell::actions(text) {
            let site = Site::Command(node, step.start, step.end);
            let kind = match step.action {
                Action::Assign { name, value } => {
                    let e = self.expand(&value);
                    let known = !e.substitution && !e.text.trim().is_empty();
                    let kept = self.expand_keep(&value);
                    self.vars.insert(
                        name,
                        Var::Shell {
                            value: known.then_some(e.text),
                            kept,
                            node,
                            word: value,
                        },
                    );
                    continue;
                }
                Action::Cd(dir) => {
                    self.cwd = match dir {
                        Some(d) => {
                            let d = self.expand_keep(&d);
                            (d != "-").then(|| self.cd(&d))
                        }
                        None => None,
                    };
                    continue;
                }
                Action::Clone { url, dir } => {
                    let url = self.expand_keep(&url);
                    let dir = match dir {
                        Some(d) => self.cd(&self.expand_keep(&d)),
                        None => url
                            .trim_end_matches('/')
                            .rsplit(['/', ':'])
                            .next()
                            .unwrap_or("")
                            .trim_end_matches(".git")
                            .to_string(),
                    };
                    let dir = if dir.starts_with('/') {
                        dir
                    } else {
                        self.cd(&dir)
                    };
                    let cred = url_cred(&url);
                    self.clones.push(ClonedRepo { dir, url, cred });
                    continue;
                }
                Action::RemoteUrl { name, url } => {
                    let url = self.expand_keep(&url);
                    self.remotes.insert(name, url);
                    continue;
                }
                Action::ReviewRequest => {
                    self.review = true;
                    continue;
                }
                Action::Add { dir, paths } => {
                    self.stage(dir.as_ref(), paths.as_deref());
                    continue;
                }
                Action::Config { key, value } => {
                    let v = self.expand(&value);
                    if v.undefined.is_empty() && !v.substitution {
                        self.identity.insert(key, v.text);
                    } else {
                        self.identity.remove(&key);
                    }
                    continue;
                }
                Action::Commit(c) => {
                    let meta = self.commit_meta(&c);
                    EventKind::Commit {
                        message: message_source(node, c.message),
                        meta,
                    }
                }
                Action::Push(p) => {
                    let dir = p.dir.as_ref().map(|d| self.cd(&self.expand_keep(d)));
                    let (target, cred) = self.push_target(p.target.as_ref(), dir);
                    let branch = self.push_branch(&p.refspecs);
                    EventKind::Push {
                        target,
                        branch,
                        ci_skip: p.ci_skip,
                        mr_create: p.mr_create,
                        cred,
                    }
                }
                Action::ApiCommit { url, message } => EventKind::Api {
                    target: self.api_target(&url),
                    message: message_source(node, message),
                },
            };
            self.events.push(Event { kind, site });
        }
    }

    /// `git add PATH...`: the paths, from the repository's root, staged for the next commit.
    fn stage(&mut self, dir: Option<&Word>, paths: Option<&[Word]>) {
        let Some(paths) = paths else {
            self.staged = None;
            return;
        };
        let base = match dir {
            Some(d) => Some(self.cd(&self.expand_keep(d))),
            None => self.cwd.clone(),
        };
        let base = match base.as_deref().map(root_relative) {
            Some(None) => {
                self.staged = None;
                return;
            }
            Some(b) => b,
            None => None,
        };
        let mut added = Vec::new();
        for p in paths {
            let e = self.expand(p);
            let full = paths::join_shell_dir(base.as_deref(), &e.text);
            match root_relative(&full) {
                Some(f) if e.undefined.is_empty() && !e.substitution && !f.starts_with("..") => {
                    added.push(f);
                }
                _ => {
                    self.staged = None;
                    return;
                }
            }
        }
        if let Some(s) = self.staged.as_mut() {
            s.extend(added);
        }
    }

    /// What the script says about a commit, and the staged files it takes.
    fn commit_meta(&mut self, c: &shell::Commit) -> CommitMeta {
        let mut name = self.identity.get("user.name").cloned();
        let mut email = self.identity.get("user.email").cloned();
        for (var, slot) in [
            ("GIT_AUTHOR_NAME", &mut name),
            ("GIT_AUTHOR_EMAIL", &mut email),
        ] {
            if self.vars.contains_key(var) {
                *slot = self.lookup(var);
            }
        }
        for (key, value) in &c.identity {
            let v = self.expand(value);
            let known = (v.undefined.is_empty() && !v.substitution).then_some(v.text);
            match key.as_str() {
                "user.name" => name = known,
                "user.email" => email = known,
                _ => {
                    // `--author="Name <email>"`.
                    let a = known.as_deref().unwrap_or("");
                    let (n, e) = a.split_once('<').unwrap_or((a, ""));
                    name = known.as_ref().map(|_| n.trim().to_string());
                    email = known
                        .as_ref()
                        .map(|_| e.trim_end_matches('>').trim().to_string());
                }
            }
        }
        let staged = self.staged.replace(Vec::new());
        CommitMeta {
            author_name: name,
            author_email: email,
            files: if c.all { None } else { staged },
        }
    }

    /// The branch a push writes, from its refspecs.
    fn push_branch(&self, refspecs: &[Word]) -> Branch {
        const CURRENT: &[&str] = &[
            "CI_COMMIT_BRANCH",
            "CI_COMMIT_REF_NAME",
            "GITHUB_REF_NAME",
            "GITHUB_HEAD_REF",
            "GITHUB_REF",
            "github.ref_name",
            "github.head_ref",
            "github.ref",
        ];
        let Some(spec) = refspecs.first() else {
            return Branch::Current;
        };
        let raw = spec.text.trim_start_matches('+');
        let dst = raw.rsplit_once(':').map_or(raw, |(_, d)| d);
        let names = variables_named(dst);
        if names.len() == 1 && CURRENT.contains(&names[0]) {
            return Branch::Current;
        }
        let e = shell::expand(
            &spec.slice(spec.text.len() - dst.len()..spec.text.len()),
            &|n| self.lookup(n),
        );
        if !e.undefined.is_empty() || e.substitution || e.text.contains("${{") {
            return Branch::Unknown(dst.to_string());
        }
        let b = e.text.trim_start_matches("refs/heads/");
        if b == "HEAD" || b.is_empty() {
            Branch::Current
        } else {
            Branch::Named(b.to_string())
        }
    }

    /// The project a Commits API URL writes to.
    fn api_target(&self, url: &Word) -> Target {
        let raw = &url.text;
        let url = self.expand_keep(url);
        let this = ["CI_PROJECT_ID", "CI_PROJECT_PATH", ":id"]
            .iter()
            .any(|v| raw.contains(v));
        if this {
            return Target::This;
        }
        // `.../projects/<id>/repository/commits`: name the project.
        let repo = url
            .split("projects/")
            .nth(1)
            .and_then(|r| r.split('/').next())
            .filter(|p| !p.is_empty())
            .map(str::to_string);
        repo.map_or_else(
            || Target::Other(paths::without_credentials(&url)),
            Target::Repository,
        )
    }

    /// Where a push goes and with which credentials.
    fn push_target(&self, target: Option<&Word>, dir: Option<String>) -> (Target, Cred) {
        let here = dir.or_else(|| self.cwd.clone());
        let clone = here.as_deref().and_then(|d| {
            let d = clean_dir(d);
            self.clones.iter().rev().find(|c| {
                let c = clean_dir(&c.dir);
                !c.is_empty()
                    && (d == c || d.starts_with(&format!("{c}/")) || d.ends_with(&format!("/{c}")))
            })
        });
        let name = match target {
            Some(t) => {
                let x = self.expand_keep(t);
                if looks_like_url(&x) || looks_like_url(&t.text) || names_this_repository(&x) {
                    let raw = &t.text;
                    let cred = url_cred(&x).unwrap_or_else(|| self.checkout.clone());
                    return (self.classify(raw, &x), cred);
                }
                x
            }
            None => "origin".to_string(),
        };
        if let Some(url) = self.remotes.get(&name) {
            let cred = url_cred(url).unwrap_or_else(|| self.checkout.clone());
            return (self.classify(url, url), cred);
        }
        if let Some(c) = clone {
            let cred = c.cred.clone().unwrap_or(Cred::GithubToken);
            return (self.classify(&c.url, &c.url), cred);
        }
        (Target::This, self.checkout.clone())
    }

    fn classify(&self, raw: &str, expanded: &str) -> Target {
        if names_this_repository(raw) || names_this_repository(expanded) {
            return Target::This;
        }
        let n = paths::normalize_url(expanded);
        if !n.is_empty() && self.this_repo.contains(&n) {
            return Target::This;
        }
        Target::Other(paths::without_credentials(expanded))
    }

    /// A `uses:` step: `actions/checkout` sets credentials; commit actions commit and push.
    fn uses(&mut self, step: &'a GithubStep) {
        let Some(action) = step.action() else { return };
        if action == "actions/checkout" {
            self.checkout_step(step);
            return;
        }
        let (input, default) = match action.as_str() {
            "stefanzweifel/git-auto-commit-action" => ("commit_message", "Apply automatic changes"),
            "endbug/add-and-commit" => ("message", "Commit from GitHub Actions"),
            a if a.contains("pull-request") || a.ends_with("-pr") => {
                // peter-evans/create-pull-request and friends open a pull request.
                return;
            }
            _ => {
                // Other commit-and-push actions with the same inputs.
                if step.input("commit_message").is_some() {
                    ("commit_message", "")
                } else if step.input("commit-message").is_some() {
                    ("commit-message", "")
                } else {
                    return;
                }
            }
        };
        let no_push = step.input("push").and_then(Node::as_bool) == Some(false)
            || step.input("skip_push").and_then(Node::as_bool) == Some(true);
        if no_push {
            return;
        }
        let src = match step
            .input(input)
            .filter(|n| n.as_scalar().is_some() && !n.is_null())
        {
            Some(n) => MessageSource::Input(n),
            None if !default.is_empty() => MessageSource::Default(default),
            None => MessageSource::Unknown("the action's default message is not known"),
        };
        let at = step.uses.as_ref().map_or(step.span, |n| n.span);
        let commit_at = match &src {
            MessageSource::Input(n) => n.span,
            _ => at,
        };
        let branch = step
            .input("branch")
            .and_then(Node::as_str)
            .filter(|b| !b.is_empty())
            .map_or(Branch::Current, |b| {
                if b.contains("${{") {
                    Branch::Unknown(b.to_string())
                } else {
                    Branch::Named(b.to_string())
                }
            });
        let files = step
            .input("file_pattern")
            .or_else(|| step.input("add"))
            .and_then(Node::as_str)
            .filter(|p| !p.contains(['*', '?', '[', ' ']) && *p != "." && !p.contains("${{"))
            .map(|p| vec![p.trim_start_matches("./").to_string()]);
        self.events.push(Event {
            kind: EventKind::Commit {
                message: src,
                meta: CommitMeta {
                    files,
                    ..CommitMeta::default()
                },
            },
            site: Site::Node(commit_at),
        });
        self.events.push(Event {
            kind: EventKind::Push {
                target: Target::This,
                branch,
                ci_skip: false,
                mr_create: false,
                cred: self.checkout.clone(),
            },
            site: Site::Node(at),
        });
    }

    /// `actions/checkout`: the credentials later pushes use, or a clone of another repository.
    fn checkout_step(&mut self, step: &GithubStep) {
        let cred = if let Some(t) = step.input("token").and_then(Node::scalar_text) {
            if is_github_token(t) {
                Cred::GithubToken
            } else {
                Cred::Strong("a token given to `actions/checkout`")
            }
        } else if step.input("ssh-key").is_some_and(|n| !n.is_null()) {
            Cred::Strong("an SSH key given to `actions/checkout`")
        } else if step.input("persist-credentials").and_then(Node::as_bool) == Some(false) {
            Cred::None
        } else {
            Cred::GithubToken
        };
        let repo = step.input("repository").and_then(Node::as_str);
        let other = repo.is_some_and(|r| !r.contains("github.repository"));
        match (other, step.input("path").and_then(Node::as_str)) {
            (true, Some(path)) => self.clones.push(ClonedRepo {
                dir: path.to_string(),
                url: format!("github.com/{}", repo.unwrap_or("")),
                cred: Some(cred),
            }),
            _ => self.checkout = cred,
        }
    }
}

fn message_source(node: &Node, message: Message) -> MessageSource<'_> {
    match message {
        Message::Words(words) => MessageSource::Shell { node, words },
        Message::Unknown(r) => MessageSource::Unknown(r),
    }
}

fn looks_like_url(s: &str) -> bool {
    s.contains("://") || s.contains('@') || s.contains('/') || s.ends_with(".git")
}

/// The variables (`$NAME`, `${NAME}`) and GitHub expressions (`${{ github.x }}`) a text
/// names, in order.
fn variables_named(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = text.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if text[i..].starts_with("${{") {
            let end = text[i..].find("}}").map_or(text.len(), |e| i + e);
            out.push(text[i + 3..end].trim());
            i = end;
            continue;
        }
        if b[i] == b'$' {
            let start = i + 1 + usize::from(b.get(i + 1) == Some(&b'{'));
            let mut j = start;
            while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                j += 1;
            }
            if j > start {
                out.push(&text[start..j]);
            }
            i = j.max(i + 1);
            continue;
        }
        i += 1;
    }
    out
}

/// Whether a URL is built from the CI's own name for this repository: GitLab's
/// `CI_PROJECT_PATH` (with `CI_SERVER_HOST` or any host), `CI_PROJECT_URL`,
/// `CI_REPOSITORY_URL`, `CI_PROJECT_NAMESPACE` with `CI_PROJECT_NAME`, GitHub's
/// `github.repository` and `GITHUB_REPOSITORY`.
fn names_this_repository(text: &str) -> bool {
    let vars = variables_named(text);
    let has = |n: &str| vars.contains(&n);
    has("CI_PROJECT_PATH")
        || has("CI_PROJECT_URL")
        || has("CI_REPOSITORY_URL")
        || has("GITHUB_REPOSITORY")
        || has("github.repository")
        || (has("CI_PROJECT_NAMESPACE") && has("CI_PROJECT_NAME"))
}

/// Credentials carried by a remote URL, if any.
fn url_cred(url: &str) -> Option<Cred> {
    if url.starts_with("git@") || url.starts_with("ssh://") {
        return Some(Cred::Strong("an SSH key"));
    }
    // `CI_REPOSITORY_URL` is `https://gitlab-ci-token:$CI_JOB_TOKEN@host/path.git`.
    if variables_named(url).contains(&"CI_REPOSITORY_URL") {
        return Some(Cred::JobToken);
    }
    let after = url.split_once("://").map_or(url, |(_, r)| r);
    let host_part = after.split('/').next().unwrap_or("");
    let (user, _) = host_part.rsplit_once('@')?;
    if variables_named(user).contains(&"CI_JOB_TOKEN") {
        return Some(Cred::JobToken);
    }
    if is_github_token(user) {
        Some(Cred::GithubToken)
    } else {
        Some(Cred::Strong("a token in the remote URL"))
    }
}

/// A path from the workspace's root: `${CI_PROJECT_DIR}/x` and `${GITHUB_WORKSPACE}/x` are
/// `x`; another absolute path or one from a variable is not known.
fn root_relative(p: &str) -> Option<String> {
    let p = p.trim_start_matches("./");
    for root in [
        "${CI_PROJECT_DIR}",
        "${GITHUB_WORKSPACE}",
        "${{ github.workspace }}",
    ] {
        if let Some(rest) = p.strip_prefix(root) {
            return Some(rest.trim_start_matches('/').to_string());
        }
    }
    (!p.starts_with('/') && !p.contains('$')).then(|| p.to_string())
}

fn clean_dir(d: &str) -> String {
    d.trim_start_matches("./").trim_end_matches('/').to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_repository_is_named_by_exact_variables() {
        assert!(names_this_repository(
            "https://oauth2:${T}@${CI_SERVER_HOST}/${CI_PROJECT_PATH}.git"
        ));
        assert!(names_this_repository(
            "$CI_PROJECT_NAMESPACE/$CI_PROJECT_NAME"
        ));
        assert!(names_this_repository("github.com/${{ github.repository }}"));
        assert!(!names_this_repository(
            "https://h/g/${CI_PROJECT_PATH_SLUG}-gitops.git"
        ));
        assert!(!names_this_repository(
            "https://h/${CI_PROJECT_NAMESPACE}/gitops.git"
        ));
        assert_eq!(
            url_cred("https://gitlab-ci-token:${CI_JOB_TOKEN}@h/p.git"),
            Some(Cred::JobToken)
        );
        assert_eq!(url_cred("${CI_REPOSITORY_URL}"), Some(Cred::JobToken));
    }

    #[test]
    fn commits_carry_author_files_and_branch() {
        let repo = crate::model::Repository::in_memory(&[(
            ".gitlab-ci.yml",
            "j:\n  variables: {BRANCH: develop}\n  script:\n    - git config --global user.name bot\n    - git config user.email bot@x\n    - cd k8s/base && git add kustomization.yaml ../app.yaml\n    - git commit -m bump && git push origin HEAD:$BRANCH\n    - git -c user.name=other commit -am two && git push\n    - git add . && git commit -m three && git push origin HEAD:refs/heads/$UNSET\n",
        )]);
        let p = &crate::model::ci::gitlab::pipelines(&repo, &[])[0];
        let this = Vec::new();
        let t = gitlab(&p.jobs[0], &this);
        let metas: Vec<&CommitMeta> = t
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Commit { meta, .. } => Some(meta),
                _ => None,
            })
            .collect();
        let branches: Vec<&Branch> = t
            .events
            .iter()
            .filter_map(|e| match &e.kind {
                EventKind::Push { branch, .. } => Some(branch),
                _ => None,
            })
            .collect();
        assert_eq!(metas[0].author_name.as_deref(), Some("bot"));
        assert_eq!(metas[0].author_email.as_deref(), Some("bot@x"));
        assert_eq!(
            metas[0].files.as_deref(),
            Some(
                &[
                    "k8s/base/kustomization.yaml".to_string(),
                    "k8s/app.yaml".to_string()
                ][..]
            )
        );
        assert_eq!(metas[1].author_name.as_deref(), Some("other"));
        assert_eq!(metas[1].files, None);
        assert_eq!(metas[2].files, None);
        assert_eq!(branches[0], &Branch::Named("develop".into()));
        assert_eq!(branches[1], &Branch::Current);
        assert!(matches!(branches[2], Branch::Unknown(_)));
    }
}
