//! Asynchronous transfers for frame streams: page-locked (pinned) host
//! staging memory and extra in-order queues, so that the upload of one
//! frame, the kernels of another and the download of a third overlap.
//!
//! The device's own queue runs the kernels. A [`TransferQueue`] is a second
//! (and third) in-order queue on the same context; commands on different
//! queues are ordered only by the events passed in their wait lists.
//!
//! A [`HostStage`] is a buffer created with `CL_MEM_ALLOC_HOST_PTR` and
//! mapped once for its whole life: drivers back such buffers with pinned
//! memory, from which DMA runs at full link speed and asynchronously
//! (NVIDIA's OpenCL best-practice guide recommends exactly this pattern).
//! The stage remembers the transfer in flight on its memory; every host
//! access waits for it first, and so does dropping the stage, so the host
//! can never touch (or free) memory that a DMA engine is reading or writing.

use std::ptr;
use std::sync::Arc;

use opencl3::command_queue::{
    enqueue_read_buffer, enqueue_write_buffer, CommandQueue, CL_QUEUE_PROFILING_ENABLE,
};
use opencl3::memory::{
    Buffer, ClMem, CL_MAP_READ, CL_MAP_WRITE, CL_MEM_ALLOC_HOST_PTR, CL_MEM_READ_WRITE,
};
use opencl3::types::{cl_event, cl_mem, CL_BLOCKING, CL_NON_BLOCKING};

use super::buffer::Plain;
use super::{cl_err, ClDevice, ClEvent, DeviceBuffer};
use crate::error::{Error, Result};

/// The handles of `wait` that are real OpenCL events.
fn wait_list(wait: &[&ClEvent]) -> Vec<cl_event> {
    wait.iter().filter_map(|e| e.handle()).collect()
}

/// Refuses a transfer of `n` bytes (none, or more than the buffer holds).
fn check_device_len<T: Plain>(n: usize, buf: &DeviceBuffer<T>) -> Result<()> {
    if n == 0 || n > buf.bytes() {
        return Err(Error::arg(format!(
            "a transfer of {n} bytes does not fit a device buffer of {}",
            buf.bytes()
        )));
    }
    Ok(())
}

/// An extra in-order queue on the device's context, for transfers.
pub(crate) struct TransferQueue {
    queue: Arc<CommandQueue>,
}

impl ClDevice {
    /// A new in-order queue (with profiling) beside the device's own.
    pub(crate) fn transfer_queue(&self) -> Result<TransferQueue> {
        // SAFETY: `self.device` is a member of `self.context`.
        #[allow(deprecated)]
        let queue = unsafe {
            CommandQueue::create(&self.context, self.device.id(), CL_QUEUE_PROFILING_ENABLE)
        }
        .map_err(|e| cl_err("clCreateCommandQueue", e))?;
        Ok(TransferQueue {
            queue: Arc::new(queue),
        })
    }

    /// The alignment in bytes of a sub-buffer's start
    /// (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`; 4 KiB if the device does not say).
    pub(crate) fn sub_buffer_align(&self) -> usize {
        match self.device.mem_base_addr_align() {
            Ok(bits) if bits >= 8 => bits as usize / 8,
            _ => 4096,
        }
    }

    /// Makes every later command on the device's queue wait for `wait`.
    pub(crate) fn barrier(&self, wait: &[&ClEvent]) -> Result<()> {
        let list = wait_list(wait);
        if list.is_empty() {
            return Ok(());
        }
        // SAFETY: every handle in `list` belongs to a live `ClEvent` borrowed
        // for this call; OpenCL retains what it needs.
        unsafe { self.queue.enqueue_barrier_with_wait_list(&list) }
            .map(drop)
            .map_err(|e| cl_err("clEnqueueBarrierWithWaitList", e))
    }

    /// An event that completes when everything queued so far on the
    /// device's queue has finished. The queue is flushed, because the event
    /// goes into other queues' wait lists, and OpenCL requires the commands
    /// behind such an event to have been submitted (some implementations
    /// hold commands until a flush).
    pub(crate) fn marker(&self) -> Result<ClEvent> {
        // SAFETY: an empty wait list.
        let ev = unsafe { self.queue.enqueue_marker_with_wait_list(&[]) }
            .map(ClEvent::new)
            .map_err(|e| cl_err("clEnqueueMarkerWithWaitList", e))?;
        self.queue.flush().map_err(|e| cl_err("clFlush", e))?;
        Ok(ev)
    }
}

/// Host memory that the device reads and writes by DMA: a
/// `CL_MEM_ALLOC_HOST_PTR` buffer, mapped for the stage's whole life.
pub(crate) struct HostStage {
    buf: Buffer<u8>,
    ptr: *mut u8,
    len: usize,
    /// The queue the mapping was made on (unmapped there on drop).
    queue: Arc<CommandQueue>,
    /// The transfer in flight on this memory, if any.
    pending: Option<ClEvent>,
}

// SAFETY: the mapped pointer is owned by the stage alone (no other handle to
// the mapping exists), and OpenCL objects may be used from any thread.
unsafe impl Send for HostStage {}

impl TransferQueue {
    /// Allocates and maps `len` bytes of pinned host memory (`len` > 0).
    pub(crate) fn stage(&self, dev: &ClDevice, len: usize) -> Result<HostStage> {
        if len == 0 {
            return Err(Error::arg("a host stage holds at least one byte"));
        }
        // SAFETY: no host pointer is passed; the driver allocates the memory.
        let buf = unsafe {
            Buffer::<u8>::create(
                &dev.context,
                CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR,
                len,
                ptr::null_mut(),
            )
        }
        .map_err(|e| cl_err("clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)", e))?;
        let mut mapped: cl_mem = ptr::null_mut();
        // SAFETY: a blocking map of the whole buffer; `mapped` receives the
        // host address, valid until the buffer is unmapped (in `Drop`).
        unsafe {
            self.queue.enqueue_map_buffer(
                &buf,
                CL_BLOCKING,
                CL_MAP_READ | CL_MAP_WRITE,
                0,
                len,
                &mut mapped,
                &[],
            )
        }
        .map_err(|e| cl_err("clEnqueueMapBuffer", e))?;
        if mapped.is_null() {
            return Err(Error::arg("clEnqueueMapBuffer returned no address"));
        }
        Ok(HostStage {
            buf,
            ptr: mapped as *mut u8,
            len,
            queue: self.queue.clone(),
            pending: None,
        })
    }

    /// Starts copying the first `n` bytes of `src` into the start of `dst`
    /// once every event in `wait` has completed; returns at once.
    pub(crate) fn upload<T: Plain>(
        &self,
        src: &mut HostStage,
        dst: &DeviceBuffer<T>,
        n: usize,
        wait: &[&ClEvent],
    ) -> Result<ClEvent> {
        check_device_len(n, dst)?;
        src.check_len(n)?;
        src.settle()?;
        let list = wait_list(wait);
        // SAFETY: `src.ptr` is mapped for `src.len >= n` bytes and stays valid
        // until the stage is dropped; the stage records the event below and
        // waits for it before any host access or unmapping, so the memory
        // outlives the DMA and is not written while it is read.
        let ev = unsafe {
            enqueue_write_buffer(
                self.queue.get(),
                dst.mem(),
                CL_NON_BLOCKING,
                0,
                n,
                src.ptr as *const std::ffi::c_void,
                list.len() as u32,
                if list.is_empty() {
                    ptr::null()
                } else {
                    list.as_ptr()
                },
            )
        }
        .map_err(|e| {
            cl_err(
                "clEnqueueWriteBuffer(async)",
                opencl3::error_codes::ClError(e),
            )
        })?;
        let ev = ClEvent::new(opencl3::event::Event::new(ev));
        src.pending = Some(ev.clone());
        self.flush()?;
        Ok(ev)
    }

    /// Starts copying the first `n` bytes of `src` into the start of `dst`
    /// once every event in `wait` has completed; returns at once.
    pub(crate) fn download<T: Plain>(
        &self,
        src: &DeviceBuffer<T>,
        dst: &mut HostStage,
        n: usize,
        wait: &[&ClEvent],
    ) -> Result<ClEvent> {
        check_device_len(n, src)?;
        dst.check_len(n)?;
        dst.settle()?;
        let list = wait_list(wait);
        // SAFETY: as in `upload`: the stage's mapping covers `n` bytes and
        // the stage waits for the recorded event before host access or drop.
        let ev = unsafe {
            enqueue_read_buffer(
                self.queue.get(),
                src.mem(),
                CL_NON_BLOCKING,
                0,
                n,
                dst.ptr as *mut std::ffi::c_void,
                list.len() as u32,
                if list.is_empty() {
                    ptr::null()
                } else {
                    list.as_ptr()
                },
            )
        }
        .map_err(|e| {
            cl_err(
                "clEnqueueReadBuffer(async)",
                opencl3::error_codes::ClError(e),
            )
        })?;
        let ev = ClEvent::new(opencl3::event::Event::new(ev));
        dst.pending = Some(ev.clone());
        self.flush()?;
        Ok(ev)
    }

    /// Submits what is queued, so the device starts it without waiting for
    /// a blocking call.
    fn flush(&self) -> Result<()> {
        self.queue.flush().map_err(|e| cl_err("clFlush", e))
    }
}

impl HostStage {
    /// The memory, after any transfer on it has finished.
    pub(crate) fn bytes(&mut self) -> Result<&[u8]> {
        self.settle()?;
        // SAFETY: mapped for `len` bytes for the stage's life; no transfer is
        // in flight (settled), and `&mut self` excludes other host access.
        Ok(unsafe { std::slice::from_raw_parts(self.ptr, self.len) })
    }

    /// The memory for writing, after any transfer on it has finished.
    pub(crate) fn bytes_mut(&mut self) -> Result<&mut [u8]> {
        self.settle()?;
        // SAFETY: as in `bytes`, and `&mut self` makes the view unique.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) })
    }

    /// Waits for the transfer in flight, if any.
    fn settle(&mut self) -> Result<()> {
        // Forgotten only once the wait succeeded: a failed wait leaves the
        // DMA possibly in flight, and the memory must stay untouched.
        if let Some(ev) = &self.pending {
            ev.wait()?;
        }
        self.pending = None;
        Ok(())
    }

    fn check_len(&self, n: usize) -> Result<()> {
        if n > self.len {
            return Err(Error::arg(format!(
                "a transfer of {n} bytes does not fit a host stage of {}",
                self.len
            )));
        }
        Ok(())
    }
}

impl Drop for HostStage {
    fn drop(&mut self) {
        // The DMA must be over before the mapping goes away; a failed wait
        // means the context is broken, and then finishing the queue below
        // is all that is left to do.
        if self.settle().is_err() {
            let _ = self.queue.finish();
        }
        // SAFETY: `ptr` is the address this buffer was mapped at on this
        // queue; nothing uses it any more (settled above, and `&mut self`).
        let r = unsafe {
            self.queue
                .enqueue_unmap_mem_object(self.buf.get(), self.ptr as *mut _, &[])
        };
        if r.is_ok() {
            let _ = self.queue.finish();
        }
    }
}
