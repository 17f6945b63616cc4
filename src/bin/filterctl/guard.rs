//! What keeps a run from destroying its inputs or leaving half-written
//! outputs: an output that is one of the inputs is refused before anything
//! is opened, and the first SIGINT, SIGTERM or SIGHUP stops `apply` and
//! `stream` at the next whole output instead of killing them mid-write.

use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use clfilter::image::output::FileId;

use crate::error::CliError;

/// The files a run reads, by identity.
#[derive(Debug, Default)]
pub struct Inputs {
    ids: Vec<(FileId, String)>,
}

impl Inputs {
    /// Adds the file `path` names (nothing for a missing or non-regular file:
    /// reading it fails later with its own error, and a pipe or terminal
    /// cannot be overwritten).
    pub fn add(&mut self, path: &Path) {
        if let Some(id) = FileId::of(path) {
            self.ids.push((id, path.display().to_string()));
        }
    }

    /// Adds the file stdin is redirected from, if any.
    pub fn add_stdin(&mut self) {
        if let Some(id) = FileId::stdin() {
            self.ids.push((id, "stdin".into()));
        }
    }

    fn find(&self, id: Option<FileId>) -> Option<&str> {
        let id = id?;
        self.ids
            .iter()
            .find(|(i, _)| *i == id)
            .map(|(_, n)| n.as_str())
    }

    /// Refuses an output that is one of the inputs (the same device and
    /// inode: the same path, a symbolic or hard link, `..` forms).
    pub fn check_output(&self, out: &Path) -> Result<(), CliError> {
        match self.find(FileId::of(out)) {
            Some(input) => Err(CliError::usage(format!(
                "output {} is the same file as the input {input}; refusing to overwrite it",
                out.display()
            ))),
            None => Ok(()),
        }
    }

    /// Refuses a stdout that is redirected into one of the inputs
    /// (`>> input`: the run would read its own output).
    pub fn check_stdout(&self) -> Result<(), CliError> {
        match self.find(FileId::stdout()) {
            Some(input) => Err(CliError::usage(format!(
                "stdout is redirected into the input {input}; refusing to write into it"
            ))),
            None => Ok(()),
        }
    }
}

/// Set by the first stop signal.
static STOP: AtomicBool = AtomicBool::new(false);
/// The signal's number.
static SIGNAL: AtomicUsize = AtomicUsize::new(0);

/// From now on the first SIGINT, SIGTERM or SIGHUP only asks the run to stop
/// ([`stopped`]); a second one ends the process at once with exit code
/// 128 + the signal's number.
pub fn catch_stop_signals() {
    #[cfg(unix)]
    for sig in [
        signal_hook::consts::SIGINT,
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
    ] {
        // The shutdown goes first, so that it only fires once STOP is set.
        let hooked = signal_hook::flag::register_conditional_shutdown(sig, 128 + sig, &STOP)
            .and_then(|_| signal_hook::flag::register_usize(sig, &SIGNAL, sig as usize))
            .and_then(|_| signal_hook::flag::register(sig, &STOP));
        if let Err(e) = hooked {
            log::debug!("signal {sig} stays fatal: {e}");
        }
    }
}

/// The stop signal that has arrived, if any.
pub fn stopped() -> Option<i32> {
    STOP.load(Ordering::SeqCst)
        .then(|| SIGNAL.load(Ordering::SeqCst) as i32)
}
