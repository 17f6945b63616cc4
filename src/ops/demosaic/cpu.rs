//! The rayon demosaic: the image is cut into bands of rows, one task each.
//!
//! The linear methods (bilinear, mhc) level a band's CFA rows (plus a
//! mirrored apron) to f32 once, split into their even and odd columns. A
//! pixel's neighbour at offset (dx, dy) is then, for every pixel of one
//! parity in a row, the same half-row at the same index offset, so the
//! four pixels of a 2x2 quad are each one fixed filter, the same for every
//! quad of a quad row, and there is no per-pixel branch on the pattern.
//! Each quad row is computed in chunks of [`CHUNK`] quads: all the colours
//! of a chunk's four sites in one pass over the 5 (or 3) input rows, with
//! the reference's arithmetic in the reference's order (so the results are
//! the reference's), into a few KiB that stay in L1, which are then
//! narrowed and interleaved into the two output rows. On x86-64 CPUs with
//! AVX2 the band is compiled for AVX2 (8 lanes), and 8-bit outputs are
//! narrowed and interleaved with byte shuffles.
//!
//! The edge method is not linear; it computes the band's green plane first,
//! then red and blue, pixel by pixel.

use std::any::TypeId;
use std::borrow::Cow;
use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::reference::{edge_green, mirror};
use super::{DemosaicParams, Levels, Method, Raw, B, G, R};
use crate::error::Result;
use crate::image::{Image, Sample};

/// Output rows per rayon task (even, so every band starts on a pattern row).
const BAND: usize = 32;
/// Apron of levelled CFA around a band: the widest method reads 3 pixels out.
const PAD: usize = 3;
/// The apron in half-rows (quads): offsets -3..=3 from parity 0 or 1 reach
/// half-row indices -2..=2.
const QPAD: usize = 2;
/// Quads per chunk of a quad row (the linear methods): a multiple of 8;
/// large enough to amortise finding a chunk's 50-odd input rows, small
/// enough that the chunk's input and outputs (about 16 KiB) stay in L1.
const CHUNK: usize = 192;

/// The raw samples as rows of `u8` or `u16` (packed frames are unpacked first).
enum Rows<'a> {
    U8(&'a Image<u8>),
    U16(Cow<'a, Image<u16>>),
}

impl Rows<'_> {
    /// Levelled samples of row `y` (in range) into `dst[x]` for x in 0..w.
    fn level(&self, y: usize, dst: &mut [f32], black: f32, s: [f32; 2]) {
        match self {
            Rows::U8(i) => level_row(i.row(y), dst, black, s),
            Rows::U16(i) => level_row(i.row(y), dst, black, s),
        }
    }

    /// As `level`, split into even and odd columns (`w / 2` each).
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

fn level_row<T: Sample>(src: &[T], dst: &mut [f32], black: f32, s: [f32; 2]) {
    for (d, q) in dst.chunks_exact_mut(2).zip(src.chunks_exact(2)) {
        d[0] = (q[0].to_f32() - black) * s[0];
        d[1] = (q[1].to_f32() - black) * s[1];
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
    advise_huge_pages(out.spare_capacity_mut());
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

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
fn advise_huge_pages<T>(buf: &mut [T]) {
    const HUGE: usize = 2 << 20;
    let start = buf.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(buf);
    let (a, b) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
    if b >= a + 2 * HUGE {
        // SAFETY: [a, b) lies inside `buf`, which we own; MADV_HUGEPAGE is
        // advice about backing pages and never changes the memory's contents.
        // Failure (no THP support) only means the advice is not taken.
        unsafe {
            libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
fn advise_huge_pages<T>(_: &mut [T]) {}

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
        .for_each_init(Vec::new, |scratch, (b, dst)| {
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
// every value is the reference's. `t(dy, dx)` is the neighbour at (dx, dy)
// of each of the chunk's sites.

#[inline(always)]
fn bilinear_green<'a>(t: impl Fn(isize, isize) -> &'a [f32; CHUNK], o: &mut Slots) {
    let (w, e, n, s) = (t(0, -1), t(0, 1), t(-1, 0), t(1, 0));
    let [oh, ov] = o;
    for i in 0..CHUNK {
        oh[i] = 0.5 * (w[i] + e[i]);
        ov[i] = 0.5 * (n[i] + s[i]);
    }
}

#[inline(always)]
fn bilinear_rb<'a>(t: impl Fn(isize, isize) -> &'a [f32; CHUNK], o: &mut Slots) {
    let (w, e, n, s) = (t(0, -1), t(0, 1), t(-1, 0), t(1, 0));
    let (nw, ne, sw, se) = (t(-1, -1), t(-1, 1), t(1, -1), t(1, 1));
    let [og, oo] = o;
    for i in 0..CHUNK {
        og[i] = 0.25 * (((w[i] + e[i]) + n[i]) + s[i]);
        oo[i] = 0.25 * (((nw[i] + ne[i]) + sw[i]) + se[i]);
    }
}

#[inline(always)]
fn mhc_green<'a>(t: impl Fn(isize, isize) -> &'a [f32; CHUNK], o: &mut Slots) {
    let c = t(0, 0);
    let (w, e, n, s) = (t(0, -1), t(0, 1), t(-1, 0), t(1, 0));
    let (w2, e2, n2, s2) = (t(0, -2), t(0, 2), t(-2, 0), t(2, 0));
    let (nw, ne, sw, se) = (t(-1, -1), t(-1, 1), t(1, -1), t(1, 1));
    let [oh, ov] = o;
    for i in 0..CHUNK {
        let c0 = c[i];
        let diag = ((nw[i] + ne[i]) + sw[i]) + se[i];
        let (h1, v1) = (w[i] + e[i], n[i] + s[i]);
        let (h2, v2) = (w2[i] + e2[i], n2[i] + s2[i]);
        oh[i] = (5.0 * c0 + 4.0 * h1 - h2 - diag + 0.5 * v2) * 0.125;
        ov[i] = (5.0 * c0 + 4.0 * v1 - v2 - diag + 0.5 * h2) * 0.125;
    }
}

#[inline(always)]
fn mhc_rb<'a>(t: impl Fn(isize, isize) -> &'a [f32; CHUNK], o: &mut Slots) {
    let c = t(0, 0);
    let (w, e, n, s) = (t(0, -1), t(0, 1), t(-1, 0), t(1, 0));
    let (w2, e2, n2, s2) = (t(0, -2), t(0, 2), t(-2, 0), t(2, 0));
    let (nw, ne, sw, se) = (t(-1, -1), t(-1, 1), t(1, -1), t(1, 1));
    let [og, oo] = o;
    for i in 0..CHUNK {
        let c0 = c[i];
        let ring2 = ((w2[i] + e2[i]) + n2[i]) + s2[i];
        let cross = ((w[i] + e[i]) + n[i]) + s[i];
        let diag = ((nw[i] + ne[i]) + sw[i]) + se[i];
        og[i] = (4.0 * c0 + 2.0 * cross - ring2) * 0.125;
        oo[i] = (6.0 * c0 + 2.0 * diag - 1.5 * ring2) * 0.125;
    }
}

impl Band<'_> {
    /// The levelling scales of row `y`'s even and odd columns.
    #[inline(always)]
    fn row_scales(&self, y: usize) -> [f32; 2] {
        let pat = self.p.pattern;
        [0, 1].map(|x| self.lv.scale[pat.colour(x, y)])
    }

    /// One band, output rows `y0..`, compiled for the crate's target.
    #[inline(always)]
    fn task<U: Out>(
        &self,
        y0: usize,
        dst: &mut [MaybeUninit<U>],
        scratch: &mut Vec<f32>,
        avx2: bool,
    ) {
        match self.p.method {
            Method::Edge => self.edge::<U>(y0, dst),
            m => self.linear::<U>(m, y0, dst, scratch, avx2),
        }
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
        scratch: &mut Vec<f32>,
    ) {
        self.task::<U>(y0, dst, scratch, true)
    }

    /// Levelled, mirrored CFA rows `y0 - PAD .. y1 + PAD`, each `w + 2 PAD`
    /// wide (column x at index x + PAD).
    fn levelled(&self, y0: usize, y1: usize) -> Vec<f32> {
        let (w, h) = (self.w, self.h);
        let stride = w + 2 * PAD;
        let n = y1 - y0 + 2 * PAD;
        let mut buf = vec![0f32; n * stride];
        for (r, dst) in buf.chunks_exact_mut(stride).enumerate() {
            let y = mirror(y0 as i64 + r as i64 - PAD as i64, h);
            let s = self.row_scales(y);
            self.rows.level(y, &mut dst[PAD..PAD + w], self.lv.black, s);
            for k in 1..=PAD {
                dst[PAD - k] = dst[PAD + mirror(-(k as i64), w)];
                dst[PAD + w - 1 + k] = dst[PAD + mirror((w - 1 + k) as i64, w)];
            }
        }
        buf
    }

    /// `avx2`: true only where the caller is compiled for AVX2 (and so the
    /// CPU has it).
    #[inline(always)]
    fn linear<U: Out>(
        &self,
        m: Method,
        y0: usize,
        dst: &mut [MaybeUninit<U>],
        scratch: &mut Vec<f32>,
        avx2: bool,
    ) {
        let (w, ch) = (self.w, self.p.channels);
        let y1 = (y0 + BAND).min(self.h);
        let r = m.radius();
        let half = w / 2;
        let chunks = half.div_ceil(CHUNK);
        // Half-rows: [row][parity][QPAD + i] = levelled column 2(i - QPAD) + parity,
        // long enough for whole chunks (a chunk reads one quad either side;
        // what lies past the apron is computed but never stored).
        let hs = QPAD + chunks * CHUNK + QPAD;
        let n = y1 - y0 + 2 * r;
        if scratch.len() < n * 2 * hs {
            scratch.resize(n * 2 * hs, 0.0);
        }
        let halves = &mut scratch[..n * 2 * hs];
        for (k, pair) in halves.chunks_exact_mut(2 * hs).enumerate() {
            let y = mirror(y0 as i64 + k as i64 - r as i64, self.h);
            let (even, odd) = pair.split_at_mut(hs);
            let s = self.row_scales(y);
            self.rows.level_split(
                y,
                &mut even[QPAD..QPAD + half],
                &mut odd[QPAD..QPAD + half],
                self.lv.black,
                s,
            );
            // The apron: column 2(i - QPAD) + parity, mirrored into the row.
            for i in (0..QPAD).chain(QPAD + half..2 * QPAD + half) {
                for par in 0..2 {
                    let m = mirror(2 * i as i64 - 2 * QPAD as i64 + par as i64, w);
                    let v = if m.is_multiple_of(2) {
                        even[QPAD + m / 2]
                    } else {
                        odd[QPAD + m / 2]
                    };
                    if par == 0 {
                        even[i] = v;
                    } else {
                        odd[i] = v;
                    }
                }
            }
        }
        let halves = &*halves;
        let pat = self.p.pattern;
        // Where each colour of each site comes from: the site's own sample
        // (None) or one of its slots.
        let from = [0, 1].map(|py| {
            [0, 1].map(|px| {
                let c = pat.colour(px, py);
                [R, G, B].map(|k| match (k == c, c == G) {
                    (true, _) => None,
                    (false, true) => Some(usize::from(k != pat.colour(px + 1, py))),
                    (false, false) => Some(usize::from(k != G)),
                })
            })
        });
        let mut slots: [[Slots; 2]; 2] = [[[[0.0; CHUNK]; 2]; 2]; 2];
        let alpha = self.lv.alpha;
        for (ry, rows) in dst.chunks_mut(2 * w * ch).enumerate() {
            let ry = 2 * ry;
            let (row0, row1) = rows.split_at_mut(w * ch);
            for k in 0..chunks {
                // The half-row of site (px, py)'s neighbour (dx, dy), from
                // this chunk's first quad on.
                let tap = |py: usize, px: usize, dy: isize, dx: isize| -> &[f32; CHUNK] {
                    let row = (ry + r + py) as isize + dy;
                    let col = px as isize + dx;
                    let start = (2 * row + col.rem_euclid(2)) as usize * hs
                        + (QPAD + k * CHUNK).wrapping_add_signed(col.div_euclid(2));
                    halves[start..start + CHUNK].try_into().unwrap()
                };
                for (py, sl) in slots.iter_mut().enumerate() {
                    for (px, o) in sl.iter_mut().enumerate() {
                        let t = |dy, dx| tap(py, px, dy, dx);
                        match (m, pat.colour(px, py) == G) {
                            (Method::Bilinear, true) => bilinear_green(t, o),
                            (Method::Bilinear, false) => bilinear_rb(t, o),
                            (_, true) => mhc_green(t, o),
                            (_, false) => mhc_rb(t, o),
                        }
                    }
                }
                let src: Src = [0, 1].map(|py| {
                    [R, G, B].map(|c| {
                        [0, 1].map(|px| match from[py][px][c] {
                            None => tap(py, px, 0, 0),
                            Some(s) => &slots[py][px][s],
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

    fn edge<U: Out>(&self, y0: usize, dst: &mut [MaybeUninit<U>]) {
        let (w, ch) = (self.w, self.p.channels);
        let y1 = (y0 + BAND).min(self.h);
        let stride = w + 2 * PAD;
        let f = self.levelled(y0, y1);
        let at =
            |x: i64, y: i64| f[((y + PAD as i64) as usize) * stride + (x + PAD as i64) as usize];
        let pat = self.p.pattern;
        let colour = |x: i64, y: i64| {
            pat.colour(
                x.rem_euclid(2) as usize,
                (y0 as i64 + y).rem_euclid(2) as usize,
            )
        };
        // Green for band rows -1..=len and columns -1..=w (band-relative y).
        let gw = w + 2;
        let gh = y1 - y0 + 2;
        let mut green = vec![0f32; gw * gh];
        for gy in 0..gh {
            let y = gy as i64 - 1;
            for gx in 0..gw {
                let x = gx as i64 - 1;
                green[gy * gw + gx] = if colour(x, y) == G {
                    at(x, y)
                } else {
                    edge_green(&at, x, y, self.lv.alpha)
                };
            }
        }
        let gr = |x: i64, y: i64| green[((y + 1) as usize) * gw + (x + 1) as usize];
        let mut chans = [
            [vec![0f32; w / 2], vec![0f32; w / 2], vec![0f32; w / 2]],
            Default::default(),
        ];
        chans[1] = chans[0].clone();
        for ry in 0..y1 - y0 {
            let y = ry as i64;
            for (par, out) in chans.iter_mut().enumerate() {
                let c = colour(par as i64, y);
                let hc = colour(par as i64 + 1, y);
                // `i` indexes three channel rows at once.
                #[allow(clippy::needless_range_loop)]
                for i in 0..w / 2 {
                    let x = (2 * i + par) as i64;
                    let d = |dx: i64, dy: i64| at(x + dx, y + dy) - gr(x + dx, y + dy);
                    let g = gr(x, y);
                    out[G][i] = g;
                    if c == G {
                        out[hc][i] = g + 0.5 * (d(-1, 0) + d(1, 0));
                        out[R + B - hc][i] = g + 0.5 * (d(0, -1) + d(0, 1));
                    } else {
                        out[c][i] = at(x, y);
                        out[R + B - c][i] = g + 0.25 * (d(-1, -1) + d(1, -1) + d(-1, 1) + d(1, 1));
                    }
                }
            }
            let row = &mut dst[ry * w * ch..(ry + 1) * w * ch];
            store::<U>(row, &chans, ch, self.lv.alpha);
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

/// Interleaves the even and odd columns' channels into one output row.
fn store<U: Out>(row: &mut [MaybeUninit<U>], chans: &[[Vec<f32>; 3]; 2], ch: usize, alpha: f32) {
    if ch == 4 {
        store_n::<U, 4>(row, chans, alpha)
    } else {
        store_n::<U, 3>(row, chans, alpha)
    }
}

fn store_n<U: Out, const CH: usize>(
    row: &mut [MaybeUninit<U>],
    chans: &[[Vec<f32>; 3]; 2],
    alpha: f32,
) {
    let a = U::put(alpha);
    // Narrow each channel row on its own (a contiguous loop the compiler
    // vectorises), then interleave the narrowed samples.
    let narrow: [[Vec<U>; 3]; 2] = chans
        .each_ref()
        .map(|c| c.each_ref().map(|v| v.iter().map(|&x| U::put(x)).collect()));
    for (i, quad) in row.chunks_exact_mut(2 * CH).enumerate() {
        for (par, n) in narrow.iter().enumerate() {
            let px = &mut quad[par * CH..(par + 1) * CH];
            px[0].write(n[0][i]);
            px[1].write(n[1][i]);
            px[2].write(n[2][i]);
            if CH == 4 {
                px[3].write(a);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{demosaic_with, Isa, Out, CHUNK};
    use crate::image::{Image, Sample};
    use crate::ops::demosaic::{reference, DemosaicParams, Method, Pattern, Raw};

    /// The linear methods compute the reference's arithmetic in its order,
    /// so every instruction set gives exactly the reference's samples, over
    /// several bands, partial chunks and both channel counts.
    #[test]
    fn linear_methods_equal_the_reference_exactly() {
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
                    for method in [Method::Bilinear, Method::Mhc] {
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
