//! `gitops-lint graph`: the reachability model as text, Graphviz DOT, JSON or an HTML page
//! (`page`, with the findings of `check` on its nodes).
//! Roots → Applications (and ApplicationSets) → sources → files, plus app-of-apps edges.
//!
//! Sources that read the same files share one list, and objects that manage the same objects
//! share one set (as the model does), so the graph of thousands of Applications of one folder
//! holds each list once. The text and JSON give a list that many share once and refer to it.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt::Write as _;
use std::rc::Rc;

use serde::Serialize;
use serde::ser::{SerializeStruct as _, Serializer};

use crate::model::DocKind;
use crate::model::Repository;
use crate::model::argocd::resolve::{ArgoModel, Location, RepoIdentity, ResolvedSource};
use crate::model::argocd::templated_field;
use crate::model::is_argocd_kind;
use crate::report::escape::escape;

mod page;
mod walk;

use walk::{TreeOut, Walk};

/// In JSON, a file list of more than this many files that more than this many sources read,
/// and a set of more than this many objects that more than this many objects manage, are
/// given once (`file_sets`, `manage_sets`) and referred to by index.
const FOLD_AT: usize = 20;

#[derive(Serialize)]
struct Graph<'a> {
    repository: String,
    roots: Vec<usize>,
    objects: Vec<Object<'a>>,
    /// Files and charts holding Argo CD objects that could not be rendered, so are not here.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    not_rendered: Vec<NotRenderedOut>,
    /// File lists many sources read (see [`FOLD_AT`]): a source whose `files_set` is `k`
    /// reads `file_sets[k]`, and its own `files` is empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    file_sets: Vec<Rc<[&'a str]>>,
    /// Sets many objects manage: an object whose `manages_set` is `k` manages the objects of
    /// `manage_sets[k]` other than itself, and its own `manages` is empty.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    manage_sets: Vec<&'a [usize]>,
}

#[derive(Serialize)]
struct NotRenderedOut {
    /// Where it is reported (the installing Application's source, or the file itself).
    file: String,
    line: usize,
    /// The chart folder, the Application whose source runs a plugin, or the file holding the
    /// templated object.
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
    manages: ManagesOut<'a>,
    #[serde(skip_serializing_if = "Option::is_none")]
    manages_set: Option<usize>,
    /// ApplicationSets and AppProjects it renders from charts (its rendered Applications are
    /// in `applications`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    renders: Vec<RenderedOut>,
}

/// The objects an object manages: the model's set (shared), less the object itself.
struct ManagesOut<'a> {
    set: &'a [usize],
    /// The object's own id.
    own: usize,
    /// Which of the graph's distinct sets it is.
    index: usize,
    /// Given once in JSON's `manage_sets`.
    folded: bool,
}

impl<'a> ManagesOut<'a> {
    fn iter(&self) -> impl Iterator<Item = usize> + 'a {
        let own = self.own;
        self.set.iter().copied().filter(move |&d| d != own)
    }

    fn is_empty(&self) -> bool {
        self.set.iter().all(|&d| d == self.own)
    }
}

impl Serialize for ManagesOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.folded {
            serializer.collect_seq(std::iter::empty::<usize>())
        } else {
            serializer.collect_seq(self.iter())
        }
    }
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

struct SourceOut<'a> {
    repo_url: Option<String>,
    kind: &'static str,
    location: String,
    /// Shared: thousands of Applications may read the same folder.
    files: Rc<[&'a str]>,
    /// Which of the graph's distinct file lists it is.
    list: usize,
    /// Its index in JSON's `file_sets`, when it is given once there.
    files_set: Option<usize>,
}

impl Serialize for SourceOut<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("SourceOut", 5)?;
        s.serialize_field("repoURL", &self.repo_url)?;
        s.serialize_field("kind", self.kind)?;
        s.serialize_field("location", &self.location)?;
        match self.files_set {
            Some(k) => {
                s.serialize_field("files", &[] as &[&str])?;
                s.serialize_field("files_set", &k)?;
            }
            None => s.serialize_field("files", &*self.files)?,
        }
        s.end()
    }
}

/// The distinct file lists and managed sets of a graph, each made once however many sources or
/// objects share it: looked up by the model's shared allocation, then by content.
#[derive(Default)]
struct Distinct<'a> {
    list_of: HashMap<*const crate::source::FileId, usize>,
    list_by_content: HashMap<Rc<[&'a str]>, usize>,
    lists: Vec<Rc<[&'a str]>>,
    /// How many sources read each list.
    list_readers: Vec<usize>,
    set_of: HashMap<*const usize, usize>,
    set_by_content: HashMap<&'a [usize], usize>,
    sets: Vec<&'a [usize]>,
    /// How many objects manage each set.
    set_holders: Vec<usize>,
}

impl<'a> Distinct<'a> {
    /// The source's files as shown: each once (a chart's `values.yaml` may be listed twice).
    fn list(&mut self, repo: &'a Repository, s: &ResolvedSource) -> usize {
        let k = match self.list_of.get(&s.files.as_ptr()) {
            Some(&k) => k,
            None => {
                let mut listed = HashSet::new();
                let files: Rc<[&'a str]> = s
                    .files
                    .iter()
                    .filter(|f| listed.insert(**f))
                    .map(|f| repo.source(*f).path.as_str())
                    .collect();
                let next = self.lists.len();
                let k = *self.list_by_content.entry(files.clone()).or_insert(next);
                if k == next {
                    self.lists.push(files);
                    self.list_readers.push(0);
                }
                self.list_of.insert(s.files.as_ptr(), k);
                k
            }
        };
        self.list_readers[k] += 1;
        k
    }

    fn set(&mut self, set: &'a [usize]) -> usize {
        let k = match self.set_of.get(&set.as_ptr()) {
            Some(&k) => k,
            None => {
                let next = self.sets.len();
                let k = *self.set_by_content.entry(set).or_insert(next);
                if k == next {
                    self.sets.push(set);
                    self.set_holders.push(0);
                }
                self.set_of.insert(set.as_ptr(), k);
                k
            }
        };
        self.set_holders[k] += 1;
        k
    }
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
    let mut distinct = Distinct::default();
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
                    .map(|s| {
                        let list = distinct.list(repo, s);
                        SourceOut {
                            repo_url: s.repo_url.clone(),
                            kind: s.kind.as_str(),
                            location: location(s),
                            files: distinct.lists[list].clone(),
                            list,
                            files_set: None,
                        }
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
        let set = model.manages.get(&i).map_or(&[][..], |s| &s[..]);
        let manages = ManagesOut {
            set,
            own: i,
            index: distinct.set(set),
            folded: false,
        };
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
            manages_set: None,
            renders,
        });
    }
    let (file_sets, manage_sets) = fold(&mut objects, &distinct);
    Graph {
        repository,
        roots: model.roots.clone(),
        objects,
        not_rendered: not_rendered(repo, model),
        file_sets,
        manage_sets,
    }
}

/// Marks the lists and sets that JSON gives once (see [`FOLD_AT`]) and returns them, numbered
/// in the order they first appear.
fn fold<'a>(
    objects: &mut [Object<'a>],
    distinct: &Distinct<'a>,
) -> (Vec<Rc<[&'a str]>>, Vec<&'a [usize]>) {
    let mut file_sets = Vec::new();
    let mut list_number: HashMap<usize, usize> = HashMap::new();
    let mut manage_sets = Vec::new();
    let mut set_number: HashMap<usize, usize> = HashMap::new();
    for o in objects {
        for s in o.applications.iter_mut().flat_map(|a| a.sources.iter_mut()) {
            if s.files.len() > FOLD_AT && distinct.list_readers[s.list] > FOLD_AT {
                let next = file_sets.len();
                let k = *list_number.entry(s.list).or_insert(next);
                if k == next {
                    file_sets.push(s.files.clone());
                }
                s.files_set = Some(k);
            }
        }
        let m = &mut o.manages;
        if m.set.len() > FOLD_AT && distinct.set_holders[m.index] > FOLD_AT {
            let next = manage_sets.len();
            let k = *set_number.entry(m.index).or_insert(next);
            if k == next {
                manage_sets.push(m.set);
            }
            m.folded = true;
            o.manages_set = Some(k);
        }
    }
    (file_sets, manage_sets)
}

/// Charts that write Argo CD objects but failed to render, sources that run a Config
/// Management Plugin, and Argo CD objects written as templates outside a chart (as
/// `argocd/not-rendered` reports them).
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
    for p in model
        .plugin_sources
        .iter()
        .filter(|p| model.apps[p.app].live)
    {
        let f = repo.source(p.span.file);
        out.push(NotRenderedOut {
            file: f.path.clone(),
            line: f.line_col(p.span.start as usize).line,
            what: model.apps[p.app].name.clone(),
            why: match &p.name {
                Some(name) => format!("source runs the Config Management Plugin `{name}`"),
                None => "source runs a Config Management Plugin Argo CD discovers".to_string(),
            },
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

/// One self-contained HTML page: the tree of [`text`] with the findings of `report` (the
/// check of the repository `model` is built from) on its nodes.
#[must_use]
pub fn html(report: &crate::engine::Report, model: &ArgoModel) -> String {
    page::page(report, model)
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
    let mut walk = Walk::new(&g);
    let mut w = TextTree {
        file_lists: HashMap::new(),
        out: format!("repository: {}\n", escape(&g.repository)),
    };
    if g.roots.is_empty() {
        w.out
            .push_str("no roots: no live Argo CD object in this repository\n");
    }
    for &r in &g.roots {
        walk.tree(&mut w, r, 0, "root ");
    }
    walk.continued(&mut w, 1);
    let rest = walk.unreached();
    if !rest.is_empty() {
        w.out
            .push_str("not reached from a root (dead, or in an app-of-apps cycle):\n");
        for id in rest {
            if !walk.seen.contains(&id) {
                walk.tree(&mut w, id, 1, "");
            }
        }
        walk.continued(&mut w, 1);
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

struct TextTree<'g> {
    /// Long file lists already printed (by [`SourceOut::list`]), with the Application whose
    /// source listed them.
    file_lists: HashMap<usize, &'g str>,
    out: String,
}

impl<'g> TreeOut<'g> for TextTree<'g> {
    fn node(&mut self, o: &'g Object<'g>, depth: usize, label: &str) {
        self.line(o, depth, label, "");
        self.details(o, depth);
    }

    fn end(&mut self, depth: usize, above: usize, below: usize) {
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
    }

    fn reference(&mut self, o: &Object<'_>, depth: usize, label: &str, seen: bool) {
        let mark = if seen {
            " [see above]"
        } else {
            " [continued below]"
        };
        self.line(o, depth, label, mark);
    }

    fn same_set(&mut self, count: usize, first: &Object<'_>, depth: usize) {
        let _ = writeln!(
            self.out,
            "{}manages the same {count} objects as {} {} ({}:{})",
            "  ".repeat(depth + 1),
            first.kind,
            escape(&first.name),
            escape(&first.file),
            first.line
        );
    }

    fn continued_heading(&mut self) {
        let _ = writeln!(
            self.out,
            "continued (managed more than {MAX_DEPTH} levels down):"
        );
    }
}

impl<'g> TextTree<'g> {
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
                    if let Some(first) = self.file_lists.get(&s.list) {
                        let _ = writeln!(
                            self.out,
                            "{inner}  the {} files listed above for Application {}",
                            files.len(),
                            escape(first)
                        );
                        continue;
                    }
                    self.file_lists.insert(s.list, &app.name);
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
    // The file nodes, gathered once per distinct list.
    let mut lists = HashSet::new();
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
                for f in s.files.iter() {
                    let _ = writeln!(out, "  {sid} -> {};", q(&escape(f)));
                }
                if lists.insert(s.list) {
                    files.extend(s.files.iter().copied());
                }
            }
        }
        for m in o.manages.iter() {
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
