//! Phase timings for `check --verbose`: each phase's wall time with the resident and peak
//! memory after it, and the time spent in each rule.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// One phase of a run: its wall time, and the resident and peak memory after it (Linux).
#[derive(Clone, Debug)]
pub struct Phase {
    pub name: &'static str,
    pub ms: f64,
    pub rss_mib: Option<f64>,
    pub peak_mib: Option<f64>,
}

/// Records phases when enabled; free otherwise.
pub(super) struct Timer {
    pub(super) enabled: bool,
    pub(super) last: Instant,
    pub(super) phases: Vec<Phase>,
    pub(super) rule_times: Vec<(&'static str, f64)>,
}

impl Timer {
    pub(super) fn new(enabled: bool) -> Timer {
        Timer {
            enabled,
            last: Instant::now(),
            phases: Vec::new(),
            rule_times: Vec::new(),
        }
    }

    pub(super) fn mark(&mut self, name: &'static str) {
        if !self.enabled {
            return;
        }
        let now = Instant::now();
        let (rss_mib, peak_mib) = memory_mib();
        self.phases.push(Phase {
            name,
            ms: now.duration_since(self.last).as_secs_f64() * 1000.0,
            rss_mib,
            peak_mib,
        });
        self.last = now;
    }
}

/// Resident and peak resident memory of this process in MiB, from `/proc/self/status`.
pub(super) fn memory_mib() -> (Option<f64>, Option<f64>) {
    let Ok(status) = std::fs::read_to_string("/proc/self/status") else {
        return (None, None);
    };
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map(|kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Adds the time since `started` (when timing) to a rule's total, in nanoseconds.
pub(super) fn add_elapsed(total: &AtomicU64, started: Option<Instant>) {
    if let Some(started) = started {
        let nanos = u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
        total.fetch_add(nanos, Ordering::Relaxed);
    }
}
