//! Bots that write back (`model::writeback`): Argo CD Image Updater and Flux image automation
//! commit to this repository; a pipeline that starts for their commit and builds the image
//! they track, or writes back itself, makes a loop.

use super::has_marker;
use crate::diagnostic::{Finding, Severity};
use crate::model::ci::git::{self, Branch, EventKind, Target};
use crate::model::ci::images::{self, Pushes};
use crate::model::ci::trigger::{self, Guard, Pushed, Starts, Text};
use crate::model::paths;
use crate::model::writeback::Bot;
use crate::rules::Context;
use crate::source::Span;

/// What a job does with the bot's commit.
struct Hit {
    job: String,
    key: Span,
    /// "builds and pushes `x`, the image it tracks", "writes back itself".
    what: String,
    /// A guard decides it on what the repository does not say.
    guard: Option<Guard>,
}

/// The findings of every bot that writes to this repository.
pub(super) fn findings(cx: &Context<'_>) -> Vec<Finding> {
    let bots = &cx.model.writeback().bots;
    if bots.is_empty() {
        return Vec::new();
    }
    let this_repo =
        paths::this_repository_urls(&cx.settings.repo_urls, cx.repo.git_origin.as_deref());
    let ci = cx.model.ci();
    let mut out = Vec::new();
    for bot in bots.iter().filter(|b| b.here == Some(true)) {
        let pushed = Pushed {
            branch: &bot.branch,
            message: Text::known(bot.message.clone()),
            author: Text::known(bot.author.clone()),
            files: bot.files.as_deref(),
        };
        let mut hits = Vec::new();
        if !has_marker(&bot.message, false) {
            for p in &ci.gitlab {
                for job in &p.jobs {
                    let Some(what) = produces(
                        writes_back(&git::gitlab(job, &this_repo).events),
                        images::gitlab(job, &bot.images),
                    ) else {
                        continue;
                    };
                    let starts = trigger::gitlab::starts(p, job, &pushed);
                    hits.extend(hit(&job.name, job.key, what, starts));
                }
            }
        }
        if !has_marker(&bot.message, true) {
            for w in &ci.github {
                for job in &w.jobs {
                    let Some(what) = produces(
                        writes_back(&git::github(job, &this_repo).events),
                        images::github(job, &bot.images),
                    ) else {
                        continue;
                    };
                    let starts = trigger::github::starts(w, job, &pushed);
                    hits.extend(hit(&job.name, job.key, what, starts));
                }
            }
        }
        out.extend(finding(bot, &hits));
    }
    out
}

/// Whether a job's Git activity writes to this repository.
fn writes_back(events: &[git::Event<'_>]) -> bool {
    events.iter().any(|e| {
        matches!(
            e.kind,
            EventKind::Push {
                target: Target::This,
                ..
            } | EventKind::Api {
                target: Target::This,
                ..
            }
        )
    })
}

/// What a job could write after the bot's commit: `None` when nothing; `Some((what, sure))`.
fn produces(writes: bool, pushes: Pushes) -> Option<(String, bool)> {
    match pushes {
        Pushes::Yes(i) => Some((
            format!("builds and pushes `{i}`, the image it tracks"),
            true,
        )),
        _ if writes => Some(("writes back itself".to_string(), true)),
        Pushes::Maybe => Some((
            "pushes an image whose name is not known here".to_string(),
            false,
        )),
        Pushes::No => None,
    }
}

fn hit(job: &str, key: Span, (what, sure): (String, bool), starts: Starts) -> Option<Hit> {
    let guard = match starts {
        Starts::No(_) => return None,
        Starts::Yes if sure => None,
        Starts::Yes => Some(Guard {
            span: key,
            what: format!("job `{job}`"),
            depends_on: Some("the name of the image it pushes".to_string()),
        }),
        Starts::Unknown(g) => Some(g),
    };
    Some(Hit {
        job: job.to_string(),
        key,
        what,
        guard,
    })
}

fn finding(bot: &Bot, hits: &[Hit]) -> Option<Finding> {
    let branch = match &bot.branch {
        Branch::Named(b) | Branch::Unknown(b) => format!("branch `{b}` of this repository"),
        Branch::Current => "this repository".to_string(),
    };
    let (tool, name) = (bot.tool, &bot.name);
    let first = hits.iter().find(|h| h.guard.is_none()).or(hits.first())?;
    let mut f = match &first.guard {
        None => Finding::new(
            format!(
                "the write-back of {tool} (`{name}`) to {branch} has no `[skip ci]` in its message: the commit starts CI, whose job `{}` {}, in a loop",
                first.job, first.what
            ),
            bot.span,
        ),
        Some(g) => Finding::new(
            format!(
                "cannot verify that the write-back of {tool} (`{name}`) to {branch}, without `[skip ci]` in its message, does not loop: job `{}` {}, and {}",
                first.job,
                first.what,
                match &g.depends_on {
                    Some(d) => format!("{} reads {d}", g.what),
                    None => format!("{} decides whether it runs", g.what),
                }
            ),
            bot.span,
        )
        .with_severity(Severity::Info)
        .with_label(g.span, "the guard"),
    };
    f = f.with_label(first.key, format!("job `{}`", first.job));
    if let Some(m) = bot.message_span {
        f = f.with_label(m, "the message template");
    }
    Some(f.with_help(
        "Add `[skip ci]` to the bot's commit message template, or keep CI from running the job for the bot's commits (`workflow: rules` on `$CI_COMMIT_AUTHOR`, `paths-ignore`).",
    ))
}
