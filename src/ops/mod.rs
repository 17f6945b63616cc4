//! Operations. Each has a `reference` (the simplest correct version, ground
//! truth for tests), a rayon `cpu` path, and a table of OpenCL variants.
//!
//! A variant has one name everywhere: the `--variant` value, the log field,
//! and the OpenCL kernel function `<op>_<variant>`, which is built from the
//! table entry so the two cannot drift apart.

mod contract;
#[cfg(feature = "opencl")]
mod device;
pub mod stage;
#[cfg(feature = "opencl")]
pub mod work;

pub mod colormap;
pub mod demosaic;
pub mod gaussian;
pub mod minmax;
pub mod normalize;
pub mod transpose;
pub mod tuning;

use std::time::Duration;

use serde::Serialize;

pub use contract::{dispatch, dispatch_on_device, Dispatch, Programs, RunCl};
pub use stage::{StageDef, StageOp};

use crate::backend::DeviceKind;

/// The CPU path's variant name.
pub const CPU: &str = "cpu";

/// The shape and types of one request, as variant tables see it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shape {
    /// Width in pixels.
    pub width: usize,
    /// Height in pixels.
    pub height: usize,
    /// Samples per pixel.
    pub channels: usize,
    /// Input sample type.
    pub sample: crate::SampleType,
    /// The operation's parameters, where variants depend on them.
    pub params: OpParams,
}

/// Operation parameters that decide which variants can run a request.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub enum OpParams {
    /// The operation has none that matter.
    #[default]
    None,
    /// Gaussian blur parameters.
    Gaussian(gaussian::GaussianParams),
    /// Demosaic parameters.
    Demosaic(demosaic::DemosaicParams),
    /// Colormap parameters (the output channels matter to the variants' cost).
    Colormap(colormap::ColormapParams),
}

impl OpParams {
    /// The tuning cache's parameter bucket for these parameters (two words,
    /// the second possibly empty), or `None` when variants do not depend on
    /// them: each operation decides which of its parameters change which
    /// variant wins.
    pub fn bucket_words(&self) -> Option<(&'static str, &'static str)> {
        match self {
            OpParams::None => None,
            OpParams::Gaussian(p) => Some(p.bucket_words()),
            OpParams::Demosaic(p) => Some(p.bucket_words()),
            OpParams::Colormap(p) => Some(p.bucket_words()),
        }
    }
}

impl Shape {
    /// A request of this size and type, without parameters.
    pub fn new(width: usize, height: usize, channels: usize, sample: crate::SampleType) -> Self {
        Shape {
            width,
            height,
            channels,
            sample,
            params: OpParams::None,
        }
    }

    /// The same request with parameters.
    pub fn with_params(self, params: OpParams) -> Self {
        Shape { params, ..self }
    }

    /// Bytes in one pixel as a `__local` array element (3-vectors occupy 4 slots).
    pub fn local_pixel_bytes(&self) -> usize {
        self.sample.size() * if self.channels == 3 { 4 } else { self.channels }
    }
}

/// One entry of an operation's OpenCL variant table.
#[derive(Debug)]
pub struct VariantSpec {
    /// The variant's one name (kernel function `<op>_<name>`).
    pub name: &'static str,
    /// Why it exists, in one line (shown by `filterctl variants` and docs).
    pub summary: &'static str,
    /// The program's files under `cl/`, in order (`common.cl` goes first
    /// by itself); each must be embedded by some operation's
    /// [`OpSpec::sources`] or by [`crate::kernels::SHARED`].
    pub files: &'static [&'static str],
    /// Extra build options (`-D` defines) for this variant.
    pub options: &'static str,
    /// Work-group shape; 1-D kernels use `[n, 1]`.
    pub local: [usize; 2],
    /// Bytes of `__local` memory the variant's kernels declare for a request.
    pub local_bytes: fn(&Shape) -> usize,
    /// Whether the variant handles this request (beyond local memory and
    /// work-group size, which are checked generically).
    pub supports: fn(&Shape) -> Result<(), String>,
    /// The largest allowed |difference| from the reference, in units of the
    /// output's full scale (0 = bit-exact).
    pub tolerance: f32,
}

/// `supports` for variants that handle every shape.
pub fn any_shape(_: &Shape) -> Result<(), String> {
    Ok(())
}

/// `local_bytes` for variants without local memory.
pub fn no_local(_: &Shape) -> usize {
    0
}

impl VariantSpec {
    /// The OpenCL kernel function for operation `op`.
    pub fn kernel_name(&self, op: &str) -> String {
        format!("{op}_{}", self.name)
    }

    /// Checks the request and the device's local memory.
    pub fn check(&self, shape: &Shape, local_mem: u64) -> Result<(), String> {
        (self.supports)(shape)?;
        let need = (self.local_bytes)(shape) as u64;
        if need > local_mem {
            return Err(format!(
                "needs {need} bytes of local memory, the device has {local_mem}"
            ));
        }
        Ok(())
    }
}

/// An operation's static description: its name, its variant table and the
/// order in which untuned devices try the variants.
#[derive(Debug)]
pub struct OpSpec {
    /// The operation's name.
    pub name: &'static str,
    /// Its embedded `cl/<op>/*.cl` files ([`crate::cl_source!`]).
    pub sources: &'static [crate::kernels::Source],
    /// The OpenCL variants.
    pub variants: &'static [VariantSpec],
    /// Default order on GPUs and accelerators.
    pub gpu_order: &'static [&'static str],
    /// Default order on CPU OpenCL devices.
    pub cpu_device_order: &'static [&'static str],
    /// A variant to try first for a request on an untuned device of a kind,
    /// where the static order is wrong for some shapes or parameters
    /// (measured crossovers, see each op's function).
    pub prefer: Option<fn(&Shape, DeviceKind) -> Option<&'static str>>,
}

impl OpSpec {
    /// The variant called `name`.
    pub fn variant(&self, name: &str) -> Option<&'static VariantSpec> {
        self.variants.iter().find(|v| v.name == name)
    }

    /// Every variant name, the CPU path included.
    pub fn names(&self) -> Vec<&'static str> {
        self.variants
            .iter()
            .map(|v| v.name)
            .chain(std::iter::once(CPU))
            .collect()
    }

    /// The default order for an untuned device of this kind.
    pub fn order(&self, kind: DeviceKind) -> Vec<&'static VariantSpec> {
        let names = match kind {
            DeviceKind::Cpu => self.cpu_device_order,
            _ => self.gpu_order,
        };
        names.iter().filter_map(|n| self.variant(n)).collect()
    }

    /// [`OpSpec::order`] for one request: the `prefer` choice first.
    pub fn order_for(&self, kind: DeviceKind, shape: &Shape) -> Vec<&'static VariantSpec> {
        let mut order = self.order(kind);
        if let Some(first) = self.prefer.and_then(|f| f(shape, kind)) {
            if let Some(i) = order.iter().position(|s| s.name == first) {
                let s = order.remove(i);
                order.insert(0, s);
            }
        }
        order
    }
}

/// Every operation, for listings, tests and the tuner.
pub const OPS: &[&OpSpec] = &[
    &transpose::SPEC,
    &minmax::SPEC,
    &normalize::SPEC,
    &gaussian::SPEC,
    &demosaic::SPEC,
    &colormap::SPEC,
];

/// Every stage a pipeline can use, in the order help texts and error
/// messages list them (each defined in its operation's `stage.rs`).
pub static STAGES: &[&StageDef] = &[
    &transpose::stage::TRANSPOSE,
    &minmax::stage::MINMAX,
    &normalize::stage::NORMALIZE,
    &gaussian::stage::GAUSSIAN,
    &demosaic::stage::DEMOSAIC,
    &normalize::stage::CONVERT,
    &colormap::stage::COLORMAP,
];

/// Every operation's tuning and bench entry, in [`OPS`] order (see
/// [`tuning::Tunable`]).
pub static TUNABLES: &[&dyn tuning::Tunable] = &[
    &transpose::TUNE,
    &minmax::TUNE,
    &normalize::TUNE,
    &gaussian::TUNE,
    &demosaic::TUNE,
    &colormap::TUNE,
];

/// Every embedded kernel source: the shared ones, then each operation's.
pub fn all_sources() -> Vec<crate::kernels::Source> {
    let mut all = crate::kernels::SHARED.to_vec();
    for op in OPS {
        all.extend_from_slice(op.sources);
    }
    all
}

/// What ran for one call: which variant on which backend, how long it took,
/// and which variants were tried and failed first.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The operation.
    pub op: &'static str,
    /// The variant that produced the result.
    pub variant: String,
    /// The backend it ran on.
    pub backend: String,
    /// Wall time of the whole call (transfers included).
    #[serde(serialize_with = "ser_ms")]
    pub elapsed: Duration,
    /// Device time of the kernels alone, from profiling events (OpenCL only).
    #[serde(serialize_with = "ser_opt_ms")]
    pub kernel_time: Option<Duration>,
    /// Variants that failed before this one, with the reason for each.
    pub fallbacks: Vec<String>,
}

/// Serializes a duration as milliseconds (f64), for JSON reports.
pub fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

/// Serializes an optional duration as milliseconds (f64) or null.
pub fn ser_opt_ms<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&(d.as_secs_f64() * 1e3)),
        None => s.serialize_none(),
    }
}
