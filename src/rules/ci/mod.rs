//! Rules about CI definitions (GitLab CI, GitHub Actions) that drive a GitOps repository.

pub mod writeback_skip_ci;
