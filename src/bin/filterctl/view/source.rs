//! Where the view's frames come from (a still image, run through the
//! pipeline again for every frame, or raw frames from a file or stdin read
//! on their own thread), how one is run through the pipeline, and its
//! conversion to the RGBA8 pixels the window shows.

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

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
    /// The frame as an image, to show unfiltered.
    pub fn original(&self) -> DynImage {
        match self {
            Input::Image(img) => img.clone(),
            Input::Raw(frame) => frame.to_dyn(),
        }
    }

    /// Runs `ops` on the frame: device-resident where the engine has a
    /// device, as `filterctl apply` does.
    pub fn run(
        &self,
        engine: &Engine,
        ops: &[Op],
    ) -> clfilter::Result<(DynImage, Vec<StageOutcome>)> {
        match self {
            Input::Image(img) => pipeline::run_outcomes(engine, ops, img.clone()),
            Input::Raw(frame) => pipeline::run_frame(engine, ops, frame.clone()),
        }
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
            let mut buf = vec![0u8; frame_bytes];
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

/// The image as RGBA8 rows, top row first, as the window shows it: u8 as
/// it is, u16 and f32 from their full scale (65535, 1.0) to 255 rounded to
/// nearest and saturated (as `convert=u8` rounds; NaN shows as 0), gray
/// repeated in R, G and B, and alpha 255 where the image has none.
pub fn to_rgba8(img: &DynImage) -> (u32, u32, Vec<u8>) {
    let (w, h, ch) = img.shape();
    let samples: Vec<u8> = match img {
        DynImage::U8(i) => i.rows().flatten().copied().collect(),
        // 257 is odd, so `v / 257` is never halfway and + 128 rounds it.
        DynImage::U16(i) => i
            .rows()
            .flatten()
            .map(|&v| ((u32::from(v) + 128) / 257) as u8)
            .collect(),
        DynImage::F32(i) => i
            .rows()
            .flatten()
            .map(|&v| (v * 255.0).round_ties_even().clamp(0.0, 255.0) as u8)
            .collect(),
    };
    let mut rgba = Vec::with_capacity(w * h * 4);
    for px in samples.chunks_exact(ch) {
        match *px {
            [g] => rgba.extend_from_slice(&[g, g, g, 255]),
            [r, g, b] => rgba.extend_from_slice(&[r, g, b, 255]),
            [r, g, b, a] => rgba.extend_from_slice(&[r, g, b, a]),
            _ => unreachable!("images have 1, 3 or 4 channels"),
        }
    }
    (w as u32, h as u32, rgba)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clfilter::image::Image;

    #[test]
    fn every_sample_type_and_channel_count_becomes_rgba8() {
        let gray = Image::<u16>::from_vec(2, 1, 1, vec![0, 65535]).unwrap();
        assert_eq!(
            to_rgba8(&gray.into()),
            (2, 1, vec![0, 0, 0, 255, 255, 255, 255, 255])
        );
        let rgb = Image::<f32>::from_vec(1, 1, 3, vec![0.5, f32::NAN, 2.0]).unwrap();
        assert_eq!(to_rgba8(&rgb.into()), (1, 1, vec![128, 0, 255, 255]));
        let rgba = Image::<u8>::from_vec(1, 1, 4, vec![1, 2, 3, 4]).unwrap();
        assert_eq!(to_rgba8(&rgba.into()), (1, 1, vec![1, 2, 3, 4]));
    }

    #[test]
    fn u16_rounds_as_convert_does() {
        for v in [0u16, 128, 129, 385, 386, 65407, 65535] {
            let img = Image::<u16>::from_vec(1, 1, 1, vec![v]).unwrap();
            let want = (f64::from(v) / 257.0).round() as u8;
            assert_eq!(to_rgba8(&img.into()).2[0], want, "{v}");
        }
    }
}
