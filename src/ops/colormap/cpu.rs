//! The rayon colormap: rows in parallel, the kernels' f32 arithmetic.
//! u8 inputs, and u16 inputs with at least [`LUT_PIXELS_PER_ENTRY`]
//! pixels per value, go through a table of every input value's output
//! pixel, made with that same arithmetic, so the output is the same bit
//! for bit.

use rayon::prelude::*;

use super::{ColormapParams, Mapping};
use crate::error::Result;
use crate::image::{Image, Sample, SampleType};
use crate::ops::pixel_stage::cpu::fill_rows;
use crate::simd::mem::{self, Filler};

/// A u16 image takes the table of its 65536 values' pixels when it has at
/// least this many pixels per value (building the table then costs little
/// next to the pass).
pub const LUT_PIXELS_PER_ENTRY: usize = 8;

/// The colour (RGBA, 0..1) at `t` in 0..=1, as the kernels interpolate it.
#[inline]
pub(crate) fn colour(table: &[[f32; 4]; 256], t: f32) -> [f32; 4] {
    let pos = t * 255.0;
    let i = (pos as usize).min(254);
    let f = pos - i as f32;
    let (a, b) = (table[i], table[i + 1]);
    std::array::from_fn(|c| a[c] + (b[c] - a[c]) * f)
}

/// Maps `img` (1 channel) with `p.map` over the resolved range `lo..hi`
/// (from [`ColormapParams::range`]) to `p.channels` channels of `U`, on the
/// host's cores.
pub fn colormap<T: Sample, U: Sample>(
    img: &Image<T>,
    p: &ColormapParams,
    (lo, hi): (f32, f32),
) -> Result<Image<U>> {
    super::check_input(img.channels())?;
    p.validate()?;
    let m = Mapping::new(lo, hi, U::TYPE.full_scale())?;
    match p.channels {
        3 => run::<T, U, 3>(img, p, &m),
        _ => run::<T, U, 4>(img, p, &m),
    }
}

fn run<T: Sample, U: Sample, const C: usize>(
    img: &Image<T>,
    p: &ColormapParams,
    m: &Mapping,
) -> Result<Image<U>> {
    let table = p.map.table();
    let pixel = |v: f32| -> [U; C] {
        let c = colour(table, m.t(v));
        std::array::from_fn(|k| U::from_f32(c[k] * m.scale))
    };
    let pixels = img.width() * img.height();
    match T::TYPE {
        SampleType::U8 => with_lut::<T, U, u8, C>(img, pixel),
        SampleType::U16 if pixels >= LUT_PIXELS_PER_ENTRY << 16 => {
            with_lut::<T, U, u16, C>(img, pixel)
        }
        _ => rows::<T, U, C>(img, |dst, src| {
            for (d, s) in dst.chunks_exact_mut(C).zip(src) {
                d.copy_from_slice(&pixel(s.to_f32()));
            }
        }),
    }
}

/// Through the table of `pixel` of every value of `I` (which `T` is).
///
/// Each entry holds four samples (RGB padded with one), so a pixel is
/// one load and one store of a whole entry into the step's buffer, at
/// `C` samples apart: an RGB pixel's fourth sample is overwritten by the
/// next pixel's first, and the buffer has room for the last one's. A
/// 3-sample entry took three narrow copies per pixel.
fn with_lut<T: Sample, U: Sample, I, const C: usize>(
    img: &Image<T>,
    pixel: impl Fn(f32) -> [U; C],
) -> Result<Image<U>>
where
    I: Copy + Into<usize> + Into<f32> + TryFrom<usize> + 'static,
{
    const { assert!(C == 3 || C == 4) };
    let lut: Vec<[U; 4]> = (0..=usize::from(u16::MAX))
        .map_while(|v| I::try_from(v).ok())
        .map(|v| {
            let mut e = [U::default(); 4];
            e[..C].copy_from_slice(&pixel(v.into()));
            e
        })
        .collect();
    fill_rows::<U, _>(img.width(), img.height(), C, |y, dst| {
        let src = mem::cast_slice::<T, I>(img.row(y)).expect("T is I");
        let mut out = Filler::new(dst);
        let mut buf = [U::default(); PIXELS * 4];
        // The last step may be short.
        for s in src.chunks(PIXELS) {
            for (k, s) in s.iter().enumerate() {
                let i: usize = (*s).into();
                buf[k * C..k * C + 4].copy_from_slice(&lut[i]);
            }
            let n = s.len() * C;
            let piece = out.next(n);
            out.commit(mem::write_copy(piece, &buf[..n]));
        }
        out.finish()
    })
}

/// Pixels per step of a row through the table: enough that the copy of
/// each step's buffer into the row costs little per pixel.
const PIXELS: usize = 64;

/// A new image of `C` channels whose row `y` `f(row, img.row(y))` writes,
/// rows in parallel.
fn rows<T: Sample, U: Sample, const C: usize>(
    img: &Image<T>,
    f: impl Fn(&mut [U], &[T]) + Sync,
) -> Result<Image<U>> {
    let mut out = Image::<U>::new(img.width(), img.height(), C)?;
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(img.width() * C)
        .enumerate()
        .for_each(|(y, dst)| f(dst, img.row(y)));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::colormap::ColorMap;

    /// The tables give what the arithmetic gives, bit for bit, for u8 and
    /// a u16 image large enough for its table (and one below the
    /// threshold), into every output type, RGB and RGBA.
    #[test]
    fn tables_equal_the_arithmetic() {
        fn check<T: Sample, U: Sample>(img: &Image<T>, range: (f32, f32)) {
            for channels in [3, 4] {
                for map in ColorMap::ALL {
                    let p = ColormapParams { map, channels, ..Default::default() };
                    let got: Image<U> = colormap(img, &p, range).unwrap();
                    let m = Mapping::new(range.0, range.1, U::TYPE.full_scale()).unwrap();
                    for y in 0..img.height() {
                        for x in 0..img.width() {
                            let c = colour(map.table(), m.t(img.get(x, y, 0).to_f32()));
                            for (k, c) in c.iter().enumerate().take(channels) {
                                let want = U::from_f32(c * m.scale);
                                assert!(got.get(x, y, k) == want, "{map} {}->{} ({x}, {y}, {k})", T::TYPE, U::TYPE);
                            }
                        }
                    }
                }
            }
        }
        let mut rng = crate::test_rng::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.next_u64();
        for (w, h) in [(1, 1), (1, 7), (7, 1), (61, 3), (131, 2)] {
            let img = Image::<u8>::from_fn(w, h, 1, |_, _, _| next() as u8).unwrap();
            check::<u8, u8>(&img, (3.0, 250.5));
            check::<u8, u16>(&img, (0.0, 255.0));
            check::<u8, f32>(&img, (200.0, 10.0));
        }
        // 2^19 pixels take the u16 table; 2^19 - 1 do not.
        for h in [512, 511] {
            let img = Image::<u16>::from_fn(1024, h, 1, |_, _, _| next() as u16).unwrap();
            check::<u16, u8>(&img, (100.0, 60000.0));
        }
    }
}
