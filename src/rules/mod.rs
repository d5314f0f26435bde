//! The rule registry. A rule is a pure function of a document (or of the whole project) that
//! returns findings; the engine stamps ids and severities and applies suppressions.

pub mod argocd;
pub mod ci;
pub mod internal;

use crate::config::{Config, OptionKind};
use crate::diagnostic::{Finding, Severity};
use crate::model::{DocKind, Document};
use crate::project::Project;

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FixAvailability {
    None,
    Sometimes,
    Always,
}

/// A rule option accepted in `.gitops-lint.yaml` under `rules: {<id>: {<name>: ...}}`.
#[derive(Debug)]
pub struct RuleOption {
    pub name: &'static str,
    pub kind: OptionKind,
    /// One line; shown by `explain`, `init` and the docs.
    pub doc: &'static str,
}

#[derive(Debug)]
pub struct RuleMeta {
    /// `<group>/<kebab-name>`: the only identifier.
    pub id: &'static str,
    /// One line, lowercase, no trailing period.
    pub summary: &'static str,
    pub default_severity: Severity,
    pub fix: FixAvailability,
    /// Document kinds `check` is called for.
    pub applies_to: &'static [DocKind],
    pub options: &'static [RuleOption],
    /// Markdown: What it does / Why is this bad? / Example / Options.
    pub docs: &'static str,
}

/// Read-only view handed to every rule.
pub struct Context<'a> {
    pub project: &'a Project,
    pub config: &'a Config,
}

impl Context<'_> {
    #[must_use]
    pub fn text(&self, doc: &Document) -> &str {
        &self.project.source(doc.file).text
    }
}

pub trait Rule: Send + Sync {
    fn meta(&self) -> &'static RuleMeta;

    /// Called once per document whose kind is in `meta().applies_to`.
    fn check(&self, _doc: &Document, _cx: &Context<'_>) -> Vec<Finding> {
        Vec::new()
    }

    /// Called once per run, for rules that relate documents to each other.
    fn check_project(&self, _cx: &Context<'_>) -> Vec<Finding> {
        Vec::new()
    }
}

/// Every built-in rule, sorted by id (a test keeps it sorted).
pub static BUILTIN: &[&dyn Rule] = &[
    &argocd::app_of_apps_cycle::AppOfAppsCycle,
    &argocd::destination_out_of_project::DestinationOutOfProject,
    &argocd::image_tag_none::ImageTagNone,
    &argocd::infra_boundary::InfraBoundary,
    &argocd::insecure_without_edge_tls::InsecureWithoutEdgeTls,
    &argocd::missing_source::MissingSource,
    &argocd::project_bounds::ProjectBounds,
    &argocd::schema::Schema,
    &argocd::self_managed::SelfManaged,
    &argocd::source_out_of_project::SourceOutOfProject,
    &argocd::sync_policy::SyncPolicy,
    &argocd::unknown_project::UnknownProject,
    &ci::writeback_skip_ci::WritebackSkipCi,
    &internal::IoUnreadable,
    &internal::LintFixFailed,
    &internal::LintUnusedSuppression,
    &internal::PolicyEvaluationError,
    &internal::YamlDuplicateKey,
    &internal::YamlResourceLimit,
    &internal::YamlSyntax,
];

/// Metadata of every rule, Rust built-ins and the shipped Rego pack (`rules/`), sorted by id.
#[must_use]
pub fn all_meta() -> Vec<&'static RuleMeta> {
    let mut all: Vec<&'static RuleMeta> = BUILTIN.iter().map(|r| r.meta()).collect();
    all.extend(crate::policy::pack::get().rules.iter().map(|r| r.meta));
    all.sort_by_key(|m| m.id);
    all
}

#[must_use]
pub fn find(id: &str) -> Option<&'static RuleMeta> {
    BUILTIN
        .iter()
        .map(|r| r.meta())
        .find(|m| m.id == id)
        .or_else(|| {
            crate::policy::pack::get()
                .rules
                .iter()
                .map(|r| r.meta)
                .find(|m| m.id == id)
        })
}

/// Ids of user policies (`policy/<package>/<rule>`, or any id a policy result names) are only
/// known at run time: configuration and suppressions accept them without checking.
#[must_use]
pub fn is_dynamic_policy_id(id: &str) -> bool {
    id.starts_with("policy/") && find(id).is_none()
}
