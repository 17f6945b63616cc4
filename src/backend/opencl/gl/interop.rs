//! The shared path (cargo feature `gl`): an OpenCL context that shares with
//! the current GL context, and copies from device images into GL textures.
//! Compiled and linted here, unverified on hardware (see the parent module).
//!
//! The context comes from `ocl_interop::get_context()`, as an `ocl::Context`.
//! ocl links libOpenCL when the program is built, while opencl3 (our
//! backend) opens it when the program runs; both call the one Khronos ICD
//! loader, whose handles carry their driver's dispatch table, so a handle
//! from one binding is valid in the other. We take our own reference on the
//! handle (`CallerContext::from_raw`) and let ocl release its own.
//!
//! Where ocl-interop does not fit, the rest follows the specification with
//! opencl3's GL functions: ocl-interop picks the first GPU that accepts the
//! GL properties, so `clGetGLContextInfoKHR(CL_CURRENT_DEVICE_FOR_GL_CONTEXT_KHR)`
//! checks that it is the GL context's own device (GLX only: Apple answers
//! that query through its own `clGetGLContextInfoAPPLE`); and ocl-interop
//! has no texture or acquire/release calls, so `clCreateFromGLTexture` and
//! `clEnqueueAcquireGLObjects`/`clEnqueueReleaseGLObjects` come from opencl3.
//! `ocl_interop::get_context()` unwraps ocl's device listing internally, so
//! a platform that fails to list its GPUs makes it panic rather than fail:
//! that panic is caught and becomes the copy mode's reason.

use std::ffi::c_void;

use ocl::core::ClDeviceIdPtr;

use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::get_current_device_for_gl_context_khr;
use opencl3::device::Device;
use opencl3::error_codes::ClError;
use opencl3::memory::{ClMem, Image, CL_IMAGE_HEIGHT, CL_IMAGE_WIDTH, CL_MEM_WRITE_ONLY};
use opencl3::types::{cl_device_id, cl_event};

use super::super::{cl_err, CallerContext, ClDevice, DeviceImage};
use super::{reports_gl_sharing, GlShare, InteropMode};
use crate::error::{Error, Result};
use crate::image::display::DisplayFormat;
use crate::image::{Sample, SampleType};

/// Opens an OpenCL context that shares with the GL context current on this
/// thread. `Shared` comes with the context and queue to build the engine
/// on (`backend::adopt`); `Copy` says why sharing is off, and the
/// application then runs an ordinary engine and uploads frames itself.
/// The mode is logged at `info`.
pub fn share_current_gl() -> (InteropMode, Option<CallerContext>) {
    let (mode, caller) = match try_share() {
        Ok(c) => (InteropMode::Shared, Some(c)),
        Err(reason) => (InteropMode::Copy { reason }, None),
    };
    log::info!("GL interop: {mode}");
    (mode, caller)
}

/// The shared context and a profiling queue of ours on it, or why not.
fn try_share() -> std::result::Result<CallerContext, String> {
    let share = GlShare::from_properties(&ocl_interop::get_properties_list().to_raw())
        .ok_or("no GL context is current on this thread")?;
    // ocl-interop unwraps ocl's device listing: a platform that fails to
    // list its GPUs panics in there (the panic hook still prints it).
    let ctx = std::panic::catch_unwind(ocl_interop::get_context)
        .map_err(|payload| {
            let why = payload
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| payload.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            format!("ocl-interop panicked: {why}")
        })?
        .ok_or("no GPU device accepts a context that shares with the current GL context")?;
    let first = ctx.devices().first().map(|d| d.as_core().as_ptr());
    let device = Device::new(first.ok_or("the shared context has no device")? as cl_device_id);
    if !reports_gl_sharing(&device.extensions().unwrap_or_default()) {
        return Err(format!(
            "{} reports no GL sharing extension",
            device.name().unwrap_or_default()
        ));
    }
    if let GlShare::Glx { .. } = share {
        let platform = device.platform().map_err(|e| e.to_string())?;
        let current = get_current_device_for_gl_context_khr(&share.properties(platform))
            .map_err(|e| format!("clGetGLContextInfoKHR: {e}"))?;
        if current != device.id() {
            return Err("the GL context runs on another device than the shared context".into());
        }
    }
    let raw = ctx.as_core().as_ptr();
    // SAFETY: `raw` is the live context `ctx` holds, and `device` is its
    // device (listed by it).
    #[allow(deprecated)]
    let queue = unsafe {
        opencl3::command_queue::create_command_queue(raw, device.id(), CL_QUEUE_PROFILING_ENABLE)
    }
    .map(|q| CommandQueue::new(q, 3))
    .map_err(|e| format!("clCreateCommandQueue: {}", ClError(e)))?;
    // SAFETY: both handles are live (held by `ctx` and `queue`); the caller
    // context takes its own reference on each before they are released.
    unsafe { CallerContext::from_raw(raw, queue.get()) }.map_err(|e| e.to_string())
}

/// A GL texture (2D, mip level 0) that the device writes, created with
/// `clCreateFromGLTexture` on a shared context.
pub struct GlTexture {
    image: Image,
    width: usize,
    height: usize,
    format: DisplayFormat,
}

impl GlTexture {
    /// Its pixel format (`GL_RGBA8` is RGBA8, `GL_RGBA32F` RGBA32F).
    pub fn format(&self) -> DisplayFormat {
        self.format
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (usize, usize) {
        (self.width, self.height)
    }
}

/// `CL_RGBA`, `CL_UNORM_INT8` and `CL_FLOAT` (cl.h).
const CL_RGBA: u32 = 0x10B5;
const CL_UNORM_INT8: u32 = 0x10D2;
const CL_FLOAT: u32 = 0x10DE;

impl ClDevice {
    /// Wraps GL texture `texture` (bound to `target`, e.g. `GL_TEXTURE_2D`
    /// = 0x0DE1) for writing. The device must share with the GL context
    /// that owns the texture ([`share_current_gl`]); a name the driver does
    /// not know is an `Error::OpenCl` (`CL_INVALID_GL_OBJECT`), and a
    /// texture that is not `GL_RGBA8` or `GL_RGBA32F` is refused.
    pub fn gl_texture(&self, target: u32, texture: u32) -> Result<GlTexture> {
        // SAFETY: the driver checks the context, target and texture name;
        // nothing is read or written until a copy acquires the texture.
        let image = unsafe {
            Image::create_from_gl_texture(&self.context, CL_MEM_WRITE_ONLY, target, 0, texture)
        }
        .map_err(|e| cl_err("clCreateFromGLTexture", e))?;
        let info = |p| {
            opencl3::memory::get_image_info(image.get(), p)
                .map(usize::from)
                .map_err(|e| cl_err("clGetImageInfo", ClError(e)))
        };
        let formats = image.format().map_err(|e| cl_err("clGetImageInfo", e))?;
        let format = match formats
            .first()
            .map(|f| (f.image_channel_order, f.image_channel_data_type))
        {
            Some((CL_RGBA, CL_UNORM_INT8)) => DisplayFormat::Rgba8,
            Some((CL_RGBA, CL_FLOAT)) => DisplayFormat::Rgba32F,
            other => {
                return Err(Error::arg(format!(
                    "GL texture {texture} is not GL_RGBA8 or GL_RGBA32F (OpenCL image format {other:x?})"
                )))
            }
        };
        Ok(GlTexture {
            width: info(CL_IMAGE_WIDTH)?,
            height: info(CL_IMAGE_HEIGHT)?,
            format,
            image,
        })
    }

    /// Copies `img` (display pixels: 4 channels of u8 for an RGBA8
    /// texture, of f32 for RGBA32F) into `tex` and returns when the copy is
    /// done: acquire,
    /// copy, release, `clFinish`, after which GL may draw the texture.
    /// Before the call the application must have finished the GL commands
    /// that use the texture (`glFinish`), unless the device reports
    /// `cl_khr_gl_event`, with which the acquire waits for them itself.
    pub fn copy_to_gl_texture<T: Sample>(
        &self,
        img: &DeviceImage<T>,
        tex: &GlTexture,
    ) -> Result<()> {
        let fits = match tex.format {
            DisplayFormat::Rgba8 => T::TYPE == SampleType::U8,
            DisplayFormat::Rgba32F => T::TYPE == SampleType::F32,
        };
        if !fits || (img.width(), img.height(), img.channels()) != (tex.width, tex.height, 4) {
            return Err(Error::arg(format!(
                "a {}x{}x{} {} image does not fit a {}x{} {:?} texture",
                img.width(),
                img.height(),
                img.channels(),
                T::TYPE,
                tex.width,
                tex.height,
                tex.format
            )));
        }
        let mems = [tex.image.get() as *const c_void];
        let (origin, region) = ([0usize; 3], [tex.width, tex.height, 1]);
        // SAFETY: the texture is acquired before the copy and released after
        // it, on this in-order queue; the copy's region is the texture's
        // whole size, and the source buffer holds exactly that many pixels
        // of the texture's format (checked above).
        unsafe {
            self.queue
                .enqueue_acquire_gl_objects(&mems, &[])
                .map_err(|e| cl_err("clEnqueueAcquireGLObjects", e))?;
            let copy = opencl3::command_queue::enqueue_copy_buffer_to_image(
                self.queue.get(),
                img.buffer().mem(),
                tex.image.get(),
                0,
                origin.as_ptr(),
                region.as_ptr(),
                0,
                std::ptr::null::<cl_event>(),
            );
            let release = self.queue.enqueue_release_gl_objects(&mems, &[]);
            copy.map(|e| drop(opencl3::event::Event::new(e)))
                .map_err(|e| cl_err("clEnqueueCopyBufferToImage", ClError(e)))?;
            release.map_err(|e| cl_err("clEnqueueReleaseGLObjects", e))?;
        }
        self.finish()
    }
}
