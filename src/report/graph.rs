//! `gitops-lint graph`: the reachability model as text, Graphviz DOT or JSON.
//! Roots → Applications (and ApplicationSets) → sources → files, plus app-of-apps edges.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;

use serde::Serialize;

use crate::model::DocKind;
use crate::model::Project;
use crate::model::argocd::{is_argocd_kind, templated_field};
use crate::model::resolve::{ArgoModel, Location, RepoIdentity, ResolvedSource};

#[derive(Serialize)]
struct Graph {
    repository: String,
    roots: Vec<usize>,
    objects: Vec<Object>,
    /// Files and charts holding Argo CD objects that could not be rendered, so are not here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_rendered: Vec<NotRenderedOut>,
}

#[derive(Serialize)]
struct NotRenderedOut {
    /// Where it is reported (the installing Application's source, or the file itself).
    file: String,
    line: usize,
    /// The chart folder, or the file holding the templated object.
    what: String,
    why: String,
}

/// An AppProject, ApplicationSet or Application an object renders from a chart.
#[derive(Serialize)]
struct RenderedOut {
    kind: &'static str,
    name: String,
    /// "rendered from `templates/x.yaml:N` by ..." or "rendered by chart `argocd-apps` ...".
    from: String,
    /// Where its name is set (the values file of an `argocd-apps` item).
    file: String,
    line: usize,
}

#[derive(Serialize)]
struct Object {
    id: usize,
    kind: &'static str,
    name: String,
    file: String,
    line: usize,
    live: bool,
    /// Applications this object is or generates.
    applications: Vec<AppOut>,
    /// Ids of the Argo CD objects it manages (app-of-apps).
    manages: Vec<usize>,
    /// ApplicationSets and AppProjects it renders from charts (its rendered Applications are
    /// in `applications`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    renders: Vec<RenderedOut>,
}

#[derive(Serialize)]
struct AppOut {
    name: String,
    /// For an Application rendered from a chart: "rendered from `templates/x.yaml:N` by ...".
    #[serde(skip_serializing_if = "Option::is_none")]
    rendered_from: Option<String>,
    /// For a rendered Application: where its name is set (`file:line`).
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    sources: Vec<SourceOut>,
}

#[derive(Serialize)]
struct SourceOut {
    #[serde(rename = "repoURL")]
    repo_url: Option<String>,
    kind: &'static str,
    location: String,
    files: Vec<String>,
}

fn kind_name(k: DocKind) -> &'static str {
    match k {
        DocKind::Application => "Application",
        DocKind::ApplicationSet => "ApplicationSet",
        DocKind::AppProject => "AppProject",
        DocKind::HelmChart => "Chart",
        DocKind::Kustomization => "Kustomization",
        _ => "other",
    }
}

fn location(s: &ResolvedSource) -> String {
    match &s.location {
        Location::InRepo(d) if d.is_empty() => "this repository: /".to_string(),
        Location::InRepo(d) => format!("this repository: {d}"),
        Location::RefInRepo => "this repository (ref)".to_string(),
        Location::External => "external".to_string(),
        Location::Unknown => "unknown (depends on generator parameters)".to_string(),
    }
}

fn build(project: &Project, model: &ArgoModel) -> Graph {
    let repository = match &model.repo_identity {
        RepoIdentity::Configured(urls) => format!("repo_urls: {}", urls.join(", ")),
        RepoIdentity::Origin(u) => format!("git origin: {u}"),
        RepoIdentity::Inferred => {
            "inferred (no repo_urls, no git origin): repoURLs whose paths exist here".to_string()
        }
    };
    let mut objects = Vec::new();
    let mut apps_of: HashMap<usize, Vec<&crate::model::resolve::App>> = HashMap::new();
    for a in &model.apps {
        apps_of.entry(a.doc).or_default().push(a);
    }
    // Looked up once per document: a scan of every rendered object per document would be
    // quadratic in large repositories.
    let mut rendered_by: HashMap<usize, Vec<&crate::model::helm::RenderedObject>> = HashMap::new();
    for o in &model.rendered {
        rendered_by.entry(o.manager_doc).or_default().push(o);
    }
    for (i, doc) in project.docs.iter().enumerate() {
        let rendered = rendered_by.get(&i).map_or(&[][..], Vec::as_slice);
        // A chart no Application installs appears when it renders Argo CD objects.
        if !is_argocd_kind(doc.kind) && rendered.is_empty() {
            continue;
        }
        let file = project.source(doc.file);
        let applications = apps_of
            .get(&i)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|a| AppOut {
                name: a.name.clone(),
                rendered_from: a.rendered_from.clone(),
                at: a.rendered_from.as_ref().map(|_| {
                    let f = project.source(a.name_span.file);
                    format!("{}:{}", f.path, f.line_col(a.name_span.start as usize).line)
                }),
                sources: a
                    .sources
                    .iter()
                    .map(|s| SourceOut {
                        repo_url: s.repo_url.clone(),
                        kind: s.kind.as_str(),
                        location: location(s),
                        files: {
                            // A value file listed twice (chart `values.yaml`) is shown once.
                            let mut files: Vec<String> = Vec::new();
                            for f in &s.files {
                                let p = &project.source(*f).path;
                                if !files.contains(p) {
                                    files.push(p.clone());
                                }
                            }
                            files
                        },
                    })
                    .collect(),
            })
            .collect();
        let renders = rendered
            .iter()
            .filter(|o| o.kind != DocKind::Application)
            .map(|o| {
                let at = o
                    .root
                    .path(&["metadata", "name"])
                    .map_or(o.root.span, |n| n.span);
                let f = project.source(at.file);
                RenderedOut {
                    kind: kind_name(o.kind),
                    name: o.name.clone(),
                    from: o.label(),
                    file: f.path.clone(),
                    line: f.line_col(at.start as usize).line,
                }
            })
            .collect();
        let live = model.live.contains(&i);
        let manages: Vec<usize> = model
            .manages
            .get(&i)
            .map(|s| s.iter().copied().filter(|&d| d != i).collect())
            .unwrap_or_default();
        objects.push(Object {
            id: i,
            kind: kind_name(doc.kind),
            name: doc
                .name()
                .or_else(|| {
                    (doc.kind == DocKind::HelmChart)
                        .then(|| doc.root.get_str("name"))
                        .flatten()
                })
                .or_else(|| {
                    // A kustomization is named by its folder.
                    (doc.kind == DocKind::Kustomization)
                        .then(|| crate::model::repo::parent(&file.path))
                        .map(|d| if d.is_empty() { "." } else { d })
                })
                .unwrap_or("<unnamed>")
                .to_string(),
            file: file.path.clone(),
            line: file.line_col(doc.span.start as usize).line,
            live,
            applications,
            manages,
            renders,
        });
    }
    Graph {
        repository,
        roots: model.roots.clone(),
        objects,
        not_rendered: not_rendered(project, model),
    }
}

/// Charts that write Argo CD objects but failed to render, and Argo CD objects written as
/// templates outside a chart (as `argocd/not-rendered` reports them).
fn not_rendered(project: &Project, model: &ArgoModel) -> Vec<NotRenderedOut> {
    let mut out = Vec::new();
    for n in &model.not_rendered {
        let f = project.source(n.span.file);
        out.push(NotRenderedOut {
            file: f.path.clone(),
            line: f.line_col(n.span.start as usize).line,
            what: n.chart_dir.clone(),
            why: n.message.clone(),
        });
    }
    for doc in project
        .docs_of(DocKind::Application)
        .chain(project.docs_of(DocKind::AppProject))
    {
        if let Some(node) = templated_field(&doc.root) {
            let f = project.source(doc.file);
            out.push(NotRenderedOut {
                file: f.path.clone(),
                line: f.line_col(node.span.start as usize).line,
                what: f.path.clone(),
                why: format!(
                    "this {} is a template outside a Helm chart's `templates/`",
                    kind_name(doc.kind)
                ),
            });
        }
    }
    out.sort_by(|a, b| (&a.file, a.line).cmp(&(&b.file, b.line)));
    out.dedup_by(|a, b| a.file == b.file && a.line == b.line && a.why == b.why);
    out
}

/// JSON.
#[must_use]
pub fn json(project: &Project, model: &ArgoModel) -> String {
    let mut s = serde_json::to_string_pretty(&build(project, model)).unwrap_or_default();
    s.push('\n');
    s
}

/// How deep the text tree nests app-of-apps: an object managed deeper is listed by name there
/// and shown whole in a section after the tree, so every line's indentation stays bounded and
/// the output grows with the objects, sources, files and edges, whatever the chains' length.
const MAX_TEXT_DEPTH: usize = 8;

/// An indented tree from the roots; objects not reached from a root are listed after.
#[must_use]
pub fn text(project: &Project, model: &ArgoModel) -> String {
    let g = build(project, model);
    let mut out = format!("repository: {}\n", g.repository);
    let mut printer = TextTree {
        by_id: g.objects.iter().map(|o| (o.id, o)).collect(),
        seen: HashSet::new(),
        queued: HashSet::new(),
        deeper: Vec::new(),
        out: &mut out,
    };
    if g.roots.is_empty() {
        printer
            .out
            .push_str("no roots: no live Argo CD object in this repository\n");
    }
    for &r in &g.roots {
        printer.walk(r, 0, "root ");
    }
    printer.continue_deeper();
    // Managers first, so that a cycle or a dead subtree is shown from its top.
    let mut rest: Vec<(bool, usize)> = g
        .objects
        .iter()
        .filter(|o| !printer.seen.contains(&o.id))
        .map(|o| (o.manages.is_empty(), o.id))
        .collect();
    rest.sort_unstable();
    if !rest.is_empty() {
        printer
            .out
            .push_str("not reached from a root (dead, or in an app-of-apps cycle):\n");
        for (_, id) in rest {
            if !printer.seen.contains(&id) {
                printer.walk(id, 1, "");
            }
        }
        printer.continue_deeper();
    }
    if !g.not_rendered.is_empty() {
        out.push_str("not rendered (Argo CD objects gitops-lint cannot see):\n");
        for n in &g.not_rendered {
            let _ = writeln!(out, "  {}:{}: {}", n.file, n.line, n.why);
        }
    }
    out
}

struct TextTree<'a> {
    by_id: HashMap<usize, &'a Object>,
    /// Objects already shown or queued in `deeper`: named again, not shown again.
    seen: HashSet<usize>,
    /// Objects managed below [`MAX_TEXT_DEPTH`] and not shown yet.
    queued: HashSet<usize>,
    /// The queued objects in the order they are shown after the tree.
    deeper: Vec<usize>,
    out: &'a mut String,
}

impl TextTree<'_> {
    fn walk(&mut self, id: usize, depth: usize, label: &str) {
        let Some(&o) = self.by_id.get(&id) else {
            return;
        };
        let pad = "  ".repeat(depth);
        let queued = self.queued.contains(&id);
        let again = !queued && !self.seen.insert(id);
        let too_deep = !queued && !again && depth > MAX_TEXT_DEPTH;
        if too_deep {
            self.queued.insert(id);
            self.deeper.push(id);
        }
        let _ = writeln!(
            self.out,
            "{pad}{label}{} {} ({}:{}){}{}",
            o.kind,
            o.name,
            o.file,
            o.line,
            if o.live { "" } else { " [not live]" },
            if again {
                " [see above]"
            } else if queued || too_deep {
                " [shown below]"
            } else {
                ""
            }
        );
        if again || queued || too_deep {
            return;
        }
        self.body(o, &pad);
        for &m in &o.manages {
            self.walk(m, depth + 1, "manages ");
        }
    }

    /// The objects the tree reached below its depth limit, each shown whole from the top.
    fn continue_deeper(&mut self) {
        if self.deeper.is_empty() {
            return;
        }
        self.out.push_str(&format!(
            "managed more than {MAX_TEXT_DEPTH} levels below a root or manager above:\n"
        ));
        // Showing one may queue more (a chain longer than twice the limit).
        let mut i = 0;
        while i < self.deeper.len() {
            let id = self.deeper[i];
            i += 1;
            self.queued.remove(&id);
            self.seen.remove(&id);
            self.walk(id, 1, "");
        }
        self.deeper.clear();
    }

    fn body(&mut self, o: &Object, pad: &str) {
        let out = &mut *self.out;
        for app in &o.applications {
            let inner = if let Some(from) = &app.rendered_from {
                let at = app.at.as_deref().unwrap_or("");
                let _ = writeln!(
                    out,
                    "{pad}  renders Application {} ({at}, {from})",
                    app.name
                );
                format!("{pad}    ")
            } else if o.kind == "ApplicationSet" {
                let _ = writeln!(out, "{pad}  generates Application {}", app.name);
                format!("{pad}    ")
            } else {
                format!("{pad}  ")
            };
            for s in &app.sources {
                let _ = writeln!(
                    out,
                    "{inner}source [{}] {} ({})",
                    s.kind,
                    s.repo_url.as_deref().unwrap_or("<no repoURL>"),
                    s.location
                );
                for f in &s.files {
                    let _ = writeln!(out, "{inner}  file {f}");
                }
            }
        }
        for r in &o.renders {
            let _ = writeln!(
                out,
                "{pad}  renders {} {} ({}:{}, {})",
                r.kind, r.name, r.file, r.line, r.from
            );
        }
    }
}

/// Graphviz DOT.
#[must_use]
pub fn dot(project: &Project, model: &ArgoModel) -> String {
    let g = build(project, model);
    let q = |s: &str| {
        format!(
            "\"{}\"",
            s.replace('\\', "\\\\")
                .replace('"', "\\\"")
                .replace('\n', "\\n")
        )
    };
    let mut out = String::from(
        "digraph argocd {\n  rankdir=LR;\n  node [shape=box, fontname=\"monospace\"];\n",
    );
    let mut files = BTreeSet::new();
    let roots: HashSet<usize> = g.roots.iter().copied().collect();
    for o in &g.objects {
        let id = format!("obj{}", o.id);
        let style = if o.live { "" } else { ", style=dashed" };
        let _ = writeln!(
            out,
            "  {id} [label={}{style}];",
            q(&format!("{} {}\n{}:{}", o.kind, o.name, o.file, o.line))
        );
        if roots.contains(&o.id) {
            let _ = writeln!(out, "  root -> {id};");
        }
        for (ai, app) in o.applications.iter().enumerate() {
            // Every Application gets a node of its own, except the one this object is: the
            // ones an ApplicationSet generates and the ones a chart renders, so that their
            // sources hang from them (and their node ids stay unique).
            let app_id = if o.kind == "ApplicationSet" || app.rendered_from.is_some() {
                let a = format!("obj{}_app{ai}", o.id);
                let (verb, label) = match (&app.rendered_from, &app.at) {
                    (Some(_), Some(at)) => ("renders", format!("Application {}\n{at}", app.name)),
                    (Some(_), None) => ("renders", format!("Application {}", app.name)),
                    (None, _) => ("generates", format!("Application {}", app.name)),
                };
                let _ = writeln!(out, "  {a} [label={}, shape=ellipse];", q(&label));
                let _ = writeln!(out, "  {id} -> {a} [label=\"{verb}\"];");
                a
            } else {
                id.clone()
            };
            for (si, s) in app.sources.iter().enumerate() {
                let sid = format!("{app_id}_src{si}");
                let _ = writeln!(
                    out,
                    "  {sid} [label={}, shape=note];",
                    q(&format!("{} source\n{}", s.kind, s.location))
                );
                let _ = writeln!(out, "  {app_id} -> {sid};");
                for f in &s.files {
                    files.insert(f.clone());
                    let _ = writeln!(out, "  {sid} -> {};", q(f));
                }
            }
        }
        for m in &o.manages {
            let _ = writeln!(out, "  {id} -> obj{m} [label=\"manages\", color=blue];");
        }
        for (ri, r) in o.renders.iter().enumerate() {
            let rid = format!("{id}_r{ri}");
            let _ = writeln!(
                out,
                "  {rid} [label={}, shape=box, style=rounded];",
                q(&format!("{} {}\n{}:{}", r.kind, r.name, r.file, r.line))
            );
            let _ = writeln!(out, "  {id} -> {rid} [label=\"renders\"];");
        }
    }
    for (i, n) in g.not_rendered.iter().enumerate() {
        let _ = writeln!(
            out,
            "  not_rendered{i} [label={}, shape=octagon, color=red];",
            q(&format!("not rendered\n{}:{}\n{}", n.file, n.line, n.why))
        );
    }
    if !g.roots.is_empty() {
        out.push_str("  root [shape=circle, label=\"roots\"];\n");
    }
    for f in files {
        let _ = writeln!(out, "  {} [shape=plaintext];", q(&f));
    }
    out.push_str("}\n");
    out
}
