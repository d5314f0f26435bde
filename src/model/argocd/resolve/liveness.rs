//! Which Argo CD objects each Application manages (app-of-apps), and which are live.

use std::collections::{BTreeSet, HashMap, HashSet};

use rustc_hash::{FxHashMap, FxHashSet};

use super::{Location, Resolver, SourceKind};
use crate::model::is_argocd_kind;
use crate::model::paths::join;

impl<'p> Resolver<'p> {
    /// App-of-apps edges and liveness.
    pub(super) fn liveness(&mut self) {
        let repo = self.repo;
        let mut manages: HashMap<usize, BTreeSet<usize>> = HashMap::new();
        for app in &self.model.apps {
            for s in &app.sources {
                if matches!(s.kind, SourceKind::Helm | SourceKind::Chart) {
                    continue;
                }
                for &f in &s.files {
                    let range = repo.file_doc_range(f);
                    for i in range {
                        if is_argocd_kind(repo.docs[i].kind) {
                            manages.entry(app.doc).or_default().insert(i);
                        }
                    }
                }
            }
        }
        let argo_docs: Vec<usize> = (0..repo.docs.len())
            .filter(|&i| is_argocd_kind(repo.docs[i].kind))
            .collect();
        let live: HashSet<usize> = if self.opts.roots.is_empty() {
            let mut managed_by_other: FxHashSet<usize> = FxHashSet::default();
            for (from, to) in &manages {
                managed_by_other.extend(to.iter().copied().filter(|d| d != from));
            }
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
            while let Some(d) = stack.pop() {
                if live.insert(d) {
                    stack.extend(manages.get(&d).into_iter().flatten().copied());
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
