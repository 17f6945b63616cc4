//! The sites' filters of each method, on a chunk of quads at a time.

use super::CHUNK;
use crate::simd::Quads;

/// A chunk's colour rows, `[row parity][colour][column parity]`: the
/// values of the chunk's quads.
pub(super) type Src<'a> = Quads<'a, CHUNK>;

/// The two interpolated colours of a green site, `[horizontal
/// neighbours' colour, vertical neighbours' colour]`, and of a red or blue
/// site, `[green, the other colour]`.
pub(super) type Slots = [[f32; CHUNK]; 2];

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
pub(super) const WIDE: usize = CHUNK + 2;

/// A chunk's input for the linear filters, `[2 + row][parity]`: the
/// half-rows of the quad row's rows -2..=3, from the chunk's quad -1 on.
pub(super) type Wide<'a> = [[&'a [f32; WIDE]; 2]; 6];

/// The two slots of a site, by mhc (else bilinear), at a green site (else
/// red or blue); `t(dy, dx)` is the site's neighbour at (dx, dy).
#[inline(always)]
fn slots(mhc: bool, green: bool, t: impl Fn(isize, isize) -> f32) -> [f32; 2] {
    match (mhc, green) {
        (true, true) => mhc_green(t),
        (true, false) => mhc_rb(t),
        (false, true) => bilinear_green(t),
        (false, false) => bilinear_rb(t),
    }
}

/// Both slots of the four sites of a chunk's quads (`MHC`: mhc, else bilinear; `GD`: the green sites are the quad's
/// diagonal, (0, 0) and (1, 1)).
#[inline(always)]
pub(super) fn linear_quads<const MHC: bool, const GD: bool>(
    rows: &Wide,
    o: &mut [[Slots; 2]; 2],
) {
    let [[o00, o01], [o10, o11]] = o;
    site::<MHC, GD, 0, 0>(rows, o00);
    site::<MHC, GD, 0, 1>(rows, o01);
    site::<MHC, GD, 1, 0>(rows, o10);
    site::<MHC, GD, 1, 1>(rows, o11);
}

/// Both slots of the site (`PX`, `PY`) of a chunk's quads. One loop per
/// site, with every offset a constant, is what the compiler vectorises (a
/// loop over all four sites, with the sites in an inner loop, it leaves
/// scalar).
#[inline(always)]
fn site<const MHC: bool, const GD: bool, const PY: usize, const PX: usize>(
    rows: &Wide,
    o: &mut Slots,
) {
    let [o0, o1] = o;
    for i in 0..CHUNK {
        let t = |dy: isize, dx: isize| {
            let col = PX as isize + dx;
            let q = (i as isize + col.div_euclid(2) + 1) as usize;
            rows[(PY as isize + dy + 2) as usize][col.rem_euclid(2) as usize][q]
        };
        let [a, b] = slots(MHC, (PX == PY) == GD, t);
        o0[i] = a;
        o1[i] = b;
    }
}

// The edge method, in `reference::edge_green` and `reference::edge`'s
// arithmetic. `f(dy, dx)` reads the levelled CFA.

/// Green at the chunk's red or blue sites of one parity, into `o`, and
/// the sites' colour differences (sample minus green) into `od`.
#[inline(always)]
pub(super) fn edge_green<'a>(
    f: impl Fn(isize, isize) -> &'a [f32; CHUNK],
    full: f32,
    o: &mut [f32; CHUNK],
    od: &mut [f32; CHUNK],
) {
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
        // `reference::edge_blend`.
        let (a, b) = (dh + eps, dv + eps);
        let (a2, b2) = (a * a, b * b);
        let g = gh + (gv - gh) * (a2 / (a2 + b2));
        o[i] = g;
        od[i] = c - g;
    }
}

/// [`edge_green`] where the levelled samples are integers below 256
/// (`f(dy, dx)` reads them as i16; `c` is the sites' own, levelled): every
/// estimate and gradient of `reference::edge_green` is then a
/// quarter-integer below 2^11, exact in f32 whatever the order of its
/// sums, so each is computed times 4 in i16 lanes (16 to a vector on
/// AVX2), and only the blend in f32, as `reference::edge_blend` does it.
#[inline(always)]
pub(super) fn edge_green_ints<'a>(
    f: impl Fn(isize, isize) -> &'a [i16; CHUNK],
    c: &[f32; CHUNK],
    full: f32,
    o: &mut [f32; CHUNK],
    od: &mut [f32; CHUNK],
) {
    let (mut gh4, mut dg4, mut dh4, mut dv4) = ([0; CHUNK], [0; CHUNK], [0; CHUNK], [0; CHUNK]);
    quarters(f, [&mut gh4, &mut dg4, &mut dh4, &mut dv4]);
    let eps = 4e-6 * full;
    for i in 0..CHUNK {
        let gh = f32::from(gh4[i]) * 0.25;
        let (a, b) = (f32::from(dh4[i]) * 0.25 + eps, f32::from(dv4[i]) * 0.25 + eps);
        let (a2, b2) = (a * a, b * b);
        let g = gh + f32::from(dg4[i]) * 0.25 * (a2 / (a2 + b2));
        o[i] = g;
        od[i] = c[i] - g;
    }
}

/// Four times `gh`, `gv - gh`, `dh` and `dv` of `reference::edge_green`
/// at the chunk's sites from integer samples below 256 (at most 5100 in
/// magnitude, so i16 holds them).
#[inline(always)]
fn quarters<'a>(f: impl Fn(isize, isize) -> &'a [i16; CHUNK], out: [&mut [i16; CHUNK]; 4]) {
    let c = f(0, 0);
    let (w, e, n, s) = (f(0, -1), f(0, 1), f(-1, 0), f(1, 0));
    let (w2, e2, n2, s2) = (f(0, -2), f(0, 2), f(-2, 0), f(2, 0));
    let (nw, ne, sw, se) = (f(-1, -1), f(-1, 1), f(1, -1), f(1, 1));
    let (ene, wsw, wnw, ese) = (f(-1, 2), f(1, -2), f(-1, -2), f(1, 2));
    let (ssw, nne, nnw, sse) = (f(2, -1), f(-2, 1), f(-2, -1), f(2, 1));
    let [gh4, dg4, dh4, dv4] = out;
    for i in 0..CHUNK {
        let (c, w, e, n, s) = (c[i], w[i], e[i], n[i], s[i]);
        let lh = 2 * c - w2[i] - e2[i];
        let lv = 2 * c - n2[i] - s2[i];
        let gh = 2 * (w + e) + lh;
        let gv = 2 * (n + s) + lv;
        let (nw, ne, sw, se) = (nw[i], ne[i], sw[i], se[i]);
        gh4[i] = gh;
        dg4[i] = gv - gh;
        dh4[i] = 4 * ((w - e).abs() + lh.abs())
            + 2 * ((nw - ne).abs() + (sw - se).abs())
            + ((n - ene[i]).abs() + (s - wsw[i]).abs())
            + ((n - wnw[i]).abs() + (s - ese[i]).abs());
        dv4[i] = 4 * ((n - s).abs() + lv.abs())
            + 2 * ((nw - sw).abs() + (ne - se).abs())
            + ((w - ssw[i]).abs() + (e - nne[i]).abs())
            + ((w - nnw[i]).abs() + (e - sse[i]).abs());
    }
}

/// A green site: green (its sample) plus the mean colour difference of its
/// horizontal and of its vertical neighbours; `d(dy, dx)` reads the colour
/// differences at the red and blue sites.
#[inline(always)]
pub(super) fn edge_at_green<'a>(
    f: impl Fn(isize, isize) -> &'a [f32; CHUNK],
    d: impl Fn(isize, isize) -> &'a [f32; CHUNK],
    o: &mut Slots,
) {
    let c = f(0, 0);
    let (dw, de, dn, ds) = (d(0, -1), d(0, 1), d(-1, 0), d(1, 0));
    let [oh, ov] = o;
    for i in 0..CHUNK {
        oh[i] = c[i] + 0.5 * (dw[i] + de[i]);
        ov[i] = c[i] + 0.5 * (dn[i] + ds[i]);
    }
}

/// A red or blue site: the other colour is its green `g` plus the mean
/// colour difference of the diagonal neighbours.
#[inline(always)]
pub(super) fn edge_at_rb<'a>(
    g: &[f32; CHUNK],
    d: impl Fn(isize, isize) -> &'a [f32; CHUNK],
    o: &mut Slots,
) {
    let (nw, ne, sw, se) = (d(-1, -1), d(-1, 1), d(1, -1), d(1, 1));
    let [_, oo] = o;
    for i in 0..CHUNK {
        oo[i] = g[i] + 0.25 * (((nw[i] + ne[i]) + sw[i]) + se[i]);
    }
}
