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
    /// A shell assignment: its expanded value (None when unknown) and where it was written.
    Shell {
        value: Option<String>,
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

#[derive(Debug)]
pub enum EventKind<'a> {
    Commit(MessageSource<'a>),
    Push {
        target: Target,
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

    /// A word with the variables known here expanded.
    #[must_use]
    pub fn expand(&self, w: &Word) -> shell::Expanded {
        shell::expand(w, &|n| self.lookup(n))
    }

    /// Expands known variables and keeps unknown ones as `${NAME}`: for URLs and paths,
    /// where `${CI_PROJECT_PATH}` still says which repository it is.
    fn expand_keep(&self, w: &Word) -> String {
        shell::expand(w, &|n| {
            self.lookup(n)
                .or_else(|| (!n.is_empty()).then(|| format!("${{{n}}}")))
        })
        .text
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
                    self.vars.insert(
                        name,
                        Var::Shell {
                            value: known.then_some(e.text),
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
                Action::Commit(c) => EventKind::Commit(message_source(node, c.message)),
                Action::Push(p) => {
                    let dir = p.dir.as_ref().map(|d| self.cd(&self.expand_keep(d)));
                    let (target, cred) = self.push_target(p.target.as_ref(), dir);
                    EventKind::Push {
                        target,
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
                if looks_like_url(&x) || looks_like_url(&t.text) {
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
        const THIS: &[&str] = &[
            "CI_PROJECT_PATH",
            "CI_REPOSITORY_URL",
            "CI_PROJECT_URL",
            "GITHUB_REPOSITORY",
            "github.repository",
        ];
        if THIS.iter().any(|t| raw.contains(t) || expanded.contains(t)) {
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
        self.events.push(Event {
            kind: EventKind::Commit(src),
            site: Site::Node(commit_at),
        });
        self.events.push(Event {
            kind: EventKind::Push {
                target: Target::This,
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

/// Credentials carried by a remote URL, if any.
fn url_cred(url: &str) -> Option<Cred> {
    if url.starts_with("git@") || url.starts_with("ssh://") {
        return Some(Cred::Strong("an SSH key"));
    }
    let after = url.split_once("://").map_or(url, |(_, r)| r);
    let host_part = after.split('/').next().unwrap_or("");
    let (user, _) = host_part.rsplit_once('@')?;
    if is_github_token(user) {
        Some(Cred::GithubToken)
    } else {
        Some(Cred::Strong("a token in the remote URL"))
    }
}

fn clean_dir(d: &str) -> String {
    d.trim_start_matches("./").trim_end_matches('/').to_string()
}
