//! The rayon encoding: rows in parallel. u8 through the table of every
//! value's result, 64 samples per AVX-512 VBMI byte permute or 32 per tree
//! of AVX2 byte shuffles where the CPU has them ([`lut::map_bytes`]); u16 through its table one sample at a
//! time; f32 through the curve evaluated in f32 (`Curve`), written so
//! that the compiler vectorises it for each instruction set of
//! [`crate::simd`].

use std::mem::MaybeUninit;

use super::GammaParams;
use crate::error::{Error, Result};
use crate::image::{Image, Sample, SampleType};
use crate::ops::pixel_stage::cpu::{fill_rows, map_samples};
use crate::simd::mem::{self, Filler};
use crate::simd::{lut, Isa, Simd, WithSimd};

/// `E(max(in / full, 0)) * full` (alpha copied) on the host's cores.
pub fn gamma<T: Sample>(img: &Image<T>, p: &GammaParams) -> Result<Image<T>> {
    p.validate()?;
    match (T::TYPE, img.channels()) {
        (SampleType::U8, 1) => bytes::<T, 1>(img, p),
        (SampleType::U8, 3) => bytes::<T, 3>(img, p),
        (SampleType::U8, 4) => bytes::<T, 4>(img, p),
        (SampleType::F32, 1 | 3) => floats::<T, false>(img, p, Isa::detect()),
        (SampleType::F32, 4) => floats::<T, true>(img, p, Isa::detect()),
        _ => {
            let table = p.table::<T>();
            let full = T::TYPE.full_scale();
            map_samples(img, |_, s| match &table {
                // Integer samples are table indices (u8 and u16 only have tables).
                Some(t) => t[s.to_f32() as usize],
                None => T::from_f32(p.encode_f32((s.to_f32() / full).max(0.0)) * full),
            })
        }
    }
}

/// u8 into u8: the curve's table for the colours, the identity for alpha.
fn bytes<T: Sample, const C: usize>(img: &Image<T>, p: &GammaParams) -> Result<Image<T>> {
    let not_u8 = || Error::arg("gamma's byte path reads u8 samples");
    let curve: [u8; 256] = p
        .table::<u8>()
        .and_then(|t| t.try_into().ok())
        .ok_or_else(not_u8)?;
    let same: [u8; 256] = std::array::from_fn(|v| v as u8);
    let tables: [[u8; 256]; C] = std::array::from_fn(|c| if C == 4 && c == 3 { same } else { curve });
    let isa = Isa::detect();
    let (w, h) = (img.width(), img.height());
    let n = crate::image::check_shape(w, h, C)?;
    let out = mem::vec_filled(n, |out| {
        let out = mem::cast_uninit_mut::<T, u8>(out).ok_or_else(not_u8)?;
        let done = mem::par_fill(out, w * C, || (), |_, y, dst| {
            let row = mem::cast_slice::<T, u8>(img.row(y)).expect("T is u8");
            lut::map_bytes::<C>(isa, &tables, row, dst)
        });
        mem::cast_slice_mut::<u8, T>(done).ok_or_else(not_u8)
    })?;
    Image::from_vec(w, h, C, out)
}

/// f32: each row through [`Curve::encode_row`], compiled for `isa` (or
/// the best set below it that the CPU runs). `ALPHA`: every fourth sample
/// is copied. Images of [`mem::STREAM_BYTES`] and more are written with
/// stores that bypass the caches.
fn floats<T: Sample, const ALPHA: bool>(img: &Image<T>, p: &GammaParams, isa: Isa) -> Result<Image<T>> {
    let curve = Curve::new(p);
    let (w, h, c) = (img.width(), img.height(), img.channels());
    let stream = w * h * c * 4 >= mem::STREAM_BYTES;
    fill_rows::<T, _>(w, h, c, |y, dst| {
        let src = mem::cast_slice::<T, f32>(img.row(y)).expect("T is f32");
        let dst = mem::cast_uninit_mut::<T, f32>(dst).expect("T is f32");
        let done = isa.vectorize(Row::<ALPHA> {
            curve,
            src,
            dst,
            stream,
        });
        mem::cast_slice_mut::<f32, T>(done).expect("T is f32")
    })
}

/// One row of f32 samples, for [`Isa::vectorize`].
struct Row<'s, 'a, const ALPHA: bool> {
    curve: Curve,
    src: &'s [f32],
    dst: &'a mut [MaybeUninit<f32>],
    stream: bool,
}

impl<'a, const ALPHA: bool> WithSimd for Row<'_, 'a, ALPHA> {
    type Output = &'a mut [f32];

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> &'a mut [f32] {
        let Row {
            curve,
            src,
            dst,
            stream,
        } = self;
        if has_fma(S::ISA) {
            curve.encode_row::<ALPHA, true>(src, dst, stream)
        } else {
            curve.encode_row::<ALPHA, false>(src, dst, stream)
        }
    }
}

/// Whether `isa` has fused multiply-adds (every x86-64 set above the
/// portable one: AVX2 comes with FMA here).
fn has_fma(isa: Isa) -> bool {
    isa > Isa::Portable
}

/// `a b + c`: fused where `FMA` (one rounding; elsewhere `mul_add` would
/// be a library call), else a product and a sum.
#[inline(always)]
fn madd<const FMA: bool>(a: f32, b: f32, c: f32) -> f32 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Samples per step of [`Curve::encode_row`]: a multiple of 4, so that
/// with alpha, lane `i` is alpha where `i % 4 == 3`.
const LANES: usize = 16;

/// Samples made in the cache before they are written out: a multiple of
/// [`LANES`], and enough that each streamed piece's fence is rare.
const PIECE: usize = 32 * LANES;

/// A curve as `slope * L` up to `toe` and `a * L^y + b` above it, in f32:
/// the reference's formula ([`GammaParams::encode_f64`]) with `L^y` as
/// `2^(y log2 L)` from polynomials. `log2 L` is split into its exponent
/// (exact) and the mantissa's logarithm (within a few ulp), and
/// `y log2 L` is rounded once where there is FMA (else twice), so the
/// error is within docs/QUALITY.md's
/// bound: `1.1 * 2^-22` of full scale for `L` within `0..=1`, relative
/// `(4 + 4 ln 2 |y log2 L|) 2^-24` above (the tests measure it).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Curve {
    y: f32,
    a: f32,
    b: f32,
    toe: f32,
    slope: f32,
}

/// The largest f32 that is at most `t` (or below it, with `strict`):
/// comparing an f32 sample with it selects as comparing the sample's f64
/// with `t` does.
fn f32_below(t: f64, strict: bool) -> f32 {
    let f = t as f32;
    let over = if strict { f64::from(f) >= t } else { f64::from(f) > t };
    if over {
        f32::from_bits(f.to_bits() - 1)
    } else {
        f
    }
}

/// `1.5 * 2^23`: adding it to an f32 within `+-2^22` rounds it to an
/// integer (half to even) held in the low bits of the sum.
const MAGIC: f32 = 12_582_912.0;

impl Curve {
    pub(crate) fn new(p: &GammaParams) -> Curve {
        match *p {
            GammaParams::Srgb => Curve {
                y: (1.0 / 2.4) as f32,
                a: 1.055,
                b: -0.055,
                toe: f32_below(0.0031308, false),
                slope: 12.92,
            },
            GammaParams::Rec709 => Curve {
                y: 0.45,
                a: 1.099,
                b: -0.099,
                toe: f32_below(0.018, true),
                slope: 4.5,
            },
            GammaParams::Power(n) => Curve {
                y: (1.0 / f64::from(n)) as f32,
                a: 1.0,
                b: 0.0,
                toe: -1.0,
                slope: 0.0,
            },
        }
    }

    /// `dst[i] = E(max(src[i], 0))` (full scale 1), and with `ALPHA`
    /// every fourth sample copied; `src` and `dst` are one row of whole
    /// pixels, as long as each other. Pieces of [`PIECE`] samples are made
    /// in a buffer, then copied out, with [`mem::write_stream`] if
    /// `stream`. Returns `dst` written.
    #[inline(always)]
    pub(crate) fn encode_row<'d, const ALPHA: bool, const FMA: bool>(
        &self,
        src: &[f32],
        dst: &'d mut [MaybeUninit<f32>],
        stream: bool,
    ) -> &'d mut [f32] {
        let mut out = Filler::new(dst);
        let mut buf = [0f32; PIECE];
        // The last piece and step may be short; they are still whole pixels.
        for s in src.chunks(PIECE) {
            let b = &mut buf[..s.len()];
            for (b, s) in b.chunks_mut(LANES).zip(s.chunks(LANES)) {
                for (i, (d, s)) in b.iter_mut().zip(s).enumerate() {
                    let e = self.encode::<FMA>(*s);
                    *d = if ALPHA && i % 4 == 3 { *s } else { e };
                }
            }
            let piece = out.next(s.len());
            out.commit(match stream {
                true => mem::write_stream(piece, b),
                false => mem::write_copy(piece, b),
            });
        }
        out.finish()
    }

    /// `E(max(v, 0))`: NaN and negative `v` give 0, `+inf` gives `+inf`.
    #[inline(always)]
    fn encode<const FMA: bool>(&self, v: f32) -> f32 {
        // `max` gives the number where `v` is NaN.
        let l = v.max(0.0);
        // Every lane computes every piece; the selects keep the loop
        // free of branches, so that it vectorises.
        let (e, lm) = log2::<FMA>(l);
        // `y e + y lm` with one rounding of the sum where there is FMA.
        let pow = exp2::<FMA>(madd::<FMA>(self.y, e, self.y * lm));
        let pow = if l == 0.0 { 0.0 } else { pow };
        let pow = if l == f32::INFINITY { l } else { pow };
        let (toe, above) = (self.slope * l, madd::<FMA>(self.a, pow, self.b));
        if l <= self.toe {
            toe
        } else {
            above
        }
    }
}

/// `log2(l)` for finite `l > 0` as `(e, log2 m)`, `l = 2^e m` with `m`
/// within `sqrt(1/2)..sqrt(2)` (0 and infinity give finite nonsense,
/// which [`Curve::encode`] replaces). Subnormal `l` are scaled by `2^24`
/// first. `ln m = 2 atanh(s)`, `s = (m - 1) / (m + 1)`, `|s| <= 0.1716`,
/// from its series to `s^9` (the next term is below `3e-9` of it), summed
/// by Estrin's scheme. Integer steps on the bits, which vectorise on every
/// instruction set.
#[inline(always)]
fn log2<const FMA: bool>(l: f32) -> (f32, f32) {
    let tiny = l < f32::MIN_POSITIVE;
    let l = if tiny { l * 16_777_216.0 } else { l };
    let bits = l.to_bits();
    let m = f32::from_bits((bits & 0x007f_ffff) | 1f32.to_bits());
    let big = m > std::f32::consts::SQRT_2;
    let m = if big { 0.5 * m } else { m };
    let bias = if big { 126 } else { 127 } + if tiny { 24 } else { 0 };
    let e = ((bits >> 23) as i32 - bias) as f32;
    let s = (m - 1.0) / (m + 1.0);
    let (s2, two_log2e) = (s * s, 2.0 * std::f32::consts::LOG2_E);
    let s4 = s2 * s2;
    // 1 + s2/3 + s4/5 + s6/7 + s8/9
    let low = madd::<FMA>(s2, 1.0 / 3.0, 1.0);
    let high = madd::<FMA>(s2, 1.0 / 7.0, 1.0 / 5.0);
    let series = madd::<FMA>(s4, madd::<FMA>(s4, 1.0 / 9.0, high), low);
    (e, (s * two_log2e) * series)
}

/// `2^x`, with `x` clamped to `-252..=254` (beyond, the f32 result is 0
/// or infinite anyway): `x = n + f`, `n` the nearest integer, `2^f` from
/// its Taylor series to degree 7 (`|f ln 2| <= 0.35`: the next term is
/// below `6e-9`), summed by Estrin's scheme, then scaled by `2^n` in two
/// halves, each a normal f32, so that results in the subnormal range and
/// past the largest f32 round once.
#[inline(always)]
fn exp2<const FMA: bool>(x: f32) -> f32 {
    use std::f64::consts::LN_2;
    // `(ln 2)^k / k!`, k = 0..=7.
    const C: [f32; 8] = [
        1.0,
        LN_2 as f32,
        (LN_2 * LN_2 / 2.0) as f32,
        (LN_2 * LN_2 * LN_2 / 6.0) as f32,
        (LN_2 * LN_2 * LN_2 * LN_2 / 24.0) as f32,
        (LN_2 * LN_2 * LN_2 * LN_2 * LN_2 / 120.0) as f32,
        (LN_2 * LN_2 * LN_2 * LN_2 * LN_2 * LN_2 / 720.0) as f32,
        (LN_2 * LN_2 * LN_2 * LN_2 * LN_2 * LN_2 * LN_2 / 5_040.0) as f32,
    ];
    let x = x.clamp(-252.0, 254.0);
    let t = x + MAGIC;
    let f = x - (t - MAGIC);
    let q: [f32; 4] = std::array::from_fn(|i| madd::<FMA>(f, C[2 * i + 1], C[2 * i]));
    let f2 = f * f;
    let p = madd::<FMA>(f2 * f2, madd::<FMA>(f2, q[3], q[2]), madd::<FMA>(f2, q[1], q[0]));
    // The low bits of `t` hold `n` above MAGIC's.
    let n = t.to_bits() as i32 - MAGIC.to_bits() as i32;
    p * pow2(n >> 1) * pow2(n - (n >> 1))
}

/// `2^k` for `k` within `-126..=127`, through the exponent field.
#[inline(always)]
fn pow2(k: i32) -> f32 {
    f32::from_bits(((k + 127) << 23) as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/QUALITY.md's bound for `E(l)` (`want`, the f64 formula):
    /// `1.1 * 2^-22` of full scale within `0..=1`; above, relative
    /// `(4 + 4 ln 2 |y log2 l|) 2^-24`.
    fn bound(c: &Curve, l: f64, want: f64) -> f64 {
        if l <= 1.0 {
            1.1 * 2f64.powi(-22)
        } else {
            let t = f64::from(c.y) * l.log2();
            (4.0 + 4.0 * std::f64::consts::LN_2 * t.abs()) * 2f64.powi(-24) * want.abs()
        }
    }

    /// The vectorised f32 path against the f64 formula (`powf`): within
    /// the stated bound on every instruction set, over the whole f32
    /// range, the toes' ends, zero, subnormals, NaN, infinities and odd
    /// row lengths with and without alpha; each instruction set's bits
    /// equal the same arithmetic one sample at a time.
    #[test]
    fn floats_match_the_formula_on_every_instruction_set() {
        let mut rng = crate::test_rng::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64();
        let mut samples: Vec<f32> = vec![
            0.0, -0.0, -1.0, 1.0, 0.5, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX,
            f32::MIN_POSITIVE, 1e-45, 3e-39, 0.0031308, 0.018, f32::from_bits(0.018f32.to_bits() - 1), 300.0, 1e30,
        ];
        samples.extend((0..6000).map(|i| match i % 4 {
            0 => (next() % 1_000_000) as f32 / 999_999.0,
            1 => f32::from_bits(next() as u32 & 0x7fff_ffff),
            2 => f32::from_bits(0x3f80_0000 - (next() % 0x0080_0000) as u32),
            _ => (next() % 65536) as f32 / 65535.0 * 300.0,
        }));
        let curves = [
            GammaParams::Srgb,
            GammaParams::Rec709,
            GammaParams::Power(2.2),
            GammaParams::Power(0.1),
            GammaParams::Power(10.0),
        ];
        for p in curves {
            let c = Curve::new(&p);
            let mut worst = 0f64;
            for &v in &samples {
                let l = f64::from(v).max(0.0);
                let want = p.encode_f64(l);
                for got in [c.encode::<false>(v), c.encode::<true>(v)] {
                    // Past f32's range only the f32 results need to agree.
                    let err = (f64::from(got) - want).abs();
                    assert!(
                        got == want as f32 || err <= bound(&c, l, want),
                        "{p:?} {v:e}: {got:e} vs {want:e}"
                    );
                    if got != want as f32 {
                        worst = worst.max(err / bound(&c, l, want));
                    }
                }
            }
            // The bound is not loose by an order of magnitude.
            assert!(worst > 0.1, "{p:?}: worst {worst}");
            for isa in Isa::available() {
                for (w, ch) in [(1, 1), (7, 3), (13, 4), (101, 3), (37, 4), (1000, 1)] {
                    let img = Image::from_fn(w, 3, ch, |x, y, c| samples[(y * w + x) * ch + c]).unwrap();
                    let got = if ch == 4 {
                        floats::<f32, true>(&img, &p, isa)
                    } else {
                        floats::<f32, false>(&img, &p, isa)
                    }
                    .unwrap();
                    for y in 0..3 {
                        for x in 0..w {
                            for k in 0..ch {
                                let s = img.get(x, y, k);
                                // The vectors' arithmetic, one sample at a time
                                // (`mul_add` rounds once, as the FMA does).
                                let e = match has_fma(isa) {
                                    true => c.encode::<true>(s),
                                    false => c.encode::<false>(s),
                                };
                                let want = if ch == 4 && k == 3 { s } else { e };
                                let g = got.get(x, y, k);
                                assert!(
                                    g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()),
                                    "{p:?} {isa:?} {w}x3x{ch} ({x}, {y}, {k}): {g} vs {want}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }

    /// Rows written past the caches hold the same samples as rows written
    /// through them, on rows of several pieces and odd lengths, with and
    /// without alpha.
    #[test]
    fn streamed_rows_equal_cached_rows() {
        let c = Curve::new(&GammaParams::Srgb);
        for n in [4, 12, 516, 1036, 2048 + 12] {
            let src: Vec<f32> = (0..n).map(|i| (i * 7919 % 1000) as f32 / 997.0).collect();
            let (mut a, mut b) = (vec![MaybeUninit::uninit(); n], vec![MaybeUninit::uninit(); n]);
            let plain = c.encode_row::<false, false>(&src, &mut a, false).to_vec();
            assert_eq!(plain, c.encode_row::<false, false>(&src, &mut b, true), "{n}");
            let plain = c.encode_row::<true, true>(&src, &mut a, false).to_vec();
            assert_eq!(plain, c.encode_row::<true, true>(&src, &mut b, true), "{n}");
            assert!(plain.iter().zip(&src).skip(3).step_by(4).all(|(o, s)| o == s), "{n}: alpha");
        }
    }

    /// u8 through the byte tables equals the table looked up one sample at
    /// a time, alpha copied, on odd sizes.
    #[test]
    fn bytes_equal_the_table() {
        for ch in [1, 3, 4] {
            for (w, h) in [(1, 1), (1, 9), (9, 1), (67, 5), (131, 3)] {
                let img = Image::<u8>::from_fn(w, h, ch, |x, y, c| (x * 37 + y * 11 + c * 101) as u8).unwrap();
                for p in [GammaParams::Srgb, GammaParams::Power(2.2)] {
                    let t = p.table::<u8>().unwrap();
                    let got = gamma(&img, &p).unwrap();
                    for (x, y, c) in (0..h).flat_map(|y| (0..w).flat_map(move |x| (0..ch).map(move |c| (x, y, c)))) {
                        let s = img.get(x, y, c);
                        let want = if ch == 4 && c == 3 { s } else { t[s as usize] };
                        assert_eq!(got.get(x, y, c), want, "{p:?} {w}x{h}x{ch} ({x}, {y}, {c})");
                    }
                }
            }
        }
    }
}
