//! Meta-tests over the rule registry: order, ids, fixtures, docs, doc examples, starter config.

use gitops_lint::config::{self, Config};
use gitops_lint::registry as rules;

use crate::fixtures::{fixtures_root, run_case};

#[test]
fn registry_is_sorted_and_ids_are_well_formed() {
    let ids: Vec<&str> = rules::builtin().map(|r| r.meta().id).collect();
    let mut sorted = ids.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(
        ids, sorted,
        "each group's `RULES` slice (src/rules/<group>/mod.rs) must be sorted by id, without duplicates"
    );
    for id in ids {
        let (group, name) = id
            .split_once('/')
            .unwrap_or_else(|| panic!("`{id}` is not `group/name`"));
        let ok = |s: &str| {
            !s.is_empty()
                && s.split('-').all(|p| {
                    !p.is_empty()
                        && p.chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                })
        };
        assert!(
            ok(group) && ok(name),
            "`{id}` is not kebab-case `group/name`"
        );
    }
}

/// Rules that only `check --fix` reports; `tests/it/fix.rs` covers them.
const FIX_ONLY: &[&str] = &["lint/fix-failed"];

#[test]
fn every_rule_has_good_and_bad_fixtures() {
    for m in rules::all_meta()
        .into_iter()
        .filter(|m| !FIX_ONLY.contains(&m.id))
    {
        let dir = fixtures_root().join(m.id);
        let names: Vec<String> = std::fs::read_dir(&dir)
            .map(|rd| {
                rd.filter_map(|e| e.ok())
                    .map(|e| e.file_name().to_string_lossy().to_string())
                    .collect()
            })
            .unwrap_or_default();
        assert!(
            names.iter().any(|n| n.starts_with("good"))
                && names.iter().any(|n| n.starts_with("bad")),
            "rule `{}` needs fixtures: create {}/good.yaml and {}/bad.yaml",
            m.id,
            dir.display(),
            dir.display()
        );
    }
}

#[test]
fn summaries_and_docs_follow_the_conventions() {
    for m in rules::all_meta() {
        let first = m.summary.chars().next().unwrap();
        assert!(
            !first.is_uppercase() && !m.summary.ends_with('.'),
            "`{}`: summary starts lowercase, no trailing period",
            m.id
        );
        for section in ["## What it does", "## Why is this bad?", "## Example"] {
            assert!(
                m.docs.contains(section),
                "`{}`: docs lack `{section}`",
                m.id
            );
        }
        assert!(
            m.docs.contains("\n# bad") && m.docs.contains("```yaml\n# good"),
            "`{}`: docs need a `# bad` and a `# good` yaml example",
            m.id
        );
    }
}

/// The configuration of the `diff/` rules' examples: their Application's `repoURL` is the
/// repository.
const DIFF_EXAMPLE_CONFIG: &str = "repo_urls: [https://git.example.com/gitops.git]
rules:
  diff/large-change:
    max_objects: 2
";

/// The `# bad` examples in a rule's docs trigger it; the `# good` ones do not.
#[test]
fn doc_examples_are_executed() {
    for m in rules::all_meta() {
        let mut rest = m.docs;
        let mut base = None;
        while let Some(start) = rest.find("```yaml\n") {
            let body_start = start + "```yaml\n".len();
            let Some(len) = rest[body_start..].find("```") else {
                break;
            };
            let body = &rest[body_start..body_start + len];
            rest = &rest[body_start + len + 3..];
            let bad = body.starts_with("# bad");
            let good = body.starts_with("# good");
            if body.starts_with("# base") {
                base = Some(body);
            }
            if !bad && !good {
                continue;
            }
            let file = if m.id.starts_with("ci/") {
                ".gitlab-ci.yml"
            } else if m.id.starts_with("platform/") {
                // Platform components live under `platform/` (the rule's default `paths`).
                "platform/example.yaml"
            } else {
                "example.yaml"
            };
            let report = if m.id.starts_with("diff/") {
                // A `diff/` rule's example is a change: the `# base` block before it, then it.
                let base = base.unwrap_or_else(|| panic!("`{}`: no `# base` example", m.id));
                let config = gitops_lint::config::parse(
                    std::path::Path::new(".gitops-lint.yaml"),
                    DIFF_EXAMPLE_CONFIG,
                    &rules::all_meta(),
                )
                .unwrap();
                gitops_lint::engine::diff::run_texts(
                    &[(file, base)],
                    &[(file, body)],
                    config,
                    false,
                )
                .report
            } else {
                run_case(&[(file.to_string(), body.to_string())], Config::default())
            };
            let hits = report.diagnostics.iter().filter(|d| d.rule == m.id).count();
            if bad {
                assert!(
                    hits > 0,
                    "`{}`: the `# bad` docs example does not trigger the rule:\n{body}",
                    m.id
                );
            } else {
                assert_eq!(
                    hits, 0,
                    "`{}`: the `# good` docs example triggers the rule:\n{body}",
                    m.id
                );
            }
        }
    }
}

#[test]
fn starter_config_parses_and_names_every_rule() {
    let metas = rules::all_meta();
    let text = config::starter(&metas);
    let parsed = config::parse(std::path::Path::new(".gitops-lint.yaml"), &text, &metas)
        .unwrap_or_else(|e| panic!("{e}\n{text}"));
    for m in &metas {
        assert!(
            parsed.rules.contains_key(m.id),
            "starter config lacks `{}`",
            m.id
        );
    }
}

#[test]
fn config_errors_point_at_the_line_with_a_suggestion() {
    use gitops_lint::rules::argocd::{
        infra_boundary, insecure_without_edge_tls, project_bounds, self_managed, unknown_project,
    };
    let metas = rules::all_meta();
    let path = std::path::Path::new("c.yaml");
    let e = config::parse(path, "rules:\n  argocd/sync-polcy: error\n", &metas).unwrap_err();
    assert_eq!(e.span.map(|s| s.0), Some(9));
    assert_eq!(
        e.help.as_deref(),
        Some("did you mean `argocd/sync-policy`?")
    );
    let e = config::parse(path, "exclud: []\n", &metas).unwrap_err();
    assert_eq!(e.help.as_deref(), Some("did you mean `exclude`?"));
    let e = config::parse(path, "rules:\n  argocd/sync-policy: eror\n", &metas).unwrap_err();
    assert!(e.message.contains("unknown level `eror`"), "{}", e.message);
    let e = config::parse(
        path,
        "rules:\n  argocd/sync-policy: {severity: warning, nope: 1}\n",
        &metas,
    )
    .unwrap_err();
    assert!(e.message.contains("unknown option `nope`"), "{}", e.message);
    let e = config::parse(path, "argocd:\n  root: [bootstrap/root.yaml]\n", &metas).unwrap_err();
    assert_eq!(e.help.as_deref(), Some("did you mean `roots`?"));
    assert_eq!(e.span.map(|s| s.0), Some(10));
    let e = config::parse(path, "argocd:\n  infra_namespace: [kube-system]\n", &metas).unwrap_err();
    assert_eq!(e.help.as_deref(), Some("did you mean `infra_namespaces`?"));
    assert_eq!(e.span.map(|s| s.0), Some(10));
    let e = config::parse(path, "argocd:\n  external_projects: platform\n", &metas).unwrap_err();
    assert!(
        e.message.contains("argocd.external_projects"),
        "{}",
        e.message
    );
    assert_eq!(e.span.map(|s| s.0), Some(29));
    let bounds = config::parse(
        path,
        "argocd:\n  external_projects: [platform]\n  cluster_resources_allowed: [Namespace]\n  self_paths: [platform/argocd]\n  infra_namespaces: []\n  infra_charts: [cilium]\n  infra_paths: [infra]\n",
        &metas,
    )
    .unwrap();
    assert_eq!(
        bounds
            .options
            .get::<unknown_project::Options>()
            .external_projects,
        vec!["platform".to_string()]
    );
    let infra = bounds.options.get::<infra_boundary::Options>();
    assert_eq!(infra.infra_namespaces, Some(Vec::new()));
    assert_eq!(infra.infra_charts, Some(vec!["cilium".to_string()]));
    assert_eq!(infra.infra_paths, vec!["infra".to_string()]);
    assert_eq!(
        bounds
            .options
            .get::<project_bounds::Options>()
            .cluster_resources_allowed,
        Some(vec!["Namespace".to_string()])
    );
    assert_eq!(
        bounds.options.get::<self_managed::Options>().self_paths,
        vec!["platform/argocd".to_string()]
    );
    let roots = config::parse(path, "argocd:\n  roots: [bootstrap/root.yaml]\n", &metas).unwrap();
    assert_eq!(roots.argocd.roots, vec!["bootstrap/root.yaml".to_string()]);
    // `argocd.server_service` and `argocd.edge_tls`.
    let c = config::parse(
        path,
        "argocd:\n  server_service: argocd-web\n  edge_tls: {mode: external, reason: \"tunnel\"}\n",
        &metas,
    )
    .unwrap();
    let edge = |c: &config::Config| {
        c.options
            .get::<insecure_without_edge_tls::Options>()
            .clone()
    };
    assert_eq!(edge(&c).server_service(), "argocd-web");
    assert_eq!(
        edge(&c).edge_tls.map(|e| e.reason).as_deref(),
        Some("tunnel")
    );
    let c = config::parse(path, "argocd:\n  edge_tls: {mode: repository}\n", &metas).unwrap();
    assert!(edge(&c).edge_tls.is_none());
    assert_eq!(edge(&c).server_service(), "argocd-server");
    let e = config::parse(path, "argocd:\n  edge_tl: {mode: external}\n", &metas).unwrap_err();
    assert_eq!(e.help.as_deref(), Some("did you mean `edge_tls`?"));
    let e = config::parse(
        path,
        "argocd:\n  edge_tls: {mode: externl, reason: x}\n",
        &metas,
    )
    .unwrap_err();
    assert_eq!(e.help.as_deref(), Some("did you mean `external`?"));
    assert_eq!(e.span.map(|s| s.0), Some(27));
    let e = config::parse(
        path,
        "argocd:\n  edge_tls: {mode: external, reasn: x}\n",
        &metas,
    )
    .unwrap_err();
    assert_eq!(e.help.as_deref(), Some("did you mean `reason`?"));
    let e = config::parse(path, "argocd:\n  edge_tls:\n    mode: external\n", &metas).unwrap_err();
    assert!(e.message.contains("needs a `reason`"), "{}", e.message);
    assert_eq!(e.span.map(|s| s.0), Some(24));
    let e = config::parse(path, "argocd:\n  edge_tls: external\n", &metas).unwrap_err();
    assert!(e.message.contains("must be a mapping"), "{}", e.message);
    let e = config::parse(path, "argocd:\n  server_service: [a]\n", &metas).unwrap_err();
    assert!(e.message.contains("server_service"), "{}", e.message);
    let ok = config::parse(
        path,
        "rules:\n  argocd/sync-policy: off\n  yaml/syntax: {severity: warning}\n",
        &metas,
    )
    .unwrap();
    assert_eq!(ok.level("argocd/sync-policy"), Some(config::Level::Off));
}

/// `docs/rules/` is generated from the registry (what `gitops-lint explain` prints), and SARIF
/// `helpUri`s point at it. `BLESS=1 cargo test` rewrites it.
#[test]
fn generated_rule_docs_are_up_to_date() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules");
    let header =
        "<!-- generated from the rule registry by `cargo test` (BLESS=1); do not edit -->\n\n";
    let mut expected: Vec<(std::path::PathBuf, String)> = Vec::new();
    let mut index = format!(
        "{header}# Rules\n\n| rule | default severity | fixable | summary |\n|---|---|---|---|\n"
    );
    for m in rules::all_meta() {
        expected.push((
            root.join(format!("{}.md", m.id)),
            format!("{header}{}", gitops_lint::report::rules::explain(m)),
        ));
        index.push_str(&format!(
            "| [`{}`]({}.md) | {} | {} | {} |\n",
            m.id,
            m.id,
            m.default_severity.as_str(),
            if m.fix == gitops_lint::rule::FixAvailability::None {
                "no"
            } else {
                "yes"
            },
            m.summary.replace('|', "\\|")
        ));
    }
    expected.push((root.join("README.md"), index));
    let update = crate::support::bless();
    let mut stale = Vec::new();
    for (path, text) in &expected {
        if update {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, text).unwrap();
        } else if std::fs::read_to_string(path).ok().as_deref() != Some(text.as_str()) {
            stale.push(path.display().to_string());
        }
    }
    assert!(
        stale.is_empty(),
        "generated docs are stale; run `BLESS=1 cargo test` and commit:\n{}",
        stale.join("\n")
    );
}

/// A rule's documentation has one `## Options` section: the options from its metadata, then
/// what its own docs say about them.
#[test]
fn explain_has_one_options_section() {
    for m in rules::all_meta() {
        let text = gitops_lint::report::rules::explain(m);
        assert!(
            text.matches("\n## Options\n").count() <= 1,
            "{}:\n{text}",
            m.id
        );
        for o in m.options {
            assert!(text.contains(&format!("- `{}`: ", o.name)), "{}", m.id);
        }
    }
}
