//! The on-disk cache folder, shared by program binaries and tuning data, and
//! the careful file operations every cache file goes through: atomic writes,
//! reads with a size cap, and opens that never follow a planted link.

use std::ffi::OsString;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Where the engine keeps its caches.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum CacheDir {
    /// `$FILTERCTL_CACHE_DIR` if set (`disabled` turns caching off), else the
    /// platform cache folder (`~/.cache/clfilter`, `~/Library/Caches/clfilter`).
    /// With neither `$FILTERCTL_CACHE_DIR` nor an absolute `$HOME`, caching is
    /// off, with one warning per process.
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
            CacheDir::Default => match default_dir(
                std::env::var_os("FILTERCTL_CACHE_DIR"),
                std::env::var_os("HOME"),
            ) {
                Ok(dir) => dir,
                Err(why) => {
                    static WARNED: AtomicBool = AtomicBool::new(false);
                    if !WARNED.swap(true, Ordering::Relaxed) {
                        log::warn!(
                            "{why} and FILTERCTL_CACHE_DIR is not set: disk caching is off \
                             (set FILTERCTL_CACHE_DIR to a folder to cache there)"
                        );
                    }
                    None
                }
            },
        }
    }
}

/// The folder [`CacheDir::Default`] names, from the values of
/// `FILTERCTL_CACHE_DIR` and `HOME`: `Ok(None)` when caching is turned off,
/// `Err(why)` when there is no folder to use.
fn default_dir(
    var: Option<OsString>,
    home: Option<OsString>,
) -> Result<Option<PathBuf>, &'static str> {
    match var {
        Some(v) if v == "disabled" => return Ok(None),
        Some(v) if !v.is_empty() => return Ok(Some(PathBuf::from(v))),
        _ => {}
    }
    // The platform's cache folder, as the `directories` crate names it
    // (written out here: that crate and its two dependencies were three of
    // the library's crates, README "Dependencies"). `$HOME` must be an
    // absolute path; the password database is not consulted.
    if cfg!(windows) {
        return match std::env::var_os("LOCALAPPDATA") {
            Some(d) if Path::new(&d).is_absolute() => {
                Ok(Some(Path::new(&d).join("clfilter").join("cache")))
            }
            _ => Err("%LOCALAPPDATA% is not an absolute path"),
        };
    }
    let home = match home {
        None => return Err("$HOME is unset"),
        Some(h) if h.is_empty() => return Err("$HOME is empty"),
        Some(h) if !Path::new(&h).is_absolute() => return Err("$HOME is not an absolute path"),
        Some(h) => PathBuf::from(h),
    };
    Ok(Some(unix_cache_dir(
        &home,
        std::env::var_os("XDG_CACHE_HOME"),
    )))
}

/// `~/Library/Caches/clfilter` on macOS; elsewhere `$XDG_CACHE_HOME/clfilter`
/// when that is absolute (the XDG rule), else `~/.cache/clfilter`.
fn unix_cache_dir(home: &Path, xdg: Option<OsString>) -> PathBuf {
    if cfg!(target_os = "macos") {
        return home.join("Library/Caches/clfilter");
    }
    match xdg {
        Some(x) if Path::new(&x).is_absolute() => PathBuf::from(x).join("clfilter"),
        _ => home.join(".cache/clfilter"),
    }
}

/// 64-bit FNV-1a: a stable hash for cache keys and file checksums. It is not
/// cryptographic; it only has to notice changed sources and damaged files.
/// Every single-byte change is noticed: each step is a bijection of the state.
pub fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// Adds `O_NONBLOCK` (a FIFO planted in the cache folder cannot make the
/// open hang; regular files ignore the flag) and, unless `follow`,
/// `O_NOFOLLOW` (a symbolic link at the last component fails the open
/// instead of being followed).
pub(crate) fn careful(opts: &mut OpenOptions, follow: bool) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let nofollow = if follow { 0 } else { libc::O_NOFOLLOW };
        opts.custom_flags(libc::O_NONBLOCK | nofollow);
    }
    #[cfg(not(unix))]
    let _ = follow;
    opts
}

/// Creates `path` for writing; fails if anything exists there, a link
/// included (`O_CREAT | O_EXCL | O_NOFOLLOW`).
pub(crate) fn create_new(path: &Path) -> std::io::Result<File> {
    careful(OpenOptions::new().write(true).create_new(true), false).open(path)
}

/// Opens (creating) a lock file without following a link there. The file
/// is never truncated or written, only locked.
pub(crate) fn open_lock(path: &Path) -> std::io::Result<File> {
    careful(
        OpenOptions::new().write(true).create(true).truncate(false),
        false,
    )
    .open(path)
}

/// Whether `path` itself is a symbolic link.
pub(crate) fn is_link(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Why [`read_capped`] returned no bytes.
#[derive(Debug)]
pub(crate) enum ReadFailure {
    /// There is no file.
    Missing,
    /// The file holds more than the cap: its size, or the cap plus one
    /// when it grew while being read.
    TooBig(u64),
    /// It is not a regular file (a folder, a FIFO, a device).
    NotAFile,
    /// Any other error.
    Io(std::io::Error),
}

impl std::fmt::Display for ReadFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ReadFailure::Missing => f.write_str("no such file"),
            ReadFailure::TooBig(n) => write!(f, "{n} bytes, over the size limit"),
            ReadFailure::NotAFile => f.write_str("not a regular file"),
            ReadFailure::Io(e) => e.fmt(f),
        }
    }
}

/// Reads the regular file `path` (following links) whole, unless it holds
/// more than `cap` bytes.
pub(crate) fn read_capped(path: &Path, cap: u64) -> Result<Vec<u8>, ReadFailure> {
    let file = careful(OpenOptions::new().read(true), true)
        .open(path)
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => ReadFailure::Missing,
            _ => ReadFailure::Io(e),
        })?;
    let meta = file.metadata().map_err(ReadFailure::Io)?;
    if !meta.is_file() {
        return Err(ReadFailure::NotAFile);
    }
    read_limited(file, meta.len(), cap)
}

/// Reads `reader`, which says it holds `len` bytes, unless it holds more
/// than `cap`: `len` is checked before anything is allocated, and the read
/// stops at `cap + 1` bytes, so a file that grows meanwhile cannot get past
/// the cap either.
fn read_limited(reader: impl Read, len: u64, cap: u64) -> Result<Vec<u8>, ReadFailure> {
    if len > cap {
        return Err(ReadFailure::TooBig(len));
    }
    let mut bytes = Vec::with_capacity(len as usize);
    reader
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(ReadFailure::Io)?;
    if bytes.len() as u64 > cap {
        return Err(ReadFailure::TooBig(bytes.len() as u64));
    }
    Ok(bytes)
}

/// Renames `path` to `<path>.<what>-<seconds since 1970>`, where it no
/// longer gets read but stays for a person to look at; returns the new name.
pub(crate) fn set_aside(path: &Path, what: &str) -> std::io::Result<PathBuf> {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    let mut name = path.as_os_str().to_owned();
    name.push(format!(".{what}-{secs}"));
    let aside = PathBuf::from(name);
    std::fs::rename(path, &aside)?;
    Ok(aside)
}

/// Writes `bytes` to `path` atomically: a new temporary file in the same
/// folder, then a rename. Readers see the old file or the new one, never a
/// partial one, and a link planted at `path` is replaced, not written
/// through. Failures (read-only folder, full disk) are logged, not returned:
/// a cache that cannot be written only makes the next run slower.
pub fn write_atomic(path: &Path, bytes: &[u8]) {
    if let Err(e) = try_write_atomic(path, bytes) {
        log::warn!("could not write cache file {}: {e}", path.display());
    }
}

/// How many temporary names [`write_atomic`] tries before it gives up.
const TEMP_TRIES: u64 = 8;

/// The process-wide counter that makes temporary names unique.
static TEMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// The temporary name number `n` of this process for `path`.
fn temp_path(path: &Path, n: u64) -> PathBuf {
    let dir = path.parent().unwrap_or(Path::new("."));
    dir.join(format!(
        ".{}.{}.{n}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("cache"),
        std::process::id(),
    ))
}

fn try_write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::create_dir_all(path.parent().unwrap_or(Path::new(".")))?;
    let (tmp, mut file) = create_temp(path)?;
    let written = file.write_all(bytes);
    drop(file);
    let result = written.and_then(|()| std::fs::rename(&tmp, path));
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    crate::image::temporaries::forget(&tmp);
    result
}

/// Creates a temporary file for `path` under a name nobody has taken. A
/// taken name (left by a crashed process with the same id, or planted,
/// perhaps as a link) is left alone with a warning, and the next tried.
fn create_temp(path: &Path) -> std::io::Result<(PathBuf, File)> {
    let mut last = None;
    for _ in 0..TEMP_TRIES {
        let tmp = temp_path(path, TEMP_SEQ.fetch_add(1, Ordering::Relaxed));
        match crate::image::temporaries::create(&tmp, create_new) {
            Ok(file) => return Ok((tmp, file)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                log::warn!(
                    "temporary cache file {} already exists (left by a crash, or planted); \
                     leaving it alone",
                    tmp.display()
                );
                last = Some(e);
            }
            Err(e) => return Err(e),
        }
    }
    Err(last.expect("at least one name was tried"))
}

/// Helpers for the cache files' property tests.
#[cfg(test)]
pub(crate) mod testing {
    /// A proptest configuration with `default` cases, or `PROPTEST_CASES`
    /// when it is set (for long runs:
    /// `PROPTEST_CASES=100000 cargo test --release --lib cache`).
    pub(crate) fn cases(default: u32) -> proptest::test_runner::Config {
        let cases = std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default);
        proptest::test_runner::Config {
            cases,
            ..Default::default()
        }
    }
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
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("x.bin");
        write_atomic(&f, b"one");
        write_atomic(&f, b"two");
        assert_eq!(std::fs::read(&f).unwrap(), b"two");
        // A path under a file cannot be created: logged, not a panic.
        write_atomic(&f.join("below-a-file"), b"x");
    }

    #[test]
    fn default_dir_follows_the_documented_rules() {
        let os = |s: &str| Some(OsString::from(s));
        assert_eq!(default_dir(os("disabled"), None), Ok(None));
        assert_eq!(
            default_dir(os("/some/dir"), None),
            Ok(Some(PathBuf::from("/some/dir")))
        );
        if cfg!(unix) {
            assert_eq!(default_dir(None, None), Err("$HOME is unset"));
            assert_eq!(default_dir(os(""), os("")), Err("$HOME is empty"));
            assert_eq!(
                default_dir(None, os("relative/home")),
                Err("$HOME is not an absolute path")
            );
        }
    }

    #[cfg(all(unix, not(target_os = "macos")))]
    #[test]
    fn unix_cache_dir_follows_xdg() {
        let home = Path::new("/home/u");
        let at = |x: Option<&str>| unix_cache_dir(home, x.map(OsString::from));
        assert_eq!(at(None), PathBuf::from("/home/u/.cache/clfilter"));
        assert_eq!(at(Some("/xdg")), PathBuf::from("/xdg/clfilter"));
        assert_eq!(at(Some("rel")), PathBuf::from("/home/u/.cache/clfilter"));
    }

    /// Links planted at the next temporary names point to a victim: the
    /// write goes elsewhere, and neither the victim nor the links change.
    #[cfg(unix)]
    #[test]
    fn planted_temp_links_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let target = dir.path().join("tuning.json");
        let next = TEMP_SEQ.load(Ordering::Relaxed);
        let planted: Vec<PathBuf> = (next..next + TEMP_TRIES / 2)
            .map(|n| temp_path(&target, n))
            .collect();
        for p in &planted {
            std::os::unix::fs::symlink(&victim, p).unwrap();
        }
        write_atomic(&target, b"new contents");
        assert_eq!(std::fs::read(&target).unwrap(), b"new contents");
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        for p in &planted {
            assert!(is_link(p), "{} was replaced", p.display());
        }
    }

    #[test]
    fn reads_stop_at_the_cap() {
        let endless = std::io::repeat(b'x');
        assert!(matches!(
            read_limited(endless, 10, 100),
            Err(ReadFailure::TooBig(101))
        ));
        assert!(matches!(
            read_limited(std::io::repeat(0), 1 << 40, 100),
            Err(ReadFailure::TooBig(_))
        ));
        assert_eq!(read_limited(&b"abc"[..], 3, 3).unwrap(), b"abc");
    }

    #[cfg(unix)]
    #[test]
    fn capped_reads_refuse_what_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("f");
        assert!(matches!(read_capped(&f, 10), Err(ReadFailure::Missing)));
        std::fs::write(&f, b"0123456789a").unwrap();
        assert!(matches!(read_capped(&f, 10), Err(ReadFailure::TooBig(11))));
        assert!(matches!(
            read_capped(dir.path(), 10),
            Err(ReadFailure::NotAFile)
        ));
        // A FIFO with no writer would block a plain open.
        let fifo = dir.path().join("fifo");
        let made = std::process::Command::new("mkfifo").arg(&fifo).status();
        if made.is_ok_and(|s| s.success()) {
            assert!(matches!(read_capped(&fifo, 10), Err(ReadFailure::NotAFile)));
        }
        // Links are followed for reading.
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&f, &link).unwrap();
        assert_eq!(read_capped(&link, 20).unwrap(), b"0123456789a");
    }

    #[test]
    fn set_aside_keeps_the_file_under_a_new_name() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("tuning.json");
        std::fs::write(&f, b"big").unwrap();
        let aside = set_aside(&f, "oversized").unwrap();
        assert!(!f.exists());
        let name = aside.file_name().unwrap().to_str().unwrap();
        assert!(name.starts_with("tuning.json.oversized-"), "{name}");
        assert_eq!(std::fs::read(&aside).unwrap(), b"big");
    }
}
