#![doc = include_str!("../README.md")]
#![deny(missing_docs)]
#![deny(unsafe_op_in_unsafe_fn)]

pub mod backend;
pub mod bench;
pub mod dispatch;
pub mod engine;
pub mod error;
pub mod image;
pub mod kernels;
pub mod ops;
pub mod pipeline;
/// CPU SIMD: instruction-set tokens, safe dispatch, and the building blocks
/// of the CPU paths' vector kernels.
pub mod simd;
pub mod tune;

#[cfg(test)]
mod test_rng;

pub use backend::{Backend, CacheDir, DeviceInfo, DeviceKind, DeviceSelector};
pub use engine::{Engine, EngineOptions};
pub use error::{Error, Result};
pub use image::raw::RawFormat;
pub use image::{
    DynImage, DynView, DynViewMut, Image, ImageView, ImageViewMut, NonFinite, Sample, SampleType,
};
pub use ops::colormap::{ColorMap, ColormapParams};
pub use ops::minmax::MinMax;
pub use ops::normalize::NormalizeParams;
pub use ops::RunReport;
pub use pipeline::{Pipeline, PipelineBuilder};

pub use ops::prelude;
