//! `gitops-lint graph --format html`: the tree of the text output (roots → Applications and
//! ApplicationSets → the Applications they generate or render → sources → files, and what each
//! manages) as one self-contained page, with the findings of `check` on its nodes: a finding in
//! an Argo CD object's document is shown on that object, and a file a source reads is marked
//! with its findings, listed once per file at the end (with every other finding).
//!
//! Each object is shown in full once, as in the text: where it appears again, a link points to
//! it, so the page grows with the objects and files, not with the edges between them.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;

use crate::diagnostic::Diagnostic;
use crate::engine::Report;
use crate::model::argocd::resolve::ArgoModel;
use crate::report::escape::escape;
use crate::report::html::{Page, finding, html};

use super::walk::{TreeOut, Walk};
use super::{Graph, MAX_DEPTH, MAX_FILES_AGAIN, Object, build};

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
    report: &'r Report,
    placed: &'g Placed<'r>,
    /// Long file lists already shown, with the Application whose source listed them.
    file_lists: HashMap<usize, &'g str>,
    out: String,
}

impl<'g> TreeOut<'g> for HtmlTree<'g, '_> {
    fn node(&mut self, o: &'g Object<'g>, _: usize, label: &str) {
        self.open(o, label);
    }

    fn end(&mut self, _: usize, above: usize, below: usize) {
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
    }

    fn reference(&mut self, o: &Object<'_>, _: usize, label: &str, seen: bool) {
        let mark = if seen {
            "shown above"
        } else {
            "continued below"
        };
        self.reference_line(o, label, mark);
    }

    fn same_set(&mut self, count: usize, first: &Object<'_>, _: usize) {
        let _ = writeln!(
            self.out,
            "<li class=\"ref\">manages the same {count} objects as <a href=\"#obj-{}\">{}</a></li>",
            first.id,
            Self::label(first)
        );
    }

    fn continued_heading(&mut self) {
        let _ = writeln!(
            self.out,
            "</ul>\n<h3>Continued (managed more than {MAX_DEPTH} levels down)</h3>\n<ul class=\"tree\">"
        );
    }
}

impl<'g> HtmlTree<'g, '_> {
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
    fn reference_line(&mut self, o: &Object<'_>, verb: &str, mark: &str) {
        let _ = writeln!(
            self.out,
            "<li class=\"ref\">{verb}<a href=\"#obj-{}\">{}</a>{} ({mark})</li>",
            o.id,
            Self::label(o),
            badge(self.placed.of(o.id))
        );
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
    let mut walk = Walk::new(&g);
    let mut w = HtmlTree {
        report,
        placed: &placed,
        file_lists: HashMap::new(),
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
        walk.tree(&mut w, r, 0, "root ");
    }
    walk.continued(&mut w, 0);
    w.out.push_str("</ul>\n");
    let rest = walk.unreached();
    if !rest.is_empty() {
        w.out.push_str(
            "<h3>Not reached from a root (dead, or in an app-of-apps cycle)</h3>\n<ul class=\"tree\" id=\"unreached\">\n",
        );
        for id in rest {
            if !walk.seen.contains(&id) {
                walk.tree(&mut w, id, 0, "");
            }
        }
        walk.continued(&mut w, 0);
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
