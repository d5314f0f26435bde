//! GitLab: does a pipeline start for a push, and is the job in it?
//!
//! `workflow: rules` decide whether a pipeline starts at all; the job's `rules` (or `only` and
//! `except`) and `when` whether the job is in it. A rule list is read as GitLab does: the first
//! rule whose `if`, `changes` and `exists` all match decides, `when: never` excludes, and when
//! no rule matches the pipeline or job is left out. `rules:if` expressions are GitLab's small
//! language: `$VAR`, strings, `/regex/` (RE2; Rust's `regex` is close), `null`, `==`, `!=`,
//! `=~`, `!~`, `&&`, `||` and parentheses (docs: ci/jobs/job_rules.md, "CI/CD variable
//! expressions").

use super::{Guard, Pushed, Starts, Tri, Unknowns, Val, glob, shown};
use crate::model::ci::git::Branch;
use crate::model::ci::variable_value;
use crate::model::ci::{GitlabJob, GitlabPipeline};
use crate::yaml::Node;

/// Whether the job runs in a pipeline for the pushed commit.
#[must_use]
pub fn starts(pipeline: &GitlabPipeline, job: &GitlabJob, pushed: &Pushed<'_>) -> Starts {
    let workflow = Eval {
        pushed,
        vars: &|n| pipeline.variables.get(n),
        unknowns: Unknowns::default(),
    };
    let job_eval = Eval {
        pushed,
        vars: &|n| job.variables.get(n),
        unknowns: Unknowns::default(),
    };
    let wf = match &pipeline.workflow_rules {
        Some(rules) => workflow.rules(rules, "`workflow: rules`", false),
        None => Starts::Yes,
    };
    wf.and(|| {
        let name = format!("the `rules:` of job `{}`", job.name);
        if let Some(rules) = &job.rules {
            return job_eval.rules(rules, &name, true);
        }
        if let Some(w) = job.when.as_ref().filter(|w| w.as_str() == Some("manual")) {
            return Starts::No(Guard {
                span: w.span,
                what: format!("`when: manual` of job `{}`", job.name),
                depends_on: None,
            });
        }
        job_eval.only_except(job)
    })
}

/// Evaluation of a job's or the workflow's conditions for the pushed commit.
struct Eval<'a, 'p> {
    pushed: &'a Pushed<'p>,
    /// The variables the file defines.
    vars: &'a dyn Fn(&str) -> Option<&'a Node>,
    unknowns: Unknowns,
}

impl Eval<'_, '_> {
    /// A rule list: the first rule that matches decides.
    fn rules(&self, rules: &Node, name: &str, job: bool) -> Starts {
        let items: Vec<&Node> = rules.items().collect();
        self.rules_from(&items, rules, name, job)
    }

    fn rules_from(&self, items: &[&Node], list: &Node, name: &str, job: bool) -> Starts {
        let Some((rule, rest)) = items.split_first() else {
            return Starts::No(Guard {
                span: list.span,
                what: format!("{name}, none of which matches"),
                depends_on: None,
            });
        };
        let when = rule.get_str("when").unwrap_or("on_success");
        // A manual job does not run by itself.
        let runs = when != "never" && !(job && when == "manual");
        self.unknowns.take();
        let cond = self.rule_matches(rule);
        let depends = self.unknowns.take();
        let guard = |depends_on| Guard {
            span: rule.get("if").map_or(rule.span, |n| n.span),
            what: format!("the rule `{}` of {name}", describe(rule)),
            depends_on,
        };
        let decided = |runs: bool| {
            if runs {
                Starts::Yes
            } else {
                Starts::No(guard(None))
            }
        };
        match cond {
            Tri::True => decided(runs),
            Tri::False => self.rules_from(rest, list, name, job),
            // As for the run that wrote: a rule that lets it run matched then, one that stops
            // it did not.
            Tri::Same if runs => Starts::Yes,
            Tri::Same => self.rules_from(rest, list, name, job),
            Tri::Unknown => {
                let rest = self.rules_from(rest, list, name, job);
                match (runs, &rest) {
                    (true, Starts::Yes) | (false, Starts::No(_)) => rest,
                    _ => Starts::Unknown(guard(depends)),
                }
            }
        }
    }

    /// Whether a rule's `if`, `changes` and `exists` all match.
    fn rule_matches(&self, rule: &Node) -> Tri {
        let mut t = Tri::True;
        if let Some(cond) = rule.get("if").and_then(Node::scalar_text) {
            t = t.and(self.expr(cond));
        }
        if let Some(changes) = rule.get("changes") {
            let paths = changes.get("paths").unwrap_or(changes);
            t = t.and(self.changes(paths));
        }
        if rule.get("exists").is_some() {
            self.unknowns.add("`exists:`".to_string());
            t = t.and(Tri::Unknown);
        }
        t
    }

    /// `changes:`: whether the commit changes a file that one of the globs matches.
    fn changes(&self, globs: &Node) -> Tri {
        let Some(files) = self.pushed.files else {
            self.unknowns
                .add("which files the commit changes".to_string());
            return Tri::Unknown;
        };
        let globs: Vec<&str> = globs.items().filter_map(Node::as_str).collect();
        Tri::from(
            files
                .iter()
                .any(|f| globs.iter().any(|g| glob::matches(g, f))),
        )
    }

    /// `only:` and `except:` (GitLab: every key of `only` must match, and the job is excluded
    /// when every key of `except` matches).
    fn only_except(&self, job: &GitlabJob) -> Starts {
        let mut out = Starts::Yes;
        if let Some(only) = &job.only {
            self.unknowns.take();
            let t = self.only_keys(only);
            out = self.decide(t, only, &format!("`only:` of job `{}`", job.name));
        }
        if let Some(except) = &job.except {
            self.unknowns.take();
            let t = self.only_keys(except).not();
            let e = self.decide(t, except, &format!("`except:` of job `{}`", job.name));
            out = out.and(|| e);
        }
        out
    }

    fn decide(&self, t: Tri, node: &Node, what: &str) -> Starts {
        let guard = |depends_on| Guard {
            span: node.span,
            what: what.to_string(),
            depends_on,
        };
        match t {
            Tri::True | Tri::Same => Starts::Yes,
            Tri::False => Starts::No(guard(None)),
            Tri::Unknown => Starts::Unknown(guard(self.unknowns.take())),
        }
    }

    /// Whether every key of an `only`/`except` value matches.
    fn only_keys(&self, node: &Node) -> Tri {
        if node.as_seq().is_some() || node.as_str().is_some() {
            return self.refs(node);
        }
        let mut t = Tri::True;
        for e in node.entries() {
            let part = match e.key.scalar_text() {
                Some("refs") => self.refs(&e.value),
                Some("variables") => e
                    .value
                    .items()
                    .filter_map(Node::scalar_text)
                    .fold(Tri::False, |acc, x| acc.or(self.expr(x))),
                Some("changes") => self.changes(e.value.get("paths").unwrap_or(&e.value)),
                _ => {
                    self.unknowns
                        .add(format!("`{}:`", e.key.scalar_text().unwrap_or("?")));
                    Tri::Unknown
                }
            };
            t = t.and(part);
        }
        t
    }

    /// Whether a list of refs (`main`, `/^release/`, `branches`, `tags`, ...) matches a push
    /// of the commit's branch.
    fn refs(&self, node: &Node) -> Tri {
        let refs: Vec<&str> = match node.as_str() {
            Some(s) => vec![s],
            None => node.items().filter_map(Node::as_str).collect(),
        };
        let branch = Val::branch(self.pushed.branch);
        refs.iter().fold(Tri::False, |acc, r| {
            let t = match *r {
                "branches" | "pushes" => Tri::True,
                "tags"
                | "merge_requests"
                | "api"
                | "external"
                | "external_pull_requests"
                | "chat"
                | "pipelines"
                | "schedules"
                | "triggers"
                | "web" => Tri::False,
                r if r.starts_with('/') => {
                    regex_of(r).map_or(Tri::Unknown, |re| branch.test(|b| re.is_match(b)))
                }
                r => branch.equals(&Val::Str(r.to_string()), false),
            };
            acc.or(t)
        })
    }

    /// The value of `$NAME` for the pushed commit.
    fn var(&self, name: &str) -> Val {
        let p = self.pushed;
        match name {
            "CI_PIPELINE_SOURCE" => Val::Str("push".into()),
            "CI_COMMIT_BRANCH" | "CI_COMMIT_REF_NAME" => Val::branch(p.branch),
            // GitLab's default branch is `main` (`master` before 14.0); another name is not
            // known here.
            "CI_DEFAULT_BRANCH" => match p.branch {
                Branch::Named(b) if b == "main" || b == "master" => Val::Str(b.clone()),
                Branch::Current => Val::Same,
                _ => {
                    self.unknowns.add("`$CI_DEFAULT_BRANCH`".to_string());
                    Val::Unknown
                }
            },
            "CI_COMMIT_MESSAGE" => Val::text(&p.message),
            "CI_COMMIT_TITLE" => {
                let first = p.message.known.lines().next().unwrap_or("").to_string();
                let complete = p.message.complete || p.message.known.contains('\n');
                Val::text(&super::Text {
                    known: first,
                    complete,
                })
            }
            "CI_COMMIT_AUTHOR" => {
                if !p.author.complete {
                    self.unknowns.add("the commit's author".to_string());
                }
                Val::text(&p.author)
            }
            // Not set in a branch pipeline.
            "CI_COMMIT_TAG" | "CI_PIPELINE_TRIGGERED" | "CI_TRIGGER_SHORT_TOKEN" => Val::Null,
            n if n.starts_with("CI_MERGE_REQUEST_")
                || n.starts_with("CI_EXTERNAL_PULL_REQUEST_") =>
            {
                Val::Null
            }
            n => match (self.vars)(n)
                .and_then(variable_value)
                .and_then(Node::scalar_text)
            {
                Some(v) if !v.contains('$') => Val::Str(v.to_string()),
                _ => {
                    self.unknowns
                        .add(if n.starts_with("CI_") || n.starts_with("GITLAB_") {
                            format!("`${n}`")
                        } else {
                            format!("`${n}`, which is not defined in this repository")
                        });
                    Val::Unknown
                }
            },
        }
    }

    /// A `rules:if` expression.
    fn expr(&self, text: &str) -> Tri {
        let toks = lex(text);
        let mut p = Parser {
            toks: &toks,
            i: 0,
            ev: self,
        };
        let t = p.or();
        if p.i != toks.len() {
            self.unknowns
                .add(format!("`{}`, which is not read here", shown(text)));
            return Tri::Unknown;
        }
        t
    }
}

/// A rule for messages: its `if`, `changes` and `when`.
fn describe(rule: &Node) -> String {
    let mut parts = Vec::new();
    if let Some(c) = rule.get("if").and_then(Node::scalar_text) {
        parts.push(format!("if: {}", shown(c)));
    }
    if rule.get("changes").is_some() {
        parts.push("changes: ...".to_string());
    }
    if let Some(w) = rule.get_str("when") {
        parts.push(format!("when: {w}"));
    }
    if parts.is_empty() {
        "a rule without conditions".to_string()
    } else {
        parts.join(", ")
    }
}

/// A `/pattern/flags` literal as a regex.
fn regex_of(lit: &str) -> Option<regex::Regex> {
    let body = lit.strip_prefix('/')?;
    let end = body.rfind('/')?;
    let (pat, flags) = (&body[..end], &body[end + 1..]);
    let mut b = regex::RegexBuilder::new(pat);
    b.case_insensitive(flags.contains('i'))
        .multi_line(flags.contains('m'))
        .size_limit(1 << 20);
    b.build().ok()
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Var(String),
    Str(String),
    Regex(String),
    Null,
    Op(&'static str),
    Open,
    Close,
    Bad,
}

fn lex(s: &str) -> Vec<Tok> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let two = s.get(i..i + 2).unwrap_or("");
        if let Some(op) = ["==", "!=", "=~", "!~", "&&", "||"]
            .iter()
            .find(|o| **o == two)
        {
            out.push(Tok::Op(op));
            i += 2;
            continue;
        }
        match c {
            b'(' => out.push(Tok::Open),
            b')' => out.push(Tok::Close),
            b'$' => {
                let braced = b.get(i + 1) == Some(&b'{');
                let start = i + 1 + usize::from(braced);
                let mut j = start;
                while j < b.len() && (b[j].is_ascii_alphanumeric() || b[j] == b'_') {
                    j += 1;
                }
                out.push(Tok::Var(s[start..j].to_string()));
                i = j + usize::from(braced && b.get(j) == Some(&b'}'));
                continue;
            }
            b'"' | b'\'' => {
                let end = s[i + 1..].find(c as char).map_or(s.len(), |e| i + 1 + e);
                out.push(Tok::Str(s[i + 1..end].to_string()));
                i = end + 1;
                continue;
            }
            b'/' => {
                // To the closing `/` that is not escaped, then the flags.
                let mut j = i + 1;
                while j < b.len() && b[j] != b'/' {
                    j += if b[j] == b'\\' { 2 } else { 1 };
                }
                j = (j + 1).min(b.len());
                while j < b.len() && b[j].is_ascii_alphabetic() {
                    j += 1;
                }
                out.push(Tok::Regex(s[i..j].to_string()));
                i = j;
                continue;
            }
            _ if s[i..].starts_with("null") => {
                out.push(Tok::Null);
                i += 4;
                continue;
            }
            _ => {
                out.push(Tok::Bad);
                return out;
            }
        }
        i += 1;
    }
    out
}

struct Parser<'t, 'e, 'a, 'p> {
    toks: &'t [Tok],
    i: usize,
    ev: &'e Eval<'a, 'p>,
}

enum Operand {
    Val(Val),
    Regex(String),
}

impl Parser<'_, '_, '_, '_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i)
    }

    fn or(&mut self) -> Tri {
        let mut t = self.and();
        while self.peek() == Some(&Tok::Op("||")) {
            self.i += 1;
            t = t.or(self.and());
        }
        t
    }

    fn and(&mut self) -> Tri {
        let mut t = self.cmp();
        while self.peek() == Some(&Tok::Op("&&")) {
            self.i += 1;
            t = t.and(self.cmp());
        }
        t
    }

    fn cmp(&mut self) -> Tri {
        if self.peek() == Some(&Tok::Open) {
            self.i += 1;
            let t = self.or();
            if self.peek() == Some(&Tok::Close) {
                self.i += 1;
            }
            return t;
        }
        let Some(lhs) = self.operand() else {
            return Tri::Unknown;
        };
        let op = match self.peek() {
            Some(Tok::Op(op)) if !matches!(*op, "&&" | "||") => *op,
            _ => {
                return match lhs {
                    Operand::Val(v) => v.truthy(),
                    Operand::Regex(_) => Tri::True,
                };
            }
        };
        self.i += 1;
        let Some(rhs) = self.operand() else {
            return Tri::Unknown;
        };
        let lhs = match lhs {
            Operand::Val(v) => v,
            Operand::Regex(r) => Val::Str(r),
        };
        match op {
            "==" | "!=" => {
                let rhs = match rhs {
                    Operand::Val(v) => v,
                    Operand::Regex(r) => Val::Str(r),
                };
                let t = lhs.equals(&rhs, false);
                if op == "!=" { t.not() } else { t }
            }
            _ => {
                // The pattern: a literal, or a variable that holds one.
                let pattern = match rhs {
                    Operand::Regex(r) => Some(r),
                    Operand::Val(Val::Str(s)) => Some(s),
                    _ => None,
                };
                let t = match pattern.as_deref().and_then(regex_of) {
                    Some(re) => match lhs {
                        // `null =~ /x/` is false.
                        Val::Null => Tri::False,
                        v => v.test(|s| re.is_match(s)),
                    },
                    None => Tri::Unknown,
                };
                if op == "!~" { t.not() } else { t }
            }
        }
    }

    fn operand(&mut self) -> Option<Operand> {
        let t = self.peek()?.clone();
        self.i += 1;
        Some(match t {
            Tok::Var(n) => Operand::Val(self.ev.var(&n)),
            Tok::Str(s) => Operand::Val(Val::Str(s)),
            Tok::Regex(r) => Operand::Regex(r),
            Tok::Null => Operand::Val(Val::Null),
            _ => {
                self.i = self.toks.len() + 1;
                return None;
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ci::trigger::Text;

    fn run(ci: &str, branch: Branch, message: &str, author: Option<&str>) -> Starts {
        let repo = crate::model::Repository::in_memory(&[(".gitlab-ci.yml", ci)]);
        let p = &crate::model::ci::gitlab::pipelines(&repo, &[])[0];
        let pushed = Pushed {
            branch: &branch,
            message: Text::known(message),
            author: author.map_or_else(Text::unknown, Text::known),
            files: None,
        };
        starts(p, &p.jobs[0], &pushed)
    }

    #[test]
    fn rules_decide_as_gitlab_does() {
        let main = || Branch::Named("main".into());
        let job = "j:\n  script: [x]\n";
        let wf = |rules: &str| format!("workflow:\n  rules:\n{rules}{job}");
        assert_eq!(run(job, main(), "m", None), Starts::Yes);
        let bot =
            wf("    - if: $CI_COMMIT_AUTHOR =~ /bot/\n      when: never\n    - when: always\n");
        assert!(matches!(
            run(&bot, main(), "m", Some("a-bot <b@x>")),
            Starts::No(_)
        ));
        assert_eq!(run(&bot, main(), "m", Some("dev <d@x>")), Starts::Yes);
        assert!(matches!(run(&bot, main(), "m", None), Starts::Unknown(_)));
        let msg = wf(
            "    - if: '$CI_COMMIT_MESSAGE =~ /^chore\\(deploy\\)/'\n      when: never\n    - when: always\n",
        );
        assert!(matches!(
            run(&msg, main(), "chore(deploy): x", None),
            Starts::No(_)
        ));
        let sched = "j:\n  rules:\n    - if: $CI_PIPELINE_SOURCE == \"schedule\"\n  script: [x]\n";
        assert!(matches!(run(sched, main(), "m", None), Starts::No(_)));
        let only = "j:\n  only: [schedules, web]\n  script: [x]\n";
        assert!(matches!(run(only, main(), "m", None), Starts::No(_)));
        let only = "j:\n  only: [main, /^release/]\n  script: [x]\n";
        assert_eq!(run(only, main(), "m", None), Starts::Yes);
        assert!(matches!(
            run(only, Branch::Named("dev".into()), "m", None),
            Starts::No(_)
        ));
        assert_eq!(run(only, Branch::Current, "m", None), Starts::Yes);
    }
}
