//! [`FrameReader`]: fixed-size frames, each with an optional trailer, from any reader.

use std::io::{ErrorKind, Read};
use std::path::PathBuf;

use crate::error::{Error, Result};

/// Reads a stream of headerless frames of `frame_bytes` bytes, each followed
/// by `skip` trailer bytes (for example per-frame chunk data), from a file,
/// a pipe or stdin.
///
/// ```
/// use clfilter::image::raw::FrameReader;
///
/// // Two 4-byte frames, each followed by a 2-byte trailer.
/// let bytes = [1u8, 2, 3, 4, 0, 0, 5, 6, 7, 8, 0, 0];
/// let mut r = FrameReader::new(&bytes[..], 4, 2);
/// let mut buf = [0u8; 4];
/// assert!(r.read_into(&mut buf).unwrap());
/// assert_eq!(buf, [1, 2, 3, 4]);
/// assert!(r.read_into(&mut buf).unwrap());
/// assert_eq!(buf, [5, 6, 7, 8]);
/// assert!(!r.read_into(&mut buf).unwrap());
/// assert_eq!(r.frames_read(), 2);
/// ```
#[derive(Debug)]
pub struct FrameReader<R: Read> {
    inner: R,
    frame_bytes: usize,
    skip: usize,
    frames: usize,
    /// The last frame's trailer has not been skipped yet.
    trailer_due: bool,
    /// The stream ended (or failed); every later read returns `Ok(false)`.
    ended: bool,
    /// The name in I/O errors.
    path: PathBuf,
}

impl<R: Read> FrameReader<R> {
    /// A reader of `frame_bytes`-byte frames, each followed by `skip`
    /// trailer bytes that are read and dropped. I/O errors name the input
    /// `-` (stdin) unless [`FrameReader::with_path`] names it.
    pub fn new(inner: R, frame_bytes: usize, skip: usize) -> Self {
        FrameReader {
            inner,
            frame_bytes,
            skip,
            frames: 0,
            trailer_due: false,
            ended: false,
            path: PathBuf::from("-"),
        }
    }

    /// The name [`Error::Io`] gives the input (a file's path).
    pub fn with_path(mut self, path: impl Into<PathBuf>) -> Self {
        self.path = path.into();
        self
    }

    /// Fills `buf` (exactly `frame_bytes` long, else
    /// [`Error::InvalidArgument`]) with the next frame.
    ///
    /// - `Ok(true)`: a whole frame.
    /// - `Ok(false)`: the stream ended cleanly at a frame boundary.
    /// - `Err(Error::TruncatedFrame { .. })`: the stream ended inside a frame
    ///   (`buf` then holds the partial frame); the frames before it were
    ///   whole.
    /// - `Err(Error::Io { .. })`: reading failed.
    ///
    /// A frame's trailer is skipped when the next frame is asked for, so a
    /// frame is returned as soon as its own bytes have arrived. A stream
    /// that ends inside (or right at the start of) the trailer after a
    /// whole frame ends cleanly: that frame counted, and one `log::warn!`
    /// says so.
    ///
    /// Reads loop until the frame is whole (stdin and pipes return short
    /// reads) and retry [`ErrorKind::Interrupted`]. After the end, an error
    /// or a truncated frame, every call returns `Ok(false)`.
    pub fn read_into(&mut self, buf: &mut [u8]) -> Result<bool> {
        if self.frame_bytes == 0 {
            return Err(Error::arg("raw frames have at least 1 byte, not 0"));
        }
        if buf.len() != self.frame_bytes {
            return Err(Error::arg(format!(
                "the frame buffer has {} bytes, a frame {}",
                buf.len(),
                self.frame_bytes
            )));
        }
        if self.ended {
            return Ok(false);
        }
        if self.trailer_due {
            self.trailer_due = false;
            let got = self.skip_trailer()?;
            if got < self.skip {
                self.ended = true;
                // A trailer longer than the frames it follows is most
                // likely a wrong length, which has just swallowed frames.
                let swallowed = got / self.frame_bytes;
                let hint = if swallowed > 0 {
                    format!(
                        "; the trailer took as many bytes as {swallowed} more frame(s): \
                         is its length right?"
                    )
                } else {
                    String::new()
                };
                log::warn!(
                    "the input ended {got} bytes into the {}-byte trailer after frame {}; \
                     that frame is whole and counts{hint}",
                    self.skip,
                    self.frames - 1
                );
                return Ok(false);
            }
        }
        let got = self.fill(buf)?;
        if got == 0 {
            self.ended = true;
            return Ok(false);
        }
        if got < buf.len() {
            self.ended = true;
            return Err(Error::TruncatedFrame {
                index: self.frames,
                got,
                want: buf.len(),
            });
        }
        self.frames += 1;
        self.trailer_due = self.skip > 0;
        Ok(true)
    }

    /// Whole frames returned so far.
    pub fn frames_read(&self) -> usize {
        self.frames
    }

    /// The bytes of one frame.
    pub fn frame_bytes(&self) -> usize {
        self.frame_bytes
    }

    /// The trailer bytes after each frame.
    pub fn skip(&self) -> usize {
        self.skip
    }

    /// The underlying reader.
    pub fn into_inner(self) -> R {
        self.inner
    }

    /// Reads until `buf` is full or the stream ends; returns the bytes read.
    fn fill(&mut self, buf: &mut [u8]) -> Result<usize> {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) => break,
                Ok(n) => got += n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(self.io_error(e)),
            }
        }
        Ok(got)
    }

    /// Reads and drops up to `skip` bytes; returns how many there were.
    fn skip_trailer(&mut self) -> Result<usize> {
        let mut trailer = (&mut self.inner).take(self.skip as u64);
        // io::copy retries Interrupted and stops at the end of the stream.
        match std::io::copy(&mut trailer, &mut std::io::sink()) {
            Ok(n) => Ok(n as usize),
            Err(e) => Err(self.io_error(e)),
        }
    }

    fn io_error(&mut self, source: std::io::Error) -> Error {
        self.ended = true;
        Error::Io {
            path: self.path.clone(),
            source,
        }
    }
}
