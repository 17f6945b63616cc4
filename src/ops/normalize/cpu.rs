//! The rayon normalize: rows in parallel, a const channel count inside so
//! the per-sample channel lookup costs nothing, into an output that is
//! never cleared first.
//!
//! Integer inputs with few values go through a lookup table per channel:
//! u8 always (256 entries; into u8 through [`lut::map_bytes`]: 64 samples
//! per AVX-512 VBMI permute, or 32 per tree of AVX2 shuffles and blends,
//! where the CPU has them), u16 where the image has at least
//! [`LUT_SAMPLES_PER_ENTRY`] samples per table entry (65536 entries, so
//! building the tables costs little next to the pass). An entry is the
//! arithmetic path's expression for its value, so the output is the same
//! bit for bit. Channels with the same coefficients share a table.

use std::mem::MaybeUninit;

use super::Coefficients;
use crate::error::Result;
use crate::image::{Image, Sample, SampleType};
use crate::simd::{lut, mem, Isa};

/// A u16 image takes the lookup tables when it has at least this many
/// samples per table entry.
pub const LUT_SAMPLES_PER_ENTRY: usize = 8;

/// `out = U::from_f32((in - sub[c]) * factor[c])` on the host's cores.
pub fn normalize<T: Sample, U: Sample>(img: &Image<T>, k: &Coefficients) -> Result<Image<U>> {
    match img.channels() {
        1 => run::<T, U, 1>(img, k),
        3 => run::<T, U, 3>(img, k),
        _ => run::<T, U, 4>(img, k),
    }
}

fn run<T: Sample, U: Sample, const C: usize>(img: &Image<T>, k: &Coefficients) -> Result<Image<U>> {
    let co = Coeffs::<C> {
        sub: std::array::from_fn(|c| k.sub[c]),
        factor: std::array::from_fn(|c| k.factor[c]),
    };
    match T::TYPE {
        SampleType::U8 if U::TYPE == SampleType::U8 => bytes::<T, U, C>(img, &co),
        SampleType::U8 => with_lut::<T, U, u8, C, 256>(img, &co),
        SampleType::U16 if img.pixel_count() * C >= LUT_SAMPLES_PER_ENTRY * 65536 * co.tables() => {
            with_lut::<T, U, u16, C, 65536>(img, &co)
        }
        _ => fill_rows(img, |y, dst| {
            mem::write_pixels(dst, img.row(y), |px: [T; C]| {
                std::array::from_fn(|c| co.map(px[c].to_f32(), c))
            })
        }),
    }
}

/// The coefficients of `C` channels.
struct Coeffs<const C: usize> {
    sub: [f32; C],
    factor: [f32; C],
}

impl<const C: usize> Coeffs<C> {
    /// Channel `c`'s value `v` normalized: the reference's expression.
    #[inline(always)]
    fn map<U: Sample>(&self, v: f32, c: usize) -> U {
        U::from_f32((v - self.sub[c]) * self.factor[c])
    }

    /// The first channel with the same coefficients as channel `c`.
    fn first_alike(&self, c: usize) -> usize {
        (0..c)
            .find(|&o| {
                self.sub[o].to_bits() == self.sub[c].to_bits()
                    && self.factor[o].to_bits() == self.factor[c].to_bits()
            })
            .unwrap_or(c)
    }

    /// How many distinct tables the channels need.
    fn tables(&self) -> usize {
        (0..C).filter(|&c| self.first_alike(c) == c).count()
    }
}

/// Through one table of `N` entries per distinct channel, indexed by the
/// samples as `I` (which `T` is, with `N` values).
fn with_lut<T: Sample, U: Sample, I, const C: usize, const N: usize>(
    img: &Image<T>,
    co: &Coeffs<C>,
) -> Result<Image<U>>
where
    I: Sample + Into<usize>,
{
    let mut tables: Vec<Box<[U; N]>> = Vec::new();
    let mut which = [0usize; C];
    for c in 0..C {
        let first = co.first_alike(c);
        if first == c {
            let t: Box<[U]> = (0..N).map(|v| co.map(v as f32, c)).collect();
            tables.push(t.try_into().expect("N entries"));
            which[c] = tables.len() - 1;
        } else {
            which[c] = which[first];
        }
    }
    let lut: [&[U; N]; C] = std::array::from_fn(|c| &*tables[which[c]]);
    fill_rows(img, |y, dst| {
        let row = mem::cast_slice::<T, I>(img.row(y)).expect("T is I");
        mem::write_pixels(dst, row, |px: [I; C]| {
            std::array::from_fn(|c| lut[c][px[c].into()])
        })
    })
}

/// u8 into u8: one byte table per channel, through
/// [`lut::map_bytes`] (AVX-512 VBMI byte permutes or AVX2 byte shuffles
/// where the CPU has them).
fn bytes<T: Sample, U: Sample, const C: usize>(img: &Image<T>, co: &Coeffs<C>) -> Result<Image<U>> {
    let tables: [[u8; 256]; C] =
        std::array::from_fn(|c| std::array::from_fn(|v| co.map(v as f32, c)));
    let isa = Isa::detect();
    fill_rows(img, |y, dst| {
        let row = mem::cast_slice::<T, u8>(img.row(y)).expect("T is u8");
        let out = mem::cast_uninit_mut::<U, u8>(dst).expect("U is u8");
        let done = lut::map_bytes::<C>(isa, &tables, row, out);
        mem::cast_slice_mut::<u8, U>(done).expect("U is u8")
    })
}

/// A new image of `img`'s shape whose row `y` `f` writes, rows in parallel.
fn fill_rows<T: Sample, U: Sample, F>(img: &Image<T>, f: F) -> Result<Image<U>>
where
    F: for<'d> Fn(usize, &'d mut [MaybeUninit<U>]) -> &'d mut [U] + Sync + Send,
{
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let n = crate::image::check_shape(w, h, c)?;
    let out = mem::vec_filled(n, |out| {
        Ok::<_, crate::Error>(mem::par_fill(out, w * c, || (), |_, y, dst| f(y, dst)))
    })?;
    Image::from_vec(w, h, c, out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::tuning::test_image;

    /// The tables and the arithmetic equal the reference bit for bit, for
    /// every input and output type, with shared and separate tables, a u16
    /// image large enough for its tables, and coefficients that round
    /// halves and saturate at both ends.
    #[test]
    fn tables_and_arithmetic_equal_the_reference() {
        fn check<T: Sample, U: Sample>(w: usize, h: usize, c: usize, k: &Coefficients) {
            let img = test_image::<T>(w, h, c).unwrap();
            let want = super::super::reference::normalize::<T, U>(&img, k).unwrap();
            let got = normalize::<T, U>(&img, k).unwrap();
            assert!(got == want, "{w}x{h}x{c} {:?} -> {:?}", T::TYPE, U::TYPE);
        }
        let shared = Coefficients {
            sub: [10.5; 4],
            factor: [1.5; 4],
        };
        let apart = Coefficients {
            sub: [10.5, -3.0, 200.0, 0.0],
            factor: [1.5, 0.5, -2.0, 1.0 / 257.0],
        };
        for k in [&shared, &apart] {
            for c in [1, 3, 4] {
                for (w, h) in [(1, 1), (7, 3), (64, 5)] {
                    check::<u8, u8>(w, h, c, k);
                    check::<u8, u16>(w, h, c, k);
                    check::<u8, f32>(w, h, c, k);
                    check::<u16, u8>(w, h, c, k);
                    check::<f32, u8>(w, h, c, k);
                }
                // Past the u16 threshold for up to 4 tables.
                check::<u16, u16>(1031, 521, c, k);
                check::<u16, u8>(1031, 521, c, k);
            }
        }
    }
}
