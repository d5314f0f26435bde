//! Bots that write back (`model::writeback`): Argo CD Image Updater, Argo CD's source hydrator
//! and Flux image automation commit to this repository; a pipeline that starts for their commit
//! and builds the image they track, or writes back itself, makes a loop.

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
            message: Text {
                known: bot.message.clone(),
                complete: bot.message_complete,
            },
            author: Text::known(bot.author.clone()),
            files: bot.files.as_deref(),
        };
        let mut hits = Vec::new();
        if !has_marker(&bot.message, false) {
            for p in &ci.gitlab {
                for job in &p.jobs {
                    let Some(what) = produces(
                        writes_back(&git::gitlab(job, &this_repo).events, bot),
                        tracked(bot, || images::gitlab(job, &bot.images)),
                        bot,
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
                        writes_back(&git::github(job, &this_repo).events, bot),
                        tracked(bot, || images::github(job, &bot.images)),
                        bot,
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

/// Whether a job pushes an image the bot tracks; a bot that tracks none (the hydrator, which
/// commits when its dry source changes) is fed only by a write.
fn tracked(bot: &Bot, pushes: impl FnOnce() -> Pushes) -> Pushes {
    if bot.images.is_empty() {
        Pushes::No
    } else {
        pushes()
    }
}

/// Whether a job's Git activity feeds the bot: writes to this repository, or for a bot fed by
/// one branch (the hydrator's dry source), to that branch. `None`: a push whose branch the
/// job does not say.
fn writes_back(events: &[git::Event<'_>], bot: &Bot) -> Option<bool> {
    let mut maybe = false;
    for e in events {
        let branch = match &e.kind {
            EventKind::Push {
                target: Target::This,
                branch,
                ..
            } => branch,
            EventKind::Api {
                target: Target::This,
                ..
            } if bot.fed_by.is_none() => return Some(true),
            EventKind::Api {
                target: Target::This,
                ..
            } => {
                maybe = true;
                continue;
            }
            _ => continue,
        };
        let Some(fed_by) = &bot.fed_by else {
            return Some(true);
        };
        match (branch, fed_by) {
            (Branch::Named(b), Branch::Named(f)) if b == f => return Some(true),
            // The job runs on the bot's branch and pushes there.
            (Branch::Current, Branch::Named(f)) if bot.branch == Branch::Named(f.clone()) => {
                return Some(true);
            }
            (Branch::Named(_) | Branch::Current, Branch::Named(_)) => {}
            _ => maybe = true,
        }
    }
    if maybe { None } else { Some(false) }
}

/// What a job could write after the bot's commit: `None` when nothing; `Some((what, sure))`.
fn produces(writes: Option<bool>, pushes: Pushes, bot: &Bot) -> Option<(String, bool)> {
    let fed = match &bot.fed_by {
        Some(Branch::Named(b)) => format!("writes to branch `{b}`, which it hydrates from"),
        _ => "writes back itself".to_string(),
    };
    match pushes {
        Pushes::Yes(i) => Some((
            format!("builds and pushes `{i}`, the image it tracks"),
            true,
        )),
        _ if writes == Some(true) => Some((fed, true)),
        _ if writes.is_none() => Some((
            "pushes to a branch of this repository that the job does not say".to_string(),
            false,
        )),
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
    // A template that prints another commit's message (the hydrator's default).
    let its = if bot.message_complete {
        "its message"
    } else {
        "its message template, which copies the dry commit's message"
    };
    let first = hits.iter().find(|h| h.guard.is_none()).or(hits.first())?;
    let mut f = match &first.guard {
        None => Finding::new(
            format!(
                "the write-back of {tool} (`{name}`) to {branch} has no `[skip ci]` in {its}: the commit starts CI, whose job `{}` {}, in a loop",
                first.job, first.what
            ),
            bot.span,
        ),
        Some(g) => Finding::new(
            format!(
                "cannot verify that the write-back of {tool} (`{name}`) to {branch}, without `[skip ci]` in {its}, does not loop: job `{}` {}, and {}",
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
