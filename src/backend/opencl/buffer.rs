//! Typed device memory with checked transfers.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::ptr;
use std::sync::{Arc, Mutex};

use opencl3::memory::{Buffer, ClMem, CL_MEM_READ_WRITE};
use opencl3::types::{cl_mem, CL_BLOCKING};

use super::{cl_err, ClDevice, ClEvent};
use crate::error::{Error, Result};
use crate::image::{Image, ImageView, ImageViewMut, Sample};

mod sealed {
    pub trait Sealed {}
    impl<T: crate::image::Sample> Sealed for T {}
    impl Sealed for [f32; 4] {}
    impl Sealed for [u64; 4] {}
    impl Sealed for u32 {}
}

/// Element types a device buffer may hold: plain data without padding, for
/// which every bit pattern is a valid value (so device bytes can be read
/// back as `T`).
pub trait Plain: sealed::Sealed + Copy + Default + Send + Sync + 'static {}
impl<T: Sample> Plain for T {}
impl Plain for [f32; 4] {}
impl Plain for [u64; 4] {}
impl Plain for u32 {}

/// Device allocations kept for reuse, keyed by their size in bytes.
///
/// Frame after frame, a pipeline asks for the same intermediate sizes; a
/// freed buffer goes here and the next request of its size takes it, so a
/// stream allocates nothing after its first frame. Reuse is safe on the
/// device's in-order queue: a command that writes a reused buffer runs after
/// every earlier command that used it. Code that hands a buffer to another
/// queue (the stream's transfer queues) keeps it alive until those commands
/// have finished.
pub(crate) struct Pool {
    free: Mutex<PoolState>,
    /// The most bytes kept while unused.
    limit: u64,
    /// Buffers created from the driver (not taken from the pool).
    created: std::sync::atomic::AtomicU64,
}

#[derive(Default)]
struct PoolState {
    by_size: HashMap<usize, Vec<Buffer<u8>>>,
    bytes: u64,
}

/// Unused buffers kept per size: enough for the intermediates of a few
/// frames in flight.
const POOL_PER_SIZE: usize = 8;

impl Pool {
    /// A pool that keeps at most a quarter of the device's memory unused.
    pub(crate) fn new(global_mem: u64) -> Self {
        Pool {
            free: Mutex::new(PoolState::default()),
            limit: global_mem / 4,
            created: std::sync::atomic::AtomicU64::new(0),
        }
    }

    fn take(&self, bytes: usize) -> Option<Buffer<u8>> {
        let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
        let b = st.by_size.get_mut(&bytes)?.pop()?;
        st.bytes -= bytes as u64;
        Some(b)
    }

    fn give(&self, bytes: usize, buf: Buffer<u8>) {
        let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
        if st.bytes + bytes as u64 > self.limit {
            return; // dropped: released to the driver
        }
        let list = st.by_size.entry(bytes).or_default();
        if list.len() < POOL_PER_SIZE {
            list.push(buf);
            st.bytes += bytes as u64;
        }
    }

    /// Releases every unused buffer to the driver.
    pub(crate) fn clear(&self) {
        let mut st = self.free.lock().unwrap_or_else(|e| e.into_inner());
        st.by_size.clear();
        st.bytes = 0;
    }

    /// Buffers allocated from the driver so far.
    pub(crate) fn created(&self) -> u64 {
        self.created.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// Bytes held unused.
    pub(crate) fn held_bytes(&self) -> u64 {
        self.free.lock().unwrap_or_else(|e| e.into_inner()).bytes
    }
}

/// `len` elements of `T` in device memory, from the device's [`Pool`] when
/// a buffer of the size is free there, and given back to it when dropped.
///
/// Transfers are blocking and check that the host slice has exactly `len`
/// elements, so no host memory is touched after a call returns.
pub(crate) struct DeviceBuffer<T> {
    /// `None` only while being dropped.
    buf: Option<Buffer<u8>>,
    len: usize,
    /// Where the memory goes when dropped; `None` for a sub-buffer, which
    /// aliases another buffer's memory and must never be handed out again.
    pool: Option<Arc<Pool>>,
    _t: PhantomData<T>,
}

impl<T> Drop for DeviceBuffer<T> {
    fn drop(&mut self) {
        if let (Some(b), Some(pool)) = (self.buf.take(), &self.pool) {
            pool.give(self.len * std::mem::size_of::<T>(), b);
        }
    }
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
        let buf = match dev.pool.take(bytes) {
            Some(b) => b,
            None => {
                dev.pool
                    .created
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                // SAFETY: no host pointer is passed (null with flags that do not use one).
                unsafe {
                    Buffer::<u8>::create(&dev.context, CL_MEM_READ_WRITE, bytes, ptr::null_mut())
                }
                .map_err(|e| cl_err("clCreateBuffer", e))?
            }
        };
        Ok(DeviceBuffer {
            buf: Some(buf),
            len,
            pool: Some(dev.pool.clone()),
            _t: PhantomData,
        })
    }

    /// `len` elements of `U` aliasing this buffer's bytes from `offset` on
    /// (an OpenCL sub-buffer). `offset` must be a multiple of the device's
    /// `CL_DEVICE_MEM_BASE_ADDR_ALIGN`. The view keeps the memory alive, but
    /// the owner must not be dropped (and so pooled for reuse) before it.
    pub(crate) fn sub<U: Plain>(&self, offset: usize, len: usize) -> Result<DeviceBuffer<U>> {
        let bytes = len
            .checked_mul(std::mem::size_of::<U>())
            .filter(|&b| b > 0 && offset.checked_add(b).is_some_and(|e| e <= self.bytes()))
            .ok_or_else(|| {
                Error::arg(format!(
                    "a sub-buffer of {len} elements at byte {offset} does not fit {} bytes",
                    self.bytes()
                ))
            })?;
        // SAFETY: the region lies inside the buffer (checked above); the
        // sub-buffer is a new handle that retains its parent.
        let buf = unsafe {
            self.cl()
                .create_sub_buffer(CL_MEM_READ_WRITE, offset, bytes)
        }
        .map_err(|e| cl_err("clCreateSubBuffer", e))?;
        Ok(DeviceBuffer {
            buf: Some(buf),
            len,
            pool: None,
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
        self.cl().get()
    }

    pub(super) fn cl(&self) -> &Buffer<u8> {
        self.buf.as_ref().expect("a live buffer holds its memory")
    }

    fn cl_mut(&mut self) -> &mut Buffer<u8> {
        self.buf.as_mut().expect("a live buffer holds its memory")
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
                .enqueue_write_buffer(self.cl_mut(), CL_BLOCKING, 0, bytes, &[])
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
                .enqueue_read_buffer(self.cl(), CL_BLOCKING, 0, bytes, &[])
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

    /// An image of the given shape over `buf`, which holds exactly its
    /// samples.
    pub(crate) fn from_buffer(
        buf: DeviceBuffer<T>,
        width: usize,
        height: usize,
        channels: usize,
    ) -> Result<Self> {
        let n = crate::image::check_shape(width, height, channels)?;
        if n != buf.len {
            return Err(Error::arg(format!(
                "a {width}x{height}x{channels} image does not fill a buffer of {} samples",
                buf.len
            )));
        }
        Ok(DeviceImage {
            buf,
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

    /// Uploads a borrowed view: a packed one in one write, a strided one
    /// with one `clEnqueueWriteBufferRect` straight from its rows (no host
    /// copy either way).
    pub fn upload_view(dev: &ClDevice, v: &ImageView<'_, T>) -> Result<Self> {
        let mut d = Self::new(dev, v.width(), v.height(), v.channels())?;
        let row = v.width() * v.channels();
        if v.stride() == row {
            d.buf.write(dev, &v.data()[..row * v.height()])?;
            return Ok(d);
        }
        let size = std::mem::size_of::<T>();
        let region = [row * size, v.height(), 1];
        let zero = [0usize; 3];
        // SAFETY: the transfer is blocking, so the view's slice outlives it.
        // The host region read is `height` rows of `row * size` bytes at
        // `stride * size` apart, which the view's layout check bounds by
        // its slice (`stride * (height - 1) + row <= len`); the device side
        // is the packed buffer of exactly `row * height` samples.
        unsafe {
            dev.queue.enqueue_write_buffer_rect(
                d.buf.cl_mut(),
                CL_BLOCKING,
                zero.as_ptr(),
                zero.as_ptr(),
                region.as_ptr(),
                row * size,
                0,
                v.stride() * size,
                0,
                v.data().as_ptr() as *mut std::ffi::c_void,
                &[],
            )
        }
        .map_err(|e| cl_err("clEnqueueWriteBufferRect", e))?;
        Ok(d)
    }

    /// Downloads into a borrowed view of the same shape: a packed one in
    /// one read, a strided one with one `clEnqueueReadBufferRect` straight
    /// into its rows; the padding is not written.
    pub fn read_into_view(&self, dev: &ClDevice, v: &mut ImageViewMut<'_, T>) -> Result<()> {
        self.check_shape(v.width(), v.height(), v.channels())?;
        let (row, height, stride) = (v.width() * v.channels(), v.height(), v.stride());
        let data = v.data_mut();
        if stride == row {
            self.buf.read(dev, &mut data[..row * height])?;
            return Ok(());
        }
        let size = std::mem::size_of::<T>();
        let region = [row * size, height, 1];
        let zero = [0usize; 3];
        // SAFETY: blocking read; the host region written is `height` rows
        // of `row * size` bytes at `stride * size` apart, inside the view's
        // slice by its layout check, and `T: Plain` accepts any bytes.
        unsafe {
            dev.queue.enqueue_read_buffer_rect(
                self.buf.cl(),
                CL_BLOCKING,
                zero.as_ptr(),
                zero.as_ptr(),
                region.as_ptr(),
                row * size,
                0,
                stride * size,
                0,
                data.as_mut_ptr() as *mut std::ffi::c_void,
                &[],
            )
        }
        .map_err(|e| cl_err("clEnqueueReadBufferRect", e))?;
        Ok(())
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
