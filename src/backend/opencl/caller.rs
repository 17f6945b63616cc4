//! Engines on an application's own OpenCL context and queue.
//!
//! Ownership rule: the engine takes its own reference on each handle
//! (`clRetainContext`, `clRetainCommandQueue`) and releases exactly that
//! reference when its last clone drops. The caller's references are never
//! released, so the caller's handles stay valid and usable afterwards.
//!
//! Our launches and transfers assume an in-order queue, and kernel timings
//! (reports, the tuner) need `CL_QUEUE_PROFILING_ENABLE`. A caller queue
//! with both is used as it is, so the engine's commands are ordered with
//! the caller's. Otherwise the engine creates its own in-order profiling
//! queue on the caller's context and device (that queue is ours, and
//! released with the engine): the engine's host-in/host-out calls finish
//! before they return, so the results are the same, but the caller's queue
//! does not order them. [`QueueOrigin`] says which happened. Extra transfer
//! queues for streams are always created by the engine, on the same
//! context, and released by it.

use std::ffi::c_void;

use opencl3::command_queue::{
    retain_command_queue, CommandQueue, CL_QUEUE_CONTEXT, CL_QUEUE_DEVICE,
    CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, CL_QUEUE_PROFILING_ENABLE,
};
use opencl3::context::context::{get_context_info, retain_context, CL_CONTEXT_DEVICES};
use opencl3::context::Context;
use opencl3::device::Device;
use opencl3::error_codes::{ClError, CL_INVALID_COMMAND_QUEUE, CL_INVALID_CONTEXT};
use opencl3::types::{cl_command_queue, cl_context, cl_device_id};

use super::cl_err;
use crate::error::Result;

/// Which queue an engine's kernels run on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueueOrigin {
    /// A queue the engine created on a context it created (the usual case).
    Engine,
    /// The caller's queue: in order, with profiling.
    Caller,
    /// A queue the engine created on the caller's context, because the
    /// caller's queue could not be used as it is (`reason` says why).
    OwnOnCallerContext {
        /// Why the caller's queue was not used.
        reason: String,
    },
}

/// An application's OpenCL context and command queue, each retained once
/// by this value (and released once when it drops), ready to build an
/// engine on with `Backend::adopt`.
pub struct CallerContext {
    pub(super) device: Device,
    pub(super) context: Context,
    pub(super) queue: CommandQueue,
}

impl std::fmt::Debug for CallerContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CallerContext({:?})", self.context.get())
    }
}

impl CallerContext {
    /// Takes a reference on an opencl3 context and a queue created on it.
    /// The caller keeps its own values and may use them as before.
    pub fn from_opencl3(context: &Context, queue: &CommandQueue) -> Result<Self> {
        // SAFETY: opencl3 values hold valid handles for as long as they live,
        // and both are borrowed for this call.
        unsafe { Self::from_raw(context.get(), queue.get()) }
    }

    /// Takes a reference on a raw `cl_context` and a `cl_command_queue`
    /// created on it (from any OpenCL binding: all of them pass the ICD
    /// loader's handles). The device is the queue's `CL_QUEUE_DEVICE`,
    /// which must be one of the context's devices. A null handle, or a
    /// queue of another context, is an [`crate::Error::OpenCl`] error.
    ///
    /// # Safety
    ///
    /// Each handle must be null or a valid, live handle of its type: the
    /// OpenCL ICD loader dereferences non-null handles, so a dangling one
    /// cannot be detected and may crash.
    pub unsafe fn from_raw(context: *mut c_void, queue: *mut c_void) -> Result<Self> {
        let context: cl_context = context;
        let queue: cl_command_queue = queue;
        if context.is_null() {
            return Err(cl_err(
                "clRetainContext (null cl_context)",
                ClError(CL_INVALID_CONTEXT),
            ));
        }
        if queue.is_null() {
            let e = ClError(CL_INVALID_COMMAND_QUEUE);
            return Err(cl_err("clRetainCommandQueue (null cl_command_queue)", e));
        }
        let info = |param| opencl3::command_queue::get_command_queue_info(queue, param);
        let device = info(CL_QUEUE_DEVICE)
            .map_err(|e| cl_err("clGetCommandQueueInfo(CL_QUEUE_DEVICE)", ClError(e)))?;
        let device = isize::from(device) as cl_device_id;
        let of_queue = info(CL_QUEUE_CONTEXT)
            .map_err(|e| cl_err("clGetCommandQueueInfo(CL_QUEUE_CONTEXT)", ClError(e)))?;
        if isize::from(of_queue) as cl_context != context {
            let e = ClError(CL_INVALID_CONTEXT);
            return Err(cl_err("adopting a queue of another context", e));
        }
        let ids = get_context_info(context, CL_CONTEXT_DEVICES)
            .map(Vec::<isize>::from)
            .map_err(|e| cl_err("clGetContextInfo(CL_CONTEXT_DEVICES)", ClError(e)))?;
        if !ids.iter().any(|&d| d as cl_device_id == device) {
            let e = ClError(CL_INVALID_CONTEXT);
            return Err(cl_err(
                "adopting a queue whose device is not in the context",
                e,
            ));
        }
        let device = Device::new(device);
        let dims = device.max_work_item_dimensions().unwrap_or(3);
        // SAFETY: both handles are valid by this function's contract. Each
        // retain is paired with exactly one release: the drop of the opencl3
        // wrapper that takes it over below, on every path.
        unsafe {
            retain_context(context).map_err(|e| cl_err("clRetainContext", ClError(e)))?;
            if let Err(e) = retain_command_queue(queue) {
                drop(Context::new(context, &[]));
                return Err(cl_err("clRetainCommandQueue", ClError(e)));
            }
        }
        Ok(CallerContext {
            context: Context::new(context, &[device.id()]),
            queue: CommandQueue::new(queue, dims),
            device,
        })
    }

    /// The queue to run on: the caller's when it is in order with
    /// profiling, else a new one of ours on the caller's context.
    pub(super) fn queue_to_use(self) -> Result<(Device, Context, CommandQueue, QueueOrigin)> {
        let CallerContext {
            device,
            context,
            queue,
        } = self;
        let props = queue
            .properties()
            .map_err(|e| cl_err("clGetCommandQueueInfo(CL_QUEUE_PROPERTIES)", e))?;
        let reason = if props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE != 0 {
            "the caller's queue executes out of order"
        } else if props & CL_QUEUE_PROFILING_ENABLE == 0 {
            "the caller's queue has no profiling (kernel timings need it)"
        } else {
            return Ok((device, context, queue, QueueOrigin::Caller));
        };
        drop(queue);
        // SAFETY: `device` is the caller queue's device, a member of `context`
        // (checked in `from_raw`).
        #[allow(deprecated)]
        let own = unsafe { CommandQueue::create(&context, device.id(), CL_QUEUE_PROFILING_ENABLE) }
            .map_err(|e| cl_err("clCreateCommandQueue", e))?;
        log::info!("{reason}: running on a queue of our own on the caller's context");
        let origin = QueueOrigin::OwnOnCallerContext {
            reason: reason.into(),
        };
        Ok((device, context, own, origin))
    }
}
