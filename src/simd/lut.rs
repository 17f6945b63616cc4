//! Byte lookup tables over interleaved channels ([`map_bytes`]): AVX-512
//! VBMI byte permutes where the CPU has them (64 samples per table in a
//! few instructions), AVX2 byte shuffles (32 samples per table in 16
//! shuffles and 15 blends; both in `super::x86`), one sample at a time
//! elsewhere.

use std::mem::MaybeUninit;

use super::{mem, Isa};

/// `dst[i] = tables[i % C][src[i]]` (`src` starts on a pixel of `C`
/// channels and holds whole pixels; `dst` is as long): writes `dst` and
/// returns it. With `isa` at [`Isa::Avx512`] or above on a CPU with AVX-512
/// VBMI, whole groups of `64 C` samples go through byte permutes; with
/// [`Isa::Avx2`] or above, the whole groups of `32 C` left through byte
/// shuffles; the rest, and every sample elsewhere, through the tables one
/// by one. The result is the same either way.
pub fn map_bytes<'d, const C: usize>(
    isa: Isa,
    tables: &[[u8; 256]; C],
    src: &[u8],
    dst: &'d mut [MaybeUninit<u8>],
) -> &'d mut [u8] {
    assert!(
        src.len() == dst.len() && src.len().is_multiple_of(C),
        "map_bytes: lengths differ or are not whole pixels"
    );
    #[cfg(target_arch = "x86_64")]
    let done = {
        let mut done = 0;
        if isa >= Isa::Avx512 {
            done = super::x86::map_bytes_vbmi::<C>(tables, src, dst);
        }
        if isa >= Isa::Avx2 {
            done += super::x86::map_bytes_avx2::<C>(tables, &src[done..], &mut dst[done..]);
        }
        done
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = {
        let _ = isa;
        0
    };
    mem::write_pixels(&mut dst[done..], &src[done..], |px: [u8; C]| {
        std::array::from_fn(|c| tables[c][px[c] as usize])
    });
    // SAFETY: `map_bytes_vbmi` and then `map_bytes_avx2` wrote
    // `dst[..done]` (each returns how many samples it wrote, from where it
    // started), and `write_pixels` the rest.
    unsafe { mem::assume_init_mut(dst) }
}
