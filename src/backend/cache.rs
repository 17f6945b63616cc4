//! The on-disk cache folder, shared by program binaries and (later) tuning data.

use std::path::{Path, PathBuf};

/// Where the engine keeps its caches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CacheDir {
    /// `$FILTERCTL_CACHE_DIR` if set (`disabled` turns caching off), else the
    /// platform cache folder (`~/.cache/clfilter`, `~/Library/Caches/clfilter`).
    #[default]
    Default,
    /// No disk caching.
    Disabled,
    /// This folder.
    Dir(PathBuf),
}

impl CacheDir {
    /// The folder to use, or `None` when caching is off or no home folder exists.
    pub fn resolve(&self) -> Option<PathBuf> {
        match self {
            CacheDir::Disabled => None,
            CacheDir::Dir(p) => Some(p.clone()),
            CacheDir::Default => match std::env::var_os("FILTERCTL_CACHE_DIR") {
                Some(v) if v == "disabled" => None,
                Some(v) if !v.is_empty() => Some(PathBuf::from(v)),
                _ => match directories::ProjectDirs::from("", "", "clfilter") {
                    Some(d) => Some(d.cache_dir().to_path_buf()),
                    None => {
                        log::warn!("no home folder found ($HOME unset?); disk caching is off");
                        None
                    }
                },
            },
        }
    }
}

/// 64-bit FNV-1a: a stable hash for cache keys and file checksums. It is not
/// cryptographic; it only has to notice changed sources and damaged files.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Writes `bytes` to `path` atomically: a uniquely named temporary file in the
/// same folder, then a rename. Readers see the old file or the new one, never
/// a partial one. Failures (read-only folder, full disk) are logged, not returned:
/// a cache that cannot be written only makes the next run slower.
pub fn write_atomic(path: &Path, bytes: &[u8]) {
    if let Err(e) = try_write_atomic(path, bytes) {
        log::warn!("could not write cache file {}: {e}", path.display());
    }
}

fn try_write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::sync::atomic::{AtomicU64, Ordering};
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(
        ".{}.{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("cache"),
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = std::fs::write(&tmp, bytes).and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv_is_stable() {
        assert_eq!(fnv1a(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a(b"a"), 0xaf63_dc4c_8601_ec8c);
    }

    #[test]
    fn atomic_write_replaces_and_tolerates_failure() {
        let dir = std::env::temp_dir().join(format!("clf-cache-test-{}", std::process::id()));
        let f = dir.join("x.bin");
        write_atomic(&f, b"one");
        write_atomic(&f, b"two");
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        // A path under a file cannot be created: logged, not a panic.
        write_atomic(&f.join("below-a-file"), b"x");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
