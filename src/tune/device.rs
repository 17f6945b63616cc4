//! The tuner measures on an OpenCL device: with the `opencl` feature
//! [`tune`] is `run::tune`; without it, always an error.

#[cfg(feature = "opencl")]
#[path = "measure.rs"]
mod measure;
#[cfg(feature = "opencl")]
#[path = "run.rs"]
mod run;
#[cfg(feature = "opencl")]
pub use run::{tune, tune_requests};

/// Tuning needs an OpenCL device, which a build without the `opencl`
/// feature cannot open: always an error there.
#[cfg(not(feature = "opencl"))]
pub fn tune(
    _engine: &crate::Engine,
    _cfg: &super::TuneConfig,
    _progress: &mut dyn FnMut(&super::Progress<'_>),
) -> crate::Result<super::TuneReport> {
    Err(no_opencl())
}

/// Tuning needs an OpenCL device, which a build without the `opencl`
/// feature cannot open: always an error there.
#[cfg(not(feature = "opencl"))]
pub fn tune_requests(
    _engine: &crate::Engine,
    _requests: &[super::Asked],
    _budget: std::time::Duration,
    _force: bool,
    _progress: &mut dyn FnMut(&super::Progress<'_>),
) -> crate::Result<super::TuneReport> {
    Err(no_opencl())
}

#[cfg(not(feature = "opencl"))]
fn no_opencl() -> crate::Error {
    crate::Error::arg("tuning needs an OpenCL device; this build has no OpenCL support")
}
