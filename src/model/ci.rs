//! CI definitions as the runner sees them: GitLab CI jobs with `extends`, `!reference`,
//! `default:`, variables and `include: local:` resolved, and GitHub Actions jobs and steps.
//!
//! Everything here borrows the YAML trees of the project; nothing is copied or re-serialised,
//! so every script line and variable value keeps its span for findings and fixes.

use std::collections::BTreeMap;

use crate::source::FileId;
use crate::yaml::Node;

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

/// A GitLab CI pipeline definition: a root file and the local files it includes.
pub struct GitlabConfig<'a> {
    /// Top-level mappings, lowest precedence first (included files, then the root file).
    pub layers: Vec<&'a Node>,
    /// Files read, the root first.
    pub files: Vec<FileId>,
}

/// A resolved GitLab job.
pub struct GitlabJob<'a> {
    pub name: String,
    /// The job's key, for labels.
    pub key: &'a Node,
    /// Script items in run order (`before_script`, `script`, `after_script`), flattened.
    pub scripts: Vec<&'a Node>,
    /// Effective variables: global, then `extends` parents, then the job's own.
    pub variables: BTreeMap<String, &'a Node>,
}

/// The local files a GitLab CI file includes, as repository-relative paths or globs.
#[must_use]
pub fn gitlab_local_includes(root: &Node) -> Vec<String> {
    let Some(inc) = root.get("include") else {
        return Vec::new();
    };
    let items: Vec<&Node> = match inc.as_seq() {
        Some(s) => s.iter().collect(),
        None => vec![inc],
    };
    let mut out = Vec::new();
    for item in items {
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

impl<'a> GitlabConfig<'a> {
    /// A configuration from its files' top-level mappings, lowest precedence first
    /// (included files before the files that include them).
    #[must_use]
    pub fn new(layers: Vec<&'a Node>, files: Vec<FileId>) -> GitlabConfig<'a> {
        GitlabConfig { layers, files }
    }

    /// Definitions of a top-level key, lowest precedence first.
    fn defs(&self, key: &str) -> Vec<&'a Node> {
        self.layers.iter().filter_map(|l| l.get(key)).collect()
    }

    /// Job names in the order they appear, with their key nodes (last definition wins).
    fn job_keys(&self) -> Vec<(&'a str, &'a Node)> {
        let mut out: Vec<(&'a str, &'a Node)> = Vec::new();
        for layer in self.layers.iter().rev() {
            for e in layer.entries() {
                let Some(name) = e.key.scalar_text() else {
                    continue;
                };
                if name.starts_with('.')
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
    #[must_use]
    pub fn jobs(&self) -> Vec<GitlabJob<'a>> {
        let global_vars = self.merged_map("variables");
        let default: Vec<&'a Node> = self.defs("default");
        let mut out = Vec::new();
        for (name, key) in self.job_keys() {
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
                    variables.insert(k.clone(), *v);
                }
            }
            for l in &layers {
                if let Some(vars) = l.get("variables") {
                    for e in vars.entries() {
                        if let Some(k) = e.key.scalar_text() {
                            variables.insert(k.to_string(), &e.value);
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
            out.push(GitlabJob {
                name: name.to_string(),
                key,
                scripts,
                variables,
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
        if node.tag.as_deref() == Some("!reference") {
            if let Some(target) = self.reference(node, depth) {
                self.flatten(target, depth + 1, out);
            }
            return;
        }
        if let Some(items) = node.as_seq() {
            for i in items {
                self.flatten(i, depth + 1, out);
            }
        } else if node.as_scalar().is_some() && !node.is_null() {
            out.push(node);
        }
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

/// A step of a GitHub Actions job.
pub struct GithubStep<'a> {
    pub node: &'a Node,
    /// `run:` script.
    pub run: Option<&'a Node>,
    /// `uses:` action reference, e.g. `actions/checkout@v4`.
    pub uses: Option<&'a Node>,
    /// `with:` inputs.
    pub with: Option<&'a Node>,
    /// Environment: workflow, job, then step `env:` (later wins).
    pub env: BTreeMap<String, &'a Node>,
    /// Where a `run:` step starts: its `working-directory`, else the job's or the
    /// workflow's `defaults.run.working-directory`.
    pub working_directory: Option<&'a str>,
}

/// A GitHub Actions job.
pub struct GithubJob<'a> {
    pub name: String,
    pub key: &'a Node,
    pub steps: Vec<GithubStep<'a>>,
}

impl<'a> GithubStep<'a> {
    /// The action's name without its version (`actions/checkout`), lowercased.
    #[must_use]
    pub fn action(&self) -> Option<String> {
        let u = self.uses?.as_str()?;
        Some(u.split('@').next().unwrap_or(u).to_ascii_lowercase())
    }

    #[must_use]
    pub fn input(&self, name: &str) -> Option<&'a Node> {
        self.with?.get(name)
    }
}

/// The jobs of a workflow with their steps.
#[must_use]
pub fn github_jobs(root: &Node) -> Vec<GithubJob<'_>> {
    let mut out = Vec::new();
    let mut wf_env = BTreeMap::new();
    add_env(root.get("env"), &mut wf_env);
    let wf_dir = default_dir(root);
    let Some(jobs) = root.get("jobs") else {
        return out;
    };
    for e in jobs.entries() {
        let Some(name) = e.key.scalar_text() else {
            continue;
        };
        let mut job_env = wf_env.clone();
        add_env(e.value.get("env"), &mut job_env);
        let job_dir = default_dir(&e.value).or(wf_dir);
        let steps = e
            .value
            .get("steps")
            .into_iter()
            .flat_map(Node::items)
            .map(|s| {
                let mut env = job_env.clone();
                add_env(s.get("env"), &mut env);
                GithubStep {
                    node: s,
                    run: s.get("run"),
                    uses: s.get("uses"),
                    with: s.get("with"),
                    env,
                    working_directory: s.get_str("working-directory").or(job_dir),
                }
            })
            .collect();
        out.push(GithubJob {
            name: name.to_string(),
            key: &e.key,
            steps,
        });
    }
    out
}

fn add_env<'a>(env: Option<&'a Node>, out: &mut BTreeMap<String, &'a Node>) {
    for e in env.into_iter().flat_map(Node::entries) {
        if let Some(k) = e.key.scalar_text() {
            out.insert(k.to_string(), &e.value);
        }
    }
}

/// The text of a CI variable's value: a scalar, or GitLab's `{value: ..., description: ...}`.
#[must_use]
pub fn variable_value(node: &Node) -> Option<&Node> {
    if node.as_scalar().is_some() {
        return Some(node);
    }
    node.get("value").filter(|v| v.as_scalar().is_some())
}

fn default_dir(n: &Node) -> Option<&str> {
    n.path(&["defaults", "run", "working-directory"])
        .and_then(Node::as_str)
}
