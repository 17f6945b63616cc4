//! A 3x3 matrix on interleaved RGB pixels ([`rgb`]): AVX2 blends and lane
//! permutes split 8 pixels into a vector per colour and join them back
//! ([`super::x86`]); elsewhere the caller keeps its own code.

use std::mem::MaybeUninit;

use super::{mem, Isa, Narrow};

/// `M * (r, g, b)` of every RGB pixel of `src` (whole pixels) into `dst`
/// (as long), each output summed left to right without fused products
/// (`m[0] r + m[1] g + m[2] b` for the first) and narrowed by
/// [`Narrow::narrow`]: returns `dst` written. With `isa` at [`Isa::Avx2`]
/// or above on a CPU with AVX2, for u8, u16 and f32 samples, groups of 8
/// pixels go through vectors and the last few pixels one by one; anywhere
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
        super::x86::matrix3_groups(m, src, dst)
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
        std::array::from_fn(|i| X::narrow(m[3 * i] * v[0] + m[3 * i + 1] * v[1] + m[3 * i + 2] * v[2]))
    });
    // SAFETY: `matrix3_groups` wrote `dst[..done]` (it returns how many
    // samples it wrote, from the start), and `write_pixels` the rest.
    Ok(unsafe { mem::assume_init_mut(dst) })
}
