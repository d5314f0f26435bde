//! Name references (`nameReference` in kustomize's field specs, its `api/filters/nameref`):
//! once names have their prefixes, suffixes and hashes, every field that names a renamed object
//! of the referenced kind, in a namespace it can see, takes its new name.

use super::schema::{self, field_specs};
use super::{Object, select, string};
use crate::yaml::{Node, Value};

/// What a referrer may resolve to.
struct Target {
    group: String,
    kind: String,
    names: Vec<String>,
    namespace: Option<String>,
    original_namespace: Option<String>,
    cluster: bool,
}

pub(super) fn fix_references(objects: &mut [Object]) {
    // Nothing renamed and no namespace set: every reference already holds.
    let moved = objects.iter().any(|o| {
        o.names.len() > 1
            || o.namespace() != o.original_namespace.as_deref().filter(|n| !n.is_empty())
    });
    if !moved {
        return;
    }
    let targets: Vec<Target> = objects
        .iter()
        .map(|o| Target {
            group: o.group_version().0.to_string(),
            kind: o.kind().to_string(),
            names: o.names.clone(),
            namespace: o.namespace().map(str::to_string),
            original_namespace: o.original_namespace.clone(),
            cluster: schema::is_cluster_scoped(o.api_version(), o.kind()),
        })
        .collect();
    let mut by_kind: rustc_hash::FxHashMap<&str, Vec<usize>> = Default::default();
    for (i, t) in targets.iter().enumerate() {
        by_kind.entry(t.kind.as_str()).or_default().push(i);
    }
    // Per name reference, the objects of its kind (computed once: a build may hold thousands
    // of ConfigMaps, each a candidate for every referrer), and those renamed.
    let specs = &field_specs().name_reference;
    let of_spec: Vec<Candidates<'_>> = specs
        .iter()
        .map(|nr| {
            let all: Vec<(usize, &Target)> = by_kind
                .get(nr.kind.as_str())
                .into_iter()
                .flatten()
                .map(|&i| (i, &targets[i]))
                .filter(|(_, t)| nr.group.as_deref().is_none_or(|g| g == t.group))
                .collect();
            let renamed = all
                .iter()
                .copied()
                .filter(|(_, t)| t.names.len() > 1)
                .collect();
            Candidates { all, renamed }
        })
        .collect();
    for (r, o) in objects.iter_mut().enumerate() {
        let (api, kind) = (o.api_version().to_string(), o.kind().to_string());
        let (group, version) = select::split_api_version(&api);
        let (group, version) = (group.to_string(), version.to_string());
        let own_ns = o.namespace().map(str::to_string);
        let referrer_cluster = schema::is_cluster_scoped(&api, &kind);
        for (nr, candidates) in specs.iter().zip(&of_spec) {
            // An object never refers to itself.
            if candidates.all.iter().all(|(i, _)| *i == r) {
                continue;
            }
            let candidates = ForReferrer {
                of: candidates,
                referrer: r,
            };
            for fs in nr
                .fields
                .iter()
                .filter(|fs| fs.applies(&group, &version, &kind))
            {
                let span = o.root.span;
                super::tree::set_at(&mut o.root, &fs.path, false, span, &mut |n| {
                    rename(
                        n,
                        &candidates,
                        &nr.kind,
                        own_ns.as_deref(),
                        referrer_cluster,
                    );
                });
            }
        }
    }
}

/// The objects a reference of one kind may resolve to.
struct Candidates<'t> {
    all: Vec<(usize, &'t Target)>,
    /// Those with earlier names: the only ones a name alone can follow.
    renamed: Vec<(usize, &'t Target)>,
}

/// [`Candidates`] for one referrer: all but itself.
struct ForReferrer<'c, 't> {
    of: &'c Candidates<'t>,
    referrer: usize,
}

impl<'t> ForReferrer<'_, 't> {
    fn all(&self) -> impl Iterator<Item = &'t Target> + '_ {
        self.of
            .all
            .iter()
            .filter(|(i, _)| *i != self.referrer)
            .map(|(_, t)| *t)
    }

    fn renamed(&self) -> impl Iterator<Item = &'t Target> + '_ {
        self.of
            .renamed
            .iter()
            .filter(|(i, _)| *i != self.referrer)
            .map(|(_, t)| *t)
    }
}

/// Renames one reference: a name, or a `{name, namespace, kind}` subject.
fn rename(
    n: &mut Node,
    candidates: &ForReferrer<'_, '_>,
    kind: &str,
    own_ns: Option<&str>,
    referrer_cluster: bool,
) {
    if let Value::Seq(items) = &mut n.value {
        for item in items.iter_mut() {
            rename(item, candidates, kind, own_ns, referrer_cluster);
        }
        return;
    }
    match &n.value {
        Value::Scalar(_) => {
            if candidates.renamed().next().is_none() {
                return;
            }
            let Some(old) = n.as_str().map(str::to_string) else {
                return;
            };
            if let Some(t) = resolve(&old, candidates, own_ns, referrer_cluster) {
                let new = t.names.last().cloned().unwrap_or_default();
                *n = string(&new, n.span);
            }
        }
        Value::Map(_) => {
            // A binding's subject: name and namespace follow the object it names.
            if n.get_str("kind").is_some_and(|k| k != kind) {
                return;
            }
            let Some(old) = n.get_str("name").map(str::to_string) else {
                return;
            };
            let ns = n.get_str("namespace").map(str::to_string);
            let found: Vec<&Target> = candidates
                .all()
                .filter(|t| t.names.contains(&old))
                .filter(|t| {
                    let wanted = ns.as_deref().or(own_ns).unwrap_or("default");
                    ns.is_none() && referrer_cluster
                        || t.namespace.as_deref().unwrap_or("default") == wanted
                        || t.original_namespace.as_deref().unwrap_or("default") == wanted
                })
                .collect();
            let [t] = found.as_slice() else {
                return;
            };
            let span = n.span;
            let new = t.names.last().cloned().unwrap_or_default();
            super::tree::set_key(n, "name", string(&new, span));
            if let Some(tns) = &t.namespace {
                super::tree::set_key(n, "namespace", string(tns, span));
            }
        }
        Value::Seq(_) => {}
    }
}

/// The one renamed object that `name` (one of its earlier names) designates from namespace
/// `ns`; `None` when none or several do.
fn resolve<'t>(
    name: &str,
    candidates: &ForReferrer<'_, 't>,
    ns: Option<&str>,
    any_namespace: bool,
) -> Option<&'t Target> {
    let named: Vec<&Target> = candidates
        .renamed()
        .filter(|t| t.names[..t.names.len() - 1].iter().any(|n| n == name))
        .collect();
    let visible: Vec<&Target> = named
        .iter()
        .copied()
        .filter(|t| {
            t.cluster
                || any_namespace
                || t.namespace.as_deref().unwrap_or("default") == ns.unwrap_or("default")
        })
        .collect();
    let mut news: Vec<&str> = visible
        .iter()
        .filter_map(|t| t.names.last().map(String::as_str))
        .collect();
    news.dedup();
    (news.len() == 1).then(|| visible[0])
}
