//! `argocd/image-tag-none`: an Application deploys an image tag that is a placeholder.

use std::collections::BTreeMap;

use crate::diagnostic::{Finding, Severity};
use crate::rule::rule_options;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::source::Span;

pub struct ImageTagNone;

static META: RuleMeta = RuleMeta {
    id: "argocd/image-tag-none",
    summary: "an Application deploys an image whose effective tag is a placeholder such as `none`",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: Options::DECLARED,
    docs: include_str!("image_tag_none.md"),
};

rule_options! {
    /// The options of [`META`].
    pub struct Options {
        /// Tags that mean "no image yet" (default `none`), compared without case.
        pub placeholders: Option<Vec<String>> =>
            "tags that mean \"no image yet\", compared case-insensitively (default: [\"none\"])",
    }
}

impl Rule for ImageTagNone {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let model = cx.model.argocd();
        let placeholders: Vec<String> = match &cx.options::<Options>().placeholders {
            Some(list) => list.iter().map(|p| p.to_lowercase()).collect(),
            None => vec!["none".to_string()],
        };
        // One finding per node that sets a placeholder; a label per Application deploying it.
        let mut by_span: BTreeMap<Span, (&str, &str, Vec<usize>)> = BTreeMap::new();
        for t in &model.tags {
            if !placeholders.iter().any(|p| *p == t.tag.to_lowercase()) {
                continue;
            }
            let e = by_span
                .entry(t.span)
                .or_insert((t.tag.as_str(), t.key.as_str(), Vec::new()));
            if !e.2.contains(&t.app) {
                e.2.push(t.app);
            }
        }
        // Rendered workloads: a placeholder printed from a values node already reported gets
        // a label where it is rendered; one written elsewhere (a template, another values key)
        // is a finding of its own, at the text that wrote the tag.
        let mut rendered_at: BTreeMap<Span, Labels> = BTreeMap::new();
        // Per tag span: the message's subject, the Applications, the rendered places.
        let mut written: BTreeMap<Span, (String, Vec<usize>, Labels)> = BTreeMap::new();
        let rendered = cx.model.rendered();
        for (doc, meta) in rendered.docs.iter().zip(&rendered.meta) {
            for img in &meta.images {
                let Some(tag) = img.tag.as_deref() else {
                    continue;
                };
                if !placeholders.iter().any(|p| *p == tag.to_lowercase()) {
                    continue;
                }
                let label = (img.written, img.label.clone());
                if by_span.contains_key(&img.tag_span) {
                    rendered_at.entry(img.tag_span).or_default().push(label);
                    continue;
                }
                let what = format!(
                    "the tag of image `{}` in {} `{}`",
                    img.image,
                    doc.k8s_kind().unwrap_or("object"),
                    doc.name().unwrap_or("")
                );
                let e = written.entry(img.tag_span).or_insert_with(|| {
                    (
                        format!("{what} is the placeholder `{tag}`"),
                        Vec::new(),
                        Vec::new(),
                    )
                });
                if !e.1.contains(&meta.app) {
                    e.1.push(meta.app);
                }
                // A tag written in the template line is its own place.
                let same_place = img.written.file == img.tag_span.file
                    && img.written.start <= img.tag_span.end
                    && img.tag_span.start <= img.written.end;
                if !same_place {
                    e.2.push(label);
                }
            }
        }
        let mut out = Vec::new();
        for (span, (what, apps, labels)) in written {
            let first = &model.apps[apps[0]];
            let who = if apps.len() == 1 {
                format!("Application `{}` deploys", first.name)
            } else {
                format!("{} Applications deploy", apps.len())
            };
            let mut f = Finding::new(format!("{what}, and {who} it"), span).with_help(
                "Set a real image tag, or keep this chart out of every Application until the image is built.",
            );
            for (at, label) in dedup_labels(labels) {
                f = f.with_label(at, label);
            }
            out.push(f);
        }
        for (span, (tag, key, apps)) in by_span {
            let first = &model.apps[apps[0]];
            let who = if apps.len() == 1 {
                format!("Application `{}` deploys", first.name)
            } else {
                format!("{} Applications deploy", apps.len())
            };
            let mut f = Finding::new(
                format!("{key} is the placeholder `{tag}`, and {who} it"),
                span,
            )
            .with_help(
                "Set a real image tag, or keep this file out of every Application until the image is built.",
            );
            let mut seen = Vec::new();
            for &a in &apps {
                let app = &model.apps[a];
                if seen.contains(&(app.name_span, &app.name)) {
                    continue;
                }
                seen.push((app.name_span, &app.name));
                let msg = match &app.appset {
                    Some(set) => format!(
                        "deployed by Application `{}` (generated by ApplicationSet `{set}`)",
                        app.name
                    ),
                    None => format!("deployed by Application `{}`", app.name),
                };
                f = f.with_label(app.name_span, msg);
            }
            for (at, label) in dedup_labels(rendered_at.remove(&span).unwrap_or_default()) {
                f = f.with_label(at, label);
            }
            out.push(f);
        }
        for u in &model.unexpandable {
            let mut deps: Vec<&str> = model
                .apps
                .iter()
                .filter(|a| a.doc == u.doc && a.live)
                .flat_map(|a| a.depends_on_unknown.iter().map(String::as_str))
                .collect();
            deps.sort_unstable();
            deps.dedup();
            if deps.is_empty() {
                continue;
            }
            out.push(
                Finding::new(
                    format!(
                        "cannot check the image tags of ApplicationSet `{}`: its `{}` generator cannot be expanded offline and `{}` depends on it",
                        u.name,
                        u.generator,
                        deps.join("`, `")
                    ),
                    u.span,
                )
                .with_severity(Severity::Info)
                .with_help("Check the generated Applications in Argo CD, or use a generator gitops-lint can expand (list, git, matrix, merge)."),
            );
        }
        out
    }
}

type Labels = Vec<(Span, String)>;

/// Labels once each, at most five (an ApplicationSet may render one template many times).
fn dedup_labels(mut labels: Labels) -> Labels {
    let mut seen = std::collections::HashSet::new();
    labels.retain(|l| seen.insert(l.clone()));
    labels.truncate(5);
    labels
}

#[cfg(test)]
mod tests {
    use crate::config::Config;
    use crate::engine::check_texts;

    const APP: &str = "apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata:\n  name: web\n  namespace: argocd\nspec:\n  project: default\n  source:\n    repoURL: https://git.example.com/gitops.git\n    path: charts/web\n  destination:\n    server: https://kubernetes.default.svc\n    namespace: web\n";
    const CHART: &str = "apiVersion: v2\nname: web\nversion: 1.0.0\n";

    /// (file:line:col, message) of the finding and of each label.
    fn findings(template: &str, values: &str) -> Vec<Vec<String>> {
        let report = check_texts(
            &[
                ("argocd/web.yaml", APP),
                ("charts/web/Chart.yaml", CHART),
                ("charts/web/values.yaml", values),
                ("charts/web/templates/deployment.yaml", template),
            ],
            Config::default(),
        );
        let at = |span: crate::source::Span| {
            let f = report.repo.source(span.file);
            let lc = f.line_col(span.start as usize);
            format!("{}:{}:{} `{}`", f.path, lc.line, lc.column, f.slice(span))
        };
        report
            .diagnostics
            .iter()
            .filter(|d| d.rule == "argocd/image-tag-none")
            .map(|d| {
                std::iter::once(format!("{} {}", at(d.span), d.message))
                    .chain(
                        d.labels
                            .iter()
                            .map(|l| format!("{} {}", at(l.span), l.message)),
                    )
                    .collect()
            })
            .collect()
    }

    #[test]
    fn a_placeholder_from_values_is_one_finding_labelled_where_it_is_rendered() {
        let template = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\nspec:\n  template:\n    spec:\n      containers:\n        - name: web\n          image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"\n";
        let found = findings(template, "image:\n  repository: nginx\n  tag: none\n");
        assert_eq!(
            found,
            vec![vec![
                "charts/web/values.yaml:3:8 `none` `image.tag` is the placeholder `none`, and Application `web` deploys it".to_string(),
                "argocd/web.yaml:4:9 `web` deployed by Application `web`".to_string(),
                "charts/web/templates/deployment.yaml:10:11 `image: \"{{ .Values.image.repository }}:{{ .Values.image.tag }}\"` rendered from `templates/deployment.yaml:10` by Application `web`".to_string(),
            ]]
        );
    }

    #[test]
    fn a_placeholder_written_in_a_template_is_reported_there() {
        let template = "\u{feff}apiVersion: apps/v1\r\nkind: Deployment\r\nmetadata:\r\n  name: web\r\nspec:\r\n  template:\r\n    spec:\r\n      containers:\r\n        - name: web\r\n          image: \"{{ .Values.image.repository }}:none\"\r\n";
        let found = findings(template, "image:\n  repository: nginx\n");
        assert_eq!(
            found,
            vec![vec![
                "charts/web/templates/deployment.yaml:10:50 `none` the tag of image `nginx:none` in Deployment `web` is the placeholder `none`, and Application `web` deploys it".to_string(),
            ]]
        );
    }
}
