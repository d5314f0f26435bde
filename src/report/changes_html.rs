//! `gitops-lint diff --format html`: one self-contained page (inline CSS and script, nothing
//! fetched) with the Applications in a list, each changed object's diff side by side, the
//! causes of each hunk, what was not rendered, and the `diff/` findings.

use std::fmt::Write as _;

use crate::engine::diff::DiffReport;
use crate::model::diff::{AppStatus, Cause, ObjectChange};

use super::html::{Page, finding, html};

/// After the shared style of the pages.
const STYLE: &str = r#"
.added{background:#1a7f37}.removed{background:#cf222e}.modified{background:#9a6700}
.unchanged{background:#8c959f}.not-rendered{background:#6e7781}
table.d{border-collapse:collapse;width:100%;font:12px/1.35 ui-monospace,monospace;margin:.3rem 0}
table.d td{padding:0 .4rem;white-space:pre-wrap;vertical-align:top;width:50%}
table.d td.n{width:3rem;color:#6e7781;text-align:right;user-select:none}
td.del{background:#ffebe9}td.ins{background:#e6ffec}tr.h td{background:#ddf4ff;color:#0550ae}
.cause{font-size:12px;color:#57606a;margin:.1rem 0 .8rem}
"#;

const SCRIPT: &str = r#"
const q=document.getElementById('q'),u=document.getElementById('u');
function f(){const t=q.value.toLowerCase();
for(const a of document.querySelectorAll('nav a')){
const hide=(t&&!a.dataset.name.includes(t))||(!u.checked&&a.dataset.status==='unchanged');
a.classList.toggle('hidden',hide);}}
q.addEventListener('input',f);u.addEventListener('change',f);f();
"#;

fn causes(cs: &[Cause]) -> String {
    if cs.is_empty() {
        return "cause not traced".into();
    }
    let list: Vec<String> = cs
        .iter()
        .map(|c| {
            let side = if c.at_base { " (base)" } else { "" };
            format!("<code>{}:{}</code>{side}", html(&c.file), c.line)
        })
        .collect();
    format!("caused by {}", list.join(", "))
}

/// A line of a hunk and its number.
type Numbered<'a> = (usize, &'a str);

/// The hunk as side-by-side rows: removed lines beside the added lines that replace them.
fn rows(hunk: &str, out: &mut String) {
    let mut lines = hunk.lines();
    let Some(header) = lines.next() else { return };
    let nums: Vec<usize> = header
        .split(|c: char| !c.is_ascii_digit())
        .filter_map(|n| n.parse().ok())
        .collect();
    let (mut old, mut new) = (
        nums.first().copied().unwrap_or(1),
        nums.get(2).copied().unwrap_or(1),
    );
    let _ = writeln!(
        out,
        "<tr class=\"h\"><td class=\"n\"></td><td colspan=\"3\">{}</td></tr>",
        html(header)
    );
    let (mut dels, mut inss): (Vec<Numbered<'_>>, Vec<Numbered<'_>>) = (Vec::new(), Vec::new());
    let flush = |dels: &mut Vec<Numbered<'_>>, inss: &mut Vec<Numbered<'_>>, out: &mut String| {
        for i in 0..dels.len().max(inss.len()) {
            let cell = |side: Option<&(usize, &str)>, class: &str| match side {
                Some((n, t)) => format!(
                    "<td class=\"n\">{n}</td><td class=\"{class}\">{}</td>",
                    html(t)
                ),
                None => "<td class=\"n\"></td><td></td>".to_string(),
            };
            let _ = writeln!(
                out,
                "<tr>{}{}</tr>",
                cell(dels.get(i), "del"),
                cell(inss.get(i), "ins")
            );
        }
        dels.clear();
        inss.clear();
    };
    for line in lines {
        match line.as_bytes().first() {
            Some(b'-') => {
                dels.push((old, &line[1..]));
                old += 1;
            }
            Some(b'+') => {
                inss.push((new, &line[1..]));
                new += 1;
            }
            Some(b'\\') => {}
            _ => {
                flush(&mut dels, &mut inss, out);
                let t = line.get(1..).unwrap_or("");
                let _ = writeln!(
                    out,
                    "<tr><td class=\"n\">{old}</td><td>{0}</td><td class=\"n\">{new}</td><td>{0}</td></tr>",
                    html(t)
                );
                old += 1;
                new += 1;
            }
        }
    }
    flush(&mut dels, &mut inss, out);
}

fn object(o: &ObjectChange, out: &mut String) {
    let ns = if o.key.namespace.is_empty() {
        String::new()
    } else {
        format!("{}/", o.key.namespace)
    };
    let _ = writeln!(
        out,
        "<h4>{} <span class=\"st {}\">{}</span></h4>",
        html(&format!(
            "{} {} {ns}{}",
            o.api_version, o.key.kind, o.key.name
        )),
        o.change.as_str(),
        o.change.as_str()
    );
    for h in &o.hunks {
        out.push_str("<table class=\"d\">\n");
        rows(&h.text, out);
        out.push_str("</table>\n");
        let _ = writeln!(out, "<p class=\"cause\">{}</p>", causes(&h.causes));
    }
}

/// The page.
#[must_use]
pub fn page(dr: &DiffReport, base: &str) -> String {
    let mut nav = String::from("<label><input type=\"checkbox\" id=\"u\"> unchanged</label>\n");
    for (i, a) in dr.changes.apps.iter().enumerate() {
        let _ = writeln!(
            nav,
            "<a href=\"#app-{i}\" data-name=\"{}\" data-status=\"{}\">{}<span class=\"st {1}\">{1}</span></a>",
            html(&a.name.to_lowercase()),
            a.status.as_str(),
            html(&a.name)
        );
    }
    let mut s = String::new();
    let _ = writeln!(
        s,
        "<h2>gitops-lint diff against <code>{}</code></h2>",
        html(base)
    );
    let repo = &dr.report.repo;
    if !dr.report.diagnostics.is_empty() {
        s.push_str("<h3>Findings</h3>\n");
        for d in &dr.report.diagnostics {
            let _ = writeln!(s, "{}", finding(repo, d));
        }
    }
    if !dr.changes.not_rendered.is_empty() {
        s.push_str("<h3>Not rendered: not compared</h3>\n<ul>\n");
        for n in &dr.changes.not_rendered {
            let _ = writeln!(
                s,
                "<li><code>{}</code> source {} ({}): {}</li>",
                html(&n.application),
                n.source,
                html(&n.what),
                html(&n.reason)
            );
        }
        s.push_str("</ul>\n");
    }
    for (i, a) in dr.changes.apps.iter().enumerate() {
        let _ = writeln!(
            s,
            "<section id=\"app-{i}\"><h3>Application <code>{}</code> <span class=\"st {1}\">{1}</span></h3>",
            html(&a.name),
            a.status.as_str()
        );
        if a.partial || a.status == AppStatus::NotRendered {
            s.push_str("<p>Some of its sources are not rendered: not compared.</p>\n");
        }
        if !a.affected {
            s.push_str(
                "<p>Not affected by the change: nothing it reads changed, not rendered.</p>\n",
            );
        } else if a.objects.is_empty() && a.status == AppStatus::Unchanged {
            let _ = writeln!(s, "<p>{} objects, unchanged.</p>", a.unchanged);
        }
        for o in &a.objects {
            object(o, &mut s);
        }
        s.push_str("</section>\n");
    }
    Page {
        title: &format!("gitops-lint diff against {base}"),
        style: STYLE,
        filter: "filter Applications",
        nav: &nav,
        main: &s,
        script: SCRIPT,
    }
    .render()
}
