//! A small scanner for the POSIX shell of CI scripts: it splits a script into simple commands
//! (quotes, `&&`, `||`, `;`, pipes, line continuations, `for ...; do ...; done`, comments,
//! here-documents) and recognises the git and API commands that write back to a repository.
//!
//! It is not a shell: words keep their unexpanded text, with the script offset of every byte,
//! so a finding can point at a command and a fix can insert text inside a quoted message.
//!
//! `scan` splits a script into commands and words, `actions` reads what they do, `expand`
//! expands a word's variables.

mod actions;
mod expand;
mod scan;

pub use actions::{Action, Commit, Message, Push, Step, actions};
pub use expand::{Expanded, expand, expand_text};
pub use scan::{Command, Word, commands, is_name};
