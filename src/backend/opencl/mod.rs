//! The OpenCL backend. Every `unsafe` OpenCL call in the crate lives in this
//! module tree, behind the checked wrappers it exports:
//!
//! - [`ClDevice`]: a context and an in-order profiling queue on one device,
//!   plus its [`ProgramCache`].
//! - [`DeviceImage`] (and the crate-private `DeviceBuffer`): typed device
//!   memory whose sizes are checked against the host data on every transfer.
//! - `ClDevice::launch` (crate-private): kernel launches whose argument count
//!   is checked against the kernel, whose global size is rounded up to the
//!   work-group size (every kernel bounds-checks), and which return a
//!   profiling [`ClEvent`].

mod binfile;
mod buffer;
mod caller;
mod constants;
pub mod gl;
mod launch;
mod loading;
mod program;
mod stream;
pub mod watchdog;

use crate::backend::limit::DispatchLimit;
pub use buffer::DeviceImage;
pub(crate) use buffer::{DeviceBuffer, Pool};
pub use caller::{CallerContext, QueueOrigin};
pub(crate) use launch::untimed;
pub(crate) use launch::Arg;
pub use launch::{ClEvent, Kernel};
pub use program::{ProgramCache, ProgramCounts};
pub(crate) use stream::{HostStage, TransferQueue};
pub use watchdog::dispatches_on_this_thread;

use std::path::PathBuf;
use std::sync::Once;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{
    Device, CL_DEVICE_TYPE_ACCELERATOR, CL_DEVICE_TYPE_ALL, CL_DEVICE_TYPE_CPU, CL_DEVICE_TYPE_GPU,
};
use opencl3::error_codes::{ClError, CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_RUNTIME_LOAD_FAILED};

use super::{DeviceInfo, DeviceKind};
use crate::error::{Error, Result};

/// Converts an OpenCL status into the crate's error, naming the call.
pub(crate) fn cl_err(call: impl Into<String>, e: ClError) -> Error {
    Error::OpenCl {
        call: call.into(),
        code: e.0,
        name: opencl3::error_codes::error_text(e.0),
    }
}

static LIBRARY_SEARCH: Once = Once::new();

/// The loader names this crate gives `OPENCL_DYLIB_PATH` when it is unset.
pub(crate) const DEFAULT_DYLIB_PATH: &str = "libOpenCL.so.1;libOpenCL.so";

/// cl3 opens only `libOpenCL.so.1` unless `OPENCL_DYLIB_PATH` lists others.
/// Some distributions ship only the unversioned development name, so add it.
fn widen_library_search() {
    LIBRARY_SEARCH.call_once(|| {
        if cfg!(target_os = "linux") && std::env::var_os("OPENCL_DYLIB_PATH").is_none() {
            // Runs once, before this crate makes any OpenCL call; cl3 reads the
            // variable only when it first loads the library.
            std::env::set_var("OPENCL_DYLIB_PATH", DEFAULT_DYLIB_PATH);
        }
    });
}

/// Why no OpenCL device is usable, in words for an `info!` line.
fn explain(e: ClError) -> String {
    match e.0 {
        DLOPEN_RUNTIME_LOAD_FAILED => {
            "no OpenCL library (libOpenCL.so.1 / libOpenCL.so / OpenCL.framework) could be loaded"
                .into()
        }
        CL_PLATFORM_NOT_FOUND_KHR => "the OpenCL ICD loader found no platform".into(),
        code => format!(
            "listing OpenCL platforms failed: {} ({code})",
            opencl3::error_codes::error_text(code)
        ),
    }
}

/// A device found during enumeration, with the handle needed to open it.
pub(crate) struct Found {
    pub info: DeviceInfo,
    device: Device,
}

/// Lists every device of every platform. `Err` carries a human reason why
/// there is none at all (no library, no platform).
pub(crate) fn enumerate() -> std::result::Result<Vec<Found>, String> {
    widen_library_search();
    // PoCL 3.1 answers clGetDeviceIDs with zero devices on every thread but
    // one while several threads initialise it at once; serialise enumeration
    // so concurrent engines all see every device.
    static ENUMERATION: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = ENUMERATION.lock().unwrap_or_else(|e| e.into_inner());
    let platforms = opencl3::platform::get_platforms().map_err(explain)?;
    if platforms.is_empty() {
        return Err("the OpenCL ICD loader found no platform".into());
    }
    let mut out = Vec::new();
    let mut empty = Vec::new();
    for (pi, p) in platforms.iter().enumerate() {
        let pname = p.name().unwrap_or_default();
        let pversion = p.version().unwrap_or_default();
        let ids = match p.get_devices(CL_DEVICE_TYPE_ALL) {
            Ok(ids) if !ids.is_empty() => ids,
            listed => {
                let why = listed
                    .err()
                    .map_or("none listed".to_string(), |e| e.to_string());
                log::info!("platform {pi} ({pname}) lists no devices: {why}");
                empty.push(no_devices(pi, pname.trim(), &why));
                continue;
            }
        };
        for (di, id) in ids.into_iter().enumerate() {
            let d = Device::new(id);
            let info = describe(&d, (pi, di), pname.trim(), pversion.trim());
            out.push(Found { info, device: d });
        }
    }
    if out.is_empty() && !empty.is_empty() {
        return Err(empty.join("; "));
    }
    Ok(out)
}

/// What device `d` (index `index`: platform, device) of the named platform
/// is and can do.
fn describe(d: &Device, index: (usize, usize), pname: &str, pversion: &str) -> DeviceInfo {
    let ty = d.dev_type().unwrap_or(0);
    let kind = if ty & CL_DEVICE_TYPE_GPU != 0 {
        DeviceKind::Gpu
    } else if ty & CL_DEVICE_TYPE_ACCELERATOR != 0 {
        DeviceKind::Accelerator
    } else if ty & CL_DEVICE_TYPE_CPU != 0 {
        DeviceKind::Cpu
    } else {
        DeviceKind::Other
    };
    let extensions = d.extensions().unwrap_or_default();
    let of_note = [
        "cl_khr_fp16",
        "cl_khr_fp64",
        "cl_khr_int64_base_atomics",
        "cl_khr_subgroups",
        "cl_intel_subgroups",
        "cl_nv_device_attribute_query",
        "cl_amd_device_attribute_query",
        "cl_khr_il_program",
    ]
    .iter()
    .filter(|e| extensions.split_whitespace().any(|x| x == **e))
    .map(|e| e.to_string())
    .collect();
    DeviceInfo {
        index,
        platform: pname.to_string(),
        platform_version: pversion.to_string(),
        name: d.name().unwrap_or_default().trim().to_string(),
        vendor: d.vendor().unwrap_or_default().trim().to_string(),
        kind,
        compute_units: d.max_compute_units().unwrap_or(0),
        global_mem: d.global_mem_size().unwrap_or(0),
        max_alloc: d.max_mem_alloc_size().unwrap_or(0),
        local_mem: d.local_mem_size().unwrap_or(0),
        max_work_group: d.max_work_group_size().unwrap_or(1),
        driver_version: d.driver_version().unwrap_or_default().trim().to_string(),
        version: d.version().unwrap_or_default().trim().to_string(),
        opencl_c_version: d.opencl_c_version().unwrap_or_default().trim().to_string(),
        extensions_of_note: of_note,
        extensions: extensions.split_whitespace().map(String::from).collect(),
        available: d.available().unwrap_or(false) && d.compiler_available().unwrap_or(false),
    }
}

/// Why platform `pi` lists no device, with what to check for PoCL, which
/// lists none when it cannot create its kernel cache.
fn no_devices(pi: usize, name: &str, why: &str) -> String {
    let hint = if name.contains("Portable Computing Language") {
        " (PoCL lists no device when it cannot create its kernel cache: check that \
         POCL_CACHE_DIR, or XDG_CACHE_HOME, or ~/.cache is a writable folder)"
    } else {
        ""
    };
    format!("OpenCL platform {pi} ({name}) lists no device: {why}{hint}")
}

/// An opened OpenCL device: context, in-order queue with profiling, program cache.
pub struct ClDevice {
    info: DeviceInfo,
    device: Device,
    context: Context,
    queue: CommandQueue,
    programs: ProgramCache,
    /// Freed device buffers kept for reuse.
    pool: std::sync::Arc<Pool>,
    /// Whose queue `queue` is.
    origin: QueueOrigin,
    /// The dispatch limit and the launches' measured rates.
    watchdog: watchdog::Watchdog,
    /// Created kernels not in use (see `KernelPool`).
    kernels: std::sync::Arc<launch::KernelPool>,
    /// Read-only tables kept by content (see the `constants` module).
    constants: constants::Constants,
}

impl std::fmt::Debug for ClDevice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ClDevice({})", self.info.name)
    }
}

impl ClDevice {
    /// Opens a device found by [`enumerate`]. `cache_root` is the program
    /// binary cache root (`<cache>/programs`), or `None` to cache in memory only.
    pub(crate) fn open(found: Found, cache_root: Option<PathBuf>) -> Result<Self> {
        let Found { info, device } = found;
        let context = Context::from_device(&device).map_err(|e| cl_err("clCreateContext", e))?;
        // SAFETY: `device` is a member of `context`, which was created from it.
        #[allow(deprecated)]
        let queue =
            unsafe { CommandQueue::create(&context, device.id(), CL_QUEUE_PROFILING_ENABLE) }
                .map_err(|e| cl_err("clCreateCommandQueue", e))?;
        Ok(Self::assemble(
            info,
            device,
            context,
            queue,
            QueueOrigin::Engine,
            cache_root,
        ))
    }

    /// Opens the device of a caller's context and queue (see
    /// [`CallerContext`] for which queue runs the kernels). The device is
    /// described, and its caches keyed, as [`enumerate`] lists it.
    pub(crate) fn adopt(caller: CallerContext, cache_root: Option<PathBuf>) -> Result<Self> {
        let id = caller.device.id();
        let info = enumerate()
            .map_err(|reason| Error::DeviceNotFound {
                selector: "the caller's queue device".into(),
                available: reason,
            })?
            .into_iter()
            .find(|f| f.device.id() == id)
            .map(|f| f.info)
            .ok_or_else(|| Error::DeviceNotFound {
                selector: "the caller's queue device".into(),
                available: "no platform lists it (sub-devices are not supported)".into(),
            })?;
        let (device, context, queue, origin) = caller.queue_to_use()?;
        log::info!(
            "using the caller's OpenCL context on {} ({origin:?})",
            info.label()
        );
        Ok(Self::assemble(
            info, device, context, queue, origin, cache_root,
        ))
    }

    /// Puts an opened device together with its caches.
    fn assemble(
        info: DeviceInfo,
        device: Device,
        context: Context,
        queue: CommandQueue,
        origin: QueueOrigin,
        cache_root: Option<PathBuf>,
    ) -> Self {
        let programs = ProgramCache::new(&info, cache_root);
        let pool = std::sync::Arc::new(Pool::new(info.global_mem));
        let nv_timeout = device
            .get_data(watchdog::CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV)
            .is_ok_and(|v| v.iter().any(|&b| b != 0));
        let display = watchdog::Watchdog::drives_display(info.kind, &info.vendor, nv_timeout);
        ClDevice {
            info,
            device,
            context,
            queue,
            programs,
            pool,
            origin,
            watchdog: watchdog::Watchdog::new(display),
            kernels: Default::default(),
            constants: Default::default(),
        }
    }

    /// Sets how long one dispatch may run (see [`DispatchLimit`]).
    pub fn set_dispatch_limit(&self, limit: DispatchLimit) {
        self.watchdog.set(limit);
    }

    /// The dispatch limit in force (`None`: launches are never split).
    pub fn dispatch_limit(&self) -> Option<std::time::Duration> {
        self.watchdog.limit()
    }

    /// Whose queue the kernels run on (the engine's own, or a caller's).
    pub fn queue_origin(&self) -> &QueueOrigin {
        &self.origin
    }

    /// What the device is.
    pub fn info(&self) -> &DeviceInfo {
        &self.info
    }

    /// The program cache (statistics are useful in tests and logs).
    pub fn programs(&self) -> &ProgramCache {
        &self.programs
    }

    /// Blocks until every command queued so far has finished.
    pub fn finish(&self) -> Result<()> {
        self.queue.finish().map_err(|e| cl_err("clFinish", e))
    }

    /// Bytes of device memory held unused for reuse (see `Pool`).
    pub fn pooled_bytes(&self) -> u64 {
        self.pool.held_bytes()
    }

    /// Device buffers allocated from the driver since the device was opened
    /// (buffers reused from the pool do not count).
    pub fn buffers_created(&self) -> u64 {
        self.pool.created()
    }

    /// Releases the device memory held for reuse.
    pub fn release_pool(&self) {
        self.pool.clear()
    }
}

/// Names a program for build errors and logs.
pub(crate) fn program_id<'a>(op: &'a str, variant: &'a str) -> program::ProgramId<'a> {
    program::ProgramId { op, variant }
}
