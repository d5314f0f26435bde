//! Rules about Argo CD Applications, ApplicationSets and AppProjects.

pub mod bounds;

pub mod app_of_apps_cycle;
pub mod destination_out_of_project;
pub mod image_tag_none;
pub mod image_updater;
pub mod infra_boundary;
pub mod insecure_without_edge_tls;
pub mod missing_source;
pub mod not_rendered;
pub mod project_bounds;
pub mod schema;
pub mod self_managed;
pub mod source_out_of_project;
pub mod sync_policy;
pub mod unknown_project;

/// This group's rules, sorted by id (a test keeps it so).
pub static RULES: &[&dyn crate::rule::Rule] = &[
    &app_of_apps_cycle::AppOfAppsCycle,
    &destination_out_of_project::DestinationOutOfProject,
    &image_tag_none::ImageTagNone,
    &image_updater::ImageUpdater,
    &infra_boundary::InfraBoundary,
    &insecure_without_edge_tls::InsecureWithoutEdgeTls,
    &missing_source::MissingSource,
    &not_rendered::NotRendered,
    &project_bounds::ProjectBounds,
    &schema::Schema,
    &self_managed::SelfManaged,
    &source_out_of_project::SourceOutOfProject,
    &sync_policy::SyncPolicy,
    &unknown_project::UnknownProject,
];
