//! Rego policies, run in-process by `regorus`: the shipped pack (`rules/`, embedded) and a
//! team's own conftest-style policies (`--policy DIR`, config `policies:`).
//!
//! Policies are compiled once per run into one engine per set; every rayon worker clones it
//! (cheap with regorus' `arc` feature). Each evaluation has a time limit: a runaway rule becomes
//! a `policy/evaluation-error` finding and is not evaluated again in that run.

mod annotations;
pub mod data;
mod eval;
mod kinds;
pub mod limits;
pub mod location;
pub mod pack;
mod recursion;
mod results;
pub mod run;
pub mod test_runner;
mod vm;
pub mod watchdog;

use std::collections::{BTreeMap, BTreeSet};
use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::Duration;

use regorus::Engine;

use crate::source::MAX_FILE_BYTES;
use crate::source::fs::{Reach, Root};
use regorus::utils::limits::ExecutionTimerConfig;

/// Rego syntax of a policy file.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum RegoVersion {
    V0,
    V1,
}

impl RegoVersion {
    #[must_use]
    pub fn parse(s: &str) -> Option<RegoVersion> {
        match s {
            "v0" | "0" => Some(RegoVersion::V0),
            "v1" | "1" => Some(RegoVersion::V1),
            _ => None,
        }
    }

    /// Guesses a file's syntax: `import rego.v1`, or `if`/`contains` used as keywords, mean v1;
    /// `import future.keywords` or a rule body without `if` (`deny[msg] {`) mean v0.
    #[must_use]
    pub fn detect(text: &str) -> RegoVersion {
        let mut v1_keywords = false;
        for line in text.lines() {
            let code = line.split('#').next().unwrap_or("").trim();
            if code.starts_with("import rego.v1") {
                return RegoVersion::V1;
            }
            if code.starts_with("import future.keywords") {
                return RegoVersion::V0;
            }
            let words: Vec<&str> = code
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .collect();
            if words.contains(&"if") || contains_keyword(code) {
                v1_keywords = true;
            }
            // `name[x] {` or `name {` at column 0: a v0 rule head without `if`.
            if !line.starts_with(char::is_whitespace)
                && code.ends_with('{')
                && !words.contains(&"if")
                && !code.contains(":=")
                && !code.contains(" = ")
                && !code.starts_with("package")
            {
                return RegoVersion::V0;
            }
        }
        if v1_keywords {
            RegoVersion::V1
        } else {
            RegoVersion::V0
        }
    }
}

/// `contains` as a keyword (`deny contains msg`), not the builtin call `contains(s, x)`.
fn contains_keyword(code: &str) -> bool {
    let mut rest = code;
    while let Some(i) = rest.find("contains") {
        let before_ok = rest[..i]
            .chars()
            .next_back()
            .is_none_or(|c| !(c.is_alphanumeric() || c == '_'));
        let after = &rest[i + "contains".len()..];
        if before_ok && after.starts_with(' ') && !after.trim_start().starts_with('(') {
            return true;
        }
        rest = after;
    }
    false
}

/// A policy file to compile.
#[derive(Clone, Debug)]
pub struct PolicyFile {
    /// As shown in messages (the path given, or `rules/…` for the shipped pack).
    pub path: String,
    pub text: String,
}

/// A policy that does not load: exit 2, rendered at the `.rego` line.
pub type PolicyError = crate::source::FileError;

impl PolicyError {
    fn plain(path: impl Into<PathBuf>, message: impl Into<String>) -> PolicyError {
        PolicyError {
            path: path.into(),
            text: String::new(),
            span: None,
            message: message.into(),
            help: None,
        }
    }

    /// From a regorus error, which names `file:line:col` in its text.
    fn from_regorus(file: &PolicyFile, err: &anyhow::Error) -> PolicyError {
        let full = format!("{err:#}");
        let (span, message) = locate_error(&file.path, &file.text, &full);
        PolicyError {
            path: PathBuf::from(&file.path),
            text: file.text.clone(),
            span,
            message,
            help: None,
        }
    }
}

/// Finds `path:line:col: message` in a regorus error text.
fn locate_error(path: &str, text: &str, err: &str) -> (Option<(usize, usize)>, String) {
    let needle = format!("{path}:");
    for line in err.lines() {
        let Some(pos) = line.find(&needle) else {
            continue;
        };
        let rest = &line[pos + needle.len()..];
        let mut parts = rest.splitn(3, ':');
        let (Some(l), Some(c)) = (parts.next(), parts.next()) else {
            continue;
        };
        let (Ok(l), Ok(c)) = (l.trim().parse::<usize>(), c.trim().parse::<usize>()) else {
            continue;
        };
        // regorus puts the message after the location, or on an `error: ...` line below a
        // code frame.
        let msg = parts
            .next()
            .map(|m| m.trim().trim_start_matches("error:").trim().to_string())
            .filter(|m| !m.is_empty())
            .or_else(|| {
                err.lines()
                    .find_map(|l| l.trim().strip_prefix("error:"))
                    .map(|m| m.trim().to_string())
                    .filter(|m| !m.is_empty())
            })
            .unwrap_or_else(|| first_line(err));
        let lines = crate::source::LineIndex::new(text);
        if l == 0 || l > lines.line_count() {
            return (None, msg);
        }
        let range = lines.line_range(text, l - 1);
        let line_text = &text[range.clone()];
        let start = range.start
            + line_text
                .char_indices()
                .nth(c.saturating_sub(1))
                .map_or(line_text.len(), |(i, _)| i);
        let end = line_text[start - range.start..]
            .find(|ch: char| ch.is_whitespace())
            .map_or(range.end, |i| start + i)
            .max(start);
        return (Some((start, end)), msg);
    }
    (None, first_line(err))
}

/// A regorus evaluation error in one line: `message (at file:line:col)`.
#[must_use]
pub fn summarize_error(e: &str) -> String {
    let mut msg = None;
    let mut at = None;
    for line in e.lines().map(str::trim) {
        if let Some(m) = line.strip_prefix("error:") {
            msg.get_or_insert_with(|| m.trim().to_string());
        } else if let Some(l) = line.strip_prefix("-->") {
            at.get_or_insert_with(|| l.trim().to_string());
        }
    }
    match (msg, at) {
        (Some(m), Some(a)) => format!("{m} (at {a})"),
        (Some(m), None) => m,
        _ => e
            .lines()
            .map(str::trim)
            .find(|l| !l.is_empty())
            .unwrap_or("evaluation failed")
            .to_string(),
    }
}

fn first_line(s: &str) -> String {
    s.lines().next().unwrap_or(s).trim().to_string()
}

/// Where a rule is written.
#[derive(Clone, Debug)]
pub struct RuleSite {
    pub file: String,
    /// 1-based.
    pub line: usize,
}

/// One Rego package of a policy set and the rules gitops-lint reads in it.
#[derive(Clone, Debug, Default)]
pub struct Package {
    /// Without the `data.` prefix.
    pub name: String,
    /// `deny*`, `violation*`, `warn*` rules, sorted.
    pub rules: Vec<String>,
    /// `test_*` rules, in file order.
    pub tests: Vec<String>,
    pub has_exception: bool,
    pub has_meta: bool,
    pub sites: BTreeMap<String, RuleSite>,
    /// The document kinds that can give a result, when the rules say (`policy::kinds`); `None`:
    /// any document.
    pub kinds: Option<BTreeSet<String>>,
    /// The ids `# METADATA` annotations give its rules (`policy::annotations`).
    pub ids: annotations::RuleIds,
}

/// A compiled set of policies.
#[derive(Clone)]
pub struct PolicySet {
    pub engine: Engine,
    pub packages: BTreeMap<String, Package>,
    /// Some policy calls `gitops.location`, so each document's tree is made available to it.
    pub uses_location: bool,
    /// Some policy mentions `gitops` (`data.gitops`, a `gitops.repo` package): the model is built.
    pub mentions_gitops: bool,
    /// The keys of `data.gitops` objects these policies can read (see [`data::Fields`]).
    pub fields: data::Fields,
    /// The time limit of one evaluation.
    pub timeout: Duration,
}

/// Default time limit of one rule evaluation on one input.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// Is `rule` one conftest reads: `deny`, `violation` or `warn`, with `_suffix`es.
#[must_use]
pub fn is_check_rule(rule: &str) -> bool {
    ["deny", "violation", "warn"].iter().any(|p| {
        rule == *p
            || rule.strip_prefix(p).is_some_and(|rest| {
                rest.starts_with('_')
                    && rest[1..]
                        .split('_')
                        .all(|s| !s.is_empty() && s.chars().all(|c| c.is_ascii_alphanumeric()))
            })
    })
}

/// `warn*` rules give warnings; `deny*`/`violation*` errors.
#[must_use]
pub fn is_warning_rule(rule: &str) -> bool {
    rule.starts_with("warn")
}

/// The name an `exception` rule uses for `rule`: its suffix (`deny_foo` → `foo`, `deny` → ``).
#[must_use]
pub fn exception_name(rule: &str) -> &str {
    for p in ["violation_", "deny_", "warn_"] {
        if let Some(s) = rule.strip_prefix(p) {
            return s;
        }
    }
    ""
}

/// Builtins policies may not call: no network, no environment. regorus only fails on an
/// unknown builtin when a rule using it is evaluated, so these are refused at load time, as
/// conftest does with a capabilities file.
pub const FORBIDDEN_BUILTINS: &[(&str, &str)] = &[
    ("http.send", "policies have no network access"),
    ("net.lookup_ip_addr", "policies have no network access"),
    ("opa.runtime", "policies cannot read the environment"),
];

/// The first call of a forbidden builtin in `text`: `(byte offset, name, reason)`.
fn forbidden_call(text: &str) -> Option<(usize, &'static str, &'static str)> {
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let code = line.split('#').next().unwrap_or("");
        for (name, why) in FORBIDDEN_BUILTINS {
            if let Some(i) = code.find(name) {
                let before_ok = code[..i]
                    .chars()
                    .next_back()
                    .is_none_or(|c| !(c.is_alphanumeric() || c == '_' || c == '.'));
                if before_ok && code[i + name.len()..].trim_start().starts_with('(') {
                    return Some((offset + i, name, why));
                }
            }
        }
        offset += line.len();
    }
    None
}

/// Rule heads written at column 0: `(name, 1-based line)`.
fn rule_heads(text: &str) -> Vec<(String, usize)> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with(char::is_whitespace) {
            continue;
        }
        let line = line.strip_prefix("default ").unwrap_or(line);
        let name: String = line
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if name.is_empty()
            || matches!(name.as_str(), "package" | "import" | "else")
            || name.starts_with(|c: char| c.is_ascii_digit())
        {
            continue;
        }
        let rest = line[name.len()..].trim_start();
        if rest.is_empty()
            || rest.starts_with(['[', '{', ':', '=', '(', '.'])
            || rest.starts_with("contains")
            || rest.starts_with("if")
        {
            out.push((name, i + 1));
        }
    }
    out
}

/// Collects `.rego` files under each path (a file or a folder, recursively), sorted: paths
/// the user named outside any repository (see [`collect_rego_files_in`]).
pub fn collect_rego_files(paths: &[PathBuf]) -> Result<Vec<PolicyFile>, PolicyError> {
    let anywhere: Vec<(PathBuf, Reach)> =
        paths.iter().map(|p| (p.clone(), Reach::Anywhere)).collect();
    collect_rego_files_in(&Root::new(Path::new(".")), &anywhere)
}

/// [`collect_rego_files`] for paths of a repository: a path with [`Reach::Root`], and every
/// file under it, is read only if it is a regular file that does not lead outside `root`.
pub fn collect_rego_files_in(
    root: &Root,
    paths: &[(PathBuf, Reach)],
) -> Result<Vec<PolicyFile>, PolicyError> {
    let mut out = Vec::new();
    for (p, reach) in paths {
        let mut files = files_under(root, p, *reach, &|n| n.ends_with(".rego"))
            .map_err(|e| PolicyError::plain(p, format!("cannot read the policy path: {e}")))?;
        files.sort();
        for f in files {
            let text = root.read_text(&f, *reach, MAX_FILE_BYTES).map_err(|e| {
                PolicyError::plain(&f, format!("cannot read the policy: {}", e.reason))
            })?;
            out.push(PolicyFile {
                path: f.display().to_string(),
                text,
            });
        }
    }
    Ok(out)
}

/// The file `p`, or the files under the folder `p` whose names `keep` accepts (links to
/// folders not followed); with [`Reach::Root`], `p` must lead to a place inside `root`.
fn files_under(
    root: &Root,
    p: &Path,
    reach: Reach,
    keep: &dyn Fn(&str) -> bool,
) -> Result<Vec<PathBuf>, String> {
    let at = match reach {
        Reach::Root => root.resolve(p).map_err(|e| e.reason)?,
        Reach::Anywhere => p.to_path_buf(),
    };
    let meta = std::fs::metadata(&at).map_err(|e| crate::source::fs::io_reason(&e))?;
    let mut files = Vec::new();
    if meta.is_dir() {
        walk_files(p, &mut files, keep);
    } else {
        files.push(p.to_path_buf());
    }
    Ok(files)
}

fn walk_files(dir: &Path, out: &mut Vec<PathBuf>, keep: &dyn Fn(&str) -> bool) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_dir() {
            walk_files(&p, out, keep);
        } else if p.file_name().and_then(|n| n.to_str()).is_some_and(keep) {
            out.push(p);
        }
    }
}

/// Reads `--data` folders: every JSON/YAML file, merged at the root of `data` (as conftest).
pub fn load_data_dirs(paths: &[PathBuf]) -> Result<Vec<(String, serde_json::Value)>, PolicyError> {
    let anywhere: Vec<(PathBuf, Reach)> =
        paths.iter().map(|p| (p.clone(), Reach::Anywhere)).collect();
    load_data_dirs_in(&Root::new(Path::new(".")), &anywhere)
}

/// [`load_data_dirs`], each path read within its reach (see [`collect_rego_files_in`]).
pub fn load_data_dirs_in(
    root: &Root,
    paths: &[(PathBuf, Reach)],
) -> Result<Vec<(String, serde_json::Value)>, PolicyError> {
    let mut out = Vec::new();
    for (p, reach) in paths {
        if std::fs::symlink_metadata(p).is_err() {
            return Err(PolicyError::plain(p, "no such data file or folder"));
        }
        let mut files = files_under(root, p, *reach, &|n| {
            n.ends_with(".json") || n.ends_with(".yaml") || n.ends_with(".yml")
        })
        .map_err(|e| PolicyError::plain(p, format!("cannot read data: {e}")))?;
        files.sort();
        for f in files {
            let text = root
                .read_text(&f, *reach, MAX_FILE_BYTES)
                .map_err(|e| PolicyError::plain(&f, format!("cannot read data: {}", e.reason)))?;
            let value = if f.extension().is_some_and(|e| e == "json") {
                serde_json::from_str(&text)
                    .map_err(|e| PolicyError::plain(&f, format!("invalid JSON data: {e}")))?
            } else {
                let parsed = crate::yaml::parse(crate::source::FileId(0), &text);
                if let Some(e) = parsed.errors.first() {
                    return Err(PolicyError {
                        path: f.clone(),
                        text: text.clone(),
                        span: Some((e.span.start as usize, e.span.end as usize)),
                        message: format!("invalid YAML data: {}", e.message),
                        help: None,
                    });
                }
                // Every document of the file is merged.
                let mut merged = serde_json::Value::Null;
                for d in parsed.docs {
                    let v = d.root.to_json();
                    merge_json(&mut merged, v);
                }
                merged
            };
            out.push((f.display().to_string(), value));
        }
    }
    Ok(out)
}

fn merge_json(into: &mut serde_json::Value, v: serde_json::Value) {
    match (into, v) {
        (serde_json::Value::Object(a), serde_json::Value::Object(b)) => {
            for (k, v) in b {
                merge_json(a.entry(k).or_insert(serde_json::Value::Null), v);
            }
        }
        (slot, v) => {
            if !v.is_null() {
                *slot = v;
            }
        }
    }
}

/// How to compile a set.
#[derive(Clone, Debug)]
pub struct CompileOptions {
    /// `None`: detected per file.
    pub rego_version: Option<RegoVersion>,
    pub timeout: Duration,
}

impl Default for CompileOptions {
    fn default() -> Self {
        CompileOptions {
            rego_version: None,
            timeout: DEFAULT_TIMEOUT,
        }
    }
}

impl PolicySet {
    /// Compiles policy files and data. Errors name the `.rego` line.
    pub fn compile(
        files: &[PolicyFile],
        data: &[(String, serde_json::Value)],
        opts: &CompileOptions,
    ) -> Result<PolicySet, PolicyError> {
        let mut engine = Engine::new();
        engine.set_gather_prints(true);
        engine.set_execution_timer_config(ExecutionTimerConfig {
            limit: opts.timeout,
            check_interval: NonZeroU32::new(64).unwrap_or(NonZeroU32::MIN),
        });
        location::register(&mut engine)
            .map_err(|e| PolicyError::plain("gitops.location", format!("cannot register: {e}")))?;
        limits::register(&mut engine)
            .map_err(|e| PolicyError::plain("numbers.range", format!("cannot register: {e}")))?;
        let mut packages: BTreeMap<String, Package> = BTreeMap::new();
        let mut uses_location = false;
        let mut mentions_gitops = false;
        let mut fields = data::Fields::none();
        // The package of each added file, in the order regorus keeps their modules.
        let mut module_packages: Vec<String> = Vec::with_capacity(files.len());
        // Each file's `# METADATA` ids, and the syntax it was read with.
        let mut found = Vec::with_capacity(files.len());
        let mut versions = Vec::with_capacity(files.len());
        for f in files {
            found.push(if f.path.ends_with("_test.rego") {
                Vec::new()
            } else {
                annotations::annotations(f)?
            });
            if let Some((at, name, why)) = forbidden_call(&f.text) {
                return Err(PolicyError {
                    path: PathBuf::from(&f.path),
                    text: f.text.clone(),
                    span: Some((at, at + name.len())),
                    message: format!("`{name}` is not available: {why}"),
                    help: Some("gitops-lint runs policies offline, on the repository only".into()),
                });
            }
            if let Some(span) = limits::parse_work(&f.text) {
                return Err(PolicyError {
                    path: PathBuf::from(&f.path),
                    text: f.text.clone(),
                    span: Some(span),
                    message: "this literal nests too deeply for the Rego parser".into(),
                    help: Some("regorus parses the first item of an array, set or object twice, so each level doubles the work; build the value from named parts.".into()),
                });
            }
            let version = opts
                .rego_version
                .unwrap_or_else(|| RegoVersion::detect(&f.text));
            engine.set_rego_v0(version == RegoVersion::V0);
            versions.push(version);
            let pkg = engine
                .add_policy(f.path.clone(), f.text.clone())
                .map_err(|e| {
                    let mut pe = PolicyError::from_regorus(f, &e);
                    // Suggest the other syntax only when the file parses with it.
                    let mut other = Engine::new();
                    other.set_rego_v0(version != RegoVersion::V0);
                    if opts.rego_version.is_none()
                        && other.add_policy(f.path.clone(), f.text.clone()).is_ok()
                    {
                        pe.help = Some(format!(
                            "read as Rego {}; pass `--rego-version {}` if the file uses the other syntax",
                            if version == RegoVersion::V0 { "v0" } else { "v1" },
                            if version == RegoVersion::V0 { "v1" } else { "v0" }
                        ));
                    }
                    pe
                })?;
            let name = pkg.strip_prefix("data.").unwrap_or(&pkg).to_string();
            module_packages.push(name.clone());
            let p = packages.entry(name.clone()).or_insert_with(|| Package {
                name,
                ..Package::default()
            });
            uses_location |= f.text.contains("gitops.location");
            // Tests do not run in `check`: what they mention does not count.
            if !f.path.ends_with("_test.rego") {
                mentions_gitops |= f.text.contains("gitops");
                fields.add_policy_text(&f.text);
            }
            let mut rules: BTreeSet<String> = p.rules.iter().cloned().collect();
            for (rule, line) in rule_heads(&f.text) {
                if is_check_rule(&rule) {
                    rules.insert(rule.clone());
                } else if rule.starts_with("test_") {
                    if !p.tests.contains(&rule) {
                        p.tests.push(rule.clone());
                    }
                } else if rule == "exception" {
                    p.has_exception = true;
                } else if rule == "meta" {
                    p.has_meta = true;
                }
                p.sites.entry(rule).or_insert(RuleSite {
                    file: f.path.clone(),
                    line,
                });
            }
            p.rules = rules.into_iter().collect();
        }
        let modules = engine.get_modules().clone();
        if let Some(r) = recursion::find(modules.iter().map(|m| &**m)) {
            let text = files
                .iter()
                .find(|f| f.path == r.file)
                .map(|f| f.text.clone())
                .unwrap_or_default();
            return Err(PolicyError {
                span: (!text.is_empty()).then_some(r.span),
                path: PathBuf::from(r.file),
                text,
                message: format!(
                    "function `{}` is recursive: {}",
                    r.cycle.first().map_or("", String::as_str),
                    r.cycle.join(" -> ")
                ),
                help: Some("Rego has no recursion (OPA refuses it when compiling); iterate with a comprehension or `walk`.".into()),
            });
        }
        if modules.len() == module_packages.len() {
            for (name, p) in &mut packages {
                p.kinds = kinds::guarded_kinds(
                    module_packages
                        .iter()
                        .zip(modules.iter())
                        .filter(|(pkg, _)| *pkg == name)
                        .map(|(_, m)| &**m),
                    is_check_rule,
                );
            }
            if found.iter().any(|a| !a.is_empty()) {
                let modules: Vec<&regorus::unstable::Module> =
                    modules.iter().map(|m| &**m).collect();
                let (ids, added) =
                    annotations::rule_ids(files, &modules, &module_packages, &found)?;
                for (path, text, i) in added {
                    engine.set_rego_v0(versions[i] == RegoVersion::V0);
                    engine.add_policy(path, text).map_err(|e| {
                        PolicyError::plain(
                            &files[i].path,
                            format!("cannot compile a rule definition with its own id: {e:#}"),
                        )
                    })?;
                }
                for (name, ids) in ids {
                    if let Some(p) = packages.get_mut(&name) {
                        for d in &ids.definitions {
                            p.sites.insert(
                                d.query.clone(),
                                RuleSite {
                                    file: d.file.clone(),
                                    line: d.line,
                                },
                            );
                        }
                        p.ids = ids;
                    }
                }
            }
        }
        for (path, value) in data {
            engine
                .add_data(regorus::Value::from(value.clone()))
                .map_err(|e| PolicyError::plain(path, format!("cannot load data: {e:#}")))?;
        }
        Ok(PolicySet {
            engine,
            packages,
            uses_location,
            mentions_gitops,
            fields,
            timeout: opts.timeout,
        })
    }

    /// Packages matched by conftest-style namespace patterns (`*`, `?` globs), or all of them.
    #[must_use]
    pub fn namespaces(&self, patterns: &[String], all: bool) -> Vec<&Package> {
        self.packages
            .values()
            .filter(|p| all || patterns.iter().any(|pat| glob_match(pat, &p.name)))
            .collect()
    }

    /// Evaluates a rule; `Ok(None)` when undefined. Prints are dropped.
    pub fn eval(
        engine: &mut Engine,
        package: &str,
        rule: &str,
    ) -> Result<Option<serde_json::Value>, String> {
        let r = engine.eval_rule(format!("data.{}.{}", rego_path(package), rule));
        let _ = engine.take_prints();
        match r {
            Ok(regorus::Value::Undefined) => Ok(None),
            Ok(v) => serde_json::to_value(&v)
                .map(Some)
                .map_err(|e| e.to_string()),
            Err(e) => Err(summarize_error(&format!("{e:#}"))),
        }
    }
}

/// A package name as a rule path: components that are not identifiers are quoted.
#[must_use]
pub fn rego_path(package: &str) -> String {
    package
        .split('.')
        .enumerate()
        .map(|(i, c)| {
            let ident = !c.is_empty()
                && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
                && !c.starts_with(|ch: char| ch.is_ascii_digit());
            match (ident, i) {
                (true, 0) => c.to_string(),
                (true, _) => format!(".{c}"),
                (false, _) => format!("[{c:?}]"),
            }
        })
        .collect()
}

/// `*` and `?` glob over a whole string (`.` is an ordinary character, as in conftest).
#[must_use]
pub fn glob_match(pattern: &str, s: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let t: Vec<char> = s.chars().collect();
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(sp) = star {
            pi = sp + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// Interns a rule id for the run's lifetime (ids of user policies are only known at run time).
#[must_use]
pub fn intern(id: &str) -> &'static str {
    use std::sync::{Mutex, OnceLock};
    static IDS: OnceLock<Mutex<BTreeSet<&'static str>>> = OnceLock::new();
    let mut set = IDS
        .get_or_init(|| Mutex::new(BTreeSet::new()))
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(s) = set.get(id) {
        return s;
    }
    let leaked: &'static str = Box::leak(id.to_string().into_boxed_str());
    set.insert(leaked);
    leaked
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_rego_versions() {
        assert_eq!(
            RegoVersion::detect("package main\ndeny[msg] {\n  msg := \"x\"\n}\n"),
            RegoVersion::V0
        );
        assert_eq!(
            RegoVersion::detect("package main\nimport rego.v1\ndeny contains msg if {\n}\n"),
            RegoVersion::V1
        );
        assert_eq!(
            RegoVersion::detect("package main\ndeny contains msg if {\n  true\n}\n"),
            RegoVersion::V1
        );
        assert_eq!(
            RegoVersion::detect("package main\nimport future.keywords.if\ndeny[m] if { true }\n"),
            RegoVersion::V0
        );
    }

    #[test]
    fn network_and_environment_builtins_are_refused() {
        let text = "package x\n# http.send(...) in a comment is fine\nattack if {\n  r := http.send({})\n}\n";
        let (at, name, _) = forbidden_call(text).unwrap();
        assert_eq!(name, "http.send");
        assert_eq!(&text[at..at + 9], "http.send");
        assert!(forbidden_call("package x\nmyhttp.send(1)\n").is_none());
        let err = PolicySet::compile(
            &[PolicyFile {
                path: "m.rego".into(),
                text: text.into(),
            }],
            &[],
            &CompileOptions::default(),
        )
        .err()
        .unwrap();
        assert!(
            err.to_string()
                .starts_with("m.rego:4:8: `http.send` is not available"),
            "{err}"
        );
    }

    #[test]
    fn check_rules_and_exception_names() {
        assert!(is_check_rule("deny"));
        assert!(is_check_rule("deny_root"));
        assert!(is_check_rule("warn_a_b"));
        assert!(is_check_rule("violation"));
        assert!(!is_check_rule("denyall"));
        assert!(!is_check_rule("deny_"));
        assert!(!is_check_rule("allow"));
        assert_eq!(exception_name("deny_run_as_root"), "run_as_root");
        assert_eq!(exception_name("warn"), "");
    }

    #[test]
    fn globs_and_paths() {
        assert!(glob_match("*", "main.gke"));
        assert!(glob_match("c*", "commands"));
        assert!(!glob_match("c*", "main"));
        assert!(glob_match("main", "main"));
        assert!(!glob_match("main", "main.gke"));
        assert!(glob_match("ma?n", "main"));
        assert_eq!(rego_path("main.gke"), "main.gke");
        assert_eq!(rego_path("graph.1.0"), "graph[\"1\"][\"0\"]");
    }

    #[test]
    fn heads_are_found_at_column_zero() {
        let heads = rule_heads(
            "package x\nimport rego.v1\ndeny contains m if {\n  warn := 1\n}\nwarn_x[m] {\n}\ndefault allow := false\nexception[r] {\n}\n",
        );
        let names: Vec<&str> = heads.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["deny", "warn_x", "allow", "exception"]);
        assert_eq!(heads[0].1, 3);
    }
}
