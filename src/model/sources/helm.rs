//! A Helm chart folder of the repository: how it is recognised, and its default values.

use crate::model::Repository;
use crate::model::paths::join;
use crate::source::FileId;

/// The names of a chart's `Chart.yaml`, either of which makes a folder a chart.
pub const CHART_FILE_NAMES: [&str; 2] = ["Chart.yaml", "Chart.yml"];

/// The default values file (`values.yaml`) of the chart in `dir`, when the repository has it.
#[must_use]
pub fn default_values(repo: &Repository, dir: &str) -> Option<FileId> {
    let default = join(dir, "values.yaml").unwrap_or_default();
    repo.file_by_path(&default).map(|f| f.id)
}
