//! The tuning cache file, `<cache>/tuning.json`: every candidate's figures
//! per key, read leniently and written atomically under a lock, merged with
//! what other processes wrote meanwhile.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::key::TuneKey;
use crate::backend::cache::{self, ReadFailure};

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

/// The largest `tuning.json` that is read: 64 MiB. An entry is 4 to 7 KB of
/// JSON (every candidate with its figures in two modes), so this holds over
/// 10,000 entries: every operation, format, size bucket and parameter set of
/// several devices, and stale entries of many kernel versions. A larger file
/// was not written by this crate, or has grown without bound; reading it
/// would cost its whole size in memory, and more once parsed.
pub const MAX_FILE_BYTES: u64 = 64 << 20;

/// Reads the file. A missing file is empty; an unreadable, corrupt or
/// other-version file is empty with a warning (the next tuning run rewrites
/// it); a file over [`MAX_FILE_BYTES`] is set aside as
/// `tuning.json.oversized-<seconds>`, with a warning, and not read.
pub fn load(path: &Path) -> TuningFile {
    load_capped(path, MAX_FILE_BYTES)
}

/// [`load`] with the size limit `cap`.
fn load_capped(path: &Path, cap: u64) -> TuningFile {
    let bytes = match cache::read_capped(path, cap) {
        Ok(b) => b,
        Err(ReadFailure::Missing) => return TuningFile::default(),
        Err(ReadFailure::TooBig(size)) => {
            match cache::set_aside(path, "oversized") {
                Ok(aside) => warn_once(format!(
                    "tuning cache {} is over the {cap}-byte limit ({size} bytes); \
                     moved it to {} and working without it",
                    path.display(),
                    aside.display()
                )),
                Err(e) => warn_once(format!(
                    "tuning cache {} is over the {cap}-byte limit ({size} bytes) \
                     and could not be moved aside ({e}); working without it",
                    path.display()
                )),
            }
            return TuningFile::default();
        }
        Err(e) => {
            warn_once(format!(
                "tuning cache {} is unreadable ({e}); working without it",
                path.display()
            ));
            return TuningFile::default();
        }
    };
    parse(path, &bytes)
}

/// The file's contents, or an empty file with a warning.
fn parse(path: &Path, bytes: &[u8]) -> TuningFile {
    match serde_json::from_slice::<TuningFile>(bytes) {
        Ok(f) if f.format == FORMAT => f,
        Ok(f) => {
            warn_once(format!(
                "tuning cache {} has format {} (this build reads {FORMAT}); working without it",
                path.display(),
                f.format
            ));
            TuningFile::default()
        }
        Err(e) => {
            warn_once(format!(
                "tuning cache {} is corrupt ({e}); working without it, the next `filterctl tune` rewrites it",
                path.display()
            ));
            TuningFile::default()
        }
    }
}

/// Logs `message` as a warning once per process: the engine and
/// `filterctl tune` each read the cache, and a corrupt file would otherwise
/// be reported as many times as it is read.
fn warn_once(message: String) {
    static SEEN: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());
    let mut seen = SEEN
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if !seen.contains(&message) {
        log::warn!("{message}");
        seen.push(message);
    }
}

/// Adds `entries` to the file, replacing entries with the same key and
/// checksum. The file is re-read under an exclusive lock (`tuning.json.lock`,
/// opened without following a link there) just before writing, so concurrent tuners merge rather than overwrite
/// each other, and written atomically (temporary file + rename), so readers
/// never see a partial file. Failures (read-only folder) are warnings.
pub fn merge(path: &Path, entries: &[TuneEntry]) {
    let lock_path = path.with_extension("json.lock");
    let lock = std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))
        .and_then(|()| cache::open_lock(&lock_path))
        .and_then(|f| f.lock().map(|()| f));
    // Either way the write happens: the rename keeps the file valid, and
    // only a concurrent tuner's entries may be lost.
    match &lock {
        Err(e) if cache::is_link(&lock_path) => log::warn!(
            "tuning cache lock {} is a symbolic link (planted?); not following it, \
             writing without the lock ({e})",
            lock_path.display()
        ),
        Err(e) => log::debug!("tuning cache lock {}: {e}", lock_path.display()),
        Ok(_) => {}
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

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::backend::cache::testing::cases;

    /// The size limit of the property tests: small, so that oversized
    /// files are cheap to make.
    const CAP: u64 = 64 << 10;

    /// An entry whose text fields hold `text` and whose numbers come from
    /// `n` (binary fractions, which survive a round trip through JSON).
    fn entry(n: u64, text: &str) -> TuneEntry {
        let timing = Timing {
            median_ms: (n % 1000) as f64 / 8.0,
            min_ms: 0.5,
            max_ms: 1e6,
            spread_pct: 12.5,
            runs: n as usize % 100,
            retimed: n.is_multiple_of(2),
            mp_per_s: 0.125,
            gb_per_s: 3.25,
            pct_of_copy: n.is_multiple_of(3).then_some(41.0),
        };
        let candidate = |variant: &str, status| Candidate {
            variant: variant.into(),
            status,
            kernel: Some(timing.clone()),
            kernel_note: None,
            e2e: (!n.is_multiple_of(5)).then(|| timing.clone()),
            e2e_note: Some(text.into()),
        };
        TuneEntry {
            key: TuneKey {
                device: format!("device {text}"),
                op: "some_op".into(),
                format: "f32x1".into(),
                size_bucket: (n % 40) as u32,
                params: "-".into(),
            },
            checksum: format!("{n:016x}"),
            width: 640,
            height: 480,
            sigma: (n % 2 == 1).then_some(2.0),
            device_name: text.into(),
            copy_gb_per_s: None,
            tuned_at: n,
            kernel_winner: Some("naive".into()),
            e2e_winner: Some("cpu".into()),
            candidates: vec![
                candidate("naive", Status::Ok),
                candidate("cpu", Status::Disqualified(text.into())),
                candidate("local", Status::Unsupported("no".into())),
            ],
        }
    }

    /// A valid file of `count` entries, encoded.
    fn valid_file(count: u64, text: &str) -> Vec<u8> {
        let file = TuningFile {
            format: FORMAT,
            entries: (0..count).map(|n| entry(n, text)).collect(),
        };
        serde_json::to_vec_pretty(&file).unwrap()
    }

    /// Loads `bytes` as a tuning file, then merges a new entry into it, and
    /// checks what any input must give: no panic, a prompt answer, either
    /// the entries `bytes` parse to or none, and afterwards a valid file
    /// that holds the new entry.
    fn load_and_merge(bytes: &[u8]) -> std::result::Result<(), TestCaseError> {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        std::fs::write(&path, bytes).unwrap();
        let start = std::time::Instant::now();
        let loaded = load_capped(&path, CAP);
        prop_assert!(start.elapsed() < std::time::Duration::from_secs(5));
        match serde_json::from_slice::<TuningFile>(bytes) {
            Ok(f) if f.format == FORMAT && bytes.len() as u64 <= CAP => {
                prop_assert_eq!(loaded.entries, f.entries)
            }
            _ => prop_assert!(loaded.entries.is_empty()),
        }
        let new = entry(u64::MAX, "new");
        merge(&path, std::slice::from_ref(&new));
        let after = load(&path);
        prop_assert_eq!(after.format, FORMAT);
        prop_assert!(after.entries.contains(&new));
        Ok(())
    }

    proptest! {
        #![proptest_config(cases(256))]

        /// Arbitrary bytes: rejected (or, if they happen to be a file, read).
        #[test]
        fn arbitrary_bytes_never_break_load_or_merge(
            bytes in proptest::collection::vec(any::<u8>(), 0..2048),
        ) {
            load_and_merge(&bytes)?;
        }

        /// A valid file cut short anywhere.
        #[test]
        fn truncated_files_are_rejected(
            count in 1u64..4, text in "\\PC{0,16}", cut in any::<prop::sample::Index>(),
        ) {
            let bytes = valid_file(count, &text);
            load_and_merge(&bytes[..cut.index(bytes.len())])?;
        }

        /// A valid file with a few bits flipped: rejected, or read as the
        /// (still valid) JSON the flips made.
        #[test]
        fn bit_flips_are_rejected_or_read(
            count in 1u64..4, text in "\\PC{0,16}",
            flips in proptest::collection::vec((any::<prop::sample::Index>(), 0u8..8), 1..5),
        ) {
            let mut bytes = valid_file(count, &text);
            for (at, bit) in &flips {
                let i = at.index(bytes.len());
                bytes[i] ^= 1 << bit;
            }
            load_and_merge(&bytes)?;
        }
    }

    #[test]
    fn oversized_file_is_set_aside_and_not_parsed() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        let mut bytes = valid_file(40, "x");
        assert!(bytes.len() as u64 > CAP, "{} bytes", bytes.len());
        std::fs::write(&path, &bytes).unwrap();
        assert!(load_capped(&path, CAP).entries.is_empty());
        assert!(!path.exists(), "the oversized file is moved away");
        let aside: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        assert_eq!(aside.len(), 1, "{aside:?}");
        assert!(aside[0].starts_with("tuning.json.oversized-"), "{aside:?}");
        // The same file under the cap is read.
        bytes.truncate(0);
        bytes.extend(valid_file(2, "x"));
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(load_capped(&path, CAP).entries.len(), 2);
    }

    /// A link planted at the lock path is not followed: its target stays
    /// as it was, and the merge still writes the file.
    #[cfg(unix)]
    #[test]
    fn planted_lock_link_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let path = path_in(dir.path());
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let lock = path.with_extension("json.lock");
        std::os::unix::fs::symlink(&victim, &lock).unwrap();
        let dangling = dir.path().join("sub");
        std::fs::create_dir(&dangling).unwrap();
        std::os::unix::fs::symlink(
            dangling.join("new"),
            path_in(&dangling).with_extension("json.lock"),
        )
        .unwrap();
        let e = entry(1, "x");
        merge(&path, std::slice::from_ref(&e));
        merge(&path_in(&dangling), std::slice::from_ref(&e));
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        assert!(
            !dangling.join("new").exists(),
            "a dangling link's target is not created"
        );
        assert!(cache::is_link(&lock));
        assert_eq!(load(&path).entries, vec![e.clone()]);
        assert_eq!(load(&path_in(&dangling)).entries, vec![e]);
    }
}
