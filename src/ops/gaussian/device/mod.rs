//! The blur on an OpenCL device: the one place in `gaussian` that needs the
//! `opencl` feature. [`run`] takes host images; `blur_w` runs a variant's
//! plan (`variants::plan`) on a working image already on the device.
//!
//! The working image is f32 with 1 channel (gray) or 4 (RGB/RGBA); for f32
//! gray and RGBA input it is the user's buffer itself.

#[cfg(feature = "opencl")]
mod blocks;
#[cfg(feature = "opencl")]
mod launch;
#[cfg(feature = "opencl")]
mod tiles;

#[cfg(feature = "opencl")]
pub(crate) use launch::{blur_w, run};

/// Without OpenCL there is no device value, so this cannot be called.
#[cfg(not(feature = "opencl"))]
pub(crate) fn run<T: crate::image::Sample>(
    _: &crate::ops::Programs,
    dev: &crate::backend::Dev,
    _: &crate::ops::VariantSpec,
    _: &crate::image::Image<T>,
    _: &super::GaussianParams,
) -> crate::error::Result<(crate::image::Image<T>, std::time::Duration)> {
    match *dev {}
}
