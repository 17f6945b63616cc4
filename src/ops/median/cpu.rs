//! The rayon median: rows in parallel, and inside a row a vector of
//! samples at a time, each lane one sample's window (32 u8, 16 u16 or 8
//! f32 samples per AVX2 vector; 16 bytes of them on the portable path).
//!
//! Samples are selected straight from the interleaved rows: a sample's
//! neighbours in a row are whole pixels, `c` samples, apart, so there are
//! no planes and RGB needs no deinterleaving. Each column of the window is
//! sorted once per output row and shared by every window that holds it;
//! each window's median then comes from a network on its sorted columns
//! that stays in registers (`shared`, `net`). f32 samples are ordered by
//! `totalOrder` as integer keys: each column's samples become keys as they
//! are loaded for its sort, and each median becomes a sample again as it is
//! stored (`simd::lanes::f32_key`), so f32 takes no pass of its own.
//!
//! AVX2 runs even where AVX-512F is there: the AVX-512F trampoline has no
//! 8- or 16-bit lane instructions.

use std::mem::MaybeUninit;

use super::{shared, three, MedianParams};
use crate::error::Result;
use crate::image::{check_shape, Image, Sample};
use crate::simd::lanes::{F32Keys, Lanes, OrdLanes};
#[cfg(target_arch = "x86_64")]
use crate::simd::x86;
use crate::simd::{mem, Isa, Simd, WithSimd};
use crate::SampleType;

/// Median-filters `src` on the host's cores (see the module docs).
pub fn median<T: Sample>(src: &Image<T>, p: &MedianParams) -> Result<Image<T>> {
    let bytes = src.data().len().saturating_mul(std::mem::size_of::<T>());
    run(src, p, bytes >= mem::STREAM_BYTES)
}

/// [`median`], writing the output a row at a time through
/// [`mem::write_stream`] if `stream`.
fn run<T: Sample>(src: &Image<T>, p: &MedianParams, stream: bool) -> Result<Image<T>> {
    p.validate()?;
    let r = p.radius as usize;
    let (w, h, c) = (src.width(), src.height(), src.channels());
    let n = check_shape(w, h, c)?;
    // The output is not cleared first: every row is written once.
    let data = mem::vec_filled(n, |buf| -> Result<&mut [T]> {
        Ok(match T::TYPE {
            SampleType::U8 => {
                let o = mem::cast_uninit_mut::<T, u8>(buf).expect("T is u8");
                let rows = |y| mem::cast_slice(src.row(y)).expect("T is u8");
                let o = filter(rows, h, c, r, stream, o);
                mem::cast_slice_mut(o).expect("T is u8")
            }
            SampleType::U16 => {
                let o = mem::cast_uninit_mut::<T, u16>(buf).expect("T is u16");
                let rows = |y| mem::cast_slice(src.row(y)).expect("T is u16");
                let o = filter(rows, h, c, r, stream, o);
                mem::cast_slice_mut(o).expect("T is u16")
            }
            SampleType::F32 => {
                let o = mem::cast_uninit_mut::<T, f32>(buf).expect("T is f32");
                let rows = |y| mem::cast_slice(src.row(y)).expect("T is f32");
                let o = filter(rows, h, c, r, stream, o);
                mem::cast_slice_mut(o).expect("T is f32")
            }
        })
    })?;
    Image::from_vec(w, h, c, data)
}

/// Samples with the vectors that order them: integers as they are, f32 by
/// `totalOrder` (as keys).
trait Native: Sample + Copy + Default + Send + Sync + 'static {
    /// 16 bytes of lanes as plain arrays (every CPU).
    type Portable: OrdLanes<Sample = Self, Token = ()>;
    /// An AVX2 register of lanes.
    #[cfg(target_arch = "x86_64")]
    type Avx2: OrdLanes<Sample = Self, Token = x86::Avx2>;
}

impl Native for u8 {
    type Portable = Lanes<u8, 16>;
    #[cfg(target_arch = "x86_64")]
    type Avx2 = x86::lanes::U8x32;
}

impl Native for u16 {
    type Portable = Lanes<u16, 8>;
    #[cfg(target_arch = "x86_64")]
    type Avx2 = x86::lanes::U16x16;
}

impl Native for f32 {
    type Portable = F32Keys<4>;
    #[cfg(target_arch = "x86_64")]
    type Avx2 = x86::lanes::F32x8;
}

/// Median-filters the `h` rows that `row` gives (`c` channels each) into
/// `out` (packed rows) with radius `r`, and returns it written; alpha
/// (channel 3 of 4) is filtered with the colours and then overwritten by a
/// copy. If `stream`, each row is made in the cache and then written with
/// [`mem::write_stream`].
fn filter<'a, 'o, K: Native>(
    row: impl Fn(usize) -> &'a [K] + Sync,
    h: usize,
    c: usize,
    r: usize,
    stream: bool,
    out: &'o mut [MaybeUninit<K>],
) -> &'o mut [K] {
    let wc = out.len() / h;
    if r == 1 {
        return filter3(row, h, c, stream, out);
    }
    mem::par_fill(out, wc, Default::default, |(ranks, line): &mut (Vec<K>, Vec<K>), y, o| {
        let src = |d: usize| row((y + d).saturating_sub(r).min(h - 1));
        let rows: [&[K]; 7] = std::array::from_fn(src);
        if !stream {
            // Cleared in the cache, where the row is written next.
            let o = mem::fill_init(o, K::default());
            median_row(rows, o, c, r, ranks, row(y));
            return o;
        }
        line.resize(wc, K::default());
        median_row(rows, line, c, r, ranks, row(y));
        mem::write_stream(o, line)
    })
}

/// The most output rows per rayon job of the 3x3 median.
const ROWS3: usize = 32;
/// Bytes of output per job of the 3x3 median, about: a job reads two
/// source rows more than it writes (again in the next job), so longer
/// jobs read less twice, while one job's rows stay in a core's L2 cache
/// (rows made there are streamed out from it for large images).
const JOB3_BYTES: usize = 128 << 10;

/// [`filter`] for radius 1: jobs of up to [`ROWS3`] output rows (a
/// multiple of 4 and at least 8, about [`JOB3_BYTES`]), each median-
/// filtered by `three` in groups of 4 rows.
fn filter3<'a, 'o, K: Native>(
    row: impl Fn(usize) -> &'a [K] + Sync,
    h: usize,
    c: usize,
    stream: bool,
    out: &'o mut [MaybeUninit<K>],
) -> &'o mut [K] {
    let wc = out.len() / h;
    let rows = (JOB3_BYTES / (wc * std::mem::size_of::<K>()).max(1)).clamp(8, ROWS3) / 4 * 4;
    mem::par_fill(out, wc * rows, Vec::new, |line: &mut Vec<K>, i, o| {
        let y0 = i * rows;
        // Source row `k` of the job is image row `y0 + k - 1`, clamped
        // (those past the job's rows are never read).
        let src: [&[K]; ROWS3 + 2] = std::array::from_fn(|k| row((y0 + k).saturating_sub(1).min(h - 1)));
        let isa = Isa::detect_up_to(256);
        if !stream {
            // Cleared in the cache, where the rows are written next.
            let o = mem::fill_init(o, K::default());
            isa.vectorize(Band3 { src: &src, out: &mut *o, c });
            return o;
        }
        line.resize(o.len(), K::default());
        isa.vectorize(Band3 { src: &src, out: &mut line[..], c });
        mem::write_stream(o, line)
    })
}

/// The output rows `out` (up to [`ROWS3`] of them) of a 3x3 job from its
/// source rows `src` (one more on each side, borders replicated).
struct Band3<'a, K> {
    src: &'a [&'a [K]; ROWS3 + 2],
    out: &'a mut [K],
    c: usize,
}

impl<K: Native> WithSimd for Band3<'_, K> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        #[cfg(target_arch = "x86_64")]
        if S::ISA >= Isa::Avx2 {
            if let Some(t) = x86::Avx2::try_new() {
                return band3::<K::Avx2>(t, self.src, self.out, self.c);
            }
        }
        band3::<K::Portable>((), self.src, self.out, self.c)
    }
}

/// [`Band3`] with vectors `V`: groups of 4 output rows, then 2 and 1.
#[inline(always)]
fn band3<V: OrdLanes>(t: V::Token, src: &[&[V::Sample]; ROWS3 + 2], out: &mut [V::Sample], c: usize)
where
    V::Sample: Native,
{
    let wc = src[0].len();
    let m = out.len() / wc;
    let mut rows = out.chunks_exact_mut(wc);
    let mut y = 0;
    while y < m {
        let k = match m - y {
            1 => 1,
            2 | 3 => 2,
            _ => 4,
        };
        let mut o: [&mut [V::Sample]; 4] =
            std::array::from_fn(|i| if i < k { rows.next().unwrap_or_default() } else { Default::default() });
        match k {
            1 => three::rows::<V, 1, 3>(t, sub(src, y), sub_mut(&mut o), c),
            2 => three::rows::<V, 2, 4>(t, sub(src, y), sub_mut(&mut o), c),
            _ => three::rows::<V, 4, 6>(t, sub(src, y), sub_mut(&mut o), c),
        }
        if c == 4 {
            for (d, o) in o[..k].iter_mut().enumerate() {
                for (o, s) in o.chunks_exact_mut(4).zip(src[y + d + 1].chunks_exact(4)) {
                    o[3] = s[3];
                }
            }
        }
        y += k;
    }
}

/// `N` items of `s` from `at`.
#[inline(always)]
fn sub<T, const N: usize>(s: &[T], at: usize) -> &[T; N] {
    s[at..at + N].try_into().expect("in range")
}

/// The first `N` items of `s`.
#[inline(always)]
fn sub_mut<T, const N: usize>(s: &mut [T]) -> &mut [T; N] {
    (&mut s[..N]).try_into().expect("in range")
}

/// One output row: `rows` are the window's source rows, top to bottom
/// (borders replicated; the first `2r + 1` are read), `own` the row's
/// source (for the alpha of 4 channels).
fn median_row<K: Native>(rows: [&[K]; 7], o: &mut [K], c: usize, r: usize, ranks: &mut Vec<K>, own: &[K]) {
    // At most 256-bit vectors: see the module docs.
    let isa = Isa::detect_up_to(256);
    match r {
        1 => isa.vectorize(Row::<K, 3, 9> {
            rows: std::array::from_fn(|i| rows[i]),
            out: &mut *o,
            c,
            ranks,
        }),
        2 => isa.vectorize(Row::<K, 5, 25> {
            rows: std::array::from_fn(|i| rows[i]),
            out: &mut *o,
            c,
            ranks,
        }),
        _ => isa.vectorize(Row::<K, 7, 49> {
            rows,
            out: &mut *o,
            c,
            ranks,
        }),
    }
    if c == 4 {
        for (o, s) in o.chunks_exact_mut(4).zip(own.chunks_exact(4)) {
            o[3] = s[3];
        }
    }
}

/// One output row of a `D x D` median (`N = D * D`): `rows` are the
/// window's source rows, top to bottom, borders replicated.
struct Row<'a, K, const D: usize, const N: usize> {
    rows: [&'a [K]; D],
    out: &'a mut [K],
    c: usize,
    ranks: &'a mut Vec<K>,
}

impl<K: Native, const D: usize, const N: usize> WithSimd for Row<'_, K, D, N> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) {
        let Row {
            rows,
            out,
            c,
            ranks,
        } = self;
        #[cfg(target_arch = "x86_64")]
        if S::ISA >= Isa::Avx2 {
            if let Some(t) = x86::Avx2::try_new() {
                return shared::median_row::<K::Avx2, D, N>(t, rows, out, c, ranks);
            }
        }
        shared::median_row::<K::Portable, D, N>((), rows, out, c, ranks)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::median::reference;
    use crate::test_rng::Rng;

    fn random<T: Sample>(w: usize, h: usize, c: usize, seed: u64, levels: u32) -> Image<T> {
        let mut rng = Rng::new(seed);
        Image::from_fn(w, h, c, |_, _, _| T::from_f32(rng.below(levels.into()) as f32)).unwrap()
    }

    /// f32 samples with zeros of both signs, NaNs of both signs,
    /// infinities and a few ordinary values, so that windows tie and hold
    /// NaNs in every proportion.
    fn specials(w: usize, h: usize, c: usize, seed: u64) -> Image<f32> {
        const V: [f32; 8] = [-0.0, 0.0, f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY, 1.0, -1.0];
        let idx = random::<u8>(w, h, c, seed, V.len() as u32);
        Image::from_fn(w, h, c, |x, y, ch| V[idx.get(x, y, ch) as usize]).unwrap()
    }

    /// Bit for bit, so that -0 and +0, and NaNs, are told apart.
    fn same_bits(a: &Image<f32>, b: &Image<f32>) -> bool {
        a.data().iter().map(|v| v.to_bits()).eq(b.data().iter().map(|v| v.to_bits()))
    }

    #[test]
    fn shared_columns_match_the_reference_across_strips() {
        // Rows longer than a strip (with a short last one), rows shorter
        // than a vector and around its width, single pixels, rows and
        // columns, primes, few levels (ties) and many; written in place
        // and streamed.
        let shapes = [
            (1500, 3, 3),
            (2100, 4, 1),
            (700, 5, 4),
            (9, 6, 3),
            (2, 7, 1),
            (1, 3, 3),
            (31, 2, 1),
            (32, 3, 1),
            (33, 4, 1),
            (11, 8, 3),
            (1, 1, 1),
            (1, 1, 4),
            (17, 1, 3),
            (1, 13, 1),
            (37, 29, 3),
            // Several jobs of 32 rows (3x3 on narrow rows), the last one short.
            (97, 131, 1),
            (5, 70, 3),
        ];
        for (w, h, c) in shapes {
            for r in 1..=3 {
                let p = MedianParams::new(r).unwrap();
                for (levels, stream) in [(3, false), (256, false), (256, true)] {
                    let img = random::<u8>(w, h, c, (w * h * c) as u64 + r as u64, levels);
                    let want = reference::median(&img, &p).unwrap();
                    assert_eq!(run(&img, &p, stream).unwrap(), want, "u8 {w}x{h}x{c} r={r}");
                    let img = random::<u16>(w, h, c, 7 + w as u64, levels * 200);
                    let want = reference::median(&img, &p).unwrap();
                    assert_eq!(run(&img, &p, stream).unwrap(), want, "u16 {w}x{h}x{c} r={r}");
                    let img = random::<f32>(w, h, c, 9 + h as u64, levels * 3);
                    let want = reference::median(&img, &p).unwrap();
                    let got = run(&img, &p, stream).unwrap();
                    assert_eq!(got, want, "f32 {w}x{h}x{c} r={r}");
                    let img = specials(w, h, c, 11 + levels as u64);
                    let want = reference::median(&img, &p).unwrap();
                    let got = run(&img, &p, stream).unwrap();
                    assert!(same_bits(&got, &want), "f32 specials {w}x{h}x{c} r={r} stream {stream}");
                }
            }
        }
    }

    #[test]
    fn large_images_stream_and_match_the_reference() {
        // Above the streaming size (u8 gray, 4096x4100 = 16.0 MiB); the
        // reference checks every 97th row (it sorts every window).
        let (w, h) = (4096, 4100);
        let img = random::<u8>(w, h, 1, 5, 256);
        let p = MedianParams::new(1).unwrap();
        assert!(w * h >= mem::STREAM_BYTES);
        let got = median(&img, &p).unwrap();
        for y in (0..h).step_by(97).chain([h - 1]) {
            let y0 = y.saturating_sub(1);
            let band = Image::from_fn(w, (y + 2).min(h) - y0, 1, |x, yy, _| img.get(x, y0 + yy, 0)).unwrap();
            let want = reference::median(&band, &p).unwrap();
            let row: Vec<u8> = (0..w).map(|x| want.get(x, y - y0, 0)).collect();
            assert_eq!(got.row(y), &row[..], "row {y}");
        }
    }
}
