//! What the commands of a script mean for write-backs: git commit, push, clone and remote URLs,
//! `cd`, assignments, review requests (`glab mr create`, `gh pr create`), and commits through
//! GitLab's Commits API (curl, `glab api`) with their messages.

use super::scan::{Word, commands, is_name};

/// Where a commit message comes from.
#[derive(Clone, Debug)]
pub enum Message {
    /// `-m` / `--message` values, in order (git joins them with blank lines).
    Words(Vec<Word>),
    /// The message cannot be read from the script; the reason, for humans.
    Unknown(&'static str),
}

#[derive(Clone, Debug)]
pub struct Commit {
    /// `git -C DIR`.
    pub dir: Option<Word>,
    pub message: Message,
    pub amend: bool,
    /// `-a`: every tracked file that changed.
    pub all: bool,
    /// `git -c user.name=... -c user.email=...` and `--author`, as `(key, value)`.
    pub identity: Vec<(String, Word)>,
}

#[derive(Clone, Debug)]
pub struct Push {
    pub dir: Option<Word>,
    /// The remote name or URL, if given.
    pub target: Option<Word>,
    /// `-o ci.skip` / `--push-option=ci.skip`.
    pub ci_skip: bool,
    /// `-o merge_request.create`.
    pub mr_create: bool,
    /// The refspecs after the remote (`HEAD:main`).
    pub refspecs: Vec<Word>,
}

/// What a command does, as far as write-backs are concerned.
#[derive(Clone, Debug)]
pub enum Action {
    Assign {
        name: String,
        value: Word,
    },
    Cd(Option<Word>),
    Clone {
        url: Word,
        dir: Option<Word>,
    },
    RemoteUrl {
        name: String,
        url: Word,
    },
    Commit(Commit),
    Push(Push),
    /// `git add PATH...`: the paths as written; `None` for `.`, `-A`, `-u` or a glob.
    Add {
        dir: Option<Word>,
        paths: Option<Vec<Word>>,
    },
    /// `git config [--global] user.name VALUE` (and `user.email`).
    Config {
        key: String,
        value: Word,
    },
    /// `glab mr create`, `gh pr create`, `hub pull-request`.
    ReviewRequest,
    /// A POST to GitLab's Commits API (`/repository/commits`) with curl or glab.
    ApiCommit {
        url: Word,
        message: Message,
    },
}

/// An action and the command it came from.
#[derive(Clone, Debug)]
pub struct Step {
    pub action: Action,
    /// Script range of the command.
    pub start: usize,
    pub end: usize,
}

/// The write-back related actions of a script, in order.
#[must_use]
pub fn actions(script: &str) -> Vec<Step> {
    let mut out = Vec::new();
    for cmd in commands(script) {
        let step = |action| Step {
            action,
            start: cmd.start,
            end: cmd.end,
        };
        let mut w: &[Word] = &cmd.words;
        while let Some(first) = w.first() {
            if matches!(
                first.text.as_str(),
                "if" | "then"
                    | "else"
                    | "elif"
                    | "do"
                    | "while"
                    | "until"
                    | "!"
                    | "{"
                    | "}"
                    | "time"
                    | "exec"
                    | "command"
                    | "sudo"
            ) && !first.quoted
            {
                w = &w[1..];
            } else {
                break;
            }
        }
        // Leading assignments (`A=1 cmd`), or `export A=1`.
        let mut assigns = Vec::new();
        let exported = w.first().is_some_and(|f| {
            matches!(f.text.as_str(), "export" | "local" | "readonly" | "declare")
        });
        if exported {
            w = &w[1..];
        }
        while let Some(first) = w.first() {
            match assignment(first) {
                Some(a) => {
                    assigns.push(a);
                    w = &w[1..];
                }
                None if exported && first.text.starts_with('-') => w = &w[1..],
                None => break,
            }
        }
        if w.is_empty() || exported {
            for (name, value) in assigns {
                out.push(step(Action::Assign { name, value }));
            }
            continue;
        }
        let w: Vec<&Word> = strip_redirections(w);
        let Some(first) = w.first() else { continue };
        let action = match first.text.as_str() {
            "cd" | "pushd" => Some(Action::Cd(w.get(1).map(|x| (*x).clone()))),
            "git" => git(&w[1..]),
            "glab" => glab(&w[1..]),
            "gh" if word_is(&w, 1, "pr") && word_is(&w, 2, "create") => Some(Action::ReviewRequest),
            "hub" if word_is(&w, 1, "pull-request") => Some(Action::ReviewRequest),
            "curl" => curl(&w[1..]),
            _ => None,
        };
        if let Some(a) = action {
            out.push(step(a));
        }
    }
    out
}

fn word_is(w: &[&Word], i: usize, s: &str) -> bool {
    w.get(i).is_some_and(|x| x.text == s)
}

fn assignment(w: &Word) -> Option<(String, Word)> {
    let eq = w.text.find('=')?;
    let name = &w.text[..eq];
    if !is_name(name) || w.literal.get(..eq).is_some_and(|l| l.iter().any(|&x| x)) {
        return None;
    }
    Some((name.to_string(), w.slice(eq + 1..w.text.len())))
}

/// Drops redirections (`> file`, `2>/dev/null`, `2>&1`).
fn strip_redirections(words: &[Word]) -> Vec<&Word> {
    let mut out = Vec::new();
    let mut skip_next = false;
    for w in words {
        if skip_next {
            skip_next = false;
            continue;
        }
        let t = w.text.trim_start_matches(|c: char| c.is_ascii_digit());
        if !w.quoted && (t.starts_with('>') || t.starts_with('<')) {
            let op = t.trim_start_matches(['>', '<', '&', '|']);
            if op.is_empty() {
                skip_next = true;
            }
            continue;
        }
        out.push(w);
    }
    out
}

fn git(args: &[&Word]) -> Option<Action> {
    let mut dir = None;
    let mut identity = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        match a.text.as_str() {
            "-C" => {
                dir = args.get(i + 1).map(|x| (*x).clone());
                i += 2;
            }
            "-c" => {
                if let Some(kv) = args.get(i + 1)
                    && let Some((k, _)) = kv.text.split_once('=')
                    && matches!(k, "user.name" | "user.email")
                {
                    identity.push((k.to_string(), kv.slice(k.len() + 1..kv.text.len())));
                }
                i += 2;
            }
            "--git-dir" | "--work-tree" | "--namespace" => i += 2,
            t if t.starts_with('-') => i += 1,
            _ => break,
        }
    }
    let sub = args.get(i)?;
    let rest = &args[i + 1..];
    match sub.text.as_str() {
        "commit" => {
            let mut c = commit(rest, dir);
            identity.append(&mut c.identity);
            c.identity = identity;
            Some(Action::Commit(c))
        }
        "add" => Some(add(rest, dir)),
        "config" => {
            let pos: Vec<&&Word> = rest.iter().filter(|w| !w.text.starts_with('-')).collect();
            match pos.as_slice() {
                [k, v] if matches!(k.text.as_str(), "user.name" | "user.email") => {
                    Some(Action::Config {
                        key: k.text.clone(),
                        value: (**v).clone(),
                    })
                }
                _ => None,
            }
        }
        "push" => Some(Action::Push(push(rest, dir))),
        "clone" => clone(rest),
        "remote" => {
            let verb = rest.first()?;
            let pos: Vec<&&Word> = rest[1..]
                .iter()
                .filter(|w| !w.text.starts_with('-'))
                .collect();
            match verb.text.as_str() {
                "set-url" | "add" if pos.len() >= 2 => Some(Action::RemoteUrl {
                    name: pos[0].text.clone(),
                    url: (*pos[1]).clone(),
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

fn commit(args: &[&Word], dir: Option<Word>) -> Commit {
    let mut msgs: Vec<Word> = Vec::new();
    let mut unknown: Option<&'static str> = None;
    let (mut amend, mut no_edit, mut all) = (false, false, false);
    let mut identity = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        match t {
            "--" => break,
            "-m" | "--message" => {
                if let Some(m) = args.get(i) {
                    msgs.push((*m).clone());
                    i += 1;
                }
            }
            "--amend" => amend = true,
            "--all" => all = true,
            "--author" => {
                if let Some(v) = args.get(i) {
                    identity.push(("author".to_string(), (*v).clone()));
                    i += 1;
                }
            }
            _ if t.starts_with("--author=") => {
                identity.push(("author".to_string(), a.slice("--author=".len()..t.len())));
            }
            "--no-edit" => no_edit = true,
            "-F" | "--file" => {
                unknown = Some("the message is read from a file (`-F`)");
                i += 1;
            }
            "-C" | "-c" | "--reuse-message" | "--reedit-message" | "--fixup" | "--squash" => {
                unknown = Some("the message is taken from another commit");
                i += 1;
            }
            "-t" | "--template" => {
                unknown = Some("the message comes from a template file");
                i += 1;
            }
            "--date" | "--cleanup" | "--trailer" | "-S" | "--gpg-sign" => {}
            _ if t.starts_with("--message=") => {
                msgs.push(a.slice("--message=".len()..a.text.len()));
            }
            _ if t.starts_with("--file=") => {
                unknown = Some("the message is read from a file (`--file`)");
            }
            _ if t.starts_with("--reuse-message=")
                || t.starts_with("--reedit-message=")
                || t.starts_with("--fixup=")
                || t.starts_with("--squash=") =>
            {
                unknown = Some("the message is taken from another commit");
            }
            _ if t.starts_with('-') && !t.starts_with("--") && !a.literal[..1].contains(&true) => {
                // A cluster of short options: `-am`, `-sm msg`, `-m"msg"`.
                for (k, c) in t.char_indices().skip(1) {
                    match c {
                        'a' => all = true,
                        'm' => {
                            if k + 1 < t.len() {
                                msgs.push(a.slice(k + 1..t.len()));
                            } else if let Some(m) = args.get(i) {
                                msgs.push((*m).clone());
                                i += 1;
                            }
                            break;
                        }
                        _ => {
                            if let Some(reason) = message_elsewhere(c) {
                                unknown = Some(reason);
                                // The option's value is the next word.
                                if k + 1 == t.len() {
                                    i += 1;
                                }
                                break;
                            }
                        }
                    }
                }
            }
            _ => {}
        }
    }
    let message = if !msgs.is_empty() {
        Message::Words(msgs)
    } else if let Some(u) = unknown {
        Message::Unknown(u)
    } else if amend && no_edit {
        Message::Unknown("`--amend --no-edit` keeps the previous message")
    } else if amend {
        Message::Unknown("`--amend` keeps or edits the previous message")
    } else {
        Message::Unknown("no message is given on the command line")
    };
    Commit {
        dir,
        message,
        amend,
        all,
        identity,
    }
}

fn add(args: &[&Word], dir: Option<Word>) -> Action {
    let mut paths = Some(Vec::new());
    for a in args {
        let t = a.text.as_str();
        let everything = matches!(t, "." | "-A" | "--all" | "-u" | "--update" | "*" | ":/")
            || (!a.literal.iter().all(|&l| l) && t.contains(['*', '?', '[', '`']));
        if everything {
            paths = None;
        } else if !t.starts_with('-')
            && let Some(p) = paths.as_mut()
        {
            p.push((*a).clone());
        }
    }
    Action::Add { dir, paths }
}

/// Why the message is not on the command line, for a short `git commit` option that takes it
/// from elsewhere (`-F file`, `-C commit`, `-t template`).
fn message_elsewhere(option: char) -> Option<&'static str> {
    match option {
        'F' => Some("the message is read from a file (`-F`)"),
        'C' | 'c' => Some("the message is taken from another commit"),
        't' => Some("the message comes from a template file"),
        _ => None,
    }
}

fn push_option(p: &mut Push, value: &str) {
    let v = value.trim();
    if v == "ci.skip" || v.starts_with("ci.skip=") {
        p.ci_skip = true;
    } else if v == "merge_request.create" || v.starts_with("merge_request.create=") {
        p.mr_create = true;
    }
}

fn push(args: &[&Word], dir: Option<Word>) -> Push {
    let mut p = Push {
        dir,
        target: None,
        ci_skip: false,
        mr_create: false,
        refspecs: Vec::new(),
    };
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        match t {
            "-o" | "--push-option" => {
                if let Some(v) = args.get(i) {
                    push_option(&mut p, &v.text);
                    i += 1;
                }
            }
            "--repo" => {
                if let Some(v) = args.get(i) {
                    p.target = Some((*v).clone());
                    i += 1;
                }
            }
            "--receive-pack" | "--exec" => i += 1,
            _ if t.starts_with("--push-option=") => {
                push_option(&mut p, &t["--push-option=".len()..]);
            }
            _ if t.starts_with("--repo=") => p.target = Some(a.slice(7..t.len())),
            _ if t.starts_with("-o") && !t.starts_with("--") => push_option(&mut p, &t[2..]),
            _ if t.starts_with('-') => {}
            _ => {
                if p.target.is_none() {
                    p.target = Some((*a).clone());
                } else {
                    p.refspecs.push((*a).clone());
                }
            }
        }
    }
    p
}

fn clone(args: &[&Word]) -> Option<Action> {
    let mut pos = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        match t {
            "-b" | "--branch" | "--depth" | "-o" | "--origin" | "-c" | "--config"
            | "--reference" | "-j" | "--jobs" | "--template" | "--separate-git-dir" | "-u"
            | "--upload-pack" | "--filter" | "--shallow-since" | "--shallow-exclude" => i += 1,
            "--" => {}
            _ if t.starts_with('-') => {}
            _ => pos.push(*a),
        }
    }
    let url = (*pos.first()?).clone();
    Some(Action::Clone {
        url,
        dir: pos.get(1).map(|d| (*d).clone()),
    })
}

fn glab(args: &[&Word]) -> Option<Action> {
    match args.first()?.text.as_str() {
        "mr" if word_is(args, 1, "create") => Some(Action::ReviewRequest),
        "api" => {
            let path = args.get(1)?;
            if !path.text.contains("repository/commits") {
                return None;
            }
            let mut method_post = false;
            let mut has_fields = false;
            let mut message = None;
            let mut i = 2;
            while let Some(a) = args.get(i) {
                let t = a.text.as_str();
                i += 1;
                match t {
                    "-X" | "--method" => {
                        method_post = args
                            .get(i)
                            .is_some_and(|m| m.text.eq_ignore_ascii_case("post"));
                        i += 1;
                    }
                    "-f" | "-F" | "--field" | "--raw-field" => {
                        has_fields = true;
                        if let Some(v) = args.get(i) {
                            if let Some(rest) = v.text.strip_prefix("commit_message=") {
                                message = Some(if rest.starts_with('@') {
                                    Message::Unknown("the message is read from a file")
                                } else {
                                    Message::Words(vec![
                                        v.slice("commit_message=".len()..v.text.len()),
                                    ])
                                });
                            }
                            i += 1;
                        }
                    }
                    "--input" => {
                        has_fields = true;
                        message = Some(Message::Unknown("the request body is read from a file"));
                        i += 1;
                    }
                    _ => {}
                }
            }
            (method_post || has_fields).then(|| Action::ApiCommit {
                url: (*path).clone(),
                message: message.unwrap_or(Message::Unknown("no `commit_message` field is given")),
            })
        }
        _ => None,
    }
}

fn curl(args: &[&Word]) -> Option<Action> {
    let mut url: Option<Word> = None;
    let mut post = false;
    let mut get = false;
    let mut message = None;
    let mut saw_data = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        i += 1;
        let data_opt = matches!(
            t,
            "-d" | "--data"
                | "--data-raw"
                | "--data-binary"
                | "--data-urlencode"
                | "--json"
                | "-F"
                | "--form"
        );
        if data_opt {
            post = true;
            saw_data = true;
            if let Some(v) = args.get(i) {
                i += 1;
                if message.is_none() {
                    message = data_message(v);
                }
            }
            continue;
        }
        match t {
            "-X" | "--request" => {
                if let Some(m) = args.get(i) {
                    post |= m.text.eq_ignore_ascii_case("post");
                    get |= m.text.eq_ignore_ascii_case("get");
                    i += 1;
                }
            }
            "-H" | "--header" | "-o" | "--output" | "-u" | "--user" | "--cacert" | "-A"
            | "--user-agent" | "--retry" | "-w" | "--write-out" | "--max-time" | "-m" => i += 1,
            _ if t.starts_with("--data") && t.contains('=') => {
                post = true;
                saw_data = true;
            }
            _ if t.starts_with('-') => {}
            _ => {
                if t.contains("/repository/commits") {
                    let after = &t[t.find("/repository/commits").unwrap_or(0) + 19..];
                    // `/repository/commits/<sha>/...` reads a commit; only the collection creates.
                    if after.is_empty() || after.starts_with('?') || after.starts_with('"') {
                        url = Some((*a).clone());
                    }
                }
            }
        }
    }
    let url = url?;
    if !post || get {
        return None;
    }
    Some(Action::ApiCommit {
        url,
        message: message.unwrap_or(if saw_data {
            Message::Unknown("the request body is built elsewhere")
        } else {
            Message::Unknown("no `commit_message` is given")
        }),
    })
}

/// The `commit_message` in a curl data argument: a JSON body or a form field.
fn data_message(w: &Word) -> Option<Message> {
    let t = w.text.as_str();
    if t.starts_with('@') {
        return Some(Message::Unknown("the request body is read from a file"));
    }
    if t.starts_with("commit_message=") {
        return Some(Message::Words(vec![
            w.slice("commit_message=".len()..t.len()),
        ]));
    }
    let key = t.find("\"commit_message\"")?;
    let b = t.as_bytes();
    let mut j = key + "\"commit_message\"".len();
    while matches!(b.get(j), Some(b' ' | b'\t' | b'\n')) {
        j += 1;
    }
    if b.get(j) != Some(&b':') {
        return None;
    }
    j += 1;
    while matches!(b.get(j), Some(b' ' | b'\t' | b'\n')) {
        j += 1;
    }
    if b.get(j) != Some(&b'"') {
        return Some(Message::Unknown(
            "the `commit_message` is not a JSON string literal",
        ));
    }
    let start = j + 1;
    let mut k = start;
    while k < b.len() && b[k] != b'"' {
        if b[k] == b'\\' {
            k += 1;
        }
        k += 1;
    }
    let end = k.min(b.len());
    if !t.is_char_boundary(start) || !t.is_char_boundary(end) {
        return None;
    }
    Some(Message::Words(vec![w.slice(start..end)]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The message words of a commit.
    fn commit_words(a: &Action) -> &[Word] {
        match a {
            Action::Commit(Commit {
                message: Message::Words(m),
                ..
            }) => m,
            _ => panic!("not a commit with a message: {a:?}"),
        }
    }

    /// The message words of a Commits API call.
    fn api_words(a: &Action) -> &[Word] {
        match a {
            Action::ApiCommit {
                message: Message::Words(m),
                ..
            } => m,
            _ => panic!("not an API commit with a message: {a:?}"),
        }
    }

    #[test]
    fn finds_commits_and_pushes() {
        let s = "git commit -am \"bump [skip ci]\" && git push -o ci.skip origin HEAD:main";
        let a = actions(s);
        assert_eq!(a.len(), 2);
        let m = commit_words(&a[0].action);
        assert_eq!(m[0].text, "bump [skip ci]");
        assert_eq!(m[0].append_at, Some(s.find("]\"").unwrap() + 1));
        let Action::Push(p) = &a[1].action else {
            panic!()
        };
        assert!(p.ci_skip);
        assert_eq!(p.target.as_ref().unwrap().text, "origin");
        let a = actions(
            "git commit --message=\"x\" -m y; git commit -F msg.txt; git commit --amend --no-edit",
        );
        let m = commit_words(&a[0].action);
        assert_eq!((m[0].text.as_str(), m[1].text.as_str()), ("x", "y"));
        assert!(matches!(
            &a[1].action,
            Action::Commit(Commit {
                message: Message::Unknown(_),
                ..
            })
        ));
        assert!(matches!(
            &a[2].action,
            Action::Commit(Commit {
                message: Message::Unknown(_),
                ..
            })
        ));
    }

    #[test]
    fn finds_api_commits() {
        let s = r#"curl --request POST --header "PRIVATE-TOKEN: $T" --data '{"branch": "main", "commit_message": "bump", "actions": []}' "$API/projects/1/repository/commits""#;
        let a = actions(s);
        let m = api_words(&a[0].action);
        assert_eq!(m[0].text, "bump");
        assert_eq!(
            &s[m[0].append_at.unwrap()..m[0].append_at.unwrap() + 1],
            "\""
        );
        let a = actions(
            "glab api projects/:id/repository/commits -X POST -f branch=main -f 'commit_message=bump [skip ci]'",
        );
        assert_eq!(api_words(&a[0].action)[0].text, "bump [skip ci]");
    }

    #[test]
    fn never_panics_on_odd_input() {
        for s in [
            "\"",
            "'",
            "$(",
            "${",
            "`",
            "\\",
            "<<",
            "git commit -m",
            "curl -d",
            "é\"é",
            "git -C",
        ] {
            // Every step stays inside the script, on character boundaries.
            for step in actions(s) {
                assert!(
                    step.start <= step.end && step.end <= s.len(),
                    "{s:?}: step {}..{} outside the script",
                    step.start,
                    step.end
                );
                assert!(s.is_char_boundary(step.start) && s.is_char_boundary(step.end));
            }
        }
    }
}
