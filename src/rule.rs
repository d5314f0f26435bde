//! What a rule is: its metadata, the option types it declares, the context it reads and the
//! trait every rule implements, Rust or Rego. This sits below `rules/` and `policy/` (both
//! implement [`Rule`]) and below `registry` and `config` (both read [`RuleMeta`]).

mod options;

use std::collections::BTreeMap;

use crate::diagnostic::{Finding, Severity};
use crate::model::{DocKind, Document, Model, Repository, Settings};
pub use crate::repo::retention::{Payload, Reads, ValuesRead};
use crate::source::FileId;
pub(crate) use options::rule_options;
pub use options::{OptionKind, OptionValue, Options, RuleOption, SetOption, TypedOptions};

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum FixAvailability {
    None,
    Sometimes,
    Always,
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
    /// What the rule reads beyond what every document keeps after the load (keys, spans,
    /// short scalars, image tags) and what the model's facts read (`model::READS`): most
    /// rules declare [`Reads::NONE`]. The run keeps what its enabled rules declare, and
    /// nothing else (see `repo::retention`).
    pub reads: Reads,
    /// The options under `rules.<id>`: a Rust rule's `Options::DECLARED` ([`rule_options!`]),
    /// a Rego rule's `meta.options`.
    pub options: &'static [RuleOption],
    /// Markdown: What it does / Why is this bad? / Example / Options.
    pub docs: &'static str,
}

/// Every rule's configured options: typed, as configuration parsing filled them, and as
/// written under `rules.<id>` (JSON), for the Rego rules (`data.gitops_lint.options`) and the
/// language server's memo keys.
#[derive(Clone, Debug, Default)]
pub struct RuleOptions {
    /// By rule id: the `rules.<id>` options as written (validated against its
    /// [`RuleMeta::options`]).
    pub json: BTreeMap<String, serde_json::Map<String, serde_json::Value>>,
    pub typed: TypedOptions,
    /// The built-in rules this run runs; `None`: every one. A rule leaves a problem that
    /// another rule reports better to it only when that rule runs.
    pub enabled: Option<std::collections::BTreeSet<&'static str>>,
}

impl RuleOptions {
    /// The options written for `rule` (empty when none).
    #[must_use]
    pub fn json_of(&self, rule: &str) -> &serde_json::Map<String, serde_json::Value> {
        static EMPTY: std::sync::OnceLock<serde_json::Map<String, serde_json::Value>> =
            std::sync::OnceLock::new();
        self.json
            .get(rule)
            .unwrap_or_else(|| EMPTY.get_or_init(serde_json::Map::new))
    }
}

/// Read-only view handed to every rule: the repository and the facts computed from it once
/// per run, the model settings and the rules' options.
pub struct Context<'a> {
    pub model: &'a Model<'a>,
    pub repo: &'a Repository,
    pub settings: &'a Settings,
    pub rule_options: &'a RuleOptions,
}

impl<'a> Context<'a> {
    #[must_use]
    pub fn new(model: &'a Model<'a>, rule_options: &'a RuleOptions) -> Self {
        Context {
            model,
            repo: model.repo,
            settings: &model.settings,
            rule_options,
        }
    }

    #[must_use]
    pub fn text(&self, doc: &Document) -> &str {
        self.repo.source(doc.file).text()
    }

    /// Whether the built-in rule `id` runs in this run.
    #[must_use]
    pub fn rule_enabled(&self, id: &str) -> bool {
        self.rule_options
            .enabled
            .as_ref()
            .is_none_or(|e| e.contains(id))
    }

    /// A rule's options ([`rule_options!`]), as configuration parsing filled them at load:
    /// checked by name ("did you mean") and type there, at their defaults when unset.
    #[must_use]
    pub fn options<T: Options>(&self) -> &T {
        self.rule_options.typed.get::<T>()
    }
}

/// A finding and the rule it belongs to. Rules whose ids are only known at run time (a user
/// policy result naming its own `id`) set it; otherwise the engine uses the rule's id.
#[derive(Clone)]
pub struct Emitted {
    pub rule: &'static str,
    pub finding: Finding,
}

/// A document on which a rule could not evaluate one of its checks (a policy rule that
/// errored). The document pass returns failures beside the findings; the engine gathers each
/// rule's failures and gives them back to it once, after the pass
/// ([`Rule::report_failures`]), so that a check failing on many documents is reported once.
#[derive(Clone, Debug)]
pub struct Failure {
    /// What failed, as the rule names it (a policy's rule name).
    pub check: String,
    pub message: String,
    pub file: FileId,
    /// The document's index in its file.
    pub index: usize,
}

/// What checking one document gives: findings, and the checks that could not be evaluated.
#[derive(Default)]
pub struct Checked {
    pub found: Vec<Emitted>,
    pub failed: Vec<Failure>,
}

impl From<Vec<Emitted>> for Checked {
    fn from(found: Vec<Emitted>) -> Self {
        Checked {
            found,
            failed: Vec::new(),
        }
    }
}

/// A rule: a pure function of a document, or of the whole repository, returning findings.
/// The engine stamps ids and severities and applies suppressions, for Rust and Rego alike.
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

    /// Called once per `gitops-lint diff`, with what the change does to what Argo CD deploys
    /// (`cx` is the head revision's): the `diff/` rules. `check` never calls it.
    fn check_diff(
        &self,
        _changes: &crate::model::diff::Changes,
        _cx: &Context<'_>,
    ) -> Vec<Finding> {
        Vec::new()
    }

    /// Whether `check` applies to `doc` (by default: its kind is in `applies_to`).
    fn applies(&self, doc: &Document, _cx: &Context<'_>) -> bool {
        self.meta().applies_to.contains(&doc.kind)
    }

    /// Whether [`Rule::applies`] may accept a document of `kind`: the engine builds the
    /// deployed documents of a kind only for the rules that judge it.
    fn may_apply_to(&self, kind: DocKind) -> bool {
        self.meta().applies_to.contains(&kind)
    }

    /// Like [`Rule::check`], for rules that name the rule of each finding themselves or
    /// whose checks can fail to evaluate (policies).
    fn check_emitting(&self, doc: &Document, cx: &Context<'_>) -> Checked {
        let rule = self.meta().id;
        self.check(doc, cx)
            .into_iter()
            .map(|finding| Emitted { rule, finding })
            .collect::<Vec<_>>()
            .into()
    }

    /// The findings that report the document pass's [`Failure`]s of this rule (called once,
    /// after the pass, when there are any). By default, each failure at its document.
    fn report_failures(&self, failures: Vec<Failure>, cx: &Context<'_>) -> Vec<Emitted> {
        let rule = self.meta().id;
        failures
            .into_iter()
            .filter_map(|f| {
                let doc = cx
                    .repo
                    .file_docs(f.file)
                    .iter()
                    .find(|d| d.index == f.index)?;
                let message = format!("`{}` could not be checked here: {}", f.check, f.message);
                Some(Emitted {
                    rule,
                    finding: Finding::new(message, doc.anchor_span()),
                })
            })
            .collect()
    }

    /// Like [`Rule::check_project`], for rules that name the rule of each finding themselves.
    fn check_project_emitting(&self, cx: &Context<'_>) -> Vec<Emitted> {
        let rule = self.meta().id;
        self.check_project(cx)
            .into_iter()
            .map(|finding| Emitted { rule, finding })
            .collect()
    }

    /// Run-level notes the reporter shows once (e.g. a check replaced by a declaration).
    fn notes(&self, _cx: &Context<'_>) -> Vec<String> {
        Vec::new()
    }

    /// `Some` when [`Rule::check_emitting`] is a function of the document alone (its tree and
    /// kind, its file's id, path and text), of the rule's options (the engine adds them to the
    /// key) and of what the returned key names: the language server then reuses its findings
    /// on a document that did not change since the last run with the same keys. `None` (the
    /// default) when it reads anything else, such as the model or the settings.
    fn document_memo_key(&self, _cx: &Context<'_>) -> Option<String> {
        None
    }

    /// Asked after the document pass of a rule with a [`Rule::document_memo_key`]: false when
    /// this run's per-document findings must not be reused (an evaluation timed out, or a
    /// finding landed in another document). A run with [`Failure`]s is never reused.
    fn document_findings_reusable(&self) -> bool {
        true
    }
}
