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
pub mod paths;
pub mod repository;
pub mod settings;
pub mod sources;
pub mod template;

use std::sync::OnceLock;

pub use crate::repo::{
    DocKind, Document, Field, KUSTOMIZATION_FILE_NAMES, KeptValues, classify, is_argocd_kind,
    is_kustomization_kind, is_values_file_name,
};
pub use repository::Repository;
pub use settings::{ArgocdSettings, CiSettings, EdgeTls, OtherRepositories, Settings};

use crate::repo::retention::Reads;

/// What the model's facts read beyond what every document keeps, each declared beside its
/// reader: the cluster Secrets and `argocd-cm` (`argocd::projects`), cloudflared
/// configurations and values that may hold tunnel routes (`k8s::routes::tunnels`), and the
/// values files chart sources layer over their chart's defaults (`argocd::resolve`). Every run
/// keeps them, with what its rules declare (`RuleMeta::reads`).
pub const READS: [Reads; 3] = [
    argocd::projects::READS,
    k8s::routes::tunnels::READS,
    argocd::resolve::READS,
];

/// The repository and the facts computed from it, each built on first use, once per run, and
/// shared by every rule (they run in parallel) and by the Rego `data.gitops` view.
pub struct Model<'p> {
    pub repo: &'p Repository,
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
    pub fn new(repo: &'p Repository, settings: Settings) -> Self {
        Model {
            repo,
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
    /// charts that cannot render are not loaded. For a run whose readers do not read every
    /// values document's values (`Retention::keeps_all_values`: a policy reading
    /// `data.gitops` values, the language server).
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
            argocd::resolve::resolve(self.repo, self.kustomize(), &opts)
        })
    }

    /// The kustomization graph.
    pub fn kustomize(&self) -> &kustomize::Kustomizations {
        &self.repo.kustomize
    }

    /// Every Kubernetes object, by group, kind, namespace and name: the repository's manifests
    /// and the objects live Applications render from its charts.
    pub fn k8s(&self) -> k8s::Objects<'_> {
        let rendered = self.rendered();
        let index = self
            .k8s
            .get_or_init(|| k8s::index(&self.repo.docs, self.kustomize(), Some(rendered)));
        k8s::Objects::new(&self.repo.docs, &rendered.docs, index)
    }

    /// The Kubernetes objects live Applications deploy from this repository's Helm charts,
    /// rendered on first use.
    pub fn rendered(&self) -> &argocd::rendered::RenderedObjects {
        self.rendered
            .get_or_init(|| argocd::rendered::build(self.repo, self.argocd(), &self.render_budget))
    }

    /// The assembled CI pipelines (GitLab) and workflows (GitHub).
    pub fn ci(&self) -> &ci::CiModel {
        self.ci.get_or_init(|| ci::build(self.repo))
    }

    /// The facts built during the run, owned and detached from the repository, so that the
    /// caller can choose where to free them (many small allocations).
    #[must_use]
    pub fn into_facts(self) -> impl Send + 'static {
        (self.argocd, self.ci, self.k8s, self.rendered)
    }
}
