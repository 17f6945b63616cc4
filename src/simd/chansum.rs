//! Exact per-channel sums of u8 rows ([`byte_row_sums`]): AVX2's `vpsadbw`
//! where the CPU has it ([`super::x86`]; also with AVX-512, as the rows
//! the callers sum are a few KB and the 256-bit kernels keep up with the
//! caches), [`super::widen::byte_sums`]' u32 lanes elsewhere and for the
//! remainders.

use super::Isa;

/// Per-channel sums of a row of pixels of `C` u8 channels (`row` holds
/// whole pixels; `C` is 1, 3 or 4), exact. With `isa` at [`Isa::Avx2`] or
/// above, whole steps of 96 (RGB) or 128 bytes go through `vpsadbw`.
pub fn byte_row_sums<const C: usize>(isa: Isa, row: &[u8]) -> [u64; C] {
    let mut out = [0u64; C];
    #[cfg(target_arch = "x86_64")]
    let done = match super::x86::Avx2::try_new() {
        Some(t) if isa >= Isa::Avx2 => super::x86::chansum::byte_sums_avx2(t, row, &mut out),
        _ => 0,
    };
    #[cfg(not(target_arch = "x86_64"))]
    let done = {
        let _ = isa;
        0
    };
    // `done` is a multiple of the step, so of C: the rest starts on a pixel.
    let rest = super::widen::byte_sums::<C>(&row[done..]);
    for (o, r) in out.iter_mut().zip(rest) {
        *o += r;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `C`-channel sums of `row`, one sample at a time.
    fn plain<const C: usize>(row: &[u8]) -> [u64; C] {
        let mut s = [0u64; C];
        for (j, v) in row.iter().enumerate() {
            s[j % C] += u64::from(*v);
        }
        s
    }

    #[test]
    fn byte_row_sums_match_a_plain_sum_on_every_instruction_set() {
        let bytes: Vec<u8> = (0..20_000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 24) as u8)
            .collect();
        for isa in Isa::available() {
            for len in [
                0, 1, 5, 95, 96, 97, 127, 128, 129, 383, 384, 385, 3840, 15_360,
            ] {
                for (skip, row) in [(0, &bytes[..len]), (7, &bytes[7..7 + len])] {
                    let at = format!("{isa:?} len {len} from {skip}");
                    assert_eq!(byte_row_sums::<1>(isa, row), plain::<1>(row), "{at}");
                    let rgb = &row[..len / 3 * 3];
                    assert_eq!(byte_row_sums::<3>(isa, rgb), plain::<3>(rgb), "{at}");
                    let rgba = &row[..len / 4 * 4];
                    assert_eq!(byte_row_sums::<4>(isa, rgba), plain::<4>(rgba), "{at}");
                }
            }
        }
    }

    #[test]
    fn byte_row_sums_of_saturated_rows_are_exact() {
        let row = vec![255u8; 4 * 100_003];
        for isa in Isa::available() {
            assert_eq!(byte_row_sums::<1>(isa, &row), [255 * 400_012], "{isa:?}");
            assert_eq!(byte_row_sums::<4>(isa, &row), [255 * 100_003; 4], "{isa:?}");
            let rgb = &row[..3 * 100_003];
            assert_eq!(byte_row_sums::<3>(isa, rgb), [255 * 100_003; 3], "{isa:?}");
        }
    }
}
