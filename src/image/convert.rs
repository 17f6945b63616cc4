//! Conversions between our images and the `image` crate's: [`Image`] and
//! `image::ImageBuffer`, [`DynImage`] and `image::DynamicImage`.
//!
//! Taking an image by value moves its sample buffer when the layout allows:
//! an `ImageBuffer`'s `Vec` becomes the [`Image`]'s, and a packed
//! [`Image`]'s `Vec` the `ImageBuffer`'s (a padded one is packed first, a
//! copy). What the other side cannot hold is an error: an empty
//! `ImageBuffer` or a 2-channel one (gray+alpha) as an [`Image`], an
//! [`Image`] whose channel count is not the pixel type's, and gray f32 as a
//! `DynamicImage` (which has no such variant). A `DynamicImage` with
//! gray+alpha becomes RGBA (a copy), as loading does.

use ::image::{DynamicImage, ImageBuffer, Pixel, Rgb32FImage, Rgba32FImage};

use super::{DynImage, Image, Sample};
use crate::error::{Error, Result};

impl<P> TryFrom<ImageBuffer<P, Vec<P::Subpixel>>> for Image<P::Subpixel>
where
    P: Pixel,
    P::Subpixel: Sample,
{
    type Error = Error;

    /// Takes the buffer's samples without a copy; fails for an empty
    /// buffer or 2-channel pixels.
    ///
    /// ```
    /// use clfilter::Image;
    ///
    /// let buf = image::RgbImage::from_pixel(3, 2, image::Rgb([1, 2, 3]));
    /// let img = Image::<u8>::try_from(buf)?;
    /// assert_eq!((img.width(), img.height(), img.channels()), (3, 2, 3));
    /// assert_eq!(img.get(2, 1, 2), 3);
    /// assert!(Image::<u8>::try_from(image::GrayAlphaImage::new(2, 2)).is_err());
    /// // A longer container: the rest is not part of the image.
    /// let long = image::GrayImage::from_raw(2, 2, vec![7; 5]).unwrap();
    /// assert_eq!(Image::<u8>::try_from(long)?.row(1), [7, 7]);
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn try_from(buf: ImageBuffer<P, Vec<P::Subpixel>>) -> Result<Self> {
        let (w, h, c) = (
            buf.width() as usize,
            buf.height() as usize,
            usize::from(P::CHANNEL_COUNT),
        );
        let mut data = buf.into_raw();
        // `ImageBuffer::from_raw` takes a longer container and ignores the
        // rest, which `Image::from_vec` would refuse.
        data.truncate(w.saturating_mul(h).saturating_mul(c));
        Image::from_vec(w, h, c, data)
    }
}

impl<P> TryFrom<Image<P::Subpixel>> for ImageBuffer<P, Vec<P::Subpixel>>
where
    P: Pixel,
    P::Subpixel: Sample,
{
    type Error = Error;

    /// Moves a packed image's samples (a padded image is packed first);
    /// fails when the channel count is not the pixel type's.
    ///
    /// ```
    /// use clfilter::Image;
    ///
    /// let img = Image::<u16>::from_fn(4, 3, 1, |x, y, _| (x * 100 + y) as u16)?;
    /// let buf = image::ImageBuffer::<image::Luma<u16>, _>::try_from(img)?;
    /// assert_eq!(buf.get_pixel(3, 2).0, [302]);
    /// let rgb = Image::<u8>::new(2, 2, 3)?;
    /// assert!(image::GrayImage::try_from(rgb).is_err());
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn try_from(img: Image<P::Subpixel>) -> Result<Self> {
        if img.channels() != usize::from(P::CHANNEL_COUNT) {
            return Err(Error::arg(format!(
                "an image of {} channels is not an ImageBuffer of {}-channel pixels",
                img.channels(),
                P::CHANNEL_COUNT
            )));
        }
        let (w, h) = (img.width() as u32, img.height() as u32);
        Ok(ImageBuffer::from_raw(w, h, img.into_vec())
            .expect("a packed image has width x height x channels samples"))
    }
}

impl TryFrom<DynamicImage> for DynImage {
    type Error = Error;

    /// Moves the samples (gray+alpha is copied into RGBA); fails for an
    /// empty image.
    ///
    /// ```
    /// use clfilter::{DynImage, SampleType};
    ///
    /// let d = image::DynamicImage::new_rgba16(5, 4);
    /// let img = DynImage::try_from(d)?;
    /// assert_eq!((img.shape(), img.sample_type()), ((5, 4, 4), SampleType::U16));
    /// let la = DynImage::try_from(image::DynamicImage::new_luma_a8(2, 2))?;
    /// assert_eq!(la.shape(), (2, 2, 4));
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn try_from(d: DynamicImage) -> Result<Self> {
        Ok(match d {
            DynamicImage::ImageLuma8(i) => DynImage::U8(i.try_into()?),
            DynamicImage::ImageRgb8(i) => DynImage::U8(i.try_into()?),
            DynamicImage::ImageRgba8(i) => DynImage::U8(i.try_into()?),
            DynamicImage::ImageLumaA8(_) => DynImage::U8(d.into_rgba8().try_into()?),
            DynamicImage::ImageLuma16(i) => DynImage::U16(i.try_into()?),
            DynamicImage::ImageRgb16(i) => DynImage::U16(i.try_into()?),
            DynamicImage::ImageRgba16(i) => DynImage::U16(i.try_into()?),
            DynamicImage::ImageLumaA16(_) => DynImage::U16(d.into_rgba16().try_into()?),
            DynamicImage::ImageRgb32F(i) => DynImage::F32(i.try_into()?),
            DynamicImage::ImageRgba32F(i) => DynImage::F32(i.try_into()?),
            other => {
                return Err(Error::arg(format!(
                    "unsupported pixel layout {:?}",
                    other.color()
                )))
            }
        })
    }
}

impl TryFrom<DynImage> for DynamicImage {
    type Error = Error;

    /// Moves the samples of a packed image; fails for gray f32, which
    /// `DynamicImage` cannot hold.
    ///
    /// ```
    /// use clfilter::{DynImage, Image};
    ///
    /// let img = DynImage::U8(Image::from_vec(2, 1, 3, vec![1, 2, 3, 4, 5, 6])?);
    /// let d = image::DynamicImage::try_from(img)?;
    /// assert_eq!(d.as_rgb8().unwrap().get_pixel(1, 0).0, [4, 5, 6]);
    /// let gray_f32 = DynImage::F32(Image::new(2, 2, 1)?);
    /// assert!(image::DynamicImage::try_from(gray_f32).is_err());
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn try_from(img: DynImage) -> Result<Self> {
        Ok(match img {
            DynImage::U8(i) => match i.channels() {
                1 => DynamicImage::ImageLuma8(i.try_into()?),
                3 => DynamicImage::ImageRgb8(i.try_into()?),
                _ => DynamicImage::ImageRgba8(i.try_into()?),
            },
            DynImage::U16(i) => match i.channels() {
                1 => DynamicImage::ImageLuma16(i.try_into()?),
                3 => DynamicImage::ImageRgb16(i.try_into()?),
                _ => DynamicImage::ImageRgba16(i.try_into()?),
            },
            DynImage::F32(i) => match i.channels() {
                1 => {
                    return Err(Error::arg(
                        "image::DynamicImage has no gray f32 variant; \
                         use ImageBuffer<Luma<f32>, _> (or convert to RGB)",
                    ))
                }
                3 => DynamicImage::ImageRgb32F(Rgb32FImage::try_from(i)?),
                _ => DynamicImage::ImageRgba32F(Rgba32FImage::try_from(i)?),
            },
        })
    }
}

impl TryFrom<&DynImage> for DynamicImage {
    type Error = Error;

    /// As from a [`DynImage`], with the samples copied.
    ///
    /// ```
    /// use clfilter::{DynImage, Image};
    ///
    /// let img = DynImage::U16(Image::new(3, 3, 4)?);
    /// let d = image::DynamicImage::try_from(&img)?;
    /// assert_eq!((d.width(), d.height(), d.color()), (3, 3, image::ColorType::Rgba16));
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn try_from(img: &DynImage) -> Result<Self> {
        DynamicImage::try_from(img.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ::image::{Luma, LumaA, Rgb, Rgba};

    #[test]
    fn buffers_move_without_a_copy() {
        let buf =
            ImageBuffer::<Rgba<u16>, _>::from_fn(5, 3, |x, y| Rgba([x as u16, y as u16, 7, 9]));
        let ptr = buf.as_raw().as_ptr();
        let img = Image::<u16>::try_from(buf).unwrap();
        assert_eq!(
            img.data().as_ptr(),
            ptr,
            "ImageBuffer -> Image moves the Vec"
        );
        assert_eq!(img.get(4, 2, 0), 4);
        let back = ImageBuffer::<Rgba<u16>, Vec<u16>>::try_from(img).unwrap();
        assert_eq!(
            back.as_raw().as_ptr(),
            ptr,
            "Image -> ImageBuffer moves it back"
        );
        let d = DynImage::try_from(DynamicImage::ImageRgba16(back)).unwrap();
        let DynImage::U16(ref i) = d else { panic!() };
        assert_eq!(i.data().as_ptr(), ptr, "DynamicImage -> DynImage moves it");
        let DynamicImage::ImageRgba16(b) = DynamicImage::try_from(d).unwrap() else {
            panic!()
        };
        assert_eq!(
            b.as_raw().as_ptr(),
            ptr,
            "DynImage -> DynamicImage moves it"
        );
    }

    #[test]
    fn padded_images_are_packed_and_mismatches_refused() {
        // 2x2 gray, stride 3.
        let img = Image::<u8>::from_vec_with_stride(2, 2, 1, 3, vec![1, 2, 99, 3, 4]).unwrap();
        let buf = ImageBuffer::<Luma<u8>, Vec<u8>>::try_from(img.clone()).unwrap();
        assert_eq!(buf.into_raw(), vec![1, 2, 3, 4]);
        assert!(ImageBuffer::<Rgb<u8>, Vec<u8>>::try_from(img).is_err());
        assert!(Image::<u8>::try_from(ImageBuffer::<LumaA<u8>, _>::new(2, 2)).is_err());
        assert!(Image::<f32>::try_from(ImageBuffer::<Rgba<f32>, _>::new(0, 2)).is_err());
        for d in [
            DynamicImage::new_luma8(3, 1),
            DynamicImage::new_rgb8(1, 3),
            DynamicImage::new_luma16(2, 2),
            DynamicImage::new_rgb32f(3, 2),
            DynamicImage::new_rgba32f(1, 1),
        ] {
            let color = d.color();
            let back = DynamicImage::try_from(DynImage::try_from(d.clone()).unwrap()).unwrap();
            assert_eq!(back, d, "{color:?} round trip");
        }
    }
}
