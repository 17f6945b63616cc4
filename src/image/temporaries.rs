//! The temporary files this process is writing ([`super::output::OutputFile`]
//! and the cache's atomic writes), so that an exit that runs no destructors
//! can still remove them: a second stop signal ends `filterctl` at once,
//! and calls [`remove_all`] first.
//!
//! A file is created and recorded in one step under the registry's lock,
//! and after [`remove_all`] no new one is created, so no temporary file is
//! left between the two.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// The paths of the live temporary files, and whether the process is
/// exiting (no new ones then).
#[derive(Debug)]
struct Registry {
    paths: Vec<PathBuf>,
    closed: bool,
}

/// A registry behind a lock.
#[derive(Debug)]
struct Temporaries(Mutex<Registry>);

impl Temporaries {
    const fn new() -> Temporaries {
        Temporaries(Mutex::new(Registry {
            paths: Vec::new(),
            closed: false,
        }))
    }

    fn lock(&self) -> MutexGuard<'_, Registry> {
        // A thread that panicked while holding the lock left a whole list:
        // every change below is a single push or remove.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn create(
        &self,
        path: &Path,
        create: impl FnOnce(&Path) -> std::io::Result<File>,
    ) -> std::io::Result<File> {
        let mut reg = self.lock();
        if reg.closed {
            return Err(std::io::Error::other(
                "the process is exiting; no new temporary file",
            ));
        }
        let file = create(path)?;
        reg.paths.push(path.to_path_buf());
        Ok(file)
    }

    fn forget(&self, path: &Path) {
        let mut reg = self.lock();
        if let Some(i) = reg.paths.iter().position(|p| p == path) {
            reg.paths.swap_remove(i);
        }
    }

    fn remove_all(&self) -> usize {
        let mut reg = self.lock();
        reg.closed = true;
        let paths = std::mem::take(&mut reg.paths);
        // A file renamed over its target a moment ago is gone under this
        // name already: only the ones still there count.
        paths
            .iter()
            .filter(|p| std::fs::remove_file(p).is_ok())
            .count()
    }
}

/// The process's registry.
static LIVE: Temporaries = Temporaries::new();

/// Creates the temporary file `path` with `create` and records it, unless
/// [`remove_all`] has run (an error then, and nothing is created).
pub(crate) fn create(
    path: &Path,
    create: impl FnOnce(&Path) -> std::io::Result<File>,
) -> std::io::Result<File> {
    LIVE.create(path, create)
}

/// Forgets `path`: it was renamed over its target, or removed.
pub(crate) fn forget(path: &Path) {
    LIVE.forget(path);
}

/// Removes every temporary file this process is writing, and refuses new
/// ones from then on; returns how many were removed. For an exit that runs
/// no destructors (`filterctl`'s second stop signal): outputs being written
/// are abandoned, their targets keep their old contents or stay absent.
/// Takes a lock, so it is not for a signal handler itself; call it from a
/// thread the handler wakes (as `signal_hook::iterator` does).
pub fn remove_all() -> usize {
    LIVE.remove_all()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn new_file(p: &Path) -> std::io::Result<File> {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(p)
    }

    #[test]
    fn remove_all_removes_the_live_files_and_refuses_new_ones() {
        let d = tempfile::tempdir().unwrap();
        let reg = Temporaries::new();
        let (a, b, c) = (d.path().join("a"), d.path().join("b"), d.path().join("c"));
        reg.create(&a, new_file).unwrap();
        reg.create(&b, new_file).unwrap();
        // `b` was committed: renamed away and forgotten.
        std::fs::rename(&b, d.path().join("b.done")).unwrap();
        reg.forget(&b);
        // A failed create records nothing.
        assert!(reg.create(&a, new_file).is_err());
        assert_eq!(reg.remove_all(), 1);
        assert!(!a.exists());
        assert!(d.path().join("b.done").exists());
        let e = reg.create(&c, new_file).unwrap_err();
        assert!(e.to_string().contains("exiting"), "{e}");
        assert!(!c.exists());
        assert_eq!(reg.remove_all(), 0);
    }
}
