//! The rayon median: rows in parallel, and inside a row a vector of
//! samples at a time, each lane one sample's window (32 u8, 16 u16 or 8
//! f32 samples per AVX2 vector; 16 bytes of them on the portable path).
//!
//! Samples are selected straight from the interleaved rows: a sample's
//! neighbours in a row are whole pixels, `c` samples, apart, so there are
//! no planes and RGB needs no deinterleaving. Each column of the window is
//! sorted once per output row and shared by every window that holds it;
//! each window's median then comes from a network on its sorted columns
//! that stays in registers (`shared`, `net`). f32 samples are first mapped
//! to order-preserving u32 words (`median::word`), selected as integers and
//! mapped back.
//!
//! AVX2 runs even where AVX-512F is there: the AVX-512F trampoline has no
//! 8- or 16-bit lane instructions.

use std::mem::MaybeUninit;

use super::{from_word, shared, word, MedianParams};
use crate::error::Result;
use crate::image::{check_shape, Image, Sample};
use crate::simd::lanes::{Lanes, OrdLanes};
#[cfg(target_arch = "x86_64")]
use crate::simd::x86;
use crate::simd::{mem, Isa, Simd, WithSimd};
use crate::SampleType;

/// Median-filters `src` on the host's cores (see the module docs).
pub fn median<T: Sample>(src: &Image<T>, p: &MedianParams) -> Result<Image<T>> {
    p.validate()?;
    let r = p.radius as usize;
    let (w, h, c) = (src.width(), src.height(), src.channels());
    let (n, wc) = (check_shape(w, h, c)?, w * c);
    // The output is not cleared first: every row is written once.
    let data = mem::vec_filled(n, |buf| -> Result<&mut [T]> {
        Ok(match T::TYPE {
            SampleType::U8 => {
                let o = mem::cast_uninit_mut::<T, u8>(buf).expect("T is u8");
                let o = filter(|y| mem::cast_slice(src.row(y)).expect("T is u8"), h, c, r, o);
                mem::cast_slice_mut(o).expect("T is u8")
            }
            SampleType::U16 => {
                let o = mem::cast_uninit_mut::<T, u16>(buf).expect("T is u16");
                let o = filter(|y| mem::cast_slice(src.row(y)).expect("T is u16"), h, c, r, o);
                mem::cast_slice_mut(o).expect("T is u16")
            }
            SampleType::F32 => {
                let words = mem::vec_filled(n, |buf| -> Result<&mut [u32]> {
                    Ok(mem::par_fill(buf, wc, || (), |_, y, o| {
                        mem::write_pixels::<T, u32, 1>(o, src.row(y), |[s]| [word(s)])
                    }))
                })?;
                let medians = mem::vec_filled(n, |buf| -> Result<&mut [u32]> {
                    Ok(filter(|y| &words[y * wc..(y + 1) * wc], h, c, r, buf))
                })?;
                mem::par_fill(buf, wc, || (), |_, y, o| {
                    mem::write_pixels::<u32, T, 1>(o, &medians[y * wc..][..wc], |[m]| [from_word(m)])
                })
            }
        })
    })?;
    Image::from_vec(w, h, c, data)
}

/// Integer samples that the median orders as they are, with their vectors.
trait Native: Copy + Ord + Default + Send + Sync + 'static {
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

impl Native for u32 {
    type Portable = Lanes<u32, 4>;
    #[cfg(target_arch = "x86_64")]
    type Avx2 = x86::lanes::U32x8;
}

/// Median-filters the `h` rows that `row` gives (`c` channels each) into
/// `out` (packed rows) with radius `r`, and returns it written; alpha
/// (channel 3 of 4) is filtered with the colours and then overwritten by a
/// copy.
fn filter<'a, 'o, K: Native>(
    row: impl Fn(usize) -> &'a [K] + Sync,
    h: usize,
    c: usize,
    r: usize,
    out: &'o mut [MaybeUninit<K>],
) -> &'o mut [K] {
    let wc = out.len() / h;
    mem::par_fill(out, wc, Vec::new, |ranks, y, o| {
        // Cleared in the cache, where the row is written next.
        let o = mem::fill_init(o, K::default());
        let src = |d: usize| row((y + d).saturating_sub(r).min(h - 1));
        // At most 256-bit vectors: see the module docs.
        let isa = Isa::detect_up_to(256);
        match r {
            1 => isa.vectorize(Row::<K, 3, 9> {
                rows: std::array::from_fn(src),
                out: &mut *o,
                c,
                ranks,
            }),
            2 => isa.vectorize(Row::<K, 5, 25> {
                rows: std::array::from_fn(src),
                out: &mut *o,
                c,
                ranks,
            }),
            _ => isa.vectorize(Row::<K, 7, 49> {
                rows: std::array::from_fn(src),
                out: &mut *o,
                c,
                ranks,
            }),
        }
        if c == 4 {
            for (o, s) in o.chunks_exact_mut(4).zip(row(y).chunks_exact(4)) {
                o[3] = s[3];
            }
        }
        o
    })
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

    fn random<T: Sample>(w: usize, h: usize, c: usize, seed: u64, levels: u32) -> Image<T> {
        let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        Image::from_fn(w, h, c, |_, _, _| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            T::from_f32(((s >> 33) as u32 % levels) as f32)
        })
        .unwrap()
    }

    #[test]
    fn shared_columns_match_the_reference_across_strips() {
        // Rows longer than a strip (with a short last one), rows shorter
        // than a vector and around its width, few levels (ties) and many.
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
        ];
        for (w, h, c) in shapes {
            for r in 1..=3 {
                let p = MedianParams::new(r).unwrap();
                for levels in [3, 256] {
                    let img = random::<u8>(w, h, c, (w * h * c) as u64 + r as u64, levels);
                    let want = reference::median(&img, &p).unwrap();
                    assert_eq!(median(&img, &p).unwrap(), want, "u8 {w}x{h}x{c} r={r}");
                    let img = random::<u16>(w, h, c, 7 + w as u64, levels * 200);
                    let want = reference::median(&img, &p).unwrap();
                    assert_eq!(median(&img, &p).unwrap(), want, "u16 {w}x{h}x{c} r={r}");
                    let img = random::<f32>(w, h, c, 9 + h as u64, levels * 3);
                    let want = reference::median(&img, &p).unwrap();
                    let got = median(&img, &p).unwrap();
                    assert_eq!(got, want, "f32 {w}x{h}x{c} r={r}");
                }
            }
        }
    }
}
