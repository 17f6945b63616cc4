//! The types every operation's variant table is made of: the request
//! ([`Shape`], [`OpParams`]), a variant ([`VariantSpec`]) and an
//! operation's table ([`OpSpec`]).

use std::any::Any;
use std::fmt;
use std::sync::Arc;

use crate::backend::{DeviceInfo, DeviceKind};

/// The CPU path's variant name.
pub const CPU: &str = "cpu";

/// The shape and types of one request, as variant tables see it.
#[derive(Debug, Clone, PartialEq)]
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

/// The parameters of a request that decide which variants can run it and
/// which tuning entry applies: any operation's parameter type, type-erased,
/// or none. Operations read their own back with [`OpParams::get`].
#[derive(Clone, Default)]
pub struct OpParams(Option<Arc<dyn Params>>);

/// An operation's parameter type as [`OpParams`] carries it. Implemented for
/// every type that implements [`TuneBucket`], `PartialEq` and `Debug`.
pub trait Params: fmt::Debug + Send + Sync + 'static {
    /// See [`TuneBucket::bucket_words`].
    fn bucket_words(&self) -> (&'static str, &'static str);
    /// For [`OpParams::get`].
    fn as_any(&self) -> &dyn Any;
    /// Equal to `other` (same type, equal values).
    fn same(&self, other: &dyn Params) -> bool;
}

/// How an operation's parameters bucket tuning entries.
pub trait TuneBucket {
    /// The tuning cache's parameter bucket (two words, the second possibly
    /// empty): each operation decides which of its parameters change which
    /// variant wins.
    fn bucket_words(&self) -> (&'static str, &'static str);
}

impl<T: TuneBucket + PartialEq + fmt::Debug + Send + Sync + 'static> Params for T {
    fn bucket_words(&self) -> (&'static str, &'static str) {
        TuneBucket::bucket_words(self)
    }

    fn as_any(&self) -> &dyn Any {
        self
    }

    fn same(&self, other: &dyn Params) -> bool {
        other.as_any().downcast_ref::<T>() == Some(self)
    }
}

impl OpParams {
    /// No parameters that matter to the variants.
    pub const NONE: OpParams = OpParams(None);

    /// Carries `p`.
    pub fn new(p: impl Params) -> Self {
        OpParams(Some(Arc::new(p)))
    }

    /// The parameters, if they are a `T`.
    pub fn get<T: 'static>(&self) -> Option<&T> {
        self.0.as_ref()?.as_any().downcast_ref()
    }

    /// The tuning bucket's words, or `None` when variants do not depend on
    /// the parameters.
    pub fn bucket_words(&self) -> Option<(&'static str, &'static str)> {
        self.0.as_ref().map(|p| p.bucket_words())
    }
}

impl PartialEq for OpParams {
    fn eq(&self, other: &Self) -> bool {
        match (&self.0, &other.0) {
            (None, None) => true,
            (Some(a), Some(b)) => a.same(b.as_ref()),
            _ => false,
        }
    }
}

impl fmt::Debug for OpParams {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            None => f.write_str("OpParams::NONE"),
            Some(p) => p.fmt(f),
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
            params: OpParams::NONE,
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
    /// What the device must offer beyond local memory and work-group size
    /// (every entry must hold; `&[]` for any device). Checked against the
    /// device's [`DeviceInfo`] by the dispatch, the tuner and the bench, so
    /// that a variant built on an extension is never tried without it.
    pub requires: &'static [Requirement],
    /// The largest allowed |difference| from the reference, in units of the
    /// output's full scale (0 = bit-exact), unless the operation's tuning
    /// case defines it otherwise (its `check`).
    pub tolerance: f32,
}

/// A device property a variant needs ([`VariantSpec::requires`]).
#[derive(Debug, Clone, Copy)]
pub enum Requirement {
    /// At least one of these OpenCL extensions, as the device lists them.
    AnyExtension(&'static [&'static str]),
    /// A device vendor whose name contains this text (ASCII case ignored),
    /// for kernels in a vendor's own dialect (inline assembly).
    Vendor(&'static str),
}

impl Requirement {
    /// `Err(why)` when `info`'s device lacks it.
    pub fn check(&self, info: &DeviceInfo) -> Result<(), String> {
        match self {
            Requirement::AnyExtension(any) => {
                if any.iter().any(|e| info.extensions.iter().any(|x| x == e)) {
                    Ok(())
                } else {
                    Err(format!("needs one of the extensions {}", any.join(", ")))
                }
            }
            Requirement::Vendor(v) => {
                if info
                    .vendor
                    .to_ascii_lowercase()
                    .contains(&v.to_ascii_lowercase())
                {
                    Ok(())
                } else {
                    Err(format!("needs a {v} device, this is {}", info.vendor))
                }
            }
        }
    }
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

    /// [`VariantSpec::check`] with `info`'s local memory, then the device
    /// requirements ([`VariantSpec::requires`]).
    pub fn check_on(&self, shape: &Shape, info: &DeviceInfo) -> Result<(), String> {
        self.check(shape, info.local_mem)?;
        self.check_device(info)
    }

    /// Whether `info`'s device has what [`VariantSpec::requires`] names.
    pub fn check_device(&self, info: &DeviceInfo) -> Result<(), String> {
        self.requires.iter().try_for_each(|r| r.check(info))
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
    /// Whether one NaN or infinite input sample can make results far from
    /// it non-finite (a recursive blur smears it along its row and column).
    /// Such operations apply the engine's [`crate::NonFinite`] policy to
    /// their f32 input before they run, and their pipeline stages take
    /// `nonfinite=`; operations that keep a non-finite sample where it is
    /// (or ignore it) leave their input alone.
    pub spreads_nonfinite: bool,
    /// Whether finite input can come out of it infinite or beyond
    /// [`crate::image::finite::MAX_MAGNITUDE`] (a user-given factor): the
    /// default of [`super::stage::StageOp::bound`], which a stage refines
    /// from its parameters. A device chain that starts from integer data
    /// checks the input of a stage that spreads non-finite values only once
    /// the bound is unknown or out of range.
    pub overflows: bool,
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
