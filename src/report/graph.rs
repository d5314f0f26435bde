//! `gitops-lint graph`: the reachability model as text, Graphviz DOT or JSON.
//! Roots → Applications (and ApplicationSets) → sources → files, plus app-of-apps edges.

use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use std::fmt::Write as _;

use serde::Serialize;

use crate::model::DocKind;
use crate::model::Repository;
use crate::model::argocd::resolve::{ArgoModel, Location, RepoIdentity, ResolvedSource};
use crate::model::argocd::templated_field;
use crate::model::is_argocd_kind;
use crate::report::escape::escape;

#[derive(Serialize)]
struct Graph<'a> {
    repository: String,
    roots: Vec<usize>,
    objects: Vec<Object<'a>>,
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
struct Object<'a> {
    id: usize,
    kind: &'static str,
    name: String,
    file: String,
    line: usize,
    live: bool,
    /// Applications this object is or generates.
    applications: Vec<AppOut<'a>>,
    /// Ids of the Argo CD objects it manages (app-of-apps).
    manages: Vec<usize>,
    /// ApplicationSets and AppProjects it renders from charts (its rendered Applications are
    /// in `applications`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    renders: Vec<RenderedOut>,
}

#[derive(Serialize)]
struct AppOut<'a> {
    name: String,
    /// For an Application rendered from a chart: "rendered from `templates/x.yaml:N` by ...".
    #[serde(skip_serializing_if = "Option::is_none")]
    rendered_from: Option<String>,
    /// For a rendered Application: where its name is set (`file:line`).
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<String>,
    sources: Vec<SourceOut<'a>>,
}

#[derive(Serialize)]
struct SourceOut<'a> {
    #[serde(rename = "repoURL")]
    repo_url: Option<String>,
    kind: &'static str,
    location: String,
    /// Borrowed: thousands of Applications may read the same folder.
    files: Vec<&'a str>,
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

fn build<'a>(repo: &'a Repository, model: &'a ArgoModel) -> Graph<'a> {
    let repository = match &model.repo_identity {
        RepoIdentity::Configured(urls) => format!("repo_urls: {}", urls.join(", ")),
        RepoIdentity::Origin(u) => format!("git origin: {u}"),
        RepoIdentity::Inferred => {
            "inferred (no repo_urls, no git origin): repoURLs whose paths exist here".to_string()
        }
    };
    let mut objects = Vec::new();
    let mut apps_of: HashMap<usize, Vec<&crate::model::argocd::resolve::App>> = HashMap::new();
    for a in &model.apps {
        apps_of.entry(a.doc).or_default().push(a);
    }
    let mut rendered_by: std::collections::HashMap<
        usize,
        Vec<&crate::model::helm::RenderedObject>,
    > = std::collections::HashMap::new();
    for o in &model.rendered {
        rendered_by.entry(o.manager_doc).or_default().push(o);
    }
    for (i, doc) in repo.docs.iter().enumerate() {
        let rendered = rendered_by.get(&i).map_or(&[][..], Vec::as_slice);
        // A chart no Application installs appears when it renders Argo CD objects.
        if !is_argocd_kind(doc.kind) && rendered.is_empty() {
            continue;
        }
        let file = repo.source(doc.file);
        let applications = apps_of
            .get(&i)
            .map_or(&[][..], Vec::as_slice)
            .iter()
            .map(|a| AppOut {
                name: a.name.clone(),
                rendered_from: a.rendered_from.clone(),
                at: a.rendered_from.as_ref().map(|_| {
                    let f = repo.source(a.name_span.file);
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
                            let mut listed = std::collections::HashSet::new();
                            s.files
                                .iter()
                                .filter(|f| listed.insert(**f))
                                .map(|f| repo.source(*f).path.as_str())
                                .collect()
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
                let f = repo.source(at.file);
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
                        .then(|| crate::model::paths::parent(&file.path))
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
        not_rendered: not_rendered(repo, model),
    }
}

/// Charts that write Argo CD objects but failed to render, and Argo CD objects written as
/// templates outside a chart (as `argocd/not-rendered` reports them).
fn not_rendered(repo: &Repository, model: &ArgoModel) -> Vec<NotRenderedOut> {
    let mut out = Vec::new();
    for n in &model.not_rendered {
        let f = repo.source(n.span.file);
        out.push(NotRenderedOut {
            file: f.path.clone(),
            line: f.line_col(n.span.start as usize).line,
            what: n.chart_dir.clone(),
            why: n.message.clone(),
        });
    }
    for doc in repo
        .docs_of(DocKind::Application)
        .chain(repo.docs_of(DocKind::AppProject))
    {
        if let Some(node) = templated_field(&doc.root) {
            let f = repo.source(doc.file);
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
pub fn json(repo: &Repository, model: &ArgoModel) -> String {
    let mut s = serde_json::to_string_pretty(&build(repo, model)).unwrap_or_default();
    s.push('\n');
    s
}

/// How deep the text tree is indented: an object managed deeper starts a tree of its own
/// further down, so a chain of thousands of app-of-apps does not print a line per level of
/// indentation per object.
const MAX_DEPTH: usize = 16;
/// How many objects shown elsewhere (above, or below when deeper than [`MAX_DEPTH`]) are
/// listed under one object; the rest are counted.
const MAX_LISTED_AGAIN: usize = 20;
/// A source's file list longer than this is printed once; another source reading the same
/// files says so in one line.
const MAX_FILES_AGAIN: usize = 20;

/// An indented tree from the roots; objects not reached from a root are listed after. Each
/// object is printed in full once, so the text grows with the objects and the files, not with
/// every edge between them (thousands of Applications that each manage all the others).
#[must_use]
pub fn text(repo: &Repository, model: &ArgoModel) -> String {
    let g = build(repo, model);
    let mut w = TextTree {
        g: &g,
        index: g
            .objects
            .iter()
            .enumerate()
            .map(|(i, o)| (o.id, i))
            .collect(),
        seen: HashSet::new(),
        deferred: VecDeque::new(),
        deferred_ids: HashSet::new(),
        file_lists: HashMap::new(),
        out: format!("repository: {}\n", escape(&g.repository)),
    };
    if g.roots.is_empty() {
        w.out
            .push_str("no roots: no live Argo CD object in this repository\n");
    }
    for &r in &g.roots {
        w.tree(r, 0, "root ");
    }
    w.continued();
    // Managers first, so that a cycle or a dead subtree is shown from its top.
    let mut rest: Vec<(bool, usize)> = g
        .objects
        .iter()
        .filter(|o| !w.seen.contains(&o.id))
        .map(|o| (o.manages.is_empty(), o.id))
        .collect();
    rest.sort_unstable();
    if !rest.is_empty() {
        w.out
            .push_str("not reached from a root (dead, or in an app-of-apps cycle):\n");
        for (_, id) in rest {
            if !w.seen.contains(&id) {
                w.tree(id, 1, "");
            }
        }
        w.continued();
    }
    let mut out = w.out;
    if !g.not_rendered.is_empty() {
        out.push_str("not rendered (Argo CD objects gitops-lint cannot see):\n");
        for n in &g.not_rendered {
            let _ = writeln!(out, "  {}:{}: {}", escape(&n.file), n.line, escape(&n.why));
        }
    }
    out
}

/// An object of the text tree whose managed objects are being printed.
struct Frame<'g> {
    object: &'g Object<'g>,
    depth: usize,
    /// The next of `object.manages`.
    next: usize,
    /// Managed objects listed in one line because they are shown elsewhere.
    listed: usize,
    /// Those counted instead: shown above, or continued below.
    more_above: usize,
    more_below: usize,
}

impl<'g> Frame<'g> {
    fn new(object: &'g Object<'g>, depth: usize) -> Self {
        Frame {
            object,
            depth,
            next: 0,
            listed: 0,
            more_above: 0,
            more_below: 0,
        }
    }
}

struct TextTree<'g> {
    g: &'g Graph<'g>,
    /// Object id → its index in `g.objects`.
    index: HashMap<usize, usize>,
    seen: HashSet<usize>,
    /// Objects managed deeper than [`MAX_DEPTH`], printed after the current trees.
    deferred: VecDeque<usize>,
    deferred_ids: HashSet<usize>,
    /// Long file lists already printed, with the Application whose source listed them.
    file_lists: HashMap<&'g [&'g str], &'g str>,
    out: String,
}

impl<'g> TextTree<'g> {
    fn object(&self, id: usize) -> Option<&'g Object<'g>> {
        let g = self.g;
        self.index.get(&id).map(|&i| &g.objects[i])
    }

    fn line(&mut self, o: &Object<'_>, depth: usize, label: &str, mark: &str) {
        let _ = writeln!(
            self.out,
            "{}{label}{} {} ({}:{}){}{mark}",
            "  ".repeat(depth),
            o.kind,
            escape(&o.name),
            escape(&o.file),
            o.line,
            if o.live { "" } else { " [not live]" },
        );
    }

    /// Prints `id` and what it manages, depth first, with an explicit stack (a chain of
    /// app-of-apps is as deep as the repository is large).
    fn tree(&mut self, id: usize, depth: usize, label: &str) {
        let Some(o) = self.object(id) else {
            return;
        };
        if !self.seen.insert(id) {
            self.line(o, depth, label, " [see above]");
            return;
        }
        self.line(o, depth, label, "");
        self.details(o, depth);
        let mut stack = vec![Frame::new(o, depth)];
        while let Some(top) = stack.last_mut() {
            let (o, depth) = (top.object, top.depth);
            let Some(&m) = o.manages.get(top.next) else {
                let (above, below) = (top.more_above, top.more_below);
                stack.pop();
                let pad = "  ".repeat(depth + 1);
                if above > 0 {
                    let _ = writeln!(self.out, "{pad}manages {above} more objects shown above");
                }
                if below > 0 {
                    let _ = writeln!(
                        self.out,
                        "{pad}manages {below} more objects continued below"
                    );
                }
                continue;
            };
            top.next += 1;
            let Some(child) = self.object(m) else {
                continue;
            };
            let seen = self.seen.contains(&m);
            if seen || depth + 1 > MAX_DEPTH {
                if !seen && self.deferred_ids.insert(m) {
                    self.deferred.push_back(m);
                }
                if top.listed < MAX_LISTED_AGAIN {
                    top.listed += 1;
                    let mark = if seen {
                        " [see above]"
                    } else {
                        " [continued below]"
                    };
                    self.line(child, depth + 1, "manages ", mark);
                } else if seen {
                    top.more_above += 1;
                } else {
                    top.more_below += 1;
                }
            } else {
                self.seen.insert(m);
                self.line(child, depth + 1, "manages ", "");
                self.details(child, depth + 1);
                stack.push(Frame::new(child, depth + 1));
            }
        }
    }

    /// The trees of the objects managed deeper than [`MAX_DEPTH`], each from its top.
    fn continued(&mut self) {
        let mut heading = true;
        while let Some(id) = self.deferred.pop_front() {
            if self.seen.contains(&id) {
                continue;
            }
            if heading {
                let _ = writeln!(
                    self.out,
                    "continued (managed more than {MAX_DEPTH} levels down):"
                );
                heading = false;
            }
            self.tree(id, 1, "");
        }
    }

    /// An object's Applications with their sources and files, and what it renders.
    fn details(&mut self, o: &'g Object<'g>, depth: usize) {
        let pad = "  ".repeat(depth);
        for app in &o.applications {
            let inner = if let Some(from) = &app.rendered_from {
                let at = app.at.as_deref().unwrap_or("");
                let _ = writeln!(
                    self.out,
                    "{pad}  renders Application {} ({}, {})",
                    escape(&app.name),
                    escape(at),
                    escape(from)
                );
                format!("{pad}    ")
            } else if o.kind == "ApplicationSet" {
                let _ = writeln!(
                    self.out,
                    "{pad}  generates Application {}",
                    escape(&app.name)
                );
                format!("{pad}    ")
            } else {
                format!("{pad}  ")
            };
            for s in &app.sources {
                let _ = writeln!(
                    self.out,
                    "{inner}source [{}] {} ({})",
                    s.kind,
                    escape(s.repo_url.as_deref().unwrap_or("<no repoURL>")),
                    escape(&s.location)
                );
                let files: &'g [&'g str] = &s.files;
                if files.len() > MAX_FILES_AGAIN {
                    if let Some(first) = self.file_lists.get(files) {
                        let _ = writeln!(
                            self.out,
                            "{inner}  the {} files listed above for Application {}",
                            files.len(),
                            escape(first)
                        );
                        continue;
                    }
                    self.file_lists.insert(files, &app.name);
                }
                for f in files {
                    let _ = writeln!(self.out, "{inner}  file {}", escape(f));
                }
            }
        }
        for r in &o.renders {
            let _ = writeln!(
                self.out,
                "{pad}  renders {} {} ({}:{}, {})",
                r.kind,
                escape(&r.name),
                escape(&r.file),
                r.line,
                escape(&r.from)
            );
        }
    }
}

/// Graphviz DOT. Names and paths are escaped as in the text, so no control character reaches
/// the file.
#[must_use]
pub fn dot(repo: &Repository, model: &ArgoModel) -> String {
    let g = build(repo, model);
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
            q(&format!(
                "{} {}\n{}:{}",
                o.kind,
                escape(&o.name),
                escape(&o.file),
                o.line
            ))
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
                    (Some(_), Some(at)) => (
                        "renders",
                        format!("Application {}\n{}", escape(&app.name), escape(at)),
                    ),
                    (Some(_), None) => ("renders", format!("Application {}", escape(&app.name))),
                    (None, _) => ("generates", format!("Application {}", escape(&app.name))),
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
                    q(&format!("{} source\n{}", s.kind, escape(&s.location)))
                );
                let _ = writeln!(out, "  {app_id} -> {sid};");
                for f in &s.files {
                    files.insert(*f);
                    let _ = writeln!(out, "  {sid} -> {};", q(&escape(f)));
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
                q(&format!(
                    "{} {}\n{}:{}",
                    r.kind,
                    escape(&r.name),
                    escape(&r.file),
                    r.line
                ))
            );
            let _ = writeln!(out, "  {id} -> {rid} [label=\"renders\"];");
        }
    }
    for (i, n) in g.not_rendered.iter().enumerate() {
        let _ = writeln!(
            out,
            "  not_rendered{i} [label={}, shape=octagon, color=red];",
            q(&format!(
                "not rendered\n{}:{}\n{}",
                escape(&n.file),
                n.line,
                escape(&n.why)
            ))
        );
    }
    if !g.roots.is_empty() {
        out.push_str("  root [shape=circle, label=\"roots\"];\n");
    }
    for f in files {
        let _ = writeln!(out, "  {} [shape=plaintext];", q(&escape(f)));
    }
    out.push_str("}\n");
    out
}
