//! Rules about Argo CD Applications, ApplicationSets and AppProjects.

pub mod bounds;

rule_group!(
    app_of_apps_cycle::AppOfAppsCycle,
    destination_out_of_project::DestinationOutOfProject,
    image_tag_none::ImageTagNone,
    infra_boundary::InfraBoundary,
    insecure_without_edge_tls::InsecureWithoutEdgeTls,
    missing_source::MissingSource,
    not_rendered::NotRendered,
    project_bounds::ProjectBounds,
    schema::Schema,
    self_managed::SelfManaged,
    source_out_of_project::SourceOutOfProject,
    sync_policy::SyncPolicy,
    unknown_project::UnknownProject,
);
