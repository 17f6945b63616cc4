//! Kernels, checked launches and profiling events.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use opencl3::event::Event;
use opencl3::program::Program;
use opencl3::types::cl_mem;

use super::{cl_err, watchdog, ClDevice, DeviceBuffer, DeviceImage};
use crate::error::{Error, Result};
use crate::image::Sample;

/// One kernel argument. Buffers are borrowed for the duration of the call
/// that enqueues the launch; OpenCL keeps the memory alive until every
/// command using it has finished even if the buffer is dropped afterwards.
///
/// Crate-private, like [`ClDevice::launch`]: a kernel launch is only as safe
/// as the kernel's own bounds checks against the sizes passed with it, which
/// the op modules guarantee and outside code could not.
#[derive(Clone, Copy)]
pub(crate) enum Arg<'a> {
    /// A device buffer (`__global T*`).
    Mem(cl_mem, PhantomData<&'a ()>),
    /// `int`.
    I32(i32),
    /// `float4`.
    F32x4([f32; 4]),
    /// `float`.
    F32(f32),
}

impl<'a> Arg<'a> {
    /// A device buffer argument.
    pub fn buf<T: super::buffer::Plain>(b: &'a DeviceBuffer<T>) -> Self {
        Arg::Mem(b.mem(), PhantomData)
    }
    /// A device image argument (its packed sample buffer).
    pub fn img<T: Sample>(i: &'a DeviceImage<T>) -> Self {
        Arg::Mem(i.buffer().mem(), PhantomData)
    }
    /// An `int` argument from a size; fails if it does not fit.
    pub fn int(v: usize) -> Result<Self> {
        i32::try_from(v)
            .map(Arg::I32)
            .map_err(|_| Error::arg(format!("{v} does not fit a kernel int")))
    }
}

/// A kernel created from a built program, with the limits the device reports for it.
///
/// Dropped, it goes back to its device's `KernelPool` for the next
/// launch of the same kernel: one holder at a time sets its arguments.
pub struct Kernel {
    /// Always present; taken only by `drop`.
    kernel: Option<opencl3::kernel::Kernel>,
    /// The program's handle, which tells builds with other options apart.
    program: usize,
    name: String,
    max_work_group: usize,
    num_args: u32,
    pool: Arc<KernelPool>,
}

/// Kernels created before and not in use, by program handle and kernel
/// name. Creating a kernel (clCreateKernel and two queries) cost as much
/// host time as a launch of a small frame's kernel; a stream launches the
/// same few kernels every frame. A pooled kernel keeps its program alive,
/// so a handle in the key cannot be reused by another program meanwhile.
#[derive(Default)]
pub(crate) struct KernelPool(Mutex<HashMap<(usize, String), Vec<Pooled>>>);

/// A kernel in the pool, with what the device reported for it.
struct Pooled {
    kernel: opencl3::kernel::Kernel,
    max_work_group: usize,
    num_args: u32,
}

impl Drop for Kernel {
    fn drop(&mut self) {
        if let Some(kernel) = self.kernel.take() {
            let pooled = Pooled {
                kernel,
                max_work_group: self.max_work_group,
                num_args: self.num_args,
            };
            if let Ok(mut map) = self.pool.0.lock() {
                map.entry((self.program, std::mem::take(&mut self.name)))
                    .or_default()
                    .push(pooled);
            }
        }
    }
}

impl Kernel {
    /// The OpenCL kernel.
    fn cl(&self) -> &opencl3::kernel::Kernel {
        self.kernel
            .as_ref()
            .expect("a kernel is only taken when dropped")
    }

    /// The kernel function's name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// `CL_KERNEL_WORK_GROUP_SIZE` on this device (can be 1 on Apple CPU devices).
    pub fn max_work_group(&self) -> usize {
        self.max_work_group
    }
}

thread_local! {
    /// Set by [`untimed`]: `ClEvent::duration` does not wait on this thread.
    static UNTIMED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Runs `f` with kernel timing off on this thread: [`ClEvent::duration`]
/// answers `None` at once instead of waiting for the command, so the op
/// passes, which time each kernel, queue their launches without blocking
/// the host between them. Streams use this after their first frame; every
/// transfer and read-back stays ordered by the queue and by events.
pub(crate) fn untimed<R>(f: impl FnOnce() -> R) -> R {
    /// Restores the flag even if `f` panics.
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            UNTIMED.with(|u| u.set(self.0));
        }
    }
    let _restore = Restore(UNTIMED.with(|u| u.replace(true)));
    f()
}

/// A completed-or-pending command: one dispatch, or the chunks of a split
/// one (in queue order). Dropping it never blocks; clones share the OpenCL
/// events.
#[derive(Clone)]
pub struct ClEvent(Vec<std::sync::Arc<Event>>);

impl ClEvent {
    pub(super) fn new(e: Event) -> Self {
        ClEvent(vec![std::sync::Arc::new(e)])
    }

    /// The OpenCL handle of the last command, for wait lists (`None` for
    /// host-side work); on an in-order queue it ends after the others.
    pub(super) fn handle(&self) -> Option<opencl3::types::cl_event> {
        self.0.last().map(|e| e.get())
    }
    pub(super) fn none() -> Self {
        ClEvent(Vec::new())
    }

    /// This command and then `next` (queued after it) as one: waiting
    /// waits for both, and the duration is the sum (a multi-pass kernel).
    pub(crate) fn then(mut self, next: ClEvent) -> Self {
        self.0.extend(next.0);
        self
    }

    /// Waits for the command (every chunk) to finish.
    pub fn wait(&self) -> Result<()> {
        for e in &self.0 {
            e.wait().map_err(|e| cl_err("clWaitForEvents", e))?;
        }
        Ok(())
    }

    /// Device time from start to end of the command, the chunks' times
    /// summed (waits for it first). `None` for commands that had no
    /// OpenCL event (host-side work). Inside the crate's untimed sections
    /// (streams after their first frame) it does not wait and answers
    /// `None`.
    pub fn duration(&self) -> Result<Option<Duration>> {
        if self.0.is_empty() || UNTIMED.with(|u| u.get()) {
            return Ok(None);
        }
        let mut total = Duration::ZERO;
        for e in &self.0 {
            total += event_time(e)?;
        }
        Ok(Some(total))
    }
}

/// One event's device time (waits for it).
fn event_time(e: &Event) -> Result<Duration> {
    e.wait().map_err(|e| cl_err("clWaitForEvents", e))?;
    let start = e
        .profiling_command_start()
        .map_err(|e| cl_err("clGetEventProfilingInfo", e))?;
    let end = e
        .profiling_command_end()
        .map_err(|e| cl_err("clGetEventProfilingInfo", e))?;
    Ok(Duration::from_nanos(end.saturating_sub(start)))
}

impl ClDevice {
    /// Kernel `name` of a built program: one from the device's pool, or a
    /// new one.
    pub(crate) fn kernel(&self, program: &Program, name: &str) -> Result<Kernel> {
        let key = (program.get() as usize, name.to_string());
        let reused = self
            .kernels
            .0
            .lock()
            .ok()
            .and_then(|mut m| m.get_mut(&key)?.pop());
        let Pooled {
            kernel,
            max_work_group,
            num_args,
        } = match reused {
            Some(p) => p,
            None => {
                let kernel = opencl3::kernel::Kernel::create(program, name)
                    .map_err(|e| cl_err(format!("clCreateKernel({name})"), e))?;
                let max_work_group = kernel
                    .get_work_group_size(self.device.id())
                    .map_err(|e| cl_err("clGetKernelWorkGroupInfo", e))?;
                let num_args = kernel
                    .num_args()
                    .map_err(|e| cl_err("clGetKernelInfo", e))?;
                Pooled {
                    kernel,
                    max_work_group,
                    num_args,
                }
            }
        };
        Ok(Kernel {
            kernel: Some(kernel),
            program: key.0,
            name: key.1,
            max_work_group,
            num_args,
            pool: self.kernels.clone(),
        })
    }

    /// Launches `kernel` over `global` work-items in groups of `local`
    /// (1 to 3 dimensions). The global size is rounded up to a multiple of the
    /// group size, so kernels must bounds-check. A group larger than the
    /// kernel allows is [`Error::Unsupported`], so callers can fall back.
    ///
    /// Under a dispatch limit (see the `watchdog` module) the launch is
    /// split into chunks of whole groups along the dimension with the most
    /// groups, each
    /// with a global offset: the kernel must find its data through
    /// `get_global_id` or `GROUP_ID` only. Grid-stride kernels, whose
    /// work-items loop over the data by the global size, use
    /// [`ClDevice::launch_whole`].
    pub(crate) fn launch(
        &self,
        kernel: &Kernel,
        global: &[usize],
        local: &[usize],
        args: &[Arg<'_>],
    ) -> Result<ClEvent> {
        let rounded = self.prepare(kernel, global, local, args)?;
        let Some(limit) = self.watchdog.limit() else {
            return self.enqueue(kernel, &vec![0; rounded.len()], &rounded, local);
        };
        // Split the dimension with the most groups (the last on a tie).
        let d = (0..rounded.len())
            .max_by_key(|&i| rounded[i] / local[i])
            .expect("a launch has 1 to 3 dimensions");
        let total = rounded[d] / local[d];
        // A chunk is `n` slices of the split dimension, each `slice` groups
        // of the others: on a GPU, enough slices for one group per compute
        // unit (see `watchdog::chunk_groups`).
        let slice: usize = (0..rounded.len())
            .filter(|&i| i != d)
            .map(|i| rounded[i] / local[i])
            .product();
        let floor = match self.info.kind {
            crate::backend::DeviceKind::Gpu => {
                (self.info.compute_units.max(1) as usize).div_ceil(slice.max(1))
            }
            _ => 1,
        };
        let key = watchdog::key(kernel.program, &kernel.name, &rounded, local);
        let mut rate = self.watchdog.rate(&key);
        let mut events = Vec::new();
        let mut done = 0;
        while done < total {
            let n = watchdog::chunk_groups(rate, limit, (total, total - done), floor);
            let mut offset = vec![0; rounded.len()];
            let mut size = rounded.clone();
            offset[d] = done * local[d];
            size[d] = n * local[d];
            let ev = self.enqueue(kernel, &offset, &size, local)?;
            if rate.is_none() && n < total {
                // The probe: its rate sizes the other chunks.
                let e = &ev.0[0];
                let t = event_time(e)?;
                let r = t.as_nanos() as f64 / n as f64;
                self.watchdog.record(key.clone(), r);
                rate = Some(r);
                if t > limit {
                    log::warn!(
                        "{}: one chunk of {n} work-groups ran {t:?}, over the dispatch limit of {limit:?}",
                        kernel.name
                    );
                }
            }
            events.extend(ev.0);
            done += n;
        }
        if events.len() > 1 {
            log::debug!(
                "{}: {} dispatches under the limit of {limit:?}",
                kernel.name,
                events.len()
            );
        }
        Ok(ClEvent(events))
    }

    /// [`ClDevice::launch`] for grid-stride kernels (a fixed number of
    /// work-items, each looping over the data by the global size), which a
    /// global offset would make read data twice: always one dispatch. Such
    /// a kernel makes one streaming pass over its input, the shortest work
    /// any kernel of that input does.
    pub(crate) fn launch_whole(
        &self,
        kernel: &Kernel,
        global: &[usize],
        local: &[usize],
        args: &[Arg<'_>],
    ) -> Result<ClEvent> {
        let rounded = self.prepare(kernel, global, local, args)?;
        self.enqueue(kernel, &vec![0; rounded.len()], &rounded, local)
    }

    /// Checks a launch, sets its arguments and returns the global size
    /// rounded up to whole groups.
    fn prepare(
        &self,
        kernel: &Kernel,
        global: &[usize],
        local: &[usize],
        args: &[Arg<'_>],
    ) -> Result<Vec<usize>> {
        check_launch(kernel, global, local, args)?;
        for (i, a) in args.iter().enumerate() {
            let i = i as u32;
            // SAFETY: each value matches the size of the OpenCL type it stands
            // for (cl_mem handle, int, float4, float); a mismatch with the kernel's
            // declaration is reported by the driver as CL_INVALID_ARG_SIZE.
            // Buffer handles are alive: `Arg::buf`/`Arg::img` borrow their owners.
            let r = unsafe {
                match a {
                    Arg::Mem(m, _) => kernel.cl().set_arg(i, m),
                    Arg::I32(v) => kernel.cl().set_arg(i, v),
                    Arg::F32x4(v) => kernel.cl().set_arg(i, v),
                    Arg::F32(v) => kernel.cl().set_arg(i, v),
                }
            };
            r.map_err(|e| cl_err(format!("clSetKernelArg({}, {i})", kernel.name), e))?;
        }
        Ok(global
            .iter()
            .zip(local)
            .map(|(&g, &l)| g.max(1).div_ceil(l) * l)
            .collect())
    }

    /// Enqueues one dispatch of `size` work-items from `offset` (both whole
    /// groups) and counts it.
    fn enqueue(
        &self,
        kernel: &Kernel,
        offset: &[usize],
        size: &[usize],
        local: &[usize],
    ) -> Result<ClEvent> {
        // SAFETY: every argument was set by `prepare`; offset, size and local
        // have the same number of dimensions, and offset + size stays within
        // the rounded global range, a multiple of local. What the kernel
        // touches is bounded by the sizes passed with the buffers: launches
        // are crate-private, and every caller (the op modules) passes the
        // dimensions of the very buffers it passes, which the kernels check
        // against get_global_id (offset included).
        let ev = unsafe {
            self.queue.enqueue_nd_range_kernel(
                kernel.cl().get(),
                size.len() as u32,
                offset.as_ptr(),
                size.as_ptr(),
                local.as_ptr(),
                &[],
            )
        }
        .map_err(|e| match e.0 {
            // Out-of-resources style failures mean "this variant cannot run here".
            opencl3::error_codes::CL_OUT_OF_RESOURCES
            | opencl3::error_codes::CL_INVALID_WORK_GROUP_SIZE
            | opencl3::error_codes::CL_MEM_OBJECT_ALLOCATION_FAILURE => Error::Unsupported {
                op: kernel.name.clone(),
                variant: String::new(),
                reason: format!(
                    "clEnqueueNDRangeKernel: {}",
                    opencl3::error_codes::error_text(e.0)
                ),
            },
            _ => cl_err(format!("clEnqueueNDRangeKernel({})", kernel.name), e),
        })?;
        watchdog::count(1);
        Ok(ClEvent::new(ev))
    }
}

/// The shape checks of [`ClDevice::launch`], before anything is enqueued.
fn check_launch(
    kernel: &Kernel,
    global: &[usize],
    local: &[usize],
    args: &[Arg<'_>],
) -> Result<()> {
    if global.is_empty() || global.len() > 3 || global.len() != local.len() {
        return Err(Error::arg(
            "launch takes 1 to 3 dimensions, equal for global and local",
        ));
    }
    if args.len() != kernel.num_args as usize {
        return Err(Error::arg(format!(
            "kernel {} takes {} arguments, {} were given",
            kernel.name,
            kernel.num_args,
            args.len()
        )));
    }
    let group: usize = local.iter().product();
    if group == 0 || group > kernel.max_work_group {
        return Err(Error::Unsupported {
            op: kernel.name.clone(),
            variant: String::new(),
            reason: format!(
                "work-group of {group} exceeds the device's limit of {} for this kernel",
                kernel.max_work_group
            ),
        });
    }
    Ok(())
}
