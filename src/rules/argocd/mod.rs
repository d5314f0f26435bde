//! Rules about Argo CD Applications, ApplicationSets and AppProjects.

pub mod app_of_apps_cycle;
pub mod bounds;
pub mod destination_out_of_project;
pub mod image_tag_none;
pub mod infra_boundary;
pub mod insecure_without_edge_tls;
pub mod missing_source;
pub mod project_bounds;
pub mod schema;
pub mod self_managed;
pub mod source_out_of_project;
pub mod sync_policy;
pub mod unknown_project;
