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

/// Tarjan's algorithm, iterative; components in discovery order, each sorted. Documents that
/// share one set (thousands of Applications of one folder) point at one node standing for it,
/// which points at its members: the walk is linear in documents plus distinct sets, not in the
/// (document, member) pairs, and those set nodes are dropped from the components.
fn strongly_connected(edges: &HashMap<usize, Managed>) -> Vec<BTreeSet<usize>> {
    let mut nodes: BTreeSet<usize> = edges.keys().copied().collect();
    let mut set_node_of: HashMap<*const usize, usize> = HashMap::new();
    let mut distinct_sets: Vec<&[usize]> = Vec::new();
    for set in edges.values() {
        if let std::collections::hash_map::Entry::Vacant(e) = set_node_of.entry(set.as_ptr()) {
            e.insert(distinct_sets.len());
            distinct_sets.push(set);
            nodes.extend(set.iter().copied());
        }
    }
    let first_set_node = nodes.last().map_or(0, |&n| n + 1);
    let set_nodes: Vec<usize> = (0..distinct_sets.len())
        .map(|k| first_set_node + k)
        .collect();
    let out_of = |v: usize| -> &[usize] {
        if v >= first_set_node {
            distinct_sets[v - first_set_node]
        } else {
            edges.get(&v).map_or(&[][..], |s| {
                std::slice::from_ref(&set_nodes[set_node_of[&s.as_ptr()]])
            })
        }
    };
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
                    if w < first_set_node {
                        comp.insert(w);
                    }
                    if w == v {
                        break;
                    }
                }
                if !comp.is_empty() {
                    out.push(comp);
                }
            }
        }
    }
    out.sort();
    out
}

/// The shortest cycle from `start` back to it inside `scc` (breadth-first), without `start`
/// repeated at the end. A shared set walked from a document other than `start` is not walked
/// again: all its members are then reached, and `start` is not among them.
fn shortest_cycle(
    edges: &HashMap<usize, Managed>,
    start: usize,
    scc: &BTreeSet<usize>,
) -> Vec<usize> {
    let mut prev: HashMap<usize, usize> = HashMap::new();
    let mut walked: HashSet<*const usize> = HashSet::new();
    let mut queue = std::collections::VecDeque::from([start]);
    while let Some(v) = queue.pop_front() {
        let Some(set) = edges.get(&v) else { continue };
        if v != start && !walked.insert(set.as_ptr()) {
            continue;
        }
        for &w in set.iter() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn edges(pairs: &[(usize, &Managed)]) -> HashMap<usize, Managed> {
        pairs.iter().map(|&(d, m)| (d, Arc::clone(m))).collect()
    }

    #[test]
    fn documents_sharing_a_set_form_one_component_without_the_set_node() {
        let folder: Managed = Arc::from(vec![0, 1, 2]);
        let e = edges(&[(0, &folder), (1, &folder), (2, &folder)]);
        assert_eq!(strongly_connected(&e), vec![BTreeSet::from([0, 1, 2])]);
    }

    #[test]
    fn a_shared_set_outside_the_cycle_leaves_singletons() {
        // 0 and 1 share the set {2, 3}; neither comes back.
        let leaves: Managed = Arc::from(vec![2, 3]);
        let e = edges(&[(0, &leaves), (1, &leaves)]);
        let comps = strongly_connected(&e);
        assert!(comps.iter().all(|c| c.len() == 1), "{comps:?}");
        assert_eq!(comps.len(), 4);
    }

    #[test]
    fn the_shortest_cycle_walks_past_a_set_already_walked() {
        // 0 → {1, 2}; 1 and 2 share {3}; 3 → {0}: the cycle is 0 → 1 → 3.
        let first: Managed = Arc::from(vec![1, 2]);
        let shared: Managed = Arc::from(vec![3]);
        let back: Managed = Arc::from(vec![0]);
        let e = edges(&[(0, &first), (1, &shared), (2, &shared), (3, &back)]);
        let scc = BTreeSet::from([0, 1, 2, 3]);
        assert_eq!(shortest_cycle(&e, 0, &scc), vec![0, 1, 3]);
    }

    #[test]
    fn a_start_sharing_its_set_still_finds_the_way_back() {
        let folder: Managed = Arc::from(vec![0, 1]);
        let e = edges(&[(0, &folder), (1, &folder)]);
        let scc = BTreeSet::from([0, 1]);
        assert_eq!(shortest_cycle(&e, 0, &scc), vec![0, 1]);
    }
}
