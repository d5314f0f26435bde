//! `gitops-lint render`: the objects each live Application deploys, as the linter sees them,
//! in multi-document YAML (like `argocd app manifests`, offline) or JSON with where each
//! object comes from.

use std::sync::Arc;

use serde_json::{Value as J, json};

use crate::model::argocd::resolve::{Location, ResolvedSource, SourceKind};
use crate::model::{DocKind, Document, Model, Repository};
use crate::yaml::Node;

/// One object a source deploys.
struct Rendered {
    app: String,
    source: usize,
    /// "`apps/web/deploy.yaml:3`", or "rendered from `templates/x.yaml:3` by Application `a`".
    origin: String,
    object: Arc<Node>,
}

/// What one source deploys, or why it is not shown.
struct SourceOut {
    app: String,
    source: usize,
    /// "helm chart `charts/apps`", "directory `apps/web`"...
    what: String,
    /// Why what it deploys is not (all) shown.
    note: Option<String>,
    objects: Vec<Rendered>,
}

fn collect(model: &Model<'_>, names: &[String]) -> Result<Vec<SourceOut>, String> {
    let argo = model.argocd();
    let repo = model.repo;
    for n in names {
        if !argo.apps.iter().any(|a| a.live && &a.name == n) {
            return Err(format!("no live Application is named `{n}`"));
        }
    }
    let mut out = Vec::new();
    for (a, app) in argo.apps.iter().enumerate() {
        if !app.live || (!names.is_empty() && !names.contains(&app.name)) {
            continue;
        }
        for (s, src) in app.sources.iter().enumerate() {
            let mut o = SourceOut {
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
                            });
                        }
                    }
                }
                (SourceKind::Helm, Location::InRepo(dir)) => {
                    for (d, meta) in model.rendered().with_meta(a, s) {
                        o.objects.push(Rendered {
                            app: app.name.clone(),
                            source: s,
                            origin: meta.label.clone(),
                            object: d.root.clone(),
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
                        });
                    }
                    if src.values.is_none() {
                        o.note = Some("not rendered: its values are not all known here, or the chart cannot be rendered offline (see `argocd/not-rendered`)".into());
                    } else if o.objects.is_empty() {
                        o.note = Some("renders no object here: the chart has no templates of its own, or its dependencies are not under `charts/`".into());
                    }
                }
                (SourceKind::Ref, _) => continue,
                (_, Location::External) => {
                    o.note = Some("not in this repository: not rendered".into());
                }
                (SourceKind::Plugin, _) => {
                    o.note = Some(
                        "a Config Management Plugin: not run (map it with `argocd.plugins`)".into(),
                    );
                }
                _ => o.note = Some("not resolved here: not rendered".into()),
            }
            out.push(o);
        }
    }
    Ok(out)
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

fn describe(src: &ResolvedSource) -> String {
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

/// Multi-document YAML: per source a comment, then its objects.
///
/// # Errors
/// When a name is not a live Application's.
pub fn yaml(model: &Model<'_>, names: &[String]) -> Result<String, String> {
    let mut s = String::new();
    for o in collect(model, names)? {
        s.push_str(&format!(
            "# Application `{}`, source {}: {}\n",
            one_line(&o.app),
            o.source + 1,
            one_line(&o.what)
        ));
        if let Some(note) = &o.note {
            s.push_str(&format!("# {note}\n"));
        }
        for r in &o.objects {
            s.push_str(&format!("---\n# {}\n", one_line(&r.origin)));
            emit(&r.object, 0, &mut s);
        }
    }
    Ok(s)
}

/// JSON: an array of objects, each with its Application, source and origin.
///
/// # Errors
/// When a name is not a live Application's.
pub fn json(model: &Model<'_>, names: &[String]) -> Result<String, String> {
    let mut items = Vec::new();
    let mut sources = Vec::new();
    for o in collect(model, names)? {
        sources.push(json!({
            "application": o.app,
            "source": o.source,
            "what": o.what,
            "note": o.note,
            "objects": o.objects.len(),
        }));
        for r in o.objects {
            items.push(json!({
                "application": r.app,
                "source": r.source,
                "origin": r.origin,
                "object": r.object.to_json(),
            }));
        }
    }
    let doc = json!({ "sources": sources, "objects": items });
    Ok(serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n")
}

/// A comment line: control characters a repository could plant are escaped.
fn one_line(s: &str) -> String {
    super::escape::escape(s).into_owned()
}

/// Block-style YAML of a tree, `indent` spaces deep, keys in their written order. Strings YAML
/// would read as another type or misparse are written as JSON strings (valid YAML
/// double-quoted scalars).
fn emit(v: &Node, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    if let Some(entries) = v.as_map().filter(|m| !m.is_empty()) {
        for e in entries {
            out.push_str(&pad);
            out.push_str(&key_text(&e.key));
            out.push(':');
            nested(&e.value, indent, out);
        }
    } else if let Some(items) = v.as_seq().filter(|a| !a.is_empty()) {
        for item in items {
            out.push_str(&pad);
            out.push('-');
            match item.as_map().filter(|m| !m.is_empty()) {
                Some(entries) => {
                    // The first key on the dash's line, the rest below it.
                    for (n, e) in entries.iter().enumerate() {
                        if n == 0 {
                            out.push(' ');
                        } else {
                            out.push_str(&pad);
                            out.push_str("  ");
                        }
                        out.push_str(&key_text(&e.key));
                        out.push(':');
                        nested(&e.value, indent + 2, out);
                    }
                }
                None => nested(item, indent, out),
            }
        }
    } else {
        out.push_str(&pad);
        out.push_str(&leaf(&v.to_json()));
        out.push('\n');
    }
}

fn key_text(k: &Node) -> String {
    match k.to_json() {
        J::String(s) => scalar_text(&s),
        other => scalar_text(&other.to_string()),
    }
}

/// A value after `key:` or `-`: on the same line when it is a leaf, else below, indented.
fn nested(v: &Node, indent: usize, out: &mut String) {
    let collection =
        v.as_map().is_some_and(|m| !m.is_empty()) || v.as_seq().is_some_and(|a| !a.is_empty());
    if collection {
        out.push('\n');
        emit(v, indent + 2, out);
    } else {
        out.push(' ');
        out.push_str(&leaf(&v.to_json()));
        out.push('\n');
    }
}

fn leaf(v: &J) -> String {
    match v {
        J::String(s) => scalar_text(s),
        J::Object(_) => "{}".into(),
        J::Array(_) => "[]".into(),
        other => other.to_string(),
    }
}

/// A string as a plain scalar when YAML reads it back as that string, else JSON-quoted.
fn scalar_text(s: &str) -> String {
    if is_plain(s) {
        s.to_string()
    } else {
        serde_json::to_string(s).unwrap_or_default()
    }
}

fn is_plain(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let reserved = matches!(
        s.to_ascii_lowercase().as_str(),
        "true" | "false" | "yes" | "no" | "on" | "off" | "y" | "n" | "null" | "~"
    );
    let numeric = s.parse::<f64>().is_ok()
        || s.starts_with("0x")
        || s.starts_with("0o")
        || s.chars()
            .all(|c| c.is_ascii_digit() || c == ':' || c == '_');
    !reserved
        && !numeric
        && (first.is_ascii_alphanumeric() || matches!(first, '/' | '.' | '_' | '$' | '('))
        && !s.ends_with(' ')
        && !s.ends_with(':')
        && !s.contains(": ")
        && !s.contains(" #")
        && s.chars()
            .all(|c| !c.is_control() && !matches!(c, '\u{feff}'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_reads_back_as_the_same_value() {
        let v = json!({
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x", "labels": {"app.kubernetes.io/name": "web"}},
            "data": {
                "a": "true", "b": "1.5", "c": "", "d": "line\nnext", "e": "x: y", "f": "#c",
                "g": " lead", "h": "01", "i": "- item", "j": "{x}", "k": "plain text", "l": "10:30"
            },
            "spec": {"list": [{"name": "a", "ports": [80, 443]}, "s", [], {}], "n": null, "t": true}
        });
        let tree = crate::yaml::parse(crate::source::FileId(0), &v.to_string())
            .docs
            .remove(0)
            .root;
        let mut s = String::new();
        emit(&tree, 0, &mut s);
        let back = crate::yaml::parse(crate::source::FileId(0), &s);
        assert!(back.errors.is_empty(), "{s}");
        assert_eq!(back.docs[0].root.to_json(), v, "{s}");
    }
}
