//! Which repository a source points at, and repository-relative path arithmetic.

use std::path::Path;

/// Normalises a Git URL so that the HTTPS, `ssh://` and scp-like (`git@host:a/b.git`) forms
/// of one repository compare equal: `host/a/b`, host lowercased, without user, port, scheme,
/// `.git` suffix or trailing slash.
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
    let host = host.split(':').next().unwrap_or(host).to_ascii_lowercase();
    let path = path.trim_matches('/');
    let path = path
        .strip_suffix(".git")
        .unwrap_or(path)
        .trim_end_matches('/');
    if path.is_empty() {
        host
    } else {
        format!("{host}/{path}")
    }
}

/// The `url` of `[remote "origin"]` in the repository's Git config, if any. A `.git` file
/// (worktree or submodule) is followed to its git directory and its common directory.
#[must_use]
pub fn git_origin(root: &Path) -> Option<String> {
    let dot_git = root.join(".git");
    let git_dir = if dot_git.is_file() {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let dir = text.trim().strip_prefix("gitdir:")?.trim().to_string();
        let dir = root.join(dir);
        match std::fs::read_to_string(dir.join("commondir")) {
            Ok(common) => dir.join(common.trim()),
            Err(_) => dir,
        }
    } else {
        dot_git
    };
    let text = std::fs::read_to_string(git_dir.join("config")).ok()?;
    origin_from_config(&text)
}

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
    let mut parts: Vec<&str> = Vec::new();
    let start = if rel.starts_with('/') { "" } else { base };
    for seg in start.split('/').chain(rel.split('/')) {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            s => parts.push(s),
        }
    }
    Some(parts.join("/"))
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
