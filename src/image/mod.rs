//! Host images: [`Image<T>`] buffers with 1, 3 or 4 channels and a row stride,
//! [`DynImage`] for files whose sample type is known only at run time,
//! loading ([`load`], with integrity checks and a memory limit,
//! [`DecodeLimits`]) and saving, headerless raw camera frames ([`raw`]), DNG
//! raw files (`dng`; loading, saving and DNG need the `formats` feature), and
//! the NaN and infinity policy ([`finite`]), display pixels for GL
//! textures ([`display`]), and borrowed views over caller memory
//! ([`view`]: [`ImageView`], [`ImageViewMut`]). Files are written through
//! [`output::OutputFile`], so a failed write leaves the old file or nothing.
//! A dropped large image's buffer is kept for the next output of its size
//! ([`recycle`]).
//!
//! Loading and saving (the formats are [`load`]'s and [`save`]'s):
//!
//! ```
//! use clfilter::image::{load, save};
//! use clfilter::{DynImage, Image};
//!
//! let dir = std::env::temp_dir().join(format!("clfilter-doc-{}", std::process::id()));
//! std::fs::create_dir_all(&dir)?;
//! let path = dir.join("ramp.png");
//! let img = Image::<u16>::from_fn(5, 3, 3, |x, y, c| (x * 1000 + y * 100 + c) as u16)?;
//! save(&DynImage::from(img.clone()), &path)?;
//! assert_eq!(load(&path)?, DynImage::U16(img)); // 16-bit PNG, exact
//! std::fs::remove_dir_all(&dir)?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

pub mod bayer;
mod convert;
pub(crate) mod decode;
pub mod display;
#[cfg(feature = "formats")]
pub mod dng;
#[cfg(feature = "formats")]
mod encode;
pub mod finite;
mod format;
mod io;
#[cfg(feature = "formats")]
mod orient;
pub mod output;
mod pixel;
pub mod raw;
pub mod recycle;
pub mod temporaries;
pub mod view;

pub use decode::{load, load_with, load_with_metadata, read_from, DecodeLimits, Metadata};
pub use finite::NonFinite;
pub use format::OutputFormat;
pub use io::{save, save_with, write_to, SaveOptions};
pub use pixel::{Sample, SampleType};
pub use view::{DynView, DynViewMut, ImageView, ImageViewMut, ViewError};

use crate::error::{Error, Result};

/// A host image: `height` rows of `width` pixels of `channels` interleaved samples.
///
/// Rows start `stride` samples apart (`stride >= width * channels`); the
/// samples between the end of a row and the next row's start are padding and
/// are never read. Channels are 1 (gray), 3 (RGB) or 4 (RGBA).
///
/// Dropping an image of 4 MiB or more keeps its buffer for the next CPU
/// output of about its size, within a bound ([`recycle`]).
#[derive(Clone, PartialEq)]
pub struct Image<T: Sample> {
    width: usize,
    height: usize,
    channels: usize,
    stride: usize,
    data: Vec<T>,
}

impl<T: Sample> std::fmt::Debug for Image<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Image<{}>({}x{}x{}, stride {})",
            T::TYPE,
            self.width,
            self.height,
            self.channels,
            self.stride
        )
    }
}

/// Checks a shape; every constructor goes through here.
pub fn check_shape(width: usize, height: usize, channels: usize) -> Result<usize> {
    if !matches!(channels, 1 | 3 | 4) {
        return Err(Error::arg(format!(
            "images have 1, 3 or 4 channels, not {channels}"
        )));
    }
    if width == 0 || height == 0 {
        return Err(Error::arg(format!(
            "image size {width}x{height} is empty; both sides must be at least 1"
        )));
    }
    // Kernels index with 32-bit ints, so every dimension and the sample count must fit.
    let samples = width
        .checked_mul(height)
        .and_then(|p| p.checked_mul(channels))
        .filter(|&n| n <= i32::MAX as usize)
        .ok_or_else(|| {
            Error::arg(format!(
                "image size {width}x{height}x{channels} exceeds 2^31 samples"
            ))
        })?;
    Ok(samples)
}

/// `n` zero samples, or [`Error::OutOfMemory`] where the system refuses
/// the memory. `vec!` takes zeroed memory from the allocator (fresh pages
/// are not written) but aborts on failure, so a fallible reservation of the
/// same size asks first and is handed back (trying again once after the
/// kept buffers of [`recycle`] are freed).
fn zeroed<T: Sample>(n: usize) -> Result<Vec<T>> {
    let reserve = || Vec::<T>::new().try_reserve_exact(n);
    reserve()
        .or_else(|_| {
            recycle::release();
            reserve()
        })
        .map_err(|_| Error::OutOfMemory {
            what: format!("an image of {n} samples"),
            bytes: (n as u64).saturating_mul(std::mem::size_of::<T>() as u64),
        })?;
    Ok(vec![T::default(); n])
}

impl<T: Sample> Image<T> {
    /// A zero-filled, tightly packed image; [`crate::Error::OutOfMemory`]
    /// where the system refuses its memory.
    pub fn new(width: usize, height: usize, channels: usize) -> Result<Self> {
        let n = check_shape(width, height, channels)?;
        Ok(Image {
            width,
            height,
            channels,
            stride: width * channels,
            data: zeroed(n)?,
        })
    }

    /// Wraps tightly packed samples; `data.len()` must be `width * height *
    /// channels` (more is an error too: a wrong width or channel count
    /// would otherwise give a misaligned image).
    pub fn from_vec(width: usize, height: usize, channels: usize, data: Vec<T>) -> Result<Self> {
        let n = check_shape(width, height, channels)?;
        if data.len() > n {
            return Err(Error::arg(format!(
                "{} samples for a {width}x{height} image of {channels} channel(s), which holds {n}",
                data.len()
            )));
        }
        Self::from_vec_with_stride(width, height, channels, width * channels, data)
    }

    /// Wraps samples whose rows start `stride` samples apart. The last row may
    /// omit its padding, so `data.len()` must be at least `stride * (height - 1) + width * channels`.
    /// A single row's stride past `data.len()` is kept as a smaller one (no
    /// row follows it; the image stays padded).
    pub fn from_vec_with_stride(
        width: usize,
        height: usize,
        channels: usize,
        stride: usize,
        data: Vec<T>,
    ) -> Result<Self> {
        let stride = view::check_layout(data.len(), width, height, channels, stride)
            .map_err(|e| Error::arg(e.to_string()))?;
        Ok(Image {
            width,
            height,
            channels,
            stride,
            data,
        })
    }

    /// An image whose sample at (x, y, c) is `f(x, y, c)`.
    pub fn from_fn(
        width: usize,
        height: usize,
        channels: usize,
        mut f: impl FnMut(usize, usize, usize) -> T,
    ) -> Result<Self> {
        let mut img = Self::new(width, height, channels)?;
        for y in 0..height {
            let row = img.row_mut(y);
            for x in 0..width {
                for c in 0..channels {
                    row[x * channels + c] = f(x, y, c);
                }
            }
        }
        Ok(img)
    }

    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.width
    }
    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.height
    }
    /// Samples per pixel: 1, 3 or 4.
    pub fn channels(&self) -> usize {
        self.channels
    }
    /// Distance between row starts, in samples.
    pub fn stride(&self) -> usize {
        self.stride
    }
    /// Number of pixels.
    pub fn pixel_count(&self) -> usize {
        self.width * self.height
    }
    /// Samples in one row, without padding.
    pub fn row_len(&self) -> usize {
        self.width * self.channels
    }
    /// Whether rows follow each other without padding.
    pub fn is_packed(&self) -> bool {
        self.stride == self.row_len()
    }

    /// Row `y` without its padding. Panics if `y >= height`.
    pub fn row(&self, y: usize) -> &[T] {
        let start = y * self.stride;
        &self.data[start..start + self.row_len()]
    }

    /// Row `y` without its padding, mutable. Panics if `y >= height`.
    pub fn row_mut(&mut self, y: usize) -> &mut [T] {
        let start = y * self.stride;
        let len = self.row_len();
        &mut self.data[start..start + len]
    }

    /// Iterates over the rows, without padding.
    pub fn rows(&self) -> impl Iterator<Item = &[T]> + '_ {
        (0..self.height).map(move |y| self.row(y))
    }

    /// Sample `c` of pixel (x, y). Panics when out of range.
    pub fn get(&self, x: usize, y: usize, c: usize) -> T {
        assert!(x < self.width && c < self.channels);
        self.row(y)[x * self.channels + c]
    }

    /// The samples as one packed slice, or `None` when rows are padded.
    pub fn as_packed(&self) -> Option<&[T]> {
        self.is_packed()
            .then(|| &self.data[..self.row_len() * self.height])
    }

    /// The samples as one packed mutable slice, or `None` when rows are padded.
    pub fn as_packed_mut(&mut self) -> Option<&mut [T]> {
        let n = self.row_len() * self.height;
        if self.is_packed() {
            Some(&mut self.data[..n])
        } else {
            None
        }
    }

    /// The raw buffer, padding included.
    pub fn data(&self) -> &[T] {
        &self.data
    }

    /// The samples, packed: borrowed when already packed, copied otherwise.
    pub fn packed_samples(&self) -> std::borrow::Cow<'_, [T]> {
        match self.as_packed() {
            Some(s) => std::borrow::Cow::Borrowed(s),
            None => std::borrow::Cow::Owned(self.rows().flatten().copied().collect()),
        }
    }

    /// A packed copy (or this image, if already packed).
    pub fn into_packed(self) -> Self {
        if self.is_packed() {
            return self;
        }
        Image {
            width: self.width,
            height: self.height,
            channels: self.channels,
            stride: self.row_len(),
            data: self.packed_samples().into_owned(),
        }
    }

    /// Unwraps the packed samples (a vector with no spare room beyond
    /// an eighth of its length).
    pub fn into_vec(self) -> Vec<T> {
        let n = self.row_len() * self.height;
        let mut v = std::mem::take(&mut self.into_packed().data);
        v.truncate(n);
        // A reused output buffer (`recycle`) may be up to a quarter larger
        // than the image; callers keeping the vector get the room back.
        if v.capacity() - n > n / 8 {
            v.shrink_to_fit();
        }
        v
    }
}

impl<T: Sample> Drop for Image<T> {
    /// Keeps a large buffer for the next output of its size ([`recycle`]).
    fn drop(&mut self) {
        recycle::give(std::mem::take(&mut self.data));
    }
}

/// An image whose sample type is decided at run time, as when loading files.
#[derive(Debug, Clone, PartialEq)]
pub enum DynImage {
    /// 8-bit samples.
    U8(Image<u8>),
    /// 16-bit samples.
    U16(Image<u16>),
    /// 32-bit float samples.
    F32(Image<f32>),
}

impl DynImage {
    /// The sample type.
    pub fn sample_type(&self) -> SampleType {
        match self {
            DynImage::U8(_) => SampleType::U8,
            DynImage::U16(_) => SampleType::U16,
            DynImage::F32(_) => SampleType::F32,
        }
    }
    /// `(width, height, channels)`.
    pub fn shape(&self) -> (usize, usize, usize) {
        match self {
            DynImage::U8(i) => (i.width(), i.height(), i.channels()),
            DynImage::U16(i) => (i.width(), i.height(), i.channels()),
            DynImage::F32(i) => (i.width(), i.height(), i.channels()),
        }
    }

    /// The packed samples as bytes in native byte order (what raw frame
    /// outputs write).
    pub fn to_ne_bytes(&self) -> Vec<u8> {
        match self {
            DynImage::U8(i) => i.packed_samples().into_owned(),
            DynImage::U16(i) => i.rows().flatten().flat_map(|v| v.to_ne_bytes()).collect(),
            DynImage::F32(i) => i.rows().flatten().flat_map(|v| v.to_ne_bytes()).collect(),
        }
    }
}

impl From<Image<u8>> for DynImage {
    fn from(i: Image<u8>) -> Self {
        DynImage::U8(i)
    }
}
impl From<Image<u16>> for DynImage {
    fn from(i: Image<u16>) -> Self {
        DynImage::U16(i)
    }
}
impl From<Image<f32>> for DynImage {
    fn from(i: Image<f32>) -> Self {
        DynImage::F32(i)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_checked() {
        assert!(Image::<u8>::new(0, 5, 1).is_err());
        assert!(Image::<u8>::new(5, 5, 2).is_err());
        assert!(Image::<u8>::new(1 << 20, 1 << 20, 1).is_err());
        assert!(Image::<u8>::from_vec(3, 2, 1, vec![0; 5]).is_err());
        assert!(Image::<u8>::from_vec_with_stride(3, 2, 1, 2, vec![0; 6]).is_err());
    }

    #[test]
    fn strided_rows_skip_padding() {
        // 2x2 gray, stride 3, last row without padding.
        let img = Image::<u16>::from_vec_with_stride(2, 2, 1, 3, vec![1, 2, 99, 3, 4]).unwrap();
        assert_eq!(img.row(1), &[3, 4]);
        assert!(img.as_packed().is_none());
        assert_eq!(img.clone().into_vec(), vec![1, 2, 3, 4]);
        assert_eq!(img.packed_samples().as_ref(), &[1, 2, 3, 4]);
    }
}
