//! The integer path: 8-bit frames into 8-bit images at the identity
//! levelling (black 0, every scale 1), by the bilinear and mhc methods.
//!
//! There the levelled samples are the raw integers, and every value the
//! reference computes before narrowing is exact in f32: an integer sum of
//! at most a few thousand times a power of two (1/2, 1/4, 1/8, 1/16). So
//! the reference's sample is that sum shifted right with rounding half to
//! even ([`BytePairs::round_shr`]) and saturated to 0..=255, which is
//! computed here in i16 lanes ([`BytePairs`]: 16 per AVX2 vector) straight
//! from the frame's rows: a vector load of a row, split into its even and
//! odd columns, is one colour of a site parity, and the loads one quad to
//! the left and right give the neighbours. Each block of a quad row (two
//! output rows, `2 V::N` pixels) computes all three colours of its sites
//! in registers and stores them interleaved ([`BytePairs::store`]), so the
//! output is written once and nothing else is: no working rows, no
//! levelling pass. Blocks whose loads would leave the row (the first, and
//! those at the right end) read a copy of their columns with the
//! mirrored border. The results are the reference's, byte for byte
//! (tested in `tests`).

use std::mem::MaybeUninit;

use super::{BAND, B, G};
use crate::error::Result;
use crate::image::Image;
use crate::ops::demosaic::reference::mirror;
use crate::ops::demosaic::{DemosaicParams, Levels, Method, Raw};
use crate::simd::mem::{self, Filler};
use crate::simd::pairs::{BytePairs, WithPairs};
use crate::simd::{Isa, Simd, WithSimd};

/// The widest [`BytePairs`] the padded border blocks hold.
const MAX_LANES: usize = 16;

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

/// Whether `isa` runs the integer path in vector registers: on the
/// portable set its stores are scalar, and the f32 path is faster.
pub(super) fn vectorised(isa: Isa) -> bool {
    isa > Isa::Portable
}

/// Demosaics the 8-bit frame `img` into `out` on the rayon pool by the
/// integer path (where [`exact`] holds), and returns it written.
pub(super) fn run<'o>(
    img: &Image<u8>,
    p: &DemosaicParams,
    out: &'o mut [MaybeUninit<u8>],
    isa: Isa,
) -> Result<&'o mut [u8]> {
    let ch = p.channels;
    let quads = Quads::new(img, p);
    let quads = &quads;
    Ok(mem::par_fill(
        out,
        BAND * img.width() * ch,
        || (),
        |_, b, dst| isa.vectorize(BandOp { quads, y0: b * BAND, dst }),
    ))
}

/// What every quad row of a frame shares.
struct Quads<'a> {
    img: &'a Image<u8>,
    mhc: bool,
    /// The green sites are the quad's diagonal, (0, 0) and (1, 1).
    gd: bool,
    /// Row 0's red or blue site is blue: red and blue trade places.
    swap: bool,
    channels: usize,
}

impl<'a> Quads<'a> {
    fn new(img: &'a Image<u8>, p: &DemosaicParams) -> Self {
        let gd = p.pattern.colour(0, 0) == G;
        Quads {
            img,
            mhc: p.method == Method::Mhc,
            gd,
            swap: p.pattern.colour(usize::from(gd), 0) == B,
            channels: p.channels,
        }
    }
}

/// One band of output rows from `y0` (even), for [`Isa::vectorize`].
struct BandOp<'a, 'd> {
    quads: &'a Quads<'a>,
    y0: usize,
    dst: &'d mut [MaybeUninit<u8>],
}

impl<'d> WithSimd for BandOp<'_, 'd> {
    type Output = &'d mut [u8];

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> &'d mut [u8] {
        simd.with_pairs(self)
    }
}

impl<'d> WithPairs for BandOp<'_, 'd> {
    type Output = &'d mut [u8];

    #[inline(always)]
    fn with<V: BytePairs>(self, t: V::Token) -> &'d mut [u8] {
        let q = self.quads;
        match (q.mhc, q.gd, q.channels == 4) {
            (true, true, true) => self.band::<V, true, true, 4>(t),
            (true, true, false) => self.band::<V, true, true, 3>(t),
            (true, false, true) => self.band::<V, true, false, 4>(t),
            (true, false, false) => self.band::<V, true, false, 3>(t),
            (false, true, true) => self.band::<V, false, true, 4>(t),
            (false, true, false) => self.band::<V, false, true, 3>(t),
            (false, false, true) => self.band::<V, false, false, 4>(t),
            (false, false, false) => self.band::<V, false, false, 3>(t),
        }
    }
}

impl<'d> BandOp<'_, 'd> {
    /// The band's quad rows, each from the frame's rows -2..=3 around it
    /// (mirrored; rows beyond the method's reach are never read).
    #[inline(always)]
    fn band<V: BytePairs, const MHC: bool, const GD: bool, const C: usize>(
        self,
        t: V::Token,
    ) -> &'d mut [u8] {
        let img = self.quads.img;
        let (w, h) = (img.width(), img.height());
        let r: isize = if MHC { 2 } else { 1 };
        let end = (self.y0 + BAND).min(h);
        let mut out = Filler::new(self.dst);
        for y in (self.y0..end).step_by(2) {
            let rows: [&[u8]; 6] = std::array::from_fn(|j| {
                let dy = (j as isize - 2).clamp(-r, 1 + r);
                img.row(mirror(y as i64 + dy as i64, h))
            });
            let dst = [out.next(w * C), out.next(w * C)];
            let [a, b] = quad_row::<V, MHC, GD, C>(t, &rows, dst, self.quads.swap);
            out.commit(a);
            out.commit(b);
        }
        out.finish()
    }
}

/// One quad row: output rows `dst` (`w C` bytes each) from the frame's
/// rows `rows` (-2..=3 around the quad row's first), block by block.
#[inline(always)]
fn quad_row<'d, V: BytePairs, const MHC: bool, const GD: bool, const C: usize>(
    t: V::Token,
    rows: &[&[u8]; 6],
    dst: [&'d mut [MaybeUninit<u8>]; 2],
    swap: bool,
) -> [&'d mut [u8]; 2] {
    assert!(V::N <= MAX_LANES);
    let w = rows[0].len();
    let (n, half) = (V::N, w / 2);
    let mut out = dst.map(Filler::new);
    let mut j = 0;
    while j < half {
        // A block reads bytes 2 j - 2 .. 2 (j + n) + 2.
        if j >= 1 && 2 * (j + n) + 2 <= w {
            let planes = block::<V, MHC, GD>(t, rows, 2 * j, swap);
            for (o, p) in out.iter_mut().zip(&planes) {
                let d = o.next(2 * n * C);
                o.commit(V::store::<C>(t, d, p, 255));
            }
            j += n;
            continue;
        }
        let q = n.min(half - j);
        let mut pad = [[0u8; 2 * MAX_LANES + 4]; 6];
        // Bytes `x0 + k` of each row: those inside the row as one copy,
        // the few past its ends mirrored (`mirror` divides; through it
        // byte by byte, these blocks took about a fifth of the 4K
        // bilinear time, docs/PERFORMANCE.md).
        let x0 = 2 * j as i64 - 2;
        let len = pad[0].len() as i64;
        let lo = (-x0).clamp(0, len) as usize;
        let hi = (w as i64 - x0).clamp(lo as i64, len) as usize;
        for (p, row) in pad.iter_mut().zip(rows) {
            let from = (x0 + lo as i64) as usize;
            p[lo..hi].copy_from_slice(&row[from..from + (hi - lo)]);
            for k in (0..lo).chain(hi..p.len()) {
                p[k] = row[mirror(x0 + k as i64, w)];
            }
        }
        let pad: [&[u8]; 6] = std::array::from_fn(|k| &pad[k][..]);
        let planes = block::<V, MHC, GD>(t, &pad, 2, swap);
        for (o, p) in out.iter_mut().zip(&planes) {
            let mut px = [MaybeUninit::uninit(); 2 * MAX_LANES * 4];
            let px = V::store::<C>(t, &mut px[..2 * n * C], p, 255);
            let d = o.next(2 * q * C);
            o.commit(mem::write_copy(d, &px[..2 * q * C]));
        }
        j += q;
    }
    out.map(Filler::finish)
}

/// The colours of the block of pixels `x..x + 2 V::N` (`x` even) of a
/// quad row, `[row][R, G, B][column parity]`, from its rows -2..=3
/// (`rows`, read from byte `x - 2` on).
///
/// No closures here or below: each function is `#[inline(always)]`, so
/// that all of it is compiled into the instruction set's trampoline (a
/// closure is a function of its own, compiled without the set's features,
/// where every vector operation would be a call).
#[inline(always)]
fn block<V: BytePairs, const MHC: bool, const GD: bool>(
    t: V::Token,
    rows: &[&[u8]; 6],
    x: usize,
    swap: bool,
) -> [[[V; 2]; 3]; 2] {
    [
        block_row::<V, MHC, GD>(t, rows, x, 0, swap),
        block_row::<V, MHC, GD>(t, rows, x, 1, swap),
    ]
}

/// Row `py` (0 or 1) of [`block`].
#[inline(always)]
fn block_row<V: BytePairs, const MHC: bool, const GD: bool>(
    t: V::Token,
    rows: &[&[u8]; 6],
    x: usize,
    py: usize,
    swap: bool,
) -> [[V; 2]; 3] {
    // The red or blue site and the green one.
    let rb = Site { t, rows, x, py, px: if GD { 1 - py } else { py } };
    let gs = Site { px: 1 - rb.px, ..rb };
    let own = rb.at(0, 0);
    let [g, other] = slots::<V, MHC>(false, &rb);
    let green = gs.at(0, 0);
    let [h, v] = slots::<V, MHC>(true, &gs);
    // In row 0 the red or blue site's colour is the first (red, unless
    // `swap`), and a green site's horizontal neighbours have it; in row 1,
    // the second.
    let (at_rb, at_g) = if py == 0 {
        ([own, g, other], [h, green, v])
    } else {
        ([other, g, own], [v, green, h])
    };
    let (e, o) = if rb.px == 0 { (at_rb, at_g) } else { (at_g, at_rb) };
    let mut planes = [[e[0], o[0]], [e[1], o[1]], [e[2], o[2]]];
    if swap {
        planes.swap(0, 2);
    }
    planes
}

/// A site parity of a block's row: its neighbours' vectors.
#[derive(Clone, Copy)]
struct Site<'r, 's, T> {
    t: T,
    rows: &'r [&'s [u8]; 6],
    /// The block's first column.
    x: usize,
    /// The row (0 or 1) and column parity in the quad.
    py: usize,
    px: usize,
}

impl<T: Copy> Site<'_, '_, T> {
    /// The neighbour at (dx, dy).
    #[inline(always)]
    fn at<V: BytePairs<Token = T>>(&self, dy: isize, dx: isize) -> V {
        let col = self.px as isize + dx;
        let row = self.rows[(self.py as isize + dy + 2) as usize];
        let start = self.x.wrapping_add_signed(2 * col.div_euclid(2));
        V::split(self.t, &row[start..])[col.rem_euclid(2) as usize]
    }

    /// The sum of the neighbours at (dx, dy) and (-dx, -dy).
    #[inline(always)]
    fn pair<V: BytePairs<Token = T>>(&self, dy: isize, dx: isize) -> V {
        self.at::<V>(dy, dx).add(self.at(-dy, -dx))
    }
}

/// The two interpolated colours of a site (by mhc, else bilinear): at a
/// green site, `[horizontal neighbours' colour, vertical neighbours']`,
/// at a red or blue site, `[green, the other colour]`. Each is the
/// reference's formula times its power-of-two denominator, then divided
/// by it with rounding.
#[inline(always)]
fn slots<V: BytePairs, const MHC: bool>(green: bool, s: &Site<'_, '_, V::Token>) -> [V; 2] {
    let (h1, v1) = (s.pair::<V>(0, 1), s.pair::<V>(1, 0));
    let diag = s.pair::<V>(1, 1).add(s.pair(1, -1));
    if !MHC {
        return if green {
            [h1.round_shr::<1>(), v1.round_shr::<1>()]
        } else {
            [h1.add(v1).round_shr::<2>(), diag.round_shr::<2>()]
        };
    }
    let c0 = s.at::<V>(0, 0);
    let (h2, v2) = (s.pair::<V>(0, 2), s.pair::<V>(2, 0));
    if green {
        // `(5 c0 + 4 h1 - h2 - diag + v2 / 2) / 8` is `(10 c0 + 8 h1 -
        // 2 h2 - 2 diag + v2) / 16`, within -3060..=7140 for bytes.
        let base = c0.scale(10).sub(diag.scale(2));
        [
            base.add(h1.scale(8)).sub(h2.scale(2)).add(v2).round_shr::<4>(),
            base.add(v1.scale(8)).sub(v2.scale(2)).add(h2).round_shr::<4>(),
        ]
    } else {
        // `(4 c0 + 2 cross - ring2) / 8` and `(6 c0 + 2 diag - 1.5 ring2)
        // / 8`, the latter as `(12 c0 + 4 diag - 3 ring2) / 16`.
        let (cross, ring2) = (h1.add(v1), h2.add(v2));
        [
            c0.scale(4).add(cross.scale(2)).sub(ring2).round_shr::<3>(),
            c0.scale(12).add(diag.scale(4)).sub(ring2.scale(3)).round_shr::<4>(),
        ]
    }
}
