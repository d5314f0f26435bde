//! The glob patterns of `on.push.branches`/`paths` (GitHub) and `rules: changes` (GitLab):
//! `*` stays within a path segment, `**` crosses them, `?` and `[...]` as usual.

/// Whether `text` matches `pattern`; a pattern that does not compile matches nothing.
pub(crate) fn matches(pattern: &str, text: &str) -> bool {
    let pattern = pattern.trim_start_matches("./");
    globset::GlobBuilder::new(pattern)
        .literal_separator(true)
        .build()
        .is_ok_and(|g| g.compile_matcher().is_match(text))
}

/// GitHub's filter list with `!` negations: the last pattern that matches decides.
pub(crate) fn filter(patterns: &[&str], text: &str) -> bool {
    let mut hit = false;
    for p in patterns {
        match p.strip_prefix('!') {
            Some(neg) if matches(neg, text) => hit = false,
            None if matches(p, text) => hit = true,
            _ => {}
        }
    }
    hit
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stars_and_negations() {
        assert!(matches("k8s/**", "k8s/base/kustomization.yaml"));
        assert!(!matches("k8s/*", "k8s/base/kustomization.yaml"));
        assert!(matches("release/*", "release/v1"));
        assert!(!matches("release/*", "release/v1/x"));
        assert!(filter(&["**", "!k8s/**"], "src/main.rs"));
        assert!(!filter(&["**", "!k8s/**"], "k8s/a.yaml"));
    }
}
