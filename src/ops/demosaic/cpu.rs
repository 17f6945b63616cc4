//! The rayon demosaic: the image is cut into bands of rows, one task each.
//! A band's CFA rows (plus a mirrored apron) are levelled to f32 once.
//!
//! The linear methods (bilinear, mhc) split each levelled row into its even
//! and odd columns. A pixel's neighbour at offset (dx, dy) is then, for
//! every pixel of one parity in a row, the same half-row at the same index
//! offset, so each output channel is a short sum of shifted contiguous rows
//! (`acc[i] += w * half[i + k]`), which the compiler vectorises, and there
//! is no per-pixel branch on the pattern: the pattern only decides which
//! taps a parity class gets, once per row. The edge method is not linear;
//! it computes the band's green plane first, then red and blue, pixel by pixel.

use std::borrow::Cow;

use rayon::prelude::*;

use super::reference::{edge_green, mirror};
use super::{DemosaicParams, Levels, Method, Raw, B, G, R};
use crate::error::Result;
use crate::image::{Image, Sample};

/// Output rows per rayon task (even, so every band starts on a pattern row).
const BAND: usize = 16;
/// Apron of levelled CFA around a band: the widest method reads 3 pixels out.
const PAD: usize = 3;
/// The apron in half-rows (quads): offsets -3..=3 from parity 0 or 1 reach
/// half-row indices -2..=2.
const QPAD: usize = 2;

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
    fn level_split(&self, y: usize, even: &mut [f32], odd: &mut [f32], black: f32, s: [f32; 2]) {
        match self {
            Rows::U8(i) => level_split(i.row(y), even, odd, black, s),
            Rows::U16(i) => level_split(i.row(y), even, odd, black, s),
        }
    }
}

/// Levels a row into its even and odd columns.
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

/// Demosaics on the host's cores (see [`super`] for the rules).
pub fn demosaic<U: Sample>(raw: &Raw<'_>, p: &DemosaicParams, lv: &Levels) -> Result<Image<U>> {
    let (w, h) = raw.size();
    let mut out = Image::<U>::new(w, h, p.channels)?;
    let any = &mut out as &mut dyn std::any::Any;
    if let Some(o) = any.downcast_mut::<Image<u8>>() {
        run(raw, p, lv, o)?;
    } else if let Some(o) = any.downcast_mut::<Image<u16>>() {
        run(raw, p, lv, o)?;
    } else if let Some(o) = any.downcast_mut::<Image<f32>>() {
        run(raw, p, lv, o)?;
    } else {
        return Err(crate::Error::arg(format!(
            "demosaic has no CPU output path for {}",
            U::TYPE
        )));
    }
    Ok(out)
}

fn run<U: Out>(raw: &Raw<'_>, p: &DemosaicParams, lv: &Levels, out: &mut Image<U>) -> Result<()> {
    raw.validate()?;
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
    let row_len = out.row_len();
    let band = Band {
        rows: &rows,
        w,
        h,
        p,
        lv,
    };
    out.as_packed_mut()
        .expect("a new image is packed")
        .par_chunks_mut(BAND * row_len)
        .enumerate()
        .for_each(|(b, dst)| {
            let y0 = b * BAND;
            match p.method {
                Method::Edge => band.edge::<U>(y0, dst),
                m => band.linear::<U>(m, y0, dst),
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

/// One tap of a linear filter: row offset, column offset, weight.
type Tap = (i64, i64, f32);

/// The linear filters of a site: for each output colour, its taps.
/// `kind`: the site's colour, and for green sites the colour of its
/// horizontal neighbours.
fn linear_taps(m: Method, colour: usize, h_colour: usize) -> [Vec<Tap>; 3] {
    let cross = [(0, -1), (-1, 0), (1, 0), (0, 1)];
    let diag = [(-1, -1), (1, -1), (-1, 1), (1, 1)];
    let ring2 = [(0, -2), (-2, 0), (2, 0), (0, 2)];
    let with = |pts: &[(i64, i64)], wt: f32| -> Vec<Tap> {
        pts.iter().map(|&(dx, dy)| (dy, dx, wt)).collect()
    };
    let mut t: [Vec<Tap>; 3] = Default::default();
    t[colour] = vec![(0, 0, 1.0)];
    if colour == G {
        let v_colour = R + B - h_colour;
        let (hor, ver) = ([(-1, 0), (1, 0)], [(0, -1), (0, 1)]);
        let (hor2, ver2) = ([(-2, 0), (2, 0)], [(0, -2), (0, 2)]);
        match m {
            Method::Bilinear => {
                t[h_colour] = with(&hor, 0.5);
                t[v_colour] = with(&ver, 0.5);
            }
            _ => {
                // Malvar-He-Cutler: [5, 4 x2 along, -1 x2 two along, -1 diagonals, 1/2 x2 two across] / 8.
                let along = |a: &[(i64, i64)], a2: &[(i64, i64)], x2: &[(i64, i64)]| {
                    let mut v = vec![(0, 0, 5.0 / 8.0)];
                    v.extend(with(a, 4.0 / 8.0));
                    v.extend(with(a2, -1.0 / 8.0));
                    v.extend(with(&diag, -1.0 / 8.0));
                    v.extend(with(x2, 0.5 / 8.0));
                    v
                };
                t[h_colour] = along(&hor, &hor2, &ver2);
                t[v_colour] = along(&ver, &ver2, &hor2);
            }
        }
    } else {
        let other = R + B - colour;
        match m {
            Method::Bilinear => {
                t[G] = with(&cross, 0.25);
                t[other] = with(&diag, 0.25);
            }
            _ => {
                let mut g = vec![(0, 0, 4.0 / 8.0)];
                g.extend(with(&cross, 2.0 / 8.0));
                g.extend(with(&ring2, -1.0 / 8.0));
                t[G] = g;
                let mut o = vec![(0, 0, 6.0 / 8.0)];
                o.extend(with(&diag, 2.0 / 8.0));
                o.extend(with(&ring2, -1.5 / 8.0));
                t[other] = o;
            }
        }
    }
    t
}

impl Band<'_> {
    /// The levelling scales of row `y`'s even and odd columns.
    fn row_scales(&self, y: usize) -> [f32; 2] {
        let pat = self.p.pattern;
        [0, 1].map(|x| self.lv.scale[pat.colour(x, y)])
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

    fn linear<U: Out>(&self, m: Method, y0: usize, dst: &mut [U]) {
        let (w, ch) = (self.w, self.p.channels);
        let y1 = (y0 + BAND).min(self.h);
        let half = w / 2;
        let hs = half + 2 * QPAD;
        // Half-rows: [row][parity][QPAD + i] = levelled column 2(i - QPAD) + parity.
        let n = y1 - y0 + 2 * PAD;
        let mut halves = vec![0f32; n * 2 * hs];
        for (r, pair) in halves.chunks_exact_mut(2 * hs).enumerate() {
            let y = mirror(y0 as i64 + r as i64 - PAD as i64, self.h);
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
            for i in (0..QPAD).chain(QPAD + half..hs) {
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
        let pat = self.p.pattern;
        let mut acc = vec![0f32; half];
        let mut chans = [
            [vec![0f32; half], vec![0f32; half], vec![0f32; half]],
            Default::default(),
        ];
        chans[1] = chans[0].clone();
        // The filters of each parity class, [row parity][column parity].
        let classes: [[[Vec<Tap>; 3]; 2]; 2] = [0, 1].map(|yp| {
            [0, 1].map(|par| linear_taps(m, pat.colour(par, yp), pat.colour(par + 1, yp)))
        });
        for (ry, y) in (y0..y1).enumerate() {
            for (par, out) in chans.iter_mut().enumerate() {
                for (c, t) in classes[y & 1][par].iter().enumerate() {
                    let a = &mut acc;
                    a.fill(0.0);
                    for &(dy, dx, wt) in t {
                        let row = (ry as i64 + PAD as i64 + dy) as usize;
                        let col = par as i64 + dx;
                        let q = col.rem_euclid(2) as usize;
                        let off = (col - q as i64).div_euclid(2) + QPAD as i64;
                        let base = (2 * row + q) * hs + off as usize;
                        let src = &halves[base..base + half];
                        for (a, s) in a.iter_mut().zip(src) {
                            *a += wt * s;
                        }
                    }
                    out[c].copy_from_slice(a);
                }
            }
            let row = &mut dst[ry * w * ch..(ry + 1) * w * ch];
            store::<U>(row, &chans, ch, self.lv.alpha);
        }
    }

    fn edge<U: Out>(&self, y0: usize, dst: &mut [U]) {
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

/// Interleaves the even and odd columns' channels into one output row.
fn store<U: Out>(row: &mut [U], chans: &[[Vec<f32>; 3]; 2], ch: usize, alpha: f32) {
    if ch == 4 {
        store_n::<U, 4>(row, chans, alpha)
    } else {
        store_n::<U, 3>(row, chans, alpha)
    }
}

fn store_n<U: Out, const CH: usize>(row: &mut [U], chans: &[[Vec<f32>; 3]; 2], alpha: f32) {
    let a = U::put(alpha);
    // Narrow each channel row on its own (a contiguous loop the compiler
    // vectorises), then interleave the narrowed samples.
    let narrow: [[Vec<U>; 3]; 2] = chans
        .each_ref()
        .map(|c| c.each_ref().map(|v| v.iter().map(|&x| U::put(x)).collect()));
    for (i, quad) in row.chunks_exact_mut(2 * CH).enumerate() {
        for (par, n) in narrow.iter().enumerate() {
            let px = &mut quad[par * CH..(par + 1) * CH];
            px[0] = n[0][i];
            px[1] = n[1][i];
            px[2] = n[2][i];
            if CH == 4 {
                px[3] = a;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Out;
    use crate::image::Sample;

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
