//! Repository URLs, the origin remote, and repository-relative path arithmetic.

use std::path::Path;

/// Normalises a repository URL so that the HTTPS, `ssh://` and scp-like (`git@host:a/b.git`)
/// forms of one repository compare equal: `host/a/b`, lowercased, without user, password,
/// port, scheme, `.git` suffix or trailing slash. This answers "is it the same repository?"
/// for the resolver (`repoURL` against `repo_urls` and `origin`) and for CI write-backs (a
/// push URL against `repo_urls`). The path is lowercased too: GitHub, GitLab, Bitbucket and
/// Gitea route repository paths case-insensitively, and Argo CD's `NormalizeGitURL` lowercases.
#[must_use]
pub fn normalize_url(url: &str) -> String {
    let url = url.trim();
    let (rest, scp) = match url.find("://") {
        Some(i) => (&url[i + 3..], false),
        None => (url, true),
    };
    // Drop `user[:password]@`.
    let rest = match rest.find('@') {
        Some(at) if rest[..at].find('/').is_none() => &rest[at + 1..],
        _ => rest,
    };
    let (host, path) = if scp && !rest.contains("://") {
        // `host:a/b` (scp-like) or `host/a/b`.
        match (rest.find(':'), rest.find('/')) {
            (Some(c), Some(s)) if c < s => (&rest[..c], &rest[c + 1..]),
            (Some(c), None) => (&rest[..c], &rest[c + 1..]),
            (_, Some(s)) => (&rest[..s], &rest[s + 1..]),
            (None, None) => (rest, ""),
        }
    } else {
        match rest.find('/') {
            Some(s) => (&rest[..s], &rest[s + 1..]),
            None => (rest, ""),
        }
    };
    let host = host.split(':').next().unwrap_or(host);
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    let joined = if path.is_empty() {
        host.to_string()
    } else {
        format!("{host}/{path}")
    };
    joined.to_ascii_lowercase()
}

/// A URL as it may be shown to a user: without the `user:token@` part, so no finding prints a
/// credential. The scheme, host, port and path are kept as written.
#[must_use]
pub fn without_credentials(url: &str) -> String {
    let u = url.trim();
    let (scheme, rest) = u.split_once("://").map_or(("", u), |(s, r)| (s, r));
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    let mut out = String::new();
    if !scheme.is_empty() {
        out.push_str(scheme);
        out.push_str("://");
    }
    out.push_str(host);
    if !path.is_empty() {
        out.push('/');
        out.push_str(path);
    }
    out
}

/// The `url` of `[remote "origin"]` in the repository's Git config, if any. A `.git` file
/// (worktree or submodule) is followed to its git directory and its common directory.
#[must_use]
pub fn git_origin(root: &Path) -> Option<String> {
    // Git's own files, which a worktree keeps outside the root: read where they are, but only
    // as regular files of a sensible size (a FIFO would block the run, `/dev/zero` fill memory).
    let read = |p: &Path| crate::source::fs::read_file_text(p, GIT_FILE_BYTES).ok();
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_file() {
        let text = read(&dot_git)?;
        let dir = text.trim().strip_prefix("gitdir:")?.trim().to_string();
        let dir = root.join(dir);
        match read(&dir.join("commondir")) {
            Some(common) => dir.join(common.trim()),
            None => dir,
        }
    } else {
        dot_git
    };
    let text = read(&git_dir.join("config"))?;
    origin_from_config(&text)
}

/// The normalised URLs of this repository: config `repo_urls`, else the git `origin` remote
/// (what `init` says `repo_urls` defaults to); empty when neither is known.
#[must_use]
pub fn this_repository_urls(repo_urls: &[String], origin: Option<&str>) -> Vec<String> {
    if repo_urls.is_empty() {
        origin.map(normalize_url).into_iter().collect()
    } else {
        repo_urls.iter().map(|u| normalize_url(u)).collect()
    }
}

/// The largest Git file [`git_origin`] reads.
const GIT_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// Reads `[remote "origin"] url = ...` from Git config text.
#[must_use]
pub fn origin_from_config(text: &str) -> Option<String> {
    let mut in_origin = false;
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with('[') {
            let inner = line.trim_start_matches('[').trim_end_matches(']');
            let mut parts = inner.splitn(2, char::is_whitespace);
            let section = parts.next().unwrap_or("").to_ascii_lowercase();
            let sub = parts.next().unwrap_or("").trim().trim_matches('"');
            in_origin = section == "remote" && sub == "origin";
            continue;
        }
        if in_origin {
            if let Some((k, v)) = line.split_once('=') {
                if k.trim().eq_ignore_ascii_case("url") {
                    return Some(v.trim().trim_matches('"').to_string());
                }
            }
        }
    }
    None
}

/// Joins a `/`-separated `rel` onto the repository folder `base` (`""` is the root) and
/// normalises `.` and `..`. A leading `/` starts from the root. Returns `None` when the
/// result would leave the root.
#[must_use]
pub fn join(base: &str, rel: &str) -> Option<String> {
    let start = if rel.starts_with('/') { "" } else { base };
    let parts = fold(start.split('/').chain(rel.split('/')), false)?;
    Some(parts.join("/"))
}

/// The folder a shell is in after `cd dir` from `cwd` (`None`: where the job started), with
/// `.` and `..` folded. Unlike [`join`], this is not confined to the repository: a CI job
/// clones and works elsewhere (`cd /tmp`), so absolute paths stay absolute and a `..` above
/// the start is kept.
#[must_use]
pub fn join_shell_dir(cwd: Option<&str>, dir: &str) -> String {
    let joined = match cwd {
        Some(c) if !dir.starts_with('/') && !c.is_empty() => format!("{c}/{dir}"),
        _ => dir.to_string(),
    };
    let body = fold(joined.split('/'), true).unwrap_or_default().join("/");
    if joined.starts_with('/') {
        format!("/{body}")
    } else {
        body
    }
}

/// Path segments with empty and `.` segments dropped and `..` folded. A `..` with nothing
/// left to pop is kept when `keep_above`, else the path is refused (`None`).
fn fold<'s>(segments: impl Iterator<Item = &'s str>, keep_above: bool) -> Option<Vec<&'s str>> {
    let mut parts: Vec<&str> = Vec::new();
    for seg in segments {
        match seg {
            "" | "." => {}
            ".." if parts.last().is_some_and(|l| *l != "..") => {
                parts.pop();
            }
            ".." if keep_above => parts.push(".."),
            ".." => return None,
            s => parts.push(s),
        }
    }
    Some(parts)
}

/// The folder of a repository-relative file path (`""` for the root).
#[must_use]
pub fn parent(path: &str) -> &str {
    path.rfind('/').map_or("", |i| &path[..i])
}

/// True for references Argo CD, Helm or kustomize fetch from elsewhere (URLs, go-getter).
#[must_use]
pub fn is_remote(s: &str) -> bool {
    s.contains("://")
        || s.starts_with("git@")
        || s.starts_with("github.com/")
        || s.starts_with("gitlab.com/")
        || s.starts_with("bitbucket.org/")
        || s.contains("?ref=")
        || s.contains(".git//")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn https_ssh_and_scp_forms_are_the_same_repository() {
        let want = "gitlab.example.com/platform/cnp-gitops";
        for u in [
            "https://gitlab.example.com/platform/cnp-gitops.git",
            "https://gitlab.example.com/platform/cnp-gitops",
            "https://GitLab.example.com/platform/cnp-gitops/",
            "ssh://git@gitlab.example.com/platform/cnp-gitops",
            "ssh://git@gitlab.example.com:22/platform/cnp-gitops.git",
            "git@gitlab.example.com:platform/cnp-gitops.git",
            "https://user:token@gitlab.example.com/platform/cnp-gitops.git",
        ] {
            assert_eq!(normalize_url(u), want, "{u}");
        }
        assert_ne!(
            normalize_url("https://gitlab.example.com/platform/other.git"),
            want
        );
        // Hosts route repository paths case-insensitively.
        assert_eq!(
            normalize_url("https://gitlab.example.com/Platform/CNP-GitOps.git"),
            want
        );
        assert_eq!(
            normalize_url("https://${GITOPS_HOST}/platform/gitops.git"),
            "${gitops_host}/platform/gitops"
        );
    }

    #[test]
    fn credentials_are_not_shown() {
        assert_eq!(
            without_credentials("https://oauth2:${TOKEN}@gitlab.example.com/g/r.git"),
            "https://gitlab.example.com/g/r.git"
        );
        assert_eq!(without_credentials("git@github.com:a/b"), "github.com:a/b");
        assert_eq!(without_credentials(" h.example/a "), "h.example/a");
    }

    #[test]
    fn shell_dirs_fold_dots_and_keep_what_is_outside() {
        assert_eq!(join_shell_dir(None, "gitops"), "gitops");
        assert_eq!(
            join_shell_dir(Some("/tmp"), "gitops/apps/../x"),
            "/tmp/gitops/x"
        );
        assert_eq!(join_shell_dir(Some("a"), "/abs/./b/"), "/abs/b");
        assert_eq!(join_shell_dir(Some("a"), "../../b"), "../b");
        assert_eq!(join_shell_dir(Some(""), "./"), "");
    }

    #[test]
    fn origin_is_read_from_git_config() {
        let cfg = "[core]\n\tbare = false\n[remote \"upstream\"]\n\turl = https://a/b\n[remote \"origin\"]\n\turl = git@github.com:acme/gitops.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n";
        assert_eq!(
            origin_from_config(cfg).as_deref(),
            Some("git@github.com:acme/gitops.git")
        );
        assert_eq!(origin_from_config("[core]\n"), None);
    }

    #[test]
    fn joins_never_leave_the_root() {
        assert_eq!(
            join("apps/a", "values.yaml").as_deref(),
            Some("apps/a/values.yaml")
        );
        assert_eq!(
            join("apps/a", "../b/v.yaml").as_deref(),
            Some("apps/b/v.yaml")
        );
        assert_eq!(join("apps/a", "/env/v.yaml").as_deref(), Some("env/v.yaml"));
        assert_eq!(join("apps/a", "./").as_deref(), Some("apps/a"));
        assert_eq!(join("apps", "../../etc/passwd"), None);
        assert_eq!(join("", ".."), None);
    }
}
