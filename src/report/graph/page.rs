//! `gitops-lint graph --format html`: the tree of the text output (roots → Applications and
//! ApplicationSets → the Applications they generate or render → sources → files, and what each
//! manages) as one self-contained page, with the findings of `check` on its nodes: a finding in
//! an Argo CD object's document is shown on that object, and a file a source reads is marked
//! with its findings, listed once per file at the end (with every other finding).
//!
//! Each object is shown in full once, as in the text: where it appears again, a link points to
//! it, so the page grows with the objects and files, not with the edges between them.

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::fmt::Write as _;

use crate::diagnostic::Diagnostic;
use crate::engine::Report;
use crate::model::argocd::resolve::ArgoModel;
use crate::report::escape::escape;
use crate::report::html::{Page, finding, html};

use super::{Frame, Graph, MAX_DEPTH, MAX_FILES_AGAIN, MAX_LISTED_AGAIN, Object, build};

/// After the shared style of the pages.
const STYLE: &str = r#"
.st.error{background:#cf222e}.st.warning{background:#9a6700}.st.info{background:#0969da}
ul.tree,ul.tree ul{list-style:none;padding-left:1.2rem;margin:.1rem 0}
ul.tree{padding-left:0}
ul.tree summary{cursor:pointer}
.k{font-size:11px;color:#57606a;text-transform:uppercase}
.dead{color:#57606a;font-style:italic}
li.ref,li.src,li.file,li.app{font-size:13px}
li.file code{color:#0550ae}
ul.m:empty{display:none}
"#;

/// The list keeps the objects whose name holds the filter text, and with the box ticked only
/// those with findings.
const SCRIPT: &str = r#"
const q=document.getElementById('q'),f=document.getElementById('f');
function u(){const t=q.value.toLowerCase();
for(const a of document.querySelectorAll('nav a')){
const hide=(t&&!a.dataset.name.includes(t))||(f.checked&&a.dataset.findings==='0');
a.classList.toggle('hidden',hide);}}
q.addEventListener('input',u);f.addEventListener('change',u);u();
"#;

/// Repository text as the page shows it: control and bidirectional characters escaped, then
/// HTML.
fn t(s: &str) -> String {
    html(&escape(s))
}

/// The findings of the report, placed on the graph.
struct Placed<'r> {
    /// By object id: the findings in its document.
    on_object: HashMap<usize, Vec<&'r Diagnostic>>,
    /// By file path, every finding, in order; the index of a file is its anchor (`file-K`).
    by_file: BTreeMap<&'r str, Vec<&'r Diagnostic>>,
    anchor: HashMap<&'r str, usize>,
}

impl<'r> Placed<'r> {
    fn new(report: &'r Report, g: &Graph<'_>) -> Self {
        let repo = &report.repo;
        // The documents of the graph's objects by file, in order.
        let mut docs: HashMap<crate::source::FileId, Vec<(u32, u32, usize)>> = HashMap::new();
        for o in &g.objects {
            if let Some(d) = repo.docs.get(o.id) {
                docs.entry(d.file)
                    .or_default()
                    .push((d.span.start, d.span.end, o.id));
            }
        }
        for v in docs.values_mut() {
            v.sort_unstable();
        }
        let mut on_object: HashMap<usize, Vec<&Diagnostic>> = HashMap::new();
        let mut by_file: BTreeMap<&str, Vec<&Diagnostic>> = BTreeMap::new();
        for d in &report.diagnostics {
            by_file
                .entry(repo.source(d.span.file).path.as_str())
                .or_default()
                .push(d);
            let Some(in_file) = docs.get(&d.span.file) else {
                continue;
            };
            let at = d.span.start;
            let i = in_file.partition_point(|&(start, _, _)| start <= at);
            if let Some(&(_, end, id)) = i.checked_sub(1).map(|i| &in_file[i]) {
                if at <= end {
                    on_object.entry(id).or_default().push(d);
                }
            }
        }
        let anchor = by_file.keys().enumerate().map(|(k, f)| (*f, k)).collect();
        Placed {
            on_object,
            by_file,
            anchor,
        }
    }

    fn of(&self, id: usize) -> &[&'r Diagnostic] {
        self.on_object.get(&id).map_or(&[], Vec::as_slice)
    }
}

/// A badge counting findings, coloured by the most severe; empty for none.
fn badge(found: &[&Diagnostic]) -> String {
    let Some(worst) = found.iter().map(|d| d.severity).max() else {
        return String::new();
    };
    let n = found.len();
    format!(
        "<span class=\"st {}\">{n} finding{}</span>",
        worst.as_str(),
        if n == 1 { "" } else { "s" }
    )
}

struct HtmlTree<'g, 'r> {
    g: &'g Graph<'g>,
    report: &'r Report,
    placed: &'g Placed<'r>,
    /// Object id → its index in `g.objects`.
    index: HashMap<usize, usize>,
    seen: HashSet<usize>,
    deferred: VecDeque<usize>,
    deferred_ids: HashSet<usize>,
    /// Long file lists already shown, with the Application whose source listed them.
    file_lists: HashMap<usize, &'g str>,
    /// Large managed sets already walked, with the object whose set it is.
    walked: HashMap<usize, &'g Object<'g>>,
    out: String,
}

impl<'g> HtmlTree<'g, '_> {
    fn object(&self, id: usize) -> Option<&'g Object<'g>> {
        let g = self.g;
        self.index.get(&id).map(|&i| &g.objects[i])
    }

    /// The object's name as a line: kind, name, `file:line`, whether it is live.
    fn label(o: &Object<'_>) -> String {
        format!(
            "<span class=\"k\">{}</span> <b>{}</b> <code>{}:{}</code>{}",
            o.kind,
            t(&o.name),
            t(&o.file),
            o.line,
            if o.live {
                ""
            } else {
                " <span class=\"dead\">not live</span>"
            }
        )
    }

    /// Opens the object's node: its line, its findings, what it is made of, and the list of
    /// what it manages (closed by [`Self::close`]).
    fn open(&mut self, o: &'g Object<'g>, label: &str) {
        let found = self.placed.of(o.id);
        let _ = writeln!(
            self.out,
            "<li class=\"obj\" id=\"obj-{}\"><details open><summary>{label}{}{}</summary>",
            o.id,
            Self::label(o),
            badge(found)
        );
        for d in found {
            let _ = writeln!(self.out, "{}", finding(&self.report.repo, d));
        }
        self.details(o);
        self.out.push_str("<ul class=\"m\">\n");
    }

    fn close(&mut self) {
        self.out.push_str("</ul></details></li>\n");
    }

    /// A line for an object shown elsewhere, linking to it.
    fn reference(&mut self, o: &Object<'_>, verb: &str, mark: &str) {
        let _ = writeln!(
            self.out,
            "<li class=\"ref\">{verb}<a href=\"#obj-{}\">{}</a>{} ({mark})</li>",
            o.id,
            Self::label(o),
            badge(self.placed.of(o.id))
        );
    }

    /// The tree of `id`, depth first with an explicit stack (a chain of app-of-apps is as deep
    /// as the repository is large).
    fn tree(&mut self, id: usize, depth: usize, label: &str) {
        let Some(o) = self.object(id) else {
            return;
        };
        if !self.seen.insert(id) {
            self.reference(o, label, "shown above");
            return;
        }
        self.open(o, label);
        if self.walked_elsewhere(o) {
            self.close();
            return;
        }
        let mut stack = vec![Frame::new(o, depth)];
        while let Some(top) = stack.last_mut() {
            let (o, depth) = (top.object, top.depth);
            let Some(&m) = o.manages.set.get(top.next) else {
                let (above, below) = (top.more_above, top.more_below);
                stack.pop();
                if above > 0 {
                    let _ = writeln!(
                        self.out,
                        "<li class=\"ref\">manages {above} more objects shown above</li>"
                    );
                }
                if below > 0 {
                    let _ = writeln!(
                        self.out,
                        "<li class=\"ref\">manages {below} more objects continued below</li>"
                    );
                }
                self.close();
                continue;
            };
            top.next += 1;
            if m == o.id {
                continue;
            }
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
                        "shown above"
                    } else {
                        "continued below"
                    };
                    self.reference(child, "manages ", mark);
                } else if seen {
                    top.more_above += 1;
                } else {
                    top.more_below += 1;
                }
            } else {
                self.seen.insert(m);
                self.open(child, "manages ");
                if self.walked_elsewhere(child) {
                    self.close();
                } else {
                    stack.push(Frame::new(child, depth + 1));
                }
            }
        }
    }

    /// Whether `o` manages a large set walked under another object: then one line links to
    /// that object instead.
    fn walked_elsewhere(&mut self, o: &'g Object<'g>) -> bool {
        let m = &o.manages;
        if m.set.len() <= MAX_LISTED_AGAIN {
            return false;
        }
        let Some(first) = self.walked.get(&m.index) else {
            self.walked.insert(m.index, o);
            return false;
        };
        let _ = writeln!(
            self.out,
            "<li class=\"ref\">manages the same {} objects as <a href=\"#obj-{}\">{}</a></li>",
            m.set.len(),
            first.id,
            Self::label(first)
        );
        true
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
                    "</ul>\n<h3>Continued (managed more than {MAX_DEPTH} levels down)</h3>\n<ul class=\"tree\">"
                );
                heading = false;
            }
            self.tree(id, 0, "");
        }
    }

    /// A file a source reads, marked with its findings.
    fn file(&mut self, path: &str) {
        let found = self.placed.by_file.get(path).map_or(&[][..], Vec::as_slice);
        let mark = match self.placed.anchor.get(path) {
            Some(k) => format!(" <a href=\"#file-{k}\">{}</a>", badge(found)),
            None => String::new(),
        };
        let _ = writeln!(
            self.out,
            "<li class=\"file\"><code>{}</code>{mark}</li>",
            t(path)
        );
    }

    /// An object's Applications with their sources and files, and what it renders.
    fn details(&mut self, o: &'g Object<'g>) {
        if o.applications.is_empty() && o.renders.is_empty() {
            return;
        }
        self.out.push_str("<ul>\n");
        for app in &o.applications {
            let nested = if let Some(from) = &app.rendered_from {
                let _ = writeln!(
                    self.out,
                    "<li class=\"app\">renders <span class=\"k\">Application</span> <b>{}</b> (<code>{}</code>, {})<ul>",
                    t(&app.name),
                    t(app.at.as_deref().unwrap_or("")),
                    t(from)
                );
                true
            } else if o.kind == "ApplicationSet" {
                let _ = writeln!(
                    self.out,
                    "<li class=\"app\">generates <span class=\"k\">Application</span> <b>{}</b><ul>",
                    t(&app.name)
                );
                true
            } else {
                false
            };
            for s in &app.sources {
                let _ = writeln!(
                    self.out,
                    "<li class=\"src\">source [{}] <code>{}</code> ({})<ul>",
                    s.kind,
                    t(s.repo_url.as_deref().unwrap_or("<no repoURL>")),
                    t(&s.location)
                );
                let files: &'g [&'g str] = &s.files;
                let again = files.len() > MAX_FILES_AGAIN
                    && match self.file_lists.get(&s.list) {
                        Some(first) => {
                            let _ = writeln!(
                                self.out,
                                "<li class=\"file\">the {} files listed above for Application <b>{}</b></li>",
                                files.len(),
                                t(first)
                            );
                            true
                        }
                        None => {
                            self.file_lists.insert(s.list, &app.name);
                            false
                        }
                    };
                if !again {
                    for f in files {
                        self.file(f);
                    }
                }
                self.out.push_str("</ul></li>\n");
            }
            if nested {
                self.out.push_str("</ul></li>\n");
            }
        }
        for r in &o.renders {
            let _ = writeln!(
                self.out,
                "<li class=\"app\">renders <span class=\"k\">{}</span> <b>{}</b> (<code>{}:{}</code>, {})</li>",
                r.kind,
                t(&r.name),
                t(&r.file),
                r.line,
                t(&r.from)
            );
        }
        self.out.push_str("</ul>\n");
    }
}

/// The page.
#[must_use]
pub fn page(report: &Report, model: &ArgoModel) -> String {
    let repo = &report.repo;
    let g = build(repo, model);
    let placed = Placed::new(report, &g);
    let mut nav =
        String::from("<label><input type=\"checkbox\" id=\"f\"> only with findings</label>\n");
    for o in &g.objects {
        let mut name = o.name.to_lowercase();
        // An ApplicationSet is found by the Applications it generates, an Application by
        // those it renders.
        for a in o.applications.iter().filter(|a| a.name != o.name) {
            name.push(' ');
            name.push_str(&a.name.to_lowercase());
        }
        let found = placed.of(o.id);
        let _ = writeln!(
            nav,
            "<a href=\"#obj-{}\" data-name=\"{}\" data-findings=\"{}\"><span class=\"k\">{}</span> {}{}</a>",
            o.id,
            t(&name),
            found.len(),
            o.kind,
            t(&o.name),
            badge(found)
        );
    }
    let mut w = HtmlTree {
        g: &g,
        report,
        placed: &placed,
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
        walked: HashMap::new(),
        out: String::new(),
    };
    let s = report.summary.errors;
    let _ = writeln!(
        w.out,
        "<h2>What Argo CD deploys</h2>\n<p>repository: {}<br>{} findings: {s} errors, {} warnings, {} infos</p>",
        t(&g.repository),
        report.diagnostics.len(),
        report.summary.warnings,
        report.summary.infos
    );
    w.out
        .push_str("<h3>Roots</h3>\n<ul class=\"tree\" id=\"roots\">\n");
    if g.roots.is_empty() {
        w.out
            .push_str("<li>no roots: no live Argo CD object in this repository</li>\n");
    }
    for &r in &g.roots {
        w.tree(r, 0, "root ");
    }
    w.continued();
    w.out.push_str("</ul>\n");
    // Managers first, so that a cycle or a dead subtree is shown from its top.
    let mut rest: Vec<(bool, usize)> = g
        .objects
        .iter()
        .filter(|o| !w.seen.contains(&o.id))
        .map(|o| (o.manages.is_empty(), o.id))
        .collect();
    rest.sort_unstable();
    if !rest.is_empty() {
        w.out.push_str(
            "<h3>Not reached from a root (dead, or in an app-of-apps cycle)</h3>\n<ul class=\"tree\" id=\"unreached\">\n",
        );
        for (_, id) in rest {
            if !w.seen.contains(&id) {
                w.tree(id, 0, "");
            }
        }
        w.continued();
        w.out.push_str("</ul>\n");
    }
    let mut out = w.out;
    if !g.not_rendered.is_empty() {
        out.push_str("<h3>Not rendered (Argo CD objects gitops-lint cannot see)</h3>\n<ul>\n");
        for n in &g.not_rendered {
            let _ = writeln!(
                out,
                "<li><code>{}:{}</code>: {}</li>",
                t(&n.file),
                n.line,
                t(&n.why)
            );
        }
        out.push_str("</ul>\n");
    }
    if !placed.by_file.is_empty() {
        out.push_str("<h3>Findings by file</h3>\n");
        for (k, (file, found)) in placed.by_file.iter().enumerate() {
            let _ = writeln!(
                out,
                "<section id=\"file-{k}\"><h4><code>{}</code>{}</h4>",
                t(file),
                badge(found)
            );
            for d in found {
                let _ = writeln!(out, "{}", finding(repo, d));
            }
            out.push_str("</section>\n");
        }
    }
    Page {
        title: "gitops-lint graph",
        style: STYLE,
        filter: "filter objects",
        nav: &nav,
        main: &out,
        script: SCRIPT,
    }
    .render()
}
