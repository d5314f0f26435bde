//! What renderings may spend: one template's limits, and the budget every rendering of a run
//! shares.

use std::sync::atomic::{AtomicU64, Ordering};

use gotmpl::{Limits, Usage};

/// Limits of one template's rendering. The largest template of kube-prometheus-stack and the
/// other prometheus-community charts takes 1,700 steps, prints 830 KB and builds 26 KB.
pub(super) const LIMITS: Limits = Limits {
    steps: 5_000_000,
    depth: 1000,
    output_bytes: 32 << 20,
    built_bytes: 64 << 20,
};

/// What all renderings of one run may spend together: one template's limits times the
/// renderings an ApplicationSet can ask for (a 10×10×10 matrix over one chart is 1000) would
/// be minutes and gigabytes. Those 44 charts together take 46,000 steps, print 5.5 MB and
/// build 360 KB.
const RUN_STEPS: u64 = 100_000_000;
const RUN_OUTPUT_BYTES: u64 = 512 << 20;
const RUN_BUILT_BYTES: u64 = 512 << 20;

/// What the renderings of one run may still spend (steps, output and built bytes), shared by
/// every rendering of the run, on every thread. Renderings running side by side may overrun it
/// by one template's limits each.
#[derive(Debug)]
pub struct RenderBudget {
    steps: AtomicU64,
    output_bytes: AtomicU64,
    built_bytes: AtomicU64,
}

impl Default for RenderBudget {
    fn default() -> Self {
        Self::new(RUN_STEPS, RUN_OUTPUT_BYTES, RUN_BUILT_BYTES)
    }
}

impl RenderBudget {
    #[must_use]
    pub fn new(steps: u64, output_bytes: u64, built_bytes: u64) -> Self {
        RenderBudget {
            steps: AtomicU64::new(steps),
            output_bytes: AtomicU64::new(output_bytes),
            built_bytes: AtomicU64::new(built_bytes),
        }
    }

    /// Whether nothing is left: later renderings are refused.
    #[must_use]
    pub fn is_spent(&self) -> bool {
        [&self.steps, &self.output_bytes, &self.built_bytes]
            .iter()
            .any(|c| c.load(Ordering::Relaxed) == 0)
    }

    /// One template's limits, lowered to what the run has left; `None` when it is spent.
    pub(super) fn limits(&self) -> Option<Limits> {
        if self.is_spent() {
            return None;
        }
        let left = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let bytes = |c: &AtomicU64, cap: usize| usize::try_from(left(c)).unwrap_or(cap).min(cap);
        Some(Limits {
            steps: left(&self.steps).min(LIMITS.steps),
            depth: LIMITS.depth,
            output_bytes: bytes(&self.output_bytes, LIMITS.output_bytes),
            built_bytes: bytes(&self.built_bytes, LIMITS.built_bytes),
        })
    }

    pub(super) fn spend(&self, used: &Usage) {
        let take = |c: &AtomicU64, n: u64| {
            let _ = c.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |v| {
                Some(v.saturating_sub(n))
            });
        };
        take(&self.steps, used.steps);
        take(&self.output_bytes, used.output_bytes as u64);
        take(&self.built_bytes, used.built_bytes as u64);
    }

    /// Spends `used`, what an earlier rendering of the same inputs spent, if the run has that
    /// much left; false (and nothing spent) otherwise. A rendering kept from an earlier run
    /// (the language server's render cache) is reused only when rendering it again would not
    /// have been stopped by this run's budget.
    pub fn reuse(&self, used: &Usage) -> bool {
        let left = |c: &AtomicU64| c.load(Ordering::Relaxed);
        let fits = !self.is_spent()
            && left(&self.steps) >= used.steps
            && left(&self.output_bytes) >= used.output_bytes as u64
            && left(&self.built_bytes) >= used.built_bytes as u64;
        if fits {
            self.spend(used);
        }
        fits
    }

    /// Why a rendering was refused or stopped when the run's budget is spent.
    #[must_use]
    pub fn spent_message() -> String {
        format!(
            "the rendering budget of the run is spent ({} million steps, {} MiB of output or {} MiB built by functions, over all charts)",
            RUN_STEPS / 1_000_000,
            RUN_OUTPUT_BYTES >> 20,
            RUN_BUILT_BYTES >> 20
        )
    }
}
