//! Backends: the rayon CPU path, or one OpenCL device. Device discovery and
//! selection (`--device`, `FILTERCTL_DEVICE`) live here.

pub mod cache;
pub mod cpu;
#[cfg(feature = "opencl")]
mod inventory;
pub mod limit;
#[cfg(feature = "opencl")]
pub mod opencl;
pub mod programs;

use std::str::FromStr;
#[cfg(feature = "opencl")]
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
pub use cache::CacheDir;
pub use limit::DispatchLimit;

/// The device type OpenCL variants run on: the OpenCL device, or, in a
/// build without OpenCL, a type with no values (so those paths cannot run).
#[cfg(feature = "opencl")]
pub type Dev = opencl::ClDevice;
/// The device type OpenCL variants run on: the OpenCL device, or, in a
/// build without OpenCL, a type with no values (so those paths cannot run).
#[cfg(not(feature = "opencl"))]
#[derive(Debug)]
pub enum Dev {}

#[cfg(not(feature = "opencl"))]
impl Dev {
    /// What an OpenCL device would say about itself (no value exists).
    pub fn info(&self) -> &DeviceInfo {
        match *self {}
    }
}

/// What kind of device an OpenCL device says it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DeviceKind {
    /// A GPU.
    Gpu,
    /// A CPU OpenCL device (PoCL, Intel CPU runtime, Apple CPU).
    Cpu,
    /// An accelerator (FPGA, DSP).
    Accelerator,
    /// Anything else.
    Other,
}

impl std::fmt::Display for DeviceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            DeviceKind::Gpu => "gpu",
            DeviceKind::Cpu => "cpu",
            DeviceKind::Accelerator => "accelerator",
            DeviceKind::Other => "other",
        })
    }
}

/// What `filterctl devices` shows about one OpenCL device.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DeviceInfo {
    /// (platform index, device index): the `P:D` selector.
    pub index: (usize, usize),
    /// Platform name.
    pub platform: String,
    /// Platform version string.
    pub platform_version: String,
    /// Device name.
    pub name: String,
    /// Device vendor.
    pub vendor: String,
    /// Device type.
    pub kind: DeviceKind,
    /// Compute units.
    pub compute_units: u32,
    /// Global memory in bytes.
    pub global_mem: u64,
    /// Largest single allocation in bytes.
    pub max_alloc: u64,
    /// Local memory per work-group in bytes.
    pub local_mem: u64,
    /// Largest work-group.
    pub max_work_group: usize,
    /// Driver version string.
    pub driver_version: String,
    /// Device OpenCL version string.
    pub version: String,
    /// OpenCL C version string.
    pub opencl_c_version: String,
    /// Extensions that matter for our kernels, when present.
    pub extensions_of_note: Vec<String>,
    /// Every extension the device lists (for variants' requirements;
    /// `filterctl devices` shows only those of note).
    #[serde(skip)]
    pub extensions: Vec<String>,
    /// Whether the device and its compiler are available.
    pub available: bool,
}

impl DeviceInfo {
    /// `P:D name (kind)`, as shown in lists and errors.
    pub fn label(&self) -> String {
        format!(
            "{}:{} {} ({})",
            self.index.0, self.index.1, self.name, self.kind
        )
    }
}

/// How to choose the backend: `auto`, `cpu`, `opencl`, `gpu`, `P:D`, or a case-insensitive
/// part of a device or platform name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum DeviceSelector {
    /// The first GPU, else the first accelerator, else the CPU backend.
    /// An OpenCL CPU device (PoCL, Intel's CPU runtime) is used instead of
    /// the CPU backend only where the tuning cache measured one of its
    /// variants faster end to end than the rayon path (`Engine::new`
    /// decides). Where the last listing in the cache folder found no device
    /// but such a CPU device, and the OpenCL drivers installed have not
    /// changed since, `auto` takes the rayon path without loading the
    /// drivers again (`<cache>/devices.json`; `filterctl devices` lists
    /// again). Never an error.
    #[default]
    Auto,
    /// The rayon CPU backend (not an OpenCL CPU device).
    Cpu,
    /// The first GPU, else the first accelerator, else any OpenCL device
    /// (a CPU device included); an error if there is none.
    OpenCl,
    /// The first OpenCL GPU; an error if there is none.
    Gpu,
    /// Platform and device index, as listed by `filterctl devices`.
    Index(usize, usize),
    /// The first device whose name or platform name contains this text.
    Name(String),
}

impl FromStr for DeviceSelector {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        let t = s.trim();
        if t.is_empty() {
            return Err(Error::arg("empty device selector"));
        }
        Ok(match t.to_ascii_lowercase().as_str() {
            "auto" => DeviceSelector::Auto,
            "cpu" => DeviceSelector::Cpu,
            "opencl" => DeviceSelector::OpenCl,
            "gpu" => DeviceSelector::Gpu,
            _ => match t.split_once(':') {
                Some((p, d)) => match (p.parse(), d.parse()) {
                    (Ok(p), Ok(d)) => DeviceSelector::Index(p, d),
                    _ => DeviceSelector::Name(t.to_string()),
                },
                None => DeviceSelector::Name(t.to_string()),
            },
        })
    }
}

impl DeviceSelector {
    /// `$FILTERCTL_DEVICE` if set and valid, else `Auto`.
    pub fn from_env() -> Result<Self> {
        match std::env::var("FILTERCTL_DEVICE") {
            Ok(v) if !v.trim().is_empty() => v.parse(),
            _ => Ok(DeviceSelector::Auto),
        }
    }
}

/// Where operations run.
#[derive(Clone, Debug)]
pub enum Backend {
    /// rayon on the host's cores.
    Cpu,
    /// One OpenCL device.
    #[cfg(feature = "opencl")]
    OpenCl(Arc<opencl::ClDevice>),
}

impl Backend {
    /// A short description for logs and reports.
    pub fn describe(&self) -> String {
        match self {
            Backend::Cpu => cpu::describe(),
            #[cfg(feature = "opencl")]
            Backend::OpenCl(d) => format!("{} [{}]", d.info().name, d.info().platform),
        }
    }

    /// The OpenCL device, if this is an OpenCL backend.
    pub fn device(&self) -> Option<&Dev> {
        match self {
            Backend::Cpu => None,
            #[cfg(feature = "opencl")]
            Backend::OpenCl(d) => Some(d.as_ref()),
        }
    }

    /// Sets the OpenCL device's dispatch limit (nothing on the CPU
    /// backend, whose work has no watchdog).
    pub fn set_dispatch_limit(&self, limit: DispatchLimit) {
        match self {
            Backend::Cpu => {
                let _ = limit;
            }
            #[cfg(feature = "opencl")]
            Backend::OpenCl(d) => d.set_dispatch_limit(limit),
        }
    }

    /// Kernel dispatches enqueued by the calling thread so far (0 without
    /// OpenCL); the difference around a call counts its dispatches.
    pub fn dispatches_on_this_thread() -> u64 {
        #[cfg(feature = "opencl")]
        return opencl::dispatches_on_this_thread();
        #[cfg(not(feature = "opencl"))]
        0
    }

    /// How the OpenCL device's programs were obtained so far: built from
    /// source, loaded from the disk cache, and that cache's folder (`None`
    /// when disk caching is off); `None` on the CPU backend.
    pub fn program_counts(&self) -> Option<(u64, u64, Option<std::path::PathBuf>)> {
        match self {
            Backend::Cpu => None,
            #[cfg(feature = "opencl")]
            Backend::OpenCl(d) => {
                let s = d.programs().counts();
                let dir = d.programs().dir().map(|p| p.to_path_buf());
                Some((s.built_from_source, s.loaded_from_binary, dir))
            }
        }
    }

    /// The OpenCL device's description, if this is an OpenCL backend.
    pub fn device_info(&self) -> Option<&DeviceInfo> {
        match self {
            Backend::Cpu => None,
            #[cfg(feature = "opencl")]
            Backend::OpenCl(d) => Some(d.info()),
        }
    }
}

/// Every OpenCL device, or the reason there is none (no library, no platform,
/// or a CPU-only build).
pub fn list_devices() -> std::result::Result<Vec<DeviceInfo>, String> {
    #[cfg(feature = "opencl")]
    {
        listing().map(|v| v.into_iter().map(|f| f.info).collect())
    }
    #[cfg(not(feature = "opencl"))]
    {
        Err("this build has no OpenCL support (built without the `opencl` feature)".into())
    }
}

/// Opens the backend the selector names. See [`DeviceSelector`] for the rules.
pub fn select(selector: &DeviceSelector, cache: &CacheDir) -> Result<Backend> {
    if *selector == DeviceSelector::Cpu {
        return Ok(Backend::Cpu);
    }
    #[cfg(not(feature = "opencl"))]
    {
        let _ = cache;
        let reason = list_devices().unwrap_err();
        if *selector == DeviceSelector::Auto {
            log::info!("using the CPU backend: {reason}");
            return Ok(Backend::Cpu);
        }
        Err(Error::DeviceNotFound {
            selector: selector.to_string(),
            available: reason,
        })
    }
    #[cfg(feature = "opencl")]
    {
        let dir = cache.resolve();
        let found = listing();
        if let Some(d) = &dir {
            let found = found.as_deref().unwrap_or_default();
            inventory::record(
                d,
                position(&DeviceSelector::Auto, found).map(|p| &found[p].info),
            );
        }
        let found = match found {
            Ok(f) => f,
            Err(reason) => {
                if *selector == DeviceSelector::Auto {
                    log::info!("using the CPU backend: {reason}");
                    return Ok(Backend::Cpu);
                }
                return Err(Error::DeviceNotFound {
                    selector: selector.to_string(),
                    available: format!("none ({reason})"),
                });
            }
        };
        let pos = position(selector, &found);
        let Some(pos) = pos else {
            if *selector == DeviceSelector::Auto {
                log::info!("using the CPU backend: no usable OpenCL device");
                return Ok(Backend::Cpu);
            }
            let list: Vec<String> = found.iter().map(|f| f.info.label()).collect();
            return Err(Error::DeviceNotFound {
                selector: selector.to_string(),
                available: if list.is_empty() {
                    "none (no OpenCL device)".into()
                } else {
                    list.join(", ")
                },
            });
        };
        let chosen = found.into_iter().nth(pos).expect("position is in range");
        let label = chosen.info.label();
        let root = dir.map(|c| c.join("programs"));
        match opencl::ClDevice::open(chosen, root) {
            Ok(d) => {
                log::info!("using OpenCL device {label}");
                Ok(Backend::OpenCl(Arc::new(d)))
            }
            Err(e) if *selector == DeviceSelector::Auto => {
                log::info!("using the CPU backend: opening {label} failed: {e}");
                Ok(Backend::Cpu)
            }
            Err(e) => Err(e),
        }
    }
}

thread_local! {
    /// OpenCL device listings made by this thread.
    static LISTINGS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// OpenCL device listings (each loads every installed OpenCL driver) made
/// by the calling thread so far; the difference around [`select`] says
/// whether `auto` listed the devices or trusted `devices.json`.
pub fn listings_on_this_thread() -> u64 {
    LISTINGS.with(|c| c.get())
}

/// Lists every OpenCL device, counted in [`listings_on_this_thread`].
#[cfg(feature = "opencl")]
fn listing() -> std::result::Result<Vec<opencl::Found>, String> {
    LISTINGS.with(|c| c.set(c.get() + 1));
    opencl::enumerate()
}

/// What the last listing recorded in cache folder `cache` found for `auto`,
/// if the installed drivers have not changed since: `Some(None)` when no
/// device was usable, `Some(Some(info))` for the device `auto` opened
/// (`Engine::new` then decides whether the rayon path suffices), `None`
/// when there is no valid record (list the devices).
pub(crate) fn recorded_auto(cache: &CacheDir) -> Option<Option<DeviceInfo>> {
    #[cfg(feature = "opencl")]
    return cache.resolve().as_deref().and_then(inventory::recorded);
    #[cfg(not(feature = "opencl"))]
    {
        let _ = cache;
        None
    }
}

/// Makes the next `auto` in cache folder `cache` list the OpenCL devices
/// again instead of trusting what it found last time (`filterctl devices`
/// does this).
pub fn forget_devices(cache: &CacheDir) {
    #[cfg(feature = "opencl")]
    if let Some(dir) = cache.resolve() {
        inventory::forget(&dir);
    }
    #[cfg(not(feature = "opencl"))]
    let _ = cache;
}

/// The backend on an application's OpenCL context and queue (see
/// [`opencl::CallerContext`] for the ownership rules and which queue runs
/// the kernels). Program binaries are cached under `cache` and keyed by
/// the device, as for a device the engine opens itself.
#[cfg(feature = "opencl")]
pub fn adopt(caller: opencl::CallerContext, cache: &CacheDir) -> Result<Backend> {
    let root = cache.resolve().map(|c| c.join("programs"));
    opencl::ClDevice::adopt(caller, root).map(|d| Backend::OpenCl(Arc::new(d)))
}

/// The index in `found` of the device `selector` names (the CPU selector
/// names none).
#[cfg(feature = "opencl")]
fn position(selector: &DeviceSelector, found: &[opencl::Found]) -> Option<usize> {
    let usable = |f: &opencl::Found| f.info.available;
    match selector {
        DeviceSelector::Auto | DeviceSelector::OpenCl => [DeviceKind::Gpu, DeviceKind::Accelerator]
            .iter()
            .find_map(|k| found.iter().position(|f| usable(f) && f.info.kind == *k))
            .or_else(|| found.iter().position(usable)),
        DeviceSelector::Gpu => found
            .iter()
            .position(|f| usable(f) && f.info.kind == DeviceKind::Gpu),
        DeviceSelector::Index(p, d) => found.iter().position(|f| f.info.index == (*p, *d)),
        DeviceSelector::Name(n) => {
            // Prefer a usable match; an unusable one is opened only if it
            // is the only match, so the error says why it failed.
            let n = n.to_lowercase();
            let matches = |f: &opencl::Found| {
                f.info.name.to_lowercase().contains(&n)
                    || f.info.platform.to_lowercase().contains(&n)
            };
            found
                .iter()
                .position(|f| matches(f) && usable(f))
                .or_else(|| found.iter().position(matches))
        }
        DeviceSelector::Cpu => None,
    }
}

impl std::fmt::Display for DeviceSelector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DeviceSelector::Auto => f.write_str("auto"),
            DeviceSelector::Cpu => f.write_str("cpu"),
            DeviceSelector::OpenCl => f.write_str("opencl"),
            DeviceSelector::Gpu => f.write_str("gpu"),
            DeviceSelector::Index(p, d) => write!(f, "{p}:{d}"),
            DeviceSelector::Name(n) => f.write_str(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn selectors_parse() {
        assert_eq!(
            "auto".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Auto
        );
        assert_eq!(
            "CPU".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Cpu
        );
        assert_eq!(
            "1:0".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Index(1, 0)
        );
        assert_eq!(
            "nvidia".parse::<DeviceSelector>().unwrap(),
            DeviceSelector::Name("nvidia".into())
        );
        assert!("".parse::<DeviceSelector>().is_err());
    }
}
