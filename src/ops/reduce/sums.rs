//! Exact sums of u8 and u16 samples on the host. Rows of u8:
//! [`simd::chansum::byte_row_sums`] (`vpsadbw` with AVX2, u64 lanes).
//! Rows of u16: u32 lanes (one sample per lane per step, flushed into u64
//! before they could overflow), which the compiler vectorises (through
//! [`simd::dispatch`]). Columns: bands of rows, each added [`GROUP`] rows
//! at a time in registers before the band's u32 sums (also vectorised by
//! the compiler), so those are read and written once per group rather
//! than once per row. An image holds at most 2^31 samples, so every u64
//! total below 2^47 is exact in f64 too.

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

/// Rows added together before they reach a band's sums.
const GROUP: usize = 8;

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
        1 => out[..1].copy_from_slice(&simd::chansum::byte_row_sums::<1>(isa, row)),
        3 => out[..3].copy_from_slice(&simd::chansum::byte_row_sums::<3>(isa, row)),
        _ => out.copy_from_slice(&simd::chansum::byte_row_sums::<4>(isa, row)),
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
                let rows: Vec<&[U]> = (k * BAND_ROWS..h.min((k + 1) * BAND_ROWS))
                    .map(|y| ints(img.row(y)))
                    .collect();
                simd::dispatch(BandSum { rows: &rows, acc: &mut acc });
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

/// Adds the columns of `rows` (at most [`FLUSH`], each at least as long as
/// `acc`) to `acc`.
struct BandSum<'s, 'a, U> {
    rows: &'s [&'a [U]],
    acc: &'s mut [u64],
}

impl<U: Int> WithSimd for BandSum<'_, '_, U> {
    type Output = ();

    /// Eight rows at a time are added in registers, then into the band's
    /// u32 sums, so those are read and written once per eight rows.
    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        let len = self.acc.len();
        let mut band = vec![0u32; len];
        let mut groups = self.rows.chunks_exact(GROUP);
        for g in &mut groups {
            let g: [&[U]; GROUP] = std::array::from_fn(|r| &g[r][..len]);
            for (i, b) in band.iter_mut().enumerate() {
                *b += g.iter().map(|r| -> u32 { r[i].into() }).sum::<u32>();
            }
        }
        for row in groups.remainder() {
            for (b, v) in band.iter_mut().zip(*row) {
                *b += (*v).into();
            }
        }
        for (a, b) in self.acc.iter_mut().zip(band) {
            *a += u64::from(b);
        }
    }
}
