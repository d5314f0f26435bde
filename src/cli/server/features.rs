//! Requests on one document: code actions, hover, completion, go to definition. They read the
//! open documents and the last report of each repository.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, CompletionItem,
    CompletionItemKind, CompletionParams, CompletionResponse, Documentation, GotoDefinitionParams,
    GotoDefinitionResponse, Hover, HoverContents, HoverParams, Location, MarkupContent, MarkupKind,
    Position, Range, TextEdit, Uri, WorkspaceEdit,
};

use gitops_lint::diagnostic::Diagnostic;
use gitops_lint::engine::Report;
use gitops_lint::fix::{Applicability, Edit, Fix};
use gitops_lint::source::{FileId, SourceFile};
use gitops_lint::{registry, suppress, yaml};

use super::position::{Lines, path_to_uri, uri_to_path};
use super::schema_path::{self, Step};

/// What the requests read: open documents by path, the last report by repository root.
pub struct View<'a> {
    pub docs: HashMap<&'a Path, &'a str>,
    pub roots: HashMap<&'a Path, &'a Report>,
}

/// A document as the request sees it, with the report of its repository when there is one.
struct Target<'a> {
    root: Option<PathBuf>,
    text: String,
    report: Option<&'a Report>,
    /// The document in the report, when the report was made from the current text (so its
    /// spans are valid).
    source: Option<&'a SourceFile>,
}

impl<'a> View<'a> {
    fn target(&self, uri: &Uri) -> Option<Target<'a>> {
        let path = uri_to_path(uri)?;
        let root = super::root_of(&path);
        let report = root.as_deref().and_then(|r| self.roots.get(r).copied());
        let in_report = report.and_then(|r| {
            let rel = gitops_lint::source::walk::relative(&r.repo.root, &path);
            r.repo.file_by_path(&rel)
        });
        let text = match (self.docs.get(path.as_path()), in_report) {
            (Some(t), _) => (*t).to_string(),
            (None, Some(s)) => s.text().to_string(),
            // A file the editor names but has not opened: only a regular file is read (a
            // FIFO would block the server).
            (None, None) => {
                gitops_lint::source::fs::read_file_text(&path, gitops_lint::source::MAX_FILE_BYTES)
                    .ok()?
            }
        };
        let source = in_report.filter(|s| s.text() == text);
        Some(Target {
            root,
            text,
            report,
            source,
        })
    }
}

fn diagnostics_of(report: &Report, file: FileId) -> impl Iterator<Item = &Diagnostic> {
    report
        .diagnostics
        .iter()
        .filter(move |d| d.span.file == file)
}

/// The edits of fixes as a workspace edit (a fix may touch several files).
fn workspace_edit(report: &Report, edits: &[&Edit]) -> Option<WorkspaceEdit> {
    let mut changes: HashMap<Uri, Vec<TextEdit>> = HashMap::new();
    for e in edits {
        let src = report.repo.source(e.span.file);
        let lines = Lines::new(src.text());
        changes
            .entry(path_to_uri(&super::on_disk(&report.repo, src))?)
            .or_default()
            .push(TextEdit {
                range: lines.range(e.span.start as usize, e.span.end as usize),
                new_text: e.replacement.clone(),
            });
    }
    Some(WorkspaceEdit {
        changes: Some(changes),
        ..WorkspaceEdit::default()
    })
}

fn wanted(kind: &CodeActionKind, only: Option<&Vec<CodeActionKind>>) -> bool {
    only.is_none_or(|only| {
        only.iter().any(|o| {
            kind.as_str() == o.as_str() || kind.as_str().starts_with(&format!("{}.", o.as_str()))
        })
    })
}

pub fn code_actions(view: &View<'_>, p: &CodeActionParams) -> Vec<CodeActionOrCommand> {
    let mut out = Vec::new();
    let Some(t) = view.target(&p.text_document.uri) else {
        return out;
    };
    let (Some(report), Some(src)) = (t.report, t.source) else {
        return out;
    };
    let only = p.context.only.as_ref();
    let lines = Lines::new(src.text());
    let (start, end) = (lines.offset(p.range.start), lines.offset(p.range.end));
    let fix_all_kind = CodeActionKind::new("source.fixAll.gitops-lint");
    for d in diagnostics_of(report, src.id) {
        if (d.span.end as usize) < start || (d.span.start as usize) > end {
            continue;
        }
        if let Some(f) = &d.fix {
            if f.applicability >= Applicability::Unsafe && wanted(&CodeActionKind::QUICKFIX, only) {
                let edits: Vec<&Edit> = f.edits.iter().collect();
                let safe = f.applicability == Applicability::Safe;
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!(
                        "{}: {}{}",
                        d.rule,
                        f.title,
                        if safe { "" } else { " (unsafe: review it)" }
                    ),
                    kind: Some(CodeActionKind::QUICKFIX),
                    is_preferred: Some(safe),
                    edit: workspace_edit(report, &edits),
                    ..CodeAction::default()
                }));
            }
        }
        if wanted(&CodeActionKind::QUICKFIX, only) {
            if let Some(edit) = suppress_edit(src, &lines, d) {
                let uri = p.text_document.uri.clone();
                out.push(CodeActionOrCommand::CodeAction(CodeAction {
                    title: format!("Suppress `{}` on this line (give a reason)", d.rule),
                    kind: Some(CodeActionKind::QUICKFIX),
                    edit: Some(WorkspaceEdit {
                        changes: Some(HashMap::from([(uri, vec![edit])])),
                        ..WorkspaceEdit::default()
                    }),
                    ..CodeAction::default()
                }));
            }
        }
    }
    if wanted(&fix_all_kind, only) || wanted(&CodeActionKind::QUICKFIX, only) {
        let safe: Vec<&Fix> = diagnostics_of(report, src.id)
            .filter_map(|d| d.fix.as_ref())
            .filter(|f| {
                f.applicability == Applicability::Safe
                    && f.edits.iter().all(|e| e.span.file == src.id)
            })
            .collect();
        // As `--fix` steps: no fix that adds a YAML problem, and of two that clash, the first.
        let applied = gitops_lint::fixer::apply_keeping_yaml_valid(src.text(), &safe).applied;
        if !applied.is_empty() {
            let edits: Vec<&Edit> = applied.iter().flat_map(|&i| &safe[i].edits).collect();
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "Fix all safe gitops-lint findings in this file".into(),
                kind: Some(if wanted(&fix_all_kind, only) {
                    fix_all_kind
                } else {
                    CodeActionKind::QUICKFIX
                }),
                edit: workspace_edit(report, &edits),
                ..CodeAction::default()
            }));
        }
    }
    out
}

/// `# gitops-lint: disable=RULE -- ` at the end of the finding's first line, or the rule
/// added to the directive already there.
fn suppress_edit(src: &SourceFile, lines: &Lines<'_>, d: &Diagnostic) -> Option<TextEdit> {
    let line = lines.line_of(d.span.start as usize);
    let existing = suppress::parse_directives(src.id, src.text(), src.lines())
        .into_iter()
        .find(|dir| dir.scope == suppress::Scope::Line(line));
    let (at, text) = match existing.as_ref().and_then(|dir| dir.selectors.last()) {
        Some(last) => (last.span.end as usize, format!(",{}", d.rule)),
        None => {
            let end = lines.line_end(line);
            let start = lines.line_start(line);
            let blank = src
                .text()
                .get(start..end)
                .is_none_or(|l| l.trim().is_empty());
            let sep = if blank { "" } else { " " };
            (end, format!("{sep}# gitops-lint: disable={} -- ", d.rule))
        }
    };
    let pos = lines.position(at);
    Some(TextEdit {
        range: Range::new(pos, pos),
        new_text: text,
    })
}

fn markdown(value: String) -> Hover {
    Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: None,
    }
}

pub fn hover(view: &View<'_>, p: &HoverParams) -> Option<Hover> {
    let t = view.target(&p.text_document_position_params.text_document.uri)?;
    let lines = Lines::new(&t.text);
    let offset = lines.offset(p.text_document_position_params.position);
    if let (Some(report), Some(src)) = (t.report, t.source) {
        let here: Vec<&Diagnostic> = diagnostics_of(report, src.id)
            .filter(|d| d.span.start as usize <= offset && offset <= d.span.end as usize)
            .collect();
        if let Some(first) = here.first() {
            let mut text = String::new();
            for d in &here {
                text.push_str(&format!(
                    "**{}** ({}): {}\n\n",
                    d.rule,
                    d.severity.as_str(),
                    d.message
                ));
            }
            if let Some(meta) = registry::find(&first.rule) {
                text.push_str("---\n\n");
                text.push_str(meta.docs);
            }
            return Some(markdown(text));
        }
    }
    let parsed = yaml::parse(FileId(0), &t.text);
    let doc = parsed
        .docs
        .iter()
        .find(|d| d.span.start as usize <= offset && offset <= d.span.end as usize)?;
    let at = schema_path::at_offset(&doc.root, offset);
    let Some(kind) = schema_path::argo_kind(&doc.root) else {
        return values_hover(t.report?, t.source?, &at.steps).map(markdown);
    };
    let field = schema_path::resolve(&kind, &at.steps)?.field?;
    Some(markdown(format!(
        "{}\n\n`{kind}.{}`",
        schema_path::field_markdown(field),
        schema_path::display(&at.steps)
    )))
}

/// On a Helm values file: the Applications that deploy it and, for the key under the cursor,
/// the value each one gets and where it comes from (Helm precedence, resolved by the model).
fn values_hover(report: &Report, src: &SourceFile, steps: &[Step]) -> Option<String> {
    let model = gitops_lint::model::Model::new(&report.repo, report.config.settings());
    let keys: Option<Vec<&str>> = steps
        .iter()
        .map(|s| match s {
            Step::Key(k) => Some(k.as_str()),
            Step::Index(_) => None,
        })
        .collect();
    let mut lines = Vec::new();
    for app in &model.argocd().apps {
        for source in app.sources.iter().filter(|s| s.files.contains(&src.id)) {
            let mut line = format!("- Application `{}`", app.name);
            let value = keys
                .as_deref()
                .filter(|k| !k.is_empty())
                .and_then(|k| source.values.as_ref()?.path(k));
            if let Some(v) = value {
                match v.text() {
                    Some(text) => line.push_str(&format!(": `{text}`")),
                    None => line.push_str(": a mapping or list"),
                }
                if let Some(span) = v.span() {
                    let from = report.repo.source(span.file);
                    let at = from.line_col(span.start as usize);
                    line.push_str(&format!(", from `{}:{}`", from.path, at.line));
                }
            }
            lines.push(line);
        }
    }
    if lines.is_empty() {
        return None;
    }
    lines.sort();
    lines.dedup();
    let key = keys.map(|k| k.join(".")).unwrap_or_default();
    let title = if key.is_empty() {
        "Deployed by:".to_string()
    } else {
        format!("`{key}`, as deployed:")
    };
    Some(format!("{title}\n\n{}", lines.join("\n")))
}

pub fn completion(view: &View<'_>, p: &CompletionParams) -> Option<CompletionResponse> {
    let t = view.target(&p.text_document_position.text_document.uri)?;
    let lines = Lines::new(&t.text);
    let pos = p.text_document_position.position;
    let offset = lines.offset(pos);
    let line = pos.line as usize;
    let prefix = t.text.get(lines.line_start(line)..offset)?;
    if let Some(after) = directive_list(prefix) {
        let typed: Vec<&str> = after.split(',').map(str::trim).collect();
        let metas = registry::all_meta();
        let mut groups: Vec<&str> = metas
            .iter()
            .filter_map(|m| m.id.split('/').next())
            .collect();
        groups.dedup();
        let mut items: Vec<CompletionItem> = metas
            .iter()
            .filter(|m| !typed.contains(&m.id))
            .map(|m| CompletionItem {
                label: m.id.to_string(),
                kind: Some(CompletionItemKind::CONSTANT),
                detail: Some(m.summary.to_string()),
                ..CompletionItem::default()
            })
            .collect();
        items.extend(groups.into_iter().map(|g| CompletionItem {
            label: format!("{g}/*"),
            kind: Some(CompletionItemKind::MODULE),
            detail: Some(format!("every `{g}/` rule")),
            ..CompletionItem::default()
        }));
        return Some(CompletionResponse::Array(items));
    }
    // A key being typed: only text (and list dashes) before the cursor, no `:` yet.
    let typed = prefix.trim_start_matches([' ', '-']);
    if typed.contains([':', '#', '"', '\'', '{', '[']) {
        return None;
    }
    let all: Vec<&str> = t.text.lines().collect();
    let mut upto: Vec<&str> = all.iter().take(line).copied().collect();
    upto.push(prefix);
    let kind = schema_path::kind_around(&all, line)?;
    let steps = schema_path::parent_steps(&upto, line);
    let fields = schema_path::resolve(&kind, &steps)?.fields_of?;
    let items = fields
        .fields()
        .map(|f| CompletionItem {
            label: f.name.clone(),
            kind: Some(CompletionItemKind::FIELD),
            detail: Some(schema_path::shape_name(&f.shape)),
            documentation: (!f.doc.is_empty()).then(|| Documentation::String(f.doc.clone())),
            ..CompletionItem::default()
        })
        .collect();
    Some(CompletionResponse::Array(items))
}

/// The rule list typed so far after `# gitops-lint: disable=` (or `disable-file=`).
fn directive_list(prefix: &str) -> Option<&str> {
    let at = prefix.find("gitops-lint:")?;
    let before = prefix[..at].trim_end();
    if !before.ends_with('#') {
        return None;
    }
    let body = prefix[at + "gitops-lint:".len()..].trim_start();
    let list = body
        .strip_prefix("disable-file=")
        .or_else(|| body.strip_prefix("disable="))?;
    (!list.contains(char::is_whitespace)).then_some(list)
}

pub fn definition(view: &View<'_>, p: &GotoDefinitionParams) -> Option<GotoDefinitionResponse> {
    let t = view.target(&p.text_document_position_params.text_document.uri)?;
    let lines = Lines::new(&t.text);
    let offset = lines.offset(p.text_document_position_params.position);
    let parsed = yaml::parse(FileId(0), &t.text);
    let doc = parsed
        .docs
        .iter()
        .find(|d| d.span.start as usize <= offset && offset <= d.span.end as usize)?;
    schema_path::argo_kind(&doc.root)?;
    let at = schema_path::at_offset(&doc.root, offset);
    let value = at.nodes.last()?.as_str()?;
    let keys: Vec<&str> = at
        .steps
        .iter()
        .map(|s| match s {
            Step::Key(k) => k.as_str(),
            Step::Index(_) => "",
        })
        .collect();
    let root = t.root.as_deref()?;
    let location = match keys.as_slice() {
        [.., "spec", "project"] => app_project(t.report?, value),
        [.., "helm", "valueFiles", ""] => {
            let helm_at = keys.len() - 3;
            let source = at.nodes.get(helm_at)?;
            match value.strip_prefix('$') {
                // `$name/...`: relative to the root of the source with `ref: name`, when that
                // source is in this repository too.
                Some(reference) => {
                    let (name, rest) = reference.split_once('/')?;
                    let sources = at.nodes.get(helm_at.checked_sub(1)?)?.as_seq()?;
                    sources.iter().find(|s| {
                        schema_path::map_get(s, "ref").and_then(|r| r.as_str()) == Some(name)
                    })?;
                    file_location(root, &gitops_lint::model::paths::join("", rest)?)
                }
                None => {
                    let base = schema_path::map_get(source, "path")?.as_str()?;
                    file_location(root, &gitops_lint::model::paths::join(base, value)?)
                }
            }
        }
        [.., "path"] => {
            let source = at.nodes.get(at.nodes.len() - 2)?;
            schema_path::map_get(source, "repoURL")?;
            file_location(root, &gitops_lint::model::paths::join("", value)?)
        }
        _ => None,
    }?;
    Some(GotoDefinitionResponse::Scalar(location))
}

/// The AppProject named `name`: its `metadata.name`.
fn app_project(report: &Report, name: &str) -> Option<Location> {
    report.repo.docs.iter().find_map(|d| {
        let kind = schema_path::map_get(&d.root, "kind")?.as_str()?;
        let meta = schema_path::map_get(&d.root, "metadata")?;
        let node = schema_path::map_get(meta, "name")?;
        (kind == "AppProject" && node.as_str() == Some(name)).then(|| {
            let src = report.repo.source(d.file);
            let lines = Lines::new(src.text());
            Some(Location {
                uri: path_to_uri(&super::on_disk(&report.repo, src))?,
                range: lines.range(node.span.start as usize, node.span.end as usize),
            })
        })?
    })
}

/// A file, or for a folder the chart or kustomization in it (else the folder itself).
fn file_location(root: &Path, rel: &str) -> Option<Location> {
    let path = root.join(rel);
    let target = if path.is_dir() {
        [
            "Chart.yaml",
            "kustomization.yaml",
            "kustomization.yml",
            "Kustomization",
        ]
        .iter()
        .map(|n| path.join(n))
        .find(|p| p.is_file())
        .unwrap_or(path)
    } else if path.exists() {
        path
    } else {
        return None;
    };
    Some(Location {
        uri: path_to_uri(&target)?,
        range: Range::new(Position::new(0, 0), Position::new(0, 0)),
    })
}
