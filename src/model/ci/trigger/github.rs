//! GitHub: does a push start the workflow again, and does the job run in it?
//!
//! `on:` as GitHub reads it (docs: "Events that trigger workflows", "Workflow syntax":
//! `on.push.<branches|branches-ignore|tags|paths|paths-ignore>`): a push of a branch starts
//! `push` workflows whose branch and path filters match, `pull_request` ones when it goes to the
//! head branch of the run that wrote, and `workflow_run` ones after another workflow. The job's
//! `if:` is an expression (`github.actor != 'bot'`, `!contains(github.event.head_commit.message,
//! '[bump]')`) with GitHub's operators and string functions, comparing text without case.

use super::{Guard, Pushed, Starts, Tri, Unknowns, Val, glob, shown};
use crate::model::ci::git::Branch;
use crate::model::ci::{GithubJob, GithubWorkflow};
use crate::yaml::Node;

/// Whether the job runs for the pushed commit.
#[must_use]
pub fn starts(workflow: &GithubWorkflow, job: &GithubJob, pushed: &Pushed<'_>) -> Starts {
    let ev = Eval {
        pushed,
        unknowns: Unknowns::default(),
    };
    let on = match &workflow.on {
        Some(on) => ev.on(on),
        None => Starts::Yes,
    };
    on.and(|| match &job.condition {
        Some(cond) => {
            let text = cond.scalar_text().unwrap_or("");
            let guard = |depends_on| Guard {
                span: cond.span,
                what: format!("the `if:` of job `{}` (`{}`)", job.name, shown(text)),
                depends_on,
            };
            match ev.expr(text) {
                Tri::True | Tri::Same => Starts::Yes,
                Tri::False => Starts::No(guard(None)),
                Tri::Unknown => Starts::Unknown(guard(ev.unknowns.take())),
            }
        }
        None => Starts::Yes,
    })
}

struct Eval<'a, 'p> {
    pushed: &'a Pushed<'p>,
    unknowns: Unknowns,
}

impl Eval<'_, '_> {
    /// Whether one of the workflow's events starts it for the push.
    fn on(&self, on: &Node) -> Starts {
        let events: Vec<(&str, Option<&Node>)> = if let Some(s) = on.as_str() {
            vec![(s, None)]
        } else if on.as_seq().is_some() {
            on.items()
                .filter_map(Node::as_str)
                .map(|s| (s, None))
                .collect()
        } else {
            on.entries()
                .filter_map(|e| Some((e.key.scalar_text()?, Some(&e.value))))
                .collect()
        };
        let mut t = Tri::False;
        for (event, filters) in events {
            let this = match event {
                "push" => filters.map_or(Tri::True, |f| self.push(f)),
                "pull_request" | "pull_request_target" => match self.pushed.branch {
                    // A push to the head branch of the pull request the job ran for.
                    Branch::Current => Tri::Same,
                    _ => Tri::False,
                },
                "workflow_run" => Tri::True,
                _ => Tri::False,
            };
            t = t.or(this);
        }
        let guard = |depends_on| Guard {
            span: on.span,
            what: "the workflow's `on:`".to_string(),
            depends_on,
        };
        match t {
            Tri::True | Tri::Same => Starts::Yes,
            Tri::False => Starts::No(guard(None)),
            Tri::Unknown => Starts::Unknown(guard(self.unknowns.take())),
        }
    }

    /// `on.push` filters.
    fn push(&self, f: &Node) -> Tri {
        let list = |k: &str| -> Option<Vec<&str>> {
            let n = f.get(k)?;
            Some(match n.as_str() {
                Some(s) => vec![s],
                None => n.items().filter_map(Node::as_str).collect(),
            })
        };
        let (branches, ignore) = (list("branches"), list("branches-ignore"));
        let tags = f.get("tags").is_some() || f.get("tags-ignore").is_some();
        // Only tag filters: a branch push does not start it.
        if tags && branches.is_none() && ignore.is_none() {
            return Tri::False;
        }
        let branch = Val::branch(self.pushed.branch);
        let mut t = Tri::True;
        if let Some(b) = branches {
            t = t.and(branch.test(|x| glob::filter(&b, x)));
        }
        if let Some(b) = ignore {
            t = t.and(branch.test(|x| b.iter().any(|p| glob::matches(p, x))).not());
        }
        let (paths, paths_ignore) = (list("paths"), list("paths-ignore"));
        if paths.is_some() || paths_ignore.is_some() {
            match self.pushed.files {
                Some(files) => {
                    if let Some(p) = paths {
                        t = t.and(Tri::from(files.iter().any(|x| glob::filter(&p, x))));
                    }
                    if let Some(p) = paths_ignore {
                        let all_ignored =
                            files.iter().all(|x| p.iter().any(|g| glob::matches(g, x)));
                        t = t.and(Tri::from(!all_ignored || files.is_empty()));
                    }
                }
                None => {
                    self.unknowns
                        .add("which files the commit changes".to_string());
                    t = t.and(Tri::Unknown);
                }
            }
        }
        t
    }

    /// A context value for the push event.
    fn context(&self, path: &str) -> Val {
        let p = self.pushed;
        let path = path.to_ascii_lowercase();
        match path.as_str() {
            "github.event_name" => Val::Str("push".into()),
            "github.ref_name" => Val::branch(p.branch),
            "github.ref" => match p.branch {
                Branch::Named(b) => Val::Str(format!("refs/heads/{b}")),
                b => Val::branch(b),
            },
            "github.head_ref" | "github.base_ref" => Val::Str(String::new()),
            "github.event.head_commit.message" => Val::text(&p.message),
            "github.event.head_commit.author.name" | "github.event.head_commit.committer.name" => {
                let name = p.author.known.split('<').next().unwrap_or("").trim();
                if p.author.known.is_empty() {
                    self.unknowns.add("the commit's author".to_string());
                    Val::Unknown
                } else {
                    Val::Str(name.to_string())
                }
            }
            _ => {
                self.unknowns.add(format!("`{path}`"));
                Val::Unknown
            }
        }
    }

    fn expr(&self, text: &str) -> Tri {
        let inner = text.trim();
        let inner = inner
            .strip_prefix("${{")
            .and_then(|s| s.strip_suffix("}}"))
            .unwrap_or(inner);
        let toks = lex(inner);
        let mut p = Parser {
            toks: &toks,
            i: 0,
            ev: self,
        };
        let v = p.or();
        if p.i != toks.len() {
            self.unknowns
                .add(format!("`{}`, which is not read here", shown(text)));
            return Tri::Unknown;
        }
        match v {
            Val::Bool(b) => Tri::from(b),
            Val::Same => Tri::Same,
            v => v.truthy(),
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    Ident(String),
    Str(String),
    Num,
    Op(&'static str),
    Open,
    Close,
    Comma,
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
        if let Some(op) = ["==", "!=", "&&", "||", "<=", ">="]
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
            b',' => out.push(Tok::Comma),
            b'!' => out.push(Tok::Op("!")),
            b'<' => out.push(Tok::Op("<")),
            b'>' => out.push(Tok::Op(">")),
            b'\'' => {
                // `''` is a quote inside the string.
                let mut text = String::new();
                let mut j = i + 1;
                loop {
                    match s[j..].find('\'') {
                        Some(e) if s[j + e + 1..].starts_with('\'') => {
                            text.push_str(&s[j..j + e + 1]);
                            j += e + 2;
                        }
                        Some(e) => {
                            text.push_str(&s[j..j + e]);
                            j += e + 1;
                            break;
                        }
                        None => {
                            out.push(Tok::Bad);
                            return out;
                        }
                    }
                }
                out.push(Tok::Str(text));
                i = j;
                continue;
            }
            _ if c.is_ascii_digit() => {
                while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'.') {
                    i += 1;
                }
                out.push(Tok::Num);
                continue;
            }
            _ if c.is_ascii_alphabetic() || c == b'_' => {
                let start = i;
                while i < b.len()
                    && (b[i].is_ascii_alphanumeric() || matches!(b[i], b'_' | b'-' | b'.' | b'*'))
                {
                    i += 1;
                }
                out.push(Tok::Ident(s[start..i].to_string()));
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

fn tri_val(t: Tri) -> Val {
    match t {
        Tri::True => Val::Bool(true),
        Tri::False => Val::Bool(false),
        Tri::Unknown => Val::Unknown,
        Tri::Same => Val::Same,
    }
}

fn val_tri(v: &Val) -> Tri {
    match v {
        Val::Same => Tri::Same,
        v => v.truthy(),
    }
}

impl Parser<'_, '_, '_, '_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.i)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        let hit = self.peek() == Some(t);
        if hit {
            self.i += 1;
        }
        hit
    }

    fn or(&mut self) -> Val {
        let mut v = self.and();
        while self.eat(&Tok::Op("||")) {
            let r = self.and();
            v = tri_val(val_tri(&v).or(val_tri(&r)));
        }
        v
    }

    fn and(&mut self) -> Val {
        let mut v = self.cmp();
        while self.eat(&Tok::Op("&&")) {
            let r = self.cmp();
            v = tri_val(val_tri(&v).and(val_tri(&r)));
        }
        v
    }

    fn cmp(&mut self) -> Val {
        let l = self.unary();
        match self.peek() {
            Some(Tok::Op(op @ ("==" | "!="))) => {
                let op = *op;
                self.i += 1;
                let r = self.unary();
                let t = l.equals(&r, true);
                tri_val(if op == "!=" { t.not() } else { t })
            }
            Some(Tok::Op("<" | ">" | "<=" | ">=")) => {
                self.i += 1;
                self.unary();
                Val::Unknown
            }
            _ => l,
        }
    }

    fn unary(&mut self) -> Val {
        if self.eat(&Tok::Op("!")) {
            let v = self.unary();
            return tri_val(val_tri(&v).not());
        }
        self.primary()
    }

    fn primary(&mut self) -> Val {
        let Some(t) = self.peek().cloned() else {
            return Val::Unknown;
        };
        self.i += 1;
        match t {
            Tok::Open => {
                let v = self.or();
                self.eat(&Tok::Close);
                v
            }
            Tok::Str(s) => Val::Str(s),
            Tok::Num => Val::Unknown,
            Tok::Ident(id) if self.peek() == Some(&Tok::Open) => {
                self.i += 1;
                let mut args = Vec::new();
                if !self.eat(&Tok::Close) {
                    loop {
                        args.push(self.or());
                        if !self.eat(&Tok::Comma) {
                            break;
                        }
                    }
                    self.eat(&Tok::Close);
                }
                self.call(&id, &args)
            }
            Tok::Ident(id) => match id.as_str() {
                "true" => Val::Bool(true),
                "false" => Val::Bool(false),
                "null" => Val::Null,
                path => self.ev.context(path),
            },
            _ => {
                self.i = self.toks.len() + 1;
                Val::Unknown
            }
        }
    }

    fn call(&self, name: &str, args: &[Val]) -> Val {
        let lower = |v: &Val| match v {
            Val::Str(s) => Some(s.to_lowercase()),
            _ => None,
        };
        match (name.to_ascii_lowercase().as_str(), args) {
            ("success" | "always", _) => Val::Bool(true),
            ("failure" | "cancelled", _) => Val::Bool(false),
            (f @ ("contains" | "startswith" | "endswith"), [hay, needle]) => {
                let Some(n) = lower(needle) else {
                    return Val::Unknown;
                };
                let f = f.to_string();
                let t = hay.test(|h| {
                    let h = h.to_lowercase();
                    match f.as_str() {
                        "contains" => h.contains(&n),
                        "startswith" => h.starts_with(&n),
                        _ => h.ends_with(&n),
                    }
                });
                // A partial text that does not hold it yet may end with it.
                tri_val(t)
            }
            _ => Val::Unknown,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ci::trigger::Text;

    fn run(wf: &str, branch: Branch, files: Option<&[String]>) -> Starts {
        let repo = crate::model::Repository::in_memory(&[(".github/workflows/w.yml", wf)]);
        let w = &crate::model::ci::github::workflows(&repo)[0];
        let pushed = Pushed {
            branch: &branch,
            message: Text::known("ci: bump [deploy]"),
            author: Text::known("bot <b@x>"),
            files,
        };
        starts(w, &w.jobs[0], &pushed)
    }

    #[test]
    fn on_filters_and_job_conditions() {
        let main = || Branch::Named("main".into());
        let job = "jobs:\n  j:\n    runs-on: x\n    steps: []\n";
        let with = |on: &str| format!("on:\n{on}{job}");
        assert_eq!(run(&format!("on: push\n{job}"), main(), None), Starts::Yes);
        assert!(matches!(
            run(
                &format!("on: [schedule, workflow_dispatch]\n{job}"),
                main(),
                None
            ),
            Starts::No(_)
        ));
        let tags_only = with("  push:\n    tags: ['v*']\n");
        assert!(matches!(run(&tags_only, main(), None), Starts::No(_)));
        let branches = with("  push:\n    branches: ['release/**', '!release/old']\n");
        assert!(matches!(run(&branches, main(), None), Starts::No(_)));
        let release = || Branch::Named("release/v1".into());
        assert_eq!(run(&branches, release(), None), Starts::Yes);
        assert_eq!(run(&branches, Branch::Current, None), Starts::Yes);
        let ignore = with("  push:\n    paths-ignore: ['k8s/**']\n");
        let k8s = ["k8s/a.yaml".to_string()];
        let src = ["src/a.rs".to_string(), "k8s/a.yaml".to_string()];
        assert!(matches!(run(&ignore, main(), Some(&k8s)), Starts::No(_)));
        assert_eq!(run(&ignore, main(), Some(&src)), Starts::Yes);
        assert!(matches!(run(&ignore, main(), None), Starts::Unknown(_)));
        let cond = |c: &str| format!("on: push\njobs:\n  j:\n    if: {c}\n    steps: []\n");
        let no = |c: &str| matches!(run(&cond(c), main(), None), Starts::No(_));
        assert!(no(
            "\"!contains(github.event.head_commit.message, '[DEPLOY]')\""
        ));
        assert!(no("${{ github.event.head_commit.author.name != 'bot' }}"));
        assert!(no("github.ref != 'refs/heads/main' && always()"));
        assert!(no("github.event_name == 'schedule'"));
        assert!(no("startsWith(github.event.head_commit.message, 'feat')"));
        assert!(matches!(
            run(&cond("github.actor != 'bot'"), main(), None),
            Starts::Unknown(_)
        ));
    }
}
