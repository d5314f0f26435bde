//! Whether a commit a job pushes to this repository starts CI again, and whether the job that
//! wrote it runs again in that run: the loop guards of GitLab (`workflow: rules`, job `rules`,
//! `only`/`except`, `when: manual`) and GitHub (`on:` filters, job `if:`).
//!
//! Conditions are judged with what the repository says about the commit ([`Pushed`]): its
//! branch, message, author and files. A condition on anything else (a variable set in the
//! project's settings, `github.actor`) cannot be decided here: the answer is then
//! [`Starts::Unknown`], naming the guard. Nothing here decides what is wrong.

pub mod github;
pub mod gitlab;
mod glob;

use std::cell::RefCell;

use super::git::Branch;
use crate::source::Span;

/// What a commit pushed to this repository is, as far as the CI files say.
#[derive(Clone, Debug)]
pub struct Pushed<'a> {
    pub branch: &'a Branch,
    pub message: Text,
    /// `Name <email>`.
    pub author: Text,
    /// The files it changes, from the repository's root; `None` when not known.
    pub files: Option<&'a [String]>,
}

/// A text known in full, or only in part (`complete: false`: more text may come around it).
#[derive(Clone, Debug, Default)]
pub struct Text {
    pub known: String,
    pub complete: bool,
}

impl Text {
    #[must_use]
    pub fn unknown() -> Text {
        Text::default()
    }

    #[must_use]
    pub fn known(s: impl Into<String>) -> Text {
        Text {
            known: s.into(),
            complete: true,
        }
    }
}

/// Whether the writing job runs again for the commit.
#[derive(Clone, Debug, PartialEq)]
pub enum Starts {
    Yes,
    /// A guard stops it.
    No(Guard),
    /// A guard decides it on something the repository does not say.
    Unknown(Guard),
}

/// A condition that decides whether CI runs, where it is written and what it reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Guard {
    pub span: Span,
    /// What it is, for messages: "`workflow: rules` (`$CI_COMMIT_AUTHOR =~ /bot/`)".
    pub what: String,
    /// For an unknown answer, what it depends on: "`$DEPLOY_BOT`, which is not defined in this
    /// repository".
    pub depends_on: Option<String>,
}

impl Starts {
    /// Both must let it run: the first that stops it, else the first unknown.
    #[must_use]
    pub fn and(self, then: impl FnOnce() -> Starts) -> Starts {
        match self {
            Starts::No(_) => self,
            Starts::Yes => then(),
            Starts::Unknown(g) => match then() {
                no @ Starts::No(_) => no,
                _ => Starts::Unknown(g),
            },
        }
    }
}

/// Three answers and a fourth: `Same`, for a condition on the branch when the commit goes to
/// the branch the job ran for. It answers as it did for the run that wrote, which ran the job.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Tri {
    True,
    False,
    Unknown,
    Same,
}

impl Tri {
    fn from(b: bool) -> Tri {
        if b { Tri::True } else { Tri::False }
    }

    fn and(self, o: Tri) -> Tri {
        use Tri::{False, Same, True, Unknown};
        match (self, o) {
            (False, _) | (_, False) => False,
            (Unknown, _) | (_, Unknown) => Unknown,
            (True, True) => True,
            _ => Same,
        }
    }

    fn or(self, o: Tri) -> Tri {
        use Tri::{False, Same, True, Unknown};
        match (self, o) {
            (True, _) | (_, True) => True,
            (Unknown, _) | (_, Unknown) => Unknown,
            (False, False) => False,
            _ => Same,
        }
    }

    fn not(self) -> Tri {
        match self {
            Tri::True => Tri::False,
            Tri::False => Tri::True,
            t => t,
        }
    }
}

/// A value of an expression.
#[derive(Clone, Debug)]
pub(crate) enum Val {
    Null,
    Bool(bool),
    Str(String),
    /// Part of a text, with more unknown text.
    Partial(String),
    Unknown,
    /// The branch the job ran for.
    Same,
}

impl Val {
    fn text(t: &Text) -> Val {
        if t.complete {
            Val::Str(t.known.clone())
        } else if t.known.trim().is_empty() {
            Val::Unknown
        } else {
            Val::Partial(t.known.clone())
        }
    }

    fn branch(b: &Branch) -> Val {
        match b {
            Branch::Named(n) => Val::Str(n.clone()),
            Branch::Current => Val::Same,
            Branch::Unknown(_) => Val::Unknown,
        }
    }

    fn truthy(&self) -> Tri {
        match self {
            Val::Null => Tri::False,
            Val::Bool(b) => Tri::from(*b),
            Val::Str(s) => Tri::from(!s.is_empty()),
            Val::Partial(_) | Val::Same => Tri::True,
            Val::Unknown => Tri::Unknown,
        }
    }

    /// Equality; `fold` compares without case (GitHub).
    fn equals(&self, o: &Val, fold: bool) -> Tri {
        match (self, o) {
            (Val::Unknown, _) | (_, Val::Unknown) | (Val::Partial(_), _) | (_, Val::Partial(_)) => {
                Tri::Unknown
            }
            (Val::Same, Val::Same) => Tri::True,
            (Val::Same, _) | (_, Val::Same) => Tri::Same,
            (Val::Null, Val::Null) => Tri::True,
            (Val::Str(a), Val::Str(b)) if fold => Tri::from(a.eq_ignore_ascii_case(b)),
            (Val::Str(a), Val::Str(b)) => Tri::from(a == b),
            (Val::Bool(a), Val::Bool(b)) => Tri::from(a == b),
            _ => Tri::False,
        }
    }

    /// A test on a text: `pred` on the known text; a partial text that passes passes.
    fn test(&self, pred: impl Fn(&str) -> bool) -> Tri {
        match self {
            Val::Str(s) => Tri::from(pred(s)),
            Val::Partial(s) if pred(s) => Tri::True,
            Val::Null => Tri::from(pred("")),
            Val::Same => Tri::Same,
            _ => Tri::Unknown,
        }
    }
}

/// The names of what an expression read and could not know, for messages.
#[derive(Default)]
pub(crate) struct Unknowns(RefCell<Vec<String>>);

impl Unknowns {
    fn add(&self, what: String) {
        let mut v = self.0.borrow_mut();
        if !v.contains(&what) {
            v.push(what);
        }
    }

    fn take(&self) -> Option<String> {
        let v = self.0.take();
        (!v.is_empty()).then(|| v.join(" and "))
    }
}

/// A condition's text for messages, on one line and short.
fn shown(s: &str) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 60 {
        let cut: String = one.chars().take(57).collect();
        format!("{cut}...")
    } else {
        one
    }
}
