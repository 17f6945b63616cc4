//! The rayon colour matrix: rows in parallel, each row compiled for the
//! CPU's instruction set ([`crate::simd`]) with its pixels taken
//! `PIXELS` (16) at a time into planes of f32, so that the compiler
//! vectorises the products; the narrowing is [`Narrow`]'s, which is
//! [`Sample::from_f32`] without its library call. RGB rows go through
//! [`crate::simd::matrix3::rgb`] first, whose AVX2 code splits pixels into
//! colours with lane permutes (storing f32 images of 16 MiB and more past
//! the caches), and RGBA rows through [`crate::simd::matrix3::rgba`]
//! (in-lane broadcasts); the planes above are built through the stack,
//! which costs more than the products (on AVX2, RGBA took 5-7x as long as
//! RGB through them). The arithmetic is
//! [`super::apply`]'s (no fused products), so every instruction set gives
//! the same samples, but for u8 RGB on CPUs with AVX2: there a matrix
//! whose coefficients fit [`matrix3::Fixed`] goes through its 16-bit fixed
//! point ([`matrix3::rgb_fixed`], 32 pixels per step, 16 with AVX-512
//! VBMI), within 1 of the f32 arithmetic's samples (docs/QUALITY.md).

use std::mem::MaybeUninit;

use super::CcmParams;
use crate::error::Result;
use crate::image::{Image, Sample, SampleType};
use crate::ops::pixel_stage::cpu::fill_rows;
use crate::simd::mem::{self, Filler};
use crate::simd::matrix3;
use crate::simd::{Isa, Narrow, Simd, WithSimd};

/// Pixels per step of a row.
const PIXELS: usize = 16;

/// `M * (r, g, b)` (alpha copied) on the host's cores, in f32 as the
/// kernels compute it.
pub fn ccm<T: Sample>(img: &Image<T>, p: &CcmParams) -> Result<Image<T>> {
    ccm_with(img, p, Isa::detect())
}

/// [`ccm`] compiled for `isa` (or the best set below it that the CPU runs).
fn ccm_with<T: Sample>(img: &Image<T>, p: &CcmParams, isa: Isa) -> Result<Image<T>> {
    p.validate()?;
    super::check_channels(img.channels())?;
    match (T::TYPE, img.channels()) {
        (SampleType::U8, 3) => match matrix3::Fixed::new(&p.m) {
            Some(f) => fixed(img, &f, p, isa),
            _ => typed::<T, u8, 3>(img, p, isa),
        },
        (SampleType::U8, _) => typed::<T, u8, 4>(img, p, isa),
        (SampleType::U16, 3) => typed::<T, u16, 3>(img, p, isa),
        (SampleType::U16, _) => typed::<T, u16, 4>(img, p, isa),
        (SampleType::F32, 3) => typed::<T, f32, 3>(img, p, isa),
        (SampleType::F32, _) => typed::<T, f32, 4>(img, p, isa),
    }
}

/// The rows of `img`, u8 RGB, through `f` where the CPU has its vector
/// code ([`matrix3::has_fixed`]), otherwise through the f32 arithmetic of
/// [`typed`], which is faster without vectors (the whole image takes one
/// or the other).
fn fixed<T: Sample>(img: &Image<T>, f: &matrix3::Fixed, p: &CcmParams, isa: Isa) -> Result<Image<T>> {
    if !matrix3::has_fixed(isa) {
        return typed::<T, u8, 3>(img, p, isa);
    }
    fill_rows::<T, _>(img.width(), img.height(), 3, |y, dst| {
        let src = mem::cast_slice::<T, u8>(img.row(y)).expect("T is u8");
        let dst = mem::cast_uninit_mut::<T, u8>(dst).expect("T is u8");
        let done = matrix3::rgb_fixed(isa, f, src, dst);
        mem::cast_slice_mut::<u8, T>(done).expect("T is u8")
    })
}

/// The rows of `img`, whose samples are `X`, of `C` channels.
fn typed<T: Sample, X: Narrow, const C: usize>(img: &Image<T>, p: &CcmParams, isa: Isa) -> Result<Image<T>> {
    let stream = img.width() * img.height() * C * std::mem::size_of::<X>() >= mem::STREAM_BYTES;
    fill_rows::<T, _>(img.width(), img.height(), C, |y, dst| {
        let src = mem::cast_slice::<T, X>(img.row(y)).expect("T is X");
        let dst = mem::cast_uninit_mut::<T, X>(dst).expect("T is X");
        // Through the instruction set's vector code where it has one; the
        // rest through planes of `PIXELS`.
        let vectors = match C {
            3 => matrix3::rgb(isa, &p.m, src, dst, stream),
            _ => matrix3::rgba(isa, &p.m, src, dst),
        };
        let dst = match vectors {
            Ok(done) => return mem::cast_slice_mut::<X, T>(done).expect("T is X"),
            Err(dst) => dst,
        };
        let done = isa.vectorize(Row::<X, C> { m: &p.m, src, dst });
        mem::cast_slice_mut::<X, T>(done).expect("T is X")
    })
}

/// One row of pixels, for [`Isa::vectorize`].
struct Row<'s, 'a, X, const C: usize> {
    m: &'s [f32; 9],
    src: &'s [X],
    dst: &'a mut [MaybeUninit<X>],
}

impl<'a, X: Narrow, const C: usize> WithSimd for Row<'_, 'a, X, C> {
    type Output = &'a mut [X];

    /// [`PIXELS`] at a time into a buffer, then into the row; the last
    /// step may be short.
    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> &'a mut [X] {
        let mut out = Filler::new(self.dst);
        let mut buf = [X::default(); 4 * PIXELS];
        let mut steps = self.src.chunks_exact(PIXELS * C);
        for s in &mut steps {
            mix::<X, C, PIXELS>(self.m, s, &mut buf);
            let piece = out.next(s.len());
            out.commit(mem::write_copy(piece, &buf[..s.len()]));
        }
        for s in steps.remainder().chunks_exact(C) {
            mix::<X, C, 1>(self.m, s, &mut buf);
            let piece = out.next(C);
            out.commit(mem::write_copy(piece, &buf[..C]));
        }
        out.finish()
    }
}

/// `P` pixels of `C` channels from `s` into `d`.
#[inline(always)]
fn mix<X: Narrow, const C: usize, const P: usize>(m: &[f32; 9], s: &[X], d: &mut [X]) {
    let v: [[f32; P]; 3] = std::array::from_fn(|k| std::array::from_fn(|i| s[i * C + k].to_f32()));
    for i in 0..P {
        let out = super::apply(m, [v[0][i], v[1][i], v[2][i]]);
        for (k, o) in out.into_iter().enumerate() {
            d[i * C + k] = X::narrow(o);
        }
        if C == 4 {
            d[i * C + 3] = s[i * C + 3];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every instruction set gives the per-pixel arithmetic's samples (the
    /// matrix through [`super::super::apply`], then `from_f32`), for every
    /// type, RGB and RGBA, odd widths with and without whole steps, NaN and
    /// infinities in f32, and results that saturate at both ends.
    #[test]
    fn every_instruction_set_gives_the_arithmetic() {
        let mut rng = crate::test_rng::Rng::new(0x9e37_79b9_7f4a_7c15);
        let mut next = move || rng.next_u64();
        let p = CcmParams {
            m: [1.72, -0.52, -0.2, -0.26, 1.58, -0.32, 0.04, -0.62, 1.58],
        };
        for (w, h) in [(1, 1), (1, 5), (5, 1), (7, 2), (8, 1), (9, 3), (16, 2), (23, 1), (37, 3), (131, 2)] {
            for c in [3, 4] {
                let u8s = Image::<u8>::from_fn(w, h, c, |_, _, _| next() as u8).unwrap();
                let u16s = Image::<u16>::from_fn(w, h, c, |_, _, _| next() as u16).unwrap();
                let f32s = Image::<f32>::from_fn(w, h, c, |_, _, _| match next() % 40 {
                    0 => f32::NAN,
                    1 => f32::INFINITY,
                    _ => (next() % 20_000) as f32 / 10_000.0 - 0.5,
                })
                .unwrap();
                for isa in Isa::available() {
                    same(&u8s, &p, isa);
                    same(&u16s, &p, isa);
                    same(&f32s, &p, isa);
                }
            }
        }
    }

    fn same<T: Sample>(img: &Image<T>, p: &CcmParams, isa: Isa) {
        let got = ccm_with(img, p, isa).unwrap();
        let c = img.channels();
        let fixed = matrix3::Fixed::new(&p.m).filter(|_| T::TYPE == SampleType::U8 && c == 3);
        if let Some(f) = fixed.filter(|_| matrix3::has_fixed(isa)) {
            return same_fixed(img, &got, &f);
        }
        for y in 0..img.height() {
            for x in 0..img.width() {
                let v = std::array::from_fn(|k| img.get(x, y, k).to_f32());
                let out = super::super::apply(&p.m, v);
                for k in 0..c {
                    let want = out.get(k).map_or_else(|| img.get(x, y, 3), |v| T::from_f32(*v));
                    let g = got.get(x, y, k);
                    assert!(
                        g.to_f32().to_bits() == want.to_f32().to_bits(),
                        "{isa:?} {}x{c} {}x{} ({x}, {y}, {k}): {g:?} vs {want:?}",
                        T::TYPE,
                        img.width(),
                        img.height()
                    );
                }
            }
        }
    }

    /// u8 RGB on CPUs with the fixed-point vectors: [`matrix3::Fixed`]'s
    /// samples (which `simd::matrix3`'s tests hold within 1 of the f32
    /// arithmetic's).
    fn same_fixed<T: Sample>(img: &Image<T>, got: &Image<T>, f: &matrix3::Fixed) {
        for y in 0..img.height() {
            for x in 0..img.width() {
                let px = std::array::from_fn(|k| img.get(x, y, k).to_f32() as u8);
                let want = f.apply(px);
                for (k, w) in want.into_iter().enumerate() {
                    assert_eq!(got.get(x, y, k).to_f32(), f32::from(w), "{}x{} ({x}, {y}, {k})", img.width(), img.height());
                }
            }
        }
    }
}
