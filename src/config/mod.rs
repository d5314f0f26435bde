//! `.gitops-lint.yaml`: rule severities and options, include/exclude globs, repository URLs.
//!
//! Parsed with our own YAML layer, so every error points at the config line, and unknown keys
//! or rule ids come with a "did you mean".

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::diagnostic::{Severity, did_you_mean};
use crate::model::{ArgocdSettings, Settings};
use crate::rules::argocd::insecure_without_edge_tls::EdgeTls;

mod rows;
use crate::rule::{RuleMeta, RuleOptions, TypedOptions};
use crate::source::FileId;
use crate::source::fs::{Reach, Root};
use crate::yaml::{self, Node};
pub use rows::{Row, SECTIONS, Section, TOP_LEVEL};

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
    /// The `argocd:` section's keys the model reads.
    pub argocd: ArgocdSettings,
    /// The `ci:` section's keys the model reads.
    pub ci: crate::model::settings::CiSettings,
    pub rules: BTreeMap<String, RuleConfig>,
    /// The rules' typed options: their `rules.<id>` options and the keys of the `argocd:` and
    /// `ci:` sections that one rule reads.
    pub options: TypedOptions,
    /// `select`: report only these rules (ids or groups such as `argocd/`); `None`: all.
    pub select: Option<Vec<String>>,
    /// `extend-select`: rules reported in addition to `select`.
    pub extend_select: Vec<String>,
    /// `ignore`: rules not reported.
    pub ignore: Vec<String>,
    /// `data`: JSON/YAML files or folders merged under the policies' `data`, relative to the
    /// config file (added to `--data`).
    pub data: Vec<String>,
    /// `namespace`: the packages whose rules run (globs); `--namespace` replaces them.
    pub namespace: Vec<String>,
    /// `fail_on`: the lowest severity that fails the run; `--fail-on` replaces it.
    pub fail_on: Option<FailOn>,
}

/// The lowest severity that makes `check` exit with 1 (`never`: none).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FailOn {
    Error,
    Warning,
    Info,
    Never,
}

impl FailOn {
    /// The severity at and above which findings fail the run; `None` for `never`.
    #[must_use]
    pub fn threshold(self) -> Option<Severity> {
        match self {
            FailOn::Error => Some(Severity::Error),
            FailOn::Warning => Some(Severity::Warning),
            FailOn::Info => Some(Severity::Info),
            FailOn::Never => None,
        }
    }
}

/// Rule selectors of the command line (`--select`, `--extend-select`, `--ignore`), laid over
/// the configuration's with [`Config::select_rules`].
#[derive(Clone, Debug, Default)]
pub struct Selection {
    pub select: Vec<String>,
    pub extend_select: Vec<String>,
    pub ignore: Vec<String>,
}

impl Config {
    /// The configured level of `rule`, if any; `Off` for a rule that `select`, `extend-select`
    /// and `ignore` leave out, so that it does not run, report or fix.
    #[must_use]
    pub fn level(&self, rule: &str) -> Option<Level> {
        if !self.selected(rule) {
            return Some(Level::Off);
        }
        self.rules.get(rule).and_then(|r| r.level)
    }

    /// Lays the command line's selectors over the configuration's: `--select` replaces
    /// `select`; `--extend-select` and `--ignore` add to theirs.
    pub fn select_rules(&mut self, given: &Selection) {
        if !given.select.is_empty() {
            self.select = Some(given.select.clone());
        }
        self.extend_select
            .extend(given.extend_select.iter().cloned());
        self.ignore.extend(given.ignore.iter().cloned());
    }

    /// Whether `select`, `extend-select` and `ignore` keep `rule`.
    fn selected(&self, rule: &str) -> bool {
        let selected = self.select.as_ref().is_none_or(|list| {
            list.iter()
                .chain(&self.extend_select)
                .any(|s| selector_matches(s, rule))
        });
        selected && !self.ignore.iter().any(|s| selector_matches(s, rule))
    }

    /// What the model needs from the configuration.
    #[must_use]
    pub fn settings(&self) -> Settings {
        Settings {
            repo_urls: self.repo_urls.clone(),
            argocd: self.argocd.clone(),
            ci: self.ci.clone(),
            config_file: self
                .path
                .as_ref()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned()),
        }
    }

    /// Every rule's options.
    #[must_use]
    pub fn rule_options(&self) -> RuleOptions {
        RuleOptions {
            json: self
                .rules
                .iter()
                .filter(|(_, r)| !r.options.is_empty())
                .map(|(id, r)| (id.clone(), r.options.clone()))
                .collect(),
            typed: self.options.clone(),
            enabled: None,
        }
    }
}

/// A configuration problem, located in the config file when possible.
pub type ConfigError = crate::source::FileError;

/// Every problem of one configuration file (at least one), in file order. Dereferences to
/// the first.
#[derive(Debug)]
pub struct ConfigErrors(pub Vec<ConfigError>);

impl std::ops::Deref for ConfigErrors {
    type Target = ConfigError;
    fn deref(&self) -> &ConfigError {
        &self.0[0]
    }
}

impl std::fmt::Display for ConfigErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            e.fmt(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for ConfigErrors {}

/// Finds the config file at `root`, if there is one.
#[must_use]
pub fn find(root: &Path) -> Option<PathBuf> {
    FILE_NAMES
        .iter()
        .map(|n| root.join(n))
        .find(|p| p.is_file())
}

/// An error at item `index` of the list at `path` (e.g. `["argocd", "roots"]`) of the
/// configuration file `config` was read from: for checks that need the repository.
#[must_use]
pub fn item_error(
    config: &Config,
    path: &[&str],
    index: usize,
    message: String,
    help: Option<String>,
) -> ConfigError {
    let file = config.path.clone().unwrap_or_default();
    // Read a moment ago within its reach: only a regular file is read again.
    let text =
        crate::source::fs::read_file_text(&file, crate::source::MAX_FILE_BYTES).unwrap_or_default();
    let parsed = yaml::parse(FileId(0), &text);
    let span = parsed
        .docs
        .first()
        .and_then(|d| d.root.path(path))
        .and_then(|list| list.items().nth(index))
        .map(|n| (n.span.start as usize, n.span.end as usize));
    ConfigError {
        path: file,
        text,
        span,
        message,
        help,
    }
}

/// Reads and validates a configuration file the user named outside any repository against the
/// rule registry (see [`load_in`]).
pub fn load(path: &Path, rules: &[&RuleMeta]) -> Result<Config, ConfigErrors> {
    load_in(&Root::new(Path::new(".")), path, Reach::Anywhere, rules)
}

/// Reads and validates the configuration at `path` of the repository at `root`: with
/// [`Reach::Root`] (a file in the repository) only a regular file that does not lead outside the
/// root is read, so a committed link to `/proc/self/environ` is refused, never shown.
pub fn load_in(
    root: &Root,
    path: &Path,
    reach: Reach,
    rules: &[&RuleMeta],
) -> Result<Config, ConfigErrors> {
    let text = root
        .read_text(path, reach, crate::source::MAX_FILE_BYTES)
        .map_err(|e| {
            ConfigErrors(vec![ConfigError {
                path: path.to_path_buf(),
                text: String::new(),
                span: None,
                message: format!("cannot read the configuration: {}", e.reason),
                help: None,
            }])
        })?;
    parse(path, &text, rules)
}

/// Parses configuration text; `path` is only used in messages and to find policy folders.
/// Every problem of the file is reported, not only the first.
pub fn parse(path: &Path, text: &str, rules: &[&RuleMeta]) -> Result<Config, ConfigErrors> {
    let mut errors: Vec<ConfigError> = Vec::new();
    let mut push = |(node, message, help): FieldError<'_>| {
        errors.push(ConfigError {
            path: path.to_path_buf(),
            text: text.to_string(),
            span: Some((node.span.start as usize, node.span.end as usize)),
            message,
            help,
        });
    };
    let mut config = Config {
        path: Some(path.to_path_buf()),
        ..Config::default()
    };
    let parsed = yaml::parse(FileId(0), text);
    if let Some(e) = parsed.errors.first() {
        return Err(ConfigErrors(vec![ConfigError {
            path: path.to_path_buf(),
            text: text.to_string(),
            span: Some((e.span.start as usize, e.span.end as usize)),
            message: format!("invalid configuration: {}", e.message),
            help: None,
        }]));
    }
    let Some(doc) = parsed.docs.first() else {
        return Ok(config);
    };
    let root = &doc.root;
    if root.is_null() {
        return Ok(config);
    }
    if root.as_map().is_none() {
        push((root, "the configuration must be a mapping".into(), None));
    }
    let dir = path.parent();
    let mut known: Vec<&str> = TOP_LEVEL.iter().map(|r| r.key).collect();
    known.extend(SECTIONS.iter().map(|s| s.key));
    known.push("rules");
    for entry in root.entries() {
        let key = entry.key.scalar_text().unwrap_or("");
        if let Some(row) = TOP_LEVEL.iter().find(|r| r.key == key) {
            let field = rows::Field {
                name: key,
                dir,
                rules,
            };
            if let Err(e) = (row.set)(&mut config, &entry.value, &field) {
                push(e);
            }
        } else if let Some(section) = SECTIONS.iter().find(|s| s.key == key) {
            parse_section(&mut config, section, &entry.value, dir, rules, &mut push);
        } else if key == "rules" {
            parse_rules(&mut config, &entry.value, rules, &mut push);
        } else {
            push((
                &entry.key,
                format!("unknown configuration key `{key}`"),
                did_you_mean(key, &known),
            ));
        }
    }
    if errors.is_empty() {
        Ok(config)
    } else {
        Err(ConfigErrors(errors))
    }
}

fn parse_section<'n>(
    config: &mut Config,
    section: &Section,
    value: &'n Node,
    dir: Option<&Path>,
    rules: &[&RuleMeta],
    push: &mut impl FnMut(FieldError<'n>),
) {
    if value.is_null() {
        return;
    }
    let keys: Vec<&str> = section.rows.iter().map(|r| r.key).collect();
    if value.as_map().is_none() {
        push((
            value,
            format!(
                "`{}` must be a mapping (keys: {})",
                section.key,
                keys.join(", ")
            ),
            None,
        ));
        return;
    }
    for e in value.entries() {
        let k = e.key.scalar_text().unwrap_or("");
        let name = format!("{}.{k}", section.key);
        match section.rows.iter().find(|r| r.key == k) {
            Some(row) => {
                let field = rows::Field {
                    name: &name,
                    dir,
                    rules,
                };
                if let Err(err) = (row.set)(config, &e.value, &field) {
                    push(err);
                }
            }
            None => push((
                &e.key,
                format!("unknown configuration key `{name}`"),
                did_you_mean(k, &keys),
            )),
        }
    }
}

fn parse_rules<'n>(
    config: &mut Config,
    value: &'n Node,
    rules: &[&RuleMeta],
    push: &mut impl FnMut(FieldError<'n>),
) {
    if value.is_null() {
        return;
    }
    if value.as_map().is_none() {
        push((
            value,
            "`rules` must map rule ids to a level or to options".into(),
            None,
        ));
        return;
    }
    for r in value.entries() {
        let id = r.key.scalar_text().unwrap_or("");
        if id.starts_with("policy/") && !rules.iter().any(|m| m.id == id) {
            // A user policy's id, only known when the policy runs: a level only.
            let s = r.value.scalar_text().filter(|_| !r.value.is_null());
            match s.and_then(parse_level) {
                Some(level) => {
                    config.rules.insert(
                        id.to_string(),
                        RuleConfig {
                            level: Some(level),
                            options: serde_json::Map::new(),
                        },
                    );
                }
                None => push((
                    &r.value,
                    format!(
                        "`{id}` is a user policy rule: give it a level (off, info, warning, error)"
                    ),
                    None,
                )),
            }
            continue;
        }
        let Some(meta) = rules.iter().find(|m| m.id == id) else {
            let known: Vec<&str> = rules.iter().map(|m| m.id).collect();
            push((
                &r.key,
                format!("unknown rule `{id}`"),
                did_you_mean(id, &known)
                    .or_else(|| Some("run `gitops-lint rules` to list the rule ids".into())),
            ));
            continue;
        };
        match rule_config(meta, &r.value, &mut config.options) {
            Ok(rc) => {
                config.rules.insert(id.to_string(), rc);
            }
            Err(e) => push(e),
        }
    }
}

pub(crate) type FieldError<'n> = (&'n Node, String, Option<String>);

const EDGE_TLS_KEYS: &[&str] = &["mode", "reason"];
const EDGE_TLS_MODES: &[&str] = &["repository", "external"];
const EDGE_TLS_EXAMPLE: &str =
    "e.g. `edge_tls: {mode: external, reason: \"TLS ends at the corporate load balancer\"}`";

/// `argocd.edge_tls`: `{mode: repository}` (the default: prove edge TLS from the repository)
/// or `{mode: external, reason: "..."}`.
pub(crate) fn edge_tls(value: &Node) -> Result<Option<EdgeTls>, FieldError<'_>> {
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

/// A rule's level and options; a Rust rule's options are set in `typed` too.
fn rule_config<'n>(
    meta: &RuleMeta,
    value: &'n Node,
    typed: &mut TypedOptions,
) -> Result<RuleConfig, FieldError<'n>> {
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
        let fits = match opt.set {
            Some(set) => set(typed, &json),
            None => opt.kind.accepts(&json),
        };
        if !fits {
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

pub(crate) fn string_list(node: &Node) -> Result<Vec<String>, &Node> {
    if node.is_null() {
        return Ok(Vec::new());
    }
    let items = node.as_seq().ok_or(node)?;
    items
        .iter()
        .map(|n| n.scalar_text().map(str::to_string).ok_or(n))
        .collect()
}

/// The commented starter configuration written by `gitops-lint init`, generated from the rows
/// and the registry.
#[must_use]
pub fn starter(rules: &[&RuleMeta]) -> String {
    let mut out = String::from(
        "# gitops-lint configuration. Docs: `gitops-lint explain RULE`, `gitops-lint rules`.\n",
    );
    for row in TOP_LEVEL {
        out.push_str(&format!("\n# {}\n", row.doc));
        match row.init.strip_prefix("# ") {
            Some(example) => out.push_str(&format!("# {}: {example}\n", row.key)),
            None => out.push_str(&format!("{}: {}\n", row.key, row.init)),
        }
    }
    for section in SECTIONS {
        out.push_str(&format!("\n# {}\n{}:\n", section.doc, section.key));
        for row in section.rows {
            out.push_str(&format!("  # {}\n", row.doc));
            match row.init.strip_prefix("# ") {
                Some(example) => out.push_str(&format!("  # {}: {example}\n", row.key)),
                None => out.push_str(&format!("  {}: {}\n", row.key, row.init)),
            }
        }
    }
    out.push_str(
        "\n# Per rule: a level (off, info, warning, error), or a mapping with `severity` and options.\nrules:\n",
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

/// A selector's group: `argocd` for `argocd/`, `argocd` and `argocd/*` (the form suppression
/// comments take).
fn selector_group(selector: &str) -> &str {
    selector
        .strip_suffix("/*")
        .unwrap_or(selector)
        .trim_end_matches('/')
}

/// Checks a rule selector of `select`/`ignore`: a rule id, a group (`argocd/`, `argocd/*` or
/// `argocd`), or any `policy/…` id (user policies are known only when they run). The error is a
/// help line.
pub fn check_selector(selector: &str, rules: &[&RuleMeta]) -> Result<(), String> {
    let group = selector_group(selector);
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

/// Whether `rule` matches a selector of `select`/`ignore` (an id or a group).
#[must_use]
pub fn selector_matches(selector: &str, rule: &str) -> bool {
    let group = selector_group(selector);
    rule == selector
        || rule
            .strip_prefix(group)
            .is_some_and(|rest| rest.starts_with('/'))
}
