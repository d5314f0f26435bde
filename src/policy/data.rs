//! `data.gitops`: the repository model policies read (schema: `docs/policy-authoring.md`).
//!
//! Built once per run. Applications are listed as written (an Application's `spec`, an
//! ApplicationSet's template); when the reachability model (ApplicationSet expansion,
//! effective Helm values, reached files) is available it fills `generated`, `values` and
//! `files` — until then `resolved` is `false` and those fields are empty.

use serde_json::{Value as J, json};

use crate::model::ci;
use crate::model::{DocKind, Document};
use crate::project::Project;
use crate::yaml::Node;

/// Version of the `data.gitops` schema.
pub const SCHEMA_VERSION: u32 = 1;

fn loc(project: &Project, doc: &Document, node: &Node) -> J {
    let f = project.source(doc.file);
    let lc = f.line_col(node.span.start as usize);
    json!({"file": f.path, "line": lc.line, "column": lc.column})
}

fn doc_ref(project: &Project, doc: &Document) -> J {
    let f = project.source(doc.file);
    let lc = f.line_col(doc.anchor_span().start as usize);
    json!({"file": f.path, "document": doc.index, "line": lc.line})
}

fn source_json(project: &Project, doc: &Document, node: &Node, path: &[J]) -> J {
    let get = |k: &str| node.get(k).map_or(J::Null, Node::to_json);
    json!({
        "repoURL": get("repoURL"),
        "path": get("path"),
        "chart": get("chart"),
        "targetRevision": node.get("targetRevision").map_or(J::Null, |n| J::String(n.scalar_text().unwrap_or("").to_string())),
        "ref": get("ref"),
        "helm": get("helm"),
        "kustomize": get("kustomize"),
        "directory": get("directory"),
        "spec_path": path,
        "location": loc(project, doc, node),
    })
}

fn application(project: &Project, doc: &Document, spec: &Node, spec_path: &[&str]) -> J {
    let base: Vec<J> = spec_path
        .iter()
        .map(|s| J::String((*s).to_string()))
        .collect();
    let mut sources = Vec::new();
    if let Some(s) = spec.get("source") {
        let mut p = base.clone();
        p.push("source".into());
        sources.push(source_json(project, doc, s, &p));
    }
    for (i, s) in spec
        .get("sources")
        .into_iter()
        .flat_map(Node::items)
        .enumerate()
    {
        let mut p = base.clone();
        p.push("sources".into());
        p.push(i.into());
        sources.push(source_json(project, doc, s, &p));
    }
    let name = if doc.kind == DocKind::ApplicationSet {
        doc.root
            .path(&["spec", "template", "metadata", "name"])
            .and_then(Node::scalar_text)
    } else {
        doc.name()
    };
    let dest = spec.get("destination");
    let dget = |k: &str| dest.and_then(|d| d.get(k)).map_or(J::Null, Node::to_json);
    let finalizers: Vec<J> = if doc.kind == DocKind::ApplicationSet {
        doc.root
            .path(&["spec", "template", "metadata", "finalizers"])
    } else {
        doc.root.path(&["metadata", "finalizers"])
    }
    .into_iter()
    .flat_map(Node::items)
    .map(Node::to_json)
    .collect();
    json!({
        "name": name,
        "namespace": doc.namespace(),
        "kind": if doc.kind == DocKind::ApplicationSet { "ApplicationSet" } else { "Application" },
        "template": doc.kind == DocKind::ApplicationSet,
        "generated_by": if doc.kind == DocKind::ApplicationSet { doc.name().map_or(J::Null, |n| J::String(n.to_string())) } else { J::Null },
        "project": spec.get("project").map_or(J::String("default".into()), Node::to_json),
        "destination": {"server": dget("server"), "name": dget("name"), "namespace": dget("namespace")},
        "sources": sources,
        "sync_policy": spec.get("syncPolicy").map_or(J::Null, Node::to_json),
        "finalizers": finalizers,
        "spec_path": base,
        "document": doc_ref(project, doc),
        "values": J::Null,
        "files": [],
        "resolved": false,
    })
}

fn ci_jobs(project: &Project) -> Vec<J> {
    let mut jobs = Vec::new();
    for doc in project.docs_of(DocKind::GitlabCi) {
        let cfg = ci::GitlabConfig::new(vec![&doc.root], vec![doc.file]);
        for job in cfg.jobs() {
            let script: Vec<String> = job
                .scripts
                .iter()
                .filter_map(|n| n.scalar_text().map(str::to_string))
                .collect();
            jobs.push(job_json(
                project, doc, "gitlab", &job.name, job.key, &script,
            ));
        }
    }
    for doc in project.docs_of(DocKind::GithubWorkflow) {
        for job in ci::github_jobs(&doc.root) {
            let script: Vec<String> = job
                .steps
                .iter()
                .filter_map(|s| s.run.and_then(Node::scalar_text).map(str::to_string))
                .collect();
            jobs.push(job_json(
                project, doc, "github", &job.name, job.key, &script,
            ));
        }
    }
    jobs
}

fn job_json(
    project: &Project,
    doc: &Document,
    platform: &str,
    name: &str,
    key: &Node,
    script: &[String],
) -> J {
    let text = script.join("\n");
    let writes_back = text.contains("git push") || text.contains("/repository/commits");
    let skip_ci = ["[skip ci]", "[ci skip]", "ci.skip", "[skip actions]"]
        .iter()
        .any(|m| text.contains(m));
    json!({
        "platform": platform,
        "name": name,
        "file": project.source(doc.file).path,
        "location": loc(project, doc, key),
        "script": script,
        "writes_back": writes_back,
        "skip_ci": skip_ci,
    })
}

/// The `data.gitops` object for a project.
#[must_use]
pub fn model(project: &Project) -> J {
    let mut applications = Vec::new();
    for doc in project.docs_of(DocKind::Application) {
        if let Some(spec) = doc.root.get("spec") {
            applications.push(application(project, doc, spec, &["spec"]));
        }
    }
    for doc in project.docs_of(DocKind::ApplicationSet) {
        if let Some(spec) = doc.root.path(&["spec", "template", "spec"]) {
            applications.push(application(
                project,
                doc,
                spec,
                &["spec", "template", "spec"],
            ));
        }
    }
    let application_sets: Vec<J> = project
        .docs_of(DocKind::ApplicationSet)
        .map(|d| {
            json!({
                "name": d.name(),
                "namespace": d.namespace(),
                "document": doc_ref(project, d),
                "generators": d.root.path(&["spec", "generators"]).map_or(J::Null, Node::to_json),
            })
        })
        .collect();
    let projects: Vec<J> = project
        .docs_of(DocKind::AppProject)
        .map(|d| {
            let spec = d.root.get("spec");
            let get = |k: &str| {
                spec.and_then(|s| s.get(k))
                    .map_or(J::Array(vec![]), Node::to_json)
            };
            json!({
                "name": d.name(),
                "namespace": d.namespace(),
                "document": doc_ref(project, d),
                "destinations": get("destinations"),
                "sourceRepos": get("sourceRepos"),
                "clusterResourceWhitelist": get("clusterResourceWhitelist"),
                "spec": spec.map_or(J::Null, Node::to_json),
            })
        })
        .collect();
    let files: Vec<J> = project
        .sources
        .files()
        .iter()
        .map(|f| J::String(f.path.clone()))
        .collect();
    json!({
        "schema_version": SCHEMA_VERSION,
        "resolved": false,
        "applications": applications,
        "application_sets": application_sets,
        "projects": projects,
        "ci": {"jobs": ci_jobs(project)},
        "files": files,
    })
}
