//! The configuration's keys, declared as rows: name, what it takes, its `init` value and one
//! line of docs. Parsing, "did you mean" and the `init` template are generated from them. A key
//! of a section that only one rule reads sets that rule's typed options ([`rule`]); the rule
//! names the key in its options struct.

use std::path::Path;

use super::{Config, FieldError, edge_tls};
use crate::model::settings::PluginTool;
use crate::rule::{Options, RuleMeta};
use crate::rules::argocd::{
    infra_boundary, insecure_without_edge_tls, project_bounds, schema, self_managed,
    unknown_project,
};
use crate::rules::ci::writeback_skip_ci::{self, OtherRepositories};
use crate::yaml::Node;

/// Where a value is read: its dotted name (for messages) and the config file's folder.
pub struct Field<'a> {
    pub name: &'a str,
    pub dir: Option<&'a Path>,
    /// The registry, for keys that name rules.
    pub rules: &'a [&'a RuleMeta],
}

type Setter = for<'n> fn(&mut Config, &'n Node, &Field<'_>) -> Result<(), FieldError<'n>>;

/// One configuration key.
pub struct Row {
    pub key: &'static str,
    /// One line, shown as a comment by `init`.
    pub doc: &'static str,
    /// The value `init` writes (YAML); one starting with `# ` is written commented out (the
    /// key's default is "unset").
    pub init: &'static str,
    pub(super) set: Setter,
}

/// A mapping of rows under one top-level key (`argocd:`).
pub struct Section {
    pub key: &'static str,
    pub doc: &'static str,
    pub rows: &'static [Row],
}

/// The options of the rule that reads a section's key, to set it.
fn rule<T: Options>(config: &mut Config) -> &mut T {
    config.options.get_mut::<T>()
}

/// A list of strings, or the message "`name` must be `what`" at the offending node.
fn list<'n>(node: &'n Node, field: &Field<'_>, what: &str) -> Result<Vec<String>, FieldError<'n>> {
    super::string_list(node).map_err(|n| (n, format!("`{}` must be {what}", field.name), None))
}

/// Globs of the user-facing dialect, each checked, so an invalid one is reported at its item.
fn globs<'n>(node: &'n Node, field: &Field<'_>) -> Result<Vec<String>, FieldError<'n>> {
    let list = list(node, field, "a list of glob strings")?;
    for (glob, item) in list.iter().zip(node.items()) {
        if let Err((_, reason)) = crate::source::glob::Patterns::new(std::slice::from_ref(glob)) {
            return Err((
                item,
                format!("invalid glob `{glob}`: {reason}"),
                Some("Fix the pattern: `*` and `?` match within a folder, `**` across folders, `[...]` a set of characters.".into()),
            ));
        }
    }
    Ok(list)
}

/// `argocd.plugins`: plugin name → the tool it wraps.
fn plugins<'n>(
    node: &'n Node,
    field: &Field<'_>,
) -> Result<Vec<(String, PluginTool)>, FieldError<'n>> {
    const EXAMPLE: &str = "e.g. `plugins: {kustomize-helm: kustomize}`";
    if node.as_map().is_none() && !node.is_null() {
        return Err((
            node,
            format!(
                "`{}` must be a mapping of plugin names to `helm`, `kustomize` or `directory`",
                field.name
            ),
            Some(EXAMPLE.into()),
        ));
    }
    let mut out = Vec::new();
    for e in node.entries() {
        let name = e.key.scalar_text().unwrap_or("");
        let tool = e.value.as_str().and_then(PluginTool::parse);
        let Some(tool) = tool else {
            return Err((
                &e.value,
                format!(
                    "`{}.{name}` must be one of `{}`",
                    field.name,
                    PluginTool::NAMES.join("`, `")
                ),
                Some(EXAMPLE.into()),
            ));
        };
        out.push((name.to_string(), tool));
    }
    Ok(out)
}

/// `ci.projects`: GitLab project path → a folder or file inside the repository.
fn projects<'n>(
    node: &'n Node,
    field: &Field<'_>,
) -> Result<Vec<(String, String)>, FieldError<'n>> {
    const EXAMPLE: &str = "e.g. `projects: {group/ci-modules: ci-modules}`";
    if node.as_map().is_none() && !node.is_null() {
        return Err((
            node,
            format!(
                "`{}` must be a mapping of GitLab project paths to folders of this repository",
                field.name
            ),
            Some(EXAMPLE.into()),
        ));
    }
    let mut out = Vec::new();
    for e in node.entries() {
        let project = e.key.scalar_text().unwrap_or("").trim_matches('/');
        let Some(raw) = e.value.as_str().filter(|p| !p.trim().is_empty()) else {
            return Err((
                &e.value,
                format!(
                    "`{}.{project}` must be a path in this repository",
                    field.name
                ),
                Some(EXAMPLE.into()),
            ));
        };
        // Read as the repository's files are: from the root, never above it.
        let Some(path) = crate::model::paths::join("", raw).filter(|_| !raw.starts_with('/'))
        else {
            return Err((
                &e.value,
                format!(
                    "`{raw}` is outside the repository: gitops-lint reads nothing outside its root"
                ),
                Some("Check the project out inside the repository (a git submodule, or a copy in CI) and map it there.".into()),
            ));
        };
        if let Some(dir) = field.dir {
            if !dir.join(&path).exists() {
                return Err((
                    &e.value,
                    format!("`{raw}` does not exist"),
                    Some(
                        "paths are relative to the configuration file, at the repository's root"
                            .into(),
                    ),
                ));
            }
        }
        out.push((project.to_string(), path));
    }
    Ok(out)
}

/// Rule selectors (ids, or groups such as `argocd/`), each checked against the registry.
fn selectors<'n>(node: &'n Node, field: &Field<'_>) -> Result<Vec<String>, FieldError<'n>> {
    let list = list(
        node,
        field,
        "a list of rule ids or groups such as `argocd/`",
    )?;
    for (sel, item) in list.iter().zip(node.items()) {
        if let Err(help) = super::check_selector(sel, field.rules) {
            return Err((item, format!("unknown rule or group `{sel}`"), Some(help)));
        }
    }
    Ok(list)
}

/// Top-level keys with a plain value. `argocd:` and `rules:` are sections of their own.
pub const TOP_LEVEL: &[Row] = &[
    Row {
        key: "include",
        doc: "Only lint files matching these globs (relative to this file's folder). Empty: all YAML.",
        init: "[]",
        set: |c, n, f| {
            c.include = globs(n, f)?;
            Ok(())
        },
    },
    Row {
        key: "exclude",
        doc: "Never lint files matching these globs (in addition to .gitignore).",
        init: "[]",
        set: |c, n, f| {
            c.exclude = globs(n, f)?;
            Ok(())
        },
    },
    Row {
        key: "repo_urls",
        doc: "URLs under which Argo CD knows this repository (default: the git `origin` remote).",
        init: "[]",
        set: |c, n, f| {
            c.repo_urls = list(n, f, "a list of URLs")?;
            Ok(())
        },
    },
    Row {
        key: "select",
        doc: "Report only these rules (ids, or groups such as `argocd/`). Unset: every rule.",
        init: "# [argocd/, ci/]",
        set: |c, n, f| {
            c.select = Some(selectors(n, f)?);
            Ok(())
        },
    },
    Row {
        key: "extend-select",
        doc: "Rules reported in addition to `select`.",
        init: "[]",
        set: |c, n, f| {
            c.extend_select = selectors(n, f)?;
            Ok(())
        },
    },
    Row {
        key: "ignore",
        doc: "Rules not reported (ids, or groups such as `platform/`).",
        init: "[]",
        set: |c, n, f| {
            c.ignore = selectors(n, f)?;
            Ok(())
        },
    },
    Row {
        key: "policies",
        doc: "Folders of Rego policies (conftest style: `deny`, `warn`, `violation` in package `main`).",
        init: "[]",
        set: |c, n, f| {
            c.policies = list(n, f, "a list of folders or `.rego` files")?;
            if let Some(dir) = f.dir {
                for (p, item) in c.policies.iter().zip(n.items()) {
                    if !dir.join(p).exists() {
                        return Err((
                            item,
                            format!("policy path `{p}` does not exist"),
                            Some("paths are relative to the configuration file".into()),
                        ));
                    }
                }
            }
            Ok(())
        },
    },
    Row {
        key: "data",
        doc: "JSON/YAML files or folders merged under the policies' `data` (added to `--data`).",
        init: "[]",
        set: |c, n, f| {
            c.data = list(n, f, "a list of files or folders")?;
            if let Some(dir) = f.dir {
                for (p, item) in c.data.iter().zip(n.items()) {
                    if !dir.join(p).exists() {
                        return Err((
                            item,
                            format!("data path `{p}` does not exist"),
                            Some("paths are relative to the configuration file".into()),
                        ));
                    }
                }
            }
            Ok(())
        },
    },
    Row {
        key: "namespace",
        doc: "Packages whose `deny`/`violation`/`warn` rules run (globs; `--namespace` replaces them). Empty: `main`.",
        init: "[]",
        set: |c, n, f| {
            c.namespace = list(n, f, "a list of package names or globs")?;
            Ok(())
        },
    },
    Row {
        key: "fail_on",
        doc: "The lowest severity that makes `check` exit with 1: error, warning, info or never (`--fail-on` replaces it).",
        init: "error",
        set: |c, n, f| {
            c.fail_on = Some(match n.scalar_text().filter(|_| !n.is_null()) {
                Some("error") => super::FailOn::Error,
                Some("warning") => super::FailOn::Warning,
                Some("info") => super::FailOn::Info,
                Some("never") => super::FailOn::Never,
                _ => {
                    return Err((
                        n,
                        format!("`{}` must be `error`, `warning`, `info` or `never`", f.name),
                        Some("e.g. `fail_on: warning`".into()),
                    ));
                }
            });
            Ok(())
        },
    },
];

/// Sections: mappings of rows.
pub const SECTIONS: &[Section] = &[
    Section {
        key: "argocd",
        doc: "Argo CD: what the bootstrap applies and what belongs to the platform.",
        rows: ARGOCD,
    },
    Section {
        key: "ci",
        doc: "CI write-backs (ci/writeback-skip-ci).",
        rows: CI,
    },
];

const CI: &[Row] = &[
    Row {
        key: "projects",
        doc: "GitLab projects that `include: project:` reads, each mapped to a folder of this repository holding its files (a submodule or a copy), or to one file, so the jobs they bring are checked. Unset: each such include is reported as not verifiable (ci/writeback-skip-ci).",
        init: "# {group/ci-modules: ci-modules}",
        set: |c, n, f| {
            c.ci.projects = projects(n, f)?;
            Ok(())
        },
    },
    Row {
        key: "other_repositories",
        doc: "A push to this repository without `[skip ci]` loops: always an error. A push to another repository starts a pipeline there: error, warning or off.",
        init: "warning",
        set: |c, n, f| {
            // `off` is a YAML 1.1 boolean: read the scalar's text, as rule levels are.
            let text = n.scalar_text().filter(|_| !n.is_null());
            rule::<writeback_skip_ci::Options>(c).other_repositories = match text {
                Some("error") => OtherRepositories::Error,
                Some("warning") => OtherRepositories::Warning,
                Some("off") => OtherRepositories::Off,
                _ => {
                    return Err((
                        n,
                        format!("`{}` must be `error`, `warning` or `off`", f.name),
                        Some("e.g. `ci: {other_repositories: warning}`".into()),
                    ));
                }
            };
            Ok(())
        },
    },
];

const ARGOCD: &[Row] = &[
    Row {
        key: "roots",
        doc: "Files the bootstrap applies. Empty: every Argo CD object found is live.",
        init: "[]",
        set: |c, n, f| {
            c.argocd.roots = list(n, f, "a list of file paths")?;
            Ok(())
        },
    },
    Row {
        key: "plugins",
        doc: "Config Management Plugins by name and the tool each wraps (`helm`, `kustomize` or `directory`), so their sources are rendered. Unset: a plugin source is reported as not rendered (argocd/not-rendered).",
        init: "# {kustomize-helm: kustomize}",
        set: |c, n, f| {
            c.argocd.plugins = plugins(n, f)?;
            Ok(())
        },
    },
    Row {
        key: "external_projects",
        doc: "AppProjects created outside this repository (argocd/unknown-project).",
        init: "[]",
        set: |c, n, f| {
            rule::<unknown_project::Options>(c).external_projects =
                list(n, f, "a list of AppProject names")?;
            Ok(())
        },
    },
    Row {
        key: "cluster_resources_allowed",
        doc: "Cluster-scoped kinds a project may whitelist, `group/Kind` (argocd/project-bounds).",
        init: "[Namespace]",
        set: |c, n, f| {
            rule::<project_bounds::Options>(c).cluster_resources_allowed =
                Some(list(n, f, "a list of `group/Kind` strings")?);
            Ok(())
        },
    },
    Row {
        key: "self_paths",
        doc: "Folders holding Argo CD's own installation (argocd/self-managed).",
        init: "[]",
        set: |c, n, f| {
            rule::<self_managed::Options>(c).self_paths = list(n, f, "a list of paths")?;
            Ok(())
        },
    },
    Row {
        key: "infra_namespaces",
        doc: "Namespaces of the infrastructure (argocd/infra-boundary).",
        init: "[kube-system, kube-public, kube-node-lease, cert-manager, cilium, rook-ceph, metallb-system, ingress-nginx, gateway-system]",
        set: |c, n, f| {
            rule::<infra_boundary::Options>(c).infra_namespaces =
                Some(list(n, f, "a list of namespaces")?);
            Ok(())
        },
    },
    Row {
        key: "infra_charts",
        doc: "Helm charts and OLM packages of the infrastructure (argocd/infra-boundary). Unset: well-known operators and add-ons (see `gitops-lint explain argocd/infra-boundary`); a list replaces them.",
        init: "# [cert-manager, ...]",
        set: |c, n, f| {
            rule::<infra_boundary::Options>(c).infra_charts =
                Some(list(n, f, "a list of chart names")?);
            Ok(())
        },
    },
    Row {
        key: "infra_paths",
        doc: "Folders or files of the infrastructure (argocd/infra-boundary).",
        init: "[]",
        set: |c, n, f| {
            rule::<infra_boundary::Options>(c).infra_paths = list(n, f, "a list of paths")?;
            Ok(())
        },
    },
    Row {
        key: "server_service",
        doc: "The Service of argocd-server (argocd/insecure-without-edge-tls).",
        init: "argocd-server",
        set: |c, n, f| {
            let name = n.as_str().map(str::trim).filter(|s| !s.is_empty());
            let Some(name) = name else {
                return Err((
                    n,
                    format!("`{}` must be a Service name", f.name),
                    Some("e.g. `server_service: argocd-server`".into()),
                ));
            };
            rule::<insecure_without_edge_tls::Options>(c).server_service = Some(name.to_string());
            Ok(())
        },
    },
    Row {
        key: "version",
        doc: "The Argo CD release the repository targets, e.g. \"3.1\" (argocd/schema). Unset: the latest modelled release.",
        init: "# \"3.5\"",
        set: |c, n, f| {
            let version = n
                .scalar_text()
                .and_then(crate::model::argocd::schema::Version::parse)
                .filter(|v| (2..=3).contains(&v.major));
            let Some(version) = version else {
                return Err((
                    n,
                    format!(
                        "`{}` must be an Argo CD release such as `3.1` or `v2.14.5`",
                        f.name
                    ),
                    Some("e.g. `version: \"3.1\"`".into()),
                ));
            };
            rule::<schema::Options>(c).version = Some(version);
            Ok(())
        },
    },
    Row {
        key: "edge_tls",
        doc: "Where TLS in front of argocd-server ends: `{mode: repository}` (proved from the manifests) or `{mode: external, reason: \"...\"}` (a load balancer or tunnel outside the repository).",
        init: "{mode: repository}",
        set: |c, n, _| {
            rule::<insecure_without_edge_tls::Options>(c).edge_tls = edge_tls(n)?;
            Ok(())
        },
    },
];
