//! The rayon demosaic: the image is cut into bands of rows, one task each.
//!
//! A band's CFA rows (plus a mirrored apron) are levelled to f32 once,
//! split into their even and odd columns. A pixel's neighbour at offset
//! (dx, dy) is then, for every pixel of one parity in a row, the same
//! half-row at the same index offset, so each of the four sites of a 2x2
//! quad has one fixed filter for the whole quad row, and there is no
//! per-pixel branch on the pattern. Each quad row is computed in chunks of
//! `CHUNK` quads: the missing colours of the chunk's four sites, each in
//! one pass over its input rows with the reference's arithmetic in the
//! reference's order (so the results are the reference's), into a few KiB
//! that stay in L1, which are then narrowed and interleaved into the two
//! output rows. The edge method also computes the band's green plane
//! (rows -1..=len) the same way, chunk by chunk, with the colour
//! differences (sample minus green) of the red and blue sites beside it
//! (in the green sites' half-rows, which the plane does not need: their
//! green is the CFA's), then red and blue from those. The working rows are made as the quad
//! rows reach them: each CFA row is levelled, and each green row computed,
//! just before the first quad row that reads it, so they are read again
//! from L1 or L2 rather than after a pass over the band.
//!
//! The band is compiled for each instruction set of [`crate::simd`] up to
//! 256-bit vectors (on x86-64 CPUs with AVX2: 8 lanes, chosen at run
//! time), and 8-bit outputs are narrowed and interleaved with byte
//! shuffles there ([`Simd::interleave_quads`]).
//!
//! 8-bit frames into 8-bit images at the identity levelling (black 0,
//! gains 1: the defaults) take the integer path of `bytes` for bilinear
//! and mhc: each filter is its integer sum shifted right with the
//! reference's rounding (half to even, then saturated), in i16 lanes
//! loaded straight from the frame's rows, and each block's pixels are
//! stored interleaved from registers. Every value there is exact in f32
//! too, so the bytes are the reference's. Everything else (other levels,
//! where the levelled samples are not integers; the edge method, whose
//! blend divides; 16-bit and packed frames; u16 and f32 outputs) takes
//! the f32 path above. So does the portable instruction set, where the
//! f32 path's chunk loops are faster than the integer path's scalar
//! interleaving stores (measured: 15-24 ms against 39-61 ms for 4K
//! bilinear, 2 threads).
//!
//! The edge method on 8-bit frames at the identity levelling keeps i16
//! copies of its CFA half-rows beside the f32 ones, and computes its
//! estimates and gradients there, four times over, exactly
//! (`filters::edge_green_ints`); only the blend is in f32.
//!
//! Files: this one (entry points, a band's steps), `filters` (the sites'
//! filters), `halves` (the working rows), `bytes` (the integer path),
//! `tests`.

use std::borrow::Cow;
use std::mem::MaybeUninit;
use std::ops::Range;

use super::reference::mirror;
use super::{DemosaicParams, Levels, Method, Raw, B, G, R};
use crate::error::Result;
use crate::image::{Image, Sample, SampleType};
use crate::simd::mem::{self, Filler};
use crate::simd::{Isa, Narrow, Simd, WithSimd};

mod bytes;
mod filters;
mod halves;
#[cfg(test)]
mod tests;

use filters::{
    edge_at_green, edge_at_rb, edge_green, edge_green_ints, linear_quads, Slots, Src, Wide,
};
use halves::{fill_apron, fill_apron_of, grown, From, Halves, Scratch};

/// Output rows per rayon task (even, so every band starts on a pattern row).
const BAND: usize = 32;
/// The apron in half-rows (quads): offsets -3..=3 from parity 0 or 1 reach
/// half-row indices -2..=2.
const QPAD: usize = 2;
/// Quads per chunk of a quad row: a multiple of 8;
/// large enough to amortise slicing out a chunk's input rows, small
/// enough that the chunk's input and outputs (about 16 KiB) stay in L1.
const CHUNK: usize = 192;

/// The widest vectors the bands are compiled for: they were written and
/// measured with 8 lanes (AVX2), not AVX-512's 16.
const VECTOR_BITS: usize = 256;

/// The raw samples as rows of `u8` or `u16` (packed frames are unpacked first).
enum Rows<'a> {
    U8(&'a Image<u8>),
    U16(Cow<'a, Image<u16>>),
}

impl Rows<'_> {
    /// The levelled samples of row `y` (in range), split into the even and
    /// odd columns (`w / 2` each).
    #[inline(always)]
    fn level_split(&self, y: usize, even: &mut [f32], odd: &mut [f32], black: f32, s: [f32; 2]) {
        match self {
            Rows::U8(i) => level_split(i.row(y), even, odd, black, s),
            Rows::U16(i) => level_split(i.row(y), even, odd, black, s),
        }
    }
}

/// Splits a row of bytes into its even and odd columns as integers.
#[inline(always)]
fn split_ints(src: &[u8], even: &mut [i16], odd: &mut [i16]) {
    for ((e, o), q) in even.iter_mut().zip(odd.iter_mut()).zip(src.chunks_exact(2)) {
        (*e, *o) = (i16::from(q[0]), i16::from(q[1]));
    }
}

/// Levels a row into its even and odd columns.
#[inline(always)]
fn level_split<T: Sample>(src: &[T], even: &mut [f32], odd: &mut [f32], black: f32, s: [f32; 2]) {
    let pairs = even.iter_mut().zip(odd.iter_mut()).zip(src.chunks_exact(2));
    if black == 0.0 && s == [1.0; 2] {
        // The default levels of a frame into its own type: `(v - 0) * 1`
        // is `v`, so the conversion alone.
        for ((e, o), q) in pairs {
            (*e, *o) = (q[0].to_f32(), q[1].to_f32());
        }
        return;
    }
    for ((e, o), q) in pairs {
        *e = (q[0].to_f32() - black) * s[0];
        *o = (q[1].to_f32() - black) * s[1];
    }
}

/// Demosaics on the host's cores (see [`super`] for the rules).
pub fn demosaic<U: Sample>(raw: &Raw<'_>, p: &DemosaicParams, lv: &Levels) -> Result<Image<U>> {
    demosaic_with(raw, p, lv, Isa::detect_up_to(VECTOR_BITS))
}

/// [`demosaic`] with the instruction set `isa` (or the best one below it
/// that the CPU runs).
fn demosaic_with<U: Sample>(
    raw: &Raw<'_>,
    p: &DemosaicParams,
    lv: &Levels,
    isa: Isa,
) -> Result<Image<U>> {
    raw.validate()?;
    let (w, h) = raw.size();
    let n = crate::image::check_shape(w, h, p.channels)?;
    // Every band writes all of its samples, so the output is never cleared
    // first (that would be a pass over memory).
    let out = mem::vec_filled(n, |out| match U::TYPE {
        SampleType::U8 => match raw {
            Raw::U8(img) if bytes::exact(raw, p, lv) && bytes::vectorised(isa) => {
                run_as::<U, u8>(out, |o| bytes::run(img, p, o, isa))
            }
            _ => run_as::<U, u8>(out, |o| run(raw, p, lv, o, isa)),
        },
        SampleType::U16 => run_as::<U, u16>(out, |o| run(raw, p, lv, o, isa)),
        SampleType::F32 => run_as::<U, f32>(out, |o| run(raw, p, lv, o, isa)),
    })?;
    Image::from_vec(w, h, p.channels, out)
}

/// `fill` run on `out` seen as samples of `X`, which is `U`.
fn run_as<'o, U: Sample, X: Sample>(
    out: &'o mut [MaybeUninit<U>],
    fill: impl FnOnce(&'o mut [MaybeUninit<X>]) -> Result<&'o mut [X]>,
) -> Result<&'o mut [U]> {
    let no_path = || crate::Error::arg(format!("demosaic has no CPU output path for {}", U::TYPE));
    let out = mem::cast_uninit_mut::<U, X>(out).ok_or_else(no_path)?;
    let done = fill(out)?;
    mem::cast_slice_mut::<X, U>(done).ok_or_else(no_path)
}

/// Demosaics into `out`, band by band on the rayon pool, and returns it
/// written.
fn run<'o, U: Narrow>(
    raw: &Raw<'_>,
    p: &DemosaicParams,
    lv: &Levels,
    out: &'o mut [MaybeUninit<U>],
    isa: Isa,
) -> Result<&'o mut [U]> {
    let rows = match raw {
        Raw::U8(i) => Rows::U8(i),
        Raw::U16(i) => Rows::U16(Cow::Borrowed(*i)),
        Raw::Packed12 {
            data,
            width,
            height,
            packing,
        } => Rows::U16(Cow::Owned(packing.unpack(data, *width, *height)?)),
    };
    let (w, h) = raw.size();
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
            let y0 = b * BAND;
            isa.vectorize(BandOp {
                band,
                y0,
                dst,
                scratch,
            })
        },
    ))
}

/// A band's working rows for [`Band::quad_row`]: the levelled CFA, and for
/// the edge method its green plane with the colour differences (CFA minus
/// green) of the red and blue sites beside it ([`Halves::beside`]); for
/// the other methods, the CFA again.
#[derive(Clone, Copy)]
struct Planes<'a> {
    cfa: Halves<'a>,
    green: Halves<'a>,
}

/// One band ([`Band::task`]), for [`Isa::vectorize`].
struct BandOp<'a, 'd, U> {
    band: &'a Band<'a>,
    y0: usize,
    dst: &'d mut [MaybeUninit<U>],
    scratch: &'a mut Scratch,
}

impl<'d, U: Narrow> WithSimd for BandOp<'_, 'd, U> {
    type Output = &'d mut [U];

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> &'d mut [U] {
        self.band
            .task::<U, S>(simd, self.y0, self.dst, self.scratch)
    }
}

struct Band<'a> {
    rows: &'a Rows<'a>,
    w: usize,
    h: usize,
    p: &'a DemosaicParams,
    lv: &'a Levels,
}

/// A band's shape: output rows `y0..y0 + len`, the method's `radius`,
/// `half` quads per row in `chunks` chunks, half-rows `hs` long.
#[derive(Clone, Copy)]
struct Shape {
    y0: usize,
    len: usize,
    radius: usize,
    half: usize,
    chunks: usize,
    hs: usize,
}

impl Band<'_> {
    /// Whether the edge method's gradients are computed in integers: an
    /// 8-bit frame at the identity levelling (black 0, every scale 1),
    /// whose levelled samples are its bytes.
    #[inline(always)]
    fn ints(&self) -> bool {
        matches!(self.rows, Rows::U8(_))
            && self.p.method == Method::Edge
            && self.lv.black == 0.0
            && self.lv.scale == [1.0; 3]
    }

    /// The levelling scales of row `y`'s even and odd columns.
    #[inline(always)]
    fn row_scales(&self, y: usize) -> [f32; 2] {
        let pat = self.p.pattern;
        [0, 1].map(|x| self.lv.scale[pat.colour(x, y)])
    }

    /// The shape of the band from output row `y0` (even).
    #[inline(always)]
    fn shape(&self, y0: usize) -> Shape {
        let len = (y0 + BAND).min(self.h) - y0;
        let half = self.w / 2;
        let chunks = half.div_ceil(CHUNK);
        // A chunk reads up to QPAD quads either side; what lies past the
        // apron is computed but never stored.
        let hs = QPAD + chunks * CHUNK + QPAD;
        let radius = self.p.method.radius();
        Shape {
            y0,
            len,
            radius,
            half,
            chunks,
            hs,
        }
    }

    /// One band, output rows `y0..` (`y0` even), all written and returned
    /// as such; the working rows are made as the quad rows reach them.
    #[inline(always)]
    fn task<'d, U: Narrow, S: Simd>(
        &self,
        simd: S,
        y0: usize,
        dst: &'d mut [MaybeUninit<U>],
        scratch: &mut Scratch,
    ) -> &'d mut [U] {
        let (w, ch) = (self.w, self.p.channels);
        let sh = self.shape(y0);
        let (r, hs) = (sh.radius, sh.hs);
        let edge = self.p.method == Method::Edge;
        let Scratch { cfa, green, ints } = scratch;
        // Band rows -r..len + r; the edge method's green, rows -1..=len.
        let (cfa_rows, green_rows) = (sh.len + 2 * r, if edge { sh.len + 2 } else { 0 });
        let cfa = grown(cfa, cfa_rows * 2 * hs);
        let green = grown(green, green_rows * 2 * hs);
        let ints = grown(ints, if self.ints() { cfa_rows * 2 * hs } else { 0 });
        let (mut levelled, mut greened) = (0, 0);
        let mut slots: [[Slots; 2]; 2] = [[[[0.0; CHUNK]; 2]; 2]; 2];
        let mut out = Filler::new(dst);
        for ry in (0..sh.len).step_by(2) {
            // Quad row `ry` reads CFA rows up to `ry + 1 + r` and green rows
            // up to `ry + 2`, which read CFA rows up to `ry + 4`; with the
            // edge method's `r` of 3, both ends are the same.
            let need = (ry + 2 + 2 * r).min(cfa_rows);
            self.level(sh, cfa, ints, levelled..need);
            levelled = levelled.max(need);
            let cfa = Halves { buf: cfa, hs, top: r };
            let planes = if edge {
                let need = (ry + 4).min(green_rows);
                let ints = Halves { buf: &*ints, hs, top: r };
                self.green_rows(sh, (cfa, ints), green, greened..need);
                greened = greened.max(need);
                let green = Halves {
                    buf: green,
                    hs,
                    top: 1,
                };
                Planes { cfa, green }
            } else {
                Planes { cfa, green: cfa }
            };
            let rows = [out.next(w * ch), out.next(w * ch)];
            let [a, b] = self.quad_row::<U, S>(simd, sh, ry as isize, planes, rows, &mut slots);
            out.commit(a);
            out.commit(b);
        }
        out.finish()
    }

    /// The two output rows of the quad row at band row `ry`, chunk by chunk.
    #[inline(always)]
    fn quad_row<'o, U: Narrow, S: Simd>(
        &self,
        simd: S,
        sh: Shape,
        ry: isize,
        planes: Planes<'_>,
        [row0, row1]: [&'o mut [MaybeUninit<U>]; 2],
        slots: &mut [[Slots; 2]; 2],
    ) -> [&'o mut [U]; 2] {
        let ch = self.p.channels;
        let from = self.sources();
        let alpha = self.lv.alpha;
        let (mut row0, mut row1) = (Filler::new(row0), Filler::new(row1));
        let Planes { cfa, green, .. } = planes;
        for k in 0..sh.chunks {
            self.chunk_slots(sh, ry, k, planes, slots);
            let src: Src = [0, 1].map(|py| {
                let row = ry + py as isize;
                [R, G, B].map(|c| {
                    [0, 1].map(|px| match from[py][px][c] {
                        From::Own => cfa.at(row, px as isize, k),
                        From::Green => green.at(row, px as isize, k),
                        From::Slot(s) => &slots[py][px][s],
                    })
                })
            });
            let q = (sh.half - k * CHUNK).min(CHUNK);
            let rows = [row0.next(2 * q * ch), row1.next(2 * q * ch)];
            let [a, b] = store_chunk::<U, S>(simd, rows, &src, q, ch, alpha);
            row0.commit(a);
            row1.commit(b);
        }
        [row0.finish(), row1.finish()]
    }

    /// Rows `rows` of the band's CFA rows (band row `j - r` for `j`, `r`
    /// the method's reach), levelled and split into half-rows, in `buf`,
    /// and as integers in `ints` where that is not empty ([`Band::ints`]).
    #[inline(always)]
    fn level(&self, sh: Shape, buf: &mut [f32], ints: &mut [i16], rows: Range<usize>) {
        let (r, hs, half) = (sh.radius, sh.hs, sh.half);
        for j in rows {
            let y = mirror(sh.y0 as i64 + j as i64 - r as i64, self.h);
            if let (false, Rows::U8(img)) = (ints.is_empty(), self.rows) {
                let (even, odd) = ints[j * 2 * hs..(j + 1) * 2 * hs].split_at_mut(hs);
                split_ints(img.row(y), &mut even[QPAD..QPAD + half], &mut odd[QPAD..QPAD + half]);
                fill_apron(even, odd, half, self.w);
            }
            let (even, odd) = buf[j * 2 * hs..(j + 1) * 2 * hs].split_at_mut(hs);
            let s = self.row_scales(y);
            self.rows.level_split(
                y,
                &mut even[QPAD..QPAD + half],
                &mut odd[QPAD..QPAD + half],
                self.lv.black,
                s,
            );
            fill_apron(even, odd, half, self.w);
        }
    }

    /// Rows `rows` of the edge method's green plane (band row `j - 1` for
    /// `j`), in `buf`: the red and blue sites' green in their half-row, and
    /// their colour differences in the other (the green sites', whose
    /// green is the CFA's); the CFA rows they read (two either side) are
    /// in `cfa` (and as integers in `ints`, if not empty: [`Band::ints`]).
    /// A row past the image's edge is the mirrored row, as the
    /// reference reads it, and is copied after the rows in the image: the
    /// first band's row -1 is row 1 (in the same `rows`, which start with
    /// 0..4), the last band's row `len` is row `len - 2`.
    #[inline(always)]
    fn green_rows(
        &self,
        sh: Shape,
        (cfa, ints): (Halves<'_>, Halves<'_, i16>),
        buf: &mut [f32],
        rows: Range<usize>,
    ) {
        let (y0, hs, h) = (sh.y0 as i64, sh.hs, self.h);
        let pat = self.p.pattern;
        let alpha = self.lv.alpha;
        let inside = |j: usize| (0..h as i64).contains(&(y0 + j as i64 - 1));
        for j in rows.clone().filter(|&j| inside(j)) {
            let row = j as isize - 1;
            // The red or blue sites' column parity.
            let px = usize::from(pat.colour(0, row.rem_euclid(2) as usize) == G);
            let (even, odd) = buf[j * 2 * hs..(j + 1) * 2 * hs].split_at_mut(hs);
            let (g, d) = if px == 0 { (even, odd) } else { (odd, even) };
            for k in 0..sh.chunks {
                let at = QPAD + k * CHUNK;
                let o = (&mut g[at..][..CHUNK]).try_into().unwrap();
                let od = (&mut d[at..][..CHUNK]).try_into().unwrap();
                let col = px as isize;
                if ints.buf.is_empty() {
                    edge_green(|dy, dx| cfa.at(row + dy, col + dx, k), alpha, o, od);
                } else {
                    let c = cfa.at(row, col, k);
                    edge_green_ints(|dy, dx| ints.at(row + dy, col + dx, k), c, alpha, o, od);
                }
            }
            fill_apron_of(g, px, sh.half, self.w);
            fill_apron_of(d, px, sh.half, self.w);
        }
        for j in rows.filter(|&j| !inside(j)) {
            let from = mirror(y0 + j as i64 - 1, h) + 1 - sh.y0;
            buf.copy_within(from * 2 * hs..(from + 1) * 2 * hs, j * 2 * hs);
        }
    }

    /// Where each colour of each site of a quad comes from,
    /// `[row parity][column parity][colour]`.
    #[inline(always)]
    fn sources(&self) -> [[[From; 3]; 2]; 2] {
        let (pat, m) = (self.p.pattern, self.p.method);
        [0, 1].map(|py| {
            [0, 1].map(|px| {
                let c = pat.colour(px, py);
                [R, G, B].map(|k| match (k == c, c == G) {
                    (true, _) => From::Own,
                    (false, true) => From::Slot(usize::from(k != pat.colour(px + 1, py))),
                    (false, false) if k == G && m == Method::Edge => From::Green,
                    (false, false) => From::Slot(usize::from(k != G)),
                })
            })
        })
    }

    /// The interpolated colours of chunk `k` of the quad row at band row
    /// `ry`, into `slots` (`[row parity][column parity]`).
    #[inline(always)]
    fn chunk_slots(
        &self,
        sh: Shape,
        ry: isize,
        k: usize,
        Planes { cfa, green }: Planes<'_>,
        slots: &mut [[Slots; 2]; 2],
    ) {
        let (m, pat, r) = (self.p.method, self.p.pattern, sh.radius);
        if m == Method::Edge {
            for (py, sl) in slots.iter_mut().enumerate() {
                let row = ry + py as isize;
                for (px, o) in sl.iter_mut().enumerate() {
                    let f = |dy, dx| cfa.at(row + dy, px as isize + dx, k);
                    let d = |dy, dx| green.beside(row + dy, px as isize + dx, k);
                    if pat.colour(px, py) == G {
                        edge_at_green(f, d, o)
                    } else {
                        edge_at_rb(green.at(row, px as isize, k), d, o)
                    }
                }
            }
            return;
        }
        // Rows beyond the method's reach are never read.
        let wide: Wide = std::array::from_fn(|j| {
            let row = ry + (j as isize - 2).clamp(-(r as isize), 1 + r as isize);
            [0, 1].map(|par| cfa.wide(row, par, k))
        });
        match (m == Method::Mhc, pat.colour(0, 0) == G) {
            (true, true) => linear_quads::<true, true>(&wide, slots),
            (true, false) => linear_quads::<true, false>(&wide, slots),
            (false, true) => linear_quads::<false, true>(&wide, slots),
            (false, false) => linear_quads::<false, false>(&wide, slots),
        }
    }
}

/// Stores the first `q` quads of a chunk into its two output rows (each
/// `2 q ch` samples), and returns them written.
#[inline(always)]
fn store_chunk<'a, U: Narrow, S: Simd>(
    simd: S,
    rows: [&'a mut [MaybeUninit<U>]; 2],
    src: &Src,
    q: usize,
    ch: usize,
    alpha: f32,
) -> [&'a mut [U]; 2] {
    if ch == 4 {
        simd.interleave_quads::<U, 4, CHUNK>(rows, src, q, alpha)
    } else {
        simd.interleave_quads::<U, 3, CHUNK>(rows, src, q, alpha)
    }
}
