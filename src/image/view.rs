//! Borrowed views over caller memory: [`ImageView`] reads a `&[T]`,
//! [`ImageViewMut`] writes a `&mut [T]`, so an application's frame buffer
//! goes through a pipeline ([`crate::Pipeline::run_into`]) without first
//! being copied into an [`Image`].
//!
//! A view is `height` rows of `width` pixels of `channels` interleaved
//! samples (1, 3 or 4), whose rows start `stride` **samples** (elements of
//! `T`, not bytes) apart; [`ImageView::with_byte_stride`] takes a stride in
//! bytes, as many frame buffers state it. The samples between a row's end
//! and the next row's start are padding: never read, never written. The
//! last row needs no padding, so the slice must hold at least
//! `stride * (height - 1) + width * channels` samples.
//!
//! Bad layouts are typed errors ([`ViewError`] inside
//! [`Error::View`]): a slice too short, a stride shorter than a row, a
//! byte stride that is not a whole number of samples, and an output whose
//! type or shape is not what the pipeline makes.
//!
//! ```
//! use clfilter::image::{ImageView, ViewError};
//! use clfilter::Error;
//!
//! // A 3x2 gray frame whose rows are padded to 4 samples.
//! let frame = [1u8, 2, 3, 0, 4, 5, 6];
//! let v = ImageView::with_stride(&frame, 3, 2, 1, 4).unwrap();
//! assert_eq!(v.row(1), &[4, 5, 6]);
//! assert_eq!(v.to_image().into_vec(), vec![1, 2, 3, 4, 5, 6]);
//!
//! let short = ImageView::with_stride(&frame[..6], 3, 2, 1, 4).unwrap_err();
//! assert!(matches!(short, Error::View(ViewError::TooShort { len: 6, need: 7 })));
//! ```
//!
//! One operation on views is a one-stage pipeline:
//! `Pipeline::builder().stage(GaussianParams::new(2.0)).build().run_into(..)`
//! (the operations' own entry points, `engine.gaussian(..)`, take images).
//!
//! An input and an output view cannot overlap: the output holds the only
//! (`&mut`) borrow of its samples, so an output that is also an input does
//! not compile; that is the type error for it.
//!
//! ```compile_fail
//! use clfilter::image::{ImageView, ImageViewMut};
//! let mut frame = vec![0u8; 16];
//! let input = ImageView::new(&frame, 4, 4, 1).unwrap();
//! let output = ImageViewMut::new(&mut frame, 4, 4, 1).unwrap(); // error[E0502]
//! drop((input, output));
//! ```

use super::{check_shape, DynImage, Image, Sample, SampleType};
use crate::error::{Error, Result};

/// Why a view's layout or type is refused (inside [`Error::View`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ViewError {
    /// The slice holds fewer samples than the shape and stride need.
    #[error("the slice holds {len} samples; the view needs {need}")]
    TooShort {
        /// Samples in the slice.
        len: usize,
        /// `stride * (height - 1) + width * channels`.
        need: usize,
    },
    /// The stride is shorter than a row.
    #[error("stride {stride} is shorter than a row of {row} samples")]
    StrideTooShort {
        /// The stride, in samples.
        stride: usize,
        /// `width * channels`.
        row: usize,
    },
    /// A byte stride that is not a whole number of samples.
    #[error("a stride of {bytes} bytes is not a whole number of {size}-byte samples")]
    StrideAlign {
        /// The stride, in bytes.
        bytes: usize,
        /// Bytes per sample.
        size: usize,
    },
    /// The shape itself is invalid (see [`Image::new`]).
    #[error("{0}")]
    Shape(String),
    /// An output view's sample type or shape is not the result's.
    #[error("the output view is {got}; the result is {want}")]
    Mismatch {
        /// The result's `WxHxC type`.
        want: String,
        /// The view's `WxHxC type`.
        got: String,
    },
}

impl From<ViewError> for Error {
    fn from(e: ViewError) -> Self {
        Error::View(e)
    }
}

/// Checks that `len` samples hold a `width x height x channels` image
/// whose rows start `stride` samples apart.
///
/// Returns the stride to keep: `stride`, but for a single row at most
/// `len`, and still more than the row when `stride` is (no row follows it,
/// so its stride only says whether the rows are padded; kept as given, a
/// stride near `usize::MAX` would overflow the byte offsets computed from
/// it).
pub(crate) fn check_layout(
    len: usize,
    width: usize,
    height: usize,
    channels: usize,
    stride: usize,
) -> std::result::Result<usize, ViewError> {
    check_shape(width, height, channels).map_err(|e| match e {
        Error::InvalidArgument(m) => ViewError::Shape(m),
        other => ViewError::Shape(other.to_string()),
    })?;
    let row = width * channels; // cannot overflow: check_shape bounded it
    if stride < row {
        return Err(ViewError::StrideTooShort { stride, row });
    }
    let need = stride
        .checked_mul(height - 1)
        .and_then(|s| s.checked_add(row))
        .unwrap_or(usize::MAX);
    if len < need {
        return Err(ViewError::TooShort { len, need });
    }
    Ok(if height == 1 && stride > len {
        len.max(row + 1)
    } else {
        stride
    })
}

/// A byte stride in samples of `T`.
fn samples_in<T>(stride_bytes: usize) -> Result<usize> {
    let size = std::mem::size_of::<T>();
    if !stride_bytes.is_multiple_of(size) {
        return Err(ViewError::StrideAlign {
            bytes: stride_bytes,
            size,
        }
        .into());
    }
    Ok(stride_bytes / size)
}

/// [`ViewError::Mismatch`] unless an output view of `got` shape and type
/// can take a result of `want` shape and type (they are equal).
fn same_layout(
    want: (usize, usize, usize),
    want_ty: SampleType,
    got: (usize, usize, usize),
    got_ty: SampleType,
) -> Result<()> {
    if (want, want_ty) == (got, got_ty) {
        return Ok(());
    }
    // `WxHxC type`.
    let describe = |(w, h, c): (usize, usize, usize), ty: SampleType| format!("{w}x{h}x{c} {ty}");
    Err(ViewError::Mismatch {
        want: describe(want, want_ty),
        got: describe(got, got_ty),
    }
    .into())
}

/// A read-only image over caller memory (see the [module docs](self)).
#[derive(Clone, Copy)]
pub struct ImageView<'a, T: Sample> {
    data: &'a [T],
    width: usize,
    height: usize,
    channels: usize,
    stride: usize,
}

/// A writable image over caller memory (see the [module docs](self)).
pub struct ImageViewMut<'a, T: Sample> {
    data: &'a mut [T],
    width: usize,
    height: usize,
    channels: usize,
    stride: usize,
}

/// What [`ImageView`] and [`ImageViewMut`] share, over `&'a [T]` or
/// `&'a mut [T]`: `Debug`, the constructors (each checked by
/// [`check_layout`]; `$byte_doc` documents `with_byte_stride`) and the
/// layout's accessors.
macro_rules! view_layout {
    ($view:ident, [$($mut:tt)?], $(#[$byte_doc:meta])*) => {
        impl<T: Sample> std::fmt::Debug for $view<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let (w, h, c) = (self.width, self.height, self.channels);
                write!(
                    f,
                    "{}<{}>({w}x{h}x{c}, stride {})",
                    stringify!($view),
                    T::TYPE,
                    self.stride
                )
            }
        }

        impl<'a, T: Sample> $view<'a, T> {
            /// A view of tightly packed rows (`stride = width * channels`).
            pub fn new(
                data: &'a $($mut)? [T],
                width: usize,
                height: usize,
                channels: usize,
            ) -> Result<Self> {
                Self::with_stride(data, width, height, channels, width.saturating_mul(channels))
            }

            /// A view whose rows start `stride` samples apart.
            pub fn with_stride(
                data: &'a $($mut)? [T],
                width: usize,
                height: usize,
                channels: usize,
                stride: usize,
            ) -> Result<Self> {
                let stride = check_layout(data.len(), width, height, channels, stride)?;
                Ok($view {
                    data,
                    width,
                    height,
                    channels,
                    stride,
                })
            }

            $(#[$byte_doc])*
            pub fn with_byte_stride(
                data: &'a $($mut)? [T],
                width: usize,
                height: usize,
                channels: usize,
                stride_bytes: usize,
            ) -> Result<Self> {
                Self::with_stride(data, width, height, channels, samples_in::<T>(stride_bytes)?)
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
            /// `(width, height, channels)`.
            pub fn shape(&self) -> (usize, usize, usize) {
                (self.width, self.height, self.channels)
            }
        }
    };
}

view_layout!(
    ImageView,
    [],
    /// A view whose rows start `stride_bytes` bytes apart (a multiple of
    /// the sample size, else [`ViewError::StrideAlign`]).
    ///
    /// ```
    /// // 2x2 RGB u16 with rows of 16 bytes (6 samples used of 8).
    /// let buf = vec![7u16; 8 + 6];
    /// let v = clfilter::image::ImageView::with_byte_stride(&buf, 2, 2, 3, 16).unwrap();
    /// assert_eq!(v.stride(), 8);
    /// assert!(clfilter::image::ImageView::with_byte_stride(&buf, 2, 2, 3, 15).is_err());
    /// ```
);
view_layout!(
    ImageViewMut,
    [mut],
    /// A view whose rows start `stride_bytes` bytes apart (see
    /// [`ImageView::with_byte_stride`]).
);

impl<'a, T: Sample> ImageView<'a, T> {
    /// The borrowed slice, padding included.
    pub fn data(&self) -> &'a [T] {
        self.data
    }

    /// Row `y` without its padding. Panics if `y >= height`.
    pub fn row(&self, y: usize) -> &'a [T] {
        let start = y * self.stride;
        &self.data[start..start + self.width * self.channels]
    }

    /// A packed copy as an owned [`Image`].
    pub fn to_image(&self) -> Image<T> {
        let data = (0..self.height)
            .flat_map(|y| self.row(y))
            .copied()
            .collect();
        Image::from_vec(self.width, self.height, self.channels, data)
            .expect("a checked view has a valid shape")
    }
}

impl<'a, T: Sample> ImageViewMut<'a, T> {
    /// The borrowed slice, padding included, for writing.
    pub fn data_mut(&mut self) -> &mut [T] {
        self.data
    }

    /// A read-only view of the same samples.
    pub fn as_view(&self) -> ImageView<'_, T> {
        ImageView {
            data: self.data,
            width: self.width,
            height: self.height,
            channels: self.channels,
            stride: self.stride,
        }
    }

    /// Row `y` without its padding, writable. Panics if `y >= height`.
    pub fn row_mut(&mut self, y: usize) -> &mut [T] {
        let start = y * self.stride;
        let len = self.width * self.channels;
        &mut self.data[start..start + len]
    }

    /// Copies `img`'s rows in ([`ViewError::Mismatch`] unless the shapes
    /// are equal); the padding is left as it was.
    pub fn copy_from(&mut self, img: &Image<T>) -> Result<()> {
        same_layout(
            (img.width(), img.height(), img.channels()),
            T::TYPE,
            self.shape(),
            T::TYPE,
        )?;
        for (y, row) in img.rows().enumerate() {
            self.row_mut(y).copy_from_slice(row);
        }
        Ok(())
    }
}

impl<T: Sample> Image<T> {
    /// A borrowed view of this image (for calls that take views).
    pub fn view(&self) -> ImageView<'_, T> {
        ImageView {
            data: self.data(),
            width: self.width(),
            height: self.height(),
            channels: self.channels(),
            stride: self.stride(),
        }
    }

    /// A borrowed writable view of this image.
    pub fn view_mut(&mut self) -> ImageViewMut<'_, T> {
        let (width, height, channels, stride) =
            (self.width(), self.height(), self.channels(), self.stride());
        ImageViewMut {
            data: &mut self.data,
            width,
            height,
            channels,
            stride,
        }
    }
}

/// A read-only view whose sample type is known at run time.
#[derive(Debug, Clone, Copy)]
pub enum DynView<'a> {
    /// 8-bit samples.
    U8(ImageView<'a, u8>),
    /// 16-bit samples.
    U16(ImageView<'a, u16>),
    /// 32-bit float samples.
    F32(ImageView<'a, f32>),
}

/// A writable view whose sample type is known at run time.
#[derive(Debug)]
pub enum DynViewMut<'a> {
    /// 8-bit samples.
    U8(ImageViewMut<'a, u8>),
    /// 16-bit samples.
    U16(ImageViewMut<'a, u16>),
    /// 32-bit float samples.
    F32(ImageViewMut<'a, f32>),
}

/// The sample type and shape of [`DynView`] and [`DynViewMut`], whose
/// variants hold a typed view each.
macro_rules! dyn_view_layout {
    ($($view:ident),*) => {$(
        impl $view<'_> {
            /// The sample type.
            pub fn sample_type(&self) -> SampleType {
                match self {
                    $view::U8(_) => SampleType::U8,
                    $view::U16(_) => SampleType::U16,
                    $view::F32(_) => SampleType::F32,
                }
            }

            /// `(width, height, channels)`.
            pub fn shape(&self) -> (usize, usize, usize) {
                match self {
                    $view::U8(v) => v.shape(),
                    $view::U16(v) => v.shape(),
                    $view::F32(v) => v.shape(),
                }
            }
        }
    )*};
}
dyn_view_layout!(DynView, DynViewMut);

impl DynView<'_> {
    /// A packed copy as an owned [`DynImage`].
    pub fn to_dyn_image(&self) -> DynImage {
        match self {
            DynView::U8(v) => v.to_image().into(),
            DynView::U16(v) => v.to_image().into(),
            DynView::F32(v) => v.to_image().into(),
        }
    }
}

impl DynViewMut<'_> {
    /// [`ViewError::Mismatch`] unless this view is a `shape` image of `ty`.
    pub fn check(&self, shape: (usize, usize, usize), ty: SampleType) -> Result<()> {
        same_layout(shape, ty, self.shape(), self.sample_type())
    }

    /// Copies `img` in ([`ViewError::Mismatch`] unless its type and shape
    /// are this view's); the padding is left as it was.
    pub fn copy_from(&mut self, img: &DynImage) -> Result<()> {
        self.check(img.shape(), img.sample_type())?;
        match (self, img) {
            (DynViewMut::U8(v), DynImage::U8(i)) => v.copy_from(i),
            (DynViewMut::U16(v), DynImage::U16(i)) => v.copy_from(i),
            (DynViewMut::F32(v), DynImage::F32(i)) => v.copy_from(i),
            _ => unreachable!("check() compared the sample types"),
        }
    }
}

macro_rules! dyn_view_from {
    ($($t:ty => $v:ident),*) => {$(
        impl<'a> From<ImageView<'a, $t>> for DynView<'a> {
            fn from(v: ImageView<'a, $t>) -> Self {
                DynView::$v(v)
            }
        }
        impl<'a> From<ImageViewMut<'a, $t>> for DynViewMut<'a> {
            fn from(v: ImageViewMut<'a, $t>) -> Self {
                DynViewMut::$v(v)
            }
        }
    )*};
}
dyn_view_from!(u8 => U8, u16 => U16, f32 => F32);

impl<'a> From<&'a DynImage> for DynView<'a> {
    fn from(img: &'a DynImage) -> Self {
        match img {
            DynImage::U8(i) => i.view().into(),
            DynImage::U16(i) => i.view().into(),
            DynImage::F32(i) => i.view().into(),
        }
    }
}
