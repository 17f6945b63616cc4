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
/// pixels (16 first at [`Isa::Avx512`]) go through vectors and the last few pixels one by one; anywhere
/// else nothing is written and `dst` comes back as `Err`. The samples are
/// the same either way.
pub fn rgb<'d, X: Narrow>(
    isa: Isa,
    m: &[f32; 9],
    src: &[X],
    dst: &'d mut [MaybeUninit<X>],
) -> Result<&'d mut [X], &'d mut [MaybeUninit<X>]> {
    assert!(
        src.len() == dst.len() && src.len().is_multiple_of(3),
        "matrix3::rgb: lengths differ or are not whole pixels"
    );
    #[cfg(target_arch = "x86_64")]
    let done = if isa >= Isa::Avx2 {
        super::x86::matrix3_groups(m, src, dst, isa >= Isa::Avx512)
    } else {
        0
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = {
        let _ = isa;
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
        let mut dst = vec![MaybeUninit::new(X::default()); src.len()];
        let vectors = cfg!(target_arch = "x86_64") && isa >= Isa::Avx2 && src.len() >= 24;
        let got = match rgb(isa, m, src, &mut dst) {
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
}
