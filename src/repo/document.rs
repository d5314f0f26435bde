//! Documents as read: one YAML document of a file, classified by what it is to Argo CD, Helm,
//! kustomize or CI, and the scalar fields rules point at.

use super::values;
use crate::source::{FileId, Span};
use crate::yaml::Node;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DocKind {
    /// `argoproj.io` Application.
    Application,
    /// `argoproj.io` ApplicationSet.
    ApplicationSet,
    /// `argoproj.io` AppProject.
    AppProject,
    /// Any other object with `apiVersion` and `kind`.
    K8sObject,
    /// `kustomization.yaml` (kustomize.config.k8s.io Kustomization or Component).
    Kustomization,
    /// A Helm chart's `Chart.yaml`.
    HelmChart,
    /// A Helm values file.
    HelmValues,
    /// GitLab CI (`.gitlab-ci.yml` and files it includes).
    GitlabCi,
    /// A GitHub Actions workflow under `.github/workflows/`.
    GithubWorkflow,
    /// gitops-lint's own configuration.
    Config,
    /// YAML that is none of the above.
    Other,
}

impl DocKind {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Application => "argocd.Application",
            DocKind::ApplicationSet => "argocd.ApplicationSet",
            DocKind::AppProject => "argocd.AppProject",
            DocKind::K8sObject => "k8s.Object",
            DocKind::Kustomization => "kustomize.Kustomization",
            DocKind::HelmChart => "helm.Chart",
            DocKind::HelmValues => "helm.Values",
            DocKind::GitlabCi => "ci.GitLab",
            DocKind::GithubWorkflow => "ci.GitHubWorkflow",
            DocKind::Config => "gitops-lint.Config",
            DocKind::Other => "other",
        }
    }

    /// Every kind, for parsing names.
    pub const ALL: [DocKind; 11] = [
        DocKind::Application,
        DocKind::ApplicationSet,
        DocKind::AppProject,
        DocKind::K8sObject,
        DocKind::Kustomization,
        DocKind::HelmChart,
        DocKind::HelmValues,
        DocKind::GitlabCi,
        DocKind::GithubWorkflow,
        DocKind::Config,
        DocKind::Other,
    ];

    /// The kind named `s` (as [`DocKind::as_str`] writes it).
    #[must_use]
    pub fn from_name(s: &str) -> Option<DocKind> {
        DocKind::ALL.into_iter().find(|k| k.as_str() == s)
    }
}

/// True for the three Argo CD kinds an app-of-apps can manage.
#[must_use]
pub fn is_argocd_kind(kind: DocKind) -> bool {
    matches!(
        kind,
        DocKind::Application | DocKind::ApplicationSet | DocKind::AppProject
    )
}

/// File names kustomize reads as a folder's kustomization, in the order it tries them. (The
/// file walker, below the model, accepts the extensionless `Kustomization` too: a test in
/// `kustomize.rs` keeps both in step.)
pub const KUSTOMIZATION_FILE_NAMES: [&str; 3] =
    ["kustomization.yaml", "kustomization.yml", "Kustomization"];

/// A `kustomize.config.k8s.io` Kustomization or Component, by `apiVersion` and `kind`.
#[must_use]
pub fn is_kustomization_kind(api_version: &str, kind: &str) -> bool {
    (kind == "Kustomization" || kind == "Component")
        && api_version.starts_with("kustomize.config.k8s.io/")
}

/// A scalar of a document and the node that sets it (a template node for a generated
/// Application).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub value: String,
    pub span: Span,
}

impl Field {
    /// The text of a scalar that is not null.
    #[must_use]
    pub fn of(node: Option<&Node>) -> Option<Field> {
        let n = node.filter(|n| !n.is_null())?;
        Some(Field {
            value: n.scalar_text()?.to_string(),
            span: n.span,
        })
    }

    /// The value of an optional field.
    #[must_use]
    pub fn text(field: &Option<Field>) -> Option<&str> {
        field.as_ref().map(|f| f.value.as_str())
    }

    /// A string (after YAML 1.1 resolution: `true` and `1` are not strings).
    #[must_use]
    pub fn string(node: Option<&Node>) -> Option<Field> {
        let n = node?;
        Some(Field {
            value: n.as_str()?.to_string(),
            span: n.span,
        })
    }
}

/// One YAML document of a file, classified.
#[derive(Clone, Debug)]
pub struct Document {
    pub file: FileId,
    /// 0-based index in its file.
    pub index: usize,
    pub span: Span,
    pub root: std::sync::Arc<Node>,
    pub kind: DocKind,
    /// What a Helm values document keeps of itself when its tree is not kept: `root` is then
    /// an empty map, and the repository's `tree` parses the tree again (see
    /// `retention::Retention::retain`).
    pub kept: Option<KeptValues>,
    /// Made by a deployer's tool (a Helm render), not written: its nodes' spans point where
    /// each value came from (a values line, else the document that deploys it), so no file's
    /// text holds it as it is and nothing may edit it as text.
    pub rendered: bool,
}

/// What a Helm values document whose tree was dropped keeps (see `retention`).
#[derive(Clone, Debug)]
pub enum KeptValues {
    /// Its values.
    Values(values::Values),
    /// Only its image tags, when no reader of the run declared more of it: the rest is parsed
    /// again if a reader asks for it (see the repository's `helm_values`).
    ImageTags(std::sync::Arc<[values::ImageTag]>),
}

impl Document {
    /// Its image tags, when it was loaded as image tags only (see [`KeptValues::ImageTags`]).
    #[must_use]
    pub fn kept_image_tags(&self) -> Option<&std::sync::Arc<[values::ImageTag]>> {
        match &self.kept {
            Some(KeptValues::ImageTags(tags)) => Some(tags),
            _ => None,
        }
    }

    #[must_use]
    pub fn api_version(&self) -> Option<&str> {
        self.root.get_str("apiVersion")
    }

    #[must_use]
    pub fn k8s_kind(&self) -> Option<&str> {
        self.root.get_str("kind")
    }

    #[must_use]
    pub fn name(&self) -> Option<&str> {
        self.root.path(&["metadata", "name"]).and_then(Node::as_str)
    }

    #[must_use]
    pub fn namespace(&self) -> Option<&str> {
        self.root
            .path(&["metadata", "namespace"])
            .and_then(Node::as_str)
    }

    /// The span to point at when a finding concerns the document as a whole: its `kind`
    /// line, else the document's first byte.
    #[must_use]
    pub fn anchor_span(&self) -> Span {
        self.root
            .entry("kind")
            .map_or(Span::empty(self.file, self.span.start as usize), |e| {
                e.key.span
            })
    }
}

/// Classifies a document from its file's path (relative, `/`-separated) and its content.
#[must_use]
pub fn classify(path: &str, root: &Node) -> DocKind {
    let name = path.rsplit('/').next().unwrap_or(path);
    if name == ".gitops-lint.yaml" || name == ".gitops-lint.yml" {
        return DocKind::Config;
    }
    if name.ends_with("gitlab-ci.yml") || name.ends_with("gitlab-ci.yaml") {
        return DocKind::GitlabCi;
    }
    if path.starts_with(".github/workflows/") || path.contains("/.github/workflows/") {
        return DocKind::GithubWorkflow;
    }
    if name == "Chart.yaml" || name == "Chart.yml" {
        return DocKind::HelmChart;
    }
    let api_version = root.get_str("apiVersion");
    let kind = root.get_str("kind");
    if KUSTOMIZATION_FILE_NAMES.contains(&name)
        || api_version
            .zip(kind)
            .is_some_and(|(a, k)| is_kustomization_kind(a, k))
    {
        return DocKind::Kustomization;
    }
    if let (Some(api), Some(kind)) = (api_version, kind) {
        if api.starts_with("argoproj.io/") {
            match kind {
                "Application" => return DocKind::Application,
                "ApplicationSet" => return DocKind::ApplicationSet,
                "AppProject" => return DocKind::AppProject,
                _ => {}
            }
        }
        return DocKind::K8sObject;
    }
    if is_values_file_name(name) {
        return DocKind::HelmValues;
    }
    DocKind::Other
}

/// `values.yaml`, `values-prod.yaml`, `prod.values.yaml`, `values/x.yaml` naming.
#[must_use]
pub fn is_values_file_name(name: &str) -> bool {
    let stem = name
        .strip_suffix(".yaml")
        .or_else(|| name.strip_suffix(".yml"))
        .unwrap_or(name);
    stem == "values"
        || stem.starts_with("values-")
        || stem.starts_with("values_")
        || stem.starts_with("values.")
        || stem.ends_with("-values")
        || stem.ends_with(".values")
        || stem.ends_with("_values")
}
