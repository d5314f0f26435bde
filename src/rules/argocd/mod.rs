//! Rules about Argo CD Applications, ApplicationSets and AppProjects.

pub mod app_of_apps_cycle;
pub mod image_tag_none;
pub mod insecure_without_edge_tls;
pub mod missing_source;
pub mod sync_policy;
