//! The crash-loop breaker of the program-binary cache. A binary that passes
//! its checksum can still crash the driver (a driver bug, a binary written
//! by another build of the driver). Without a guard every later run would
//! load it and crash again, for good. So a process marks a cache entry as
//! being loaded before the driver sees it, and removes the mark when the
//! driver is done; a mark whose process is gone means that process died
//! while loading, and the next run discards the entry and builds from source.
//!
//! A mark is the file `<entry>.loading.<pid>.<n>`, held under an exclusive
//! `flock` by its process while it loads. The kernel drops the lock when the
//! process dies, however it dies, so a locked mark is a live loader (also
//! across PID namespaces, and with no trust in PIDs, which get reused). A
//! mark is locked under a temporary name before it is renamed into place,
//! and removed before it is unlocked, so a mark that is unlocked while its
//! name still exists was left by a process that died.

use std::fs::{File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::backend::cache;

/// What comes between an entry's file name and the mark's process id.
const INFIX: &str = ".loading.";

/// This process's mark on a cache entry it is loading; dropping it removes
/// the mark.
pub(super) struct Mark {
    path: PathBuf,
    /// Holds the lock until the mark is dropped.
    _file: File,
}

impl Mark {
    /// Marks `entry` as being loaded by this process.
    pub(super) fn new(entry: &Path) -> std::io::Result<Mark> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let (dir, name) = split(entry);
        let id = format!(
            "{}.{}",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        let path = dir.join(format!("{name}{INFIX}{id}"));
        let tmp = dir.join(format!(".{name}{INFIX}{id}.tmp"));
        let file = cache::create_new(&tmp)?;
        if let Err(e) = file.lock().and_then(|()| std::fs::rename(&tmp, &path)) {
            let _ = std::fs::remove_file(&tmp);
            return Err(e);
        }
        Ok(Mark { path, _file: file })
    }
}

impl Drop for Mark {
    fn drop(&mut self) {
        // The file closes (and unlocks) after this: nobody sees the mark
        // unlocked under its name.
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The folder and file name of `entry`.
fn split(entry: &Path) -> (&Path, String) {
    let dir = entry.parent().unwrap_or(Path::new("."));
    let name = entry
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    (dir, name)
}

/// Removes the marks on `entry` of processes that died while loading it,
/// and returns how many there were. Live loaders' marks stay. Anything else
/// under a mark's name (a link, a FIFO, a folder) was not made by this
/// crate: it is removed (never followed) with a warning, and not counted.
pub(super) fn remove_dead(entry: &Path) -> usize {
    let (dir, name) = split(entry);
    let prefix = format!("{name}{INFIX}");
    let Ok(list) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut dead = 0;
    for e in list.flatten() {
        if !e.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        let path = e.path();
        match state(&path) {
            State::Dead(file) => {
                // Removed while this process holds the lock, as a live
                // loader would remove its own.
                let _ = std::fs::remove_file(&path);
                drop(file);
                dead += 1;
            }
            State::Foreign => {
                log::warn!(
                    "{} is not a load mark of this crate; removing it",
                    path.display()
                );
                let _ = std::fs::remove_file(&path);
            }
            State::Busy => {}
        }
    }
    dead
}

/// What a file under a mark's name is.
enum State {
    /// A live process is loading (or the mark went away, or it cannot be
    /// told): leave it.
    Busy,
    /// Its process died; this process now holds its lock.
    Dead(File),
    /// Not a regular file.
    Foreign,
}

fn state(path: &Path) -> State {
    let foreign = || std::fs::symlink_metadata(path).is_ok_and(|m| !m.file_type().is_file());
    let file = match cache::careful(OpenOptions::new().read(true), false).open(path) {
        Ok(f) => f,
        Err(_) if foreign() => return State::Foreign,
        Err(_) => return State::Busy,
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return State::Foreign;
    }
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return State::Busy,
        Err(TryLockError::Error(e)) => {
            log::debug!("cannot lock {} to check it: {e}", path.display());
            return State::Busy;
        }
    }
    // Unlocked: its process died, or it finished and removed the mark
    // between the open and the lock. Names are unique per process, so a
    // name that still exists is the same mark.
    if path.exists() {
        State::Dead(file)
    } else {
        State::Busy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn marks(dir: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.contains(INFIX))
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn a_live_mark_is_not_a_crash_and_goes_away_when_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("a.bin");
        let mark = Mark::new(&entry).unwrap();
        let second = Mark::new(&entry).unwrap();
        assert_eq!(marks(dir.path()).len(), 2);
        // The locks are per open file, so this process's own check sees
        // them as another process's live marks.
        assert_eq!(remove_dead(&entry), 0);
        assert_eq!(marks(dir.path()).len(), 2);
        drop(mark);
        drop(second);
        assert!(marks(dir.path()).is_empty());
    }

    #[test]
    fn a_mark_without_its_process_is_a_crash() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("a.bin");
        let other = dir.path().join("b.bin");
        // What a process that died while loading leaves: the mark, unlocked.
        std::fs::write(dir.path().join("a.bin.loading.4242.0"), b"").unwrap();
        std::fs::write(dir.path().join("a.bin.loading.4243.7"), b"").unwrap();
        let live = Mark::new(&entry).unwrap();
        let _other = Mark::new(&other).unwrap();
        assert_eq!(remove_dead(&other), 0);
        assert_eq!(remove_dead(&entry), 2);
        assert_eq!(remove_dead(&entry), 0, "the dead marks were removed");
        assert_eq!(marks(dir.path()).len(), 2, "live marks stay");
        drop(live);
    }

    #[cfg(unix)]
    #[test]
    fn planted_marks_are_removed_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let entry = dir.path().join("a.bin");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, b"precious").unwrap();
        let link = dir.path().join("a.bin.loading.1.0");
        std::os::unix::fs::symlink(&victim, &link).unwrap();
        std::fs::create_dir(dir.path().join("a.bin.loading.2.0")).unwrap();
        assert_eq!(remove_dead(&entry), 0);
        assert!(!cache::is_link(&link));
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
        // A link planted at the temporary name makes the mark fail, and
        // the victim is not written.
        let tmp = dir
            .path()
            .join(format!(".a.bin.loading.{}.", std::process::id()));
        for n in 0..64 {
            let mut t = tmp.as_os_str().to_owned();
            t.push(format!("{n}.tmp"));
            std::os::unix::fs::symlink(&victim, PathBuf::from(t)).unwrap();
        }
        drop(Mark::new(&entry));
        assert_eq!(std::fs::read(&victim).unwrap(), b"precious");
    }
}
