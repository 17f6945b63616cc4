//! The rayon deband: output rows in parallel. `space=rgb` reads the input
//! rows directly (a const channel count, so the per-sample indexing folds);
//! `space=ycc` first converts the image to three YCbCr16 planes (SoA, the
//! layout that suits a CPU's caches), then filters and converts back row by
//! row. The arithmetic is [`super::math`]'s, so the result is the
//! reference's, bit for bit.

use rayon::prelude::*;

use super::math::{self, YccCoefficients, YCC_BOUNDS};
use std::any::Any;

use super::{DebandParams, Levels, Space};
use crate::error::{Error, Result};
use crate::image::{Image, Sample};

/// `img` debanded with `p` on the host's cores.
pub fn deband<T: Sample>(img: &Image<T>, p: &DebandParams) -> Result<Image<T>> {
    let lv = Levels::new(p, T::TYPE, img.channels())?;
    // The paths work on the concrete integer types: converting through f32
    // (`Sample`'s only conversions) cost a third of the time.
    let any = img as &dyn Any;
    if let Some(i) = any.downcast_ref::<Image<u8>>() {
        return same_type(run(i, p.space, &lv)?);
    }
    if let Some(i) = any.downcast_ref::<Image<u16>>() {
        return same_type(run(i, p.space, &lv)?);
    }
    Err(super::f32_refused())
}

/// The result as the caller's `Image<T>` (it is one: `T` was downcast).
fn same_type<T: Sample, U: Sample>(img: Image<U>) -> Result<Image<T>> {
    (Box::new(img) as Box<dyn Any>)
        .downcast::<Image<T>>()
        .map(|b| *b)
        .map_err(|_| Error::arg("deband's result changed its sample type"))
}

/// u8 and u16 samples as the integers the arithmetic uses.
trait Int: Sample {
    fn int(self) -> i32;
    /// `v` is in the type's range (every result is saturated before).
    fn from_int(v: i32) -> Self;
}

impl Int for u8 {
    #[inline]
    fn int(self) -> i32 {
        i32::from(self)
    }
    #[inline]
    fn from_int(v: i32) -> Self {
        v as u8
    }
}

impl Int for u16 {
    #[inline]
    fn int(self) -> i32 {
        i32::from(self)
    }
    #[inline]
    fn from_int(v: i32) -> Self {
        v as u16
    }
}

fn run<T: Int>(img: &Image<T>, space: Space, lv: &Levels) -> Result<Image<T>> {
    match (space, img.channels()) {
        (Space::Ycc, _) => ycc(img, lv),
        (Space::Rgb, 1) => rgb::<T, 1>(img, lv),
        (Space::Rgb, 3) => rgb::<T, 3>(img, lv),
        (Space::Rgb, _) => rgb::<T, 4>(img, lv),
    }
}

fn rgb<T: Int, const C: usize>(img: &Image<T>, lv: &Levels) -> Result<Image<T>> {
    let (w, h) = (img.width(), img.height());
    let mut out = Image::<T>::new(w, h, C)?;
    let planes = lv.planes;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(w * C)
        .enumerate()
        .for_each(|(y, dst)| {
            let src = img.row(y);
            let mut r = [0i32; 4];
            for x in 0..w {
                let hash = math::pixel_hash(lv.key, x, y);
                let offsets = math::offsets(hash, lv.range);
                let (refs, n) = math::references((x, y), offsets, lv.samples, (w, h));
                for c in 0..C {
                    let i = x * C + c;
                    if c >= planes {
                        dst[i] = src[i];
                        continue;
                    }
                    for (v, &(rx, ry)) in r.iter_mut().zip(&refs[..n]) {
                        *v = img.row(ry)[rx * C + c].int();
                    }
                    let g = math::grain(hash, c, lv.grain);
                    let v = math::rgb_sample(src[i].int(), &r[..n], lv.threshold, g, lv.full);
                    dst[i] = T::from_int(v);
                }
            }
        });
    Ok(out)
}

fn ycc<T: Int>(img: &Image<T>, lv: &Levels) -> Result<Image<T>> {
    let (w, h, ch) = (img.width(), img.height(), img.channels());
    let k = YccCoefficients::new(lv.full);
    // Three planes of i16, as the device's SoA variant keeps them.
    let mut planes = vec![0i16; 3 * w * h];
    let (py, rest) = planes.split_at_mut(w * h);
    let (pb, pr) = rest.split_at_mut(w * h);
    py.par_chunks_mut(w)
        .zip(pb.par_chunks_mut(w))
        .zip(pr.par_chunks_mut(w))
        .enumerate()
        .for_each(|(y, ((ry, rb), rr))| {
            for (x, px) in img.row(y).chunks_exact(ch).enumerate() {
                let [vy, vb, vr] = k.to_ycc([px[0].int(), px[1].int(), px[2].int()]);
                // In range by construction: |Cb|, |Cr| <= 16320, Y <= 32640.
                (ry[x], rb[x], rr[x]) = (vy as i16, vb as i16, vr as i16);
            }
        });
    let planes = [&planes[..w * h], &planes[w * h..2 * w * h], &planes[2 * w * h..]];
    let mut out = Image::<T>::new(w, h, ch)?;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(w * ch)
        .enumerate()
        .for_each(|(y, dst)| {
            let src = img.row(y);
            let mut r = [0i32; 4];
            for x in 0..w {
                let hash = math::pixel_hash(lv.key, x, y);
                let offsets = math::offsets(hash, lv.range);
                let (refs, n) = math::references((x, y), offsets, lv.samples, (w, h));
                let filtered: [i32; 3] = std::array::from_fn(|c| {
                    let plane = planes[c];
                    for (v, &(rx, ry)) in r.iter_mut().zip(&refs[..n]) {
                        *v = i32::from(plane[ry * w + rx]);
                    }
                    let p = i32::from(plane[y * w + x]);
                    let g = math::grain(hash, c, lv.grain);
                    math::ycc_sample(p, &r[..n], lv.threshold, g, YCC_BOUNDS[c])
                });
                let rgb = k.to_rgb(filtered, lv.full);
                for c in 0..3 {
                    dst[x * ch + c] = T::from_int(rgb[c]);
                }
                if ch == 4 {
                    dst[x * ch + 3] = src[x * ch + 3];
                }
            }
        });
    Ok(out)
}
