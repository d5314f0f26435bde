//! GitLab CI pipelines: a root file (`.gitlab-ci.yml`, any `*gitlab-ci.yml`) and the local
//! files it includes, with every job as GitLab assembles it.
//!
//! - `include:` as a string, a list, or `{local: ...}` items; paths are repository-relative
//!   (a leading `/` is optional) and may hold `*` globs; includes are followed recursively.
//!   Project, remote and component includes are not in the repository: their jobs are not
//!   read, and the pipeline lists them (`external_includes`), unless the configuration maps
//!   the project to a path of the repository (`ci.projects`): its `file:`s are then read from
//!   there, as local includes are.
//! - `extends` (several levels, several parents), YAML anchors and merge keys (resolved by the
//!   YAML layer), `!reference [job, key, ...]`, `default:` scripts and `inherit:`.
//! - Variables: global, then `extends` parents, then the job's own.

use std::collections::{BTreeMap, HashSet};

use super::variable_value;
use crate::model::Repository;
use crate::model::{DocKind, paths};
use crate::source::{FileId, Span};
use crate::yaml::{Node, ScalarStyle};

/// Top-level GitLab CI keys that are not jobs.
pub const GITLAB_RESERVED: &[&str] = &[
    "stages",
    "variables",
    "default",
    "include",
    "workflow",
    "image",
    "services",
    "cache",
    "before_script",
    "after_script",
    "types",
    "spec",
];

/// Most `extends` / `!reference` levels followed (GitLab allows 11 and 10).
const MAX_DEPTH: usize = 12;

/// Most nested `include:` levels followed (GitLab allows 100 includes in all).
const MAX_INCLUDE_DEPTH: usize = 12;

/// One GitLab pipeline definition.
#[derive(Debug)]
pub struct GitlabPipeline {
    /// The GitLab CI file the pipeline starts from.
    pub root: FileId,
    /// Files read: the root, then the files it includes (depth first, in include order).
    pub files: Vec<FileId>,
    /// Jobs in the order they appear, the root file's first.
    pub jobs: Vec<GitlabJob>,
    /// In a pipeline without jobs, the hidden jobs (`.update-gitops`) that nothing extends:
    /// templates for the projects that include the file, such as a shared CI modules
    /// project's write-back job.
    pub templates: Vec<GitlabJob>,
    /// Includes of files outside this repository, whose jobs are not read.
    pub external_includes: Vec<ExternalInclude>,
    /// `workflow: rules`, which decide whether a pipeline starts at all.
    pub workflow_rules: Option<Node>,
    /// The global `variables:`.
    pub variables: BTreeMap<String, Node>,
}

/// An `include:` of another project's file, a remote URL or a CI/CD component.
#[derive(Debug)]
pub struct ExternalInclude {
    /// The include item.
    pub span: Span,
    /// "project `group/ci-modules` (`templates/writeback.yml`)", "remote `https://...`".
    pub what: String,
    /// A project `ci.projects` maps, and the mapped path of one of its files that the
    /// repository does not hold.
    pub missing: Option<String>,
}

/// `ci.projects`: GitLab project paths, each with a path of this repository.
pub type Projects = [(String, String)];

/// A job as GitLab runs it.
#[derive(Debug)]
pub struct GitlabJob {
    pub name: String,
    /// The job's key (the winning definition), for labels.
    pub key: Span,
    /// Script items in run order (`before_script`, `script`, `after_script`), flattened.
    pub scripts: Vec<Node>,
    /// Effective variables: global, then `extends` parents, then the job's own.
    pub variables: BTreeMap<String, Node>,
    /// `rules:`, `only:`, `except:` and `when:`, as the job's `extends` chain sets them.
    pub rules: Option<Node>,
    pub only: Option<Node>,
    pub except: Option<Node>,
    pub when: Option<Node>,
}

impl GitlabJob {
    /// The effective variables with a scalar value (`X: v` or `X: {value: v}`).
    pub fn variable_values(&self) -> impl Iterator<Item = (&str, &Node)> {
        self.variables
            .iter()
            .filter_map(|(k, v)| Some((k.as_str(), variable_value(v)?)))
    }
}

/// Every pipeline of the repository: one per GitLab CI file that no other GitLab CI file
/// includes (an included `*gitlab-ci.yml` is part of the pipeline that includes it).
#[must_use]
pub fn pipelines(repo: &Repository, projects: &Projects) -> Vec<GitlabPipeline> {
    let mut included = HashSet::new();
    for d in repo.docs_of(DocKind::GitlabCi) {
        for inc in includes(repo, &d.root, projects) {
            included.extend(
                resolve_include(repo, &inc)
                    .into_iter()
                    .filter(|f| *f != d.file),
            );
        }
    }
    let mut roots: Vec<FileId> = repo
        .docs_of(DocKind::GitlabCi)
        .map(|d| d.file)
        .filter(|f| !included.contains(f))
        .collect();
    roots.dedup();
    roots
        .into_iter()
        .map(|r| pipeline(repo, r, projects))
        .collect()
}

/// The pipeline that starts from `root`.
fn pipeline(repo: &Repository, root: FileId, projects: &Projects) -> GitlabPipeline {
    let mut files = Vec::new();
    collect_files(repo, root, projects, &mut files, &mut HashSet::new(), 0);
    // Included files first: the including file's keys win.
    let layers: Vec<&Node> = files
        .iter()
        .rev()
        .flat_map(|f| repo.file_docs(*f))
        .map(|d| &*d.root)
        .filter(|r| r.as_map().is_some())
        .collect();
    let layers = Layers { repo, layers };
    let jobs = layers.jobs(&layers.job_keys(false));
    // A file of templates only (a shared CI modules project): its hidden jobs are what it is
    // for. Elsewhere a hidden job nothing extends is usually a job switched off.
    let templates = if jobs.is_empty() {
        layers.jobs(&layers.leaf_templates())
    } else {
        Vec::new()
    };
    let workflow_rules = layers
        .defs("workflow")
        .iter()
        .rev()
        .find_map(|w| w.get("rules"))
        .cloned();
    let variables = layers
        .merged_map("variables")
        .into_iter()
        .map(|(k, v)| (k, v.clone()))
        .collect();
    let external_includes = files
        .iter()
        .flat_map(|&f| repo.file_docs(f))
        .flat_map(|d| external_includes(repo, &d.root, projects))
        .collect();
    GitlabPipeline {
        root,
        files,
        jobs,
        templates,
        external_includes,
        workflow_rules,
        variables,
    }
}

/// The items of `include:`: a list, or one string or mapping.
fn include_items(root: &Node) -> Vec<&Node> {
    match root.get("include") {
        Some(inc) => match inc.as_seq() {
            Some(s) => s.iter().collect(),
            None => vec![inc],
        },
        None => Vec::new(),
    }
}

/// The includes of a GitLab CI file that are not in this repository. GitLab's own `template:`
/// includes (SAST, Auto DevOps) are left out: they do not commit to the repository. A project
/// `projects` maps is one only for a file the mapped path does not hold.
#[must_use]
pub fn external_includes(
    repo: &Repository,
    root: &Node,
    projects: &Projects,
) -> Vec<ExternalInclude> {
    let mut out = Vec::new();
    for item in include_items(root) {
        let what = if let Some(s) = item.as_str() {
            s.contains("://").then(|| format!("remote `{s}`"))
        } else if let Some(project) = item.get_str("project") {
            let files = project_files(item);
            let what = if files.is_empty() {
                format!("project `{project}`")
            } else {
                format!("project `{project}` (`{}`)", files.join("`, `"))
            };
            if let Some(mapped) = mapped_files(item, projects, repo) {
                if let Some(missing) = mapped.into_iter().find(|p| repo.file_by_path(p).is_none()) {
                    out.push(ExternalInclude {
                        span: item.span,
                        what,
                        missing: Some(missing),
                    });
                }
                continue;
            }
            Some(what)
        } else if let Some(url) = item.get_str("remote") {
            Some(format!("remote `{url}`"))
        } else {
            item.get_str("component")
                .map(|c| format!("component `{c}`"))
        };
        if let Some(what) = what {
            out.push(ExternalInclude {
                span: item.span,
                what,
                missing: None,
            });
        }
    }
    out
}

/// The `file:`s of a `project:` include, as written.
fn project_files(item: &Node) -> Vec<&str> {
    match item.get("file") {
        Some(f) if f.as_seq().is_some() => f.items().filter_map(Node::as_str).collect(),
        Some(f) => f.as_str().into_iter().collect(),
        None => Vec::new(),
    }
}

/// The repository paths of a `project:` include's files when `projects` maps the project: the
/// mapped file itself, or each `file:` under the mapped folder. `None` when it is not mapped.
fn mapped_files(item: &Node, projects: &Projects, repo: &Repository) -> Option<Vec<String>> {
    let project = item.get_str("project")?.trim_matches('/');
    let (_, path) = projects.iter().find(|(p, _)| p == project)?;
    if repo.file_by_path(path).is_some() {
        return Some(vec![path.clone()]);
    }
    Some(
        project_files(item)
            .into_iter()
            .filter_map(|f| paths::join(path, f.trim_start_matches('/')))
            .collect(),
    )
}

/// What a GitLab CI file includes from this repository: its local files, as
/// repository-relative paths or globs, then the files of the projects `projects` maps.
fn includes(repo: &Repository, root: &Node, projects: &Projects) -> Vec<String> {
    let mut out = local_includes(root);
    for item in include_items(root) {
        out.extend(mapped_files(item, projects, repo).unwrap_or_default());
    }
    out
}

/// The local files a GitLab CI file includes, as repository-relative paths or globs.
#[must_use]
pub fn local_includes(root: &Node) -> Vec<String> {
    let mut out = Vec::new();
    for item in include_items(root) {
        let path = if let Some(s) = item.as_str() {
            // A bare string is a local file unless it is a URL.
            (!s.contains("://")).then_some(s)
        } else {
            item.get_str("local")
        };
        if let Some(p) = path {
            out.push(p.trim_start_matches('/').to_string());
        }
    }
    out
}

fn collect_files(
    repo: &Repository,
    file: FileId,
    projects: &Projects,
    files: &mut Vec<FileId>,
    seen: &mut HashSet<FileId>,
    depth: usize,
) {
    if depth > MAX_INCLUDE_DEPTH || !seen.insert(file) {
        return;
    }
    files.push(file);
    let wanted: Vec<String> = repo
        .file_docs(file)
        .iter()
        .flat_map(|d| includes(repo, &d.root, projects))
        .collect();
    for inc in wanted {
        for f in resolve_include(repo, &inc) {
            collect_files(repo, f, projects, files, seen, depth + 1);
        }
    }
}

/// Files matching a local include: a repository-relative path, or a glob with `*`.
fn resolve_include(repo: &Repository, path: &str) -> Vec<FileId> {
    let Some(path) = paths::join("", path) else {
        return Vec::new();
    };
    if !path.contains('*') {
        return repo.file_by_path(&path).map(|f| f.id).into_iter().collect();
    }
    let Ok(glob) = globset::GlobBuilder::new(&path)
        .literal_separator(true)
        .build()
        .map(|g| g.compile_matcher())
    else {
        return Vec::new();
    };
    repo.sources
        .files()
        .iter()
        .filter(|f| glob.is_match(&f.path))
        .map(|f| f.id)
        .collect()
}

/// The top-level mappings of a pipeline's files, lowest precedence first.
struct Layers<'a> {
    repo: &'a Repository,
    layers: Vec<&'a Node>,
}

impl<'a> Layers<'a> {
    /// Definitions of a top-level key, lowest precedence first.
    fn defs(&self, key: &str) -> Vec<&'a Node> {
        self.layers.iter().filter_map(|l| l.get(key)).collect()
    }

    /// Job names in the order they appear, with their key nodes (last definition wins).
    fn job_keys(&self, hidden: bool) -> Vec<(&'a str, &'a Node)> {
        let mut out: Vec<(&'a str, &'a Node)> = Vec::new();
        for layer in self.layers.iter().rev() {
            for e in layer.entries() {
                let Some(name) = e.key.scalar_text() else {
                    continue;
                };
                if name.starts_with('.') != hidden
                    || GITLAB_RESERVED.contains(&name)
                    || e.value.as_map().is_none()
                    || out.iter().any(|(n, _)| *n == name)
                {
                    continue;
                }
                out.push((name, &e.key));
            }
        }
        out
    }

    /// Hidden jobs that no job or hidden job extends.
    fn leaf_templates(&self) -> Vec<(&'a str, &'a Node)> {
        let mut extended = HashSet::new();
        for layer in &self.layers {
            for e in layer.entries() {
                let Some(ext) = e.value.get("extends") else {
                    continue;
                };
                match ext.as_seq() {
                    Some(items) => extended.extend(items.iter().filter_map(Node::as_str)),
                    None => extended.extend(ext.as_str()),
                }
            }
        }
        self.job_keys(true)
            .into_iter()
            .filter(|(n, _)| !extended.contains(n))
            .collect()
    }

    /// The mapping layers of a job or template, `extends` parents first.
    fn job_layers(&self, name: &str, depth: usize, out: &mut Vec<&'a Node>) {
        if depth > MAX_DEPTH {
            return;
        }
        let own: Vec<&'a Node> = self
            .defs(name)
            .into_iter()
            .filter(|n| n.as_map().is_some())
            .collect();
        let extends = own.iter().rev().find_map(|l| l.get("extends"));
        if let Some(ext) = extends {
            let parents: Vec<&str> = match ext.as_seq() {
                Some(items) => items.iter().filter_map(Node::as_str).collect(),
                None => ext.as_str().into_iter().collect(),
            };
            for p in parents {
                if p != name {
                    self.job_layers(p, depth + 1, out);
                }
            }
        }
        out.extend(own);
    }

    /// Resolves every job.
    fn jobs(&self, keys: &[(&'a str, &'a Node)]) -> Vec<GitlabJob> {
        let global_vars = self.merged_map("variables");
        let default: Vec<&'a Node> = self.defs("default");
        let mut out = Vec::new();
        for &(name, key) in keys {
            let mut layers = Vec::new();
            self.job_layers(name, 0, &mut layers);
            let get = |k: &str| layers.iter().rev().find_map(|l| l.get(k));
            let inherit = get("inherit");
            let inherits = |what: &str, key: &str| match inherit.and_then(|i| i.get(what)) {
                None => true,
                Some(v) => match v.as_seq() {
                    Some(list) => list.iter().any(|n| n.as_str() == Some(key)),
                    None => v.as_bool() != Some(false),
                },
            };
            let mut variables = BTreeMap::new();
            for (k, v) in &global_vars {
                if inherits("variables", k) {
                    variables.insert(k.clone(), (*v).clone());
                }
            }
            for l in &layers {
                if let Some(vars) = l.get("variables") {
                    for e in vars.entries() {
                        if let Some(k) = e.key.scalar_text() {
                            variables.insert(k.to_string(), e.value.clone());
                        }
                    }
                }
            }
            let mut scripts = Vec::new();
            for part in ["before_script", "script", "after_script"] {
                let node = get(part).or_else(|| {
                    if part == "script" || !inherits("default", part) {
                        return None;
                    }
                    default
                        .iter()
                        .rev()
                        .find_map(|d| d.get(part))
                        .or_else(|| self.defs(part).last().copied())
                });
                if let Some(n) = node {
                    self.flatten(n, 0, &mut scripts);
                }
            }
            let rules = get("rules");
            // `rules` and `only`/`except` cannot be used together; `rules` wins here.
            let (only, except) = if rules.is_some() {
                (None, None)
            } else {
                (get("only"), get("except"))
            };
            out.push(GitlabJob {
                name: name.to_string(),
                key: key.span,
                scripts: scripts
                    .into_iter()
                    .filter_map(|n| self.script_line(n))
                    .collect(),
                variables,
                rules: rules.cloned(),
                only: only.cloned(),
                except: except.cloned(),
                when: get("when").cloned(),
            });
        }
        out
    }

    /// A top-level mapping merged across layers (`variables`).
    fn merged_map(&self, key: &str) -> BTreeMap<String, &'a Node> {
        let mut out = BTreeMap::new();
        for d in self.defs(key) {
            for e in d.entries() {
                if let Some(k) = e.key.scalar_text() {
                    out.insert(k.to_string(), &e.value);
                }
            }
        }
        out
    }

    /// Flattens a script value: strings, nested lists (from anchors) and `!reference` tags.
    fn flatten(&self, node: &'a Node, depth: usize, out: &mut Vec<&'a Node>) {
        if depth > MAX_DEPTH {
            return;
        }
        if node.tag() == Some("!reference") {
            if let Some(target) = self.reference(node, depth) {
                self.flatten(target, depth + 1, out);
            }
            return;
        }
        if let Some(items) = node.as_seq() {
            for i in items {
                self.flatten(i, depth + 1, out);
            }
        } else if (node.as_scalar().is_some() && !node.is_null()) || node.as_map().is_some() {
            out.push(node);
        }
    }

    /// A script line as GitLab's runner would run it: a string; or a line YAML read as a
    /// one-entry mapping (`- git commit -am "ci: bump"`, which GitLab rejects and
    /// `ci/script-not-string` reports), read back as the plain text written, so that what it
    /// does is still seen.
    fn script_line(&self, node: &Node) -> Option<Node> {
        let Some(entries) = node.as_map() else {
            return Some(node.clone());
        };
        let [e] = entries else {
            return None;
        };
        let plain = |n: &Node| n.as_scalar().is_some_and(|s| s.style == ScalarStyle::Plain);
        if node.flow() || !plain(&e.key) || e.value.as_scalar().is_none() {
            return None;
        }
        let text = self.repo.source(node.span.file).text();
        let written = text.get(node.span.range())?;
        if written.contains('\n') || written.contains(" #") {
            return None;
        }
        Some(Node::scalar(node.span, written.into(), ScalarStyle::Plain))
    }

    /// The node a `!reference [job, key, ...]` points at.
    fn reference(&self, node: &'a Node, depth: usize) -> Option<&'a Node> {
        let path: Vec<&str> = node.items().filter_map(Node::scalar_text).collect();
        let (first, rest) = path.split_first()?;
        let mut layers = Vec::new();
        self.job_layers(first, depth, &mut layers);
        if layers.is_empty() {
            // `!reference [variables, X]` and other top-level keys.
            layers = self.defs(first);
        }
        let (key, deeper) = rest.split_first()?;
        let start = layers.iter().rev().find_map(|l| l.get(key))?;
        deeper.iter().try_fold(start, |n, k| n.get(k))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(job: &GitlabJob) -> Vec<&str> {
        job.scripts.iter().filter_map(Node::scalar_text).collect()
    }

    fn var<'j>(job: &'j GitlabJob, name: &str) -> Option<&'j str> {
        job.variable_values()
            .find(|(k, _)| *k == name)
            .and_then(|(_, v)| v.scalar_text())
    }

    #[test]
    fn includes_extends_anchors_and_references_assemble_one_pipeline() {
        let repo = crate::model::Repository::in_memory(&[
            (
                ".gitlab-ci.yml",
                "include:\n  - local: /ci/templates.yml\n  - 'ci/jobs/*.yml'\n  - remote: https://example.com/x.yml\nvariables:\n  REGISTRY: registry.example.com\n.setup: &setup\n  - echo setup\ndeploy:\n  extends: .deploy\n  before_script: *setup\n  variables:\n    ENV: prod\n",
            ),
            (
                "ci/templates.yml",
                "default:\n  after_script:\n    - echo default-after\n.base:\n  variables:\n    ENV: dev\n    IMAGE: {value: app, description: the image}\n  script:\n    - echo base\n.deploy:\n  extends: .base\n  script:\n    - !reference [.base, script]\n    - git push\n",
            ),
            ("ci/jobs/lint.yml", "lint:\n  script: [make lint]\n"),
            ("ci/jobs/nested/skip.yml", "skipped:\n  script: [x]\n"),
        ]);
        let pipelines = pipelines(&repo, &[]);
        assert_eq!(pipelines.len(), 1);
        let p = &pipelines[0];
        let paths: Vec<&str> = p
            .files
            .iter()
            .map(|f| repo.source(*f).path.as_str())
            .collect();
        // `*` does not cross `/`.
        assert_eq!(
            paths,
            [".gitlab-ci.yml", "ci/templates.yml", "ci/jobs/lint.yml"]
        );
        let names: Vec<&str> = p.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["deploy", "lint"]);
        let deploy = &p.jobs[0];
        assert_eq!(
            texts(deploy),
            ["echo setup", "echo base", "git push", "echo default-after"]
        );
        // Global, then `extends` parents, then the job's own; `{value: ...}` is read.
        assert_eq!(var(deploy, "ENV"), Some("prod"));
        assert_eq!(var(deploy, "IMAGE"), Some("app"));
        assert_eq!(var(deploy, "REGISTRY"), Some("registry.example.com"));
        // Spans point into the file that wrote each line.
        let base = deploy.scripts[1].span;
        assert_eq!(repo.source(base.file).path, "ci/templates.yml");
        assert_eq!(repo.source(base.file).slice(base), "echo base");
        assert_eq!(repo.source(deploy.key.file).slice(deploy.key), "deploy");
    }

    #[test]
    fn an_included_gitlab_ci_file_is_not_a_pipeline_of_its_own() {
        let repo = crate::model::Repository::in_memory(&[
            (".gitlab-ci.yml", "include: 'sub/.gitlab-ci.yml'\n"),
            ("sub/.gitlab-ci.yml", "job:\n  script: [echo]\n"),
            (
                "other/.gitlab-ci.yml",
                "include: '../.gitlab-ci.yml'\nother: {script: [x]}\n",
            ),
        ]);
        let pipelines = pipelines(&repo, &[]);
        let roots: Vec<&str> = pipelines
            .iter()
            .map(|p| repo.source(p.root).path.as_str())
            .collect();
        // `../` leaves the root: not followed.
        assert_eq!(roots, [".gitlab-ci.yml", "other/.gitlab-ci.yml"]);
        assert_eq!(pipelines[0].jobs[0].name, "job");
        assert_eq!(pipelines[1].files.len(), 1);
    }

    #[test]
    fn inherit_and_cycles_are_bounded() {
        let repo = crate::model::Repository::in_memory(&[(
            ".gitlab-ci.yml",
            "include: '.gitlab-ci.yml'\nvariables: {A: a, B: b}\ndefault:\n  before_script: [echo d]\nj:\n  extends: j\n  inherit: {variables: [B], default: false}\n  script: !reference [j, script]\nk:\n  extends: [k2]\n  script: [ok]\nk2:\n  extends: k\n",
        )]);
        let p = &pipelines(&repo, &[])[0];
        let j = &p.jobs[0];
        assert!(j.scripts.is_empty());
        assert_eq!(var(j, "A"), None);
        assert_eq!(var(j, "B"), Some("b"));
        assert_eq!(texts(&p.jobs[1]), ["echo d", "ok"]);
    }
}
