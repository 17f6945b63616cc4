//! Run-time program builds, cached in memory and as binaries on disk.
//!
//! Disk layout: `<root>/<vendor--device--platform-idhash--driver>/<source-hash>-<options-hash>.bin`.
//! The platform is part of the name so that two platforms exposing the same
//! device (with different drivers) do not delete each other's folders as stale.
//! Each file is checked before the driver sees it (`binfile`), and marked
//! while the driver loads it (`loading`). A file that is short, oversized,
//! fails its checksum, that the driver rejects, or that a process died
//! loading, is deleted and the program is rebuilt from source with a
//! `warn!`: a broken cache is never the user's error.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use opencl3::program::Program;

use super::{binfile, cl_err, loading, ClDevice};
use crate::backend::cache::{self, ReadFailure};
use crate::backend::DeviceInfo;
use crate::error::{Error, Result};

/// Where a program's text comes from and what it is for (for errors and logs).
#[derive(Debug, Clone, Copy)]
pub struct ProgramId<'a> {
    /// The operation.
    pub op: &'a str,
    /// The variant.
    pub variant: &'a str,
}

/// Counters: how programs were obtained since the device was opened.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ProgramCounts {
    /// Built from OpenCL C source.
    pub built_from_source: u64,
    /// Loaded from a cached binary.
    pub loaded_from_binary: u64,
    /// Cached binaries that were corrupt, rejected by the driver or left by
    /// a process that died loading them: deleted and rebuilt.
    pub rejected_binaries: u64,
    /// Served from the in-memory cache.
    pub memory_hits: u64,
}

/// What the in-memory cache remembers for one (source, options) pair.
enum Entry {
    Built(Arc<Program>),
    /// The compiler's log: a failed build is not retried in this process.
    Failed(String),
}

/// In-memory map from (source hash, options) to built programs (or build
/// failures), backed by the on-disk binary cache of one device and driver.
pub struct ProgramCache {
    memory: Mutex<HashMap<(u64, String), Entry>>,
    dir: Option<PathBuf>,
    built: AtomicU64,
    loaded: AtomicU64,
    rejected: AtomicU64,
    hits: AtomicU64,
}

/// A folder-name-safe version of `s`.
fn sanitize(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect();
    t.chars().take(80).collect()
}

impl ProgramCache {
    pub(crate) fn new(info: &DeviceInfo, root: Option<PathBuf>) -> Self {
        let dir = root.map(|root| {
            // The hash of the untruncated identity keeps two devices apart
            // even if their sanitised, truncated names coincide.
            let identity = format!("{}\n{}\n{}", info.vendor, info.name, info.platform);
            let prefix = format!(
                "{}--{}--{}-{:08x}--",
                sanitize(&info.vendor),
                sanitize(&info.name),
                sanitize(&info.platform),
                cache::fnv1a(identity.as_bytes()) as u32
            );
            let dir = root.join(format!("{prefix}{}", sanitize(&info.driver_version)));
            remove_stale_drivers(&root, &prefix, &dir);
            dir
        });
        ProgramCache {
            memory: Mutex::new(HashMap::new()),
            dir,
            built: AtomicU64::new(0),
            loaded: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            hits: AtomicU64::new(0),
        }
    }

    /// The folder that holds this device's binaries, if disk caching is on.
    pub fn dir(&self) -> Option<&Path> {
        self.dir.as_deref()
    }

    /// Counters since the device was opened.
    pub fn counts(&self) -> ProgramCounts {
        ProgramCounts {
            built_from_source: self.built.load(Ordering::Relaxed),
            loaded_from_binary: self.loaded.load(Ordering::Relaxed),
            rejected_binaries: self.rejected.load(Ordering::Relaxed),
            memory_hits: self.hits.load(Ordering::Relaxed),
        }
    }
}

/// Deletes `<root>/<prefix>*` folders other than `keep`: binaries of an older driver.
fn remove_stale_drivers(root: &Path, prefix: &str, keep: &Path) {
    let Ok(entries) = std::fs::read_dir(root) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        let name = e.file_name();
        if p != keep && name.to_string_lossy().starts_with(prefix) && p.is_dir() {
            match std::fs::remove_dir_all(&p) {
                Ok(()) => log::info!(
                    "removed program binaries of an older driver: {}",
                    p.display()
                ),
                Err(err) => log::warn!("could not remove stale cache {}: {err}", p.display()),
            }
        }
    }
}

impl ClDevice {
    /// Returns the program for `source` built with `options`, from memory,
    /// from the disk cache, or by compiling it. A compile failure is
    /// [`Error::Build`] with the full build log. `src_hash` is
    /// [`cache::fnv1a`] of `source` (callers keep it with the text).
    pub(crate) fn program_hashed(
        &self,
        id: ProgramId<'_>,
        source: &str,
        src_hash: u64,
        options: &str,
    ) -> Result<Arc<Program>> {
        let cache = &self.programs;
        let key = (src_hash, options.to_string());
        let build_error = |log: String| Error::Build {
            op: id.op.to_string(),
            variant: id.variant.to_string(),
            device: self.info.name.clone(),
            log,
        };
        match cache.memory.lock().expect("program cache lock").get(&key) {
            Some(Entry::Built(p)) => {
                cache.hits.fetch_add(1, Ordering::Relaxed);
                return Ok(p.clone());
            }
            Some(Entry::Failed(log)) => return Err(build_error(log.clone())),
            None => {}
        }
        let file_key = [src_hash, cache::fnv1a(options.as_bytes())];
        let file = cache
            .dir
            .as_ref()
            .map(|d| d.join(format!("{:016x}-{:016x}.bin", file_key[0], file_key[1])));
        let program = match file
            .as_deref()
            .and_then(|f| self.load_binary(f, file_key, options))
        {
            Some(p) => {
                cache.loaded.fetch_add(1, Ordering::Relaxed);
                p
            }
            None => {
                let p = match self.build_source(id, source, options) {
                    Ok(p) => p,
                    Err(Error::Build { log, .. }) => {
                        cache
                            .memory
                            .lock()
                            .expect("program cache lock")
                            .insert(key, Entry::Failed(log.clone()));
                        return Err(build_error(log));
                    }
                    Err(e) => return Err(e),
                };
                cache.built.fetch_add(1, Ordering::Relaxed);
                if let Some(f) = &file {
                    self.store_binary(&p, f, file_key);
                }
                p
            }
        };
        let program = Arc::new(program);
        cache
            .memory
            .lock()
            .expect("program cache lock")
            .insert(key, Entry::Built(program.clone()));
        Ok(program)
    }

    fn build_source(&self, id: ProgramId<'_>, source: &str, options: &str) -> Result<Program> {
        let mut program = Program::create_from_source(&self.context, source)
            .map_err(|e| cl_err("clCreateProgramWithSource", e))?;
        log::debug!(
            "building {}/{} on {} with '{options}'",
            id.op,
            id.variant,
            self.info.name
        );
        if let Err(e) = program.build(&[self.device.id()], options) {
            let log = program
                .get_build_log(self.device.id())
                .unwrap_or_else(|le| format!("(no build log: {le})"));
            let log = if log.trim().is_empty() {
                format!("(the compiler printed no log; status {e})")
            } else {
                log
            };
            return Err(Error::Build {
                op: id.op.to_string(),
                variant: id.variant.to_string(),
                device: self.info.name.clone(),
                log,
            });
        }
        Ok(program)
    }

    /// Loads and builds a cached binary. `None` means "build from source";
    /// a present but unusable file is deleted with a warning.
    fn load_binary(&self, file: &Path, key: binfile::Key, options: &str) -> Option<Program> {
        let died = loading::remove_dead(file);
        let reject = |why: String| {
            log::warn!(
                "program cache {} is unusable ({why}); deleting it and rebuilding from source",
                file.display()
            );
            self.programs.rejected.fetch_add(1, Ordering::Relaxed);
            let _ = std::fs::remove_file(file);
            None
        };
        let bytes = match binfile::read(file) {
            Ok(b) => b,
            Err(ReadFailure::Missing | ReadFailure::Io(_)) => return None,
            Err(why) => return reject(why.to_string()),
        };
        if died > 0 {
            return reject(format!(
                "{died} earlier process(es) died while the driver loaded it: \
                 a binary that crashes the driver, or a process killed meanwhile"
            ));
        }
        let payload = match binfile::decode(&bytes, key) {
            Ok(p) => p,
            Err(why) => return reject(why.to_string()),
        };
        let _mark = match loading::Mark::new(file) {
            Ok(m) => m,
            Err(e) => {
                // Unmarked, a binary that crashes the driver would crash
                // every run, and this folder could not record it.
                log::warn!(
                    "could not mark {} as being loaded ({e}); building from source instead",
                    file.display()
                );
                return None;
            }
        };
        // SAFETY: the device is a member of the context (it was created from it),
        // and the slice of binaries has exactly one entry for the one device.
        let created =
            unsafe { Program::create_from_binary(&self.context, &[self.device.id()], &[payload]) };
        let mut program = match created {
            Ok(p) => p,
            Err(e) => return reject(format!("driver rejected it: {e}")),
        };
        if let Err(e) = program.build(&[self.device.id()], options) {
            return reject(format!("building the binary failed: {e}"));
        }
        Some(program)
    }

    fn store_binary(&self, program: &Program, file: &Path, key: binfile::Key) {
        let binaries = match program.get_binaries() {
            Ok(b) => b,
            Err(e) => {
                log::debug!("driver gives no program binary ({e}); not caching");
                return;
            }
        };
        match binaries.first() {
            Some(b) if b.len() > binfile::MAX_PAYLOAD => {
                log::debug!(
                    "program binary of {} bytes is over the limit; not caching",
                    b.len()
                )
            }
            Some(b) if !b.is_empty() => cache::write_atomic(file, &binfile::encode(key, b)),
            _ => log::debug!("driver returned an empty program binary; not caching"),
        }
    }
}
