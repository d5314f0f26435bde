//! `argocd/sync-policy`: automated sync with `prune` and `selfHeal` on every Application.

use super::schema::Typos;
use crate::diagnostic::Finding;
use crate::fix::{Applicability, Edit, Fix};
use crate::model::argocd::appset::rolling_sync;
use crate::model::{DocKind, Document};
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};
use crate::source::{SourceFile, Span};
use crate::yaml::{Entry, Node, Value, edit};

pub struct SyncPolicy;

static META: RuleMeta = RuleMeta {
    id: "argocd/sync-policy",
    summary: "an Application must sync automatically with `prune: true` and `selfHeal: true`",
    default_severity: crate::diagnostic::Severity::Error,
    fix: FixAvailability::Sometimes,
    reads: Reads::NONE,
    applies_to: &[DocKind::Application, DocKind::ApplicationSet],
    options: &[],
    docs: include_str!("sync_policy.md"),
};

impl Rule for SyncPolicy {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    /// Reads the document and its file's text, whether Argo CD runs progressive syncs, and
    /// whether `argocd/schema` runs, at which version (it owns misspelled keys).
    fn document_memo_key(&self, cx: &Context<'_>) -> Option<String> {
        Some(format!(
            "{} progressive syncs {:?} schema {} {:?}",
            META.id,
            cx.model.argocd_params().progressive_syncs,
            cx.rule_enabled(super::schema::ID),
            cx.options::<super::schema::Options>().version
        ))
    }

    fn check(&self, doc: &Document, cx: &Context<'_>) -> Vec<Finding> {
        let (spec_entry, what) = match doc.kind {
            DocKind::Application => (doc.root.entry("spec"), "Application"),
            DocKind::ApplicationSet => {
                // A templatePatch may set syncPolicy; it is a Go template we cannot evaluate.
                if doc
                    .root
                    .path(&["spec", "templatePatch"])
                    .and_then(Node::scalar_text)
                    .is_some_and(|p| p.contains("syncPolicy"))
                {
                    return Vec::new();
                }
                (
                    doc.root
                        .path(&["spec", "template"])
                        .and_then(|t| t.entry("spec")),
                    "ApplicationSet template",
                )
            }
            _ => return Vec::new(),
        };
        let name = doc.name().unwrap_or("<unnamed>");
        let Some(spec_entry) = spec_entry else {
            return vec![
                Finding::new(format!("{what} `{name}` has no `spec`"), doc.anchor_span())
                    .with_help(HELP),
            ];
        };
        // A kustomize patch set part of this spec, or a chart rendered it: an edit here would
        // be overridden or land at offsets of another file.
        let patched = doc.rendered
            || cx.repo.is_transformed(doc)
                && spec_entry
                    .value
                    .descendants()
                    .any(|n| n.span.file != doc.file);
        let source = Some(cx.repo.source(doc.file)).filter(|_| !patched);
        // RollingSync applies unless the repository turns progressive syncs off.
        let rolling = doc.kind == DocKind::ApplicationSet && rolling_sync(&doc.root);
        let off = &cx.model.argocd_params().progressive_syncs;
        let typos = Typos::new(cx);
        let spec = &spec_entry.value;
        let found = match off.as_ref().filter(|d| !d.on) {
            None if rolling => check_rolling(source, &spec_entry.key, spec, name, &typos),
            Some(off) if rolling => check_spec(source, &spec_entry.key, spec, what, name, &typos)
                .map(|f| {
                    f.with_label(
                        off.span,
                        format!(
                            "`RollingSync` is ignored: {} leaves progressive syncs off",
                            off.origin
                        ),
                    )
                }),
            _ => check_spec(source, &spec_entry.key, spec, what, name, &typos),
        };
        found
            .map(|mut f| {
                // Unusual layouts (explicit `? key` entries, odd indentation) can defeat the
                // edit helpers: a fix that would not leave valid YAML is not offered.
                if let (Some(text), Some(fix)) = (source.map(SourceFile::text), &f.fix)
                    && !edit::keeps_yaml_valid(text, &fix.edits)
                {
                    f.fix = None;
                }
                f
            })
            .into_iter()
            .collect()
    }
}

const ROLLING_HELP: &str = "RollingSync turns automated sync off and syncs each step with the template's `automated.prune`: set `prune: true`, so Argo CD deletes what Git deletes.";

/// An ApplicationSet template synced by RollingSync: the controller syncs each step itself, so
/// `selfHeal` does nothing, and it prunes only when `automated` is on with `prune: true`.
fn check_rolling(
    source: Option<&SourceFile>,
    spec_key: &Node,
    spec: &Node,
    name: &str,
    typos: &Typos<'_>,
) -> Option<Finding> {
    let text = || source.map(SourceFile::text).filter(|t| !t.is_empty());
    let sync_policy = spec.entry("syncPolicy");
    let automated = sync_policy.and_then(|e| e.value.entry("automated"));
    let misspelled = match (sync_policy, automated) {
        (None, _) => typos.of(spec, "ApplicationSpec", "syncPolicy"),
        (Some(sp), None) => typos.of(&sp.value, "SyncPolicy", "automated"),
        (_, Some(auto)) if auto.value.get("prune").is_none() => {
            typos.of(&auto.value, "SyncPolicyAutomated", "prune")
        }
        _ => None,
    };
    if misspelled.is_some() {
        return None;
    }
    let (problem, at, edits) = match automated {
        None => (
            match sync_policy {
                None => "no `syncPolicy`",
                Some(_) => "no `syncPolicy.automated`",
            }
            .to_string(),
            sync_policy.map_or(spec_key.span, |e| e.key.span),
            None,
        ),
        Some(auto) => {
            let map = &auto.value;
            if let Some(enabled) = map.get("enabled").filter(|e| e.as_bool() == Some(false)) {
                ("`enabled: false`".to_string(), enabled.span, None)
            } else {
                match map.get("prune") {
                    Some(v) if is_templated(v) || v.as_bool() == Some(true) => return None,
                    Some(v) => (
                        v.scalar_text().map_or_else(
                            || "a non-boolean `prune`".to_string(),
                            |s| format!("`prune: {s}`"),
                        ),
                        v.span,
                        (v.tag().is_none()).then(|| {
                            vec![Edit {
                                span: v.span,
                                replacement: "true".into(),
                            }]
                        }),
                    ),
                    None => (
                        "no `prune`".to_string(),
                        auto.key.span,
                        text()
                            .filter(|_| map.as_map().is_some_and(|m| !m.is_empty()))
                            .and_then(|t| edit::append_to_map(t, map, &["prune: true".into()])),
                    ),
                }
            }
        }
    };
    // Pruning deletes live resources: turning it on needs review.
    let fix = edits
        .filter(|_| text().is_some())
        .and_then(|e| Fix::new("set `prune: true`", Applicability::Unsafe, e));
    Some(
        Finding::new(
            format!(
                "ApplicationSet template `{name}` is synced by RollingSync with {problem}, so it never prunes"
            ),
            at,
        )
        .with_help(ROLLING_HELP)
        .with_fix(fix),
    )
}

const HELP: &str = "Set `spec.syncPolicy.automated` with `prune: true` and `selfHeal: true`, so Argo CD deletes what Git deletes and reverts changes made outside Git.";

const BLOCK_AUTOMATED: [&str; 3] = ["automated:", "  prune: true", "  selfHeal: true"];
const FLOW_AUTOMATED: &str = "{prune: true, selfHeal: true}";

/// `source` is the document's file, `None` when a kustomize patch set part of the spec: an
/// edit in the file would be overridden by the patch (and the patch's nodes are in another
/// file), so no fix is offered. Its text is read (again, if it was released) only to build a
/// fix.
fn check_spec(
    source: Option<&SourceFile>,
    spec_key: &Node,
    spec: &Node,
    what: &str,
    name: &str,
    typos: &Typos<'_>,
) -> Option<Finding> {
    // A file changed on disk since it was parsed reads as empty: no fix then.
    let text = || source.map(SourceFile::text).filter(|t| !t.is_empty());
    let Some(sp_entry) = spec.entry("syncPolicy") else {
        if typos.of(spec, "ApplicationSpec", "syncPolicy").is_some() {
            return None;
        }
        let fix = if let (Some(text), Some(_)) = (text(), spec.as_map()) {
            add_entry(
                text,
                spec,
                "syncPolicy",
                &nested("syncPolicy", &BLOCK_AUTOMATED),
                &format!("{{automated: {FLOW_AUTOMATED}}}"),
            )
            .and_then(|e| {
                // Someone may sync this Application by hand on purpose.
                Fix::new(
                    "add `syncPolicy.automated` with `prune: true` and `selfHeal: true`",
                    Applicability::Unsafe,
                    e,
                )
            })
        } else {
            None
        };
        return Some(
            Finding::new(
                format!("{what} `{name}` has no `syncPolicy`, so it never syncs automatically"),
                spec_key.span,
            )
            .with_help(HELP)
            .with_fix(fix),
        );
    };
    let sync_policy = &sp_entry.value;
    let Some(auto_entry) = sync_policy.entry("automated") else {
        if typos.of(sync_policy, "SyncPolicy", "automated").is_some() {
            return None;
        }
        let fix = match text() {
            Some(text) if sync_policy.as_map().is_some() => add_entry(
                text,
                sync_policy,
                "automated",
                &BLOCK_AUTOMATED,
                FLOW_AUTOMATED,
            ),
            Some(text) if sync_policy.is_null() => {
                edit::fill_empty_value(text, &sp_entry.key, sync_policy, &owned(&BLOCK_AUTOMATED))
            }
            _ => None,
        };
        return Some(
            Finding::new(
                format!(
                    "{what} `{name}` has no `syncPolicy.automated`, so it never syncs automatically"
                ),
                sp_entry.key.span,
            )
            .with_help(HELP)
            .with_fix(fix.and_then(|e| {
                Fix::new(
                    "add `automated` with `prune: true` and `selfHeal: true`",
                    Applicability::Unsafe,
                    e,
                )
            })),
        );
    };
    let automated = &auto_entry.value;
    if automated.is_null() || automated.as_map().is_some_and(<[_]>::is_empty) {
        let fix = if let Some(text) = text().filter(|_| !automated.flow()) {
            edit::fill_empty_value(
                text,
                &auto_entry.key,
                automated,
                &owned(
                    &BLOCK_AUTOMATED[1..]
                        .iter()
                        .map(|l| l.trim_start())
                        .collect::<Vec<_>>(),
                ),
            )
        } else {
            text().map(|_| {
                vec![Edit {
                    span: automated.span,
                    replacement: FLOW_AUTOMATED.into(),
                }]
            })
        };
        return Some(
            Finding::new(
                format!(
                    "{what} `{name}` syncs automatically without `prune: true` and `selfHeal: true`"
                ),
                auto_entry.key.span,
            )
            .with_help(HELP)
            .with_fix(fix.and_then(|e| {
                // Filling it turns pruning on: Argo CD would delete what Git no longer has.
                Fix::new(
                    "set `prune: true` and `selfHeal: true`",
                    Applicability::Unsafe,
                    e,
                )
            })),
        );
    }
    if automated.as_map().is_none() {
        return Some(
            Finding::new(
                format!("{what} `{name}` has `syncPolicy.automated` that is not a mapping"),
                automated.span,
            )
            .with_help(HELP),
        );
    }

    let mut problems = Vec::new();
    let mut primary: Option<Span> = None;
    let mut edits = Vec::new();
    let mut missing = Vec::new();
    // An explicit value is the author's choice: changing it needs review.
    let mut flips = false;
    let mut unfixable = false;
    if let Some(enabled) = automated.get("enabled") {
        if enabled.as_bool() == Some(false) {
            unfixable |= enabled.tag().is_some();
            problems.push("`enabled: false`".to_string());
            primary = Some(enabled.span);
            edits.push(Edit {
                span: enabled.span,
                replacement: "true".into(),
            });
            // Someone paused automation on purpose: turning it back on needs review.
            flips = true;
        }
    }
    for key in ["prune", "selfHeal"] {
        match automated.get(key) {
            None if typos.of(automated, "SyncPolicyAutomated", key).is_some() => {}
            None => {
                // `selfheal`, `SelfHeal`: Argo CD reads the exact key only (reported here
                // when `argocd/schema` does not run).
                let near = automated.as_map().and_then(|entries| {
                    entries.iter().find(|e| {
                        e.key
                            .scalar_text()
                            .is_some_and(|k| k.eq_ignore_ascii_case(key))
                    })
                });
                match near {
                    Some(e) => {
                        let written = e.key.scalar_text().unwrap_or_default();
                        problems.push(format!(
                            "`{written}`, which Argo CD ignores (it reads `{key}`)"
                        ));
                        // A rendered key points at its template line, its value at the values
                        // line that wrote it: there the user can see it.
                        let at = if e.value.span.file == e.key.span.file {
                            e.key.span
                        } else {
                            e.value.span
                        };
                        primary.get_or_insert(at);
                        // Renamed, as `argocd/schema` renames it (the same edit): adding the
                        // key beside it would leave both once that fix is applied. Renaming
                        // `Prune` turns pruning on.
                        if key == "prune" {
                            flips = true;
                        }
                        edits.push(Edit {
                            span: e.key.span,
                            replacement: key.into(),
                        });
                    }
                    None => {
                        problems.push(format!("no `{key}`"));
                        missing.push(format!("{key}: true"));
                    }
                }
            }
            Some(v) if is_templated(v) => {}
            Some(v) if v.as_bool() == Some(true) => {}
            Some(v) => {
                let shown = v
                    .scalar_text()
                    .map_or_else(|| "a non-boolean".to_string(), |s| format!("`{key}: {s}`"));
                problems.push(shown);
                primary.get_or_insert(v.span);
                // A tagged value (`!custom false`) keeps its tag outside the node's span:
                // replacing the value alone would not make it a boolean.
                if v.tag().is_some() {
                    unfixable = true;
                }
                flips = true;
                edits.push(Edit {
                    span: v.span,
                    replacement: "true".into(),
                });
            }
        }
    }
    if problems.is_empty() {
        return None;
    }
    let Some(text) = text() else {
        edits.clear();
        return Some(finding(
            what,
            name,
            &problems,
            primary.unwrap_or(auto_entry.key.span),
            None,
        ));
    };
    if !missing.is_empty() {
        match edit::append_to_map(text, automated, &missing) {
            Some(e) => edits.extend(e),
            None => edits.clear(),
        }
    }
    let primary = primary.unwrap_or(auto_entry.key.span);
    // Adding `prune: true` makes Argo CD delete what it keeps today.
    let adds_prune = automated.get("prune").is_none();
    let fix = if edits.is_empty() || unfixable {
        None
    } else if flips || adds_prune {
        let title = if automated
            .get("enabled")
            .is_some_and(|e| e.as_bool() == Some(false))
        {
            "enable automated sync with `prune: true` and `selfHeal: true`"
        } else {
            "set `prune: true` and `selfHeal: true`"
        };
        Fix::new(title, Applicability::Unsafe, edits)
    } else {
        Fix::new(
            "set `prune: true` and `selfHeal: true`",
            completing(text, auto_entry, automated),
            edits,
        )
    };
    Some(finding(what, name, &problems, primary, fix))
}

fn finding(
    what: &str,
    name: &str,
    problems: &[String],
    primary: Span,
    fix: Option<Fix>,
) -> Finding {
    Finding::new(
        format!(
            "{what} `{name}` syncs automatically with {}",
            join(problems)
        ),
        primary,
    )
    .with_help(HELP)
    .with_fix(fix)
}

/// How safe it is to add `selfHeal: true` beside an explicit `prune` in an `automated` that
/// already turns automation on: safe, unless a comment on its lines, or just above it, speaks
/// about what the fix sets (`automated: # the DBA team heals by hand`): the fix would contradict
/// it.
fn completing(text: &str, entry: &Entry, automated: &Node) -> Applicability {
    let start = edit::line_start(text, entry.key.span.start as usize);
    let end = edit::line_end(
        text,
        (automated.span.end as usize).max(entry.key.span.end as usize),
    );
    let own = text.get(start..end).unwrap_or_default().lines();
    let above = text
        .get(..start)
        .unwrap_or_default()
        .lines()
        .rev()
        .take_while(|l| l.trim_start().starts_with('#'));
    let speaks_of_intent = own.chain(above).filter_map(comment).any(|c| {
        let c = c.to_lowercase();
        INTENT_WORDS.iter().any(|w| c.contains(w))
    });
    if speaks_of_intent {
        Applicability::Unsafe
    } else {
        Applicability::Safe
    }
}

/// Words of a comment that explains why pruning, self-healing or automation is off.
const INTENT_WORDS: &[&str] = &["prun", "heal", "drift", "manual", "by hand", "automat"];

/// The comment of a YAML line: from a `#` at the start or after a blank, outside quotes.
fn comment(line: &str) -> Option<&str> {
    let mut quote: Option<char> = None;
    let mut prev = ' ';
    for (i, c) in line.char_indices() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => quote = Some(c),
            None if c == '#' && (prev == ' ' || prev == '\t') => return Some(&line[i + 1..]),
            None => {}
        }
        prev = c;
    }
    None
}

/// A value Argo CD's ApplicationSet controller fills in (`'{{.prune}}'`): unknown here.
fn is_templated(v: &Node) -> bool {
    v.scalar_text().is_some_and(|s| s.contains("{{"))
}

fn join(parts: &[String]) -> String {
    match parts {
        [] => String::new(),
        [a] => a.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

fn owned(lines: &[&str]) -> Vec<String> {
    lines.iter().map(|s| (*s).to_string()).collect()
}

fn nested(key: &str, body: &[&str]) -> Vec<String> {
    let mut v = vec![format!("{key}:")];
    v.extend(body.iter().map(|l| format!("  {l}")));
    v
}

/// Adds `key` to `map`: `block` lines (the first is `key:`) in a block map, or
/// `key: flow` in a flow map.
fn add_entry(
    text: &str,
    map: &Node,
    key: &str,
    block: &[impl AsRef<str>],
    flow: &str,
) -> Option<Vec<Edit>> {
    if !matches!(map.value, Value::Map(_)) {
        return None;
    }
    if map.flow() {
        return edit::append_to_map(text, map, &[format!("{key}: {flow}")]);
    }
    let lines: Vec<String> = block.iter().map(|l| l.as_ref().to_string()).collect();
    edit::append_to_map(text, map, &lines)
}

#[cfg(test)]
mod tests {
    use super::comment;

    #[test]
    fn comments_outside_quotes() {
        assert_eq!(comment("prune: false # by hand"), Some(" by hand"));
        assert_eq!(comment("# whole line"), Some(" whole line"));
        assert_eq!(comment("name: 'a # b'"), None);
        assert_eq!(comment("url: http://x/#frag"), None);
        assert_eq!(comment("k: \"x\" # c"), Some(" c"));
    }
}
