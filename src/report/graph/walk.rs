//! The walk of the app-of-apps tree that the text tree and the HTML page share: what is
//! written where, each format writing its parts its way ([`TreeOut`]).

use std::collections::{HashMap, HashSet, VecDeque};

use super::{Graph, MAX_DEPTH, MAX_LISTED_AGAIN, Object};

/// An object of a tree whose managed objects are being written.
struct Frame<'g> {
    object: &'g Object<'g>,
    depth: usize,
    /// The next of `object.manages`.
    next: usize,
    /// Managed objects listed in one line because they are shown elsewhere.
    listed: usize,
    /// Those counted instead: shown above, or continued below.
    more_above: usize,
    more_below: usize,
}

impl<'g> Frame<'g> {
    fn new(object: &'g Object<'g>, depth: usize) -> Self {
        Frame {
            object,
            depth,
            next: 0,
            listed: 0,
            more_above: 0,
            more_below: 0,
        }
    }
}

/// What a walk of the tree writes: the text tree and the HTML page each write its parts
/// their way ([`Walk`] decides what is written where).
pub(super) trait TreeOut<'g> {
    /// An object walked here, at `depth`: its line and what it is made of; what it manages
    /// follows, until [`TreeOut::end`].
    fn node(&mut self, o: &'g Object<'g>, depth: usize, label: &str);
    /// The end of what the object at `depth` manages, with how many more are shown above
    /// and continued below.
    fn end(&mut self, depth: usize, above: usize, below: usize);
    /// An object shown elsewhere: above (`seen`), or continued below.
    fn reference(&mut self, o: &Object<'_>, depth: usize, label: &str, seen: bool);
    /// The object at `depth` manages the same large set as `first`, walked there.
    fn same_set(&mut self, count: usize, first: &Object<'_>, depth: usize);
    /// Before the first tree continued below.
    fn continued_heading(&mut self);
}

/// The walk of the tree both formats share: roots depth first (an explicit stack: a chain of
/// app-of-apps is as deep as the repository is large), each object once, what lies deeper
/// than [`MAX_DEPTH`] continued after, a large set shared by many objects walked once.
pub(super) struct Walk<'g> {
    g: &'g Graph<'g>,
    /// Object id → its index in `g.objects`.
    index: HashMap<usize, usize>,
    pub(super) seen: HashSet<usize>,
    /// Objects managed deeper than [`MAX_DEPTH`], written after the current trees.
    deferred: VecDeque<usize>,
    deferred_ids: HashSet<usize>,
    /// Large managed sets already walked (by `ManagesOut::index`), with the object whose
    /// set it is.
    walked: HashMap<usize, &'g Object<'g>>,
}

impl<'g> Walk<'g> {
    pub(super) fn new(g: &'g Graph<'g>) -> Self {
        Walk {
            g,
            index: g
                .objects
                .iter()
                .enumerate()
                .map(|(i, o)| (o.id, i))
                .collect(),
            seen: HashSet::new(),
            deferred: VecDeque::new(),
            deferred_ids: HashSet::new(),
            walked: HashMap::new(),
        }
    }

    fn object(&self, id: usize) -> Option<&'g Object<'g>> {
        let g = self.g;
        self.index.get(&id).map(|&i| &g.objects[i])
    }

    /// Writes `id` and what it manages.
    pub(super) fn tree(
        &mut self,
        out: &mut impl TreeOut<'g>,
        id: usize,
        depth: usize,
        label: &str,
    ) {
        let Some(o) = self.object(id) else {
            return;
        };
        if !self.seen.insert(id) {
            out.reference(o, depth, label, true);
            return;
        }
        out.node(o, depth, label);
        if self.walked_elsewhere(out, o, depth) {
            out.end(depth, 0, 0);
            return;
        }
        let mut stack = vec![Frame::new(o, depth)];
        while let Some(top) = stack.last_mut() {
            let (o, depth) = (top.object, top.depth);
            let Some(&m) = o.manages.set.get(top.next) else {
                let (above, below) = (top.more_above, top.more_below);
                stack.pop();
                out.end(depth, above, below);
                continue;
            };
            top.next += 1;
            if m == o.id {
                continue;
            }
            let Some(child) = self.object(m) else {
                continue;
            };
            let seen = self.seen.contains(&m);
            if seen || depth + 1 > MAX_DEPTH {
                if !seen && self.deferred_ids.insert(m) {
                    self.deferred.push_back(m);
                }
                if top.listed < MAX_LISTED_AGAIN {
                    top.listed += 1;
                    out.reference(child, depth + 1, "manages ", seen);
                } else if seen {
                    top.more_above += 1;
                } else {
                    top.more_below += 1;
                }
            } else {
                self.seen.insert(m);
                out.node(child, depth + 1, "manages ");
                if self.walked_elsewhere(out, child, depth + 1) {
                    out.end(depth + 1, 0, 0);
                } else {
                    stack.push(Frame::new(child, depth + 1));
                }
            }
        }
    }

    /// Whether `o` manages a large set that is walked under another object: then one line
    /// says so instead of walking it again (thousands of Applications of one folder each
    /// manage that folder's set). The first object with the set walks it.
    fn walked_elsewhere(
        &mut self,
        out: &mut impl TreeOut<'g>,
        o: &'g Object<'g>,
        depth: usize,
    ) -> bool {
        let m = &o.manages;
        if m.set.len() <= MAX_LISTED_AGAIN {
            return false;
        }
        let Some(first) = self.walked.get(&m.index) else {
            self.walked.insert(m.index, o);
            return false;
        };
        out.same_set(m.set.len(), first, depth);
        true
    }

    /// The trees of the objects managed deeper than [`MAX_DEPTH`], each from its top at
    /// `depth`.
    pub(super) fn continued(&mut self, out: &mut impl TreeOut<'g>, depth: usize) {
        let mut heading = true;
        while let Some(id) = self.deferred.pop_front() {
            if self.seen.contains(&id) {
                continue;
            }
            if heading {
                out.continued_heading();
                heading = false;
            }
            self.tree(out, id, depth, "");
        }
    }

    /// The objects no root reached, managers first, so that a cycle or a dead subtree is
    /// shown from its top.
    pub(super) fn unreached(&self) -> Vec<usize> {
        let mut rest: Vec<(bool, usize)> = self
            .g
            .objects
            .iter()
            .filter(|o| !self.seen.contains(&o.id))
            .map(|o| (o.manages.is_empty(), o.id))
            .collect();
        rest.sort_unstable();
        rest.into_iter().map(|(_, id)| id).collect()
    }
}
