//! Display pixels: an image as a GL texture takes it, RGBA8 or RGBA32F.
//!
//! The conversion is defined once, here, and the device's
//! `pipeline_display` kernel (cl/pipeline.cl) computes the same numbers
//! with the factors of `DisplayFormat::factors`: an integer sample is
//! rounded and saturated to its type first (as the stored image holds it),
//! then scaled to 0..255 (RGBA8, rounded half to even and saturated, NaN
//! as 0) or to 0..1 of full scale (RGBA32F, f32 samples as they are). Gray
//! is repeated into R, G and B; RGB gets an opaque alpha; RGBA keeps its
//! own.

use super::{DynImage, Image, Sample, SampleType};
use crate::error::Result;

/// The texture formats a pipeline can feed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DisplayFormat {
    /// 8-bit RGBA (`GL_RGBA8`): 0..255, 4 bytes a pixel.
    Rgba8,
    /// f32 RGBA (`GL_RGBA32F`): 0..1 of full scale, 16 bytes a pixel.
    Rgba32F,
}

impl DisplayFormat {
    /// For samples of type `ty`: the saturation bound (`hi`, the type's
    /// full scale, or +inf for f32, which is not saturated), the factor
    /// from the sample's units to the display's (`mul`), and the display's
    /// opaque alpha. Computed in f32 on the host for both paths, so the
    /// device multiplies by the very same factor.
    pub(crate) fn factors(self, ty: SampleType) -> (f32, f32, f32) {
        let hi = match ty {
            SampleType::F32 => f32::INFINITY,
            t => t.full_scale(),
        };
        let full = ty.full_scale();
        match self {
            DisplayFormat::Rgba8 => (hi, 255.0 / full, 255.0),
            DisplayFormat::Rgba32F => (hi, 1.0 / full, 1.0),
        }
    }
}

/// One frame of display pixels: a 4-channel image, first row at the top.
#[derive(Debug, Clone, PartialEq)]
pub enum DisplayFrame {
    /// RGBA8 pixels.
    Rgba8(Image<u8>),
    /// RGBA32F pixels.
    Rgba32F(Image<f32>),
}

impl DisplayFrame {
    /// Its format.
    pub fn format(&self) -> DisplayFormat {
        match self {
            DisplayFrame::Rgba8(_) => DisplayFormat::Rgba8,
            DisplayFrame::Rgba32F(_) => DisplayFormat::Rgba32F,
        }
    }

    /// Width and height in pixels.
    pub fn size(&self) -> (usize, usize) {
        match self {
            DisplayFrame::Rgba8(i) => (i.width(), i.height()),
            DisplayFrame::Rgba32F(i) => (i.width(), i.height()),
        }
    }

    /// Converts an image ([`to_display`]).
    pub fn from_image(img: &DynImage, format: DisplayFormat) -> Result<Self> {
        to_display(img, format)
    }
}

/// One sample in display units (see the module docs).
fn sample(v: f32, (hi, mul, _): (f32, f32, f32)) -> f32 {
    let v = if hi.is_finite() {
        v.clamp(0.0, hi).round_ties_even()
    } else {
        v
    };
    v * mul
}

/// `img` as display pixels (see the module docs).
pub fn to_display(img: &DynImage, format: DisplayFormat) -> Result<DisplayFrame> {
    fn convert<T: Sample, U: Sample>(
        img: &Image<T>,
        f: (f32, f32, f32),
        out: impl Fn(f32) -> U,
    ) -> Result<Image<U>> {
        let (w, h, ch) = (img.width(), img.height(), img.channels());
        let opaque = out(f.2);
        let mut data = Vec::with_capacity(w * h * 4);
        for row in img.rows() {
            for px in row.chunks_exact(ch) {
                let s = |c: usize| out(sample(px[c].to_f32(), f));
                match ch {
                    1 => {
                        let g = s(0);
                        data.extend_from_slice(&[g, g, g, opaque]);
                    }
                    3 => data.extend_from_slice(&[s(0), s(1), s(2), opaque]),
                    _ => data.extend_from_slice(&[s(0), s(1), s(2), s(3)]),
                }
            }
        }
        Image::from_vec(w, h, 4, data)
    }
    // `as u8` saturates and maps NaN to 0, as convert_uchar_sat_rte does.
    let byte = |v: f32| v.round_ties_even() as u8;
    let float = |v: f32| v;
    let f = format.factors(img.sample_type());
    Ok(match (img, format) {
        (DynImage::U8(i), DisplayFormat::Rgba8) => DisplayFrame::Rgba8(convert(i, f, byte)?),
        (DynImage::U16(i), DisplayFormat::Rgba8) => DisplayFrame::Rgba8(convert(i, f, byte)?),
        (DynImage::F32(i), DisplayFormat::Rgba8) => DisplayFrame::Rgba8(convert(i, f, byte)?),
        (DynImage::U8(i), DisplayFormat::Rgba32F) => DisplayFrame::Rgba32F(convert(i, f, float)?),
        (DynImage::U16(i), DisplayFormat::Rgba32F) => DisplayFrame::Rgba32F(convert(i, f, float)?),
        (DynImage::F32(i), DisplayFormat::Rgba32F) => DisplayFrame::Rgba32F(convert(i, f, float)?),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_sample_type_and_channel_count_becomes_rgba() {
        let gray = Image::<u16>::from_vec(3, 1, 1, vec![0, 65535, 385]).unwrap();
        let DisplayFrame::Rgba8(g) = to_display(&gray.into(), DisplayFormat::Rgba8).unwrap() else {
            panic!("RGBA8 asked")
        };
        // 385 / 257 = 1.498: rounds to 1.
        assert_eq!(
            g.packed_samples().as_ref(),
            &[0, 0, 0, 255, 255, 255, 255, 255, 1, 1, 1, 255]
        );
        let rgb = Image::<f32>::from_vec(1, 1, 3, vec![0.5, f32::NAN, 2.0]).unwrap();
        let DisplayFrame::Rgba8(c) = to_display(&rgb.clone().into(), DisplayFormat::Rgba8).unwrap()
        else {
            panic!("RGBA8 asked")
        };
        // 127.5 rounds to even; NaN is 0; 2.0 saturates.
        assert_eq!(c.packed_samples().as_ref(), &[128, 0, 255, 255]);
        let DisplayFrame::Rgba32F(f) = to_display(&rgb.into(), DisplayFormat::Rgba32F).unwrap()
        else {
            panic!("RGBA32F asked")
        };
        let f = f.packed_samples();
        assert_eq!((f[0], f[2], f[3]), (0.5, 2.0, 1.0));
        assert!(f[1].is_nan());
        let rgba = Image::<u8>::from_vec(1, 1, 4, vec![10, 20, 30, 40]).unwrap();
        let DisplayFrame::Rgba32F(a) = to_display(&rgba.into(), DisplayFormat::Rgba32F).unwrap()
        else {
            panic!("RGBA32F asked")
        };
        assert_eq!(a.packed_samples()[3], 40.0 * (1.0 / 255.0));
    }
}
