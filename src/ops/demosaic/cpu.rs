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
//! output rows. The edge method first computes the band's green plane
//! (rows -1..=len) the same way, chunk by chunk, then red and blue from it.
//!
//! On x86-64 CPUs with AVX2 the band is compiled for AVX2 (8 lanes, chosen
//! at run time), and 8-bit outputs are narrowed and interleaved with byte
//! shuffles.

use std::any::TypeId;
use std::borrow::Cow;
use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::reference::mirror;
use super::{DemosaicParams, Levels, Method, Raw, B, G, R};
use crate::error::Result;
use crate::image::{Image, Sample};

/// Output rows per rayon task (even, so every band starts on a pattern row).
const BAND: usize = 32;
/// The apron in half-rows (quads): offsets -3..=3 from parity 0 or 1 reach
/// half-row indices -2..=2.
const QPAD: usize = 2;
/// Quads per chunk of a quad row: a multiple of 8;
/// large enough to amortise slicing out a chunk's input rows, small
/// enough that the chunk's input and outputs (about 16 KiB) stay in L1.
const CHUNK: usize = 192;

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

/// Levels a row into its even and odd columns.
#[inline(always)]
fn level_split<T: Sample>(src: &[T], even: &mut [f32], odd: &mut [f32], black: f32, s: [f32; 2]) {
    for ((e, o), q) in even.iter_mut().zip(odd.iter_mut()).zip(src.chunks_exact(2)) {
        *e = (q[0].to_f32() - black) * s[0];
        *o = (q[1].to_f32() - black) * s[1];
    }
}

/// Output samples, with a narrowing that is exactly `Sample::from_f32`
/// (round half to even, saturate, NaN to 0) but inlines to a few
/// instructions: `round_ties_even` is a library call on x86-64 without SSE4.1.
trait Out: Sample {
    fn put(v: f32) -> Self;
}

/// 2^23: adding it to a float in [0, 2^23) rounds it to an integer, half
/// to even (the default rounding mode), and leaves that integer in the low
/// mantissa bits, so no float-to-int conversion is needed.
const MAGIC: f32 = 8_388_608.0;

// `max(0).min(hi)`, not `clamp`: max/min return the number when the
// other operand is NaN, so NaN narrows to 0, as `from_f32` and OpenCL do.
#[allow(clippy::manual_clamp)]
impl Out for u8 {
    #[inline(always)]
    fn put(v: f32) -> Self {
        (v.max(0.0).min(255.0) + MAGIC).to_bits() as u8
    }
}

#[allow(clippy::manual_clamp)]
impl Out for u16 {
    #[inline(always)]
    fn put(v: f32) -> Self {
        (v.max(0.0).min(65535.0) + MAGIC).to_bits() as u16
    }
}

impl Out for f32 {
    #[inline(always)]
    fn put(v: f32) -> Self {
        v
    }
}

/// The instruction set the bands are compiled for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Isa {
    /// The crate's target (baseline x86-64: SSE2).
    Base,
    /// AVX2.
    #[cfg(target_arch = "x86_64")]
    Avx2,
}

impl Isa {
    fn detect() -> Isa {
        #[cfg(target_arch = "x86_64")]
        if is_x86_feature_detected!("avx2") {
            return Isa::Avx2;
        }
        Isa::Base
    }
}

/// Demosaics on the host's cores (see [`super`] for the rules).
pub fn demosaic<U: Sample>(raw: &Raw<'_>, p: &DemosaicParams, lv: &Levels) -> Result<Image<U>> {
    demosaic_with(raw, p, lv, Isa::detect())
}

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
    let mut out = Vec::<U>::with_capacity(n);
    crate::backend::cpu::advise_huge_pages(out.spare_capacity_mut());
    let any = &mut out as &mut dyn std::any::Any;
    if let Some(o) = any.downcast_mut::<Vec<u8>>() {
        run(raw, p, lv, &mut o.spare_capacity_mut()[..n], isa)?;
    } else if let Some(o) = any.downcast_mut::<Vec<u16>>() {
        run(raw, p, lv, &mut o.spare_capacity_mut()[..n], isa)?;
    } else if let Some(o) = any.downcast_mut::<Vec<f32>>() {
        run(raw, p, lv, &mut o.spare_capacity_mut()[..n], isa)?;
    } else {
        return Err(crate::Error::arg(format!(
            "demosaic has no CPU output path for {}",
            U::TYPE
        )));
    }
    // SAFETY: `run` returned Ok, so its bands wrote every one of the first
    // n samples (each band writes every sample of its rows).
    unsafe { out.set_len(n) };
    Image::from_vec(w, h, p.channels, out)
}

fn run<U: Out>(
    raw: &Raw<'_>,
    p: &DemosaicParams,
    lv: &Levels,
    out: &mut [MaybeUninit<U>],
    isa: Isa,
) -> Result<()> {
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
    out.par_chunks_mut(BAND * w * p.channels)
        .enumerate()
        .for_each_init(Scratch::default, |scratch, (b, dst)| {
            let y0 = b * BAND;
            match isa {
                Isa::Base => band.task::<U>(y0, dst, scratch, false),
                #[cfg(target_arch = "x86_64")]
                // SAFETY: Isa::Avx2 is chosen only where the CPU has AVX2.
                Isa::Avx2 => unsafe { band.task_avx2::<U>(y0, dst, scratch) },
            }
        });
    Ok(())
}

struct Band<'a> {
    rows: &'a Rows<'a>,
    w: usize,
    h: usize,
    p: &'a DemosaicParams,
    lv: &'a Levels,
}

/// A chunk's colour rows, `[row parity][colour][column parity]`: the
/// values of the chunk's quads.
type Src<'a> = [[[&'a [f32; CHUNK]; 2]; 3]; 2];

/// The two interpolated colours of a green site, `[horizontal
/// neighbours' colour, vertical neighbours' colour]`, and of a red or blue
/// site, `[green, the other colour]`.
type Slots = [[f32; CHUNK]; 2];

// The sites' filters, in the reference's arithmetic (`reference::bilinear`
// and `reference::mhc`: the same products and sums in the same order), so
// every value is the reference's. `t(dy, dx)` is the site's neighbour at
// (dx, dy).

#[inline(always)]
fn bilinear_green(t: impl Fn(isize, isize) -> f32) -> [f32; 2] {
    [0.5 * (t(0, -1) + t(0, 1)), 0.5 * (t(-1, 0) + t(1, 0))]
}

#[inline(always)]
fn bilinear_rb(t: impl Fn(isize, isize) -> f32) -> [f32; 2] {
    [
        0.25 * (((t(0, -1) + t(0, 1)) + t(-1, 0)) + t(1, 0)),
        0.25 * (((t(-1, -1) + t(-1, 1)) + t(1, -1)) + t(1, 1)),
    ]
}

#[inline(always)]
fn mhc_green(t: impl Fn(isize, isize) -> f32) -> [f32; 2] {
    let c0 = t(0, 0);
    let diag = ((t(-1, -1) + t(-1, 1)) + t(1, -1)) + t(1, 1);
    let (h1, v1) = (t(0, -1) + t(0, 1), t(-1, 0) + t(1, 0));
    let (h2, v2) = (t(0, -2) + t(0, 2), t(-2, 0) + t(2, 0));
    [
        (5.0 * c0 + 4.0 * h1 - h2 - diag + 0.5 * v2) * 0.125,
        (5.0 * c0 + 4.0 * v1 - v2 - diag + 0.5 * h2) * 0.125,
    ]
}

#[inline(always)]
fn mhc_rb(t: impl Fn(isize, isize) -> f32) -> [f32; 2] {
    let c0 = t(0, 0);
    let ring2 = ((t(0, -2) + t(0, 2)) + t(-2, 0)) + t(2, 0);
    let cross = ((t(0, -1) + t(0, 1)) + t(-1, 0)) + t(1, 0);
    let diag = ((t(-1, -1) + t(-1, 1)) + t(1, -1)) + t(1, 1);
    [
        (4.0 * c0 + 2.0 * cross - ring2) * 0.125,
        (6.0 * c0 + 2.0 * diag - 1.5 * ring2) * 0.125,
    ]
}

/// A chunk's quads plus one either side.
const WIDE: usize = CHUNK + 2;

/// A chunk's input for the linear filters, `[2 + row][parity]`: the
/// half-rows of the quad row's rows -2..=3, from the chunk's quad -1 on.
type Wide<'a> = [[&'a [f32; WIDE]; 2]; 6];

/// Both slots of the four sites of a chunk's quads, in one pass (so the
/// sites share their loads and common sums). `MHC`: mhc, else bilinear;
/// `GD`: the green sites are the quad's diagonal, (0, 0) and (1, 1).
#[inline(always)]
fn linear_quads<const MHC: bool, const GD: bool>(rows: &Wide, o: &mut [[Slots; 2]; 2]) {
    for i in 0..CHUNK {
        for (py, o) in o.iter_mut().enumerate() {
            for (px, o) in o.iter_mut().enumerate() {
                let t = |dy: isize, dx: isize| {
                    let col = px as isize + dx;
                    let q = (i as isize + col.div_euclid(2) + 1) as usize;
                    rows[(py as isize + dy + 2) as usize][col.rem_euclid(2) as usize][q]
                };
                let v = match (MHC, (px == py) == GD) {
                    (true, true) => mhc_green(t),
                    (true, false) => mhc_rb(t),
                    (false, true) => bilinear_green(t),
                    (false, false) => bilinear_rb(t),
                };
                o[0][i] = v[0];
                o[1][i] = v[1];
            }
        }
    }
}

// The edge method, in `reference::edge_green` and `reference::edge`'s
// arithmetic. `f(dy, dx)` reads the levelled CFA, `g(dy, dx)` the green plane.

/// Green at the chunk's red or blue sites of one parity.
#[inline(always)]
fn edge_green<'a>(f: impl Fn(isize, isize) -> &'a [f32; CHUNK], full: f32, o: &mut [f32; CHUNK]) {
    let c = f(0, 0);
    let (w, e, n, s) = (f(0, -1), f(0, 1), f(-1, 0), f(1, 0));
    let (w2, e2, n2, s2) = (f(0, -2), f(0, 2), f(-2, 0), f(2, 0));
    let (nw, ne, sw, se) = (f(-1, -1), f(-1, 1), f(1, -1), f(1, 1));
    // Two along and one across: for dh x +-2 at y -+1, for dv y +-2 at x -+1.
    let (ene, wsw, wnw, ese) = (f(-1, 2), f(1, -2), f(-1, -2), f(1, 2));
    let (ssw, nne, nnw, sse) = (f(2, -1), f(-2, 1), f(-2, -1), f(2, 1));
    let eps = 4e-6 * full;
    for i in 0..CHUNK {
        let (c, w, e, n, s) = (c[i], w[i], e[i], n[i], s[i]);
        let lh = 2.0 * c - w2[i] - e2[i];
        let lv = 2.0 * c - n2[i] - s2[i];
        let gh = 0.5 * (w + e) + 0.25 * lh;
        let gv = 0.5 * (n + s) + 0.25 * lv;
        let (nw, ne, sw, se) = (nw[i], ne[i], sw[i], se[i]);
        let dh = (w - e).abs()
            + lh.abs()
            + 0.5 * ((nw - ne).abs() + (sw - se).abs())
            + 0.25
                * ((n - ene[i]).abs()
                    + (s - wsw[i]).abs()
                    + (n - wnw[i]).abs()
                    + (s - ese[i]).abs());
        let dv = (n - s).abs()
            + lv.abs()
            + 0.5 * ((nw - sw).abs() + (ne - se).abs())
            + 0.25
                * ((w - ssw[i]).abs()
                    + (e - nne[i]).abs()
                    + (w - nnw[i]).abs()
                    + (e - sse[i]).abs());
        let wh = 1.0 / ((dh + eps) * (dh + eps));
        let wv = 1.0 / ((dv + eps) * (dv + eps));
        o[i] = (wh * gh + wv * gv) / (wh + wv);
    }
}

/// A green site: green plus the mean colour difference of its horizontal
/// and of its vertical neighbours.
#[inline(always)]
fn edge_at_green<'a>(
    f: impl Fn(isize, isize) -> &'a [f32; CHUNK],
    g: impl Fn(isize, isize) -> &'a [f32; CHUNK],
    o: &mut Slots,
) {
    let c = g(0, 0);
    let (fw, fe, fn_, fs) = (f(0, -1), f(0, 1), f(-1, 0), f(1, 0));
    let (gw, ge, gn, gs) = (g(0, -1), g(0, 1), g(-1, 0), g(1, 0));
    let [oh, ov] = o;
    for i in 0..CHUNK {
        oh[i] = c[i] + 0.5 * ((fw[i] - gw[i]) + (fe[i] - ge[i]));
        ov[i] = c[i] + 0.5 * ((fn_[i] - gn[i]) + (fs[i] - gs[i]));
    }
}

/// A red or blue site: the other colour is green plus the mean colour
/// difference of the diagonal neighbours (green comes from the plane).
#[inline(always)]
fn edge_at_rb<'a>(
    f: impl Fn(isize, isize) -> &'a [f32; CHUNK],
    g: impl Fn(isize, isize) -> &'a [f32; CHUNK],
    o: &mut Slots,
) {
    let c = g(0, 0);
    let (fnw, fne, fsw, fse) = (f(-1, -1), f(-1, 1), f(1, -1), f(1, 1));
    let (gnw, gne, gsw, gse) = (g(-1, -1), g(-1, 1), g(1, -1), g(1, 1));
    let [_, oo] = o;
    for i in 0..CHUNK {
        let d = (fnw[i] - gnw[i]) + (fne[i] - gne[i]) + (fsw[i] - gsw[i]) + (fse[i] - gse[i]);
        oo[i] = c[i] + 0.25 * d;
    }
}

/// A band's working rows, kept from band to band by each rayon job
/// (`for_each_init`), so they are allocated a few times per frame.
#[derive(Default)]
struct Scratch {
    /// The levelled CFA half-rows.
    cfa: Vec<f32>,
    /// The edge method's green half-rows.
    green: Vec<f32>,
}

/// `v`'s first `n` elements, growing it if needed.
fn grown(v: &mut Vec<f32>, n: usize) -> &mut [f32] {
    if v.len() < n {
        v.resize(n, 0.0);
    }
    &mut v[..n]
}

/// Rows split into their even and odd columns: `[row][parity][QPAD + i]`
/// holds column `2 i + parity` of band row `row - top`, each half-row `hs`
/// long (the apron mirrored, then whole chunks).
#[derive(Clone, Copy)]
struct Halves<'a> {
    buf: &'a [f32],
    hs: usize,
    top: usize,
}

impl<'a> Halves<'a> {
    /// Chunk `k` of band row `row` at column offset `col` (any integer: the
    /// parity and quad offset of a neighbour of a site of column parity 0).
    #[inline(always)]
    fn at(self, row: isize, col: isize, k: usize) -> &'a [f32; CHUNK] {
        let r = (row + self.top as isize) as usize;
        let start = (2 * r + col.rem_euclid(2) as usize) * self.hs
            + (QPAD + k * CHUNK).wrapping_add_signed(col.div_euclid(2));
        self.buf[start..start + CHUNK].try_into().unwrap()
    }

    /// Chunk `k` of the half-row of parity `par` of band row `row`, with
    /// one quad more either side.
    #[inline(always)]
    fn wide(self, row: isize, par: usize, k: usize) -> &'a [f32; WIDE] {
        let r = (row + self.top as isize) as usize;
        let start = (2 * r + par) * self.hs + QPAD + k * CHUNK - 1;
        self.buf[start..start + WIDE].try_into().unwrap()
    }

    /// The whole half-row of parity `par` of band row `row`.
    #[inline(always)]
    fn half_row(self, row: isize, par: usize) -> &'a [f32] {
        let r = (row + self.top as isize) as usize;
        &self.buf[(2 * r + par) * self.hs..][..self.hs]
    }
}

/// Mirrors a row's ends into the apron of its half-rows (`half` quads each,
/// `w` pixels): quad `i` holds column `2 (i - QPAD) + parity`, and reflection
/// keeps the parity.
#[inline(always)]
fn fill_apron(even: &mut [f32], odd: &mut [f32], half: usize, w: usize) {
    for i in (0..QPAD).chain(QPAD + half..2 * QPAD + half) {
        let col = 2 * i as i64 - 2 * QPAD as i64;
        even[i] = even[QPAD + mirror(col, w) / 2];
        odd[i] = odd[QPAD + mirror(col + 1, w) / 2];
    }
}

/// Where a colour of a site comes from.
#[derive(Clone, Copy)]
enum From {
    /// The site's own levelled sample.
    Own,
    /// The green plane (the edge method's red and blue sites).
    Green,
    /// One of the site's two [`Slots`].
    Slot(usize),
}

impl Band<'_> {
    /// The levelling scales of row `y`'s even and odd columns.
    #[inline(always)]
    fn row_scales(&self, y: usize) -> [f32; 2] {
        let pat = self.p.pattern;
        [0, 1].map(|x| self.lv.scale[pat.colour(x, y)])
    }

    /// `task`, compiled for AVX2.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn task_avx2<U: Out>(
        &self,
        y0: usize,
        dst: &mut [MaybeUninit<U>],
        scratch: &mut Scratch,
    ) {
        self.task::<U>(y0, dst, scratch, true)
    }

    /// One band, output rows `y0..` (`y0` even). `avx2`: true only where
    /// the caller is compiled for AVX2 (and so the CPU has it).
    #[inline(always)]
    fn task<U: Out>(
        &self,
        y0: usize,
        dst: &mut [MaybeUninit<U>],
        scratch: &mut Scratch,
        avx2: bool,
    ) {
        let m = self.p.method;
        let (w, h, ch) = (self.w, self.h, self.p.channels);
        let len = (y0 + BAND).min(h) - y0;
        let r = m.radius();
        let half = w / 2;
        let chunks = half.div_ceil(CHUNK);
        // A chunk reads up to QPAD quads either side; what lies past the
        // apron is computed but never stored.
        let hs = QPAD + chunks * CHUNK + QPAD;
        let n = len + 2 * r;
        let cfa = grown(&mut scratch.cfa, n * 2 * hs);
        for (j, pair) in cfa.chunks_exact_mut(2 * hs).enumerate() {
            let y = mirror(y0 as i64 + j as i64 - r as i64, h);
            let (even, odd) = pair.split_at_mut(hs);
            let s = self.row_scales(y);
            self.rows.level_split(
                y,
                &mut even[QPAD..QPAD + half],
                &mut odd[QPAD..QPAD + half],
                self.lv.black,
                s,
            );
            fill_apron(even, odd, half, w);
        }
        let cfa = Halves {
            buf: cfa,
            hs,
            top: r,
        };
        let pat = self.p.pattern;
        let colour = |px: usize, row: isize| pat.colour(px, row.rem_euclid(2) as usize);
        let alpha = self.lv.alpha;
        // The edge method's green plane, band rows -1..=len.
        let green = if m == Method::Edge {
            let gbuf = grown(&mut scratch.green, (len + 2) * 2 * hs);
            for (j, pair) in gbuf.chunks_exact_mut(2 * hs).enumerate() {
                let row = j as isize - 1;
                if !(0..h as isize).contains(&(y0 as isize + row)) {
                    continue;
                }
                let (even, odd) = pair.split_at_mut(hs);
                for (px, g) in [&mut *even, &mut *odd].into_iter().enumerate() {
                    if colour(px, row) == G {
                        g.copy_from_slice(cfa.half_row(row, px));
                        continue;
                    }
                    for k in 0..chunks {
                        let o = (&mut g[QPAD + k * CHUNK..][..CHUNK]).try_into().unwrap();
                        edge_green(|dy, dx| cfa.at(row + dy, px as isize + dx, k), alpha, o);
                    }
                }
                fill_apron(even, odd, half, w);
            }
            // Rows past the image's edge: the mirrored row's green, as the
            // reference reads it.
            for j in [0, len + 1] {
                let y = y0 as i64 + j as i64 - 1;
                if !(0..h as i64).contains(&y) {
                    let from = mirror(y, h) - y0 + 1;
                    gbuf.copy_within(from * 2 * hs..(from + 1) * 2 * hs, j * 2 * hs);
                }
            }
            Halves {
                buf: gbuf,
                hs,
                top: 1,
            }
        } else {
            cfa
        };
        let from = [0, 1].map(|py| {
            [0, 1].map(|px| {
                let c = pat.colour(px, py);
                [R, G, B].map(|k| match (k == c, c == G) {
                    (true, _) => From::Own,
                    (false, true) => From::Slot(usize::from(k != pat.colour(px + 1, py))),
                    (false, false) if k == G && m == Method::Edge => From::Green,
                    (false, false) => From::Slot(usize::from(k != G)),
                })
            })
        });
        let mut slots: [[Slots; 2]; 2] = [[[[0.0; CHUNK]; 2]; 2]; 2];
        for (ry, rows) in dst.chunks_mut(2 * w * ch).enumerate() {
            let ry = 2 * ry as isize;
            let (row0, row1) = rows.split_at_mut(w * ch);
            for k in 0..chunks {
                if m == Method::Edge {
                    for (py, sl) in slots.iter_mut().enumerate() {
                        let row = ry + py as isize;
                        for (px, o) in sl.iter_mut().enumerate() {
                            let f = |dy, dx| cfa.at(row + dy, px as isize + dx, k);
                            let g = |dy, dx| green.at(row + dy, px as isize + dx, k);
                            if pat.colour(px, py) == G {
                                edge_at_green(f, g, o)
                            } else {
                                edge_at_rb(f, g, o)
                            }
                        }
                    }
                } else {
                    // Rows beyond the method's reach are never read.
                    let wide: Wide = std::array::from_fn(|j| {
                        let row = ry + (j as isize - 2).clamp(-(r as isize), 1 + r as isize);
                        [0, 1].map(|par| cfa.wide(row, par, k))
                    });
                    match (m == Method::Mhc, pat.colour(0, 0) == G) {
                        (true, true) => linear_quads::<true, true>(&wide, &mut slots),
                        (true, false) => linear_quads::<true, false>(&wide, &mut slots),
                        (false, true) => linear_quads::<false, true>(&wide, &mut slots),
                        (false, false) => linear_quads::<false, false>(&wide, &mut slots),
                    }
                }
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
                let q = (half - k * CHUNK).min(CHUNK);
                let span = 2 * k * CHUNK * ch..2 * (k * CHUNK + q) * ch;
                let rows = [&mut row0[span.clone()], &mut row1[span]];
                store_chunk::<U>(rows, &src, q, ch, alpha, avx2);
            }
        }
    }
}

/// `s` as bytes when `U` is `u8`.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn as_u8_mut<U: Sample>(s: &mut [MaybeUninit<U>]) -> Option<&mut [MaybeUninit<u8>]> {
    // SAFETY: the types are equal, so the cast is the identity.
    (TypeId::of::<U>() == TypeId::of::<u8>())
        .then(|| unsafe { &mut *(s as *mut [MaybeUninit<U>] as *mut [MaybeUninit<u8>]) })
}

/// Stores the first `q` quads of a chunk into its two output rows (each
/// `2 q ch` samples). `avx2`: the caller is compiled for AVX2.
#[inline(always)]
fn store_chunk<U: Out>(
    rows: [&mut [MaybeUninit<U>]; 2],
    src: &Src,
    q: usize,
    ch: usize,
    alpha: f32,
    avx2: bool,
) {
    #[cfg(target_arch = "x86_64")]
    if avx2 {
        let [r0, r1] = rows;
        if let (Some(b0), Some(b1)) = (as_u8_mut(r0), as_u8_mut(r1)) {
            let v = q / 8 * 8;
            let a = <u8 as Out>::put(alpha);
            let (h0, t0) = b0.split_at_mut(2 * v * ch);
            let (h1, t1) = b1.split_at_mut(2 * v * ch);
            if ch == 4 {
                // SAFETY: `avx2` says the CPU has AVX2.
                unsafe { x86::store_u8::<4>([h0, h1], src, v, a) };
                store_quads::<u8, 4>([t0, t1], src, v..q, a);
            } else {
                // SAFETY: as above.
                unsafe { x86::store_u8::<3>([h0, h1], src, v, a) };
                store_quads::<u8, 3>([t0, t1], src, v..q, a);
            }
            return;
        }
        return store_narrowed::<U>([r0, r1], src, q, ch, alpha);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = avx2;
    store_narrowed::<U>(rows, src, q, ch, alpha)
}

/// Stores a chunk's quads: each colour row narrowed on its own (a
/// contiguous loop the compiler vectorises), then interleaved.
#[inline(always)]
fn store_narrowed<U: Out>(
    rows: [&mut [MaybeUninit<U>]; 2],
    src: &Src,
    q: usize,
    ch: usize,
    alpha: f32,
) {
    let mut narrow = [[[U::default(); CHUNK]; 2]; 3];
    let a = U::put(alpha);
    for (py, row) in rows.into_iter().enumerate() {
        for (nc, sc) in narrow.iter_mut().zip(&src[py]) {
            for (n, s) in nc.iter_mut().zip(sc) {
                for (d, v) in n.iter_mut().zip(s.iter()) {
                    *d = U::put(*v);
                }
            }
        }
        let interleave = |row: &mut [MaybeUninit<U>], c: usize| {
            for (i, quad) in row.chunks_exact_mut(2 * c).take(q).enumerate() {
                for (px, d) in quad.chunks_exact_mut(c).enumerate() {
                    d[0].write(narrow[0][px][i]);
                    d[1].write(narrow[1][px][i]);
                    d[2].write(narrow[2][px][i]);
                    if c == 4 {
                        d[3].write(a);
                    }
                }
            }
        };
        if ch == 4 {
            interleave(row, 4)
        } else {
            interleave(row, 3)
        }
    }
}

/// Stores quads `range` of a chunk, one sample at a time (`rows` start at
/// the range's first quad).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn store_quads<U: Out, const C: usize>(
    rows: [&mut [MaybeUninit<U>]; 2],
    src: &Src,
    range: std::ops::Range<usize>,
    a: U,
) {
    for (py, row) in rows.into_iter().enumerate() {
        for (i, quad) in range.clone().zip(row.chunks_exact_mut(2 * C)) {
            for (px, d) in quad.chunks_exact_mut(C).enumerate() {
                for c in 0..3 {
                    d[c].write(U::put(src[py][c][px][i]));
                }
                if C == 4 {
                    d[3].write(a);
                }
            }
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::{Src, MAGIC};
    use std::arch::x86_64::*;
    use std::mem::MaybeUninit;

    /// `pshufb` controls that interleave 16 R, G and B bytes into 48 RGB
    /// bytes, `[16-byte block][colour]`, the same in both 128-bit lanes.
    const RGB: [[[i8; 32]; 3]; 3] = rgb_shuffles();

    const fn rgb_shuffles() -> [[[i8; 32]; 3]; 3] {
        let mut m = [[[-128i8; 32]; 3]; 3];
        let mut k = 0;
        while k < 3 {
            let mut b = 0;
            while b < 16 {
                let g = 16 * k + b;
                m[k][g % 3][b] = (g / 3) as i8;
                m[k][g % 3][b + 16] = (g / 3) as i8;
                b += 1;
            }
            k += 1;
        }
        m
    }

    // SAFETY, for every `unsafe` in this module: these helpers are only
    // called from `store_u8`, which runs only where the CPU has AVX2, and
    // loads and stores go through slices already cut to their length.

    /// Narrows 8 floats exactly as `<u8 as Out>::put`, leaving each byte in
    /// the low byte of its lane (`max` returns its second operand, 0, for NaN).
    #[inline(always)]
    fn narrow(s: &[f32]) -> __m256i {
        unsafe {
            let v = _mm256_loadu_ps(s[..8].as_ptr());
            let v = _mm256_min_ps(_mm256_max_ps(v, _mm256_setzero_ps()), _mm256_set1_ps(255.0));
            _mm256_castps_si256(_mm256_add_ps(v, _mm256_set1_ps(MAGIC)))
        }
    }

    /// Colour `c` of quads `j..j + 8` of row `py`, narrowed: the bytes of
    /// its 16 pixels in the low 16 bits of 8 lanes, in pixel order.
    #[inline(always)]
    fn pairs(src: &Src, py: usize, c: usize, j: usize) -> __m256i {
        unsafe {
            let e = narrow(&src[py][c][0][j..]);
            let o = narrow(&src[py][c][1][j..]);
            _mm256_or_si256(
                _mm256_and_si256(e, _mm256_set1_epi32(0xFF)),
                _mm256_slli_epi32::<8>(o),
            )
        }
    }

    /// 16 bytes of colour `c` for each row, in pixel order: row 0 in the low
    /// lane, row 1 in the high lane.
    #[inline(always)]
    fn colour(src: &Src, c: usize, j: usize) -> __m256i {
        unsafe {
            let v = _mm256_packus_epi32(pairs(src, 0, c, j), pairs(src, 1, c, j));
            _mm256_permute4x64_epi64::<0b11_01_10_00>(v)
        }
    }

    /// 16 bytes of RGB output `k` (of 3) for each row, from the colours.
    #[inline(always)]
    fn rgb(r: __m256i, g: __m256i, b: __m256i, k: usize) -> __m256i {
        let s = &RGB[k];
        unsafe {
            _mm256_or_si256(
                _mm256_or_si256(shuffle(r, &s[0]), shuffle(g, &s[1])),
                shuffle(b, &s[2]),
            )
        }
    }

    #[inline(always)]
    fn shuffle(v: __m256i, control: &[i8; 32]) -> __m256i {
        unsafe { _mm256_shuffle_epi8(v, _mm256_loadu_si256(control.as_ptr().cast())) }
    }

    #[inline(always)]
    fn put(d: &mut [MaybeUninit<u8>], v: __m256i) {
        unsafe { _mm256_storeu_si256(d[..32].as_mut_ptr().cast(), v) }
    }

    #[inline(always)]
    fn put_half(d: &mut [MaybeUninit<u8>], v: __m128i) {
        unsafe { _mm_storeu_si128(d[..16].as_mut_ptr().cast(), v) }
    }

    /// Stores quads `0..q` (`q` a multiple of 8) of a chunk as interleaved
    /// 8-bit RGB (`C` = 3) or RGBA (`C` = 4, alpha `a`) into two rows of at
    /// least `2 q C` bytes; the narrowing is exactly `<u8 as Out>::put`.
    ///
    /// # Safety
    /// The CPU must have AVX2.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn store_u8<const C: usize>(
        rows: [&mut [MaybeUninit<u8>]; 2],
        src: &Src,
        q: usize,
        a: u8,
    ) {
        let [r0, r1] = rows;
        let alpha = _mm256_set1_epi8(a as i8);
        for j in (0..q).step_by(8) {
            let (r, g, b) = (colour(src, 0, j), colour(src, 1, j), colour(src, 2, j));
            let (d0, d1) = (&mut r0[2 * C * j..], &mut r1[2 * C * j..]);
            if C == 3 {
                let (o0, o1, o2) = (rgb(r, g, b, 0), rgb(r, g, b, 1), rgb(r, g, b, 2));
                put(d0, _mm256_permute2x128_si256::<0x20>(o0, o1));
                put_half(&mut d0[32..], _mm256_castsi256_si128(o2));
                put_half(d1, _mm256_extracti128_si256::<1>(o0));
                put(&mut d1[16..], _mm256_permute2x128_si256::<0x31>(o1, o2));
            } else {
                let (rg0, rg1) = (_mm256_unpacklo_epi8(r, g), _mm256_unpackhi_epi8(r, g));
                let (ba0, ba1) = (
                    _mm256_unpacklo_epi8(b, alpha),
                    _mm256_unpackhi_epi8(b, alpha),
                );
                let p0 = _mm256_unpacklo_epi16(rg0, ba0);
                let p1 = _mm256_unpackhi_epi16(rg0, ba0);
                let p2 = _mm256_unpacklo_epi16(rg1, ba1);
                let p3 = _mm256_unpackhi_epi16(rg1, ba1);
                put(d0, _mm256_permute2x128_si256::<0x20>(p0, p1));
                put(&mut d0[32..], _mm256_permute2x128_si256::<0x20>(p2, p3));
                put(d1, _mm256_permute2x128_si256::<0x31>(p0, p1));
                put(&mut d1[32..], _mm256_permute2x128_si256::<0x31>(p2, p3));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{demosaic_with, Isa, Out, CHUNK};
    use crate::image::{Image, Sample};
    use crate::ops::demosaic::{reference, DemosaicParams, Method, Pattern, Raw};

    /// Every method computes the reference's arithmetic in its order, so
    /// every instruction set gives exactly the reference's samples, over
    /// several bands, partial chunks and both channel counts.
    #[test]
    fn every_method_equals_the_reference_exactly() {
        let mut isas = vec![Isa::Base];
        #[cfg(target_arch = "x86_64")]
        if std::is_x86_feature_detected!("avx2") {
            isas.push(Isa::Avx2);
        }
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let c = 2 * CHUNK;
        for (w, h) in [(2, 2), (6, 4), (34, 70), (c + 22, 10), (3 * c, 6)] {
            let u8s = Image::from_fn(w, h, 1, |_, _, _| next() as u8).unwrap();
            let u16s = Image::from_fn(w, h, 1, |_, _, _| (next() % 1024) as u16).unwrap();
            for (raw, bits) in [(Raw::U8(&u8s), None), (Raw::U16(&u16s), Some(10))] {
                for pattern in Pattern::ALL {
                    for method in Method::ALL {
                        for channels in [3, 4] {
                            let p = DemosaicParams {
                                pattern,
                                method,
                                black: 3.0,
                                gains: [1.9, 1.0, 1.4],
                                channels,
                                bits,
                            };
                            for &isa in &isas {
                                let ctx = format!("{w}x{h} {pattern} {method} x{channels} {isa:?}");
                                same::<u8>(&raw, &p, isa, &ctx);
                                same::<u16>(&raw, &p, isa, &ctx);
                                same::<f32>(&raw, &p, isa, &ctx);
                            }
                        }
                    }
                }
            }
        }
    }

    fn same<U: Sample>(raw: &Raw<'_>, p: &DemosaicParams, isa: Isa, ctx: &str) {
        let lv = p.levels(raw, U::TYPE).unwrap();
        let want: Image<U> = reference::demosaic(raw, p, &lv).unwrap();
        let got: Image<U> = demosaic_with(raw, p, &lv, isa).unwrap();
        assert_eq!(
            got.packed_samples(),
            want.packed_samples(),
            "{ctx} -> {}",
            U::TYPE
        );
    }

    /// The AVX2 byte stores narrow exactly as `put` (round half to even,
    /// saturate, NaN to 0) and put every sample where the scalar stores do.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn avx2_u8_stores_equal_put() {
        if !std::is_x86_feature_detected!("avx2") {
            return;
        }
        let mut vals = vec![
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            1e30,
            -1e30,
        ];
        for i in -4..=2 * 260 {
            let x = i as f32 * 0.5;
            vals.extend([x, x.next_up(), x.next_down()]);
        }
        let mut data = [[[[0f32; CHUNK]; 2]; 3]; 2];
        let mut it = vals.iter().cycle();
        for v in data.iter_mut().flatten().flatten().flatten() {
            *v = *it.next().unwrap();
        }
        // Several passes, so every value meets every position.
        for shift in 0..3 {
            stores_equal_put::<3>(&data);
            stores_equal_put::<4>(&data);
            for v in data.iter_mut().flatten().flatten().flatten() {
                *v = *it.nth(shift).unwrap();
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    fn stores_equal_put<const C: usize>(data: &[[[[f32; CHUNK]; 2]; 3]; 2]) {
        use std::mem::MaybeUninit;
        let src: super::Src = std::array::from_fn(|py| {
            std::array::from_fn(|c| std::array::from_fn(|px| &data[py][c][px]))
        });
        let n = 2 * CHUNK * C;
        let mut rows = [0, 1].map(|_| vec![MaybeUninit::new(7u8); n]);
        let [r0, r1] = &mut rows;
        // SAFETY: the CPU has AVX2 (checked by the caller).
        unsafe { super::x86::store_u8::<C>([r0, r1], &src, CHUNK, 200) };
        for (py, row) in rows.iter().enumerate() {
            for (k, b) in row.iter().enumerate() {
                // SAFETY: every byte was initialised by `MaybeUninit::new`.
                let got = unsafe { b.assume_init() };
                let (quad, px, c) = (k / (2 * C), k / C % 2, k % C);
                let want = match c {
                    3 => 200,
                    _ => <u8 as Out>::put(data[py][c][px][quad]),
                };
                assert_eq!(got, want, "C={C} row {py} quad {quad} px {px} colour {c}");
            }
        }
    }

    #[test]
    fn narrowing_equals_from_f32() {
        let mut v = vec![
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            -0.5,
            1e30,
            -1e30,
        ];
        // Every half step over both ranges, and values just beside them.
        for i in -4..=2 * 65540 {
            let x = i as f32 * 0.5;
            v.extend([x, x.next_up(), x.next_down()]);
        }
        for x in v {
            assert_eq!(<u8 as Out>::put(x), u8::from_f32(x), "{x}");
            assert_eq!(<u16 as Out>::put(x), u16::from_f32(x), "{x}");
        }
    }
}
