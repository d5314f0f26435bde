//! `argocd/app-of-apps-cycle`: an Application that manages itself through other Applications.

use std::collections::{BTreeSet, HashMap, HashSet};

use crate::diagnostic::{Finding, Severity};
use crate::model::argocd::resolve::Managed;
use crate::rules::{Context, FixAvailability, Reads, Rule, RuleMeta};

pub struct AppOfAppsCycle;

static META: RuleMeta = RuleMeta {
    id: "argocd/app-of-apps-cycle",
    summary: "an Application manages itself through a chain of app-of-apps Applications",
    default_severity: Severity::Error,
    fix: FixAvailability::None,
    reads: Reads::NONE,
    applies_to: &[],
    options: &[],
    docs: include_str!("app_of_apps_cycle.md"),
};

impl Rule for AppOfAppsCycle {
    fn meta(&self) -> &'static RuleMeta {
        &META
    }

    fn check_project(&self, cx: &Context<'_>) -> Vec<Finding> {
        let repo = cx.repo;
        let model = cx.model.argocd();
        let mut out = Vec::new();
        for scc in strongly_connected(&model.manages) {
            if scc.len() < 2 {
                // A root that manages itself is the supported self-managed bootstrap.
                continue;
            }
            let start = *scc.iter().next().unwrap_or(&0);
            let cycle = shortest_cycle(&model.manages, start, &scc);
            let name = |d: usize| {
                let doc = &repo.docs[d];
                format!(
                    "{} `{}`",
                    doc.k8s_kind().unwrap_or("Application"),
                    doc.name().unwrap_or("<unnamed>")
                )
            };
            let span_of = |d: usize| {
                let doc = &repo.docs[d];
                doc.root
                    .path(&["metadata", "name"])
                    .map_or(doc.anchor_span(), |n| n.span)
            };
            let chain: Vec<String> = cycle
                .iter()
                .chain(std::iter::once(&start))
                .map(|&d| repo.docs[d].name().unwrap_or("<unnamed>").to_string())
                .collect();
            let mut f = Finding::new(
                format!(
                    "{} manages itself through app-of-apps: {}",
                    name(start),
                    chain.join(" → ")
                ),
                span_of(start),
            )
            .with_help("Move the parent's manifest out of the folders its children render, so that app-of-apps forms a tree.");
            for (i, &d) in cycle.iter().enumerate() {
                let next = cycle.get(i + 1).copied().unwrap_or(start);
                if d != start {
                    f = f.with_label(span_of(d), format!("manages {}", name(next)));
                }
            }
            out.push(f);
        }
        out
    }
}

/// Tarjan's algorithm, iterative; components in discovery order, each sorted. Each document's
/// set is walked in place by a cursor (thousands of Applications of one folder share one).
fn strongly_connected(edges: &HashMap<usize, Managed>) -> Vec<BTreeSet<usize>> {
    let mut nodes: BTreeSet<usize> = edges.keys().copied().collect();
    let mut shared: HashSet<*const usize> = HashSet::new();
    for set in edges.values() {
        if shared.insert(set.as_ptr()) {
            nodes.extend(set.iter().copied());
        }
    }
    let out_of = |v: usize| edges.get(&v).map_or(&[][..], |s| &s[..]);
    let mut index: HashMap<usize, usize> = HashMap::new();
    let mut low: HashMap<usize, usize> = HashMap::new();
    let mut on_stack: BTreeSet<usize> = BTreeSet::new();
    let mut stack: Vec<usize> = Vec::new();
    let mut out = Vec::new();
    let mut counter = 0;
    for &root in &nodes {
        if index.contains_key(&root) {
            continue;
        }
        // A node and how many of its edges are still to follow, taken from the last.
        let mut work: Vec<(usize, usize)> = Vec::new();
        index.insert(root, counter);
        low.insert(root, counter);
        counter += 1;
        stack.push(root);
        on_stack.insert(root);
        work.push((root, out_of(root).len()));
        while let Some((v, pending)) = work.last_mut() {
            let v = *v;
            if *pending > 0 {
                *pending -= 1;
                let w = out_of(v)[*pending];
                if let std::collections::hash_map::Entry::Vacant(e) = index.entry(w) {
                    e.insert(counter);
                    low.insert(w, counter);
                    counter += 1;
                    stack.push(w);
                    on_stack.insert(w);
                    work.push((w, out_of(w).len()));
                } else if on_stack.contains(&w) {
                    let m = low[&v].min(index[&w]);
                    low.insert(v, m);
                }
                continue;
            }
            work.pop();
            if let Some((parent, _)) = work.last() {
                let m = low[parent].min(low[&v]);
                low.insert(*parent, m);
            }
            if low[&v] == index[&v] {
                let mut comp = BTreeSet::new();
                while let Some(w) = stack.pop() {
                    on_stack.remove(&w);
                    comp.insert(w);
                    if w == v {
                        break;
                    }
                }
                out.push(comp);
            }
        }
    }
    out.sort();
    out
}

/// The shortest cycle from `start` back to it inside `scc` (breadth-first), without `start`
/// repeated at the end.
fn shortest_cycle(
    edges: &HashMap<usize, Managed>,
    start: usize,
    scc: &BTreeSet<usize>,
) -> Vec<usize> {
    let mut prev: HashMap<usize, usize> = HashMap::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        for &w in edges.get(&v).into_iter().flat_map(|s| s.iter()) {
            if !scc.contains(&w) {
                continue;
            }
            if w == start && v != start {
                let mut path = vec![v];
                let mut cur = v;
                while let Some(&p) = prev.get(&cur) {
                    path.push(p);
                    cur = p;
                }
                path.reverse();
                return path;
            }
            if w != start && !prev.contains_key(&w) {
                prev.insert(w, v);
                queue.push_back(w);
            }
        }
    }
    vec![start]
}
