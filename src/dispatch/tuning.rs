//! An engine's view of the tuning cache: which variants to try first for a
//! request, from the measurements `filterctl tune` stored.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use super::key::{self, TuneKey};
use super::store::{self, Mode, TuneEntry};
use crate::ops::Shape;

/// An entry with its rankings worked out once, so a call's lookup does
/// not allocate.
#[derive(Debug)]
struct Stored {
    entry: TuneEntry,
    kernel: Arc<Vec<String>>,
    e2e: Arc<Vec<String>>,
    /// Whether its use was reported at `info` level, per mode (kernel, e2e).
    said: [AtomicBool; 2],
}

impl Stored {
    fn new(entry: TuneEntry) -> Self {
        let rank = |mode| {
            Arc::new(
                entry
                    .ranking(mode)
                    .into_iter()
                    .map(str::to_string)
                    .collect(),
            )
        };
        Stored {
            kernel: rank(Mode::Kernel),
            e2e: rank(Mode::E2e),
            entry,
            said: Default::default(),
        }
    }

    fn said(&self, mode: Mode) -> &AtomicBool {
        &self.said[usize::from(mode == Mode::E2e)]
    }

    fn ranking(&self, mode: Mode) -> &Arc<Vec<String>> {
        match mode {
            Mode::Kernel => &self.kernel,
            Mode::E2e => &self.e2e,
        }
    }
}

/// An engine's view of the tuning cache: the entries that are valid for its
/// device and its kernel sources, and where to record new ones.
#[derive(Debug, Default)]
pub struct Tuning {
    /// `<cache>/tuning.json`, or `None` when disk caching is off.
    file: Option<PathBuf>,
    /// The device fingerprint; `None` on the CPU backend (nothing to tune).
    fingerprint: Option<String>,
    /// Per operation, the checksum entries must carry to be valid.
    checksums: HashMap<String, String>,
    /// Valid entries: this device, current checksums.
    entries: RwLock<Vec<Stored>>,
    /// Operations already reported as untuned at `info` level.
    untuned_said: Mutex<HashSet<String>>,
}

impl Tuning {
    /// No device: nothing is tuned or looked up.
    pub(crate) fn inactive() -> Self {
        Tuning::default()
    }

    /// Reads `file` (if any) and keeps the entries of `fingerprint` whose
    /// checksum matches `checksums`; the others are stale and ignored.
    pub(crate) fn open(
        file: Option<PathBuf>,
        fingerprint: String,
        checksums: HashMap<String, String>,
    ) -> Self {
        let loaded = file.as_deref().map(store::load).unwrap_or_default();
        let total = loaded.entries.len();
        let entries: Vec<Stored> = loaded
            .entries
            .into_iter()
            .filter(|e| {
                e.key.device == fingerprint && checksums.get(&e.key.op) == Some(&e.checksum)
            })
            .map(Stored::new)
            .collect();
        if let Some(f) = &file {
            log::debug!(
                "tuning cache {}: {} of {total} entries are for this device and these kernels",
                f.display(),
                entries.len()
            );
        }
        Tuning {
            file,
            fingerprint: Some(fingerprint),
            checksums,
            entries: RwLock::new(entries),
            untuned_said: Mutex::new(HashSet::new()),
        }
    }

    /// The cache file, when disk caching is on.
    pub fn file(&self) -> Option<&Path> {
        self.file.as_deref()
    }

    /// The device fingerprint keys carry; `None` on the CPU backend.
    pub fn fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }

    /// The checksum `op`'s entries must carry (see [`TuneEntry::checksum`]).
    pub fn checksum(&self, op: &str) -> Option<&str> {
        self.checksums.get(op).map(String::as_str)
    }

    /// The valid entries (this device, current kernels).
    pub fn entries(&self) -> Vec<TuneEntry> {
        self.entries
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .map(|s| s.entry.clone())
            .collect()
    }

    /// The valid entry with exactly this key.
    pub fn exact(&self, key: &TuneKey) -> Option<TuneEntry> {
        self.entries
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .find(|s| s.entry.key == *key)
            .map(|s| s.entry.clone())
    }

    /// Keeps `entry` for this engine and its clones, and merges it into the
    /// cache file when there is one.
    pub fn record(&self, entry: TuneEntry) {
        if let Some(f) = &self.file {
            store::merge(f, std::slice::from_ref(&entry));
        }
        let mut entries = self.entries.write().unwrap_or_else(|p| p.into_inner());
        entries.retain(|s| s.entry.key != entry.key);
        entries.push(Stored::new(entry));
    }

    /// The variants to try for a request, fastest first, from the entry of
    /// the request's key, else of the nearest size bucket of an otherwise
    /// equal key (ties go to the larger size). `None` when nothing applies:
    /// the caller uses its default order. Logs the choice at `debug`, and
    /// the absence of one at `info` once per operation.
    pub fn plan(&self, op: &str, shape: &Shape, mode: Mode) -> Option<Arc<Vec<String>>> {
        // Every stored entry is for this device (see `open`).
        self.fingerprint.as_ref()?;
        let bucket = key::size_bucket(shape.width, shape.height);
        let entries = self.entries.read().unwrap_or_else(|p| p.into_inner());
        let best = entries
            .iter()
            .filter(|s| {
                s.entry.key.op == op && s.entry.key.fits(shape) && !s.ranking(mode).is_empty()
            })
            .min_by_key(|s| {
                (
                    s.entry.key.size_bucket.abs_diff(bucket),
                    std::cmp::Reverse(s.entry.key.size_bucket),
                )
            });
        let Some(stored) = best else {
            drop(entries);
            self.say_untuned(op, shape);
            return None;
        };
        let key = &stored.entry.key;
        let first = !stored.said(mode).swap(true, Ordering::Relaxed);
        // The first use of each entry at `info` (what `-v` shows), every
        // use at `debug`.
        let level = if first {
            log::Level::Info
        } else {
            log::Level::Debug
        };
        log::log!(
            target: "clfilter::tune",
            level,
            "{op} uses the tuned {mode} entry {key} ({} bucket) for a {}x{} request: order {}",
            if key.size_bucket == bucket { "exact" } else { "nearest" },
            shape.width,
            shape.height,
            stored.ranking(mode).join(", "),
        );
        Some(Arc::clone(stored.ranking(mode)))
    }

    /// Whether some entry ranks an OpenCL variant ahead of the CPU path
    /// end to end: the device was measured faster than the rayon path for
    /// at least one request.
    pub fn proves_device(&self) -> bool {
        self.entries
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .iter()
            .any(|s| s.e2e.first().is_some_and(|v| v != crate::ops::CPU))
    }

    /// Logs at `info`, once per operation, that `op` runs untuned.
    fn say_untuned(&self, op: &str, shape: &Shape) {
        let mut said = self.untuned_said.lock().unwrap_or_else(|p| p.into_inner());
        if said.contains(op) {
            return;
        }
        said.insert(op.to_string());
        if let Some(fp) = &self.fingerprint {
            log::info!(
                "{op} is not tuned for {} on this device; using the default order \
                 (run `filterctl tune` to measure)",
                TuneKey::new(fp, op, shape)
            );
        }
    }
}
