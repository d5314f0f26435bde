//! `.gitops-lint.yaml`: rule severities and options, include/exclude globs, repository URLs.
//!
//! Parsed with our own YAML layer, so every error points at the config line, and unknown keys
//! or rule ids come with a "did you mean".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::Severity;
use crate::rules::RuleMeta;
use crate::source::FileId;
use crate::yaml::{self, Node};

pub const FILE_NAMES: &[&str] = &[".gitops-lint.yaml", ".gitops-lint.yml"];

/// A rule's configured level.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Level {
    Off,
    On(Severity),
}

#[derive(Clone, Debug, Default)]
pub struct RuleConfig {
    pub level: Option<Level>,
    /// Rule-specific options as JSON, validated against the rule's declared options.
    pub options: serde_json::Map<String, serde_json::Value>,
}

#[derive(Clone, Debug, Default)]
pub struct Config {
    /// Where the configuration was read from, if anywhere.
    pub path: Option<PathBuf>,
    pub include: Vec<String>,
    pub exclude: Vec<String>,
    /// URLs under which this repository is known to Argo CD.
    pub repo_urls: Vec<String>,
    /// Folders or files of Rego policies (conftest style), relative to the config file.
    pub policies: Vec<String>,
    /// The `argocd:` section.
    pub argocd: ArgocdConfig,
    pub rules: BTreeMap<String, RuleConfig>,
    /// `select`: report only these rules (ids or groups such as `argocd/`); `None`: all.
    pub select: Option<Vec<String>>,
    /// `extend-select`: rules reported in addition to `select`.
    pub extend_select: Vec<String>,
    /// `ignore`: rules not reported.
    pub ignore: Vec<String>,
}

/// The `argocd:` section of the configuration.
#[derive(Clone, Debug, Default)]
pub struct ArgocdConfig {
    /// Files (relative to the root) whose Argo CD objects are applied by the bootstrap. When
    /// set, only what is reachable from them through app-of-apps is live.
    pub roots: Vec<String>,
    /// AppProjects created outside this repository (`argocd/unknown-project`).
    pub external_projects: Vec<String>,
    /// Cluster-scoped kinds a project may whitelist, as `group/Kind` or `Kind` (core group);
    /// `None`: only `Namespace` (`argocd/project-bounds`).
    pub cluster_resources_allowed: Option<Vec<String>>,
    /// Folders or files holding Argo CD's own installation (`argocd/self-managed`).
    pub self_paths: Vec<String>,
    /// Namespaces of the infrastructure; `None`: the default list (`argocd/infra-boundary`).
    pub infra_namespaces: Option<Vec<String>>,
    /// Helm charts of the infrastructure (`argocd/infra-boundary`).
    pub infra_charts: Vec<String>,
    /// Folders or files of the infrastructure (`argocd/infra-boundary`).
    pub infra_paths: Vec<String>,
    /// `argocd.server_service`: the Service of argocd-server (default `argocd-server`).
    pub server_service: Option<String>,
    /// `argocd.edge_tls`: where TLS in front of argocd-server is terminated.
    pub edge_tls: Option<EdgeTls>,
}

/// `argocd.edge_tls: {mode: external, reason: "..."}`: TLS in front of argocd-server is
/// terminated outside the repository (a cloud load balancer, a tunnel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeTls {
    /// Why plain HTTP to argocd-server is safe; printed in `--format text`.
    pub reason: String,
}

impl ArgocdConfig {
    /// The Service name of argocd-server.
    #[must_use]
    pub fn server_service(&self) -> &str {
        self.server_service.as_deref().unwrap_or("argocd-server")
    }
}

impl Config {
    /// The configured level of `rule`, if any.
    #[must_use]
    pub fn level(&self, rule: &str) -> Option<Level> {
        self.rules.get(rule).and_then(|r| r.level)
    }

    /// What the Argo CD resolver needs.
    #[must_use]
    pub fn resolve_options(&self) -> crate::model::resolve::ResolveOptions {
        crate::model::resolve::ResolveOptions {
            repo_urls: self.repo_urls.clone(),
            roots: self.argocd.roots.clone(),
        }
    }

    /// The options given for `rule` (empty when none).
    #[must_use]
    pub fn options(&self, rule: &str) -> &serde_json::Map<String, serde_json::Value> {
        static EMPTY: std::sync::OnceLock<serde_json::Map<String, serde_json::Value>> =
            std::sync::OnceLock::new();
        self.rules
            .get(rule)
            .map_or_else(|| EMPTY.get_or_init(serde_json::Map::new), |r| &r.options)
    }
}

/// A configuration problem, located in the config file when possible.
pub type ConfigError = crate::source::FileError;

/// Finds the config file at `root`, if there is one.
#[must_use]
pub fn find(root: &Path) -> Option<PathBuf> {
    FILE_NAMES
        .iter()
        .map(|n| root.join(n))
        .find(|p| p.is_file())
}

const TOP_LEVEL: &[&str] = &[
    "include",
    "exclude",
    "policies",
    "repo_urls",
    "argocd",
    "rules",
    "select",
    "extend-select",
    "ignore",
];
const ARGOCD_KEYS: &[&str] = &[
    "roots",
    "external_projects",
    "cluster_resources_allowed",
    "self_paths",
    "infra_namespaces",
    "infra_charts",
    "infra_paths",
    "server_service",
    "edge_tls",
];

/// Reads and validates a configuration file against the rule registry.
pub fn load(path: &Path, rules: &[&RuleMeta]) -> Result<Config, ConfigError> {
    let text = std::fs::read_to_string(path).map_err(|e| ConfigError {
        path: path.to_path_buf(),
        text: String::new(),
        span: None,
        message: format!("cannot read the configuration: {e}"),
        help: None,
    })?;
    parse(path, &text, rules)
}

/// Parses configuration text; `path` is only used in messages.
pub fn parse(path: &Path, text: &str, rules: &[&RuleMeta]) -> Result<Config, ConfigError> {
    let err = |span: Option<(usize, usize)>, message: String, help: Option<String>| ConfigError {
        path: path.to_path_buf(),
        text: text.to_string(),
        span,
        message,
        help,
    };
    let parsed = yaml::parse(FileId(0), text);
    if let Some(e) = parsed.errors.first() {
        return Err(err(
            Some((e.span.start as usize, e.span.end as usize)),
            format!("invalid configuration: {}", e.message),
            None,
        ));
    }
    let mut config = Config {
        path: Some(path.to_path_buf()),
        ..Config::default()
    };
    let Some(doc) = parsed.docs.first() else {
        return Ok(config);
    };
    let root = &doc.root;
    if root.is_null() {
        return Ok(config);
    }
    let span_of = |n: &Node| Some((n.span.start as usize, n.span.end as usize));
    if root.as_map().is_none() {
        return Err(err(
            span_of(root),
            "the configuration must be a mapping".into(),
            None,
        ));
    }
    for entry in root.entries() {
        let key = entry.key.scalar_text().unwrap_or("");
        match key {
            "include" => {
                config.include = string_list(&entry.value).map_err(|n| {
                    err(
                        span_of(n),
                        "`include` must be a list of glob strings".into(),
                        None,
                    )
                })?
            }
            "exclude" => {
                config.exclude = string_list(&entry.value).map_err(|n| {
                    err(
                        span_of(n),
                        "`exclude` must be a list of glob strings".into(),
                        None,
                    )
                })?
            }
            "select" | "extend-select" | "ignore" => {
                let list = string_list(&entry.value).map_err(|n| {
                    err(
                        span_of(n),
                        format!("`{key}` must be a list of rule ids or groups such as `argocd/`"),
                        None,
                    )
                })?;
                for (sel, n) in list.iter().zip(entry.value.items()) {
                    if let Err(help) = check_selector(sel, rules) {
                        return Err(err(
                            span_of(n),
                            format!("unknown rule or group `{sel}`"),
                            Some(help),
                        ));
                    }
                }
                match key {
                    "select" => config.select = Some(list),
                    "extend-select" => config.extend_select = list,
                    _ => config.ignore = list,
                }
            }
            "repo_urls" => {
                config.repo_urls = string_list(&entry.value).map_err(|n| {
                    err(
                        span_of(n),
                        "`repo_urls` must be a list of URLs".into(),
                        None,
                    )
                })?
            }
            "policies" => {
                config.policies = string_list(&entry.value).map_err(|n| {
                    err(
                        span_of(n),
                        "`policies` must be a list of folders or `.rego` files".into(),
                        None,
                    )
                })?;
                if let Some(dir) = path.parent() {
                    for (p, n) in config.policies.iter().zip(entry.value.items()) {
                        let full = dir.join(p);
                        if !full.exists() {
                            return Err(err(
                                span_of(n),
                                format!("policy path `{p}` does not exist"),
                                Some("paths are relative to the configuration file".into()),
                            ));
                        }
                    }
                }
            }
            "argocd" => {
                if entry.value.is_null() {
                    continue;
                }
                if entry.value.as_map().is_none() {
                    return Err(err(
                        span_of(&entry.value),
                        format!(
                            "`argocd` must be a mapping (keys: {})",
                            ARGOCD_KEYS.join(", ")
                        ),
                        None,
                    ));
                }
                for a in entry.value.entries() {
                    let k = a.key.scalar_text().unwrap_or("");
                    match k {
                        "roots" => {
                            config.argocd.roots = string_list(&a.value).map_err(|n| {
                                err(
                                    span_of(n),
                                    "`argocd.roots` must be a list of file paths".into(),
                                    None,
                                )
                            })?;
                        }
                        "external_projects" => {
                            config.argocd.external_projects =
                                string_list(&a.value).map_err(|n| {
                                    err(
                                    span_of(n),
                                    "`argocd.external_projects` must be a list of AppProject names"
                                        .into(),
                                    None,
                                )
                                })?;
                        }
                        "cluster_resources_allowed" => {
                            config.argocd.cluster_resources_allowed =
                                Some(string_list(&a.value).map_err(|n| {
                                    err(
                                        span_of(n),
                                        "`argocd.cluster_resources_allowed` must be a list of `group/Kind` strings".into(),
                                        None,
                                    )
                                })?);
                        }
                        "self_paths" => {
                            config.argocd.self_paths = string_list(&a.value).map_err(|n| {
                                err(
                                    span_of(n),
                                    "`argocd.self_paths` must be a list of paths".into(),
                                    None,
                                )
                            })?;
                        }
                        "infra_namespaces" => {
                            config.argocd.infra_namespaces =
                                Some(string_list(&a.value).map_err(|n| {
                                    err(
                                        span_of(n),
                                        "`argocd.infra_namespaces` must be a list of namespaces"
                                            .into(),
                                        None,
                                    )
                                })?);
                        }
                        "infra_charts" => {
                            config.argocd.infra_charts = string_list(&a.value).map_err(|n| {
                                err(
                                    span_of(n),
                                    "`argocd.infra_charts` must be a list of chart names".into(),
                                    None,
                                )
                            })?;
                        }
                        "infra_paths" => {
                            config.argocd.infra_paths = string_list(&a.value).map_err(|n| {
                                err(
                                    span_of(n),
                                    "`argocd.infra_paths` must be a list of paths".into(),
                                    None,
                                )
                            })?;
                        }
                        "server_service" => {
                            let name = a.value.as_str().filter(|s| !s.trim().is_empty());
                            let Some(name) = name else {
                                return Err(err(
                                    span_of(&a.value),
                                    "`argocd.server_service` must be a Service name".into(),
                                    Some("e.g. `server_service: argocd-server`".into()),
                                ));
                            };
                            config.argocd.server_service = Some(name.trim().to_string());
                        }
                        "edge_tls" => {
                            config.argocd.edge_tls =
                                edge_tls(&a.value).map_err(|(n, m, h)| err(span_of(n), m, h))?;
                        }
                        _ => {
                            return Err(err(
                                span_of(&a.key),
                                format!("unknown configuration key `argocd.{k}`"),
                                did_you_mean(k, ARGOCD_KEYS),
                            ));
                        }
                    }
                }
            }
            "rules" => {
                if entry.value.is_null() {
                    continue;
                }
                if entry.value.as_map().is_none() {
                    return Err(err(
                        span_of(&entry.value),
                        "`rules` must map rule ids to a level or to options".into(),
                        None,
                    ));
                }
                for r in entry.value.entries() {
                    let id = r.key.scalar_text().unwrap_or("");
                    if id.starts_with("policy/") && !rules.iter().any(|m| m.id == id) {
                        // A user policy's id, only known when the policy runs: a level only.
                        let s = r.value.scalar_text().filter(|_| !r.value.is_null());
                        let level = s.and_then(parse_level).ok_or_else(|| {
                            err(
                                span_of(&r.value),
                                format!("`{id}` is a user policy rule: give it a level (off, info, warning, error)"),
                                None,
                            )
                        })?;
                        config.rules.insert(
                            id.to_string(),
                            RuleConfig {
                                level: Some(level),
                                options: serde_json::Map::new(),
                            },
                        );
                        continue;
                    }
                    let Some(meta) = rules.iter().find(|m| m.id == id) else {
                        let known: Vec<&str> = rules.iter().map(|m| m.id).collect();
                        return Err(err(
                            span_of(&r.key),
                            format!("unknown rule `{id}`"),
                            did_you_mean(id, &known).or_else(|| {
                                Some("run `gitops-lint rules` to list the rule ids".into())
                            }),
                        ));
                    };
                    let rc =
                        rule_config(meta, &r.value).map_err(|(n, m, h)| err(span_of(n), m, h))?;
                    config.rules.insert(id.to_string(), rc);
                }
            }
            _ => {
                return Err(err(
                    span_of(&entry.key),
                    format!("unknown configuration key `{key}`"),
                    did_you_mean(key, TOP_LEVEL),
                ));
            }
        }
    }
    Ok(config)
}

type FieldError<'n> = (&'n Node, String, Option<String>);

const EDGE_TLS_KEYS: &[&str] = &["mode", "reason"];
const EDGE_TLS_MODES: &[&str] = &["repository", "external"];
const EDGE_TLS_EXAMPLE: &str =
    "e.g. `edge_tls: {mode: external, reason: \"TLS ends at the corporate load balancer\"}`";

/// `argocd.edge_tls`: `{mode: repository}` (the default: prove edge TLS from the repository)
/// or `{mode: external, reason: "..."}`.
fn edge_tls(value: &Node) -> Result<Option<EdgeTls>, FieldError<'_>> {
    if value.is_null() {
        return Ok(None);
    }
    if value.as_map().is_none() {
        return Err((
            value,
            "`argocd.edge_tls` must be a mapping with `mode` and, for `mode: external`, a `reason`"
                .into(),
            Some(EDGE_TLS_EXAMPLE.into()),
        ));
    }
    let mut mode = None;
    let mut reason = None;
    for e in value.entries() {
        let k = e.key.scalar_text().unwrap_or("");
        match k {
            "mode" => {
                let m = e.value.scalar_text().unwrap_or("");
                if !EDGE_TLS_MODES.contains(&m) {
                    return Err((
                        &e.value,
                        format!("unknown `argocd.edge_tls.mode` `{m}`"),
                        did_you_mean(m, EDGE_TLS_MODES)
                            .or_else(|| Some("use `repository` or `external`".into())),
                    ));
                }
                mode = Some(m);
            }
            "reason" => {
                let r = e.value.as_str().map(str::trim).unwrap_or("");
                if r.is_empty() {
                    return Err((
                        &e.value,
                        "`argocd.edge_tls.reason` must be a non-empty string".into(),
                        Some(
                            "say where TLS is terminated and why plain HTTP behind it is safe"
                                .into(),
                        ),
                    ));
                }
                reason = Some(r.to_string());
            }
            _ => {
                return Err((
                    &e.key,
                    format!("unknown configuration key `argocd.edge_tls.{k}`"),
                    did_you_mean(k, EDGE_TLS_KEYS),
                ));
            }
        }
    }
    match (mode, reason) {
        (Some("external"), Some(reason)) => Ok(Some(EdgeTls { reason })),
        (Some("external"), None) => Err((
            value,
            "`argocd.edge_tls` with `mode: external` needs a `reason`".into(),
            Some(EDGE_TLS_EXAMPLE.into()),
        )),
        (None, _) => Err((
            value,
            "`argocd.edge_tls` needs a `mode` (`repository` or `external`)".into(),
            Some(EDGE_TLS_EXAMPLE.into()),
        )),
        _ => Ok(None),
    }
}

fn rule_config<'n>(meta: &RuleMeta, value: &'n Node) -> Result<RuleConfig, FieldError<'n>> {
    if let Some(s) = value.scalar_text().filter(|_| !value.is_null()) {
        return Ok(RuleConfig {
            level: Some(parse_level(s).ok_or_else(|| level_error(value, s))?),
            options: serde_json::Map::new(),
        });
    }
    if value.as_map().is_none() {
        return Err((
            value,
            format!(
                "`{}` must be a level (off, info, warning, error) or a mapping of options",
                meta.id
            ),
            None,
        ));
    }
    let mut rc = RuleConfig::default();
    for e in value.entries() {
        let key = e.key.scalar_text().unwrap_or("");
        if key == "severity" {
            let s = e.value.scalar_text().unwrap_or("");
            rc.level = Some(parse_level(s).ok_or_else(|| level_error(&e.value, s))?);
            continue;
        }
        let Some(opt) = meta.options.iter().find(|o| o.name == key) else {
            let mut known: Vec<&str> = meta.options.iter().map(|o| o.name).collect();
            known.push("severity");
            return Err((
                &e.key,
                format!("unknown option `{key}` for rule `{}`", meta.id),
                did_you_mean(key, &known),
            ));
        };
        let json = e.value.to_json();
        if !opt.kind.accepts(&json) {
            return Err((
                &e.value,
                format!(
                    "option `{key}` of `{}` must be {}",
                    meta.id,
                    opt.kind.describe()
                ),
                None,
            ));
        }
        rc.options.insert(key.to_string(), json);
    }
    Ok(rc)
}

fn level_error<'n>(node: &'n Node, s: &str) -> FieldError<'n> {
    (
        node,
        format!("unknown level `{s}`"),
        did_you_mean(s, &["off", "info", "warning", "error"])
            .or_else(|| Some("use one of: off, info, warning, error".into())),
    )
}

fn parse_level(s: &str) -> Option<Level> {
    if s == "off" {
        return Some(Level::Off);
    }
    Severity::parse(s).map(Level::On)
}

fn string_list(node: &Node) -> Result<Vec<String>, &Node> {
    if node.is_null() {
        return Ok(Vec::new());
    }
    let items = node.as_seq().ok_or(node)?;
    items
        .iter()
        .map(|n| n.scalar_text().map(str::to_string).ok_or(n))
        .collect()
}

/// Checks a rule selector of `select`/`ignore`: a rule id, a group (`argocd/` or `argocd`), or
/// any `policy/…` id (user policies are known only when they run). The error is a help line.
pub fn check_selector(selector: &str, rules: &[&RuleMeta]) -> Result<(), String> {
    let group = selector.trim_end_matches('/');
    let is_group = |m: &&&RuleMeta| m.id.split_once('/').is_some_and(|(g, _)| g == group);
    if selector.starts_with("policy/")
        || group == "policy"
        || rules.iter().any(|m| m.id == selector)
        || rules.iter().any(|m| is_group(&m))
    {
        return Ok(());
    }
    let mut known: Vec<String> = rules.iter().map(|m| m.id.to_string()).collect();
    let mut groups: Vec<String> = rules
        .iter()
        .filter_map(|m| m.id.split_once('/').map(|(g, _)| format!("{g}/")))
        .collect();
    groups.dedup();
    known.extend(groups);
    let known: Vec<&str> = known.iter().map(String::as_str).collect();
    Err(did_you_mean(selector, &known)
        .unwrap_or_else(|| "run `gitops-lint rules` to list the rule ids".into()))
}

/// Whether `rule` matches a selector of `select`/`ignore` (an id or a group prefix).
#[must_use]
pub fn selector_matches(selector: &str, rule: &str) -> bool {
    let group = selector.trim_end_matches('/');
    rule == selector
        || rule
            .strip_prefix(group)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// "did you mean `x`?" for the closest known name, if any is close.
#[must_use]
pub fn did_you_mean(got: &str, known: &[&str]) -> Option<String> {
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(got, k), *k))
        .filter(|(score, _)| *score > 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| format!("did you mean `{k}`?"))
}

/// The kinds of value a rule option takes.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OptionKind {
    Bool,
    String,
    StringList,
}

impl OptionKind {
    fn accepts(self, v: &serde_json::Value) -> bool {
        match self {
            OptionKind::Bool => v.is_boolean(),
            OptionKind::String => v.is_string(),
            OptionKind::StringList => v
                .as_array()
                .is_some_and(|a| a.iter().all(serde_json::Value::is_string)),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            OptionKind::Bool => "true or false",
            OptionKind::String => "a string",
            OptionKind::StringList => "a list of strings",
        }
    }
}

/// The commented starter configuration written by `gitops-lint init`.
#[must_use]
pub fn starter(rules: &[&RuleMeta]) -> String {
    let mut out = String::from(
        "# gitops-lint configuration. Docs: `gitops-lint explain RULE`, `gitops-lint rules`.\n\
         \n\
         # Only lint files matching these globs (relative to this file's folder). Empty: all YAML.\n\
         include: []\n\
         # Never lint files matching these globs (in addition to .gitignore).\n\
         exclude: []\n\
         # URLs under which Argo CD knows this repository (default: the git `origin` remote).\n\
         repo_urls: []\n\
         # Folders of Rego policies (conftest style: `deny`, `warn`, `violation` in package `main`).\n\
         policies: []\n\
         # Argo CD: files the bootstrap applies. Empty: every Argo CD object found is live.\n\
         argocd:\n\
         \x20\x20roots: []\n\
         \x20\x20# AppProjects created outside this repository (argocd/unknown-project).\n\
         \x20\x20external_projects: []\n\
         \x20\x20# Cluster-scoped kinds a project may whitelist, `group/Kind` (argocd/project-bounds).\n\
         \x20\x20cluster_resources_allowed: [Namespace]\n\
         \x20\x20# Folders holding Argo CD's own installation (argocd/self-managed).\n\
         \x20\x20self_paths: []\n\
         \x20\x20# Namespaces, charts and folders of the infrastructure (argocd/infra-boundary).\n\
         \x20\x20infra_namespaces: [kube-system, kube-public, kube-node-lease, cert-manager, cilium, rook-ceph, metallb-system, ingress-nginx, gateway-system]\n\
         \x20\x20infra_charts: []\n\
         \x20\x20infra_paths: []\n\
         \x20\x20# The Service of argocd-server (argocd/insecure-without-edge-tls).\n\
         \x20\x20server_service: argocd-server\n\
         \x20\x20# Where TLS in front of argocd-server ends: `repository` (proved from the manifests)\n\
         \x20\x20# or `{mode: external, reason: \"...\"}` for a load balancer or tunnel outside the repository.\n\
         \x20\x20edge_tls:\n\
         \x20\x20\x20\x20mode: repository\n\
         \n\
         # Per rule: a level (off, info, warning, error), or a mapping with `severity` and options.\n\
         rules:\n",
    );
    for m in rules {
        out.push_str(&format!("  # {}\n", m.summary));
        for o in m.options {
            out.push_str(&format!("  #   option `{}`: {}\n", o.name, o.doc));
        }
        out.push_str(&format!("  {}: {}\n", m.id, m.default_severity.as_str()));
    }
    out
}
