//! The integer arithmetic that decides every output sample of `deband`:
//! the counter-based random generator, the reference positions, the
//! per-plane decision and the RGB <-> YCbCr16 conversion. `cl/deband/deband.cl`
//! repeats each function with the same integer operations; the reference
//! and the CPU path call these, so all three agree bit for bit.
//!
//! Nothing here can overflow `i32` for the ranges [`super::Levels::new`]
//! accepts (the bounds are worked out beside each function).

/// YCbCr16 steps per 8-bit level: Y spans `0..=Y_MAX`, Cb and Cr `±C_MAX`.
pub const YCC_LEVEL: i32 = 128;
/// The largest Y (255 levels).
pub const Y_MAX: i32 = 255 * YCC_LEVEL;
/// The largest |Cb| and |Cr| (127.5 levels).
pub const C_MAX: i32 = Y_MAX / 2;

/// Fraction bits of the forward (RGB to YCbCr) coefficients.
pub const FWD_SHIFT: u32 = 15;
/// Fraction bits of the inverse (YCbCr to RGB) coefficients for u8 and
/// for u16: as many as keep the sums below 2^31 (the u16 ones reach 1.6e9).
pub const INV_SHIFT: [u32; 2] = [20, 13];
/// Keeps averages of Cb and Cr non-negative before the shift, so that it
/// is a floor division on every device (OpenCL C leaves `>>` of negative
/// values to the compiler): larger than [`C_MAX`].
const AVG_BIAS: i32 = 1 << 14;

/// lowbias32 (Chris Wellons' integer hash search): a bijection of `u32`
/// with good avalanche, two multiplies and three shifts.
#[inline]
pub fn mix(mut x: u32) -> u32 {
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    x
}

/// The seed as the kernels receive it (hashed once, on the host).
pub fn seed_key(seed: u32) -> u32 {
    mix(seed ^ 0x6a09_e667)
}

/// The hash of pixel `(x, y)` under `key`: independent of every other
/// pixel's, so any thread can compute any pixel's (counter-based).
#[inline]
pub fn pixel_hash(key: u32, x: usize, y: usize) -> u32 {
    mix(mix(key ^ y as u32) ^ x as u32)
}

/// Stream `s` of a pixel's hash: 1 draws the offsets, `2 + c` plane `c`'s grain.
#[inline]
pub fn stream(h: u32, s: u32) -> u32 {
    mix(h ^ s.wrapping_mul(0x9e37_79b9))
}

/// The two offsets `a, b` in `-range..=range` drawn by stream 1: each
/// 16-bit half of the hash scaled to `0..2 range + 1` by a multiply and a
/// shift (no division: it costs more than the rest of the pixel).
#[inline]
pub fn offsets(h: u32, range: i32) -> (i32, i32) {
    let o = stream(h, 1);
    let n = (2 * range + 1) as u32;
    (
        (((o >> 16) * n) >> 16) as i32 - range,
        (((o & 0xffff) * n) >> 16) as i32 - range,
    )
}

/// Plane `c`'s grain, uniform in `-amp..amp` (0 when `amp` is 0). The
/// half-open range has mean -1/2 step, which cancels the final
/// round-half-up: the expected output is then the unrounded value, so the
/// dithered result keeps a ramp's fractional levels on average.
#[inline]
pub fn grain(h: u32, c: usize, amp: i32) -> i32 {
    // The high word of hash x 2 amp: uniform in 0..2 amp (OpenCL's mul_hi).
    let n = u64::from(2 * amp as u32);
    ((u64::from(stream(h, 2 + c as u32)) * n) >> 32) as i32 - amp
}

/// The reference pixels of `(x, y)` for offsets `a, b`, clamped into a
/// `w x h` image: `samples` 2 is f3kdb's column mode, 4 its square mode.
#[inline]
pub fn references(
    (x, y): (usize, usize),
    (a, b): (i32, i32),
    samples: i32,
    (w, h): (usize, usize),
) -> ([(usize, usize); 4], usize) {
    let at = |dx: i32, dy: i32| {
        (
            (x as i32 + dx).clamp(0, w as i32 - 1) as usize,
            (y as i32 + dy).clamp(0, h as i32 - 1) as usize,
        )
    };
    if samples == 2 {
        ([at(0, a), at(0, -a), (0, 0), (0, 0)], 2)
    } else {
        ([at(a, b), at(b, -a), at(-a, -b), at(-b, a)], 4)
    }
}

/// Whether every reference is closer than `threshold` to `p`.
#[inline]
fn banded(p: i32, refs: &[i32], threshold: i32) -> bool {
    refs.iter().all(|&r| (r - p).abs() < threshold)
}

/// Fraction bits kept in `space=rgb` until the final rounding: averages
/// of 2 and 4 references are exact at quarter steps, and the grain dithers
/// that rounding. (In `space=ycc` the plane already has 128 steps per
/// level, and the conversion back rounds.)
pub const RGB_FINE_SHIFT: u32 = 2;

/// One sample in `space=rgb`: the references' average if banded, else `p`,
/// at [`RGB_FINE_SHIFT`] fraction bits, plus `g` fine steps of grain, then
/// rounded half up and saturated to `0..=full`. `4 full + 2 + amp` stays
/// far below `i32::MAX`.
#[inline]
pub fn rgb_sample(p: i32, refs: &[i32], threshold: i32, g: i32, full: i32) -> i32 {
    let one = 1 << RGB_FINE_SHIFT;
    let fine = if banded(p, refs, threshold) {
        refs.iter().sum::<i32>() * (one / refs.len() as i32)
    } else {
        p * one
    };
    ((fine + g).clamp(0, full * one) + one / 2) >> RGB_FINE_SHIFT
}

/// One YCbCr16 sample: the references' average (rounded half up) if
/// banded, else `p`, plus `g`, saturated to `lo..=hi`.
#[inline]
pub fn ycc_sample(p: i32, refs: &[i32], threshold: i32, g: i32, (lo, hi): (i32, i32)) -> i32 {
    let v = if banded(p, refs, threshold) {
        let n = refs.len() as i32;
        let shift = if n == 2 { 1 } else { 2 };
        ((refs.iter().sum::<i32>() + n * AVG_BIAS + n / 2) >> shift) - AVG_BIAS
    } else {
        p
    };
    (v + g).clamp(lo, hi)
}

/// The ranges of Y, Cb and Cr.
pub const YCC_BOUNDS: [(i32, i32); 3] = [(0, Y_MAX), (-C_MAX, C_MAX), (-C_MAX, C_MAX)];

/// The fixed-point BT.601 full-range matrices for samples whose largest
/// value is `full`; the kernels get the same integers through `-D`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct YccCoefficients {
    /// RGB to Y, Cb, Cr (rows), with [`FWD_SHIFT`] fraction bits, scaled
    /// from `0..=full` to [`YCC_LEVEL`] steps per 8-bit level.
    pub fwd: [i32; 9],
    /// Y, Cr->R, Cb->G, Cr->G, Cb->B, with `inv_shift` fraction bits,
    /// scaled back to `0..=full`.
    pub inv: [i32; 5],
    /// The inverse's fraction bits ([`INV_SHIFT`]).
    pub inv_shift: u32,
}

impl YccCoefficients {
    /// The coefficients for samples up to `full` (255 or 65535).
    pub fn new(full: i32) -> Self {
        const M: [f64; 9] = [
            0.299, 0.587, 0.114, //
            -0.168_736, -0.331_264, 0.5, //
            0.5, -0.418_688, -0.081_312,
        ];
        const N: [f64; 5] = [1.0, 1.402, -0.344_136, -0.714_136, 1.772];
        let to = f64::from(Y_MAX) / f64::from(full) * f64::from(1u32 << FWD_SHIFT);
        let inv_shift = INV_SHIFT[usize::from(full > 255)];
        let back = f64::from(full) / f64::from(Y_MAX) * f64::from(1u32 << inv_shift);
        YccCoefficients {
            fwd: M.map(|m| (m * to).round() as i32),
            inv: N.map(|n| (n * back).round() as i32),
            inv_shift,
        }
    }

    /// RGB samples to `[y, cb, cr]`. Each sum is within ±(`C_MAX` or
    /// `Y_MAX`) · 2^15 ≈ 1.07e9, biased to be non-negative before the shift.
    #[inline]
    pub fn to_ycc(&self, rgb: [i32; 3]) -> [i32; 3] {
        let k = &self.fwd;
        let half = 1 << (FWD_SHIFT - 1);
        let row = |i: usize| k[3 * i] * rgb[0] + k[3 * i + 1] * rgb[1] + k[3 * i + 2] * rgb[2];
        [
            ((row(0) + half) >> FWD_SHIFT).clamp(0, Y_MAX),
            (((row(1) + (C_MAX << FWD_SHIFT) + half) >> FWD_SHIFT) - C_MAX).clamp(-C_MAX, C_MAX),
            (((row(2) + (C_MAX << FWD_SHIFT) + half) >> FWD_SHIFT) - C_MAX).clamp(-C_MAX, C_MAX),
        ]
    }

    /// `[y, cb, cr]` to RGB samples in `0..=full`. The sums' negative
    /// part is at most 0.71 `full` (1.402 Cr), so a bias of `full` keeps
    /// them non-negative before the shift; biased, they stay below 1.6e9.
    #[inline]
    pub fn to_rgb(&self, [y, cb, cr]: [i32; 3], full: i32) -> [i32; 3] {
        let (k, s) = (&self.inv, self.inv_shift);
        let base = k[0] * y + (full << s) + (1 << (s - 1));
        let out = |v: i32| ((v >> s) - full).clamp(0, full);
        [
            out(base + k[1] * cr),
            out(base + k[2] * cb + k[3] * cr),
            out(base + k[4] * cb),
        ]
    }

    /// The `-D` options that give the kernels these coefficients.
    pub fn cl_options(&self) -> String {
        let list = |v: &[i32]| {
            v.iter()
                .map(|x| x.to_string())
                .collect::<Vec<_>>()
                .join(",")
        };
        format!(
            "-DYCC_FWD={} -DYCC_INV={} -DYCC_INV_SHIFT={}",
            list(&self.fwd),
            list(&self.inv),
            self.inv_shift
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// u8 RGB survives the round trip through YCbCr16 exactly; u16 within
    /// 6 steps, 0.02 level (a YCbCr16 step is 2 u16 steps; the rest is the
    /// rounding of the forward coefficients, about 1/16000 of each).
    #[test]
    fn ycc_round_trip() {
        for (full, step, tol) in [(255, 1, 0), (65535, 257, 6)] {
            let k = YccCoefficients::new(full);
            for r in (0..=full).step_by(step) {
                for g in (0..=full).step_by(7 * step) {
                    for b in (0..=full).step_by(3 * step) {
                        let back = k.to_rgb(k.to_ycc([r, g, b]), full);
                        for (x, y) in back.iter().zip([r, g, b]) {
                            assert!((x - y).abs() <= tol, "{full}: {r},{g},{b} -> {back:?}");
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn offsets_and_grain_stay_in_range_and_vary_with_the_seed() {
        let (k0, k1) = (seed_key(0), seed_key(1));
        let mut differ = 0;
        for y in 0..50 {
            for x in 0..50 {
                let h = pixel_hash(k0, x, y);
                let (a, b) = offsets(h, 3);
                assert!((-3..=3).contains(&a) && (-3..=3).contains(&b));
                assert!((-5..5).contains(&grain(h, 1, 5)));
                assert_eq!(grain(h, 0, 0), 0);
                differ += usize::from(h != pixel_hash(k1, x, y));
            }
        }
        assert_eq!(differ, 2500);
    }
}
