//! Where the view's frames come from (a still image, run through the
//! pipeline again for every frame, or raw frames from a file or stdin read
//! on their own thread), and how one is run through the pipeline into the
//! RGBA8 pixels the window shows.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use clfilter::image::display::{to_display, DisplayFormat, DisplayFrame};
use clfilter::image::raw::{FrameReader, RawFormat, RawImage};
use clfilter::image::DynImage;
use clfilter::pipeline::{self, Op, StageOutcome};
use clfilter::Engine;

use crate::error::CliError;

/// Raw frames read ahead of the window; a slow pipeline blocks the reader
/// (and the camera's pipe) rather than queueing frames without bound.
const READ_AHEAD: usize = 2;

/// One input frame.
#[derive(Debug, Clone)]
pub enum Input {
    /// A decoded image file.
    Image(DynImage),
    /// A decoded raw camera frame.
    Raw(RawImage),
}

impl Input {
    /// The frame unfiltered, as the window shows it.
    pub fn original(&self) -> clfilter::Result<DisplayFrame> {
        match self {
            Input::Image(img) => to_display(img, DisplayFormat::Rgba8),
            Input::Raw(frame) => to_display(&frame.to_dyn()?, DisplayFormat::Rgba8),
        }
    }

    /// Runs `ops` on the frame into RGBA8: device-resident where the engine
    /// has a device, as `filterctl apply` does, the conversion included.
    pub fn run(
        &self,
        engine: &Engine,
        ops: &[Op],
    ) -> clfilter::Result<(DisplayFrame, Vec<StageOutcome>)> {
        let input = match self {
            Input::Image(img) => pipeline::Input::Image(img),
            Input::Raw(frame) => pipeline::Input::Frame(frame),
        };
        pipeline::run_display(engine, ops, input, DisplayFormat::Rgba8)
    }
}

/// The frames to show.
pub enum Source {
    /// One image, shown live: each frame runs the pipeline on it again.
    Still(Input),
    /// Raw frames as they arrive; `None` once the stream has ended.
    Stream(Option<Receiver<clfilter::Result<RawImage>>>),
}

impl Source {
    /// A still image file.
    pub fn still(img: DynImage) -> Self {
        Source::Still(Input::Image(img))
    }

    /// Raw frames of `format` from `path` (`-`: stdin), each followed by
    /// `skip` trailer bytes, read on a thread of their own.
    pub fn stream(
        path: &Path,
        format: RawFormat,
        (width, height): (usize, usize),
        skip: usize,
    ) -> Result<Self, CliError> {
        let frame_bytes = format.frame_bytes(width, height)?;
        let reader: Box<dyn Read + Send> = if path == Path::new("-") {
            Box::new(std::io::stdin())
        } else {
            Box::new(File::open(path).map_err(|source| CliError::Io {
                path: path.to_path_buf(),
                source,
            })?)
        };
        let mut frames = FrameReader::new(reader, frame_bytes, skip).with_path(path);
        let (tx, rx) = mpsc::sync_channel(READ_AHEAD);
        std::thread::spawn(move || loop {
            let mut buf = match clfilter::simd::mem::try_zeroed::<u8>(frame_bytes) {
                Ok(buf) => buf,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return;
                }
            };
            let frame = match frames.read_into(&mut buf) {
                Ok(false) => return,
                Ok(true) => format.decode_vec(buf, width, height),
                Err(e) => Err(e),
            };
            let failed = frame.is_err();
            // A send fails only once the window has closed.
            if tx.send(frame).is_err() || failed {
                return;
            }
        });
        Ok(Source::Stream(Some(rx)))
    }

    /// The next frame, waiting at most `wait` for a raw one: `Ok(None)` when
    /// none came in time or the stream has ended ([`Source::ended`]).
    pub fn next(&mut self, wait: Duration) -> clfilter::Result<Option<Input>> {
        match self {
            Source::Still(input) => Ok(Some(input.clone())),
            Source::Stream(rx) => {
                let Some(r) = rx else {
                    return Ok(None);
                };
                match r.recv_timeout(wait) {
                    Ok(frame) => frame.map(|f| Some(Input::Raw(f))),
                    Err(RecvTimeoutError::Timeout) => Ok(None),
                    Err(RecvTimeoutError::Disconnected) => {
                        *rx = None;
                        Ok(None)
                    }
                }
            }
        }
    }

    /// Whether a stream has delivered its last frame.
    pub fn ended(&self) -> bool {
        matches!(self, Source::Stream(None))
    }
}
