//! The rayon encoding: rows in parallel. u8 through the table of every
//! value's result, 64 samples per AVX-512 VBMI byte permute where the CPU
//! has them ([`lut::map_bytes`]); u16 through its table one sample at a
//! time; f32 through the curve evaluated in f64 (`Curve`), written so
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
/// is copied.
fn floats<T: Sample, const ALPHA: bool>(img: &Image<T>, p: &GammaParams, isa: Isa) -> Result<Image<T>> {
    let curve = Curve::new(p);
    let (w, h, c) = (img.width(), img.height(), img.channels());
    fill_rows::<T, _>(w, h, c, |y, dst| {
        let src = mem::cast_slice::<T, f32>(img.row(y)).expect("T is f32");
        let dst = mem::cast_uninit_mut::<T, f32>(dst).expect("T is f32");
        let done = isa.vectorize(Row::<ALPHA> { curve, src, dst });
        mem::cast_slice_mut::<f32, T>(done).expect("T is f32")
    })
}

/// One row of f32 samples, for [`Isa::vectorize`].
struct Row<'s, 'a, const ALPHA: bool> {
    curve: Curve,
    src: &'s [f32],
    dst: &'a mut [MaybeUninit<f32>],
}

impl<'a, const ALPHA: bool> WithSimd for Row<'_, 'a, ALPHA> {
    type Output = &'a mut [f32];

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> &'a mut [f32] {
        if has_fma(S::ISA) {
            self.curve.encode_row::<ALPHA, true>(self.src, self.dst)
        } else {
            self.curve.encode_row::<ALPHA, false>(self.src, self.dst)
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
fn madd<const FMA: bool>(a: f64, b: f64, c: f64) -> f64 {
    if FMA {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

/// Samples per step of [`Curve::encode_row`]: a multiple of 4, so that
/// with alpha, lane `i` is alpha where `i % 4 == 3`.
const LANES: usize = 16;

/// A curve as `slope * L` up to `toe` and `a * L^y + b` above it, in f64:
/// the reference's formula ([`GammaParams::encode_f64`]) with `L^y` as
/// `2^(y log2 L)` from polynomials, within 1e-12 relative of `powf`
/// (the tests' bound), so the result is the f64 formula's rounded to f32 but where
/// that lies within 1e-12 of a tie between two f32 values.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Curve {
    y: f64,
    a: f64,
    b: f64,
    toe: f64,
    slope: f64,
}

/// `1.5 * 2^52`: adding it to an f64 within `+-2^51` rounds it to an
/// integer (half to even) held in the low bits of the sum.
const MAGIC: f64 = 6_755_399_441_055_744.0;

impl Curve {
    pub(crate) fn new(p: &GammaParams) -> Curve {
        match *p {
            GammaParams::Srgb => Curve {
                y: 1.0 / 2.4,
                a: 1.055,
                b: -0.055,
                toe: 0.0031308,
                slope: 12.92,
            },
            // `L < 0.018`: the f64 below 0.018 is the last one on the toe.
            GammaParams::Rec709 => Curve {
                y: 0.45,
                a: 1.099,
                b: -0.099,
                toe: f64::from_bits(0.018f64.to_bits() - 1),
                slope: 4.5,
            },
            GammaParams::Power(n) => Curve {
                y: 1.0 / f64::from(n),
                a: 1.0,
                b: 0.0,
                toe: -1.0,
                slope: 0.0,
            },
        }
    }

    /// `dst[i] = E(max(src[i], 0))` (full scale 1), and with `ALPHA`
    /// every fourth sample copied; `src` and `dst` are one row of whole
    /// pixels, as long as each other. Returns `dst` written.
    #[inline(always)]
    pub(crate) fn encode_row<'d, const ALPHA: bool, const FMA: bool>(
        &self,
        src: &[f32],
        dst: &'d mut [MaybeUninit<f32>],
    ) -> &'d mut [f32] {
        let mut out = Filler::new(dst);
        let mut buf = [0f32; LANES];
        // The last step may be short; it is still whole pixels.
        for s in src.chunks(LANES) {
            for (i, (d, s)) in buf.iter_mut().zip(s).enumerate() {
                let e = self.encode::<FMA>(f64::from(*s)) as f32;
                *d = if ALPHA && i % 4 == 3 { *s } else { e };
            }
            let piece = out.next(s.len());
            out.commit(mem::write_copy(piece, &buf[..s.len()]));
        }
        out.finish()
    }

    /// `E(max(v, 0))`: NaN and negative `v` give 0, `+inf` gives `+inf`.
    #[inline(always)]
    fn encode<const FMA: bool>(&self, v: f64) -> f64 {
        // `max` gives the number where `v` is NaN.
        let l = v.max(0.0);
        // Every lane computes every piece; the selects keep the loop
        // free of branches, so that it vectorises.
        let pow = exp2::<FMA>(self.y * log2::<FMA>(l));
        let pow = if l == 0.0 { 0.0 } else { pow };
        let pow = if l == f64::INFINITY { l } else { pow };
        let (toe, above) = (self.slope * l, madd::<FMA>(self.a, pow, self.b));
        if l <= self.toe {
            toe
        } else {
            above
        }
    }
}

/// `log2(l)` for finite `l > 0` (0 and infinity give finite nonsense,
/// which [`Curve::encode`] replaces): `l = 2^e m` with `m` within
/// `sqrt(1/2)..sqrt(2)`, and `ln m = 2 atanh(s)`, `s = (m - 1) / (m + 1)`,
/// `|s| <= 0.1716`, from its series to `s^15` (the next term is below
/// 1e-14 of it). Integer steps through bits and `MAGIC`, which vectorise
/// without AVX-512DQ's conversions. The series is summed by Estrin's
/// scheme (pairs, then pairs of pairs): four dependent steps instead of
/// Horner's eight, for a loop that waited on these chains (with FMA,
/// 11-20% off 4K RGB on one AVX2 core, docs/PERFORMANCE.md).
#[inline(always)]
fn log2<const FMA: bool>(l: f64) -> f64 {
    const MANTISSA: u64 = (1 << 52) - 1;
    let bits = l.to_bits();
    let m = f64::from_bits((bits & MANTISSA) | 1f64.to_bits());
    // The biased exponent, as an f64, through the low bits of 2^52.
    let biased = f64::from_bits((bits >> 52) | 4_503_599_627_370_496f64.to_bits()) - 4_503_599_627_370_496.0;
    let big = m > std::f64::consts::SQRT_2;
    let m = if big { 0.5 * m } else { m };
    let e = biased - if big { 1022.0 } else { 1023.0 };
    let s = (m - 1.0) / (m + 1.0);
    let s2 = s * s;
    // sum over k = 0..=7 of s2^k / (2 k + 1).
    let s4 = s2 * s2;
    let low = madd::<FMA>(s4, madd::<FMA>(s2, 1.0 / 7.0, 1.0 / 5.0), madd::<FMA>(s2, 1.0 / 3.0, 1.0));
    let high = madd::<FMA>(s4, madd::<FMA>(s2, 1.0 / 15.0, 1.0 / 13.0), madd::<FMA>(s2, 1.0 / 11.0, 1.0 / 9.0));
    let series = madd::<FMA>(s4 * s4, high, low);
    madd::<FMA>(2.0 * s * series, std::f64::consts::LOG2_E, e)
}

/// `2^x`, with `x` clamped to `-1000..=1000` (beyond, the f32 result is 0
/// or infinite anyway): `x = n + f`, `n` the nearest integer, `2^f` from
/// its Taylor series to degree 11 (`|f ln 2| <= 0.35`: the next term is
/// below 1e-14), summed by Estrin's scheme as in [`log2`], and `n` put
/// into the exponent.
#[inline(always)]
fn exp2<const FMA: bool>(x: f64) -> f64 {
    let x = x.clamp(-1000.0, 1000.0);
    let t = x + MAGIC;
    let n = t - MAGIC;
    let f = (x - n) * std::f64::consts::LN_2;
    // 1/k! for k = 0..=11, as pairs `1/(2i)! + f / (2i + 1)!`.
    const C: [f64; 12] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5_040.0,
        1.0 / 40_320.0,
        1.0 / 362_880.0,
        1.0 / 3_628_800.0,
        1.0 / 39_916_800.0,
    ];
    let q: [f64; 6] = std::array::from_fn(|i| madd::<FMA>(f, C[2 * i + 1], C[2 * i]));
    let f2 = f * f;
    let f4 = f2 * f2;
    let r0 = madd::<FMA>(f2, q[1], q[0]);
    let r1 = madd::<FMA>(f2, q[3], q[2]);
    let r2 = madd::<FMA>(f2, q[5], q[4]);
    let p = madd::<FMA>(f4 * f4, r2, madd::<FMA>(f4, r1, r0));
    // The low bits of `t` hold `n` (two's complement); shifting `n + 1023`
    // into the exponent field drops MAGIC's bits.
    let scale = f64::from_bits(t.to_bits().wrapping_add(1023) << 52);
    p * scale
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The vectorised f32 path against the f64 formula (`powf`): within
    /// 1e-12 relative before the f32 rounding, on every instruction set,
    /// over the whole f32 range, the toes' ends, zero, NaN, infinities and
    /// odd row lengths with and without alpha.
    #[test]
    fn floats_match_the_formula_on_every_instruction_set() {
        let mut rng = crate::test_rng::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64();
        let mut samples: Vec<f32> = vec![
            0.0, -0.0, -1.0, 1.0, 0.5, f32::NAN, f32::INFINITY, f32::NEG_INFINITY, f32::MAX,
            f32::MIN_POSITIVE, 1e-45, 0.0031308, 0.018, f32::from_bits(0.018f32.to_bits() - 1), 300.0, 1e30,
        ];
        samples.extend((0..4000).map(|i| match i % 3 {
            0 => (next() % 1_000_000) as f32 / 999_999.0,
            1 => f32::from_bits(next() as u32 & 0x7fff_ffff),
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
            for &v in &samples {
                let want = p.encode_f64(f64::from(v).max(0.0));
                for got in [c.encode::<false>(f64::from(v)), c.encode::<true>(f64::from(v))] {
                    // Past f32's range only the f32 results need to agree.
                    let ok = got as f32 == want as f32 || (got - want).abs() <= 1e-12 * want.abs();
                    assert!(ok, "{p:?} {v:e}: {got:e} vs {want:e}");
                }
            }
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
                                    true => c.encode::<true>(f64::from(s)),
                                    false => c.encode::<false>(f64::from(s)),
                                };
                                let want = if ch == 4 && k == 3 { s } else { e as f32 };
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
