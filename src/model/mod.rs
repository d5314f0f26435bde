//! The domain model: documents classified by what they are to Argo CD, Helm, kustomize or
//! CI, and the facts computed from them once per run ([`Model`]), which rules and the Rego
//! `data.gitops` view both read.
//!
//! Folders by domain: the deployer (`argocd/`), Kubernetes objects and the routes to them
//! (`k8s/`), source resolution any deployer reuses (`sources/`), Helm (`helm/`, `values.rs`),
//! kustomize (`kustomize.rs`, `patch.rs`) and CI (`ci/`).
//!
//! The seam between deployers: each builds its own fact of what it deploys from this
//! repository. Argo CD's is [`Model::argocd`] (`argocd::resolve`), and what it renders is
//! [`Model::rendered`]. A second deployer (Flux) would add its own resolver beside it, say a
//! `flux/` folder that reuses `sources/`, `helm/` and `kustomize.rs`, with a `OnceLock` field and
//! a method here.

pub mod argocd;
pub mod ci;
pub mod helm;
pub mod k8s;
pub mod kustomize;
pub mod patch;
pub mod project;
pub mod repo;
pub mod settings;
pub mod sources;
pub mod template;

use std::sync::OnceLock;

use helm::values;
pub use project::Project;
pub use settings::{ArgocdSettings, CiSettings, EdgeTls, OtherRepositories, Settings};

use crate::source::{FileId, Span};
use crate::yaml::Node;

/// The repository and the facts computed from it, each built on first use, once per run, and
/// shared by every rule (they run in parallel) and by the Rego `data.gitops` view.
pub struct Model<'p> {
    pub project: &'p Project,
    pub settings: Settings,
    /// Whether sources drop the effective values nothing reads once their image tags are read.
    drop_unread_values: bool,
    argocd: OnceLock<argocd::resolve::ArgoModel>,
    ci: OnceLock<ci::CiModel>,
    k8s: OnceLock<k8s::K8sIndex>,
    rendered: OnceLock<argocd::rendered::RenderedObjects>,
    /// What the run's chart renderings may spend, over the resolver's and [`Model::rendered`].
    render_budget: std::sync::Arc<helm::RenderBudget>,
}

impl<'p> Model<'p> {
    #[must_use]
    pub fn new(project: &'p Project, settings: Settings) -> Self {
        Model {
            project,
            settings,
            drop_unread_values: false,
            argocd: OnceLock::new(),
            ci: OnceLock::new(),
            k8s: OnceLock::new(),
            rendered: OnceLock::new(),
            render_budget: std::sync::Arc::default(),
        }
    }

    /// A model whose sources keep their effective values only where something reads them
    /// later: charts that may render and the argo-cd chart. The others drop them as soon as
    /// their image tags are read, so thousands of sources' values never live at once, and
    /// charts that cannot render are not loaded. For a run whose policies do not read
    /// `data.gitops` values, without a language server reading them.
    #[must_use]
    pub fn dropping_unread_values(mut self) -> Self {
        self.drop_unread_values = true;
        self
    }

    /// The Argo CD reachability model.
    pub fn argocd(&self) -> &argocd::resolve::ArgoModel {
        self.argocd.get_or_init(|| {
            let opts = argocd::resolve::ResolveOptions {
                repo_urls: self.settings.repo_urls.clone(),
                roots: self.settings.argocd.roots.clone(),
                drop_unread_values: self.drop_unread_values,
                render_budget: self.render_budget.clone(),
            };
            argocd::resolve::resolve(self.project, self.kustomize(), &opts)
        })
    }

    /// The kustomization graph.
    pub fn kustomize(&self) -> &kustomize::Kustomizations {
        &self.project.kustomize
    }

    /// Every Kubernetes object, by group, kind, namespace and name: the repository's manifests
    /// and the objects live Applications render from its charts.
    pub fn k8s(&self) -> k8s::Objects<'_> {
        let rendered = self.rendered();
        let index = self
            .k8s
            .get_or_init(|| k8s::index(&self.project.docs, self.kustomize(), Some(rendered)));
        k8s::Objects::new(&self.project.docs, &rendered.docs, index)
    }

    /// The Kubernetes objects live Applications deploy from this repository's Helm charts,
    /// rendered on first use.
    pub fn rendered(&self) -> &argocd::rendered::RenderedObjects {
        self.rendered.get_or_init(|| {
            argocd::rendered::build(self.project, self.argocd(), &self.render_budget)
        })
    }

    /// The assembled CI pipelines (GitLab) and workflows (GitHub).
    pub fn ci(&self) -> &ci::CiModel {
        self.ci.get_or_init(|| ci::build(self.project))
    }

    /// The facts built during the run, owned and detached from the project, so that the
    /// caller can choose where to free them (many small allocations).
    #[must_use]
    pub fn into_facts(self) -> impl Send + 'static {
        (self.argocd, self.ci, self.k8s, self.rendered)
    }
}

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
    /// an empty map, and [`Project::tree`] parses the tree again (see `engine::load_text`).
    pub kept: Option<KeptValues>,
}

/// What a Helm values document whose tree was dropped keeps.
#[derive(Clone, Debug)]
pub enum KeptValues {
    /// Its values.
    Values(values::Values),
    /// Only its image tags, when a run reads nothing else of it and it has none of
    /// [`VALUES_KEYS_READ_WHOLE`]: the rest is parsed again if a reader needs it (see
    /// [`Project::helm_values`]).
    ImageTags(std::sync::Arc<[values::ImageTag]>),
}

/// Top-level keys that make a values document more than its image tags: the argo-cd chart's
/// `configs` (also under `argo-cd`), and the `metadata` and `kind` of an Argo CD object saved
/// under a values file name. `argocd/schema` checks documents with one of them.
pub const VALUES_KEYS_READ_WHOLE: &[&str] = &["configs", "argo-cd", "metadata", "kind"];

impl KeptValues {
    /// What a values document keeps: `values` when `whole` or when it has one of
    /// [`VALUES_KEYS_READ_WHOLE`], else only its image tags.
    #[must_use]
    pub fn new(values: values::Values, whole: bool) -> KeptValues {
        if whole
            || VALUES_KEYS_READ_WHOLE
                .iter()
                .any(|k| values.get(k).is_some())
        {
            return KeptValues::Values(values);
        }
        KeptValues::ImageTags(values::image_tags(&values).into())
    }
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
