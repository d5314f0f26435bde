//! The loop guards of a write-back to this repository ([`crate::model::ci::trigger`]), and
//! pushes GitLab refuses (`CI_JOB_TOKEN`).

use super::{Job, Verdict};
use crate::diagnostic::{Finding, Severity};
use crate::model::ci::git::{Branch, CommitMeta, Cred, Event, EventKind, MessageSource};
use crate::model::ci::trigger::{Guard, Pushed, Starts, Text};

impl<'a> Job<'a> {
    /// Whether CI runs the job again for its commit to this repository, as its guards say.
    pub(super) fn loop_guard(
        &self,
        src: &MessageSource<'_>,
        push: Option<(&Event<'a>, &CommitMeta)>,
        verdict: &Verdict,
    ) -> Starts {
        // GitHub starts no workflow for a push with the default token (`require_skip_ci:
        // always` reports it anyway).
        if self.github
            && push.is_some_and(|(p, _)| {
                matches!(
                    p.kind,
                    EventKind::Push {
                        cred: Cred::GithubToken,
                        ..
                    }
                )
            })
        {
            return Starts::Yes;
        }
        let message = match self.message_text(src) {
            Ok((text, _, _)) => Text {
                known: text,
                complete: matches!(verdict, Verdict::Missing),
            },
            Err(_) => Text::unknown(),
        };
        let unknown_branch = Branch::Unknown(String::new());
        let (branch, meta) = match push {
            Some((
                Event {
                    kind: EventKind::Push { branch, .. },
                    ..
                },
                meta,
            )) => (branch, Some(meta)),
            _ => (&unknown_branch, None),
        };
        let author = match meta.map(|m| (&m.author_name, &m.author_email)) {
            Some((Some(n), Some(e))) => Text::known(format!("{n} <{e}>")),
            Some((Some(n), None)) => Text {
                known: format!("{n} <"),
                complete: false,
            },
            Some((None, Some(e))) => Text {
                known: format!("<{e}>"),
                complete: false,
            },
            _ => Text::unknown(),
        };
        let pushed = Pushed {
            branch,
            message,
            author,
            files: meta.and_then(|m| m.files.as_deref()),
        };
        (self.starts)(&pushed)
    }

    /// A push with GitLab's `CI_JOB_TOKEN`, which GitLab refuses by default.
    pub(super) fn job_token_push(&self, ev: &Event<'a>) -> Option<Finding> {
        let EventKind::Push {
            cred: Cred::JobToken,
            ..
        } = &ev.kind
        else {
            return None;
        };
        let job = self.name;
        Some(
            Finding::new(
                format!("job `{job}` pushes with `CI_JOB_TOKEN`, which cannot push unless the project allows it: the job fails"),
                self.span_of(ev.site),
            )
            .with_severity(Severity::Warning)
            .with_label(self.key, format!("in job `{job}`"))
            .with_help("Push with a project access token kept in a masked CI/CD variable, or allow job tokens to push (Settings > CI/CD > Job token permissions, GitLab 17.2 and later)."),
        )
    }
}

/// What an undecided guard depends on, for messages.
pub(super) fn depends(guard: &Guard) -> String {
    match &guard.depends_on {
        Some(d) => format!("{} reads {d}", guard.what),
        None => format!("{} decides it", guard.what),
    }
}
