//! What keeps a run from destroying its inputs or leaving half-written
//! outputs: an output that is one of the inputs is refused before anything
//! is opened, and the first SIGINT, SIGTERM or SIGHUP stops `apply` and
//! `stream` at the next whole output instead of killing them mid-write;
//! a signal that ends a run removes its temporary files first.

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
/// Set by [`catch_stop_signals`]: a stop signal asks the run to stop
/// instead of ending the process.
static COOPERATIVE: AtomicBool = AtomicBool::new(false);

/// A repeat of the stop signal sooner than this after the first is the same
/// request delivered twice (`timeout(1)` signals the command and then its
/// process group), not a second one.
const REPEAT: std::time::Duration = std::time::Duration::from_millis(200);

/// Takes SIGINT, SIGTERM and SIGHUP for the whole run, on a helper thread
/// (so no blocked call of the run is interrupted, and the clean-up below
/// runs outside the handler). Until [`catch_stop_signals`], a signal
/// removes the temporary files of the outputs being written and then ends
/// the process as the signal's default action would (killed by it).
pub fn watch_stop_signals() {
    #[cfg(unix)]
    {
        use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
        let mut signals = match signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP]) {
            Ok(s) => s,
            Err(e) => {
                log::debug!("stop signals keep their default action: {e}");
                return;
            }
        };
        std::thread::spawn(move || {
            let mut first: Option<std::time::Instant> = None;
            for sig in signals.forever() {
                if !COOPERATIVE.load(Ordering::SeqCst) {
                    clfilter::image::temporaries::remove_all();
                    if let Err(e) = signal_hook::low_level::emulate_default_handler(sig) {
                        log::debug!("signal {sig}: {e}");
                    }
                    signal_hook::low_level::exit(128 + sig);
                }
                match first {
                    None => {
                        SIGNAL.store(sig as usize, Ordering::SeqCst);
                        STOP.store(true, Ordering::SeqCst);
                        first = Some(std::time::Instant::now());
                    }
                    Some(t) if t.elapsed() >= REPEAT => {
                        // Destructors do not run: the outputs being written
                        // are abandoned here, their temporary files removed.
                        clfilter::image::temporaries::remove_all();
                        signal_hook::low_level::exit(128 + sig)
                    }
                    Some(_) => {}
                }
            }
        });
    }
}

/// From now on the first stop signal only asks the run to stop
/// ([`stopped`]); a second one, [`REPEAT`] or more later, removes the
/// temporary files of the outputs being written and ends the process at
/// once with exit code 128 + the signal's number.
pub fn catch_stop_signals() {
    COOPERATIVE.store(true, Ordering::SeqCst);
}

/// The stop signal that has arrived, if any.
pub fn stopped() -> Option<i32> {
    STOP.load(Ordering::SeqCst)
        .then(|| SIGNAL.load(Ordering::SeqCst) as i32)
}

/// Stdin, read by a helper thread, so that a stop signal ends a read that
/// waits on an idle pipe: the handler only sets a flag, and the system
/// restarts the helper's blocked `read`, but this reader stops waiting and
/// fails with `stopped by signal N` (kind [`std::io::ErrorKind::Other`],
/// which readers do not retry). Data the helper has read is handed out first.
pub struct StopReader {
    rx: std::sync::mpsc::Receiver<std::io::Result<Vec<u8>>>,
    chunk: Vec<u8>,
    at: usize,
    ended: bool,
}

/// How often a waiting [`StopReader`] looks at the stop flag.
const STOP_POLL: std::time::Duration = std::time::Duration::from_millis(50);

impl StopReader {
    /// Starts reading stdin. The helper thread ends at the end of the input
    /// or an error; one still blocked when the run ends goes with the process.
    pub fn stdin() -> StopReader {
        use std::io::Read;
        // Two chunks in flight: the helper reads ahead, and no further.
        let (tx, rx) = std::sync::mpsc::sync_channel(2);
        std::thread::spawn(move || {
            let mut stdin = std::io::stdin().lock();
            loop {
                let mut chunk = vec![0u8; 1 << 16];
                let sent = match stdin.read(&mut chunk) {
                    Ok(n) => {
                        chunk.truncate(n);
                        tx.send(Ok(chunk)).is_ok() && n > 0
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => true,
                    Err(e) => {
                        let _ = tx.send(Err(e));
                        false
                    }
                };
                if !sent {
                    return;
                }
            }
        });
        StopReader {
            rx,
            chunk: Vec::new(),
            at: 0,
            ended: false,
        }
    }
}

impl std::io::Read for StopReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        use std::sync::mpsc::RecvTimeoutError;
        loop {
            if self.at < self.chunk.len() {
                let n = buf.len().min(self.chunk.len() - self.at);
                buf[..n].copy_from_slice(&self.chunk[self.at..self.at + n]);
                self.at += n;
                return Ok(n);
            }
            if self.ended {
                return Ok(0);
            }
            if let Some(signal) = stopped() {
                return Err(std::io::Error::other(format!("stopped by signal {signal}")));
            }
            match self.rx.recv_timeout(STOP_POLL) {
                Ok(Ok(chunk)) => {
                    self.ended = chunk.is_empty();
                    (self.chunk, self.at) = (chunk, 0);
                }
                Ok(Err(e)) => return Err(e),
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => self.ended = true,
            }
        }
    }
}
