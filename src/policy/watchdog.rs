//! The last resort for a user policy that regorus cannot stop: its time limit is checked
//! between evaluation steps, and nothing bounds its memory, so one builtin call on a large
//! value (a deep comparison, a serialisation) can run for minutes, and a chain of them can
//! double a string until the process aborts. A thread watches the user policies' evaluations
//! in flight: past [`HARD_LIMIT_FACTOR`] times the time limit, or when the process's resident
//! memory grows by more than [`MEMORY_BUDGET`] since the first of them while one is running,
//! the run stops with exit code 2 and a message naming the rule, its `.rego` line and the
//! document. The evaluating thread cannot be interrupted, so the run cannot go on; this only
//! makes the end clear and bounded instead of a hang, an abort or the machine's memory.

use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::{Duration, Instant};

/// Resident memory an evaluation may add to the process (measured while one is running).
pub const MEMORY_BUDGET: u64 = 1 << 30;

/// An evaluation still running at this many times its time limit cannot be stopped.
pub const HARD_LIMIT_FACTOR: u32 = 4;

/// How often evaluations and memory are looked at: at 5 GB/s of allocation, 125 MB late.
const POLL: Duration = Duration::from_millis(25);

/// An evaluation in flight.
struct Evaluation {
    /// `policy rule `data.main.deny` (policy/p.rego:3) on apps/a.yaml`.
    what: String,
    started: Instant,
    limit: Duration,
}

#[derive(Default)]
struct Watched {
    running: BTreeMap<u64, Evaluation>,
    next: u64,
}

static WATCHED: Mutex<Watched> = Mutex::new(Watched {
    running: BTreeMap::new(),
    next: 0,
});

/// Keeps an evaluation watched until dropped.
pub struct Watch(u64);

impl Drop for Watch {
    fn drop(&mut self) {
        lock().running.remove(&self.0);
    }
}

fn lock() -> std::sync::MutexGuard<'static, Watched> {
    WATCHED.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Watches an evaluation (`what` names it in the message) whose time limit is `limit`.
pub fn watch(what: String, limit: Duration) -> Watch {
    static STARTED: OnceLock<()> = OnceLock::new();
    STARTED.get_or_init(|| {
        let baseline = resident_bytes();
        let _ = std::thread::Builder::new()
            .name("policy-watchdog".into())
            .spawn(move || run(baseline));
    });
    let mut w = lock();
    let id = w.next;
    w.next += 1;
    w.running.insert(
        id,
        Evaluation {
            what,
            started: Instant::now(),
            limit,
        },
    );
    Watch(id)
}

fn run(mut baseline: Option<u64>) {
    loop {
        std::thread::sleep(POLL);
        if lock().running.is_empty() {
            baseline = resident_bytes().or(baseline);
            continue;
        }
        let grown = baseline
            .zip(resident_bytes())
            .map(|(before, now)| now.saturating_sub(before));
        let w = lock();
        let stuck = w
            .running
            .values()
            .find(|e| e.started.elapsed() > e.limit.saturating_mul(HARD_LIMIT_FACTOR));
        if let Some(e) = stuck {
            stop(&format!(
                "{} is still running {:.0?} after it started, past its time limit of {:?} that regorus checks only between steps",
                e.what,
                e.started.elapsed(),
                e.limit
            ));
        }
        if let Some(grown) = grown.filter(|g| *g > MEMORY_BUDGET) {
            let what: Vec<&str> = w.running.values().map(|e| e.what.as_str()).collect();
            stop(&format!(
                "{} made the process grow by {} MiB, over the limit of {} MiB for policies",
                what.join(", or "),
                grown >> 20,
                MEMORY_BUDGET >> 20
            ));
        }
    }
}

/// What ends the run, given the message: the binary's handler prints it and exits with
/// code 2 (the library does not write to the terminal).
pub type Stop = fn(&str) -> !;

static ON_STOP: OnceLock<Stop> = OnceLock::new();

/// Sets what ends the run when an evaluation cannot be stopped; without it the process exits
/// with code 2 and no message.
pub fn on_stop(stop: Stop) {
    let _ = ON_STOP.set(stop);
}

/// Ends the run: the evaluating thread cannot be stopped, so nothing else can report.
fn stop(message: &str) -> ! {
    match ON_STOP.get() {
        Some(stop) => stop(message),
        None => std::process::exit(2),
    }
}

/// The process's resident memory (Linux: `VmRSS` of `/proc/self/status`; elsewhere `None`,
/// and only the time is watched).
fn resident_bytes() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    let kb: u64 = line
        .trim_start_matches("VmRSS:")
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()?;
    Some(kb * 1024)
}

#[cfg(test)]
mod tests {
    #[test]
    fn resident_memory_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            let rss = super::resident_bytes().expect("VmRSS");
            assert!(rss > 1 << 20, "{rss}");
        }
    }
}
