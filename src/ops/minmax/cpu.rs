//! The rayon min/max: rows in parallel, merged pairwise.
//!
//! Inside a row, samples go to `L` independent accumulators (`L` a
//! multiple of `C`, so accumulator `j` always sees channel `j % C`), which
//! the compiler turns into packed min/max instructions. u8 and u16 stay in
//! their own type (64 accumulators per channel: one 512-bit vector of u8
//! lanes per channel, walked with unsigned integer min/max), through
//! [`simd::dispatch`] so with the CPU's widest vectors. f32 compares and
//! selects (`if v < m { m = v }`; `f32::min` would not vectorise because
//! of its NaN rule): a NaN sample compares false and so is ignored, as on
//! every path.

use rayon::prelude::*;

use super::MinMax;
use crate::image::{Image, Sample, SampleType};
use crate::simd::{self, mem, Simd, WithSimd};

/// Per-channel minimum and maximum on the host's cores; NaN samples are ignored.
pub fn minmax<T: Sample>(img: &Image<T>) -> MinMax {
    match (T::TYPE, img.channels()) {
        (SampleType::U8, 1) => ints::<T, u8, 1, 64>(img),
        (SampleType::U8, 3) => ints::<T, u8, 3, 192>(img),
        (SampleType::U8, _) => ints::<T, u8, 4, 256>(img),
        (SampleType::U16, 1) => ints::<T, u16, 1, 64>(img),
        (SampleType::U16, 3) => ints::<T, u16, 3, 192>(img),
        (SampleType::U16, _) => ints::<T, u16, 4, 256>(img),
        (SampleType::F32, 1) => run::<T, 1, 8>(img),
        (SampleType::F32, 3) => run::<T, 3, 24>(img),
        (SampleType::F32, _) => run::<T, 4, 32>(img),
    }
}

/// Unsigned integer samples, compared in their own type.
trait Int: Copy + Ord + Into<f32> + Send + Sync + 'static {
    /// The type's smallest and largest values.
    const LO: Self;
    const HI: Self;
}

impl Int for u8 {
    const LO: u8 = u8::MIN;
    const HI: u8 = u8::MAX;
}

impl Int for u16 {
    const LO: u16 = u16::MIN;
    const HI: u16 = u16::MAX;
}

/// Minima and maxima of `L` lanes.
type Acc<I, const L: usize> = ([I; L], [I; L]);

/// Integer samples `I` (which `T` is): rows in parallel, `L` lanes each.
fn ints<T: Sample, I: Int, const C: usize, const L: usize>(img: &Image<T>) -> MinMax {
    let identity = || ([I::HI; L], [I::LO; L]);
    let (mn, mx) = (0..img.height())
        .into_par_iter()
        .fold(identity, |acc, y| {
            let row = mem::cast_slice::<T, I>(img.row(y)).expect("T is I");
            simd::dispatch(IntRow::<I, L> { row, acc })
        })
        .reduce(identity, |(mut a, mut b), (c, d)| {
            for j in 0..L {
                a[j] = a[j].min(c[j]);
                b[j] = b[j].max(d[j]);
            }
            (a, b)
        });
    let mut m = MinMax::empty(C);
    for j in 0..L {
        m.min[j % C] = m.min[j % C].min(mn[j].into());
        m.max[j % C] = m.max[j % C].max(mx[j].into());
    }
    m
}

/// One row folded into the lanes, for [`simd::dispatch`].
struct IntRow<'a, I: Int, const L: usize> {
    row: &'a [I],
    acc: Acc<I, L>,
}

impl<I: Int, const L: usize> WithSimd for IntRow<'_, I, L> {
    type Output = Acc<I, L>;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> Acc<I, L> {
        let (mut mn, mut mx) = self.acc;
        let mut blocks = self.row.chunks_exact(L);
        for block in &mut blocks {
            for j in 0..L {
                mn[j] = mn[j].min(block[j]);
                mx[j] = mx[j].max(block[j]);
            }
        }
        // The rest of the row starts on a pixel boundary (L is a multiple of C).
        for (j, &v) in blocks.remainder().iter().enumerate() {
            mn[j] = mn[j].min(v);
            mx[j] = mx[j].max(v);
        }
        (mn, mx)
    }
}

/// f32 samples: `L` accumulators, a multiple of `C`, so accumulator `j`
/// always sees channel `j % C`.
fn run<T: Sample, const C: usize, const L: usize>(img: &Image<T>) -> MinMax {
    let identity = || ([f32::INFINITY; L], [f32::NEG_INFINITY; L]);
    let (mn, mx) = (0..img.height())
        .into_par_iter()
        .fold(identity, |(mut mn, mut mx), y| {
            let row = img.row(y);
            let mut blocks = row.chunks_exact(L);
            for block in &mut blocks {
                for j in 0..L {
                    let v = block[j].to_f32();
                    if v < mn[j] {
                        mn[j] = v;
                    }
                    if v > mx[j] {
                        mx[j] = v;
                    }
                }
            }
            // The rest of the row starts on a pixel boundary (L is a multiple of C).
            for (j, s) in blocks.remainder().iter().enumerate() {
                let v = s.to_f32();
                if v < mn[j] {
                    mn[j] = v;
                }
                if v > mx[j] {
                    mx[j] = v;
                }
            }
            (mn, mx)
        })
        .reduce(identity, |(mut a, mut b), (c, d)| {
            for j in 0..L {
                a[j] = a[j].min(c[j]);
                b[j] = b[j].max(d[j]);
            }
            (a, b)
        });
    let mut m = MinMax::empty(C);
    for j in 0..L {
        m.min[j % C] = m.min[j % C].min(mn[j]);
        m.max[j % C] = m.max[j % C].max(mx[j]);
    }
    m
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::tuning::test_image;

    /// Integer paths equal the reference on sizes around the lane counts,
    /// with the extremes placed in the remainders too.
    #[test]
    fn integer_lanes_equal_the_reference() {
        fn check<T: Sample>(w: usize, h: usize, c: usize) {
            let img = test_image::<T>(w, h, c).unwrap();
            let want = super::super::reference::minmax(&img);
            assert_eq!(minmax(&img), want, "{w}x{h}x{c} {:?}", T::TYPE);
            // A narrow band of values, so that every extreme is one sample.
            let narrow = Image::from_fn(w, h, c, |x, y, ch| {
                T::from_f32((100 + (x * 7 + y * 3 + ch) % 5) as f32)
            })
            .unwrap();
            let want = super::super::reference::minmax(&narrow);
            assert_eq!(minmax(&narrow), want, "{w}x{h}x{c} {:?}", T::TYPE);
        }
        for (w, h) in [(1, 1), (1, 9), (9, 1), (63, 3), (64, 2), (65, 5), (257, 3)] {
            for c in [1, 3, 4] {
                check::<u8>(w, h, c);
                check::<u16>(w, h, c);
            }
        }
    }
}
