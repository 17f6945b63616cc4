//! The reference deband: every sample computed on its own from the
//! definition (the RNG, the references and the per-plane rule of
//! [`super::math`]), converting each pixel it reads to YCbCr16 on the spot
//! in `space=ycc`. Ground truth for the CPU path, the variants and the tuner.

use super::math::{self, YccCoefficients, YCC_BOUNDS};
use super::{DebandParams, Levels, Space};
use crate::error::Result;
use crate::image::{Image, Sample};

/// `img` debanded with `p` (u8 and u16 images; see [`super`]).
pub fn deband<T: Sample>(img: &Image<T>, p: &DebandParams) -> Result<Image<T>> {
    let lv = Levels::new(p, T::TYPE, img.channels())?;
    let (w, h) = (img.width(), img.height());
    let int = |x: usize, y: usize, c: usize| img.get(x, y, c).to_f32() as i32;
    let sample = |v: i32| T::from_f32(v as f32);
    let refs_of = |x: usize, y: usize| {
        let hash = math::pixel_hash(lv.key, x, y);
        let offsets = math::offsets(hash, lv.range);
        let (refs, n) = math::references((x, y), offsets, lv.samples, (w, h));
        (hash, refs, n)
    };
    match p.space {
        Space::Rgb => Image::from_fn(w, h, img.channels(), |x, y, c| {
            if c >= lv.planes {
                return img.get(x, y, c);
            }
            let (hash, refs, n) = refs_of(x, y);
            let r: Vec<i32> = refs[..n].iter().map(|&(rx, ry)| int(rx, ry, c)).collect();
            let g = math::grain(hash, c, lv.grain);
            sample(math::rgb_sample(int(x, y, c), &r, lv.threshold, g, lv.full))
        }),
        Space::Ycc => {
            let k = YccCoefficients::new(lv.full);
            let ycc = |x: usize, y: usize| k.to_ycc([int(x, y, 0), int(x, y, 1), int(x, y, 2)]);
            Image::from_fn(w, h, img.channels(), |x, y, c| {
                if c == 3 {
                    return img.get(x, y, c);
                }
                let (hash, refs, n) = refs_of(x, y);
                let (p, r): ([i32; 3], Vec<[i32; 3]>) =
                    (ycc(x, y), refs[..n].iter().map(|&(rx, ry)| ycc(rx, ry)).collect());
                let filtered: [i32; 3] = std::array::from_fn(|plane| {
                    let rp: Vec<i32> = r.iter().map(|v| v[plane]).collect();
                    let g = math::grain(hash, plane, lv.grain);
                    math::ycc_sample(p[plane], &rp, lv.threshold, g, YCC_BOUNDS[plane])
                });
                sample(k.to_rgb(filtered, lv.full)[c])
            })
        }
    }
}
