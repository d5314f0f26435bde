//! What each live Application deploys from this repository, source by source, as the model
//! sees it: written manifests, Helm renders and kustomize builds, each object with the line
//! that wrote it; what is not rendered here says why. `render` prints it, `diff` compares it
//! between two revisions.

use std::sync::Arc;

use crate::model::argocd::resolve::{App, Location, ResolvedSource, SourceKind};
use crate::model::{DocKind, Document, Model, Repository, helm};
use crate::source::Span;
use crate::yaml::Node;

/// One object a source deploys.
pub struct Rendered {
    pub app: String,
    pub source: usize,
    /// "`apps/web/deploy.yaml:3`", or "rendered from `templates/x.yaml:3` by Application `a`".
    pub origin: String,
    pub object: Arc<Node>,
    /// The other spans that wrote a scalar, by the scalar's span: a container image printed
    /// from several values (`repository:tag`) has its first value's span; its tag's values
    /// node and the template line that prints it are here (for `diff`'s causes).
    pub also: Vec<(Span, Vec<Span>)>,
}

/// What one source deploys, or why it is not shown.
pub struct SourceOut {
    /// Index in `ArgoModel::apps`.
    pub app_index: usize,
    pub app: String,
    pub source: usize,
    /// "helm chart `charts/apps`", "directory `apps/web`"...
    pub what: String,
    /// Why what it deploys is not (all) shown.
    pub note: Option<String>,
    pub objects: Vec<Rendered>,
}

/// What each live Application (each one named, when `names` is not empty) deploys, source by
/// source, in the order of `ArgoModel::apps`.
///
/// # Errors
/// When a name is not a live Application's.
pub fn collect(model: &Model<'_>, names: &[String]) -> Result<Vec<SourceOut>, String> {
    let argo = model.argocd();
    for n in names {
        if !argo.apps.iter().any(|a| a.live && &a.name == n) {
            return Err(format!("no live Application is named `{n}`"));
        }
    }
    Ok(collect_where(model, |app| {
        names.is_empty() || names.contains(&app.name)
    }))
}

/// What each live Application `keep` accepts deploys, source by source, in the order of
/// `ArgoModel::apps`.
pub fn collect_where(model: &Model<'_>, keep: impl Fn(&App) -> bool) -> Vec<SourceOut> {
    let argo = model.argocd();
    let repo = model.repo;
    let mut out = Vec::new();
    for (a, app) in argo.apps.iter().enumerate() {
        if !app.live || !keep(app) {
            continue;
        }
        for (s, src) in app.sources.iter().enumerate() {
            let mut o = SourceOut {
                app_index: a,
                app: app.name.clone(),
                source: s,
                what: describe(src),
                note: None,
                objects: Vec::new(),
            };
            match (src.kind, &src.location) {
                (SourceKind::Kustomize, Location::InRepo(dir)) => {
                    if let Some(build) = crate::model::kustomize::build::build_folder(repo, dir) {
                        built(repo, &app.name, s, dir, build, &mut o);
                    }
                }
                (SourceKind::Directory, Location::InRepo(_)) => {
                    for &f in src.files.iter() {
                        for d in repo.file_docs(f).iter().filter(|d| deployable(d.kind)) {
                            let line = repo.source(d.file).line_col(d.span.start as usize).line;
                            o.objects.push(Rendered {
                                app: app.name.clone(),
                                source: s,
                                origin: format!("`{}:{line}`", repo.source(d.file).path),
                                object: whole(repo, d),
                                also: Vec::new(),
                            });
                        }
                    }
                }
                (SourceKind::Helm, Location::InRepo(dir)) => {
                    for (d, meta) in model.rendered().with_meta(a, s) {
                        let also = helm::container_images(&d.root)
                            .into_iter()
                            .zip(&meta.images)
                            .map(|(n, i)| (n.span, vec![i.tag_span, i.written]))
                            .collect();
                        o.objects.push(Rendered {
                            app: app.name.clone(),
                            source: s,
                            origin: meta.label.clone(),
                            object: d.root.clone(),
                            also,
                        });
                    }
                    for r in argo
                        .rendered
                        .iter()
                        .filter(|r| r.manager_doc == app.doc && &r.chart_dir == dir)
                    {
                        o.objects.push(Rendered {
                            app: app.name.clone(),
                            source: s,
                            origin: r.label(),
                            object: Arc::new(r.root.clone()),
                            also: Vec::new(),
                        });
                    }
                    if src.values.is_none() {
                        o.note = Some(VALUES_UNKNOWN.into());
                    } else if o.objects.is_empty() {
                        o.note = Some("renders no object here: the chart has no templates of its own, or its dependencies are not under `charts/`".into());
                    }
                }
                (SourceKind::Ref, _) => continue,
                _ => o.note = unrendered_note(src).map(str::to_string),
            }
            out.push(o);
        }
    }
    out
}

const VALUES_UNKNOWN: &str = "not rendered: its values are not all known here, or the chart cannot be rendered offline (see `argocd/not-rendered`)";

/// Why a source is not rendered, known without rendering it: an external or unresolved
/// source, a plugin, a chart whose values are not all known. `None`: [`collect`] renders it
/// (what it says then may still be a note), or it deploys nothing (a `ref:` source).
#[must_use]
pub fn unrendered_note(src: &ResolvedSource) -> Option<&'static str> {
    match (src.kind, &src.location) {
        (SourceKind::Kustomize | SourceKind::Directory, Location::InRepo(_))
        | (SourceKind::Ref, _) => None,
        (SourceKind::Helm, Location::InRepo(_)) => src.values.is_none().then_some(VALUES_UNKNOWN),
        (_, Location::External) => Some("not in this repository: not rendered"),
        (SourceKind::Plugin, _) => {
            Some("a Config Management Plugin: not run (map it with `argocd.plugins`)")
        }
        _ => Some("not resolved here: not rendered"),
    }
}

/// What `kustomize build` of the source's folder gives, each object headed by the line that
/// wrote it (or the kustomization that generated it); what kustomize would reject, or what is
/// not built here, is the note.
fn built(
    repo: &Repository,
    app: &str,
    source: usize,
    dir: &str,
    build: crate::model::kustomize::build::Build,
    o: &mut SourceOut,
) {
    use crate::model::kustomize::build::ProblemKind;
    let at = |span: crate::source::Span| {
        let file = repo.source(span.file);
        format!("{}:{}", file.path, file.line_col(span.start as usize).line)
    };
    let mut notes: Vec<String> = build
        .problems
        .iter()
        .map(|p| match p.kind {
            ProblemKind::Error => format!("kustomize fails: {} (`{}`)", p.message, at(p.span)),
            ProblemKind::NotRendered => format!("not built: {} (`{}`)", p.message, at(p.span)),
        })
        .collect();
    notes.dedup();
    if build.failed() {
        o.note = Some(notes.join("; "));
        return;
    }
    if !notes.is_empty() {
        o.note = Some(notes.join("; "));
    }
    let folder = if dir.is_empty() { "." } else { dir };
    for obj in build.objects {
        let origin = match (obj.doc, &obj.chart) {
            (Some(d), _) => format!("`{}`", at(repo.docs[d].span)),
            (None, Some(chart)) => {
                format!("rendered from chart `{chart}` by the kustomization of `{folder}`")
            }
            (None, None) => format!("generated by the kustomization of `{folder}`"),
        };
        o.objects.push(Rendered {
            app: app.to_string(),
            source,
            origin,
            object: Arc::new(obj.root),
            also: Vec::new(),
        });
    }
}

/// The kinds Argo CD applies from a folder: objects, not kustomizations, charts or values.
fn deployable(kind: DocKind) -> bool {
    matches!(
        kind,
        DocKind::K8sObject | DocKind::Application | DocKind::ApplicationSet | DocKind::AppProject
    )
}

/// A document's tree with every payload: loading may have emptied large ConfigMap values,
/// which are read again from the file.
fn whole(repo: &Repository, d: &Document) -> Arc<Node> {
    let tree = repo.tree(d);
    if !tree.descendants().any(Node::dropped) {
        return tree;
    }
    crate::yaml::parse(d.file, repo.source(d.file).text())
        .docs
        .into_iter()
        .find(|p| p.index == d.index)
        .map_or(tree, |p| Arc::new(p.root))
}

/// "helm `charts/x`", "plugin `.`": a source as reports name it.
#[must_use]
pub fn describe(src: &ResolvedSource) -> String {
    let at = match &src.location {
        Location::InRepo(dir) if dir.is_empty() => "`.`".to_string(),
        Location::InRepo(dir) => format!("`{dir}`"),
        _ => src
            .chart
            .as_ref()
            .map(|c| format!("`{}`", c.value))
            .or_else(|| src.repo_url.as_ref().map(|u| format!("`{u}`")))
            .unwrap_or_else(|| "(unknown)".into()),
    };
    format!("{} {at}", src.kind.as_str())
}
