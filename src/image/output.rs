//! Output files that cannot destroy an input or leave a partial file behind.
//!
//! [`OutputFile`] writes into a new temporary file in the target's folder and
//! renames it over the target on [`OutputFile::commit`]. Dropped without a
//! commit (an error, a full disk), it removes the temporary file, so a
//! failure leaves the old file or nothing. [`FileId`] tells whether two names
//! are the same file (device and inode, links resolved), so an output can be
//! refused before it is opened when it is one of the inputs. The temporary
//! files are recorded in [`super::temporaries`], whose
//! [`remove_all`](super::temporaries::remove_all) removes them for an exit
//! that runs no destructors.

use std::fs::{File, OpenOptions};
use std::io::{Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use super::temporaries;
use crate::error::{Error, Result};

/// A file being written: into a temporary file that [`OutputFile::commit`]
/// renames over the target, or, for a target that is not a regular file (a
/// terminal, `/dev/null`, a FIFO), in place, since renaming over a device
/// node would replace it.
///
/// A target that is a symbolic link is followed: the file it points to is
/// replaced and the link stays. The new file keeps an existing target's
/// permissions.
///
/// ```
/// use std::io::Write;
/// use clfilter::image::output::OutputFile;
///
/// let dir = std::env::temp_dir().join(format!("clf-doc-output-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let path = dir.join("a.txt");
/// std::fs::write(&path, "old").unwrap();
/// let mut out = OutputFile::create(&path).unwrap();
/// out.write_all(b"new").unwrap();
/// drop(out); // no commit: the old file stays, and no temporary file is left
/// assert_eq!(std::fs::read(&path).unwrap(), b"old");
/// let mut out = OutputFile::create(&path).unwrap();
/// out.write_all(b"new").unwrap();
/// out.commit().unwrap();
/// assert_eq!(std::fs::read(&path).unwrap(), b"new");
/// assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
/// std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug)]
pub struct OutputFile {
    /// The name as given, for messages.
    path: PathBuf,
    /// The file the name resolves to (links followed).
    dest: PathBuf,
    /// The temporary file; `None` when writing in place.
    tmp: Option<PathBuf>,
    file: File,
    /// The last write or flush that failed: its OS error code where it had
    /// one, else its kind (encoders wrap these in their own errors).
    failed: Option<(std::io::ErrorKind, Option<i32>)>,
}

/// Symbolic links followed before giving up (Linux's own limit).
const MAX_LINKS: usize = 40;

/// `path` with symbolic links in its last component followed; a dangling
/// link resolves to the file it would create.
fn resolve_links(path: &Path) -> std::io::Result<PathBuf> {
    let mut p = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        match std::fs::symlink_metadata(&p) {
            Ok(m) if m.file_type().is_symlink() => {
                let target = std::fs::read_link(&p)?;
                p = match p.parent() {
                    Some(dir) if target.is_relative() => dir.join(target),
                    _ => target,
                };
            }
            _ => return Ok(p),
        }
    }
    Err(std::io::Error::other(format!(
        "more than {MAX_LINKS} symbolic links"
    )))
}

/// Whether `path` names a descriptor of this process (`/dev/stdout`,
/// `/dev/stderr`, `/dev/fd/N`, `/proc/self/fd/N`).
fn names_a_descriptor(path: &Path) -> bool {
    path == Path::new("/dev/stdout")
        || path == Path::new("/dev/stderr")
        || path.starts_with("/dev/fd")
        || path.starts_with("/proc/self/fd")
}

impl OutputFile {
    /// Starts writing `path`. Fails, with nothing created, when the folder
    /// does not exist or cannot be written, when `path` is a folder, or when
    /// it is a read-only file (`chmod a-w`), which a rename would replace
    /// without asking for write permission.
    pub fn create(path: impl AsRef<Path>) -> Result<OutputFile> {
        let path = path.as_ref();
        // A name of one of this process's descriptors is written through
        // that descriptor's file as the shell opened it: appended, never
        // replaced (a rename would swap a `> file` or `>> file` redirection
        // for a new file that the descriptor does not point to).
        if names_a_descriptor(path) {
            let file = OpenOptions::new()
                .append(true)
                .open(path)
                .map_err(|e| Error::io(path, e))?;
            return Ok(OutputFile {
                path: path.to_path_buf(),
                dest: path.to_path_buf(),
                tmp: None,
                file,
                failed: None,
            });
        }
        // A target that is not a regular file, links followed by the system
        // (`/dev/stdout` -> `/proc/self/fd/1` -> `pipe:[N]`, which names no
        // file of its own), is written in place through the name given.
        if std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir()) {
            if let Some(out) = Self::in_place(path, path.to_path_buf())? {
                return Ok(out);
            }
        }
        let dest = resolve_links(path).map_err(|e| Error::io(path, e))?;
        let existing = match std::fs::metadata(&dest) {
            Ok(m) => Some(m),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
            Err(e) => return Err(Error::io(path, e)),
        };
        if let Some(m) = &existing {
            if m.is_dir() {
                return Err(Error::io(
                    path,
                    std::io::Error::new(std::io::ErrorKind::IsADirectory, "is a folder"),
                ));
            }
            // Renaming over a file needs no write permission on it; a file
            // someone made read-only is refused as a write to it would be.
            if m.is_file() && m.permissions().readonly() {
                return Err(Error::io(
                    path,
                    std::io::Error::new(
                        std::io::ErrorKind::PermissionDenied,
                        "the file is read-only; refusing to replace it",
                    ),
                ));
            }
            if !m.is_file() {
                if let Some(out) = Self::in_place(path, dest.clone())? {
                    return Ok(out);
                }
            }
        }
        let (tmp, file) = create_temp(&dest, existing.as_ref()).map_err(|e| Error::io(path, e))?;
        Ok(OutputFile {
            path: path.to_path_buf(),
            dest,
            tmp: Some(tmp),
            file,
            failed: None,
        })
    }

    /// Opens the existing non-regular file `dest` (a device, a FIFO, a
    /// pipe) for writing, without a temporary file. `None` when what the
    /// name opens is a regular file after all (replaced since it was
    /// checked): that one is written through a temporary file instead, so
    /// it is opened without truncating and left untouched here.
    fn in_place(path: &Path, dest: PathBuf) -> Result<Option<OutputFile>> {
        let file = OpenOptions::new()
            .write(true)
            .open(&dest)
            .map_err(|e| Error::io(path, e))?;
        if file.metadata().map_err(|e| Error::io(path, e))?.is_file() {
            return Ok(None);
        }
        Ok(Some(OutputFile {
            path: path.to_path_buf(),
            dest,
            tmp: None,
            file,
            failed: None,
        }))
    }

    /// The name the file was created with.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the output goes through a temporary file (the target is a
    /// regular file or does not exist yet).
    pub fn is_atomic(&self) -> bool {
        self.tmp.is_some()
    }

    /// Flushes the data to disk and renames the temporary file over the
    /// target. A failure (a full disk shows here on some file systems)
    /// removes the temporary file and leaves the target as it was.
    pub fn commit(self) -> Result<()> {
        self.finish(None)
    }

    /// Cuts the file to its first `len` bytes, then commits it: a stream
    /// that failed part-way keeps its whole frames.
    pub fn commit_prefix(self, len: u64) -> Result<()> {
        self.finish(Some(len))
    }

    fn finish(mut self, len: Option<u64>) -> Result<()> {
        let path = self.path.clone();
        let err = |e| Error::io(&path, e);
        if self.tmp.is_none() {
            return self.file.flush().map_err(err);
        }
        if let Some(len) = len {
            self.file.set_len(len).map_err(err)?;
        }
        self.file.sync_all().map_err(err)?;
        let tmp = self.tmp.take().expect("checked above");
        let renamed = std::fs::rename(&tmp, &self.dest);
        if renamed.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        temporaries::forget(&tmp);
        renamed.map_err(err)
    }
}

/// Creates a new, uniquely named, hidden file beside `dest`. `create_new`
/// (`O_CREAT | O_EXCL`) never follows a link planted at that name.
fn create_temp(
    dest: &Path,
    existing: Option<&std::fs::Metadata>,
) -> std::io::Result<(PathBuf, File)> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let dir = match dest.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    // Only the name's start: the suffix below must not push a legal name
    // (up to 255 bytes) over the file system's limit.
    let name: String = dest
        .file_name()
        .map(|n| n.to_string_lossy().chars().take(64).collect())
        .unwrap_or_default();
    let mut tries = 0;
    loop {
        let tmp = dir.join(format!(
            ".{name}.{}-{}.clfilter-tmp",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        ));
        let mut opts = OpenOptions::new();
        opts.write(true).create_new(true);
        #[cfg(unix)]
        if let Some(m) = existing {
            use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
            opts.mode(m.permissions().mode() & 0o7777);
        }
        #[cfg(not(unix))]
        let _ = existing;
        match temporaries::create(&tmp, |p| opts.open(p)) {
            Ok(f) => return Ok((tmp, f)),
            // A stale file of an earlier process with our pid: take the next name.
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists && tries < 100 => tries += 1,
            Err(e) => return Err(e),
        }
    }
}

impl Drop for OutputFile {
    fn drop(&mut self) {
        if let Some(tmp) = self.tmp.take() {
            let _ = std::fs::remove_file(&tmp);
            temporaries::forget(&tmp);
        }
    }
}

impl OutputFile {
    /// The error of the last write or flush that failed, as the system gave
    /// it (a full disk, a closed pipe), or `None`.
    pub fn write_error(&self) -> Option<std::io::Error> {
        self.failed.map(|(kind, code)| match code {
            Some(c) => std::io::Error::from_raw_os_error(c),
            None => std::io::Error::from(kind),
        })
    }

    /// Notes `r`'s error for [`OutputFile::write_error`] (not an
    /// interruption, which the writer retries).
    fn note<T>(&mut self, r: std::io::Result<T>) -> std::io::Result<T> {
        if let Err(e) = &r {
            if e.kind() != std::io::ErrorKind::Interrupted {
                self.failed = Some((e.kind(), e.raw_os_error()));
            }
        }
        r
    }
}

impl Write for OutputFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        let r = self.file.write(buf);
        self.note(r)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        let r = self.file.flush();
        self.note(r)
    }
}

impl Seek for OutputFile {
    fn seek(&mut self, pos: SeekFrom) -> std::io::Result<u64> {
        self.file.seek(pos)
    }
}

/// A file's identity: its device and inode. Two names with the same id are
/// the same file, whatever links or `..` lead to it. Only regular files get
/// one: a terminal or a pipe may be both stdin and stdout without harm.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct FileId {
    dev: u64,
    ino: u64,
}

impl FileId {
    /// The id of the regular file `path` names (links followed); `None`
    /// when there is no such file, or it is not a regular file.
    pub fn of(path: impl AsRef<Path>) -> Option<FileId> {
        Self::from_metadata(&std::fs::metadata(path).ok()?)
    }

    /// The id of the regular file behind stdin (`< file`), if any.
    pub fn stdin() -> Option<FileId> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            Self::of_fd(std::io::stdin().as_fd())
        }
        #[cfg(not(unix))]
        None
    }

    /// The id of the regular file behind stdout (`> file`, `>> file`), if any.
    pub fn stdout() -> Option<FileId> {
        #[cfg(unix)]
        {
            use std::os::fd::AsFd;
            Self::of_fd(std::io::stdout().as_fd())
        }
        #[cfg(not(unix))]
        None
    }

    #[cfg(unix)]
    fn of_fd(fd: std::os::fd::BorrowedFd<'_>) -> Option<FileId> {
        let file = File::from(fd.try_clone_to_owned().ok()?);
        Self::from_metadata(&file.metadata().ok()?)
    }

    #[cfg(unix)]
    fn from_metadata(m: &std::fs::Metadata) -> Option<FileId> {
        use std::os::unix::fs::MetadataExt;
        m.is_file().then(|| FileId {
            dev: m.dev(),
            ino: m.ino(),
        })
    }

    #[cfg(not(unix))]
    fn from_metadata(_: &std::fs::Metadata) -> Option<FileId> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> tempfile::TempDir {
        tempfile::tempdir().unwrap()
    }

    fn names(d: &Path) -> Vec<String> {
        let mut v: Vec<_> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        v.sort_unstable();
        v
    }

    #[test]
    fn commit_replaces_and_drop_leaves_the_old_file() {
        let d = dir();
        let p = d.path().join("out.raw");
        let mut o = OutputFile::create(&p).unwrap();
        assert!(o.is_atomic());
        o.write_all(b"first").unwrap();
        assert!(!p.exists(), "nothing at the target before the commit");
        o.commit().unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
        let mut o = OutputFile::create(&p).unwrap();
        o.write_all(b"second, longer").unwrap();
        drop(o);
        assert_eq!(std::fs::read(&p).unwrap(), b"first");
        assert_eq!(names(d.path()), ["out.raw"]);
    }

    #[test]
    fn commit_prefix_keeps_whole_frames() {
        let d = dir();
        let p = d.path().join("frames.raw");
        let mut o = OutputFile::create(&p).unwrap();
        o.write_all(b"AAAABBBBCC").unwrap();
        o.commit_prefix(8).unwrap();
        assert_eq!(std::fs::read(&p).unwrap(), b"AAAABBBB");
    }

    #[cfg(unix)]
    #[test]
    fn links_are_followed_and_kept_and_modes_too() {
        use std::os::unix::fs::PermissionsExt;
        let d = dir();
        let real = d.path().join("real.png");
        std::fs::write(&real, b"old").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = d.path().join("link.png");
        std::os::unix::fs::symlink("real.png", &link).unwrap();
        let mut o = OutputFile::create(&link).unwrap();
        o.write_all(b"new").unwrap();
        o.commit().unwrap();
        assert!(std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(std::fs::read(&real).unwrap(), b"new");
        let mode = std::fs::metadata(&real).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o640);
        // A dangling link creates the file it points to.
        let dangling = d.path().join("dangling.png");
        std::os::unix::fs::symlink("made.png", &dangling).unwrap();
        OutputFile::create(&dangling).unwrap().commit().unwrap();
        assert!(d.path().join("made.png").is_file());
    }

    #[test]
    fn read_only_files_are_not_replaced() {
        let d = dir();
        let p = d.path().join("kept.png");
        std::fs::write(&p, b"old").unwrap();
        let mut perms = std::fs::metadata(&p).unwrap().permissions();
        perms.set_readonly(true);
        std::fs::set_permissions(&p, perms).unwrap();
        let e = OutputFile::create(&p).unwrap_err().to_string();
        assert!(e.contains("read-only"), "{e}");
        assert_eq!(std::fs::read(&p).unwrap(), b"old");
        assert_eq!(names(d.path()), ["kept.png"]);
    }

    #[test]
    fn folders_and_missing_folders_are_errors() {
        let d = dir();
        let e = OutputFile::create(d.path()).unwrap_err().to_string();
        assert!(e.contains("is a folder"), "{e}");
        assert!(OutputFile::create(d.path().join("no/such/dir/x.png")).is_err());
        assert_eq!(names(d.path()), Vec::<String>::new());
    }

    #[cfg(unix)]
    #[test]
    fn device_nodes_are_written_in_place() {
        let mut o = OutputFile::create("/dev/null").unwrap();
        assert!(!o.is_atomic());
        o.write_all(b"x").unwrap();
        o.commit().unwrap();
        assert!(!std::fs::metadata("/dev/null")
            .unwrap()
            .file_type()
            .is_file());
    }

    #[cfg(unix)]
    #[test]
    fn file_ids_see_through_links() {
        let d = dir();
        let a = d.path().join("a");
        std::fs::write(&a, b"x").unwrap();
        let hard = d.path().join("hard");
        std::fs::hard_link(&a, &hard).unwrap();
        let sym = d.path().join("sym");
        std::os::unix::fs::symlink(&a, &sym).unwrap();
        let dotted = d.path().join("sub/../a");
        std::fs::create_dir(d.path().join("sub")).unwrap();
        let id = FileId::of(&a).unwrap();
        assert_eq!(FileId::of(&hard), Some(id));
        assert_eq!(FileId::of(&sym), Some(id));
        assert_eq!(FileId::of(&dotted), Some(id));
        let b = d.path().join("b");
        std::fs::write(&b, b"x").unwrap();
        assert_ne!(FileId::of(&b), Some(id));
        assert_eq!(FileId::of(d.path()), None);
        assert_eq!(FileId::of("/dev/null"), None);
        assert_eq!(FileId::of(d.path().join("missing")), None);
    }
}
