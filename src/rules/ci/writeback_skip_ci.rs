//! `ci/writeback-skip-ci`: a CI job that commits back to a repository must not start CI again.

use std::collections::{BTreeMap, HashMap, HashSet};

use crate::rule::OptionKind;
use crate::diagnostic::{Finding, Severity};
use crate::fix::{Edit, Fix};
use crate::model::ci::{self, GithubStep, GitlabConfig};
use crate::model::shell::{self, Action, Message, Word};
use crate::model::{DocKind, Document};
use crate::model::Project;
use crate::rules::{Context, FixAvailability, Rule, RuleMeta, RuleOption};
use crate::source::{FileId, Span};
use crate::yaml::{self, Node, ScalarStyle, locate};

pub struct WritebackSkipCi;

const ID: &str = "ci/writeback-skip-ci";

static META: RuleMeta = RuleMeta {
    id: ID,
    summary: "a CI job that commits back to a repository must mark its commits `[skip ci]`",
    default_severity: Severity::Error,
    fix: FixAvailability::Sometimes,
    applies_to: &[DocKind::GitlabCi, DocKind::GithubWorkflow],
    options: &[RuleOption {
        name: "require_skip_ci",
        kind: OptionKind::String,
        doc: "`auto` (default) skips GitHub pushes made with the default `GITHUB_TOKEN`, which start no workflow; `always` reports them too",
    }],
    docs: include_str!("writeback_skip_ci.md"),
};

const SKIP: &str = " [skip ci]";

impl Rule for WritebackSkipCi {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check(&self, doc: &Document, cx: &Context<'_>) -> Vec<Finding> {
        // Each file is analysed once, from its first document.
        if cx
            .project
            .file_docs(doc.file)
            .first()
            .is_some_and(|d| d.index != doc.index)
        {
            return Vec::new();
        }
        let always = cx.options(ID)
            .get("require_skip_ci")
            .and_then(serde_json::Value::as_str)
            == Some("always");
        let env = Env {
            project: cx.project,
            repo_urls: cx.settings.repo_urls
                .iter()
                .map(|u| normalize_url(u))
                .collect(),
            always,
        };
        match doc.kind {
            DocKind::GitlabCi => gitlab(&env, doc),
            DocKind::GithubWorkflow => github(&env, doc),
            _ => Vec::new(),
        }
    }
}

struct Env<'p> {
    project: &'p Project,
    repo_urls: Vec<String>,
    always: bool,
}

impl Env<'_> {
    fn text(&self, file: FileId) -> &str {
        &self.project.source(file).text
    }
}

// ---------------------------------------------------------------------------------------------
// Collecting the pipeline files.

fn gitlab<'p>(env: &Env<'p>, doc: &'p Document) -> Vec<Finding> {
    let project = env.project;
    // A file included by another GitLab CI file is analysed as part of that one.
    let included_elsewhere = project.docs_of(DocKind::GitlabCi).any(|d| {
        d.file != doc.file
            && ci::gitlab_local_includes(&d.root)
                .iter()
                .any(|inc| resolve_include(project, inc).contains(&doc.file))
    });
    if included_elsewhere {
        return Vec::new();
    }
    let mut files = Vec::new();
    let mut seen = HashSet::new();
    collect_files(project, doc.file, &mut files, &mut seen, 0);
    let mut layers = Vec::new();
    for f in files.iter().rev() {
        for d in project.file_docs(*f) {
            if d.root.as_map().is_some() {
                layers.push(&d.root);
            }
        }
    }
    let config = GitlabConfig::new(layers, files);
    let mut out = Vec::new();
    for job in config.jobs() {
        let mut a = Analysis::new(env, false, &job.name, job.key);
        for (name, node) in &job.variables {
            if let Some(v) = ci::variable_value(node) {
                a.vars.insert(name.clone(), Var::Yaml(v));
            }
        }
        for s in &job.scripts {
            a.script(s);
        }
        out.extend(a.findings());
    }
    out
}

fn collect_files(
    project: &Project,
    file: FileId,
    files: &mut Vec<FileId>,
    seen: &mut HashSet<FileId>,
    depth: usize,
) {
    if depth > 12 || !seen.insert(file) {
        return;
    }
    files.push(file);
    let includes: Vec<String> = project
        .file_docs(file)
        .iter()
        .flat_map(|d| ci::gitlab_local_includes(&d.root))
        .collect();
    for inc in includes {
        for f in resolve_include(project, &inc) {
            collect_files(project, f, files, seen, depth + 1);
        }
    }
}

/// Files matching a local include: a repository-relative path, or a glob with `*`.
fn resolve_include(project: &Project, path: &str) -> Vec<FileId> {
    if !path.contains('*') {
        return project
            .file_by_path(path)
            .map(|f| f.id)
            .into_iter()
            .collect();
    }
    let Ok(glob) = globset::GlobBuilder::new(path)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
    else {
        return Vec::new();
    };
    project
        .sources
        .files()
        .iter()
        .filter(|f| glob.is_match(&f.path))
        .map(|f| f.id)
        .collect()
}

fn github<'p>(env: &Env<'p>, doc: &'p Document) -> Vec<Finding> {
    let mut out = Vec::new();
    for job in ci::github_jobs(&doc.root) {
        let mut a = Analysis::new(env, true, &job.name, job.key);
        for step in &job.steps {
            // Each step is a new shell: only its environment carries over.
            a.vars.clear();
            for (k, v) in &step.env {
                a.vars.insert(k.clone(), Var::Env(v));
            }
            if let Some(run) = step.run.filter(|r| r.as_scalar().is_some()) {
                // Each step runs in a new shell, in the workspace or its working directory.
                a.cwd = step.working_directory.map(str::to_string);
                a.script(run);
            } else if step.uses.is_some() {
                a.uses(step);
            }
        }
        out.extend(a.findings());
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Following a job's scripts.

#[derive(Clone)]
enum Var<'a> {
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

/// Credentials a GitHub push uses.
#[derive(Clone, Debug, PartialEq)]
enum Cred {
    /// The default `GITHUB_TOKEN`: GitHub starts no workflow for its pushes.
    GithubToken,
    /// A personal access token, an app token or an SSH key: pushes start workflows.
    Strong(&'static str),
    /// No credentials (`persist-credentials: false` and a plain URL).
    None,
}

#[derive(Clone, Debug, PartialEq)]
enum Target {
    This,
    /// Another repository, by URL.
    Other(String),
    /// Another GitLab project, by id or path (Commits API).
    Project(String),
}

struct ClonedRepo {
    dir: String,
    url: String,
    cred: Option<Cred>,
}

/// Where a commit message comes from.
enum MsgSrc<'a> {
    /// `-m` words in a script.
    Shell {
        node: &'a Node,
        words: Vec<Word>,
    },
    /// A YAML action input (`commit_message:`).
    Input(&'a Node),
    /// An action's default message.
    Default(&'static str),
    Unknown(&'static str),
}

enum Kind<'a> {
    Commit(MsgSrc<'a>),
    Push {
        target: Target,
        ci_skip: bool,
        mr_create: bool,
        cred: Cred,
    },
    Api {
        target: Target,
        message: MsgSrc<'a>,
    },
}

struct Event<'a> {
    kind: Kind<'a>,
    /// The YAML node holding the command (a script scalar or an action step).
    node: &'a Node,
    /// Range of the command in the node's text, when it is a script.
    range: Option<(usize, usize)>,
}

struct Analysis<'e, 'a> {
    env: &'e Env<'a>,
    github: bool,
    job: String,
    job_key: &'a Node,
    vars: BTreeMap<String, Var<'a>>,
    cwd: Option<String>,
    clones: Vec<ClonedRepo>,
    remotes: HashMap<String, String>,
    checkout: Cred,
    review: bool,
    events: Vec<Event<'a>>,
}

const GITHUB_TOKEN_REFS: &[&str] = &["secrets.GITHUB_TOKEN", "github.token", "GITHUB_TOKEN"];

fn is_github_token(s: &str) -> bool {
    GITHUB_TOKEN_REFS.iter().any(|r| s.contains(r))
}

impl<'e, 'a> Analysis<'e, 'a> {
    fn new(env: &'e Env<'a>, github: bool, job: &str, job_key: &'a Node) -> Self {
        Analysis {
            env,
            github,
            job: job.to_string(),
            job_key,
            vars: BTreeMap::new(),
            cwd: None,
            clones: Vec::new(),
            remotes: HashMap::new(),
            checkout: Cred::GithubToken,
            review: false,
            events: Vec::new(),
        }
    }

    fn lookup(&self, name: &str, depth: usize) -> Option<String> {
        if depth > 8 {
            return None;
        }
        match self.vars.get(name)? {
            Var::Yaml(n) | Var::Env(n) => {
                let raw = n.scalar_text()?;
                let e = shell::expand_text(raw, None, &|v| self.lookup(v, depth + 1));
                Some(e.text)
            }
            Var::Shell { value, .. } => value.clone(),
        }
    }

    fn expand(&self, w: &Word) -> shell::Expanded {
        shell::expand(w, &|n| self.lookup(n, 0))
    }

    /// Expands known variables and keeps unknown ones as `${NAME}`: for URLs and paths,
    /// where `${CI_PROJECT_PATH}` still says which repository it is.
    fn expand_keep(&self, w: &Word) -> String {
        shell::expand(w, &|n| {
            self.lookup(n, 0)
                .or_else(|| (!n.is_empty()).then(|| format!("${{{n}}}")))
        })
        .text
    }

    fn script(&mut self, node: &'a Node) {
        let Some(text) = node.scalar_text() else {
            return;
        };
        for step in shell::actions(text) {
            let range = Some((step.start, step.end));
            match step.action {
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
                }
                Action::Cd(dir) => {
                    self.cwd = match dir {
                        Some(d) => {
                            let d = self.expand_keep(&d);
                            (d != "-").then(|| join_dir(self.cwd.as_deref(), &d))
                        }
                        None => None,
                    };
                }
                Action::Clone { url, dir } => {
                    let url = self.expand_keep(&url);
                    let dir = match dir {
                        Some(d) => join_dir(self.cwd.as_deref(), &self.expand_keep(&d)),
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
                        join_dir(self.cwd.as_deref(), &dir)
                    };
                    let cred = url_cred(&url);
                    self.clones.push(ClonedRepo { dir, url, cred });
                }
                Action::RemoteUrl { name, url } => {
                    let url = self.expand_keep(&url);
                    self.remotes.insert(name, url);
                }
                Action::Commit(c) => {
                    let src = match c.message {
                        Message::Words(words) => MsgSrc::Shell { node, words },
                        Message::Unknown(r) => MsgSrc::Unknown(r),
                    };
                    self.events.push(Event {
                        kind: Kind::Commit(src),
                        node,
                        range,
                    });
                }
                Action::Push(p) => {
                    let dir = p
                        .dir
                        .as_ref()
                        .map(|d| join_dir(self.cwd.as_deref(), &self.expand_keep(d)));
                    let (target, cred) = self.push_target(p.target.as_ref(), dir);
                    self.events.push(Event {
                        kind: Kind::Push {
                            target,
                            ci_skip: p.ci_skip,
                            mr_create: p.mr_create,
                            cred,
                        },
                        node,
                        range,
                    });
                }
                Action::ReviewRequest => self.review = true,
                Action::ApiCommit { url, message } => {
                    let raw = url.text.clone();
                    let url = self.expand_keep(&url);
                    let this = ["CI_PROJECT_ID", "CI_PROJECT_PATH", ":id"]
                        .iter()
                        .any(|v| raw.contains(v));
                    let target = if this {
                        Target::This
                    } else {
                        // `.../projects/<id>/repository/commits`: name the project.
                        let project = url
                            .split("projects/")
                            .nth(1)
                            .and_then(|r| r.split('/').next())
                            .filter(|p| !p.is_empty())
                            .map(str::to_string);
                        project.map_or_else(|| Target::Other(display_url(&url)), Target::Project)
                    };
                    let message = match message {
                        Message::Words(words) => MsgSrc::Shell { node, words },
                        Message::Unknown(r) => MsgSrc::Unknown(r),
                    };
                    self.events.push(Event {
                        kind: Kind::Api { target, message },
                        node,
                        range,
                    });
                }
            }
        }
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
        let n = normalize_url(expanded);
        if !n.is_empty() && self.env.repo_urls.contains(&n) {
            return Target::This;
        }
        Target::Other(display_url(expanded))
    }

    /// A `uses:` step: `actions/checkout` sets credentials; commit actions commit and push.
    fn uses(&mut self, step: &GithubStep<'a>) {
        let Some(action) = step.action() else { return };
        if action == "actions/checkout" {
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
        let no_push = ["push", "skip_push"].iter().any(|k| {
            let v = step.input(k).and_then(Node::as_bool);
            (*k == "push" && v == Some(false)) || (*k == "skip_push" && v == Some(true))
        });
        if no_push {
            return;
        }
        let src = match step
            .input(input)
            .filter(|n| n.as_scalar().is_some() && !n.is_null())
        {
            Some(n) => MsgSrc::Input(n),
            None if !default.is_empty() => MsgSrc::Default(default),
            None => MsgSrc::Unknown("the action's default message is not known"),
        };
        let node = step.uses.unwrap_or(step.node);
        let at = match &src {
            MsgSrc::Input(n) => n,
            _ => node,
        };
        self.events.push(Event {
            kind: Kind::Commit(src),
            node: at,
            range: None,
        });
        self.events.push(Event {
            kind: Kind::Push {
                target: Target::This,
                ci_skip: false,
                mr_create: false,
                cred: self.checkout.clone(),
            },
            node,
            range: None,
        });
    }

    // -----------------------------------------------------------------------------------------
    // Judging.

    fn findings(&self) -> Vec<Finding> {
        let mut out = Vec::new();
        let mut seen_commit = false;
        for (i, ev) in self.events.iter().enumerate() {
            let (src, target, push) = match &ev.kind {
                Kind::Commit(src) => {
                    let Some(push) = self.events[i + 1..]
                        .iter()
                        .find(|e| matches!(e.kind, Kind::Push { .. }))
                    else {
                        continue;
                    };
                    let Kind::Push {
                        target,
                        ci_skip,
                        mr_create,
                        cred,
                    } = &push.kind
                    else {
                        continue;
                    };
                    if self.review || *mr_create || (*ci_skip && !self.github) {
                        continue;
                    }
                    if self.github
                        && !(matches!(cred, Cred::Strong(_))
                            || (self.env.always && *cred == Cred::GithubToken))
                    {
                        continue;
                    }
                    (src, target, Some(push))
                }
                Kind::Api { target, message } if !self.github => (message, target, None),
                _ => continue,
            };
            let verdict = self.judge(src);
            if let Verdict::Unknown(r) = &verdict
                && r.starts_with("`--amend --no-edit`")
                && seen_commit
            {
                continue;
            }
            seen_commit = true;
            if let Some(f) = self.finding(ev, src, target, push, &verdict) {
                out.push(f);
            }
        }
        out
    }

    fn message_text(&self, src: &MsgSrc<'_>) -> Result<(String, Vec<String>, bool), &'static str> {
        match src {
            MsgSrc::Shell { words, .. } => {
                let mut text = String::new();
                let mut undefined = Vec::new();
                let mut subst = false;
                for w in words {
                    let e = self.expand(w);
                    if !text.is_empty() {
                        text.push_str("\n\n");
                    }
                    text.push_str(&e.text);
                    undefined.extend(e.undefined);
                    subst |= e.substitution;
                }
                Ok((text, undefined, subst))
            }
            MsgSrc::Input(n) => {
                let raw = n.scalar_text().unwrap_or("");
                Ok((raw.to_string(), Vec::new(), false))
            }
            MsgSrc::Default(d) => Ok(((*d).to_string(), Vec::new(), false)),
            MsgSrc::Unknown(r) => Err(r),
        }
    }

    fn judge(&self, src: &MsgSrc<'_>) -> Verdict {
        let (text, mut undefined, subst) = match self.message_text(src) {
            Ok(x) => x,
            Err(r) => return Verdict::Unknown(r.to_string()),
        };
        // GitHub expressions (`${{ inputs.message }}`) are unknown text.
        let mut known = String::new();
        let mut rest = text.as_str();
        while let Some(s) = rest.find("${{") {
            known.push_str(&rest[..s]);
            let end = rest[s..].find("}}").map_or(rest.len(), |e| s + e + 2);
            undefined.push(rest[s..end].to_string());
            rest = &rest[end..];
        }
        known.push_str(rest);
        if has_marker(&known, self.github) {
            return Verdict::Skips;
        }
        if subst || !undefined.is_empty() {
            let blank = known.trim().is_empty();
            let message_like = undefined.iter().find(|u| {
                let up = u.to_ascii_uppercase();
                !up.starts_with("CI_")
                    && ["MSG", "MESSAGE", "TITLE", "SUBJECT"]
                        .iter()
                        .any(|k| up.contains(k))
            });
            if blank || message_like.is_some() {
                let what = message_like.or(undefined.first()).map_or_else(
                    || "a command substitution".to_string(),
                    |u| {
                        if u.starts_with("${{") {
                            format!("`{u}`")
                        } else {
                            format!("`${u}`, which is not defined in the CI file")
                        }
                    },
                );
                return Verdict::Unknown(format!("the message comes from {what}"));
            }
        }
        Verdict::Missing
    }

    fn finding(
        &self,
        ev: &Event<'a>,
        src: &MsgSrc<'a>,
        target: &Target,
        push: Option<&Event<'a>>,
        verdict: &Verdict,
    ) -> Option<Finding> {
        let run = if self.github {
            "workflow run"
        } else {
            "pipeline"
        };
        let job = &self.job;
        let what = if push.is_some() {
            "commits and pushes"
        } else {
            "creates a commit through the Commits API"
        };
        let whither = match target {
            Target::This => "to this repository".to_string(),
            Target::Other(u) if u.is_empty() => "to another repository".to_string(),
            Target::Other(u) => format!("to another repository (`{u}`)"),
            Target::Project(p) => format!("to another GitLab project (`{p}`)"),
        };
        let consequence = match target {
            Target::This => {
                format!("the commit starts a new {run}, which writes back again, in a loop")
            }
            Target::Other(_) | Target::Project(_) => {
                format!("the commit starts a {run} there that nobody asked for")
            }
        };
        let github_token = push.is_some_and(|p| {
            matches!(
                p.kind,
                Kind::Push {
                    cred: Cred::GithubToken,
                    ..
                }
            )
        });
        let consequence = if self.github && github_token {
            "the push uses the default `GITHUB_TOKEN`, which starts no workflow today, but `require_skip_ci: always` asks every write-back to say so".to_string()
        } else {
            consequence
        };
        let span = self.span_of(ev);
        let mut f = match verdict {
            Verdict::Skips => return None,
            Verdict::Missing => Finding::new(
                format!("job `{job}` {what} {whither} without `[skip ci]` in the message: {consequence}"),
                span,
            )
            .with_fix(self.fix(src)),
            Verdict::Unknown(reason) => Finding::new(
                format!(
                    "cannot verify that job `{job}`, which {what} {whither}, marks its commit `[skip ci]`: {reason}"
                ),
                span,
            )
            .with_severity(Severity::Info),
        };
        if let Some(p) = push {
            let ps = self.span_of(p);
            if ps != span {
                f = f.with_label(ps, "pushed here");
            }
        }
        f = f.with_label(self.job_key.span, format!("in job `{job}`"));
        let help = if self.github {
            "Add `[skip ci]` to the commit message (GitHub also accepts `[ci skip]`, `[no ci]`, `[skip actions]`), or push with the default `GITHUB_TOKEN`, so the write-back does not start the workflows again."
        } else {
            "Add `[skip ci]` to the commit message, or push with `-o ci.skip`, so the write-back does not start a pipeline."
        };
        Some(f.with_help(help))
    }

    /// The span of an event: the command inside its script, or the node.
    fn span_of(&self, ev: &Event<'a>) -> Span {
        let node = ev.node;
        let Some((a, b)) = ev.range else {
            return node.span;
        };
        let text = self.env.text(node.span.file);
        match locate::scalar_offsets(text, node) {
            Some(map) if b > a && b < map.len() => {
                let start = map[a];
                let last = map[b - 1];
                let end = last + text[last..].chars().next().map_or(0, char::len_utf8);
                if end > start {
                    Span::new(node.span.file, start, end)
                } else {
                    node.span
                }
            }
            _ => node.span,
        }
    }

    // -----------------------------------------------------------------------------------------
    // Fixing.

    /// Whether `text` (a message or a variable's value) expands to a text with a skip marker.
    fn skips_with(&self, text: &str, literal: Option<&[bool]>) -> bool {
        has_marker(
            &shell::expand_text(text, literal, &|n| self.lookup(n, 0)).text,
            self.github,
        )
    }

    /// Whether the word, with ` [skip ci]` appended, expands to a text with a skip marker.
    fn word_skips_with_suffix(&self, w: &Word) -> bool {
        let mut literal = w.literal.clone();
        literal.resize(w.text.len() + SKIP.len(), false);
        self.skips_with(&format!("{}{SKIP}", w.text), Some(&literal))
    }

    fn fix(&self, src: &MsgSrc<'a>) -> Option<Fix> {
        let edits = match src {
            MsgSrc::Shell { node, words } => {
                let w = words.first()?;
                // Offer the fix only if the edited text really expands to a skip marker: an
                // unterminated `${` in the value, say, would swallow what we append, and the
                // fix would repeat forever.
                match w.sole_variable().and_then(|v| self.vars.get(v)) {
                    Some(Var::Yaml(n) | Var::Env(n)) => {
                        if !self.skips_with(&format!("{}{SKIP}", n.scalar_text()?), None) {
                            return None;
                        }
                        append_to_scalar(self.env, n)?
                    }
                    Some(Var::Shell { node, word, .. }) => {
                        if !self.word_skips_with_suffix(word) {
                            return None;
                        }
                        append_to_word(self.env, node, word)?
                    }
                    None if w.sole_variable().is_some() => return None,
                    None => {
                        if !self.word_skips_with_suffix(w) {
                            return None;
                        }
                        append_to_word(self.env, node, w)?
                    }
                }
            }
            MsgSrc::Input(n) => append_to_scalar(self.env, n)?,
            _ => return None,
        };
        // The edited file must still parse.
        let file = edits.first()?.span.file;
        let text = self.env.text(file);
        let refs: Vec<&Edit> = edits.iter().collect();
        let (new, n) = crate::fix::apply_edits(text, &refs);
        if n != edits.len() {
            return None;
        }
        let before = yaml::parse(file, text);
        let after = yaml::parse(file, &new);
        if after.errors.len() > before.errors.len() || after.docs.len() != before.docs.len() {
            return None;
        }
        Fix::safe("append ` [skip ci]` to the commit message", edits)
    }
}

enum Verdict {
    Skips,
    Missing,
    Unknown(String),
}

/// Edits that append ` [skip ci]` to the value of a shell word inside a script scalar.
fn append_to_word(env: &Env<'_>, node: &Node, w: &Word) -> Option<Vec<Edit>> {
    let text = env.text(node.span.file);
    let map = locate::scalar_offsets(text, node)?;
    let style = node.as_scalar()?.style;
    let file = node.span.file;
    let at = |i: usize| map.get(i).copied();
    if let Some(i) = w.append_at {
        return Some(vec![Edit {
            span: Span::empty(file, at(i)?),
            replacement: escape(style, SKIP),
        }]);
    }
    if w.quoted || w.text.is_empty() {
        return None;
    }
    // An unquoted word: quote it.
    let start = at(w.start)?;
    let last = at(w.end.checked_sub(1)?)?;
    let end = last + text[last..].chars().next()?.len_utf8();
    Some(vec![
        Edit {
            span: Span::empty(file, start),
            replacement: escape(style, "\""),
        },
        Edit {
            span: Span::empty(file, end),
            replacement: escape(style, &format!("{SKIP}\"")),
        },
    ])
}

/// Edits that append ` [skip ci]` to a YAML scalar's value.
fn append_to_scalar(env: &Env<'_>, node: &Node) -> Option<Vec<Edit>> {
    let text = env.text(node.span.file);
    let map = locate::scalar_offsets(text, node)?;
    let s = node.as_scalar()?;
    let i = s.text.trim_end_matches('\n').len();
    let style = s.style;
    if style == ScalarStyle::Plain && s.text.is_empty() {
        return None;
    }
    Some(vec![Edit {
        span: Span::empty(node.span.file, *map.get(i)?),
        replacement: escape(style, SKIP),
    }])
}

fn escape(style: ScalarStyle, s: &str) -> String {
    match style {
        ScalarStyle::DoubleQuoted => s.replace('\\', "\\\\").replace('"', "\\\""),
        ScalarStyle::SingleQuoted => s.replace('\'', "''"),
        _ => s.to_string(),
    }
}

fn has_marker(message: &str, github: bool) -> bool {
    let m = message.to_ascii_lowercase();
    let markers: &[&str] = if github {
        &[
            "[skip ci]",
            "[ci skip]",
            "[no ci]",
            "[skip actions]",
            "[actions skip]",
        ]
    } else {
        &["[skip ci]", "[ci skip]"]
    };
    markers.iter().any(|k| m.contains(k))
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

/// `host/path` of a repository URL, lowercased, without scheme, credentials or `.git`.
fn normalize_url(url: &str) -> String {
    let u = url.trim();
    let u = u.split_once("://").map_or(u, |(_, r)| r);
    let (host, path) = u.split_once('/').unwrap_or((u, ""));
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    // scp-like `git@host:group/repo.git`.
    let joined = if path.is_empty() {
        host.replacen(':', "/", 1)
    } else {
        format!("{host}/{path}")
    };
    joined
        .trim_end_matches('/')
        .trim_end_matches(".git")
        .to_ascii_lowercase()
}

fn display_url(url: &str) -> String {
    let u = url.trim();
    let (scheme, rest) = u.split_once("://").map_or(("", u), |(s, r)| (s, r));
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let mut out = String::new();
    if !scheme.is_empty() {
        out.push_str(scheme);
        out.push_str("://");
    }
    out.push_str(host);
    if !path.is_empty() {
        out.push('/');
        out.push_str(path);
    }
    out
}

/// `dir` resolved against `cwd` (when relative), with `.` and `..` folded.
fn join_dir(cwd: Option<&str>, dir: &str) -> String {
    let joined = match cwd {
        Some(c) if !dir.starts_with('/') && !c.is_empty() => format!("{c}/{dir}"),
        _ => dir.to_string(),
    };
    let mut parts: Vec<&str> = Vec::new();
    for p in joined.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|l| *l != "..") {
                    parts.pop();
                } else {
                    parts.push("..");
                }
            }
            _ => parts.push(p),
        }
    }
    let body = parts.join("/");
    if joined.starts_with('/') {
        format!("/{body}")
    } else {
        body
    }
}

fn clean_dir(d: &str) -> String {
    d.trim_start_matches("./").trim_end_matches('/').to_string()
}

#[cfg(test)]
mod tests {
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
        let src =
            "bump:\n  script:\n    - MSG=\"bump\"\n    - git commit -m \"$MSG\" && git push\n";
        assert_eq!(
            fixed(".gitlab-ci.yml", src),
            "bump:\n  script:\n    - MSG=\"bump [skip ci]\"\n    - git commit -m \"$MSG\" && git push\n"
        );
    }

    #[test]
    fn fix_quotes_a_bare_message_and_escapes_in_double_quoted_yaml() {
        let src = "bump:\n  script:\n    - git commit -m bump\n    - \"git commit -m 'two' && git push\"\n";
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
        assert!(ds[0].message.contains("cannot verify"), "{}", ds[0].message);
        assert!(
            ds[0]
                .message
                .contains("another repository (`https://gitlab.example.com/platform/gitops.git`)"),
            "{}",
            ds[0].message
        );
        // `cd` is followed through relative paths and `..`.
        let src2 = "b:\n  script:\n    - cd /tmp && git clone https://h.example/g/gitops.git\n    - cd gitops\n    - cd apps/../apps\n    - git commit -m x\n    - git push\n    - cd ../..\n    - git commit -m y\n    - git push\n";
        let ds = lint_with(".gitlab-ci.yml", src2, Config::default());
        assert_eq!(ds.len(), 2);
        assert!(
            ds[0].message.contains("another repository"),
            "{}",
            ds[0].message
        );
        assert!(
            ds[1].message.contains("this repository"),
            "{}",
            ds[1].message
        );
        // A remote URL built from predefined variables still names this repository.
        let src3 = "b:\n  script:\n    - git remote set-url origin \"https://oauth2:${TOKEN}@${CI_SERVER_HOST}/${CI_PROJECT_PATH}.git\"\n    - git commit -m x\n    - git push origin HEAD:main\n";
        let ds = lint_with(".gitlab-ci.yml", src3, Config::default());
        assert!(
            ds[0].message.contains("this repository"),
            "{}",
            ds[0].message
        );
        let src4 = "b:\n  script:\n    - git clone \"https://oauth2:${TOKEN}@${GITOPS_HOST}/platform/gitops.git\"\n    - cd gitops && git commit -m x && git push\n";
        let ds = lint_with(".gitlab-ci.yml", src4, Config::default());
        assert!(
            ds[0]
                .message
                .contains("(`https://${GITOPS_HOST}/platform/gitops.git`)"),
            "{}",
            ds[0].message
        );
        // The repository's own URL (from `repo_urls`) is this repository: a loop.
        let config = Config {
            repo_urls: vec!["https://gitlab.example.com/platform/gitops".into()],
            ..Config::default()
        };
        let ds = lint_with(".gitlab-ci.yml", src, config);
        assert!(
            ds[0].message.contains("to this repository"),
            "{}",
            ds[0].message
        );
    }

    #[test]
    fn github_token_pushes_are_reported_only_with_always() {
        let src = "on: push\njobs:\n  b:\n    runs-on: x\n    steps:\n      - uses: actions/checkout@v4\n      - run: git commit -am bump && git push\n";
        assert!(lint_with(".github/workflows/b.yml", src, Config::default()).is_empty());
        let metas = crate::registry::all_meta();
        let config = crate::config::parse(
            std::path::Path::new(".gitops-lint.yaml"),
            "rules:\n  ci/writeback-skip-ci:\n    require_skip_ci: always\n",
            &metas,
        )
        .unwrap();
        assert_eq!(lint_with(".github/workflows/b.yml", src, config).len(), 1);
    }

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
            let _ = lint_with(".gitlab-ci.yml", src, Config::default());
            let _ = lint_with(".github/workflows/x.yml", src, Config::default());
        }
    }
}
