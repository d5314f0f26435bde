//! Which Argo CD objects each Application manages (app-of-apps), and which are live.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use rustc_hash::{FxHashMap, FxHashSet};

use super::{App, Location, Managed, Resolver, SourceKind};
use crate::model::Repository;
use crate::model::is_argocd_kind;
use crate::model::paths::join;

/// The Argo CD documents each Application's document manages: those in the files its
/// directory and kustomize sources read. Each shared file list is looked at once, and a
/// document whose sources give one set keeps that set, shared with the others that give it.
fn managed_sets(repo: &Repository, apps: &[App]) -> HashMap<usize, Managed> {
    let mut of_list: FxHashMap<*const crate::source::FileId, Managed> = FxHashMap::default();
    let mut per_doc: FxHashMap<usize, Vec<Managed>> = FxHashMap::default();
    for app in apps {
        for s in &app.sources {
            if matches!(s.kind, SourceKind::Helm | SourceKind::Chart) || s.files.is_empty() {
                continue;
            }
            let set = of_list.entry(s.files.as_ptr()).or_insert_with(|| {
                let mut docs: Vec<usize> = s
                    .files
                    .iter()
                    .flat_map(|&f| repo.file_doc_range(f))
                    .filter(|&i| is_argocd_kind(repo.docs[i].kind))
                    .collect();
                docs.sort_unstable();
                docs.dedup();
                docs.into()
            });
            if set.is_empty() {
                continue;
            }
            let sets = per_doc.entry(app.doc).or_default();
            if !sets.iter().any(|s| Arc::ptr_eq(s, set)) {
                sets.push(set.clone());
            }
        }
    }
    per_doc
        .into_iter()
        .map(|(doc, mut sets)| {
            let set = if sets.len() == 1 {
                sets.swap_remove(0)
            } else {
                let mut union: Vec<usize> = sets.iter().flat_map(|s| s.iter().copied()).collect();
                union.sort_unstable();
                union.dedup();
                union.into()
            };
            (doc, set)
        })
        .collect()
}

/// The documents another document manages. A set shared by two documents or more is all
/// managed by another; one held by a single document, all but that document.
fn managed_by_other(manages: &HashMap<usize, Managed>) -> FxHashSet<usize> {
    let mut holders: FxHashMap<*const usize, (&Managed, usize, usize)> = FxHashMap::default();
    for (&from, set) in manages {
        holders
            .entry(set.as_ptr())
            .and_modify(|h| h.2 += 1)
            .or_insert((set, from, 1));
    }
    let mut out = FxHashSet::default();
    for (set, holder, count) in holders.into_values() {
        out.extend(set.iter().copied().filter(|&d| count > 1 || d != holder));
    }
    out
}

impl<'p> Resolver<'p> {
    /// App-of-apps edges and liveness.
    pub(super) fn liveness(&mut self) {
        let repo = self.repo;
        let manages = managed_sets(repo, &self.model.apps);
        let argo_docs: Vec<usize> = (0..repo.docs.len())
            .filter(|&i| is_argocd_kind(repo.docs[i].kind))
            .collect();
        let live: HashSet<usize> = if self.opts.roots.is_empty() {
            let managed_by_other = managed_by_other(&manages);
            self.model.roots = argo_docs
                .iter()
                .copied()
                .filter(|d| !managed_by_other.contains(d))
                .collect();
            argo_docs.into_iter().collect()
        } else {
            let roots: FxHashSet<String> =
                self.opts.roots.iter().filter_map(|r| join("", r)).collect();
            let mut live = HashSet::new();
            let mut stack: Vec<usize> = argo_docs
                .into_iter()
                .filter(|&i| roots.contains(&repo.source(repo.docs[i].file).path))
                .collect();
            self.model.roots.clone_from(&stack);
            // A set shared by many documents is pushed once: its members are then all live.
            let mut pushed: FxHashSet<*const usize> = FxHashSet::default();
            while let Some(d) = stack.pop() {
                if live.insert(d)
                    && let Some(set) = manages.get(&d)
                    && pushed.insert(set.as_ptr())
                {
                    stack.extend(set.iter().copied());
                }
            }
            live
        };
        // A chart no Application installs is a root of what it renders; one an Application
        // installs was rendered with that Application's values, not as a root.
        // (Folder → the documents of the Applications installing it; kustomizations that
        // install `argocd-apps` count too.) An install by what the folder itself renders (a
        // self-managed bootstrap) does not make it less of a root.
        let mut installed: FxHashMap<&str, FxHashSet<usize>> = FxHashMap::default();
        for a in &self.model.apps {
            for s in a.sources.iter().filter(|s| s.kind == SourceKind::Helm) {
                if let Location::InRepo(d) = &s.location {
                    installed.entry(d.as_str()).or_default().insert(a.doc);
                }
            }
        }
        for (d, docs) in &self.kustomize_installs {
            installed.entry(d.as_str()).or_default().extend(docs);
        }
        let installed_by_other = |dir: &str, manager: usize| {
            installed
                .get(dir)
                .is_some_and(|docs| docs.iter().any(|&d| d != manager))
        };
        let mut live = live;
        for o in &self.model.rendered {
            if o.standalone
                && !installed_by_other(&o.chart_dir, o.manager_doc)
                && live.insert(o.manager_doc)
            {
                self.model.roots.push(o.manager_doc);
            }
        }
        let mut seen = FxHashSet::default();
        let not_rendered = std::mem::take(&mut self.model.not_rendered);
        self.model.not_rendered = not_rendered
            .into_iter()
            .filter(|n| !(n.standalone && installed_by_other(&n.chart_dir, n.manager_doc)))
            .filter(|n| seen.insert(n.message.clone()))
            .collect();
        for app in &mut self.model.apps {
            app.live = live.contains(&app.doc);
        }
        self.model.manages = manages;
        self.model.live = live;
    }
}
