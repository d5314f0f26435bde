//! File discovery with the `ignore` crate: honours `.gitignore` and `.git/info/exclude`,
//! keeps hidden CI files, applies include/exclude globs, skips Helm `templates/` folders and
//! other tools' folders ([`TOOL_DIRS`]), and never follows a symlink out of the root.

use std::path::{Path, PathBuf};

use super::glob::Patterns;

/// A YAML file to read.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// Relative to the root, `/`-separated.
    pub rel: String,
    /// The file's path when it is not the root joined with `rel` (a name that is not UTF-8,
    /// which `rel` shows lossily): one path per file is kept, not two.
    pub at: Option<PathBuf>,
}

impl Found {
    /// A file found at `path` under `root`, `rel` being [`relative`]`(root, path)`.
    #[must_use]
    pub fn new(root: &Path, rel: String, path: &Path) -> Found {
        let joined = path.strip_prefix(root).ok().and_then(Path::to_str) == Some(rel.as_str());
        Found {
            at: (!joined).then(|| path.to_path_buf()),
            rel,
        }
    }

    /// The file on disk.
    #[must_use]
    pub fn abs(&self, root: &Path) -> PathBuf {
        self.at.clone().unwrap_or_else(|| root.join(&self.rel))
    }
}

/// What a walk found.
#[derive(Debug, Default)]
pub struct Discovered {
    /// The YAML files to read, sorted.
    pub found: Vec<Found>,
    /// What could not be walked or was not read, sorted.
    pub problems: Vec<WalkProblem>,
    /// The folders holding a `templates` folder (root-relative, sorted): the only charts whose
    /// templates [`chart_templates`] need look for.
    pub with_templates: Vec<String>,
    /// The limit of [`discover_at_most`], when the walk stopped at it: what was found is only
    /// part of the tree.
    pub stopped_at: Option<usize>,
}

/// Something under the root that could not be walked (an unreadable folder, a symlink loop),
/// or that was deliberately not read (`skipped`: a link out of the root).
#[derive(Clone, Debug)]
pub struct WalkProblem {
    pub rel: String,
    pub abs: PathBuf,
    pub reason: String,
    pub skipped: bool,
}

/// Folders that other tools fill with third-party files (a CI job's `CARGO_HOME`, npm, Python
/// virtual environments, Go and Ruby vendoring, Terraform providers): linting them reports on
/// code nobody in the repository wrote. Skipped unless an `include` glob names them.
pub const TOOL_DIRS: &[&str] = &[".cargo", "node_modules", ".venv", "vendor", ".terraform"];

/// Include and exclude globs (the dialect of [`super::glob`]), matched against root-relative
/// paths.
#[derive(Clone, Debug, Default)]
pub struct Filter {
    include: Option<Patterns>,
    exclude: Patterns,
    /// The [`TOOL_DIRS`] that an include glob names as a path segment, so they are walked.
    included_tool_dirs: Vec<&'static str>,
}

impl Filter {
    /// Builds the filter; an invalid glob is returned as `(pattern, reason)`.
    pub fn new(include: &[String], exclude: &[String]) -> Result<Filter, (String, String)> {
        let include_set = if include.is_empty() {
            None
        } else {
            Some(Patterns::new(include)?)
        };
        let included_tool_dirs = TOOL_DIRS
            .iter()
            .copied()
            .filter(|dir| include.iter().any(|p| p.split('/').any(|seg| seg == *dir)))
            .collect();
        Ok(Filter {
            include: include_set,
            exclude: Patterns::new(exclude)?,
            included_tool_dirs,
        })
    }

    /// Whether a folder of this name is another tool's (see [`TOOL_DIRS`]) and not included.
    #[must_use]
    pub fn skips_tool_dir(&self, name: &str) -> bool {
        TOOL_DIRS.contains(&name) && !self.included_tool_dirs.contains(&name)
    }

    #[must_use]
    pub fn accepts(&self, rel: &str) -> bool {
        if self.exclude.is_match(rel) {
            return false;
        }
        self.include.as_ref().is_none_or(|inc| inc.is_match(rel))
    }

    #[must_use]
    pub fn excludes_dir(&self, rel: &str) -> bool {
        self.exclude.is_match(rel)
    }
}

/// YAML by extension, and kustomize's extensionless `Kustomization`. The model's list of
/// kustomization file names (`model::KUSTOMIZATION_FILE_NAMES`) is above this layer; a test
/// beside it checks that every name there is discovered here.
#[must_use]
pub fn is_yaml_name(name: &str) -> bool {
    let ends_with = |suffix: &str| {
        name.len() >= suffix.len()
            && name.as_bytes()[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
    };
    ends_with(".yaml") || ends_with(".yml") || name == "Kustomization"
}

/// Walks `root` and returns the YAML files to check, sorted by relative path, the problems met
/// on the way, and the folders that hold a `templates` folder.
#[must_use]
pub fn discover(root: &Path, filter: &Filter) -> Discovered {
    discover_at_most(root, filter, None)
}

/// Why a walk stopped at `limit` (see [`discover_at_most`]).
#[must_use]
pub fn too_many(root: &Path, limit: usize) -> String {
    format!(
        "{} holds more than {limit} files and folders, too many for one repository",
        root.display()
    )
}

/// [`discover`], stopping after `limit` files and folders (then [`Discovered::stopped_at`] is
/// set): a root found for an editor's file may be a folder far larger than a repository.
#[must_use]
pub fn discover_at_most(root: &Path, filter: &Filter, limit: Option<usize>) -> Discovered {
    let visited = std::sync::atomic::AtomicUsize::new(0);
    let stopped = std::sync::atomic::AtomicBool::new(false);
    let canonical_root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let filter_for_dirs = filter.clone();
    let root_for_filter = root.to_path_buf();
    let with_templates = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let with_templates_in_filter = with_templates.clone();
    // The walk runs on as many threads as the rest of the run (`-j`); the order of what it
    // finds does not matter, both lists are sorted.
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .git_global(false)
        .threads(rayon::current_num_threads())
        .filter_entry(move |e| {
            let is_dir = e.file_type().is_some_and(|t| t.is_dir());
            if !is_dir {
                return true;
            }
            let name = e.file_name();
            if name == ".git"
                || (e.depth() > 0 && filter_for_dirs.skips_tool_dir(&name.to_string_lossy()))
            {
                return false;
            }
            if name == "templates" {
                if let Some(parent) = e.path().parent() {
                    if e.depth() > 0 {
                        with_templates_in_filter
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push(relative(&root_for_filter, parent));
                    }
                    // A Helm chart's templates are Go templates, not YAML.
                    if parent.join("Chart.yaml").is_file() || parent.join("Chart.yml").is_file() {
                        return false;
                    }
                }
            }
            if filter_for_dirs.exclude.is_empty() {
                return true;
            }
            let rel = relative(&root_for_filter, e.path());
            rel.is_empty() || !filter_for_dirs.excludes_dir(&rel)
        })
        .build_parallel();
    let out = std::sync::Mutex::new((Vec::new(), Vec::new()));
    walker.run(|| {
        let out = &out;
        let canonical_root = &canonical_root;
        let (visited, stopped) = (&visited, &stopped);
        Box::new(move |entry| {
            use std::sync::atomic::Ordering;
            if let Some(limit) = limit
                && visited.fetch_add(1, Ordering::Relaxed) >= limit
            {
                stopped.store(true, Ordering::Relaxed);
                return ignore::WalkState::Quit;
            }
            let seen = visit(root, canonical_root, filter, entry);
            if let Some(seen) = seen {
                let mut lists = out
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                match seen {
                    Ok(found) => lists.0.push(found),
                    Err(problem) => lists.1.push(problem),
                }
            }
            ignore::WalkState::Continue
        })
    });
    let (mut found, mut problems): (Vec<Found>, Vec<WalkProblem>) = out
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    found.sort();
    make_names_unique(&mut found);
    problems.sort_by(|a, b| a.rel.cmp(&b.rel));
    let mut with_templates = std::mem::take(
        &mut *with_templates
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    );
    with_templates.sort_unstable();
    Discovered {
        found,
        problems,
        with_templates,
        stopped_at: limit.filter(|_| stopped.into_inner()),
    }
}

/// Names that are not UTF-8 are shown lossily, so two that differ only in their invalid bytes
/// (`caf\xE9.yaml`, `caf\xE8.yaml`) would share one path and one of them would never be
/// checked or fixed: those get their invalid bytes written as `\xNN` instead. `found` is sorted,
/// and stays so.
fn make_names_unique(found: &mut [Found]) {
    let mut i = 0;
    while i < found.len() {
        let same = found[i..]
            .iter()
            .take_while(|f| f.rel == found[i].rel)
            .count();
        if same > 1 {
            for f in &mut found[i..i + same] {
                if let Some(at) = &f.at {
                    f.rel = escaped_rel(&f.rel, at);
                }
            }
        }
        i += same;
    }
    found.sort();
}

/// `rel` with the bytes of `at`'s name that are not UTF-8 written as `\xNN`, for each of its
/// last components that `rel` shows lossily.
fn escaped_rel(rel: &str, at: &Path) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        let depth = rel.split('/').count();
        let parts: Vec<String> = at
            .components()
            .rev()
            .take(depth)
            .map(|c| {
                let mut part = String::new();
                for chunk in c.as_os_str().as_bytes().utf8_chunks() {
                    part.push_str(chunk.valid());
                    for b in chunk.invalid() {
                        part.push_str(&format!("\\x{b:02X}"));
                    }
                }
                part
            })
            .collect();
        parts.into_iter().rev().collect::<Vec<_>>().join("/")
    }
    #[cfg(not(unix))]
    {
        let _ = at;
        rel.to_string()
    }
}

/// One entry of the walk: a YAML file to read, a problem to report, or nothing.
fn visit(
    root: &Path,
    canonical_root: &Path,
    filter: &Filter,
    entry: Result<ignore::DirEntry, ignore::Error>,
) -> Option<Result<Found, WalkProblem>> {
    let entry = match entry {
        Ok(e) => e,
        Err(err) => {
            let path = error_path(&err).unwrap_or_else(|| root.to_path_buf());
            return Some(Err(WalkProblem {
                rel: relative(root, &path),
                abs: path,
                reason: walk_reason(&err),
                skipped: false,
            }));
        }
    };
    let ft = entry.file_type()?;
    let name = entry.file_name().to_string_lossy();
    if ft.is_dir() || !is_yaml_name(&name) {
        return None;
    }
    let rel = relative(root, entry.path());
    if rel.is_empty() || !filter.accepts(&rel) {
        return None;
    }
    let problem = |reason: String, skipped: bool| {
        Some(Err(WalkProblem {
            rel: rel.clone(),
            abs: entry.path().to_path_buf(),
            reason,
            skipped,
        }))
    };
    if ft.is_symlink() {
        // Follow a file link only when its target stays inside the root.
        match entry.path().canonicalize() {
            Ok(target) if !target.starts_with(canonical_root) => {
                return problem(
                    "symbolic link to a file outside the repository root; not followed".into(),
                    true,
                );
            }
            Ok(target) if target.is_file() => {}
            Ok(_) => {
                return problem(
                    "symbolic link to something that is not a regular file".into(),
                    false,
                );
            }
            Err(e) => return problem(format!("broken symbolic link ({e})"), false),
        }
    } else if !ft.is_file() {
        // Reading a FIFO would block forever; devices and sockets are not files either.
        return problem(
            "not a regular file (a FIFO, socket or device)".into(),
            false,
        );
    }
    Some(Ok(Found::new(root, rel, entry.path())))
}

/// Files of one chart's `templates/` folder kept for rendering, at most.
pub const MAX_CHART_TEMPLATES: usize = 2000;

/// The files under `<dir>/templates/` of each chart folder `dirs` (root-relative, from the
/// discovered `Chart.yaml` files): regular files only, no symbolic links, sorted. Helm reads
/// them as Go templates; they are kept so findings on rendered objects can point into them.
#[must_use]
pub fn chart_templates(root: &Path, dirs: &[&str]) -> Vec<Found> {
    use rayon::prelude::*;
    // One listing per chart, most of them of a folder that does not exist: on all threads.
    let mut out: Vec<Found> = dirs
        .par_iter()
        .flat_map_iter(|dir| {
            let base = if dir.is_empty() {
                "templates".to_string()
            } else {
                format!("{dir}/templates")
            };
            regular_files_under(root, &base, MAX_CHART_TEMPLATES)
                .into_iter()
                .map(|(rel, _)| Found { rel, at: None })
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The regular files under `root/rel` (symbolic links not followed), as (`rel/...`, size), at
/// most `limit` of them, in no particular order.
#[must_use]
pub fn regular_files_under(root: &Path, rel: &str, limit: usize) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut stack = vec![rel.to_string()];
    while let Some(rel) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(root.join(&rel)) else {
            continue;
        };
        for e in entries.filter_map(Result::ok) {
            let Ok(meta) = std::fs::symlink_metadata(e.path()) else {
                continue;
            };
            let child = format!("{rel}/{}", e.file_name().to_string_lossy());
            if meta.is_dir() {
                stack.push(child);
            } else if meta.is_file() {
                if out.len() == limit {
                    return out;
                }
                out.push((child, meta.len()));
            }
        }
    }
    out
}

/// `path` relative to `root` with `/` separators (lossy for non-UTF-8 names).
#[must_use]
pub fn relative(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    // What the walker joins is already `/`-separated, without `.` or empty segments.
    #[cfg(unix)]
    if let Some(text) = rel.to_str()
        && !text.starts_with('/')
        && !text
            .split('/')
            .any(|seg| seg.is_empty() || seg == "." || seg == "..")
    {
        return text.to_string();
    }
    let mut out = String::new();
    for (i, c) in rel.components().enumerate() {
        if i > 0 {
            out.push('/');
        }
        out.push_str(&c.as_os_str().to_string_lossy());
    }
    out
}

fn error_path(err: &ignore::Error) -> Option<PathBuf> {
    match err {
        ignore::Error::WithPath { path, .. } => Some(path.clone()),
        ignore::Error::WithDepth { err, .. } | ignore::Error::WithLineNumber { err, .. } => {
            error_path(err)
        }
        ignore::Error::Loop { child, .. } => Some(child.clone()),
        _ => None,
    }
}

fn walk_reason(err: &ignore::Error) -> String {
    match err {
        ignore::Error::WithPath { err, .. }
        | ignore::Error::WithDepth { err, .. }
        | ignore::Error::WithLineNumber { err, .. } => walk_reason(err),
        ignore::Error::Loop { .. } => "symbolic link loop".to_string(),
        ignore::Error::Io(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
            "permission denied".to_string()
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_relative_paths() {
        assert!(is_yaml_name("a.YAML") && is_yaml_name("b.yml") && is_yaml_name("Kustomization"));
        assert!(!is_yaml_name("yaml") && !is_yaml_name("a.yaml.txt") && !is_yaml_name("é.ym"));
        let root = Path::new("/repo");
        assert_eq!(
            relative(root, Path::new("/repo/apps/a.yaml")),
            "apps/a.yaml"
        );
        assert_eq!(relative(root, Path::new("/repo")), "");
        assert_eq!(
            relative(root, Path::new("/repo/./apps//a.yaml")),
            "apps/a.yaml"
        );
    }

    #[test]
    fn a_found_file_keeps_its_own_path_only_when_not_under_the_root() {
        let root = Path::new("/repo");
        let path = Path::new("/repo/apps/a.yaml");
        let found = Found::new(root, relative(root, path), path);
        assert_eq!(found.at, None);
        assert_eq!(found.abs(root), path);
        // `rel` shows a name lossily: the path is kept.
        let found = Found::new(root, "apps/\u{fffd}.yaml".into(), path);
        assert_eq!(found.at.as_deref(), Some(path));
        assert_eq!(found.abs(root), path);
    }

    #[test]
    fn globs_match_like_gitignore() {
        let f = Filter::new(
            &[],
            &[
                "vendor".into(),
                "*.tmpl.yaml".into(),
                "apps/**/secret.yaml".into(),
            ],
        )
        .unwrap();
        assert!(!f.accepts("vendor/a.yaml"));
        assert!(!f.accepts("x/y/z.tmpl.yaml"));
        assert!(!f.accepts("apps/a/b/secret.yaml"));
        assert!(f.accepts("apps/a/values.yaml"));
        let inc = Filter::new(&["apps/**".into()], &[]).unwrap();
        assert!(inc.accepts("apps/a/values.yaml"));
        assert!(!inc.accepts("k8s/a.yaml"));
    }

    #[test]
    fn tool_dirs_are_skipped_unless_included() {
        let f = Filter::new(&[], &[]).unwrap();
        assert!(f.skips_tool_dir("node_modules") && f.skips_tool_dir(".cargo"));
        assert!(!f.skips_tool_dir("apps"));
        let f = Filter::new(&["vendor/charts/**".into(), "apps".into()], &[]).unwrap();
        assert!(!f.skips_tool_dir("vendor"));
        assert!(f.skips_tool_dir(".venv"));
    }

    #[test]
    fn the_walk_skips_chart_templates_and_records_the_folders_that_hold_templates() {
        let dir = tempfile::tempdir().unwrap();
        let write = |rel: &str| {
            let path = dir.path().join(rel);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, "a: 1\n").unwrap();
        };
        write("charts/web/Chart.yaml");
        write("charts/web/templates/deployment.yaml");
        write("charts/api/Chart.yaml");
        write("other/templates/x.yaml");
        let walked = discover(dir.path(), &Filter::default());
        let found: Vec<&str> = walked.found.iter().map(|f| f.rel.as_str()).collect();
        // A chart's templates are Go templates, not YAML; a `templates` folder elsewhere is.
        assert_eq!(
            found,
            [
                "charts/api/Chart.yaml",
                "charts/web/Chart.yaml",
                "other/templates/x.yaml"
            ]
        );
        // Only the chart with a `templates` folder has its templates looked for.
        assert_eq!(walked.with_templates, ["charts/web", "other"]);
        assert_eq!(
            chart_templates(dir.path(), &["charts/api", "charts/web"]),
            [Found {
                rel: "charts/web/templates/deployment.yaml".into(),
                at: None
            }]
        );
    }

    #[test]
    fn a_walk_stops_at_its_limit() {
        let dir = tempfile::tempdir().unwrap();
        for i in 0..20 {
            std::fs::write(dir.path().join(format!("{i}.yaml")), "a: 1\n").unwrap();
        }
        let walked = discover_at_most(dir.path(), &Filter::default(), Some(10));
        assert_eq!(walked.stopped_at, Some(10));
        assert!(walked.found.len() < 10, "{}", walked.found.len());
        let walked = discover_at_most(dir.path(), &Filter::default(), Some(100));
        assert_eq!((walked.stopped_at, walked.found.len()), (None, 20));
    }

    #[cfg(unix)]
    #[test]
    fn names_that_differ_only_in_invalid_bytes_stay_apart() {
        use std::os::unix::ffi::OsStrExt;
        let dir = tempfile::tempdir().unwrap();
        for name in [&b"caf\xe9.yaml"[..], b"caf\xe8.yaml", b"t\xe9.yaml"] {
            std::fs::write(dir.path().join(std::ffi::OsStr::from_bytes(name)), "a: 1\n").unwrap();
        }
        let walked = discover(dir.path(), &Filter::default());
        let rels: Vec<&str> = walked.found.iter().map(|f| f.rel.as_str()).collect();
        // A lossy name that is unique stays lossy.
        assert_eq!(rels, ["caf\\xE8.yaml", "caf\\xE9.yaml", "t\u{fffd}.yaml"]);
        assert!(walked.found.iter().all(|f| f.at.is_some()));
    }

    #[test]
    fn bad_glob_is_an_error() {
        assert!(Filter::new(&["a[".into()], &[]).is_err());
    }
}
