//! What the repository's configuration says about its domain: which URLs name this
//! repository, where Argo CD's bootstrap starts, which projects, paths and namespaces belong to
//! the platform. `config` parses `.gitops-lint.yaml` into these; the model and the rules read
//! them.

use crate::diagnostic::Severity;

/// Domain settings of a run (`repo_urls` and the `argocd:` section of the configuration).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// URLs under which this repository is known to Argo CD.
    pub repo_urls: Vec<String>,
    pub argocd: ArgocdSettings,
    pub ci: CiSettings,
    /// The configuration file's name, for messages that cite a declaration in it.
    pub config_file: Option<String>,
}

/// The `argocd:` section of the configuration.
#[derive(Clone, Debug, Default)]
pub struct ArgocdSettings {
    /// Files (relative to the root) whose Argo CD objects are applied by the bootstrap. When
    /// set, only what is reachable from them through app-of-apps is live.
    pub roots: Vec<String>,
    /// AppProjects created outside this repository (`argocd/unknown-project`).
    pub external_projects: Vec<String>,
    /// Cluster-scoped kinds a project may whitelist, as `group/Kind` or `Kind` (core group);
    /// `None`: only `Namespace` (`argocd/project-bounds`).
    pub cluster_resources_allowed: Option<Vec<String>>,
    /// Folders or files holding Argo CD's own installation (`argocd/self-managed`).
    pub self_paths: Vec<String>,
    /// Namespaces of the infrastructure; `None`: the default list (`argocd/infra-boundary`).
    pub infra_namespaces: Option<Vec<String>>,
    /// Helm charts and OLM packages of the infrastructure; `None`: the default list
    /// (`argocd/infra-boundary`).
    pub infra_charts: Option<Vec<String>>,
    /// Folders or files of the infrastructure (`argocd/infra-boundary`).
    pub infra_paths: Vec<String>,
    /// `argocd.server_service`: the Service of argocd-server (default `argocd-server`).
    pub server_service: Option<String>,
    /// `argocd.edge_tls`: where TLS in front of argocd-server is terminated.
    pub edge_tls: Option<EdgeTls>,
    /// `argocd.version`: the Argo CD release the repository targets (`argocd/schema`);
    /// `None`: the latest modelled release.
    pub version: Option<super::argocd::schema::Version>,
}

/// `argocd.edge_tls: {mode: external, reason: "..."}`: TLS in front of argocd-server is
/// terminated outside the repository (a cloud load balancer, a tunnel).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EdgeTls {
    /// Why plain HTTP to argocd-server is safe; printed in `--format text`.
    pub reason: String,
}

impl ArgocdSettings {
    /// The Service name of argocd-server.
    #[must_use]
    pub fn server_service(&self) -> &str {
        self.server_service.as_deref().unwrap_or("argocd-server")
    }
}

/// The `ci:` section of the configuration.
#[derive(Clone, Debug, Default)]
pub struct CiSettings {
    /// `ci.other_repositories`: how a write-back to another repository without `[skip ci]` is
    /// reported (`ci/writeback-skip-ci`). A loop in this repository is always an error.
    pub other_repositories: OtherRepositories,
}

#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum OtherRepositories {
    Error,
    #[default]
    Warning,
    Off,
}

impl CiSettings {
    /// The severity of a write-back to another repository; `None` when it is `off`.
    #[must_use]
    pub fn other_repositories(&self) -> Option<Severity> {
        match self.other_repositories {
            OtherRepositories::Error => Some(Severity::Error),
            OtherRepositories::Warning => Some(Severity::Warning),
            OtherRepositories::Off => None,
        }
    }
}
