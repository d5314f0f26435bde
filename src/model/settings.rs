//! What the repository's configuration says about its domain: which URLs name this
//! repository and where Argo CD's bootstrap starts. `config` parses `.gitops-lint.yaml` into
//! these; the model reads them (a key only one rule reads is that rule's option).

/// Domain settings of a run (`repo_urls`, `argocd.roots`).
#[derive(Clone, Debug, Default)]
pub struct Settings {
    /// URLs under which this repository is known to Argo CD.
    pub repo_urls: Vec<String>,
    pub argocd: ArgocdSettings,
    pub ci: CiSettings,
    /// The configuration file's name, for messages that cite a declaration in it.
    pub config_file: Option<String>,
}

/// The `argocd:` section of the configuration, as far as the model reads it.
#[derive(Clone, Debug, Default)]
pub struct ArgocdSettings {
    /// Files (relative to the root) whose Argo CD objects are applied by the bootstrap. When
    /// set, only what is reachable from them through app-of-apps is live.
    pub roots: Vec<String>,
    /// Config Management Plugins by name, with the tool each one wraps, so their sources are
    /// rendered as that tool's (`argocd.plugins`).
    pub plugins: Vec<(String, PluginTool)>,
}

/// The `ci:` section of the configuration, as far as the model reads it.
#[derive(Clone, Debug, Default)]
pub struct CiSettings {
    /// `ci.projects`: GitLab projects (`group/ci-modules`) whose files `include: project:`
    /// brings, each mapped to a folder of this repository holding a checkout of the project
    /// (a submodule, a vendored copy), or to one file that stands for every file included from
    /// it. Repository-relative, never outside the root.
    pub projects: Vec<(String, String)>,
}

/// What a Config Management Plugin runs, as far as rendering its source goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PluginTool {
    Helm,
    Kustomize,
    Directory,
}

impl PluginTool {
    pub const NAMES: &[&str] = &["helm", "kustomize", "directory"];

    #[must_use]
    pub fn parse(name: &str) -> Option<PluginTool> {
        match name {
            "helm" => Some(PluginTool::Helm),
            "kustomize" => Some(PluginTool::Kustomize),
            "directory" => Some(PluginTool::Directory),
            _ => None,
        }
    }
}
