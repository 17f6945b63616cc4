//! The integer path: 8-bit frames into 8-bit images at the identity
//! levelling (black 0, every scale 1), by the bilinear and mhc methods.
//!
//! There the levelled samples are the raw integers, and every value the
//! reference computes before narrowing is exact in f32: an integer sum of
//! at most a few thousand times a power of two (1/2, 1/4, 1/8, 1/16). So
//! the reference's sample is that sum shifted right with rounding half to
//! even ([`narrow_shift`]) and clamped to 0..=255, which is computed here
//! in i16 lanes (16 per AVX2 vector, against 8 f32 lanes) from the raw
//! bytes, with no levelling pass, and stored by
//! [`Simd::interleave_quad_bytes`]. The results are the reference's,
//! byte for byte (tested in `tests`).

use std::mem::MaybeUninit;

use super::filters::{linear_quads, Linear, Wide};
use super::halves::{fill_apron, grown, From, Halves, Scratch};
use super::{Band, Shape, BAND, CHUNK, QPAD};
use crate::error::Result;
use crate::image::Image;
use crate::ops::demosaic::reference::mirror;
use crate::ops::demosaic::{DemosaicParams, Levels, Method, Raw, B, G, R};
use crate::simd::mem::{self, Filler};
use crate::simd::{Isa, QuadBytes, Simd, WithSimd};

/// Whether the integer path gives the reference's samples for this frame
/// and output type: 8-bit in and out, the identity levelling, a linear
/// method (the edge method divides, so it stays in f32).
/// (The caller checks the output type.)
pub(super) fn exact(raw: &Raw<'_>, p: &DemosaicParams, lv: &Levels) -> bool {
    matches!(raw, Raw::U8(_))
        && lv.black == 0.0
        && lv.scale == [1.0; 3]
        && lv.alpha == 255.0
        && p.method != Method::Edge
}

/// Demosaics the 8-bit frame `img` into `out` on the rayon pool by the
/// integer path (where [`exact`] holds), and returns it written.
pub(super) fn run<'o>(
    img: &Image<u8>,
    p: &DemosaicParams,
    lv: &Levels,
    out: &'o mut [MaybeUninit<u8>],
    isa: Isa,
) -> Result<&'o mut [u8]> {
    let rows = super::Rows::U8(img);
    let (w, h) = (img.width(), img.height());
    let band = Band {
        rows: &rows,
        w,
        h,
        p,
        lv,
    };
    let band = &band;
    Ok(mem::par_fill(
        out,
        BAND * w * p.channels,
        Scratch::default,
        |scratch, b, dst| {
            isa.vectorize(ByteBand {
                band,
                img,
                y0: b * BAND,
                dst,
                buf: &mut scratch.bytes,
            })
        },
    ))
}

/// One band of the integer path, for [`Isa::vectorize`].
struct ByteBand<'a, 'd> {
    band: &'a Band<'a>,
    img: &'a Image<u8>,
    y0: usize,
    dst: &'d mut [MaybeUninit<u8>],
    buf: &'a mut Vec<u8>,
}

impl<'d> WithSimd for ByteBand<'_, 'd> {
    type Output = &'d mut [u8];

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> &'d mut [u8] {
        let sh = self.band.shape(self.y0);
        let cfa = split(self.img, sh, self.buf);
        self.band.byte_task(simd, sh, cfa, self.dst)
    }
}

/// The band's CFA rows (and the method's reach above and below), split
/// into half-rows of bytes, in `buf`.
#[inline(always)]
fn split<'s>(img: &Image<u8>, sh: Shape, buf: &'s mut Vec<u8>) -> Halves<'s, u8> {
    let (r, hs, half, h) = (sh.radius, sh.hs, sh.half, img.height());
    let n = sh.len + 2 * r;
    let cfa = grown(buf, n * 2 * hs);
    for (j, pair) in cfa.chunks_exact_mut(2 * hs).enumerate() {
        let y = mirror(sh.y0 as i64 + j as i64 - r as i64, h);
        let (even, odd) = pair.split_at_mut(hs);
        let pairs = img.row(y).chunks_exact(2);
        for ((e, o), q) in even[QPAD..QPAD + half]
            .iter_mut()
            .zip(&mut odd[QPAD..QPAD + half])
            .zip(pairs)
        {
            *e = q[0];
            *o = q[1];
        }
        fill_apron(even, odd, half, img.width());
    }
    Halves {
        buf: cfa,
        hs,
        top: r,
    }
}

/// The two interpolated colours of a site (as [`super::filters::Slots`]), in bytes.
type ByteSlots = [[u8; CHUNK]; 2];


impl Band<'_> {
    /// One band of the integer path: the quad rows chunk by chunk, as
    /// [`Band::task`] does.
    #[inline(always)]
    fn byte_task<'d, S: Simd>(
        &self,
        simd: S,
        sh: Shape,
        cfa: Halves<'_, u8>,
        dst: &'d mut [MaybeUninit<u8>],
    ) -> &'d mut [u8] {
        let (w, ch, r) = (self.w, self.p.channels, sh.radius as isize);
        let (mhc, gd) = (self.p.method == Method::Mhc, self.p.pattern.colour(0, 0) == G);
        let from = self.sources();
        let mut slots: [[ByteSlots; 2]; 2] = [[[[0; CHUNK]; 2]; 2]; 2];
        let mut out = Filler::new(dst);
        for ry in (0..sh.len as isize).step_by(2) {
            let (mut row0, mut row1) =
                (Filler::new(out.next(w * ch)), Filler::new(out.next(w * ch)));
            for k in 0..sh.chunks {
                // Rows beyond the method's reach are never read.
                let wide: Wide<u8> = std::array::from_fn(|j| {
                    let row = ry + (j as isize - 2).clamp(-r, 1 + r);
                    [0, 1].map(|par| cfa.wide(row, par, k))
                });
                match (mhc, gd) {
                    (true, true) => linear_quads::<Bytes, true, true>(&wide, &mut slots),
                    (true, false) => linear_quads::<Bytes, true, false>(&wide, &mut slots),
                    (false, true) => linear_quads::<Bytes, false, true>(&wide, &mut slots),
                    (false, false) => linear_quads::<Bytes, false, false>(&wide, &mut slots),
                }
                let src: QuadBytes<CHUNK> = [0, 1].map(|py| {
                    [R, G, B].map(|c| {
                        [0, 1].map(|px| match from[py][px][c] {
                            From::Slot(s) => &slots[py][px][s],
                            // `From::Green` is the edge method's, which
                            // never comes here (see `exact`).
                            From::Own | From::Green => cfa.at(ry + py as isize, px as isize, k),
                        })
                    })
                });
                let q = (sh.half - k * CHUNK).min(CHUNK);
                let rows = [row0.next(2 * q * ch), row1.next(2 * q * ch)];
                let [a, b] = if ch == 4 {
                    simd.interleave_quad_bytes::<4, CHUNK>(rows, &src, q, 255)
                } else {
                    simd.interleave_quad_bytes::<3, CHUNK>(rows, &src, q, 255)
                };
                row0.commit(a);
                row1.commit(b);
            }
            out.commit(row0.finish());
            out.commit(row1.finish());
        }
        out.finish()
    }
}

/// `x / 2^N` rounded to the nearest integer, half to even (as f32
/// arithmetic rounds the exact quotient when narrowing), clamped to a
/// byte. The shift floors, so adding `2^(N-1) - 1`, plus one where the
/// floored quotient is odd, rounds a tie up exactly when that makes it even.
#[inline(always)]
pub(super) fn narrow_shift<const N: u32>(x: i16) -> u8 {
    let half = (1i16 << (N - 1)) - 1;
    ((x + half + ((x >> N) & 1)) >> N).clamp(0, 255) as u8
}

/// The integer path's filters.
struct Bytes;

impl Linear for Bytes {
    type In = u8;
    type Out = u8;

    #[inline(always)]
    fn slots(mhc: bool, green: bool, t: impl Fn(isize, isize) -> u8) -> [u8; 2] {
        let t = |dy, dx| i16::from(t(dy, dx));
        match (mhc, green) {
            (true, true) => mhc_green(t),
            (true, false) => mhc_rb(t),
            (false, true) => bilinear_green(t),
            (false, false) => bilinear_rb(t),
        }
    }
}

// The sites' filters of `filters` in integers: each reference formula times
// its power-of-two denominator. `t(dy, dx)` is the site's neighbour at (dx, dy).

#[inline(always)]
fn bilinear_green(t: impl Fn(isize, isize) -> i16) -> [u8; 2] {
    [
        narrow_shift::<1>(t(0, -1) + t(0, 1)),
        narrow_shift::<1>(t(-1, 0) + t(1, 0)),
    ]
}

#[inline(always)]
fn bilinear_rb(t: impl Fn(isize, isize) -> i16) -> [u8; 2] {
    [
        narrow_shift::<2>(t(0, -1) + t(0, 1) + t(-1, 0) + t(1, 0)),
        narrow_shift::<2>(t(-1, -1) + t(-1, 1) + t(1, -1) + t(1, 1)),
    ]
}

/// `(5 c0 + 4 h1 - h2 - diag + v2 / 2) / 8` is `(10 c0 + 8 h1 - 2 h2 -
/// 2 diag + v2) / 16`, within -3060..=7140 for bytes.
#[inline(always)]
fn mhc_green(t: impl Fn(isize, isize) -> i16) -> [u8; 2] {
    let c0 = t(0, 0);
    let diag = t(-1, -1) + t(-1, 1) + t(1, -1) + t(1, 1);
    let (h1, v1) = (t(0, -1) + t(0, 1), t(-1, 0) + t(1, 0));
    let (h2, v2) = (t(0, -2) + t(0, 2), t(-2, 0) + t(2, 0));
    let base = 10 * c0 - 2 * diag;
    [
        narrow_shift::<4>(base + 8 * h1 - 2 * h2 + v2),
        narrow_shift::<4>(base + 8 * v1 - 2 * v2 + h2),
    ]
}

/// `(4 c0 + 2 cross - ring2) / 8` and `(6 c0 + 2 diag - 1.5 ring2) / 8`,
/// the latter as `(12 c0 + 4 diag - 3 ring2) / 16`.
#[inline(always)]
fn mhc_rb(t: impl Fn(isize, isize) -> i16) -> [u8; 2] {
    let c0 = t(0, 0);
    let ring2 = t(0, -2) + t(0, 2) + t(-2, 0) + t(2, 0);
    let cross = t(0, -1) + t(0, 1) + t(-1, 0) + t(1, 0);
    let diag = t(-1, -1) + t(-1, 1) + t(1, -1) + t(1, 1);
    [
        narrow_shift::<3>(4 * c0 + 2 * cross - ring2),
        narrow_shift::<4>(12 * c0 + 4 * diag - 3 * ring2),
    ]
}
