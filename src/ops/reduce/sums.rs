//! Exact sums of u8 and u16 samples on the host: u32 lanes (one sample
//! per lane per step, flushed into u64 before they could overflow), which
//! the compiler vectorises (through [`simd::dispatch`]). An image holds at
//! most 2^31 samples, so every u64 total below 2^47 is exact in f64 too.

use rayon::prelude::*;

use crate::image::{Image, Sample, SampleType};
use crate::simd::{self, mem, Isa, Simd, WithSimd};

/// Lanes of a row walk: a multiple of 1, 3 and 4, so that lane `j` holds
/// channel `j % ch`.
const LANES: usize = 48;

/// Steps (rows, for columns) a u32 lane may take before it is flushed:
/// 65536 samples of at most 65535 stay below 2^32.
const FLUSH: usize = 1 << 16;

/// Rows per band of the column walk.
const BAND_ROWS: usize = 64;

/// The integer samples summed here.
trait Int: Copy + Into<u32> + Send + Sync + 'static {}
impl Int for u8 {}
impl Int for u16 {}

/// Per-channel sums of a row of `ch` channels of u8 or u16 samples
/// (`T` must be one of them).
pub(super) fn row_sums<T: Sample>(row: &[T], ch: usize) -> [u64; 4] {
    if T::TYPE != SampleType::U8 {
        return simd::dispatch(RowSum { row: ints::<T, u16>(row), ch });
    }
    let (isa, row) = (Isa::detect(), ints::<T, u8>(row));
    let mut out = [0u64; 4];
    match ch {
        1 => out[..1].copy_from_slice(&simd::widen::byte_sums::<1>(isa, row)),
        3 => out[..3].copy_from_slice(&simd::widen::byte_sums::<3>(isa, row)),
        _ => out.copy_from_slice(&simd::widen::byte_sums::<4>(isa, row)),
    }
    out
}

/// `s` as the integer type it is (`T` is `U`: the callers' match).
fn ints<T: Sample, U: Int>(s: &[T]) -> &[U] {
    mem::cast_slice::<T, U>(s).expect("the sample type is the integer type")
}

struct RowSum<'a, U> {
    row: &'a [U],
    ch: usize,
}

impl<U: Int> WithSimd for RowSum<'_, U> {
    type Output = [u64; 4];

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> [u64; 4] {
        let RowSum { row, ch } = self;
        let mut out = [0u64; 4];
        // Each block starts on a multiple of LANES, so on a pixel.
        for block in row.chunks(LANES * FLUSH) {
            let mut lanes = [0u32; LANES];
            let mut steps = block.chunks_exact(LANES);
            for g in &mut steps {
                for (l, v) in lanes.iter_mut().zip(g) {
                    *l += (*v).into();
                }
            }
            for (j, l) in lanes.iter().enumerate() {
                out[j % ch] += u64::from(*l);
            }
            for (j, v) in steps.remainder().iter().enumerate() {
                out[j % ch] += u64::from((*v).into());
            }
        }
        out
    }
}

/// The sum of every column and channel of a u8 or u16 image, in output
/// order.
pub(super) fn column_sums<T: Sample>(img: &Image<T>) -> Vec<f64> {
    let totals = match T::TYPE {
        SampleType::U8 => columns(img, ints::<T, u8>),
        _ => columns(img, ints::<T, u16>),
    };
    totals.into_iter().map(|s| s as f64).collect()
}

/// Bands of rows in parallel, each summed into u32 columns
/// ([`BandSum`]) and added into u64 totals.
fn columns<'a, T: Sample, U: Int>(img: &'a Image<T>, ints: fn(&'a [T]) -> &'a [U]) -> Vec<u64> {
    let (len, h) = (img.row_len(), img.height());
    (0..h.div_ceil(BAND_ROWS))
        .into_par_iter()
        .fold(
            || vec![0u64; len],
            |mut acc, k| {
                let rows = (k * BAND_ROWS..h.min((k + 1) * BAND_ROWS)).map(|y| ints(img.row(y)));
                simd::dispatch(BandSum { rows, acc: &mut acc });
                acc
            },
        )
        .reduce(
            || vec![0u64; len],
            |mut a, b| {
                a.iter_mut().zip(b).for_each(|(a, b)| *a += b);
                a
            },
        )
}

/// Adds the columns of `rows` (at most [`FLUSH`]) to `acc`.
struct BandSum<'s, I> {
    rows: I,
    acc: &'s mut [u64],
}

impl<'a, U: Int, I: Iterator<Item = &'a [U]>> WithSimd for BandSum<'_, I> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        let mut band = vec![0u32; self.acc.len()];
        for row in self.rows {
            for (b, v) in band.iter_mut().zip(row) {
                *b += (*v).into();
            }
        }
        for (a, b) in self.acc.iter_mut().zip(band) {
            *a += u64::from(b);
        }
    }
}
