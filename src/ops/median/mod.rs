//! `median`: the median of the (2r+1)x(2r+1) window around each pixel
//! (r = 1, 2, 3: 3x3, 5x5, 7x7), per channel, with replicate borders. How
//! a camera pipeline removes hot and dead pixels without blurring edges.
//!
//! - Exact: every path selects one of the window's samples, so results
//!   equal the reference bit for bit.
//! - f32 samples are ordered by IEEE-754 `totalOrder` ([`f32::total_cmp`]):
//!   -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN. A NaN is the median
//!   only where more than half its window is NaN (positive NaNs count as
//!   the largest values), and -0 and +0 are distinct values.
//! - The alpha channel of 4-channel images is copied, not filtered: alpha
//!   is coverage, not a measurement with defects, and a median would eat
//!   thin opaque features of a mask.

pub mod api;
pub mod cpu;
pub(crate) mod device;
mod net;
pub mod reference;
mod shared;
pub mod stage;
mod three;
mod tune;
pub mod variants;

use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{Image, Sample};
use crate::ops::{OpSpec, RunReport, Shape, TuneBucket};
pub use api::MedianExt;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "median",
    sources: &[crate::cl_source!("median/median.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["local", "network"],
    cpu_device_order: &["network", "local"],
    prefer: None,
    // A NaN only comes out where it fills more than half a window.
    spreads_nonfinite: false,
    overflows: false,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::MEDIAN],
    tune: &TUNE,
};

/// The largest radius (7x7).
pub const MAX_RADIUS: u32 = 3;

/// The window: `radius` 1, 2 or 3 (3x3, 5x5, 7x7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MedianParams {
    /// Pixels on each side of the centre.
    pub radius: u32,
}

impl MedianParams {
    /// A checked window ([`Error::InvalidArgument`] outside 1..=3).
    pub fn new(radius: u32) -> Result<Self> {
        let p = MedianParams { radius };
        p.validate()?;
        Ok(p)
    }

    /// [`Error::InvalidArgument`] unless the radius is 1, 2 or 3.
    pub fn validate(&self) -> Result<()> {
        if (1..=MAX_RADIUS).contains(&self.radius) {
            Ok(())
        } else {
            Err(Error::arg(format!(
                "median radius must be 1, 2 or 3 (3x3, 5x5, 7x7), got {}",
                self.radius
            )))
        }
    }

    /// The window's edge, 2r+1.
    pub fn diameter(&self) -> usize {
        2 * self.radius as usize + 1
    }
}

/// Each radius is its own tuning bucket: the work per pixel grows from 19
/// exchanges (3x3) to about 600 (7x7).
impl TuneBucket for MedianParams {
    fn bucket_words(&self) -> (&'static str, &'static str) {
        match self.radius {
            1 => ("r1", ""),
            2 => ("r2", ""),
            _ => ("r3", ""),
        }
    }
}

/// Channels that are filtered: all but the alpha of 4-channel images.
pub fn filtered_channels(channels: usize) -> usize {
    if channels == 4 {
        3
    } else {
        channels
    }
}
