//! The one glob dialect of user-facing patterns: `include`/`exclude`, a rule's `paths`
//! option, and every other path list a user writes in `.gitops-lint.yaml`.
//!
//! Patterns match root-relative, `/`-separated paths. `*` and `?` never cross a `/`; `**`
//! does. A pattern without `/` also matches a name in any folder (as in `.gitignore`), and a
//! pattern naming a folder also matches everything below it. A leading `./` and a trailing
//! `/` are ignored. (Argo CD's and GitLab's own path patterns keep their own semantics in
//! `model/`: they are what those tools do, not what users of this tool write.)

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// A compiled list of patterns.
#[derive(Clone, Debug, Default)]
pub struct Patterns {
    set: GlobSet,
    empty: bool,
}

impl Patterns {
    /// Compiles `patterns`; an invalid one is returned as `(pattern, reason)`.
    pub fn new(patterns: &[String]) -> Result<Patterns, (String, String)> {
        let mut b = GlobSetBuilder::new();
        for p in patterns {
            let trimmed = p.trim_start_matches("./").trim_end_matches('/');
            let mut add = |pat: &str| -> Result<(), (String, String)> {
                let g = GlobBuilder::new(pat)
                    .literal_separator(true)
                    .build()
                    .map_err(|e| (p.clone(), e.kind().to_string()))?;
                b.add(g);
                Ok(())
            };
            add(trimmed)?;
            if !trimmed.contains('/') {
                add(&format!("**/{trimmed}"))?;
            }
            // `dir` and `dir/**` also select everything below `dir`.
            if !trimmed.ends_with("/**") {
                add(&format!("{trimmed}/**"))?;
            }
        }
        let set = b
            .build()
            .map_err(|e| (patterns.join(", "), e.to_string()))?;
        Ok(Patterns {
            set,
            empty: patterns.is_empty(),
        })
    }

    /// Does a root-relative path match any pattern?
    #[must_use]
    pub fn is_match(&self, rel: &str) -> bool {
        // An empty set matches nothing; asking it still prepares the path (walks ask it for
        // every file).
        !self.empty && self.set.is_match(rel)
    }

    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.empty
    }
}

#[cfg(test)]
mod tests {
    use super::Patterns;

    fn m(pattern: &str, path: &str) -> bool {
        Patterns::new(&[pattern.to_string()])
            .unwrap()
            .is_match(path)
    }

    #[test]
    fn one_dialect() {
        // `*` stays in one folder; `**` crosses folders.
        assert!(m("platform/*.yaml", "platform/a.yaml"));
        assert!(!m("platform/*.yaml", "platform/x/a.yaml"));
        assert!(m("platform/**", "platform/x/a.yaml"));
        // A name without `/` matches anywhere; a folder matches what is below it.
        assert!(m("values.yaml", "apps/web/values.yaml"));
        assert!(m("apps/web", "apps/web/values.yaml"));
        assert!(m("./apps/web/", "apps/web/values.yaml"));
        assert!(!m("apps/we", "apps/web/values.yaml"));
        assert!(Patterns::new(&["a/[".to_string()]).is_err());
    }
}
