//! What a change does to what Argo CD deploys: the objects each Application deploys at a base
//! revision and at head ([`crate::model::argocd::manifests`]), paired by group, kind,
//! namespace and name, compared as Argo CD compares them ([`normalize`]), with each hunk of a
//! modified object followed back, through the provenance of its nodes (a values line, a
//! template line, a patch line, a written line), to the lines the change touched
//! ([`ChangedLines`]). `gitops-lint diff` reports it and the `diff/` rules judge it.

pub mod affected;
pub mod changed;
pub mod normalize;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use similar::{DiffTag, TextDiff};

pub use affected::Affected;
pub use changed::ChangedLines;
use normalize::Ignore;

use crate::model::argocd::manifests;
use crate::model::argocd::resolve::{App, SourceKind};
use crate::model::{DocKind, Model, Repository};
use crate::source::Span;
use crate::yaml::Node;
use crate::yaml::emit::{self, Line, Style};

/// How Argo CD tells objects apart: group, kind, namespace and name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectKey {
    /// `""` for the core group.
    pub group: String,
    pub kind: String,
    /// `""` for a cluster-scoped object.
    pub namespace: String,
    pub name: String,
}

/// An object as one revision deploys it.
#[derive(Debug)]
pub struct Object {
    pub api_version: String,
    /// The object, each node's span in its own revision's repository.
    pub node: Arc<Node>,
    /// Where it comes from, as `render` says it.
    pub origin: String,
    /// Its YAML as compared: keys sorted, what Argo CD ignores left out.
    lines: Vec<Line>,
    /// The other spans that wrote a scalar, by its span ([`manifests::Rendered::also`]).
    also: Vec<(Span, Vec<Span>)>,
}

impl Object {
    /// Every span that wrote `line`: its node's, and the others that wrote the same scalar.
    fn spans_of<'a>(&'a self, line: &'a Line) -> impl Iterator<Item = Span> + 'a {
        std::iter::once(line.span).chain(
            self.also
                .iter()
                .filter(move |(s, _)| *s == line.span)
                .flat_map(|(_, more)| more.iter().copied()),
        )
    }
}

impl Object {
    /// The compared YAML.
    #[must_use]
    pub fn text(&self) -> String {
        let mut s = String::new();
        for l in &self.lines {
            s.push_str(&l.text);
            s.push('\n');
        }
        s
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Change {
    Added,
    Removed,
    Modified,
}

impl Change {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Modified => "modified",
        }
    }
}

/// A changed line that produced a hunk: at head (a line the change added or rewrote), or at
/// base (a line it removed).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Cause {
    pub file: String,
    pub line: usize,
    pub at_base: bool,
}

/// One hunk of an object's unified diff and the changed lines that produced it (empty: not
/// traced).
#[derive(Debug)]
pub struct Hunk {
    /// The hunk as a unified diff prints it, from its `@@` line.
    pub text: String,
    pub causes: Vec<Cause>,
}

#[derive(Debug)]
pub struct ObjectChange {
    pub key: ObjectKey,
    /// At head, else at base.
    pub api_version: String,
    pub change: Change,
    pub base: Option<Object>,
    pub head: Option<Object>,
    /// The unified diff of its compared YAML, with `---`/`+++` lines.
    pub diff: String,
    pub hunks: Vec<Hunk>,
}

impl ObjectChange {
    /// Every hunk's causes, once each, in order.
    #[must_use]
    pub fn causes(&self) -> Vec<&Cause> {
        let set: BTreeSet<&Cause> = self.hunks.iter().flat_map(|h| &h.causes).collect();
        set.into_iter().collect()
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum AppStatus {
    Added,
    Removed,
    Modified,
    Unchanged,
    /// Nothing it deploys could be rendered here, at either revision; or what could be is
    /// unchanged, but not all of it could.
    NotRendered,
}

impl AppStatus {
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            AppStatus::Added => "added",
            AppStatus::Removed => "removed",
            AppStatus::Modified => "modified",
            AppStatus::Unchanged => "unchanged",
            AppStatus::NotRendered => "not-rendered",
        }
    }
}

/// An Application as one revision defines it.
#[derive(Clone, Debug)]
pub struct AppSide {
    /// `spec.syncPolicy.automated.prune`.
    pub prune: bool,
    /// Argo CD syncs it by itself: `spec.syncPolicy.automated` is a mapping whose `enabled`
    /// is not `false` (`SyncPolicy.IsAutomatedSyncEnabled` in argo-cd's
    /// `pkg/apis/application/v1alpha1/types.go`; `automated:` left empty is nil there).
    pub auto_sync: bool,
    /// `spec.syncPolicy.automated.enabled`, when written, else `spec.syncPolicy.automated` or
    /// `spec.syncPolicy`: where turning automated sync off shows.
    pub sync_policy_span: Option<Span>,
    /// A `resources-finalizer.argocd.argoproj.io` finalizer: deleting the Application
    /// deletes what it deployed.
    pub cascade: bool,
    /// `metadata.name` (of the template, for a generated one), in its revision's repository.
    pub name_span: Span,
    /// `path:line` of the document that defines it.
    pub defined_at: String,
}

#[derive(Debug)]
pub struct AppChange {
    pub name: String,
    pub status: AppStatus,
    pub base: Option<AppSide>,
    pub head: Option<AppSide>,
    /// Added, removed and modified objects, by key.
    pub objects: Vec<ObjectChange>,
    pub unchanged: usize,
    /// The changed lines of the document that defines it (its Application or
    /// ApplicationSet), at either revision.
    pub causes: Vec<Cause>,
    /// Some of its sources are not rendered here ([`Changes::not_rendered`]): what they
    /// deploy is not compared.
    pub partial: bool,
    /// Rendered and compared. False: it reads nothing the change touched (see
    /// [`affected`]), so it is `unchanged` (or `not-rendered`) without being rendered.
    pub affected: bool,
}

/// A source whose objects are not (all) known here: not compared.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct NotRendered {
    pub application: String,
    /// 1-based.
    pub source: usize,
    /// "helm `charts/x`", "plugin `.`"...
    pub what: String,
    pub reason: String,
}

/// What the change does to what Argo CD deploys.
#[derive(Debug, Default)]
pub struct Changes {
    pub apps: Vec<AppChange>,
    pub not_rendered: Vec<NotRendered>,
}

impl Changes {
    /// How many objects are added, removed or modified.
    #[must_use]
    pub fn changed_objects(&self) -> usize {
        self.apps.iter().map(|a| a.objects.len()).sum()
    }
}

/// One revision's Applications and what they deploy.
struct SideApp {
    side: AppSide,
    objects: BTreeMap<ObjectKey, Object>,
    not_rendered: Vec<NotRendered>,
    rendered_any: bool,
    causes: Vec<Cause>,
    /// The files it reads and is defined in (for `PATHS`).
    files: Vec<String>,
    /// Rendered and compared: the change can affect it ([`affected`]).
    affected: bool,
}

/// Kinds that are never namespaced (a written namespace is ignored by the API server).
const CLUSTER_SCOPED: &[&str] = &[
    "APIService",
    "CSIDriver",
    "ClusterIssuer",
    "ClusterRole",
    "ClusterRoleBinding",
    "ClusterSecretStore",
    "CustomResourceDefinition",
    "IngressClass",
    "MutatingWebhookConfiguration",
    "Namespace",
    "PersistentVolume",
    "PriorityClass",
    "RuntimeClass",
    "StorageClass",
    "ValidatingWebhookConfiguration",
];

fn text_at<'n>(n: &'n Node, path: &[&str]) -> Option<&'n str> {
    path.iter()
        .try_fold(n, |n, k| n.get(k))
        .and_then(Node::as_str)
}

/// `(group, kind, namespace, name)` of an object, its namespace defaulting to the
/// Application's destination.
fn key_of(node: &Node, default_ns: &str) -> (String, ObjectKey) {
    let api = text_at(node, &["apiVersion"]).unwrap_or("").to_string();
    let kind = text_at(node, &["kind"]).unwrap_or("").to_string();
    let group = api.rsplit_once('/').map_or("", |(g, _)| g).to_string();
    let namespace = if CLUSTER_SCOPED.contains(&kind.as_str()) {
        String::new()
    } else {
        text_at(node, &["metadata", "namespace"])
            .unwrap_or(default_ns)
            .to_string()
    };
    let name = text_at(node, &["metadata", "name"])
        .unwrap_or("")
        .to_string();
    (
        api,
        ObjectKey {
            group,
            kind,
            namespace,
            name,
        },
    )
}

/// The lines of `repo` a span covers: `(path, first, last)`, 1-based.
fn span_lines(repo: &Repository, span: Span) -> (String, usize, usize) {
    let f = repo.source(span.file);
    let first = f.line_col(span.start as usize).line;
    let last = f
        .line_col(
            (span.end as usize)
                .saturating_sub(1)
                .max(span.start as usize),
        )
        .line;
    (f.path.clone(), first, last.max(first))
}

fn causes_in(
    repo: &Repository,
    span: Span,
    at_base: bool,
    changed: &ChangedLines,
    out: &mut BTreeSet<Cause>,
) {
    let (file, first, last) = span_lines(repo, span);
    for line in changed.within(at_base, &file, (first, last)) {
        out.insert(Cause {
            file: file.clone(),
            line,
            at_base,
        });
    }
}

/// What one revision says of an Application before its objects: how it deletes and prunes,
/// where it is defined, the changed lines of its definition, the files it reads.
fn side_app(model: &Model<'_>, app: &App, at_base: bool, changed: &ChangedLines) -> SideApp {
    let repo = model.repo;
    let doc = &repo.docs[app.doc];
    let tree = repo.tree(doc);
    let spec = app.generated_spec.as_ref().or_else(|| match doc.kind {
        DocKind::Application => tree.get("spec"),
        _ => None,
    });
    let meta = match doc.kind {
        DocKind::ApplicationSet => tree
            .get("spec")
            .and_then(|s| s.get("template"))
            .and_then(|t| t.get("metadata")),
        _ => tree.get("metadata"),
    };
    let cascade = meta
        .and_then(|m| m.get("finalizers"))
        .and_then(Node::as_seq)
        .is_some_and(|f| {
            f.iter()
                .filter_map(Node::as_str)
                .any(|f| f.starts_with("resources-finalizer.argocd.argoproj.io"))
        });
    let policy = spec.and_then(|s| s.get("syncPolicy"));
    let automated = policy.and_then(|s| s.get("automated"));
    let prune = automated
        .and_then(|a| a.get("prune"))
        .and_then(Node::as_bool)
        .unwrap_or(false);
    let enabled = automated.and_then(|a| a.get("enabled"));
    let auto_sync = automated.is_some_and(|a| a.as_map().is_some())
        && enabled.and_then(Node::as_bool) != Some(false);
    let sync_policy_span = enabled.or(automated).or(policy).map(|n| n.span);
    let (path, first, _) = span_lines(repo, doc.span);
    let mut causes = BTreeSet::new();
    causes_in(repo, doc.span, at_base, changed, &mut causes);
    let mut files = vec![path.clone()];
    for s in &app.sources {
        files.extend(s.files.iter().map(|f| repo.source(*f).path.clone()));
    }
    SideApp {
        side: AppSide {
            prune,
            auto_sync,
            sync_policy_span,
            cascade,
            name_span: app.name_span,
            defined_at: format!("{path}:{first}"),
        },
        objects: BTreeMap::new(),
        not_rendered: Vec::new(),
        rendered_any: false,
        causes: causes.into_iter().collect(),
        files,
        affected: true,
    }
}

fn side(
    model: &Model<'_>,
    at_base: bool,
    changed: &ChangedLines,
    affected: &Affected,
) -> BTreeMap<String, SideApp> {
    let argo = model.argocd();
    let repo = model.repo;
    let mut apps: BTreeMap<String, SideApp> = BTreeMap::new();
    for o in manifests::collect_where(model, |a| affected.contains(&a.name)) {
        let app = &argo.apps[o.app_index];
        let default_ns = app
            .destination
            .as_ref()
            .and_then(|d| d.namespace.as_ref())
            .map_or(String::new(), |f| f.value.clone());
        let doc = &repo.docs[app.doc];
        let tree = repo.tree(doc);
        let spec = app.generated_spec.as_ref().or_else(|| match doc.kind {
            DocKind::Application => tree.get("spec"),
            _ => None,
        });
        let ignores = Ignore::of_spec(spec);
        let entry = apps
            .entry(o.app.clone())
            .or_insert_with(|| side_app(model, app, at_base, changed));
        if let Some(note) = &o.note {
            entry.not_rendered.push(NotRendered {
                application: o.app.clone(),
                source: o.source + 1,
                what: o.what.clone(),
                reason: note.clone(),
            });
        }
        entry.rendered_any |= o.note.is_none() || !o.objects.is_empty();
        for r in o.objects {
            let (api_version, key) = key_of(&r.object, &default_ns);
            let applicable: Vec<&Ignore> = ignores
                .iter()
                .filter(|i| i.applies(&key.group, &key.kind, &key.namespace, &key.name))
                .collect();
            let skip = |p: &[String]| normalize::ignored(p, &applicable);
            let lines = emit::lines(
                &r.object,
                &Style {
                    sort_keys: true,
                    skip: &skip,
                },
            );
            entry.objects.entry(key).or_insert(Object {
                api_version,
                node: r.object,
                origin: r.origin,
                lines,
                also: r.also,
            });
        }
    }
    // The others read nothing the change touched: not rendered, only what is known of
    // them without rendering.
    for app in argo
        .apps
        .iter()
        .filter(|a| a.live && !affected.contains(&a.name))
    {
        let entry = apps
            .entry(app.name.clone())
            .or_insert_with(|| side_app(model, app, at_base, changed));
        entry.affected = false;
        for (s, src) in app.sources.iter().enumerate() {
            match manifests::unrendered_note(src) {
                Some(note) => entry.not_rendered.push(NotRendered {
                    application: app.name.clone(),
                    source: s + 1,
                    what: manifests::describe(src),
                    reason: note.to_string(),
                }),
                None => entry.rendered_any |= src.kind != SourceKind::Ref,
            }
        }
    }
    apps
}

/// Compares what `base` and `head` deploy. `paths` (repository-relative, empty: all) keeps
/// the Applications defined in or reading a file under one of them. Only the `affected`
/// ones are rendered and compared; the others are `unchanged` (or `not-rendered`, for a
/// source that is never rendered here) without rendering, with [`AppChange::affected`]
/// false.
#[must_use]
pub fn compare(
    base: &Model<'_>,
    head: &Model<'_>,
    changed: &ChangedLines,
    paths: &[String],
    affected: &Affected,
) -> Changes {
    let mut b = side(base, true, changed, affected);
    let mut h = side(head, false, changed, affected);
    let names: BTreeSet<String> = b.keys().chain(h.keys()).cloned().collect();
    let under = |f: &str| {
        paths.is_empty()
            || paths.iter().any(|p| {
                p.is_empty() || f == p || f.starts_with(&format!("{}/", p.trim_end_matches('/')))
            })
    };
    let mut out = Changes::default();
    for name in names {
        let (bs, hs) = (b.remove(&name), h.remove(&name));
        let wanted = bs
            .iter()
            .chain(hs.iter())
            .any(|s| s.files.iter().any(|f| under(f)));
        if !wanted {
            continue;
        }
        let mut causes: BTreeSet<Cause> = BTreeSet::new();
        let mut not_rendered = BTreeSet::new();
        let rendered_any = bs.iter().chain(hs.iter()).any(|s| s.rendered_any);
        let app_affected = bs.iter().chain(hs.iter()).all(|s| s.affected);
        for s in bs.iter().chain(hs.iter()) {
            causes.extend(s.causes.iter().cloned());
        }
        // What is not rendered at head, or at base when head has no such source.
        if let Some(s) = &hs {
            not_rendered.extend(s.not_rendered.iter().cloned());
        }
        if let Some(s) = &bs {
            for n in &s.not_rendered {
                if !not_rendered
                    .iter()
                    .any(|h: &NotRendered| h.source == n.source)
                {
                    not_rendered.insert(n.clone());
                }
            }
        }
        let (base_side, head_side) = (
            bs.as_ref().map(|s| s.side.clone()),
            hs.as_ref().map(|s| s.side.clone()),
        );
        let (mut bo, mut ho) = (
            bs.map(|s| s.objects).unwrap_or_default(),
            hs.map(|s| s.objects).unwrap_or_default(),
        );
        let app_causes: Vec<Cause> = causes.into_iter().collect();
        let keys: BTreeSet<ObjectKey> = bo.keys().chain(ho.keys()).cloned().collect();
        // A generated ConfigMap or Secret whose content changed has a new name: the same object.
        let renamed = renamed_by_hash(&bo, &ho);
        let mut objects = Vec::new();
        let mut unchanged = 0;
        for key in keys {
            if renamed.values().any(|old| *old == key) {
                continue;
            }
            let o = bo.remove(renamed.get(&key).unwrap_or(&key));
            let n = ho.remove(&key);
            let change = match (&o, &n) {
                (Some(_), None) => Change::Removed,
                (None, Some(_)) => Change::Added,
                (Some(x), Some(y))
                    if x.lines
                        .iter()
                        .map(|l| &l.text)
                        .eq(y.lines.iter().map(|l| &l.text)) =>
                {
                    unchanged += 1;
                    continue;
                }
                (Some(_), Some(_)) => Change::Modified,
                (None, None) => continue,
            };
            let app_level = base_side.is_none() || head_side.is_none();
            objects.push(object_change(
                key,
                change,
                (o, n),
                (base.repo, head.repo),
                changed,
                app_level.then_some(&app_causes[..]),
            ));
        }
        let partial = !not_rendered.is_empty();
        let status = match (&base_side, &head_side) {
            _ if !rendered_any => AppStatus::NotRendered,
            // What was rendered is unchanged, but not everything was: no claim of "unchanged".
            _ if partial && objects.is_empty() => AppStatus::NotRendered,
            (None, Some(_)) => AppStatus::Added,
            (Some(_), None) => AppStatus::Removed,
            _ if objects.is_empty() => AppStatus::Unchanged,
            _ => AppStatus::Modified,
        };
        out.not_rendered.extend(not_rendered);
        out.apps.push(AppChange {
            name,
            status,
            base: base_side,
            head: head_side,
            objects,
            unchanged,
            causes: app_causes,
            partial,
            affected: app_affected,
        });
    }
    out
}

/// Generated ConfigMaps and Secrets that the change renamed: kustomize suffixes their names
/// with a hash of their content (`kustomize::build::is_name_hash`), so a changed one is removed under its old
/// name and added under a new one. Paired (head key → base key) when one object of a kind,
/// namespace and name before the suffix is only at base and one only at head.
fn renamed_by_hash<T>(
    base: &BTreeMap<ObjectKey, T>,
    head: &BTreeMap<ObjectKey, T>,
) -> BTreeMap<ObjectKey, ObjectKey> {
    fn stem(k: &ObjectKey) -> Option<(&str, &str, &str, &str)> {
        if !k.group.is_empty() || !matches!(k.kind.as_str(), "ConfigMap" | "Secret") {
            return None;
        }
        let (stem, suffix) = k.name.rsplit_once('-')?;
        crate::model::kustomize::build::is_name_hash(suffix).then_some((
            k.group.as_str(),
            k.kind.as_str(),
            k.namespace.as_str(),
            stem,
        ))
    }
    type Stem<'k> = (&'k str, &'k str, &'k str, &'k str);
    fn only<'k, T>(
        this: &'k BTreeMap<ObjectKey, T>,
        other: &BTreeMap<ObjectKey, T>,
    ) -> BTreeMap<Stem<'k>, Vec<ObjectKey>> {
        let mut by_stem: BTreeMap<Stem<'k>, Vec<ObjectKey>> = BTreeMap::new();
        for k in this.keys().filter(|k| !other.contains_key(*k)) {
            if let Some(s) = stem(k) {
                by_stem.entry(s).or_default().push(k.clone());
            }
        }
        by_stem
    }
    let (removed, added) = (only(base, head), only(head, base));
    added
        .into_iter()
        .filter_map(
            |(s, new)| match (new.as_slice(), removed.get(&s).map(Vec::as_slice)) {
                ([new], Some([old])) => Some((new.clone(), old.clone())),
                _ => None,
            },
        )
        .collect()
}

/// The diff of one object and the causes of each hunk. `fallback`: the causes of an
/// Application added or removed as a whole, for hunks no node traces.
fn object_change(
    key: ObjectKey,
    change: Change,
    (base, head): (Option<Object>, Option<Object>),
    (base_repo, head_repo): (&Repository, &Repository),
    changed: &ChangedLines,
    fallback: Option<&[Cause]>,
) -> ObjectChange {
    let old = base.as_ref().map(Object::text).unwrap_or_default();
    let new = head.as_ref().map(Object::text).unwrap_or_default();
    let api_version = head
        .as_ref()
        .or(base.as_ref())
        .map(|o| o.api_version.clone())
        .unwrap_or_default();
    let label = format!(
        "{}/{}/{}",
        key.kind,
        if key.namespace.is_empty() {
            "-"
        } else {
            &key.namespace
        },
        key.name
    );
    let td = TextDiff::from_lines(&old, &new);
    let mut ud = td.unified_diff();
    ud.context_radius(3)
        .header(&format!("a/{label}"), &format!("b/{label}"));
    let mut diff = ud.to_string();
    if !diff.is_empty() && !diff.ends_with('\n') {
        diff.push('\n');
    }
    let mut hunks = Vec::new();
    for hunk in ud.iter_hunks() {
        let mut causes = BTreeSet::new();
        for op in hunk.ops() {
            let (tag, old_range, new_range) = op.as_tag_tuple();
            if matches!(tag, DiffTag::Delete | DiffTag::Replace) {
                if let Some(o) = &base {
                    for l in o.lines.get(old_range.clone()).unwrap_or_default() {
                        for span in o.spans_of(l) {
                            causes_in(base_repo, span, true, changed, &mut causes);
                        }
                    }
                }
            }
            if matches!(tag, DiffTag::Insert | DiffTag::Replace) {
                if let Some(n) = &head {
                    for l in n.lines.get(new_range.clone()).unwrap_or_default() {
                        for span in n.spans_of(l) {
                            causes_in(head_repo, span, false, changed, &mut causes);
                        }
                    }
                }
            }
        }
        // A line the change rewrote is changed at both revisions: its head line says it. Lines
        // at base stay for the files where the change only removed lines.
        let at_head: BTreeSet<String> = causes
            .iter()
            .filter(|c| !c.at_base)
            .map(|c| c.file.clone())
            .collect();
        let mut causes: Vec<Cause> = causes
            .into_iter()
            .filter(|c| !c.at_base || !at_head.contains(&c.file))
            .collect();
        if causes.is_empty() {
            causes = fallback.map(<[Cause]>::to_vec).unwrap_or_default();
        }
        let mut text = hunk.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        hunks.push(Hunk { text, causes });
    }
    ObjectChange {
        key,
        api_version,
        change,
        base,
        head,
        diff,
        hunks,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(kind: &str, name: &str) -> ObjectKey {
        ObjectKey {
            group: String::new(),
            kind: kind.into(),
            namespace: "ns".into(),
            name: name.into(),
        }
    }

    #[test]
    fn a_generated_config_map_renamed_by_its_hash_is_the_same_object() {
        let base: BTreeMap<ObjectKey, ()> = [
            key("ConfigMap", "settings-89bgkhh625"),
            key("Secret", "creds-t2m4k5hd8b"),
            key("ConfigMap", "plain"),
            key("ConfigMap", "twice-89bgkhh625"),
            key("ConfigMap", "twice-2gh9867t5b"),
        ]
        .into_iter()
        .map(|k| (k, ()))
        .collect();
        let head: BTreeMap<ObjectKey, ()> = [
            key("ConfigMap", "settings-2gh9867t5b"),
            key("Secret", "creds-t2m4k5hd8b"),
            key("ConfigMap", "other"),
            key("ConfigMap", "twice-hkm24567bc"),
            // Not kustomize's alphabet (`a`, `0`): a name, not a hash.
            key("ConfigMap", "plain-a0a0a0a0a0"),
        ]
        .into_iter()
        .map(|k| (k, ()))
        .collect();
        let pairs = renamed_by_hash(&base, &head);
        // `twice` has two at base: which one became the new one is not known.
        assert_eq!(
            pairs.into_iter().collect::<Vec<_>>(),
            vec![(
                key("ConfigMap", "settings-2gh9867t5b"),
                key("ConfigMap", "settings-89bgkhh625")
            )]
        );
    }
}
