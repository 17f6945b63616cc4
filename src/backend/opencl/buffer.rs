//! Typed device memory with checked transfers.

use std::marker::PhantomData;
use std::ptr;

use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::{cl_mem, CL_BLOCKING};

use super::{cl_err, ClDevice, ClEvent};
use crate::error::{Error, Result};
use crate::image::{Image, Sample};

mod sealed {
    pub trait Sealed {}
    impl<T: crate::image::Sample> Sealed for T {}
    impl Sealed for [f32; 4] {}
}

/// Element types a device buffer may hold: plain data without padding, for
/// which every bit pattern is a valid value (so device bytes can be read
/// back as `T`).
pub trait Plain: sealed::Sealed + Copy + Default + Send + Sync + 'static {}
impl<T: Sample> Plain for T {}
impl Plain for [f32; 4] {}

/// `len` elements of `T` in device memory.
///
/// Transfers are blocking and check that the host slice has exactly `len`
/// elements, so no host memory is touched after a call returns.
pub(crate) struct DeviceBuffer<T> {
    buf: Buffer<u8>,
    len: usize,
    _t: PhantomData<T>,
}

// SAFETY: an OpenCL memory object may be used from any host thread (OpenCL 1.2
// §A.2: all API calls are thread-safe except clSetKernelArg on one kernel).
unsafe impl<T: Send> Send for DeviceBuffer<T> {}
// SAFETY: as above; shared references only read the handle.
unsafe impl<T: Sync> Sync for DeviceBuffer<T> {}

impl<T: Plain> DeviceBuffer<T> {
    /// Allocates `len` elements (uninitialised device memory).
    pub fn new(dev: &ClDevice, len: usize) -> Result<Self> {
        if len == 0 {
            return Err(Error::arg("device buffers hold at least one element"));
        }
        let bytes = len
            .checked_mul(std::mem::size_of::<T>())
            .ok_or_else(|| Error::arg("buffer size overflows"))?;
        if bytes as u64 > dev.info.max_alloc && dev.info.max_alloc > 0 {
            return Err(Error::arg(format!(
                "buffer of {bytes} bytes exceeds the device's largest allocation ({} bytes)",
                dev.info.max_alloc
            )));
        }
        // SAFETY: no host pointer is passed (null with flags that do not use one).
        let buf = unsafe {
            Buffer::<u8>::create(&dev.context, CL_MEM_READ_WRITE, bytes, ptr::null_mut())
        }
        .map_err(|e| cl_err("clCreateBuffer", e))?;
        Ok(DeviceBuffer {
            buf,
            len,
            _t: PhantomData,
        })
    }

    /// Allocates a buffer and fills it from `data` (at least one element).
    pub fn from_slice(dev: &ClDevice, data: &[T]) -> Result<Self> {
        let mut b = Self::new(dev, data.len())?;
        b.write(dev, data)?;
        Ok(b)
    }

    /// Size in bytes.
    pub fn bytes(&self) -> usize {
        self.len * std::mem::size_of::<T>()
    }

    pub(super) fn mem(&self) -> cl_mem {
        self.buf.get()
    }

    /// Copies `data` (exactly `len` elements) to the device; blocks until done.
    pub fn write(&mut self, dev: &ClDevice, data: &[T]) -> Result<ClEvent> {
        self.check_len(data.len())?;
        // SAFETY: the transfer is blocking, so `data` outlives it; the byte
        // view covers exactly `data`, whose length equals the buffer's, and
        // `T: Plain` has no padding bytes, so every byte read is initialised.
        let ev = unsafe {
            let bytes = std::slice::from_raw_parts(data.as_ptr() as *const u8, self.bytes());
            dev.queue
                .enqueue_write_buffer(&mut self.buf, CL_BLOCKING, 0, bytes, &[])
        }
        .map_err(|e| cl_err("clEnqueueWriteBuffer", e))?;
        Ok(ClEvent::new(ev))
    }

    /// Copies the buffer into `out` (exactly `len` elements); blocks until done.
    pub fn read(&self, dev: &ClDevice, out: &mut [T]) -> Result<ClEvent> {
        self.check_len(out.len())?;
        // SAFETY: blocking read into a byte view of exactly `out`; `T: Plain`
        // guarantees every bit pattern is a valid `T`.
        let ev = unsafe {
            let bytes = std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut u8, self.bytes());
            dev.queue
                .enqueue_read_buffer(&self.buf, CL_BLOCKING, 0, bytes, &[])
        }
        .map_err(|e| cl_err("clEnqueueReadBuffer", e))?;
        Ok(ClEvent::new(ev))
    }

    /// Reads the whole buffer into a new vector.
    pub fn to_vec(&self, dev: &ClDevice) -> Result<Vec<T>> {
        let mut v = vec![T::default(); self.len];
        self.read(dev, &mut v)?;
        Ok(v)
    }

    fn check_len(&self, n: usize) -> Result<()> {
        if n != self.len {
            return Err(Error::arg(format!(
                "host data has {n} elements, the device buffer {}",
                self.len
            )));
        }
        Ok(())
    }
}

/// A packed image in device memory: `width x height` pixels of `channels` samples.
pub struct DeviceImage<T: Sample> {
    buf: DeviceBuffer<T>,
    width: usize,
    height: usize,
    channels: usize,
}

impl<T: Sample> DeviceImage<T> {
    /// Allocates an image of the given shape (contents undefined).
    pub fn new(dev: &ClDevice, width: usize, height: usize, channels: usize) -> Result<Self> {
        // The host-side shape rules (non-empty, 1/3/4 channels, < 2^31
        // samples) are what the kernels' int indexing relies on.
        let n = crate::image::check_shape(width, height, channels)?;
        Ok(DeviceImage {
            buf: DeviceBuffer::new(dev, n)?,
            width,
            height,
            channels,
        })
    }

    /// Uploads a host image (padded rows are packed on the way).
    pub fn upload(dev: &ClDevice, img: &Image<T>) -> Result<Self> {
        let mut d = Self::new(dev, img.width(), img.height(), img.channels())?;
        d.write(dev, img)?;
        Ok(d)
    }

    /// Overwrites the contents from a host image of the same shape.
    pub fn write(&mut self, dev: &ClDevice, img: &Image<T>) -> Result<ClEvent> {
        self.check_shape(img.width(), img.height(), img.channels())?;
        self.buf.write(dev, &img.packed_samples())
    }

    /// Downloads into a new packed host image.
    pub fn download(&self, dev: &ClDevice) -> Result<Image<T>> {
        let v = self.buf.to_vec(dev)?;
        Image::from_vec(self.width, self.height, self.channels, v)
    }

    /// Downloads into an existing host image of the same shape.
    pub fn read_into(&self, dev: &ClDevice, img: &mut Image<T>) -> Result<ClEvent> {
        self.check_shape(img.width(), img.height(), img.channels())?;
        match img.as_packed_mut() {
            Some(s) => self.buf.read(dev, s),
            None => {
                let v = self.buf.to_vec(dev)?;
                let row = img.row_len();
                for (y, src) in v.chunks_exact(row).enumerate() {
                    img.row_mut(y).copy_from_slice(src);
                }
                Ok(ClEvent::none())
            }
        }
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }
    /// Samples per pixel.
    pub fn channels(&self) -> usize {
        self.channels
    }
    /// Pixel count.
    pub fn pixel_count(&self) -> usize {
        self.width * self.height
    }
    /// The underlying buffer.
    pub(crate) fn buffer(&self) -> &DeviceBuffer<T> {
        &self.buf
    }

    fn check_shape(&self, w: usize, h: usize, c: usize) -> Result<()> {
        if (w, h, c) != (self.width, self.height, self.channels) {
            return Err(Error::arg(format!(
                "host image is {w}x{h}x{c}, the device image {}x{}x{}",
                self.width, self.height, self.channels
            )));
        }
        Ok(())
    }
}
