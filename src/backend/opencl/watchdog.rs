//! Watchdog-safe dispatch: a launch whose kernel could run longer than a
//! display driver allows (Windows' TDR kills GPU work after 2 s, macOS and
//! X servers with a watchdog do the same) is split into chunks of whole
//! work-groups along the dimension with the most groups, each enqueued with a global
//! offset, so that no single dispatch runs longer than the limit.
//!
//! The chunk size comes from the first chunk: a launch that has not been
//! seen before (same program, kernel, global and local size) first runs
//! 1/16 of its groups, timed by its profiling event, and the rest goes in
//! chunks sized to half the limit at that rate, never fewer groups than a
//! GPU has compute units (`chunk_groups`); the rate is kept, so a
//! repeated launch (a stream's next frame) is split without probing, and
//! each timed chunk refines it. Kernels find their data through
//! `get_global_id` or `GROUP_ID` (cl/common.cl), which include the offset,
//! so the output is the same bytes with and without chunking.

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use crate::backend::limit::{DispatchLimit, DISPLAY_DEFAULT};
use crate::backend::DeviceKind;

/// `CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV` (cl_ext.h, `cl_nv_device_attribute_query`):
/// whether the device has a run-time limit for kernels (it drives a display).
pub(super) const CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV: u32 = 0x4005;

/// What identifies a launch for its rate: program, kernel, global and
/// local sizes.
type LaunchKey = (usize, String, Vec<usize>, Vec<usize>);

/// A device's limit and the measured rates.
#[derive(Debug)]
pub(super) struct Watchdog {
    /// The device's own default (it drives a display, or not).
    display: bool,
    limit: Mutex<Option<Duration>>,
    /// Nanoseconds per group along the split dimension, per launch.
    rates: Mutex<HashMap<LaunchKey, f64>>,
}

thread_local! {
    /// Dispatches enqueued by this thread (every chunk counts).
    static DISPATCHES: Cell<u64> = const { Cell::new(0) };
}

/// Dispatches enqueued by the calling thread so far; the difference
/// around a call is what it dispatched.
pub fn dispatches_on_this_thread() -> u64 {
    DISPATCHES.with(Cell::get)
}

/// Counts `n` dispatches on this thread.
pub(super) fn count(n: u64) {
    DISPATCHES.with(|d| d.set(d.get() + n));
}

impl Watchdog {
    /// `display`: the device reports a kernel watchdog, or is an Apple GPU.
    pub(super) fn new(display: bool) -> Self {
        Watchdog {
            display,
            limit: Mutex::new(display.then_some(DISPLAY_DEFAULT)),
            rates: Mutex::new(HashMap::new()),
        }
    }

    /// Whether the device drives a display by the signs above.
    pub(super) fn drives_display(kind: DeviceKind, vendor: &str, nv_timeout: bool) -> bool {
        nv_timeout || (kind == DeviceKind::Gpu && vendor.to_ascii_lowercase().contains("apple"))
    }

    /// Sets the limit.
    pub(super) fn set(&self, limit: DispatchLimit) {
        let l = match limit {
            DispatchLimit::DeviceDefault => self.display.then_some(DISPLAY_DEFAULT),
            DispatchLimit::Off => None,
            DispatchLimit::Max(d) => Some(d),
        };
        *self.limit.lock().unwrap_or_else(|e| e.into_inner()) = l;
    }

    /// The limit in force.
    pub(super) fn limit(&self) -> Option<Duration> {
        *self.limit.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The known rate of a launch, in nanoseconds per group.
    pub(super) fn rate(&self, key: &LaunchKey) -> Option<f64> {
        self.rates
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(key)
            .copied()
    }

    /// Records a measured rate (the slower of the old and the new: a chunk
    /// that ran long must not be repeated at that size).
    pub(super) fn record(&self, key: LaunchKey, ns_per_group: f64) {
        let mut rates = self.rates.lock().unwrap_or_else(|e| e.into_inner());
        let r = rates.entry(key).or_insert(ns_per_group);
        *r = r.max(ns_per_group);
    }
}

/// Groups along the split dimension (slices) in the next chunk: the probe
/// (1/16 of all) while the rate is unknown, else as many as fit half the
/// limit at that rate; at most what is left, and at least `floor` (1 on a
/// CPU device; on a GPU, enough slices for one group per compute unit).
///
/// The floor is there because a chunk smaller than the device's width takes
/// as long as its slowest group, not a share of the whole: a kernel whose
/// work-items each walk a whole row or column (`iir_rows_cols`) runs 128
/// groups of 8192 serial steps at once in 14 ms on an H200, and split into
/// one group per dispatch it took 650-850 ms (docs/RELIABILITY.md).
/// Such a group cannot meet the limit at any split; one group per compute
/// unit keeps the device full and the probe's rate linear.
pub(super) fn chunk_groups(
    rate_ns: Option<f64>,
    limit: Duration,
    (total, left): (usize, usize),
    floor: usize,
) -> usize {
    let n = match rate_ns {
        None => total / 16,
        Some(r) if r > 0.0 => (limit.as_nanos() as f64 / 2.0 / r) as usize,
        Some(_) => left,
    };
    n.max(floor).clamp(1, left)
}

/// The key of a launch.
pub(super) fn key(program: usize, kernel: &str, global: &[usize], local: &[usize]) -> LaunchKey {
    (program, kernel.to_string(), global.to_vec(), local.to_vec())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_probe_then_fit_half_the_limit() {
        let ms = Duration::from_millis(10);
        assert_eq!(chunk_groups(None, ms, (1000, 1000), 1), 62);
        assert_eq!(chunk_groups(None, ms, (5, 5), 1), 1);
        // 0.1 ms a group: 50 groups fit in 5 ms.
        assert_eq!(chunk_groups(Some(100_000.0), ms, (1000, 938), 1), 50);
        assert_eq!(chunk_groups(Some(100_000.0), ms, (1000, 20), 1), 20);
        // A group slower than the limit still runs, one at a time.
        assert_eq!(chunk_groups(Some(1e9), ms, (1000, 900), 1), 1);
        // On a GPU of 132 compute units: never fewer groups than that, in
        // the probe too; a launch of at most that many is not split.
        assert_eq!(chunk_groups(Some(1e9), ms, (1000, 900), 132), 132);
        assert_eq!(chunk_groups(None, ms, (1000, 1000), 132), 132);
        assert_eq!(chunk_groups(None, ms, (128, 128), 132), 128);
        assert_eq!(chunk_groups(Some(1e9), ms, (1000, 40), 132), 40);
    }

    #[test]
    fn display_devices() {
        assert!(Watchdog::drives_display(DeviceKind::Gpu, "NVIDIA", true));
        assert!(!Watchdog::drives_display(
            DeviceKind::Gpu,
            "NVIDIA Corporation",
            false
        ));
        assert!(Watchdog::drives_display(DeviceKind::Gpu, "Apple", false));
        assert!(!Watchdog::drives_display(DeviceKind::Cpu, "Apple", false));
        let w = Watchdog::new(true);
        assert_eq!(w.limit(), Some(DISPLAY_DEFAULT));
        w.set(DispatchLimit::Off);
        assert_eq!(w.limit(), None);
        w.set(DispatchLimit::DeviceDefault);
        assert_eq!(w.limit(), Some(DISPLAY_DEFAULT));
    }
}
