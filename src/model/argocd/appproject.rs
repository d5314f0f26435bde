//! AppProject bounds, matched as Argo CD matches them (`pkg/apis/application/v1alpha1`
//! `app_project_types.go`: `globMatch`, `isDestinationMatched`, `IsSourcePermitted`,
//! `IsAppNamespacePermitted`; `util/git` `NormalizeGitURL`).
//!
//! Globs follow `github.com/gobwas/glob`: `*` is any run of non-separator characters, `**` any
//! run, `?` one non-separator character, `[a-z]`/`[!a-z]` classes, `{a,b}` alternatives, `\`
//! escapes. Destinations match without separators, `sourceRepos` with `/`. A pattern that does
//! not compile matches nothing.
//!
//! A destination's cluster is known by its server URL and its name. The repository usually
//! knows only one of them (the other lives in a cluster secret): matching is then three-valued
//! and an undecided result is `None`.

/// One glob element.
#[derive(Clone, Debug)]
enum Tok {
    Lit(char),
    /// `*`: any run without separators.
    Any,
    /// `**`: any run.
    Super,
    /// `?`: one character that is not a separator.
    Single,
    Class {
        negated: bool,
        items: Vec<(char, char)>,
    },
    Alt(Vec<Vec<Tok>>),
}

/// Compiles a gobwas glob; `None` when it does not compile.
fn compile(pattern: &str) -> Option<Vec<Tok>> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut pos = 0;
    let toks = parse_seq(&chars, &mut pos, false)?;
    (pos == chars.len()).then_some(toks)
}

fn parse_seq(c: &[char], pos: &mut usize, in_alt: bool) -> Option<Vec<Tok>> {
    let mut out = Vec::new();
    while *pos < c.len() {
        let ch = c[*pos];
        match ch {
            '*' => {
                if c.get(*pos + 1) == Some(&'*') {
                    out.push(Tok::Super);
                    *pos += 2;
                } else {
                    out.push(Tok::Any);
                    *pos += 1;
                }
            }
            '?' => {
                out.push(Tok::Single);
                *pos += 1;
            }
            '\\' => {
                let next = *c.get(*pos + 1)?;
                out.push(Tok::Lit(next));
                *pos += 2;
            }
            '[' => {
                *pos += 1;
                let negated = c.get(*pos) == Some(&'!');
                if negated {
                    *pos += 1;
                }
                let mut items = Vec::new();
                loop {
                    let lo = *c.get(*pos)?;
                    if lo == ']' {
                        *pos += 1;
                        break;
                    }
                    let lo = if lo == '\\' {
                        *pos += 1;
                        *c.get(*pos)?
                    } else {
                        lo
                    };
                    *pos += 1;
                    if c.get(*pos) == Some(&'-') && c.get(*pos + 1).is_some_and(|&x| x != ']') {
                        let hi = c[*pos + 1];
                        *pos += 2;
                        if hi < lo {
                            return None;
                        }
                        items.push((lo, hi));
                    } else {
                        items.push((lo, lo));
                    }
                }
                if items.is_empty() {
                    return None;
                }
                out.push(Tok::Class { negated, items });
            }
            '{' => {
                *pos += 1;
                let mut alts = Vec::new();
                loop {
                    alts.push(parse_seq(c, pos, true)?);
                    match c.get(*pos) {
                        Some(',') => *pos += 1,
                        Some('}') => {
                            *pos += 1;
                            break;
                        }
                        _ => return None,
                    }
                }
                out.push(Tok::Alt(alts));
            }
            ',' | '}' if in_alt => return Some(out),
            ']' | '}' => return None,
            _ => {
                out.push(Tok::Lit(ch));
                *pos += 1;
            }
        }
    }
    if in_alt {
        // An unclosed `{`.
        return None;
    }
    Some(out)
}

fn match_toks(toks: &[Tok], text: &[char], sep: Option<char>) -> bool {
    let Some((first, rest)) = toks.split_first() else {
        return text.is_empty();
    };
    let is_sep = |ch: char| sep == Some(ch);
    match first {
        Tok::Lit(l) => text.first() == Some(l) && match_toks(rest, &text[1..], sep),
        Tok::Single => text
            .first()
            .is_some_and(|&ch| !is_sep(ch) && match_toks(rest, &text[1..], sep)),
        Tok::Class { negated, items } => text.first().is_some_and(|&ch| {
            let inside = items.iter().any(|&(lo, hi)| lo <= ch && ch <= hi);
            inside != *negated && match_toks(rest, &text[1..], sep)
        }),
        Tok::Any | Tok::Super => {
            for i in 0..=text.len() {
                if match_toks(rest, &text[i..], sep) {
                    return true;
                }
                if i < text.len() && matches!(first, Tok::Any) && is_sep(text[i]) {
                    return false;
                }
            }
            false
        }
        Tok::Alt(alts) => alts.iter().any(|alt| {
            let mut seq = alt.clone();
            seq.extend_from_slice(rest);
            match_toks(&seq, text, sep)
        }),
    }
}

/// gobwas `glob.Match(pattern, text, separators...)`.
#[must_use]
pub fn glob(pattern: &str, text: &str, sep: Option<char>) -> bool {
    // The common patterns, without compiling: a literal, and a literal then one `*`.
    const META: &[char] = &['*', '?', '[', ']', '{', '}', '\\'];
    if !pattern.contains(META) {
        return pattern == text;
    }
    if let Some(prefix) = pattern.strip_suffix('*')
        && !prefix.contains(META)
    {
        return text
            .strip_prefix(prefix)
            .is_some_and(|rest| sep.is_none_or(|s| !rest.contains(s)));
    }
    glob_compiled(pattern, text, sep)
}

fn glob_compiled(pattern: &str, text: &str, sep: Option<char>) -> bool {
    let Some(toks) = compile(pattern) else {
        return false;
    };
    let text: Vec<char> = text.chars().collect();
    match_toks(&toks, &text, sep)
}

/// Argo CD's `globMatch`.
#[must_use]
pub fn glob_match(pattern: &str, val: &str, allow_negation: bool, sep: Option<char>) -> bool {
    if allow_negation && is_deny(pattern) {
        return !glob(&pattern[1..], val, sep);
    }
    if pattern == "*" {
        return true;
    }
    glob(pattern, val, sep)
}

#[must_use]
pub fn is_deny(pattern: &str) -> bool {
    pattern.starts_with('!')
}

/// Argo CD's `git.NormalizeGitURL`: lowercase, `git@host:path` as `host/path`, no `.git`,
/// `""` when Go's `url.Parse` would fail (a non-numeric port, a bad host character).
///
/// Kept apart from [`crate::model::paths::normalize_url`] on purpose: `sourceRepos` globs are
/// matched against this exact string (the `https://` scheme and the port stay, a bad URL
/// matches nothing), so it must reproduce Argo CD byte for byte, where `paths::normalize_url`
/// answers the looser "same repository?" question.
#[must_use]
pub fn normalize_git_url(repo: &str) -> String {
    let mut repo = repo.trim().to_lowercase();
    if is_ssh_url(&repo) && !repo.starts_with("ssh://") {
        repo = format!("ssh://{}", repo.replacen(':', "/", 1));
    }
    if let Some(r) = repo.strip_suffix(".git") {
        repo.truncate(r.len());
    }
    let Some(normalized) = go_url_string(&repo) else {
        return String::new();
    };
    normalized
        .strip_prefix("ssh://")
        .map_or(normalized.clone(), str::to_string)
}

/// `^(ssh://)?([^/:]*?)@[^@]+$`
fn is_ssh_url(url: &str) -> bool {
    let rest = url.strip_prefix("ssh://").unwrap_or(url);
    let Some(at) = rest.find('@') else {
        return false;
    };
    let user = &rest[..at];
    let after = &rest[at + 1..];
    !user.contains(['/', ':']) && !after.is_empty() && !after.contains('@')
}

/// What Go's `url.Parse(s).String()` gives for the URLs that matter here; `None` on a parse
/// error.
fn go_url_string(s: &str) -> Option<String> {
    if s.chars().any(char::is_control) {
        return None;
    }
    let (prefix, authority, path) = match s.find("://") {
        Some(i) => {
            let after = &s[i + 3..];
            let end = after.find(['/', '?', '#']).unwrap_or(after.len());
            (&s[..i + 3], &after[..end], &after[end..])
        }
        None => ("", "", s),
    };
    if !prefix.is_empty() {
        let host = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        if !host.starts_with('[') {
            if let Some((_, port)) = host.rsplit_once(':') {
                if !port.chars().all(|c| c.is_ascii_digit()) {
                    return None;
                }
            }
            let allowed = |c: char| {
                c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:[]<>\"%".contains(c) || !c.is_ascii()
            };
            if !host.chars().all(allowed) {
                return None;
            }
        }
    }
    // The path is re-escaped when it holds characters a URL path may not keep.
    let (path_only, tail) = match path.find(['?', '#']) {
        Some(i) => (&path[..i], &path[i..]),
        None => (path, ""),
    };
    let keeps =
        |c: char| c.is_ascii_alphanumeric() || "-._~!$&'()*+,;=:@[]/%".contains(c) || !c.is_ascii();
    let path_out = if path_only.chars().all(keeps) {
        path_only.to_string()
    } else {
        let mut o = String::new();
        for c in path_only.chars() {
            if keeps(c) && c != '%' {
                o.push(c);
            } else {
                let mut buf = [0u8; 4];
                for b in c.encode_utf8(&mut buf).bytes() {
                    o.push_str(&format!("%{b:02X}"));
                }
            }
        }
        o
    };
    Some(format!("{prefix}{authority}{path_out}{tail}"))
}

/// Argo CD's `IsSourcePermitted` for one `repoURL`.
#[must_use]
pub fn is_source_permitted<S: AsRef<str>>(source_repos: &[S], repo_url: &str) -> bool {
    SourceRepos::new(source_repos).permits(repo_url)
}

/// A project's `sourceRepos`, normalised once for many `repoURL`s.
#[derive(Clone, Debug)]
pub struct SourceRepos(Vec<String>);

impl SourceRepos {
    #[must_use]
    pub fn new<S: AsRef<str>>(source_repos: &[S]) -> SourceRepos {
        SourceRepos(
            source_repos
                .iter()
                .map(|r| match r.as_ref().strip_prefix('!') {
                    Some(rest) => format!("!{}", normalize_git_url(rest)),
                    None => normalize_git_url(r.as_ref()),
                })
                .collect(),
        )
    }

    /// Argo CD's `IsSourcePermitted` for one `repoURL`.
    #[must_use]
    pub fn permits(&self, repo_url: &str) -> bool {
        let src = normalize_git_url(repo_url);
        let mut any = false;
        for normalized in &self.0 {
            if glob_match(normalized, &src, true, Some('/')) {
                any = true;
            } else if is_deny(normalized) {
                return false;
            }
        }
        any
    }
}

/// A project `destinations` item (absent fields are `""`, as in Go).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProjectDest {
    pub server: String,
    pub name: String,
    pub namespace: String,
}

/// An Application's destination cluster and namespace. `None`: not known from the repository.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct AppDest {
    pub server: Option<String>,
    pub name: Option<String>,
    pub namespace: String,
}

/// Argo CD's `isDestinationMatched`, three-valued: `None` when the answer depends on the part
/// of the cluster (server or name) the repository does not know.
#[must_use]
pub fn is_destination_matched(items: &[ProjectDest], dst: &AppDest) -> Option<bool> {
    // Possible states of the loop: (returned false, anyDestinationMatched).
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum State {
        Running(bool),
        Denied,
    }
    let mut states = vec![State::Running(false)];
    let worlds = |v: &Option<String>, pattern: &str| -> Vec<bool> {
        match v {
            Some(s) => vec![!s.is_empty() && glob_match(pattern, s, true, None)],
            None => vec![false, true],
        }
    };
    for item in items {
        let ns_m = glob_match(&item.namespace, &dst.namespace, true, None);
        let mut next = Vec::new();
        for name_m in worlds(&dst.name, &item.name) {
            for server_m in worlds(&dst.server, &item.server) {
                let matched = (server_m || name_m) && ns_m;
                let denied = (!name_m && is_deny(&item.name))
                    || (!server_m && is_deny(&item.server)) && ns_m
                    || (!ns_m && is_deny(&item.namespace) && server_m);
                for &s in &states {
                    let n = match s {
                        State::Denied => State::Denied,
                        State::Running(_) if matched => State::Running(true),
                        State::Running(_) if denied => State::Denied,
                        State::Running(any) => State::Running(any),
                    };
                    if !next.contains(&n) {
                        next.push(n);
                    }
                }
            }
        }
        states = next;
    }
    let outcome = |s: &State| matches!(s, State::Running(true));
    let first = outcome(&states[0]);
    states.iter().all(|s| outcome(s) == first).then_some(first)
}

/// Argo CD's `IsAppNamespacePermitted` (`/regex/` entries are not evaluated: `None`).
#[must_use]
pub fn is_app_namespace_permitted<S: AsRef<str>>(
    source_namespaces: &[S],
    app_namespace: &str,
    controller_namespace: &str,
) -> Option<bool> {
    if app_namespace.is_empty() || app_namespace == controller_namespace {
        return Some(true);
    }
    let mut unknown = false;
    for ns in source_namespaces {
        let ns = ns.as_ref();
        if ns.len() > 1 && ns.starts_with('/') && ns.ends_with('/') {
            unknown = true;
            continue;
        }
        if glob(ns, app_namespace, None) {
            return Some(true);
        }
    }
    if unknown { None } else { Some(false) }
}

/// Go's `filepath.Match` on group and kind names (no `/` in them): `*`, `?`, classes with `^`
/// or `!`, `\` escapes. Bad patterns match nothing.
#[must_use]
pub fn filepath_match(pattern: &str, name: &str) -> bool {
    // Reuse the glob matcher after translating `[^` to `[!`; `{` is literal in filepath.
    let mut p = String::with_capacity(pattern.len());
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' | '}' | ',' => {
                p.push('\\');
                p.push(c);
            }
            '[' => {
                p.push('[');
                if chars.peek() == Some(&'^') {
                    chars.next();
                    p.push('!');
                }
            }
            '*' => {
                p.push('*');
                // `**` is two stars in filepath: the same as one.
                while chars.peek() == Some(&'*') {
                    chars.next();
                }
            }
            _ => p.push(c),
        }
    }
    glob(&p, name, Some('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literal_and_prefix_patterns_match_as_compiled_ones() {
        let patterns = ["team-a", "team-a-*", "a*", "", "x,y", "é*", "a/*"];
        let texts = [
            "team-a",
            "team-a-b",
            "team-a-b/c",
            "a",
            "",
            "x,y",
            "éa",
            "a/b",
            "a/b/c",
        ];
        for p in patterns {
            for t in texts {
                for sep in [None, Some('/')] {
                    assert_eq!(glob(p, t, sep), glob_compiled(p, t, sep), "{p} {t} {sep:?}");
                }
            }
        }
    }

    fn pd(server: &str, name: &str, namespace: &str) -> ProjectDest {
        ProjectDest {
            server: server.into(),
            name: name.into(),
            namespace: namespace.into(),
        }
    }

    fn ad(server: &str, name: &str, namespace: &str) -> AppDest {
        AppDest {
            server: Some(server.into()),
            name: Some(name.into()),
            namespace: namespace.into(),
        }
    }

    const K: &str = "https://kubernetes.default.svc";

    /// Cases of Argo CD's `TestAppProject_IsDestinationPermitted` and
    /// `TestAppProject_IsNegatedDestinationPermitted` (the cluster is known exactly as given).
    #[test]
    fn destinations_match_like_argo_cd() {
        let eks = "https://eks-cluster-endpoint.ap-southeast-1.eks.amazonaws.com";
        let cases: Vec<(Vec<ProjectDest>, AppDest, bool)> = vec![
            (vec![pd(K, "", "default")], ad(K, "", "default"), true),
            (vec![pd(K, "", "default")], ad(K, "", "kube-system"), false),
            (
                vec![pd("https://my-cluster", "", "default")],
                ad(K, "", "default"),
                false,
            ),
            (vec![pd(K, "", "*")], ad(K, "", "kube-system"), true),
            (
                vec![pd("https://*.default.svc", "", "default")],
                ad(K, "", "default"),
                true,
            ),
            (
                vec![pd("https://team1-*", "", "default")],
                ad("https://test2-dev-cluster", "", "default"),
                false,
            ),
            (vec![pd(K, "", "test-*")], ad(K, "", "test-foo"), true),
            (vec![pd(K, "", "test-*")], ad(K, "", "test"), false),
            (vec![pd("*", "", "*")], ad(K, "", "test"), true),
            (vec![pd("", "test", "*")], ad("", "test", "test"), true),
            (vec![pd("", "test2", "*")], ad("", "test", "test"), false),
            (
                vec![
                    pd(K, "host-cluster", "!{kube-system,argocd}"),
                    pd(eks, "destination-cluster-01", "*"),
                ],
                ad(eks, "", "kube-system"),
                true,
            ),
            // Negated.
            (
                vec![pd(&format!("!{K}"), "", "default")],
                ad(K, "", "default"),
                false,
            ),
            (vec![pd(K, "", "!default")], ad(K, "", "kube-system"), true),
            (
                vec![pd("!https://my-cluster", "", "default")],
                ad(K, "", "default"),
                true,
            ),
            (
                vec![pd(&format!("!{K}"), "", "*")],
                ad(K, "", "kube-system"),
                false,
            ),
            (
                vec![pd("!https://*.default.svc", "", "default")],
                ad(K, "", "default"),
                false,
            ),
            (
                vec![pd("!https://team1-*", "", "default")],
                ad("https://test2-dev-cluster", "", "default"),
                true,
            ),
            (vec![pd(K, "", "!test-*")], ad(K, "", "test-foo"), false),
            (vec![pd(K, "", "!test-*")], ad(K, "", "test"), true),
            (vec![pd("", "!test", "*")], ad("", "test", "test"), false),
            (vec![pd("", "!test2", "*")], ad("", "test", "test"), true),
            (
                vec![pd("*", "", "kube-system"), pd("*", "", "!kube-system")],
                ad(K, "", "kube-system"),
                false,
            ),
            (
                vec![pd("*", "", "*"), pd("*", "", "!kube-system")],
                ad(K, "", "kube-system"),
                false,
            ),
            (
                vec![pd(K, "", "*"), pd(&format!("!{K}"), "", "*")],
                ad(K, "", "kube-system"),
                false,
            ),
            (
                vec![pd("*", "", "*"), pd(&format!("!{K}"), "", "kube-system")],
                ad(K, "", "kube-system"),
                false,
            ),
            (
                vec![
                    pd("*", "", "*"),
                    pd(&format!("!{K}"), "", "kube-system"),
                    pd("*", "", "!kube-system"),
                ],
                ad(K, "", "kube-system"),
                false,
            ),
            (
                vec![
                    pd("*", "", "*"),
                    pd(&format!("!{K}"), "", "kube-system"),
                    pd("*", "", "!kube-system"),
                ],
                ad(K, "", "default"),
                true,
            ),
            (
                vec![
                    pd("*", "", "*"),
                    pd(&format!("!{K}"), "", "kube-system"),
                    pd("*", "", "!kube-system"),
                ],
                ad("https://test-dev-cluster", "", "kube-system"),
                false,
            ),
            (
                vec![pd("", "test", "*"), pd("", "!test", "*")],
                ad("", "test", "test"),
                false,
            ),
            (
                vec![pd("*", "", "test"), pd("!https://test-server", "", "other")],
                ad("https://test-server", "", "test"),
                true,
            ),
            (
                vec![pd("*", "", "*"), pd("https://test-server", "", "!other")],
                ad("https://other-test-server", "", "other"),
                true,
            ),
        ];
        for (i, (items, dst, want)) in cases.iter().enumerate() {
            assert_eq!(
                is_destination_matched(items, dst),
                Some(*want),
                "case {i}: {dst:?} against {items:?}"
            );
        }
    }

    #[test]
    fn an_unknown_half_of_the_cluster_decides_only_when_it_cannot_matter() {
        let name_only = |name: &str, ns: &str| AppDest {
            server: None,
            name: Some(name.into()),
            namespace: ns.into(),
        };
        // The project lists the cluster only by server: undecided.
        assert_eq!(
            is_destination_matched(&[pd(K, "", "*")], &name_only("prod", "team-a")),
            None
        );
        // The namespace fails on every item: decided.
        assert_eq!(
            is_destination_matched(
                &[pd(K, "", "team-a-*"), pd("", "prod", "team-a-*")],
                &name_only("prod", "other")
            ),
            Some(false)
        );
        assert_eq!(
            is_destination_matched(
                &[pd("", "prod", "team-a-*")],
                &name_only("prod", "team-a-x")
            ),
            Some(true)
        );
    }

    /// `TestAppProject_IsSourcePermitted` and `TestAppProject_IsNegatedSourcePermitted`.
    #[test]
    fn sources_match_like_argo_cd() {
        let cases: &[(&[&str], &str, bool)] = &[
            (&["*"], "https://github.com/argoproj/test.git", true),
            (
                &["https://github.com/argoproj/test.git"],
                "https://github.com/argoproj/test.git",
                true,
            ),
            (
                &["ssh://git@GITHUB.com:argoproj/test"],
                "ssh://git@github.com:argoproj/test",
                true,
            ),
            (
                &["https://github.com/argoproj/*"],
                "https://github.com/argoproj/argoproj.git",
                true,
            ),
            (
                &[
                    "https://github.com/test1/test.git",
                    "https://github.com/test2/test.git",
                ],
                "https://github.com/test2/test.git",
                true,
            ),
            (
                &["https://github.com/argoproj/test1.git"],
                "https://github.com/argoproj/test2.git",
                false,
            ),
            (
                &["https://github.com/argoproj/*.git"],
                "https://github.com/argoproj1/test2.git",
                false,
            ),
            (
                &["https://github.com/argoproj/foo"],
                "https://github.com/argoproj/foo1",
                false,
            ),
            (
                &["https://gitlab.com/group/*"],
                "https://gitlab.com/group/repo/owner",
                false,
            ),
            (
                &["https://gitlab.com/group/*/*"],
                "https://gitlab.com/group/repo/owner",
                true,
            ),
            (
                &["https://gitlab.com/group/*/*/*"],
                "https://gitlab.com/group/sub-group/repo/owner",
                true,
            ),
            (
                &["https://gitlab.com/group/**"],
                "https://gitlab.com/group/sub-group/repo/owner",
                true,
            ),
            // Negated.
            (
                &["!https://github.com/argoproj/test.git"],
                "https://github.com/argoproj/test.git",
                false,
            ),
            (
                &["!ssh://git@GITHUB.com:argoproj/test"],
                "ssh://git@github.com:argoproj/test",
                false,
            ),
            (
                &["!https://github.com/argoproj/*"],
                "https://github.com/argoproj/argoproj.git",
                false,
            ),
            (
                &[
                    "https://github.com/test1/test.git",
                    "!https://github.com/test2/test.git",
                ],
                "https://github.com/test2/test.git",
                false,
            ),
            (
                &["!https://github.com/argoproj/foo*"],
                "https://github.com/argoproj/foo1",
                false,
            ),
            (
                &["!https://gitlab.com/group/*/*"],
                "https://gitlab.com/group/repo/owner",
                false,
            ),
            (
                &["!https://gitlab.com/group/*/*/*"],
                "https://gitlab.com/group/sub-group/repo/owner",
                false,
            ),
            (
                &["!https://gitlab.com/group/**"],
                "https://gitlab.com/group/sub-group/repo/owner",
                false,
            ),
            (
                &["https://github.com/argoproj/test1.git", "*"],
                "https://github.com/argoproj/test2.git",
                true,
            ),
            (
                &["!https://github.com/argoproj/*.git", "*"],
                "https://github.com/argoproj1/test2.git",
                true,
            ),
        ];
        for (repos, url, want) in cases {
            assert_eq!(
                is_source_permitted(repos, url),
                *want,
                "{url} against {repos:?}"
            );
        }
    }

    /// `TestGlobMatch`, plus gobwas syntax.
    #[test]
    fn globs_match_like_gobwas() {
        let cases: &[(&str, &str, bool, bool)] = &[
            ("foo", "foo", false, true),
            ("foo*", "foobar", false, true),
            ("foo*", "bar", false, false),
            ("*", "anything", false, true),
            ("!foo", "foo", true, false),
            ("!foo", "bar", true, true),
            ("!foo", "foo", false, false),
            ("!foo", "!foo", false, true),
            ("{a,b}-*", "b-x", false, true),
            ("[a-c]?", "bz", false, true),
            ("[!a-c]?", "bz", false, false),
            ("ns-[", "ns-[", false, false),
        ];
        for (p, v, neg, want) in cases {
            assert_eq!(glob_match(p, v, *neg, None), *want, "{p} vs {v}");
        }
        assert!(!glob("a/*", "a/b/c", Some('/')));
        assert!(glob("a/**", "a/b/c", Some('/')));
        assert!(glob("a/*", "a/b/c", None));
    }

    /// `TestAppProjectIsSourceNamespacePermitted`.
    #[test]
    fn app_namespaces_match_like_argo_cd() {
        assert_eq!(
            is_app_namespace_permitted(&["other-ns"], "argocd", "argocd"),
            Some(true)
        );
        assert_eq!(
            is_app_namespace_permitted(&["other-ns"], "some-ns", "some-ns"),
            Some(true)
        );
        assert_eq!(
            is_app_namespace_permitted(&["other-ns"], "", "argocd"),
            Some(true)
        );
        let none: [&str; 0] = [];
        assert_eq!(
            is_app_namespace_permitted(&none, "some-ns", "argocd"),
            Some(false)
        );
        assert_eq!(
            is_app_namespace_permitted(&["some-ns"], "some-ns", "argocd"),
            Some(true)
        );
        assert_eq!(
            is_app_namespace_permitted(&["some-ns"], "other-ns", "argocd"),
            Some(false)
        );
        for (ns, want) in [
            ("some-ns1", true),
            ("some-ns2", true),
            ("someotherns", false),
        ] {
            assert_eq!(
                is_app_namespace_permitted(&["some-*"], ns, "argocd"),
                Some(want)
            );
        }
    }

    #[test]
    fn urls_normalise_like_argo_cd() {
        assert_eq!(
            normalize_git_url("git@GitHub.com:org/repo.git"),
            "git@github.com/org/repo"
        );
        assert_eq!(
            normalize_git_url("https://github.com/org/repo.git"),
            "https://github.com/org/repo"
        );
        // Go's url.Parse rejects the port `argoproj`.
        assert_eq!(normalize_git_url("ssh://git@github.com:argoproj/test"), "");
        assert_eq!(
            normalize_git_url("https://github.com/org/{a,b}"),
            "https://github.com/org/%7Ba,b%7D"
        );
    }

    #[test]
    fn filepath_patterns() {
        assert!(filepath_match("*", "Namespace"));
        assert!(filepath_match("", ""));
        assert!(!filepath_match("", "apps"));
        assert!(filepath_match("Name*", "Namespace"));
        assert!(filepath_match("[^a]pps", "bpps"));
    }
}
