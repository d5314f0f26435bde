//! What a rendering may still spend on the values functions build, and the guard of every walk
//! over a value (`toJson`, `toYaml`, `deepCopy`, `%v`, comparisons): a depth limit, a check
//! for a map that contains itself, and the bytes the walk produces or visits.

use std::collections::HashSet;
use std::rc::Rc;

use crate::value::Value;

/// What one value costs in the budget (a list item, a copied node, a compared node).
pub(crate) const VALUE_BYTES: usize = std::mem::size_of::<Value>();

/// How deep a walk goes into a value. Go has no such limit, but data is never this deep, and
/// each level is a stack frame here.
pub(crate) const MAX_VALUE_DEPTH: usize = 1000;

/// Below this depth a walk does not look for cycles: a cycle makes the path grow without end,
/// so it is still found, and shallow values (all real ones) cost no hashing.
const CYCLE_CHECK_FROM: usize = 32;

/// Why a walk stopped.
#[derive(Debug)]
pub(crate) enum Stop {
    /// The value cannot be written or copied: a map that contains itself, a NaN in JSON. What
    /// Go's function returns as its error (and a Sprig function may turn into empty text).
    Value(String),
    /// Past the byte budget or the depth limit: the message says which. Rendering stops.
    Budget(String),
}

/// Go's `encoding/json` message for a map that contains itself.
pub(crate) const CYCLE: &str =
    "json: unsupported value: encountered a cycle via map[string]interface {}";

/// Bytes that functions may still build in one rendering.
#[derive(Debug, Clone)]
pub(crate) struct Budget {
    limit: usize,
    used: usize,
}

impl Budget {
    pub fn new(limit: usize) -> Self {
        Budget { limit, used: 0 }
    }

    pub fn used(&self) -> usize {
        self.used
    }

    /// Counts `bytes` about to be built; an error, and nothing counted, when they do not fit.
    pub fn charge(&mut self, bytes: usize) -> Result<(), Stop> {
        match self.used.checked_add(bytes) {
            Some(total) if total <= self.limit => {
                self.used = total;
                Ok(())
            }
            _ => Err(Stop::Budget(format!(
                "functions built more than {} bytes",
                self.limit
            ))),
        }
    }
}

/// One walk over a value.
pub(crate) struct Walk<'b> {
    budget: &'b mut Budget,
    depth: usize,
    /// Maps on the current path, past [`CYCLE_CHECK_FROM`].
    maps: HashSet<usize>,
}

impl<'b> Walk<'b> {
    pub fn new(budget: &'b mut Budget) -> Self {
        Walk {
            budget,
            depth: 0,
            maps: HashSet::new(),
        }
    }

    pub fn charge(&mut self, bytes: usize) -> Result<(), Stop> {
        self.budget.charge(bytes)
    }

    /// Steps into `v` (a list or a map whose items are walked next); [`Walk::leave`] steps out.
    pub fn enter(&mut self, v: &Value) -> Result<(), Stop> {
        self.depth += 1;
        if self.depth > MAX_VALUE_DEPTH {
            return Err(Stop::Budget(format!(
                "a value nested deeper than {MAX_VALUE_DEPTH} levels"
            )));
        }
        self.budget.charge(VALUE_BYTES)?;
        if let Value::Map(m) = v {
            if self.depth > CYCLE_CHECK_FROM && !self.maps.insert(map_id(m)) {
                return Err(Stop::Value(CYCLE.into()));
            }
        }
        Ok(())
    }

    pub fn leave(&mut self, v: &Value) {
        if let Value::Map(m) = v {
            if self.depth > CYCLE_CHECK_FROM {
                self.maps.remove(&map_id(m));
            }
        }
        self.depth -= 1;
    }
}

fn map_id(m: &crate::value::MapRef) -> usize {
    Rc::as_ptr(m).cast::<()>() as usize
}

/// Runs `f` with enough stack: a deep recursion continues on a new stack segment on the heap
/// instead of overflowing the thread's (rendering runs on threads with small stacks).
#[inline]
pub(crate) fn with_stack<R>(f: impl FnOnce() -> R) -> R {
    // Debug builds' frames are large: the red zone covers a level of any recursion here, and
    // dropping a parsed template as deep as the parser allows.
    stacker::maybe_grow(1 << 20, 8 << 20, f)
}
