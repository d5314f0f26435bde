//! The shipped pack: Rego rules under `rules/`, embedded in the binary, that join the rule
//! registry (listed, configured, suppressed and documented like the Rust rules).
//!
//! Adding a rule: `rules/<group>/<name>.rego` (package `gitops_lint.rules.<group>.<name>`, a
//! `meta := {...}` object and `deny`/`warn` rules), `<name>_test.rego`, `<name>.md`, a line in
//! [`FILES`], and fixtures under `testdata/rules/<group>/<kebab-name>/`. A test checks that
//! every file under `rules/` is listed here.

use std::sync::OnceLock;

use serde::Deserialize;

use super::{CompileOptions, PolicyFile, PolicySet, RegoVersion};
use crate::diagnostic::Severity;
use crate::model::DocKind;
use crate::rule::OptionKind;
use crate::rule::{FixAvailability, Reads, Rule, RuleMeta, RuleOption};

macro_rules! pack_files {
    ($($path:literal),* $(,)?) => {
        /// Every file of the pack: `(path under the repository, text)`.
        pub const FILES: &[(&str, &str)] = &[
            $(($path, include_str!(concat!("../../", $path))),)*
        ];
    };
}

pack_files!(
    "rules/argocd/no_default_project.md",
    "rules/argocd/no_default_project.rego",
    "rules/argocd/no_default_project_test.rego",
    "rules/argocd/production_target_revision.md",
    "rules/argocd/production_target_revision.rego",
    "rules/argocd/production_target_revision_test.rego",
    "rules/argocd/resources_finalizer.md",
    "rules/argocd/resources_finalizer.rego",
    "rules/argocd/resources_finalizer_test.rego",
    "rules/platform/image_digest.md",
    "rules/platform/image_digest.rego",
    "rules/platform/image_digest_test.rego",
);

/// Where a pack rule is evaluated.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Scope {
    /// On each document of its kinds, with the document as `input`.
    Document,
    /// Once, with `data.gitops` as `input` too; results name their `file`.
    Repo,
}

/// A shipped rule.
#[derive(Debug)]
pub struct PackRule {
    pub meta: &'static RuleMeta,
    /// Package, without `data.`.
    pub package: String,
    pub scope: Scope,
    /// Default file globs the rule is limited to (overridden by the `paths` option).
    pub paths: Vec<String>,
    /// The `.rego` file.
    pub file: &'static str,
}

/// For the registry: a shipped rule's metadata. What runs is built per run by
/// [`super::run::rules`].
impl Rule for PackRule {
    fn meta(&self) -> &'static RuleMeta {
        self.meta
    }
}

/// Whether a pack file's text reads `data.gitops` (not `data.gitops_lint`, the options).
pub(super) fn reads_model(text: &str) -> bool {
    text.match_indices("data.gitops").any(|(i, m)| {
        !text[i + m.len()..].starts_with(|c: char| c == '_' || c.is_ascii_alphanumeric())
    })
}

/// What a pack rule reads beyond what every document keeps: every values document's values
/// when it reads the effective Helm values of `data.gitops`.
fn reads_of(text: &str) -> Reads {
    let mut fields = super::data::Fields::none();
    if reads_model(text) {
        fields.add_policy_text(text);
    }
    if fields.has("values") {
        Reads::VALUES
    } else {
        Reads::NONE
    }
}

/// The compiled pack.
pub struct Pack {
    pub set: PolicySet,
    /// Sorted by id.
    pub rules: Vec<PackRule>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MetaJson {
    id: String,
    summary: String,
    severity: String,
    #[serde(default)]
    applies_to: Vec<String>,
    #[serde(default)]
    scope: Option<String>,
    #[serde(default)]
    paths: Vec<String>,
    #[serde(default)]
    options: Vec<OptionJson>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct OptionJson {
    name: String,
    kind: String,
    doc: String,
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

/// The policy files of the pack (tests excluded unless `tests`).
#[must_use]
pub fn policy_files(tests: bool) -> Vec<PolicyFile> {
    FILES
        .iter()
        .filter(|(p, _)| p.ends_with(".rego") && (tests || !p.ends_with("_test.rego")))
        .map(|(p, t)| PolicyFile {
            path: (*p).to_string(),
            text: (*t).to_string(),
        })
        .collect()
}

fn build() -> Result<Pack, String> {
    let files = policy_files(false);
    let set = PolicySet::compile(
        &files,
        &[],
        &CompileOptions {
            rego_version: Some(RegoVersion::V1),
            ..CompileOptions::default()
        },
    )
    .map_err(|e| e.to_string())?;
    let mut engine = set.engine.clone();
    let mut rules = Vec::new();
    for pkg in set.packages.values() {
        let Some(site) = pkg.sites.get("meta") else {
            return Err(format!("package {} has no `meta`", pkg.name));
        };
        let file = files
            .iter()
            .find(|f| f.path == site.file)
            .map(|f| f.path.clone())
            .unwrap_or_default();
        let value = PolicySet::eval(&mut engine, &pkg.name, "meta")?
            .ok_or_else(|| format!("{file}: `meta` is undefined"))?;
        let m: MetaJson =
            serde_json::from_value(value).map_err(|e| format!("{file}: invalid `meta`: {e}"))?;
        let default_severity = Severity::parse(&m.severity)
            .ok_or_else(|| format!("{file}: unknown severity `{}`", m.severity))?;
        let scope = match m.scope.as_deref() {
            None | Some("document") => Scope::Document,
            Some("repo") => Scope::Repo,
            Some(s) => return Err(format!("{file}: unknown scope `{s}`")),
        };
        let mut applies_to = Vec::new();
        for k in &m.applies_to {
            applies_to
                .push(DocKind::from_name(k).ok_or_else(|| format!("{file}: unknown kind `{k}`"))?);
        }
        let mut options = Vec::new();
        for o in m.options {
            let kind = match o.kind.as_str() {
                "bool" => OptionKind::Bool,
                "string" => OptionKind::String,
                "string-list" => OptionKind::StringList,
                k => return Err(format!("{file}: unknown option kind `{k}`")),
            };
            options.push(RuleOption {
                name: leak(o.name),
                kind,
                doc: leak(o.doc),
                set: None,
            });
        }
        if !m.paths.is_empty() && !options.iter().any(|o| o.name == "paths") {
            options.push(RuleOption {
                name: "paths",
                kind: OptionKind::StringList,
                doc: leak(format!(
                    "glob patterns of the files this rule checks (default {})",
                    m.paths
                        .iter()
                        .map(|p| format!("`{p}`"))
                        .collect::<Vec<_>>()
                        .join(", ")
                )),
                set: None,
            });
        }
        let md_path = file.replace(".rego", ".md");
        let docs = FILES
            .iter()
            .find(|(p, _)| *p == md_path)
            .map(|(_, t)| *t)
            .ok_or_else(|| format!("{file}: no {md_path}"))?;
        let file_static = FILES
            .iter()
            .find(|(p, _)| *p == file)
            .map_or("", |(p, _)| *p);
        let meta: &'static RuleMeta = Box::leak(Box::new(RuleMeta {
            id: leak(m.id),
            summary: leak(m.summary),
            default_severity,
            fix: FixAvailability::None,
            reads: reads_of(
                FILES
                    .iter()
                    .find(|(p, _)| *p == file)
                    .map_or("", |(_, t)| *t),
            ),
            applies_to: Box::leak(applies_to.into_boxed_slice()),
            options: Box::leak(options.into_boxed_slice()),
            docs,
        }));
        rules.push(PackRule {
            meta,
            package: pkg.name.clone(),
            scope,
            paths: m.paths,
            file: file_static,
        });
    }
    rules.sort_by_key(|r| r.meta.id);
    Ok(Pack { set, rules })
}

/// The pack, compiled on first use. A broken shipped rule is a bug caught by `cargo test`.
pub fn get() -> &'static Pack {
    static PACK: OnceLock<Pack> = OnceLock::new();
    PACK.get_or_init(|| build().unwrap_or_else(|e| panic!("the shipped Rego pack is broken: {e}")))
}
