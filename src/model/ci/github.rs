//! GitHub Actions workflows (`.github/workflows/`): jobs and their steps, each step with the
//! environment (workflow, job, then step `env:`) and the working directory it runs in.

use std::collections::BTreeMap;

use crate::model::DocKind;
use crate::model::Repository;
use crate::source::{FileId, Span};
use crate::yaml::Node;

/// One workflow document.
#[derive(Debug)]
pub struct GithubWorkflow {
    /// Index of the document in [`Repository::docs`].
    pub doc: usize,
    pub file: FileId,
    pub jobs: Vec<GithubJob>,
    /// `on:`, the events that start it.
    pub on: Option<Node>,
}

/// A GitHub Actions job.
#[derive(Debug)]
pub struct GithubJob {
    pub name: String,
    /// The job's key, for labels.
    pub key: Span,
    pub steps: Vec<GithubStep>,
    /// The job's `if:`.
    pub condition: Option<Node>,
}

/// A step of a GitHub Actions job.
#[derive(Debug)]
pub struct GithubStep {
    /// The whole step.
    pub span: Span,
    /// `run:` script.
    pub run: Option<Node>,
    /// `uses:` action reference, e.g. `actions/checkout@v4`.
    pub uses: Option<Node>,
    /// `with:` inputs.
    pub with: Option<Node>,
    /// Environment: workflow, job, then step `env:` (later wins).
    pub env: BTreeMap<String, Node>,
    /// Where a `run:` step starts: its `working-directory`, else the job's or the
    /// workflow's `defaults.run.working-directory`.
    pub working_directory: Option<String>,
}

impl GithubStep {
    /// The action's name without its version (`actions/checkout`), lowercased.
    #[must_use]
    pub fn action(&self) -> Option<String> {
        let u = self.uses.as_ref()?.as_str()?;
        Some(u.split('@').next().unwrap_or(u).to_ascii_lowercase())
    }

    /// A `with:` input.
    #[must_use]
    pub fn input(&self, name: &str) -> Option<&Node> {
        self.with.as_ref()?.get(name)
    }
}

/// Every workflow document of the repository.
#[must_use]
pub fn workflows(repo: &Repository) -> Vec<GithubWorkflow> {
    repo.docs
        .iter()
        .enumerate()
        .filter(|(_, d)| d.kind == DocKind::GithubWorkflow)
        .map(|(i, d)| GithubWorkflow {
            doc: i,
            file: d.file,
            jobs: jobs(&d.root),
            // YAML 1.1 reads a bare `on` key as the boolean true.
            on: d
                .root
                .entries()
                .find(|e| matches!(e.key.scalar_text(), Some("on" | "true")))
                .map(|e| e.value.clone()),
        })
        .collect()
}

/// The jobs of a workflow with their steps.
#[must_use]
pub fn jobs(root: &Node) -> Vec<GithubJob> {
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
                    span: s.span,
                    run: s.get("run").cloned(),
                    uses: s.get("uses").cloned(),
                    with: s.get("with").cloned(),
                    env: env.into_iter().map(|(k, v)| (k, v.clone())).collect(),
                    working_directory: s
                        .get_str("working-directory")
                        .or(job_dir)
                        .map(str::to_string),
                }
            })
            .collect();
        out.push(GithubJob {
            name: name.to_string(),
            key: e.key.span,
            steps,
            condition: e.value.get("if").cloned(),
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

fn default_dir(n: &Node) -> Option<&str> {
    n.path(&["defaults", "run", "working-directory"])
        .and_then(Node::as_str)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_carry_their_environment_and_working_directory() {
        let repo = crate::model::Repository::in_memory(&[(
            ".github/workflows/bump.yml",
            "on: push\nenv: {A: wf, B: wf}\ndefaults: {run: {working-directory: wf-dir}}\njobs:\n  bump:\n    env: {B: job}\n    defaults: {run: {working-directory: job-dir}}\n    steps:\n      - uses: actions/checkout@v4\n        with: {token: '${{ secrets.PAT }}'}\n      - run: git push\n        env: {C: step}\n        working-directory: step-dir\n      - run: make\n  other:\n    steps: []\n",
        )]);
        let wfs = workflows(&repo);
        assert_eq!(wfs.len(), 1);
        let jobs = &wfs[0].jobs;
        assert_eq!(jobs.len(), 2);
        let steps = &jobs[0].steps;
        assert_eq!(steps[0].action().as_deref(), Some("actions/checkout"));
        assert_eq!(
            steps[0].input("token").and_then(Node::scalar_text),
            Some("${{ secrets.PAT }}")
        );
        let env =
            |s: &GithubStep, k: &str| s.env.get(k).and_then(Node::scalar_text).map(str::to_string);
        assert_eq!(env(&steps[1], "A").as_deref(), Some("wf"));
        assert_eq!(env(&steps[1], "B").as_deref(), Some("job"));
        assert_eq!(env(&steps[1], "C").as_deref(), Some("step"));
        assert_eq!(env(&steps[2], "C"), None);
        assert_eq!(steps[1].working_directory.as_deref(), Some("step-dir"));
        assert_eq!(steps[2].working_directory.as_deref(), Some("job-dir"));
        let run = steps[1].run.as_ref().expect("a run step");
        assert_eq!(repo.source(run.span.file).slice(run.span), "git push");
        assert_eq!(repo.source(jobs[0].key.file).slice(jobs[0].key), "bump");
    }
}
