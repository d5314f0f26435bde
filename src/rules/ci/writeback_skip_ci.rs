//! `ci/writeback-skip-ci`: a CI job that commits back to a repository must not start CI again.
//!
//! The model assembles the pipelines (`model::ci`) and traces what each job does to Git
//! (`model::ci::git`); this rule judges the commits that are pushed: does the message hold a
//! skip marker, can it be known, and where to add one (`fix.rs`).

mod bots;
mod fix;
mod guard;
#[cfg(test)]
mod tests;

use crate::diagnostic::{Finding, Severity};
use crate::model::Repository;
use crate::model::ci::git::{self, Cred, Event, EventKind, GitTrace, MessageSource, Site, Target};
use crate::model::ci::trigger::{self, Pushed, Starts};
use crate::model::paths;
use crate::model::{DocKind, Document};
use crate::rule::rule_options;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::source::{FileId, Span};
use crate::yaml::{Node, locate};
use guard::depends;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

pub struct WritebackSkipCi;

const ID: &str = "ci/writeback-skip-ci";

static META: RuleMeta = RuleMeta {
    id: ID,
    summary: "a CI job or a bot that commits back to a repository must mark its commits `[skip ci]` unless nothing loops",
    default_severity: Severity::Error,
    fix: FixAvailability::Sometimes,
    reads: Reads::NONE,
    applies_to: &[DocKind::GitlabCi, DocKind::GithubWorkflow],
    options: Options::DECLARED,
    docs: include_str!("writeback_skip_ci.md"),
};

/// What is appended to a message.
const SKIP: &str = " [skip ci]";

rule_options! {
    /// The options of this rule's [`RuleMeta`], and the `ci:` section.
    pub struct Options {
        /// `always`: every write-back needs `[skip ci]`, whatever repository it pushes to.
        pub require_skip_ci: Option<String> =>
            "`auto` (default) skips GitHub pushes made with the default `GITHUB_TOKEN`, which start no workflow; `always` reports them too",
        /// `ci.other_repositories`: how a write-back to another repository without `[skip ci]`
        /// is reported. A loop in this repository is always an error.
        pub other_repositories: OtherRepositories,
    }
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum OtherRepositories {
    Error,
    #[default]
    Warning,
    Off,
}

impl Options {
    /// The severity of a write-back to another repository; `None` when it is `off`.
    #[must_use]
    pub fn other_repositories(&self) -> Option<Severity> {
        match self.other_repositories {
            OtherRepositories::Error => Some(Severity::Error),
            OtherRepositories::Warning => Some(Severity::Warning),
            OtherRepositories::Off => None,
        }
    }
}

impl Rule for WritebackSkipCi {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        bots::findings(cx)
    }

    fn check(&self, doc: &Document, cx: &Context<'_>) -> Vec<Finding> {
        let repo = cx.repo;
        // Each file is analysed once, from its first document.
        if repo
            .file_docs(doc.file)
            .first()
            .is_some_and(|d| d.index != doc.index)
        {
            return Vec::new();
        }
        let options = cx.options::<Options>();
        let always = options.require_skip_ci.as_deref() == Some("always");
        let this_repo =
            paths::this_repository_urls(&cx.settings.repo_urls, repo.git_origin.as_deref());
        let other_repositories = options.other_repositories();
        let ci = cx.model.ci();
        let judge = |github: bool,
                     name: &str,
                     key: Span,
                     trace: GitTrace<'_>,
                     starts: &dyn Fn(&Pushed<'_>) -> Starts| {
            Job {
                repo,
                github,
                always,
                other_repositories,
                name,
                key,
                trace,
                starts,
                offsets: RefCell::default(),
            }
            .findings()
        };
        let mut out = Vec::new();
        match doc.kind {
            DocKind::GitlabCi => {
                // A file included by another GitLab CI file is judged as part of that one.
                for pipeline in ci.gitlab.iter().filter(|p| p.root == doc.file) {
                    for job in pipeline.jobs.iter().chain(&pipeline.templates) {
                        let trace = git::gitlab(job, &this_repo);
                        let starts = |p: &Pushed<'_>| trigger::gitlab::starts(pipeline, job, p);
                        out.extend(judge(false, &job.name, job.key, trace, &starts));
                    }
                    // Jobs from another project or URL are not read: say so, once each.
                    for inc in &pipeline.external_includes {
                        let f = match &inc.missing {
                            None => Finding::new(
                                format!(
                                    "cannot verify the jobs included from {}: they are not in this repository",
                                    inc.what
                                ),
                                inc.span,
                            )
                            .with_help("Map the project to a checkout inside the repository (`ci: {projects: {group/project: path}}`) so its jobs are read, or lint that project too."),
                            Some(path) => Finding::new(
                                format!(
                                    "cannot verify the jobs included from {}: `ci.projects` maps it to `{path}`, which is not in this repository",
                                    inc.what
                                ),
                                inc.span,
                            )
                            .with_help("Fix the path in `ci.projects`, or check the project out there before linting."),
                        };
                        out.push(f.with_severity(Severity::Info));
                    }
                }
            }
            DocKind::GithubWorkflow => {
                let workflows = ci.github.iter().filter(|w| {
                    w.file == doc.file && repo.docs.get(w.doc).map(|d| d.index) == Some(doc.index)
                });
                for w in workflows {
                    for job in &w.jobs {
                        let trace = git::github(job, &this_repo);
                        let starts = |p: &Pushed<'_>| trigger::github::starts(w, job, p);
                        out.extend(judge(true, &job.name, job.key, trace, &starts));
                    }
                }
            }
            _ => {}
        }
        out
    }
}

/// One job's Git activity, to judge.
struct Job<'a> {
    repo: &'a Repository,
    github: bool,
    /// `require_skip_ci: always`.
    always: bool,
    /// `ci.other_repositories`: the severity of a write-back to another repository, `None`
    /// when they are not checked.
    other_repositories: Option<Severity>,
    name: &'a str,
    key: Span,
    trace: GitTrace<'a>,
    /// Whether CI runs the job again for a commit it pushes to this repository.
    starts: &'a dyn Fn(&Pushed<'_>) -> Starts,
    /// Each script scalar's byte offsets in its file ([`locate::scalar_offsets`]), computed
    /// once: a `script: |` block of thousands of commands is not mapped again for each one.
    offsets: RefCell<FxHashMap<Span, Option<Rc<[usize]>>>>,
}

enum Verdict {
    Skips,
    Missing,
    Unknown(String),
}

impl<'a> Job<'a> {
    fn text(&self, file: FileId) -> &'a str {
        self.repo.source(file).text()
    }

    /// The byte offsets of a scalar's text in its file, computed once per scalar.
    fn scalar_offsets(&self, node: &Node) -> Option<Rc<[usize]>> {
        self.offsets
            .borrow_mut()
            .entry(node.span)
            .or_insert_with(|| {
                locate::scalar_offsets(self.text(node.span.file), node).map(Rc::from)
            })
            .clone()
    }

    fn findings(&self) -> Vec<Finding> {
        let events = &self.trace.events;
        // The first push after each event, found in one pass from the end.
        let mut next_push = vec![None; events.len()];
        let mut push = None;
        for (i, e) in events.iter().enumerate().rev() {
            next_push[i] = push;
            if matches!(e.kind, EventKind::Push { .. }) {
                push = Some(i);
            }
        }
        let mut out = Vec::new();
        if !self.github {
            out.extend(events.iter().filter_map(|e| self.job_token_push(e)));
        }
        let mut seen_commit = false;
        for (i, ev) in events.iter().enumerate() {
            let (src, target, push) = match &ev.kind {
                EventKind::Commit { message: src, meta } => {
                    let Some(push) = next_push[i].map(|p| &events[p]) else {
                        continue;
                    };
                    let EventKind::Push {
                        target,
                        ci_skip,
                        mr_create,
                        cred,
                        ..
                    } = &push.kind
                    else {
                        continue;
                    };
                    if self.trace.review || *mr_create || (*ci_skip && !self.github) {
                        continue;
                    }
                    if self.github
                        && !(matches!(cred, Cred::Strong(_))
                            || (self.always && *cred == Cred::GithubToken))
                    {
                        continue;
                    }
                    (src, target, Some((push, meta)))
                }
                EventKind::Api { target, message } if !self.github => (message, target, None),
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
            // Would CI run this job again for the commit? Only this repository's CI is known.
            let loop_guard = match (target, &verdict) {
                (Target::This, Verdict::Missing | Verdict::Unknown(_)) => {
                    self.loop_guard(src, push, &verdict)
                }
                _ => Starts::Yes,
            };
            if matches!(loop_guard, Starts::No(_)) {
                continue;
            }
            let push = push.map(|(p, _)| p);
            if let Some(f) = self.finding(ev, src, target, push, &verdict, loop_guard) {
                out.push(f);
            }
        }
        out
    }

    /// The message's known text, its undefined variables, and whether it holds a command
    /// substitution; or why it cannot be known.
    fn message_text(
        &self,
        src: &MessageSource<'_>,
    ) -> Result<(String, Vec<String>, bool), &'static str> {
        match src {
            MessageSource::Shell { words, .. } => {
                let mut text = String::new();
                let mut undefined = Vec::new();
                let mut subst = false;
                for w in words {
                    let e = self.trace.expand(w);
                    if !text.is_empty() {
                        text.push_str("\n\n");
                    }
                    text.push_str(&e.text);
                    undefined.extend(e.undefined);
                    subst |= e.substitution;
                }
                Ok((text, undefined, subst))
            }
            MessageSource::Input(n) => {
                let raw = n.scalar_text().unwrap_or("");
                Ok((raw.to_string(), Vec::new(), false))
            }
            MessageSource::Default(d) => Ok(((*d).to_string(), Vec::new(), false)),
            MessageSource::Unknown(r) => Err(r),
        }
    }

    fn judge(&self, src: &MessageSource<'_>) -> Verdict {
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
        src: &MessageSource<'a>,
        target: &Target,
        push: Option<&Event<'a>>,
        verdict: &Verdict,
        loop_guard: Starts,
    ) -> Option<Finding> {
        // A loop is always an error; an unwanted pipeline elsewhere is the configured level.
        let elsewhere = match target {
            Target::This => None,
            Target::Other(_) | Target::Repository(_) => Some(self.other_repositories?),
        };
        let run = if self.github {
            "workflow run"
        } else {
            "pipeline"
        };
        let job = self.name;
        let what = if push.is_some() {
            "commits and pushes"
        } else {
            "creates a commit through the Commits API"
        };
        let whither = match target {
            // A template's `$CI_PROJECT_PATH` is the project that includes it.
            Target::This if job.starts_with('.') => {
                "to the repository of the project that includes it".to_string()
            }
            Target::This => "to this repository".to_string(),
            Target::Other(u) if u.is_empty() => "to another repository".to_string(),
            Target::Other(u) => format!("to another repository (`{u}`)"),
            Target::Repository(p) => format!("to another GitLab project (`{p}`)"),
        };
        let consequence = match target {
            Target::This => {
                format!("the commit starts a new {run}, which writes back again, in a loop")
            }
            Target::Other(_) | Target::Repository(_) => {
                format!("the commit starts a {run} there that nobody asked for")
            }
        };
        let github_token = push.is_some_and(|p| {
            matches!(
                p.kind,
                EventKind::Push {
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
        let span = self.span_of(ev.site);
        let mut f = match (verdict, &loop_guard) {
            (Verdict::Skips, _) => return None,
            (Verdict::Missing, Starts::Unknown(guard)) => Finding::new(
                format!(
                    "cannot verify that job `{job}`, which {what} {whither} without `[skip ci]` in the message, does not loop: {}",
                    depends(guard)
                ),
                span,
            )
            .with_severity(Severity::Info)
            .with_fix(self.fix(src))
            .with_label(guard.span, "the guard"),
            (Verdict::Unknown(reason), Starts::Unknown(guard)) => Finding::new(
                format!(
                    "cannot verify that job `{job}`, which {what} {whither}, marks its commit `[skip ci]` ({reason}) or does not loop: {}",
                    depends(guard)
                ),
                span,
            )
            .with_severity(Severity::Info)
            .with_label(guard.span, "the guard"),
            (Verdict::Missing, _) => {
                let f = Finding::new(
                    format!("job `{job}` {what} {whither} without `[skip ci]` in the message: {consequence}"),
                    span,
                )
                .with_fix(self.fix(src));
                match elsewhere {
                    Some(severity) => f.with_severity(severity),
                    None => f,
                }
            }
            (Verdict::Unknown(reason), _) => Finding::new(
                format!(
                    "cannot verify that job `{job}`, which {what} {whither}, marks its commit `[skip ci]`: {reason}"
                ),
                span,
            )
            .with_severity(Severity::Info),
        };
        if let Some(p) = push {
            let ps = self.span_of(p.site);
            if ps != span {
                f = f.with_label(ps, "pushed here");
            }
        }
        f = f.with_label(self.key, format!("in job `{job}`"));
        let help = if self.github {
            "Add `[skip ci]` to the commit message (GitHub also accepts `[ci skip]`, `[no ci]`, `[skip actions]`), or push with the default `GITHUB_TOKEN`, so the write-back does not start the workflows again."
        } else {
            "Add `[skip ci]` to the commit message, or push with `-o ci.skip`, so the write-back does not start a pipeline."
        };
        Some(f.with_help(help))
    }

    /// The span of an event: the command inside its script, or the node.
    fn span_of(&self, site: Site<'_>) -> Span {
        let (node, a, b) = match site {
            Site::Node(span) => return span,
            Site::Command(node, a, b) => (node, a, b),
        };
        let text = self.text(node.span.file);
        match self.scalar_offsets(node) {
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
}

/// Whether a message holds a marker the CI system reads as "do not run".
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
