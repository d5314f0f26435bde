//! The domain model: documents classified by what they are to Argo CD, Helm, kustomize or
//! CI, and the facts computed from them once per run ([`Model`]), which rules and the Rego
//! `data.gitops` view both read.
//!
//! Folders by domain: the deployer (`argocd/`), Kubernetes objects and the routes to them
//! (`k8s/`), source resolution any deployer reuses (`sources/`), Helm (`helm/`), kustomize
//! (`kustomize.rs`, `patch.rs`), CI (`ci/`) and the bots that commit (`writeback/`). The
//! repository with kustomize applied is [`Repository`] (`repository.rs`), over the documents
//! of `crate::repo`.
//!
//! The seam between deployers: each builds its own fact of what it deploys from this
//! repository. Argo CD's is [`Model::argocd`] (`argocd::resolve`), and what it renders is
//! [`Model::rendered`]. A second deployer (Flux) would add its own resolver beside it, say a
//! `flux/` folder that reuses `sources/`, `helm/` and `kustomize.rs`, and one line in `facts!`.

pub mod argocd;
pub mod ci;
pub mod deployed;
pub mod diff;
pub mod helm;
pub mod k8s;
pub mod kustomize;
pub mod patch;
pub mod paths;
pub mod repository;
pub mod settings;
pub mod sources;
pub mod template;
pub mod writeback;

use std::sync::OnceLock;

pub use crate::repo::{
    DocKind, Document, Field, KUSTOMIZATION_FILE_NAMES, KeptValues, classify, is_argocd_kind,
    is_kustomization_kind, is_values_file_name,
};
pub use repository::Repository;
pub use settings::{ArgocdSettings, CiSettings, Settings};

use crate::repo::retention::Reads;

/// What the model's facts read beyond what every document keeps, each declared beside its
/// reader: the cluster Secrets and `argocd-cm` (`argocd::projects`), cloudflared
/// configurations and values that may hold tunnel routes (`k8s::routes::tunnels`), and the
/// values files chart sources layer over their chart's defaults (`argocd::resolve`), and the
/// argo-cd chart's `configs` (`argocd::params`), and Image Updater's ConfigMap
/// (`writeback`). Every run keeps them, with what its rules
/// declare (`RuleMeta::reads`).
pub const READS: [Reads; 5] = [
    argocd::projects::READS,
    k8s::routes::tunnels::READS,
    argocd::resolve::READS,
    argocd::params::READS,
    writeback::READS,
];

/// The repository and the facts computed from it, each built on first use, once per run, and
/// shared by every rule (they run in parallel) and by the Rego `data.gitops` view.
pub struct Model<'p> {
    pub repo: &'p Repository,
    pub settings: Settings,
    /// Whether sources drop the effective values nothing reads once their image tags are read.
    drop_unread_values: bool,
    facts: Facts,
    /// What the run's chart renderings may spend, over the resolver's and [`Model::rendered`].
    render_budget: std::sync::Arc<helm::RenderBudget>,
    /// The Applications whose charts [`Model::rendered`] renders (`None`: every live one).
    render_only: Option<std::collections::BTreeSet<String>>,
    /// Renderings and compiled templates kept from the previous run (the language server).
    render_cache: Option<std::sync::Arc<argocd::rendered::RenderCache>>,
}

/// Declares the facts: for each, its accessor on [`Model`], its type, and how it is built from
/// the model on first use. A new fact is its domain module plus one line in `facts!` below.
macro_rules! facts {
    ($($(#[$doc:meta])* $name:ident: $ty:ty = $build:expr;)*) => {
        /// One `OnceLock` per fact.
        #[derive(Default)]
        struct Facts {
            $($name: OnceLock<$ty>,)*
        }

        impl Facts {
            /// The facts built, owned and detached from the repository.
            fn into_owned(self) -> impl Send + 'static {
                ($(self.$name,)*)
            }
        }

        impl<'p> Model<'p> {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> &$ty {
                    self.facts.$name.get_or_init(|| ($build)(self))
                }
            )*
        }
    };
}

facts! {
    /// The Argo CD reachability model.
    argocd: argocd::resolve::ArgoModel = |m: &Model<'_>| {
        let opts = argocd::resolve::ResolveOptions {
            repo_urls: m.settings.repo_urls.clone(),
            roots: m.settings.argocd.roots.clone(),
            plugins: m.settings.argocd.plugins.clone(),
            new_git_file_globbing: m
                .argocd_params()
                .new_git_file_globbing
                .as_ref()
                .is_some_and(|d| d.on),
            drop_unread_values: m.drop_unread_values,
            render_budget: m.render_budget.clone(),
        };
        argocd::resolve::resolve(m.repo, m.kustomize(), &opts)
    };
    /// The Kubernetes objects live Applications deploy from this repository's Helm charts,
    /// rendered on first use.
    rendered: argocd::rendered::RenderedObjects =
        |m: &Model<'_>| argocd::rendered::build(
            m.repo,
            m.argocd(),
            &m.render_budget,
            m.render_only.as_ref(),
            m.render_cache.as_deref(),
        );
    /// The index behind [`Model::k8s`].
    k8s_index: k8s::K8sIndex =
        |m: &Model<'_>| {
            let unlisted = m.kustomize().unlisted_files(m.repo);
            k8s::index(&m.repo.docs, m.kustomize(), &unlisted, Some(m.rendered()))
        };
    /// Argo CD's command parameters as the repository sets them (`argocd-cmd-params-cm`).
    argocd_params: argocd::params::Params = |m: &Model<'_>| argocd::params::read(m.repo);
    /// The assembled CI pipelines (GitLab) and workflows (GitHub).
    ci: ci::CiModel = |m: &Model<'_>| ci::build(m.repo, &m.settings.ci.projects);
    /// What the deployers apply that no file holds as it is applied (rendered Argo CD objects).
    deployed: deployed::Deployed = |m: &Model<'_>| deployed::build(m.repo, m.argocd());
    /// The other Kubernetes objects live Applications render from this repository's charts,
    /// for the rules and policies that judge objects.
    deployed_objects: deployed::Deployed = |m: &Model<'_>| deployed::objects(m.repo, m.rendered());
    /// The bots that commit to Git repositories (Argo CD Image Updater, Flux image automation).
    writeback: writeback::Writers =
        |m: &Model<'_>| writeback::build(m.repo, m.argocd(), &m.settings.repo_urls);
}

impl<'p> Model<'p> {
    #[must_use]
    pub fn new(repo: &'p Repository, settings: Settings) -> Self {
        Model {
            repo,
            settings,
            drop_unread_values: false,
            facts: Facts::default(),
            render_budget: std::sync::Arc::default(),
            render_only: None,
            render_cache: None,
        }
    }

    /// A model whose [`Model::rendered`] renders only the charts of these Applications (by
    /// name): `diff` renders what the change can affect. Set before anything is rendered.
    #[must_use]
    pub fn rendering_only(mut self, names: std::collections::BTreeSet<String>) -> Self {
        debug_assert!(self.facts.rendered.get().is_none());
        self.render_only = Some(names);
        self
    }

    /// A model whose [`Model::rendered`] reuses the renderings `cache` kept from the previous
    /// run whose inputs are unchanged, and keeps this run's for the next (the language
    /// server's re-lints). Set before anything is rendered.
    #[must_use]
    pub fn with_render_cache(
        mut self,
        cache: std::sync::Arc<argocd::rendered::RenderCache>,
    ) -> Self {
        debug_assert!(self.facts.rendered.get().is_none());
        self.render_cache = Some(cache);
        self
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

    /// The kustomization graph, read once with the [`Repository`].
    pub fn kustomize(&self) -> &kustomize::Kustomizations {
        &self.repo.kustomize
    }

    /// Every Kubernetes object, by group, kind, namespace and name: the repository's manifests
    /// and the objects live Applications render from its charts.
    pub fn k8s(&self) -> k8s::Objects<'_> {
        k8s::Objects::new(&self.repo.docs, &self.rendered().docs, self.k8s_index())
    }

    /// The facts built during the run, owned and detached from the repository, so that the
    /// caller can choose where to free them (many small allocations).
    #[must_use]
    pub fn into_facts(self) -> impl Send + 'static {
        self.facts.into_owned()
    }
}
