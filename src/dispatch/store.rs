//! The tuning cache file, `<cache>/tuning.json`: every candidate's figures
//! per key, read leniently and written atomically under a lock, merged with
//! what other processes wrote meanwhile.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::key::TuneKey;
use crate::backend::cache;

/// The file's format version; a file with another version is ignored (and
/// replaced by the next tuning run).
pub const FORMAT: u32 = 1;

/// Which time a figure measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// Kernels only, data already on the device (profiling events): what a
    /// device-resident pipeline stage costs.
    Kernel,
    /// Host image in, host image out, transfers included (wall clock): what
    /// `engine.gaussian(&img, ..)` costs. The CPU path competes here.
    E2e,
}

impl std::fmt::Display for Mode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Mode::Kernel => "kernel",
            Mode::E2e => "e2e",
        })
    }
}

/// Figures of one candidate in one mode.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    /// Median time per run, ms.
    pub median_ms: f64,
    /// Fastest run, ms.
    pub min_ms: f64,
    /// Slowest run, ms.
    pub max_ms: f64,
    /// Interquartile range as a percentage of the median.
    pub spread_pct: f64,
    /// Timed runs behind these figures.
    pub runs: usize,
    /// Whether the figures come from the interleaved re-timing of the best few.
    pub retimed: bool,
    /// Megapixels per second at the median.
    pub mp_per_s: f64,
    /// Bytes read plus written per second at the median, GB/s (1e9).
    pub gb_per_s: f64,
    /// `gb_per_s` as a percentage of the device's copy kernel (kernel mode).
    pub pct_of_copy: Option<f64>,
}

/// Whether a candidate may be chosen.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "status", content = "reason", rename_all = "lowercase")]
pub enum Status {
    /// It passed the correctness gate.
    Ok,
    /// It cannot run this request (its table says so); not an error.
    Unsupported(String),
    /// It failed (build, launch, resources) or disagreed with the reference.
    Disqualified(String),
}

/// One variant's record under one key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Candidate {
    /// The variant's name (`cpu` for the rayon path).
    pub variant: String,
    /// The correctness gate's verdict.
    #[serde(flatten)]
    pub status: Status,
    /// Kernel-mode figures (OpenCL variants that passed the gate).
    pub kernel: Option<Timing>,
    /// Why kernel mode was not timed, when it was not (the CPU path, formats
    /// kernel-only timing does not cover, the budget).
    pub kernel_note: Option<String>,
    /// End-to-end figures.
    pub e2e: Option<Timing>,
    /// Why end-to-end mode was not timed, when it was not.
    pub e2e_note: Option<String>,
}

impl Candidate {
    /// The figures of `mode`.
    pub fn timing(&self, mode: Mode) -> Option<&Timing> {
        match mode {
            Mode::Kernel => self.kernel.as_ref(),
            Mode::E2e => self.e2e.as_ref(),
        }
    }
}

/// Everything measured for one key.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TuneEntry {
    /// What the entry is valid for.
    pub key: TuneKey,
    /// FNV-1a over the operation's variant names and options and every
    /// kernel source, hex; an entry whose checksum differs from the engine's
    /// is stale and ignored.
    pub checksum: String,
    /// The image size that was measured.
    pub width: usize,
    /// The image height that was measured.
    pub height: usize,
    /// Gaussian sigma measured (both axes), for `gaussian`.
    pub sigma: Option<f32>,
    /// The device's description, for people reading the file.
    pub device_name: String,
    /// The copy kernel's bandwidth (read + write) on an image of this size, GB/s.
    pub copy_gb_per_s: Option<f64>,
    /// Seconds since the Unix epoch when the entry was measured.
    pub tuned_at: u64,
    /// The kernel-mode winner, if any candidate could be timed.
    pub kernel_winner: Option<String>,
    /// The end-to-end winner (may be `cpu`).
    pub e2e_winner: Option<String>,
    /// Every candidate, the failed ones included.
    pub candidates: Vec<Candidate>,
}

impl TuneEntry {
    /// The winner of `mode`.
    pub fn winner(&self, mode: Mode) -> Option<&str> {
        match mode {
            Mode::Kernel => self.kernel_winner.as_deref(),
            Mode::E2e => self.e2e_winner.as_deref(),
        }
    }

    /// Candidates that passed and were timed in `mode`: the winner first,
    /// then by median time. The engine tries them in this order.
    pub fn ranking(&self, mode: Mode) -> Vec<&str> {
        let mut timed: Vec<(&str, f64)> = self
            .candidates
            .iter()
            .filter(|c| c.status == Status::Ok)
            .filter_map(|c| c.timing(mode).map(|t| (c.variant.as_str(), t.median_ms)))
            .collect();
        timed.sort_by(|a, b| a.1.total_cmp(&b.1));
        let mut names: Vec<&str> = timed.into_iter().map(|(n, _)| n).collect();
        if let Some(w) = self.winner(mode) {
            if let Some(i) = names.iter().position(|n| *n == w) {
                let w = names.remove(i);
                names.insert(0, w);
            }
        }
        names
    }
}

/// The file's contents.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct TuningFile {
    /// [`FORMAT`].
    pub format: u32,
    /// Every entry, of every device and checksum.
    pub entries: Vec<TuneEntry>,
}

/// The tuning file in cache folder `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join("tuning.json")
}

/// Reads the file. A missing file is empty; an unreadable, corrupt or
/// other-version file is empty with a warning (the next tuning run rewrites it).
pub fn load(path: &Path) -> TuningFile {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return TuningFile::default(),
        Err(e) => {
            log::warn!(
                "tuning cache {} is unreadable ({e}); working without it",
                path.display()
            );
            return TuningFile::default();
        }
    };
    match serde_json::from_str::<TuningFile>(&text) {
        Ok(f) if f.format == FORMAT => f,
        Ok(f) => {
            log::warn!(
                "tuning cache {} has format {} (this build reads {FORMAT}); working without it",
                path.display(),
                f.format
            );
            TuningFile::default()
        }
        Err(e) => {
            log::warn!(
                "tuning cache {} is corrupt ({e}); working without it, the next `filterctl tune` rewrites it",
                path.display()
            );
            TuningFile::default()
        }
    }
}

/// Adds `entries` to the file, replacing entries with the same key and
/// checksum. The file is re-read under an exclusive lock (`tuning.json.lock`)
/// just before writing, so concurrent tuners merge rather than overwrite
/// each other, and written atomically (temporary file + rename), so readers
/// never see a partial file. Failures (read-only folder) are warnings.
pub fn merge(path: &Path, entries: &[TuneEntry]) {
    let lock_path = path.with_extension("json.lock");
    let lock = std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
        .and_then(|()| {
            std::fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&lock_path)
        })
        .and_then(|f| f.lock().map(|()| f));
    if let Err(e) = &lock {
        // Still write: the rename keeps the file valid, only a concurrent
        // tuner's entries may be lost.
        log::debug!("tuning cache lock {}: {e}", lock_path.display());
    }
    let mut file = load(path);
    file.format = FORMAT;
    file.entries.retain(|old| {
        !entries
            .iter()
            .any(|new| new.key == old.key && new.checksum == old.checksum)
    });
    file.entries.extend(entries.iter().cloned());
    match serde_json::to_vec_pretty(&file) {
        Ok(bytes) => cache::write_atomic(path, &bytes),
        Err(e) => log::warn!("could not encode the tuning cache: {e}"),
    }
    // Dropping the handle releases the lock.
    drop(lock);
}

/// Deletes the file; `Ok(false)` when there was none.
pub fn clear(path: &Path) -> std::io::Result<bool> {
    match std::fs::remove_file(path) {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}
