//! Rules about Argo CD Applications, ApplicationSets and AppProjects.

pub mod sync_policy;
