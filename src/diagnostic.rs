//! What rules return ([`Finding`]) and what the engine reports ([`Diagnostic`]).

use crate::fix::Fix;
use crate::source::Span;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    #[must_use]
    pub fn parse(s: &str) -> Option<Severity> {
        match s {
            "info" => Some(Severity::Info),
            "warning" => Some(Severity::Warning),
            "error" => Some(Severity::Error),
            _ => None,
        }
    }
}

/// A secondary location, possibly in another file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// What a rule returns. It has no id and no severity: the engine adds those.
#[derive(Clone, Debug)]
pub struct Finding {
    /// Lowercase start, no trailing period.
    pub message: String,
    pub span: Span,
    pub labels: Vec<Label>,
    /// One actionable sentence.
    pub help: Option<String>,
    pub fix: Option<Fix>,
    /// Overrides the rule's configured severity downwards (e.g. "cannot verify" as info).
    pub severity: Option<Severity>,
}

impl Finding {
    #[must_use]
    pub fn new(message: impl Into<String>, span: Span) -> Self {
        Finding {
            message: message.into(),
            span,
            labels: Vec::new(),
            help: None,
            fix: None,
            severity: None,
        }
    }

    #[must_use]
    pub fn with_label(mut self, span: Span, message: impl Into<String>) -> Self {
        self.labels.push(Label {
            span,
            message: message.into(),
        });
        self
    }

    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    #[must_use]
    pub fn with_fix(mut self, fix: Option<Fix>) -> Self {
        self.fix = fix;
        self
    }

    #[must_use]
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = Some(severity);
        self
    }
}

/// What the engine reports: a finding stamped with its rule id and effective severity.
#[derive(Clone, Debug)]
pub struct Diagnostic {
    pub rule: String,
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    pub labels: Vec<Label>,
    pub help: Option<String>,
    pub fix: Option<Fix>,
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
