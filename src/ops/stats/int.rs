//! The statistics of u8 and u16 images on the host's cores: exact integer
//! sums in one pass. Row bands go to rayon; each band walks its rows `L`
//! samples at a time into `L` independent lanes (lane `l` holds channel
//! `l % C`, `L` a multiple of 1, 3 and 4): a u32 sum, a sum of squares
//! (u32 for u8, whose squares stay below 2^16; u64 for u16), a min and a
//! max in the sample type. The lane loops are plain integer Rust that the
//! compiler vectorises inside [`Isa::vectorize`]'s trampolines (AVX-512F,
//! AVX2, or the portable baseline: SSE2 on x86-64, NEON on aarch64).
//! Gray u8 bands go through [`GrayBytes`] instead where the CPU has AVX2
//! (`vpsadbw` for the sum, `vpmaddwd` for the squares).
//!
//! The u32 lanes are flushed into u64 channel totals at least every
//! [`FLUSH`] steps, before they could overflow. Images hold fewer than
//! 2^31 samples ([`crate::image::check_shape`]), so the u64 totals cannot
//! overflow either (2^31 u16 squares stay below 2^63): the sum, the sum
//! of squares, min and max are exact, and [`finish`] turns them
//! into the statistics with a few f64 roundings.

use std::ops::Add;

use rayon::prelude::*;

use super::Stats;
use crate::image::{Image, Sample};
use crate::simd::moments::{GrayBytes, Moments};
use crate::simd::{Isa, Simd, WithSimd};

/// The statistics of `channels` exact moments over `count` samples each:
/// the sum exact (below 2^53), the mean its one division, and the
/// variance `(n * sq - sum^2) / n^2` from the exact integer numerator
/// (u128), so the standard deviation is within a few f64 ulp.
pub(crate) fn finish(sums: &[Moments], count: u64) -> Stats {
    let n = count as f64;
    let std = |s: &Moments| {
        let num = (u128::from(count) * u128::from(s.sq))
            .saturating_sub(u128::from(s.sum) * u128::from(s.sum));
        (num as f64 / (n * n)).sqrt()
    };
    Stats {
        channels: sums.len(),
        count,
        sum: sums.iter().map(|s| s.sum as f64).collect(),
        mean: sums.iter().map(|s| s.sum as f64 / n).collect(),
        std: sums.iter().map(std).collect(),
        min: sums.iter().map(|s| s.min as f64).collect(),
        max: sums.iter().map(|s| s.max as f64).collect(),
    }
}

/// Steps between flushes of the u32 lanes: 2^16 samples below 2^16 (u16,
/// or u8 squares, at most 255^2) stay below 2^32.
const FLUSH: usize = 1 << 16;

/// An integer sample type whose lanes sum exactly.
pub(crate) trait Int: Sample + Ord {
    /// A lane's sum of squares: wide enough for [`FLUSH`] of them.
    type Sq: Copy + Default + Add<Output = Self::Sq> + Into<u64>;
    /// The type's largest value (a min lane's start).
    const HIGH: Self;
    /// The type's smallest value (a max lane's start).
    const LOW: Self;
    /// The value, widened.
    fn wide(self) -> u32;
    /// The value's square, exact.
    fn square(self) -> Self::Sq;
    /// The moments of the gray rows `rows` through a kernel of `isa`'s
    /// for the type, if it has one.
    fn gray<'a>(isa: Isa, rows: impl Iterator<Item = &'a [Self]>) -> Option<Moments> {
        let _ = (isa, rows);
        None
    }
}

impl Int for u8 {
    type Sq = u32;
    const HIGH: u8 = u8::MAX;
    const LOW: u8 = 0;
    #[inline(always)]
    fn wide(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn square(self) -> u32 {
        // 255^2 fits 16 bits: the narrow multiply packs twice the lanes.
        let v = u16::from(self);
        u32::from(v * v)
    }
    fn gray<'a>(isa: Isa, rows: impl Iterator<Item = &'a [u8]>) -> Option<Moments> {
        let mut g = GrayBytes::new(isa)?;
        rows.for_each(|r| g.add_row(r));
        Some(g.finish())
    }
}

impl Int for u16 {
    type Sq = u64;
    const HIGH: u16 = u16::MAX;
    const LOW: u16 = 0;
    #[inline(always)]
    fn wide(self) -> u32 {
        u32::from(self)
    }
    #[inline(always)]
    fn square(self) -> u64 {
        let v = u32::from(self);
        u64::from(v * v)
    }
}

/// The statistics of `img` on the host's cores.
pub(crate) fn stats<T: Int>(img: &Image<T>) -> Stats {
    stats_with(img, Isa::detect())
}

/// [`stats`] with `isa`'s instructions (or the best below it the CPU runs).
fn stats_with<T: Int>(img: &Image<T>, isa: Isa) -> Stats {
    match img.channels() {
        1 => run::<T, 1, 64>(img, isa),
        3 => run::<T, 3, 48>(img, isa),
        _ => run::<T, 4, 64>(img, isa),
    }
}

/// Rows per band: about four bands per thread, each at least 64 Ki samples.
fn band_rows(img: &Image<impl Sample>) -> usize {
    let per_thread = img.height().div_ceil(4 * rayon::current_num_threads());
    per_thread.max((1 << 16) / img.row_len().max(1)).max(1)
}

fn run<T: Int, const C: usize, const L: usize>(img: &Image<T>, isa: Isa) -> Stats {
    let band = band_rows(img);
    let bands = img.height().div_ceil(band);
    let sums = (0..bands)
        .into_par_iter()
        .map(|b| {
            let rows = b * band..((b + 1) * band).min(img.height());
            if C == 1 {
                if let Some(m) = T::gray(isa, rows.clone().map(|y| img.row(y))) {
                    return [m; C];
                }
            }
            isa.vectorize(BandOp::<T, C, L> { img, rows })
        })
        .reduce(
            || [Moments::EMPTY; C],
            |a, b| std::array::from_fn(|c| a[c].merge(b[c])),
        );
    finish(&sums, (img.width() * img.height()) as u64)
}

/// One band's per-channel sums.
struct BandOp<'a, T: Int, const C: usize, const L: usize> {
    img: &'a Image<T>,
    rows: std::ops::Range<usize>,
}

/// A band's lanes (see the module's docs).
struct Lanes<T: Int, const L: usize> {
    sum: [u32; L],
    sq: [T::Sq; L],
    min: [T; L],
    max: [T; L],
}

impl<T: Int, const L: usize> Lanes<T, L> {
    fn new() -> Self {
        Lanes {
            sum: [0; L],
            sq: [T::Sq::default(); L],
            min: [T::HIGH; L],
            max: [T::LOW; L],
        }
    }

    /// Adds one step of `L` samples.
    #[inline(always)]
    fn step(&mut self, g: &[T; L]) {
        for (l, &v) in g.iter().enumerate() {
            self.sum[l] += v.wide();
            self.sq[l] = self.sq[l] + v.square();
            self.min[l] = self.min[l].min(v);
            self.max[l] = self.max[l].max(v);
        }
    }

    /// Moves the sums into `acc` and clears them.
    fn flush<const C: usize>(&mut self, acc: &mut [Moments; C]) {
        for l in 0..L {
            acc[l % C].sum += u64::from(self.sum[l]);
            acc[l % C].sq += self.sq[l].into();
        }
        self.sum = [0; L];
        self.sq = [T::Sq::default(); L];
    }
}

impl<T: Int, const C: usize, const L: usize> WithSimd for BandOp<'_, T, C, L> {
    type Output = [Moments; C];

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> [Moments; C] {
        let mut acc = [Moments::EMPTY; C];
        let mut lanes = Lanes::<T, L>::new();
        let mut steps = 0;
        for y in self.rows {
            // A piece of at most FLUSH steps starts at a multiple of L, so
            // at a pixel: sample j of its remainder is channel j % C.
            for piece in self.img.row(y).chunks(L * FLUSH) {
                let (whole, rest) = piece.as_chunks::<L>();
                if steps + whole.len() > FLUSH {
                    lanes.flush(&mut acc);
                    steps = 0;
                }
                steps += whole.len();
                for g in whole {
                    lanes.step(g);
                }
                for (j, &v) in rest.iter().enumerate() {
                    acc[j % C].add(u64::from(v.wide()));
                }
            }
        }
        lanes.flush(&mut acc);
        for l in 0..L {
            let a = &mut acc[l % C];
            a.min = a.min.min(u64::from(lanes.min[l].wide()));
            a.max = a.max.max(u64::from(lanes.max[l].wide()));
        }
        acc
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Deterministic samples: the top 24 random bits, through `wrap`.
    fn noise<T: Int>(n: usize, seed: u64, wrap: impl Fn(u64) -> T) -> Vec<T> {
        let mut rng = crate::test_rng::Rng::new(seed);
        (0..n).map(|_| wrap(rng.next_u64() >> 40)).collect()
    }

    /// Per channel, the plain u64 sums of the image's pixels (padding left out).
    fn plain<T: Int>(img: &Image<T>) -> Vec<Moments> {
        let c = img.channels();
        let mut out = vec![Moments::EMPTY; c];
        for row in img.rows() {
            for (j, v) in row.iter().enumerate() {
                out[j % c].add(u64::from(v.wide()));
            }
        }
        out
    }

    /// The sums exact on every instruction set, the std within 1e-12 of an
    /// f64 two-pass value.
    fn check<T: Int>(img: &Image<T>, what: &str) {
        let want = plain(img);
        let n = img.width() * img.height();
        let want_stats = finish(&want, n as u64);
        for isa in Isa::available() {
            let got = stats_with(img, isa);
            for (c, w) in want.iter().enumerate() {
                assert_eq!(got.sum[c], w.sum as f64, "{what} {isa:?} sum {c}");
                assert_eq!(got.min[c], w.min as f64, "{what} {isa:?} min {c}");
                assert_eq!(got.max[c], w.max as f64, "{what} {isa:?} max {c}");
            }
            assert_eq!(got, want_stats, "{what} {isa:?}");
        }
        for (c, &std) in want_stats.std.iter().enumerate() {
            let xs = img
                .rows()
                .flat_map(|r| r.iter().skip(c).step_by(img.channels()));
            let mean = want_stats.mean[c];
            let var = xs.map(|v| (f64::from(v.wide()) - mean).powi(2)).sum::<f64>() / n as f64;
            let scale = var.sqrt().max(1.0);
            assert!((std - var.sqrt()).abs() <= 1e-12 * scale, "{what} std {c}");
        }
    }

    const SIZES: &[(usize, usize)] = &[
        (1, 1),
        (1, 37),
        (41, 1),
        (13, 11),
        (63, 5),
        (64, 3),
        (65, 7),
        (257, 3),
        (61, 67),
    ];

    #[test]
    fn random_images_sum_exactly_on_every_instruction_set() {
        for (i, &(w, h)) in SIZES.iter().enumerate() {
            for c in [1, 3, 4] {
                let seed = (10 * i + c) as u64;
                let a = noise(w * h * c, seed, |v| v as u8);
                check(&Image::from_vec(w, h, c, a).unwrap(), &format!("u8 {w}x{h}x{c}"));
                let b = noise(w * h * c, seed, |v| v as u16);
                check(&Image::from_vec(w, h, c, b).unwrap(), &format!("u16 {w}x{h}x{c}"));
            }
        }
    }

    #[test]
    fn padding_is_left_out() {
        // Rows 5 samples apart beyond their pixels, the padding at the
        // type's extremes, which would move the sums, min and max.
        for c in [1, 3, 4] {
            let (w, h) = (67, 9);
            let stride = w * c + 5;
            let mut a = noise(stride * h, c as u64, |v| 1 + (v % 200) as u8);
            let mut b = noise(stride * h, c as u64, |v| 1 + (v % 60000) as u16);
            for y in 0..h {
                for x in w * c..stride {
                    a[y * stride + x] = if x % 2 == 0 { 0 } else { 255 };
                    b[y * stride + x] = if x % 2 == 0 { 0 } else { 65535 };
                }
            }
            let a = Image::from_vec_with_stride(w, h, c, stride, a).unwrap();
            let b = Image::from_vec_with_stride(w, h, c, stride, b).unwrap();
            check(&a, &format!("u8 padded x{c}"));
            check(&b, &format!("u16 padded x{c}"));
            let (sa, sb) = (stats_with(&a, Isa::detect()), stats_with(&b, Isa::detect()));
            assert!(sa.min.iter().all(|&m| m >= 1.0) && sa.max.iter().all(|&m| m <= 200.0));
            assert!(sb.min.iter().all(|&m| m >= 1.0) && sb.max.iter().all(|&m| m <= 60000.0));
        }
    }

    /// The whole image as one band.
    fn one_band<T: Int, const C: usize, const L: usize>(img: &Image<T>, isa: Isa) -> Vec<Moments> {
        let rows = 0..img.height();
        isa.vectorize(BandOp::<T, C, L> { img, rows }).to_vec()
    }

    #[test]
    fn full_scale_images_do_not_overflow_the_lanes() {
        // Every lane of one band takes about twice FLUSH steps: without the
        // flushes, the u32 sums (u16) and squares (u8) would wrap (and so
        // would GrayBytes' squares, flushed every 2^20 bytes). One wide row
        // also goes through the pieces of a row.
        let n = 2 * 64 * FLUSH + 1000;
        for (w, h, c) in [(n, 1, 1), (1024, n / 1024, 1), (512, n / 1536, 3), (256, n / 1024, 4)] {
            let a = Image::from_vec(w, h, c, vec![255u8; w * h * c]).unwrap();
            let b = Image::from_vec(w, h, c, vec![65535u16; w * h * c]).unwrap();
            let count = (w * h) as u64;
            for isa in Isa::available() {
                let (sa, sb) = match c {
                    1 => (one_band::<u8, 1, 64>(&a, isa), one_band::<u16, 1, 64>(&b, isa)),
                    3 => (one_band::<u8, 3, 48>(&a, isa), one_band::<u16, 3, 48>(&b, isa)),
                    _ => (one_band::<u8, 4, 64>(&a, isa), one_band::<u16, 4, 64>(&b, isa)),
                };
                for s in &sa {
                    assert_eq!((s.sum, s.sq), (255 * count, 65025 * count), "u8 {w}x{h}x{c}");
                    assert_eq!((s.min, s.max), (255, 255));
                }
                for s in &sb {
                    let want = (65535 * count, 65535 * 65535 * count);
                    assert_eq!((s.sum, s.sq), want, "u16 {w}x{h}x{c}");
                    assert_eq!((s.min, s.max), (65535, 65535));
                }
                // The whole path too (gray u8 through its own kernel).
                for (st, v) in [(stats_with(&a, isa), 255.0), (stats_with(&b, isa), 65535.0)] {
                    let want = (v * count as f64, v, 0.0, v, v);
                    let got = (st.sum[0], st.mean[0], st.std[0], st.min[0], st.max[0]);
                    assert_eq!(got, want, "{w}x{h}x{c} {isa:?}");
                }
            }
        }
    }
}
