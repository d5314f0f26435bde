//! Rules about CI definitions (GitLab CI, GitHub Actions) that drive a GitOps repository.

rule_group!(writeback_skip_ci::WritebackSkipCi);
