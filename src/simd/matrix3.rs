//! A 3x3 matrix on interleaved RGB pixels ([`rgb`]): AVX2 blends and lane
//! permutes split 8 pixels into a vector per colour and join them back
//! (AVX-512F: 16 pixels, two-source permutes; [`super::x86`]); elsewhere
//! the caller keeps its own code.

use std::mem::MaybeUninit;

use super::{mem, Isa, Narrow};

/// `M * (r, g, b)` of every RGB pixel of `src` (whole pixels) into `dst`
/// (as long), each output summed left to right without fused products
/// (`m[0] r + m[1] g + m[2] b` for the first) and narrowed by
/// [`Narrow::narrow`]: returns `dst` written. With `isa` at [`Isa::Avx2`]
/// or above on a CPU with AVX2, for u8, u16 and f32 samples, groups of 8
/// pixels (16 first at [`Isa::Avx512`]) go through vectors and the last
/// few pixels one by one; anywhere else nothing is written and `dst` comes
/// back as `Err`. The samples are the same either way. `stream` asks for
/// stores that bypass the caches, for outputs far larger than them (f32
/// with AVX2 below [`Isa::Avx512`]; elsewhere it changes nothing).
pub fn rgb<'d, X: Narrow>(
    isa: Isa,
    m: &[f32; 9],
    src: &[X],
    dst: &'d mut [MaybeUninit<X>],
    stream: bool,
) -> Result<&'d mut [X], &'d mut [MaybeUninit<X>]> {
    assert!(
        src.len() == dst.len() && src.len().is_multiple_of(3),
        "matrix3::rgb: lengths differ or are not whole pixels"
    );
    #[cfg(target_arch = "x86_64")]
    let done = if isa >= Isa::Avx2 {
        super::x86::matrix3_groups(m, src, dst, isa >= Isa::Avx512, stream)
    } else {
        0
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = {
        let _ = (isa, stream);
        0
    };
    if done == 0 && !src.is_empty() {
        return Err(dst);
    }
    mem::write_pixels(&mut dst[done..], &src[done..], |[r, g, b]: [X; 3]| {
        let v = [r.to_f32(), g.to_f32(), b.to_f32()];
        std::array::from_fn(|i| {
            X::narrow(m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2])
        })
    });
    // SAFETY: `matrix3_groups` wrote `dst[..done]` (it returns how many
    // samples it wrote, from the start), and `write_pixels` the rest.
    Ok(unsafe { mem::assume_init_mut(dst) })
}

/// [`rgb`] on RGBA pixels (`src` whole pixels of 4 samples), alpha
/// copied: with `isa` at [`Isa::Avx2`] or above on a CPU with AVX2, groups
/// of 6 pixels through vectors and the last few one by one; anywhere else
/// nothing is written and `dst` comes back as `Err`.
pub fn rgba<'d, X: Narrow>(
    isa: Isa,
    m: &[f32; 9],
    src: &[X],
    dst: &'d mut [MaybeUninit<X>],
) -> Result<&'d mut [X], &'d mut [MaybeUninit<X>]> {
    assert!(
        src.len() == dst.len() && src.len().is_multiple_of(4),
        "matrix3::rgba: lengths differ or are not whole pixels"
    );
    #[cfg(target_arch = "x86_64")]
    let done = match isa >= Isa::Avx2 {
        true => super::x86::matrix3_groups4(m, src, dst),
        false => 0,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = {
        let _ = isa;
        0
    };
    if done == 0 && !src.is_empty() {
        return Err(dst);
    }
    mem::write_pixels(&mut dst[done..], &src[done..], |[r, g, b, a]: [X; 4]| {
        let v = [r.to_f32(), g.to_f32(), b.to_f32()];
        let o = |i: usize| X::narrow(m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2]);
        [o(0), o(1), o(2), a]
    });
    // SAFETY: `matrix3_groups4` wrote `dst[..done]` (it returns how many
    // samples it wrote, from the start), and `write_pixels` the rest.
    Ok(unsafe { mem::assume_init_mut(dst) })
}

/// Finest and coarsest fixed-point scales [`Fixed`] takes: at `2^-10`
/// the coefficients' rounding moves an output by at most
/// `3 * 255 * 2^-11 < 0.374`, so the rounded result stays within 1 of the
/// f32 arithmetic's; with 16-bit coefficients, that admits magnitudes up to
/// 31.99.
const SHIFTS: std::ops::RangeInclusive<u32> = 10..=14;

/// A 3x3 matrix in fixed point for u8 samples: `q = round(m 2^shift)` as
/// i16, with the largest `shift` in 10..=14 that fits every coefficient.
/// An output is `(q0 r + q1 g + q2 b + 2^(shift - 1)) >> shift` in i32,
/// clamped to 0..=255 (half rounds up), which differs from the f32
/// arithmetic's rounded result by at most 1 and from the exact value by at
/// most `0.5 + (r + g + b) 2^-(shift + 1)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fixed {
    q: [i16; 9],
    shift: u32,
    /// The vector kernel's constants, made once here rather than per row.
    #[cfg(target_arch = "x86_64")]
    tables: super::x86::Matrix3Tables,
}

impl Fixed {
    /// `m` in fixed point, or `None` where a coefficient is not finite or
    /// above 31.99 in magnitude (those keep the f32 arithmetic).
    pub fn new(m: &[f32; 9]) -> Option<Fixed> {
        SHIFTS.rev().find_map(|shift| {
            let q = m.map(|v| (f64::from(v) * f64::from(1u32 << shift)).round());
            q.iter().all(|v| v.abs() <= f64::from(i16::MAX)).then(|| {
                let q = q.map(|v| v as i16);
                Fixed {
                    q,
                    shift,
                    #[cfg(target_arch = "x86_64")]
                    tables: super::x86::Matrix3Tables::new(&q, shift),
                }
            })
        })
    }

    /// The fixed-point scale: coefficients are multiples of `2^-shift`.
    pub fn shift(&self) -> u32 {
        self.shift
    }

    /// One pixel through the matrix.
    pub fn apply(&self, px: [u8; 3]) -> [u8; 3] {
        let v = px.map(i32::from);
        std::array::from_fn(|k| {
            let q = |c: usize| i32::from(self.q[3 * k + c]);
            let s = q(0) * v[0] + q(1) * v[1] + q(2) * v[2] + (1 << (self.shift - 1));
            (s >> self.shift).clamp(0, 255) as u8
        })
    }
}

/// Whether [`rgb_fixed`] has vector code for `isa` on this CPU: at
/// [`Isa::Avx2`] or above with AVX2 (32 pixels a step; 16 at
/// [`Isa::Avx512`] with AVX-512BW and VBMI).
pub fn has_fixed(isa: Isa) -> bool {
    #[cfg(target_arch = "x86_64")]
    return isa >= Isa::Avx2 && super::x86::Avx2::try_new().is_some();
    #[cfg(not(target_arch = "x86_64"))]
    {
        let _ = isa;
        false
    }
}

/// [`Fixed::apply`] on every RGB pixel of `src` (whole pixels) into `dst`
/// (as long): returns `dst` written. Where [`has_fixed`] says so, groups of
/// 32 pixels (16 with AVX-512 VBMI) go through vectors and the rest one by
/// one; anywhere else every pixel one by one. The samples are the same
/// either way.
pub fn rgb_fixed<'d>(
    isa: Isa,
    f: &Fixed,
    src: &[u8],
    dst: &'d mut [MaybeUninit<u8>],
) -> &'d mut [u8] {
    assert!(
        src.len() == dst.len() && src.len().is_multiple_of(3),
        "matrix3::rgb_fixed: lengths differ or are not whole pixels"
    );
    #[cfg(target_arch = "x86_64")]
    let done = match has_fixed(isa) {
        true => {
            let wide = isa >= Isa::Avx512;
            super::x86::matrix3_fixed_groups(&f.tables, f.shift, src, dst, wide)
        }
        false => 0,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = {
        let _ = isa;
        0
    };
    mem::write_pixels(&mut dst[done..], &src[done..], |px: [u8; 3]| f.apply(px));
    // SAFETY: `matrix3_fixed_groups` wrote `dst[..done]` (it returns how
    // many samples it wrote, from the start), and `write_pixels` the rest.
    unsafe { mem::assume_init_mut(dst) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every instruction set with vector code gives the scalar arithmetic
    /// through `from_f32`, bit for bit, on random samples of each type
    /// (f32 with NaN, infinities and negatives; integers that saturate at
    /// both ends), for pixel counts around whole groups of 8, primes
    /// included; the others decline (`Err`), as does a row under 8 pixels.
    #[test]
    fn vectors_give_the_scalar_arithmetic() {
        let mut rng = crate::test_rng::Rng::new(0x2545_f491_4f6c_dd1d);
        let mut next = move || rng.next_u64();
        let ms = [
            [1.72, -0.52, -0.2, -0.26, 1.58, -0.32, 0.04, -0.62, 1.58],
            [-3.1, 7.5, 0.25, 64.0, -64.0, 1.0, 0.0, 0.5, -0.001],
        ];
        for px in [
            1, 2, 7, 8, 9, 13, 16, 17, 23, 24, 25, 31, 32, 33, 40, 47, 48, 49, 131, 1009,
        ] {
            let u8s: Vec<u8> = (0..3 * px).map(|_| next() as u8).collect();
            let u16s: Vec<u16> = (0..3 * px).map(|_| next() as u16).collect();
            let f32s: Vec<f32> = (0..3 * px)
                .map(|_| match next() % 40 {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    2 => f32::NEG_INFINITY,
                    _ => (next() % 40_000) as f32 / 10_000.0 - 1.0,
                })
                .collect();
            for m in &ms {
                for isa in Isa::available() {
                    same(isa, m, &u8s);
                    same(isa, m, &u16s);
                    same(isa, m, &f32s);
                }
            }
        }
    }

    fn same<X: Narrow>(isa: Isa, m: &[f32; 9], src: &[X]) {
        same_rgba(isa, m, &src[..src.len() / 12 * 12]);
        for stream in [false, true] {
            // Every alignment of the output, for the streaming stores.
            for at in 0..8 {
                same_at(isa, m, src, stream, at);
            }
        }
    }

    fn same_at<X: Narrow>(isa: Isa, m: &[f32; 9], src: &[X], stream: bool, at: usize) {
        let mut buf = vec![MaybeUninit::new(X::default()); src.len() + at];
        let dst = &mut buf[at..];
        let vectors = cfg!(target_arch = "x86_64") && isa >= Isa::Avx2 && src.len() >= 24;
        let got = match rgb(isa, m, src, dst, stream) {
            Ok(got) => got,
            Err(_) => return assert!(!vectors, "{isa:?} {} declined {}", X::TYPE, src.len()),
        };
        assert!(vectors, "{isa:?} {} took {}", X::TYPE, src.len());
        for (i, (g, s)) in got.chunks_exact(3).zip(src.chunks_exact(3)).enumerate() {
            let v = [s[0].to_f32(), s[1].to_f32(), s[2].to_f32()];
            for k in 0..3 {
                let want = X::from_f32(m[3 * k] * v[0] + m[3 * k + 1] * v[1] + m[3 * k + 2] * v[2]);
                assert!(
                    g[k].to_f32().to_bits() == want.to_f32().to_bits(),
                    "{isa:?} {} {} pixels, pixel {i} colour {k}: {:?} vs {want:?}",
                    X::TYPE,
                    src.len() / 3,
                    g[k]
                );
            }
        }
    }

    /// [`rgba`]: the scalar arithmetic on colours, alpha bit for bit; vectors
    /// from 6 pixels.
    fn same_rgba<X: Narrow>(isa: Isa, m: &[f32; 9], src: &[X]) {
        let mut dst = vec![MaybeUninit::new(X::default()); src.len()];
        let vectors = cfg!(target_arch = "x86_64") && isa >= Isa::Avx2 && src.len() >= 24;
        let got = match rgba(isa, m, src, &mut dst) {
            Ok(got) => got,
            Err(_) => return assert!(!vectors, "{isa:?} {} declined RGBA {}", X::TYPE, src.len()),
        };
        // An empty row comes back written whatever the instruction set.
        assert!(
            vectors || src.is_empty(),
            "{isa:?} {} took RGBA {}",
            X::TYPE,
            src.len()
        );
        for (i, (g, s)) in got.chunks_exact(4).zip(src.chunks_exact(4)).enumerate() {
            let v = [s[0].to_f32(), s[1].to_f32(), s[2].to_f32()];
            for k in 0..4 {
                let want = match k {
                    3 => s[3],
                    _ => X::from_f32(m[3 * k] * v[0] + m[3 * k + 1] * v[1] + m[3 * k + 2] * v[2]),
                };
                assert!(
                    g[k].to_f32().to_bits() == want.to_f32().to_bits(),
                    "{isa:?} {} RGBA pixel {i} channel {k}: {:?} vs {want:?}",
                    X::TYPE,
                    g[k]
                );
            }
        }
    }

    /// The fixed-point matrix: vectors give [`Fixed::apply`] exactly (every
    /// instruction set, pixel counts around whole steps of 16 and 32,
    /// primes),
    /// which is within 1 of the f32 arithmetic rounded and within
    /// `0.5 + (r + g + b) 2^-(shift + 1)` of the exact value, on random
    /// pixels and the extremes (0 and 255 in every combination), for
    /// matrices at the coarsest scale and ones that saturate both ways.
    #[test]
    fn fixed_point_is_within_one_of_the_f32_arithmetic() {
        let mut rng = crate::test_rng::Rng::new(0x5851_f42d_4c95_7f2d);
        let mut next = move || rng.next_u64();
        let ms = [
            [1.72, -0.52, -0.2, -0.26, 1.58, -0.32, 0.04, -0.62, 1.58],
            [
                31.99,
                -31.99,
                0.3,
                -0.001,
                17.3,
                -5.5,
                1.0 / 3.0,
                1.0 / 3.0,
                1.0 / 3.0,
            ],
            [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0],
            [-1.0, 0.0, 0.0, 2.5, 2.5, 2.5, 0.0, 0.0, 0.0],
        ];
        let corners: Vec<u8> = (0..8)
            .flat_map(|c: u8| [0, 1, 2].map(|b| 255 * ((c >> b) & 1)))
            .collect();
        for px in [
            0, 1, 2, 8, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 65, 95, 96, 97, 131, 1009,
        ] {
            let mut src: Vec<u8> = (0..3 * px).map(|_| next() as u8).collect();
            let k = corners.len().min(src.len());
            src[..k].copy_from_slice(&corners[..k]);
            for m in &ms {
                let f = Fixed::new(m).expect("coefficients within 31.99");
                for isa in Isa::available() {
                    let mut dst = vec![MaybeUninit::new(0u8); src.len()];
                    let got = rgb_fixed(isa, &f, &src, &mut dst);
                    for (g, s) in got.chunks_exact(3).zip(src.chunks_exact(3)) {
                        let s: [u8; 3] = s.try_into().unwrap();
                        assert_eq!(g, f.apply(s), "{isa:?} {px} pixels {m:?} {s:?}");
                        let v = s.map(f32::from);
                        let slack = f64::from(s.map(u32::from).iter().sum::<u32>())
                            / f64::from(2u32 << f.shift());
                        for k in 0..3 {
                            let f32s = <u8 as crate::image::Sample>::from_f32(
                                m[3 * k] * v[0] + m[3 * k + 1] * v[1] + m[3 * k + 2] * v[2],
                            );
                            assert!(
                                g[k].abs_diff(f32s) <= 1,
                                "{isa:?} {m:?} {s:?} {k}: {} vs {f32s}",
                                g[k]
                            );
                            let exact: f64 = (0..3)
                                .map(|c| f64::from(m[3 * k + c]) * f64::from(v[c]))
                                .sum();
                            let err = (f64::from(g[k]) - exact.clamp(0.0, 255.0)).abs();
                            assert!(err <= 0.5 + slack, "{m:?} {s:?} {k}: {} vs {exact}", g[k]);
                        }
                    }
                }
            }
        }
        assert_eq!(Fixed::new(&ms[0]).map(|f| f.shift()), Some(14));
        assert_eq!(Fixed::new(&ms[1]).map(|f| f.shift()), Some(10));
        assert!(Fixed::new(&[32.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).is_none());
        assert!(Fixed::new(&[f32::NAN, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).is_none());
    }
}
