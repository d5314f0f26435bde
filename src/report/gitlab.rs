//! `--format gitlab`: the GitLab Code Quality report (the CodeClimate subset GitLab reads),
//! shown by the merge-request widget.

use std::path::Path;

use serde::Serialize;

use super::fingerprint::fingerprints;
use crate::diagnostic::Severity;
use crate::engine::Report;

#[derive(Serialize)]
struct Issue<'a> {
    description: String,
    check_name: &'a str,
    fingerprint: String,
    severity: &'static str,
    location: Location,
}

#[derive(Serialize)]
struct Location {
    path: String,
    lines: Lines,
}

#[derive(Serialize)]
struct Lines {
    begin: usize,
    end: usize,
}

#[must_use]
pub fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Error => "major",
        Severity::Warning => "minor",
        Severity::Info => "info",
    }
}

/// The report with paths relative to the repository root.
#[must_use]
pub fn render(report: &Report) -> String {
    render_from(report, None)
}

/// The report with paths relative to `project_dir` (GitLab's `CI_PROJECT_DIR`) when the
/// repository root is a folder inside it: GitLab reads Code Quality paths from the project's
/// root, and the checked root may be a subfolder of the project.
#[must_use]
pub fn render_from(report: &Report, project_dir: Option<&Path>) -> String {
    let prefix = project_dir.map_or_else(String::new, |dir| prefix(dir, &report.repo.root));
    let sources = &report.repo.sources;
    let fps = fingerprints(&report.repo, &report.diagnostics);
    let issues: Vec<Issue<'_>> = report
        .diagnostics
        .iter()
        .zip(fps)
        .map(|(d, fingerprint)| {
            let f = sources.get(d.span.file);
            Issue {
                description: format!("{}: {}", d.rule, d.message),
                check_name: &d.rule,
                fingerprint,
                severity: severity(d.severity),
                location: Location {
                    path: format!("{prefix}{}", f.path),
                    lines: Lines {
                        begin: f.line_col(d.span.start as usize).line,
                        end: f.line_col(d.span.end as usize).line,
                    },
                },
            }
        })
        .collect();
    let mut s = serde_json::to_string_pretty(&issues).unwrap_or_default();
    s.push('\n');
    s
}

/// `root` as seen from `project_dir`, ending with `/` (`deploy/`), or empty when `root` is not
/// strictly inside it. Both are compared as given and as resolved, for a project folder reached
/// through a symbolic link.
fn prefix(project_dir: &Path, root: &Path) -> String {
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let inside = root
        .strip_prefix(project_dir)
        .ok()
        .map(Path::to_path_buf)
        .or_else(|| {
            canonical(root)
                .strip_prefix(canonical(project_dir))
                .ok()
                .map(Path::to_path_buf)
        });
    let Some(rel) = inside else {
        return String::new();
    };
    let mut out = String::new();
    for part in rel.components() {
        out.push_str(&part.as_os_str().to_string_lossy());
        out.push('/');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::prefix;
    use std::path::Path;

    #[test]
    fn paths_are_prefixed_with_the_root_under_the_project() {
        assert_eq!(prefix(Path::new("/builds/p"), Path::new("/builds/p")), "");
        assert_eq!(
            prefix(Path::new("/builds/p"), Path::new("/builds/p/deploy/prod")),
            "deploy/prod/"
        );
        assert_eq!(prefix(Path::new("/builds/p"), Path::new("/elsewhere")), "");
    }
}
