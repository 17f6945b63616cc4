//! The reference demosaic: one pixel at a time, every neighbour read through
//! the mirrored-CFA sampler, plain f32 arithmetic. Ground truth for tests;
//! as simple as possible, not fast.

use super::{DemosaicParams, Levels, Method, Pattern, Raw, B, G, R};
use crate::error::Result;
use crate::image::{Image, Sample};

/// Reflect-101 (`cb|abc|ba`): where index `i` of a line of `n >= 2` samples
/// comes from. The period `2(n - 1)` is even, so parity is kept.
pub fn mirror(i: i64, n: usize) -> usize {
    let period = 2 * (n as i64 - 1);
    let k = i.rem_euclid(period);
    (if k >= n as i64 { period - k } else { k }) as usize
}

/// The levelled CFA, readable at any integer position.
pub struct Cfa {
    values: Vec<f32>,
    width: usize,
    height: usize,
    pattern: Pattern,
    levels: Levels,
}

impl Cfa {
    /// The levelled sample at (x, y), mirrored past the edges.
    pub fn at(&self, x: i64, y: i64) -> f32 {
        let (mx, my) = (mirror(x, self.width), mirror(y, self.height));
        let c = self.pattern.colour(mx, my);
        (self.values[my * self.width + mx] - self.levels.black) * self.levels.scale[c]
    }

    /// The colour of the site at (x, y) (parity decides, so mirroring agrees).
    pub fn colour(&self, x: i64, y: i64) -> usize {
        self.pattern
            .colour(x.rem_euclid(2) as usize, y.rem_euclid(2) as usize)
    }
}

/// Green at a red or blue site of the edge method: Hamilton-Adams estimates
/// along each axis (neighbour mean plus half the second difference of the
/// site's own colour), blended with weights `1 / (eps + gradient)^2`.
pub fn edge_green(f: &dyn Fn(i64, i64) -> f32, x: i64, y: i64, full: f32) -> f32 {
    let c = f(x, y);
    let (w, e, n, s) = (f(x - 1, y), f(x + 1, y), f(x, y - 1), f(x, y + 1));
    let lh = 2.0 * c - f(x - 2, y) - f(x + 2, y);
    let lv = 2.0 * c - f(x, y - 2) - f(x, y + 2);
    let gh = 0.5 * (w + e) + 0.25 * lh;
    let gv = 0.5 * (n + s) + 0.25 * lv;
    // Gradients: the estimate's own terms, plus the same-colour differences
    // in the rows (columns) beside the site, so one noisy sample does not
    // decide the direction.
    let (nw, ne, sw, se) = (
        f(x - 1, y - 1),
        f(x + 1, y - 1),
        f(x - 1, y + 1),
        f(x + 1, y + 1),
    );
    let dh = (w - e).abs()
        + lh.abs()
        + 0.5 * ((nw - ne).abs() + (sw - se).abs())
        + 0.25
            * ((n - f(x + 2, y - 1)).abs()
                + (s - f(x - 2, y + 1)).abs()
                + (n - f(x - 2, y - 1)).abs()
                + (s - f(x + 2, y + 1)).abs());
    let dv = (n - s).abs()
        + lv.abs()
        + 0.5 * ((nw - sw).abs() + (ne - se).abs())
        + 0.25
            * ((w - f(x - 1, y + 2)).abs()
                + (e - f(x + 1, y - 2)).abs()
                + (w - f(x - 1, y - 2)).abs()
                + (e - f(x + 1, y + 2)).abs());
    edge_blend(gh, gv, dh, dv, full)
}

/// Blends two directional estimates by inverse squared gradients. The
/// offset `4e-6 * full` (`full`: the output's full scale) keeps the weights
/// finite where both gradients vanish and makes the blend independent of
/// the output type.
///
/// With `a = dh + eps` and `b = dv + eps`, the blend `(gh / a² + gv / b²) /
/// (1 / a² + 1 / b²)` is computed as `gh + (gv - gh) a² / (a² + b²)`: one
/// division instead of three (the rayon path's costliest instruction), no
/// product of a square and an estimate (which could overflow at the
/// largest gains), and a constant input gives exactly its value.
pub fn edge_blend(gh: f32, gv: f32, dh: f32, dv: f32, full: f32) -> f32 {
    let eps = 4e-6 * full;
    let (a, b) = (dh + eps, dv + eps);
    let (a2, b2) = (a * a, b * b);
    gh + (gv - gh) * (a2 / (a2 + b2))
}

/// Demosaics `raw` (see the module docs of [`super`] for the rules).
pub fn demosaic<U: Sample>(raw: &Raw<'_>, p: &DemosaicParams, lv: &Levels) -> Result<Image<U>> {
    let (w, h) = raw.size();
    let f = Cfa {
        values: raw.values()?,
        width: w,
        height: h,
        pattern: p.pattern,
        levels: *lv,
    };
    // The edge method's green plane (green sites keep their sample).
    let green: Vec<f32> = if p.method == Method::Edge {
        (0..h as i64)
            .flat_map(|y| (0..w as i64).map(move |x| (x, y)))
            .map(|(x, y)| {
                if f.colour(x, y) == G {
                    f.at(x, y)
                } else {
                    edge_green(&|x, y| f.at(x, y), x, y, lv.alpha)
                }
            })
            .collect()
    } else {
        Vec::new()
    };
    let gr = |x: i64, y: i64| green[mirror(y, h) * w + mirror(x, w)];
    let mut out = Image::<U>::new(w, h, p.channels)?;
    for y in 0..h {
        let row = out.row_mut(y);
        for x in 0..w {
            let (xi, yi) = (x as i64, y as i64);
            let rgb = match p.method {
                Method::Bilinear => bilinear(&f, xi, yi),
                Method::Mhc => mhc(&f, xi, yi),
                Method::Edge => edge(&f, &gr, xi, yi),
            };
            let px = &mut row[x * p.channels..(x + 1) * p.channels];
            for c in 0..3 {
                px[c] = U::from_f32(rgb[c]);
            }
            if p.channels == 4 {
                px[3] = U::from_f32(lv.alpha);
            }
        }
    }
    Ok(out)
}

/// Sums of the neighbours of (x, y) at the given offsets.
fn sum(f: &Cfa, x: i64, y: i64, offsets: &[(i64, i64)]) -> f32 {
    offsets.iter().map(|&(dx, dy)| f.at(x + dx, y + dy)).sum()
}

const CROSS: [(i64, i64); 4] = [(-1, 0), (1, 0), (0, -1), (0, 1)];
const DIAG: [(i64, i64); 4] = [(-1, -1), (1, -1), (-1, 1), (1, 1)];
const CROSS2: [(i64, i64); 4] = [(-2, 0), (2, 0), (0, -2), (0, 2)];
const HORIZ: [(i64, i64); 2] = [(-1, 0), (1, 0)];
const VERT: [(i64, i64); 2] = [(0, -1), (0, 1)];
const HORIZ2: [(i64, i64); 2] = [(-2, 0), (2, 0)];
const VERT2: [(i64, i64); 2] = [(0, -2), (0, 2)];

/// The colours of a site's horizontal and vertical neighbours (green sites only).
fn hv_colours(f: &Cfa, x: i64, y: i64) -> (usize, usize) {
    (f.colour(x + 1, y), f.colour(x, y + 1))
}

fn bilinear(f: &Cfa, x: i64, y: i64) -> [f32; 3] {
    let c = f.colour(x, y);
    let mut v = [0.0; 3];
    v[c] = f.at(x, y);
    if c == G {
        let (hc, vc) = hv_colours(f, x, y);
        v[hc] = 0.5 * sum(f, x, y, &HORIZ);
        v[vc] = 0.5 * sum(f, x, y, &VERT);
    } else {
        v[G] = 0.25 * sum(f, x, y, &CROSS);
        v[R + B - c] = 0.25 * sum(f, x, y, &DIAG);
    }
    v
}

fn mhc(f: &Cfa, x: i64, y: i64) -> [f32; 3] {
    let c = f.colour(x, y);
    let c0 = f.at(x, y);
    let mut v = [0.0; 3];
    v[c] = c0;
    if c == G {
        let (hc, vc) = hv_colours(f, x, y);
        let diag = sum(f, x, y, &DIAG);
        let (h1, v1) = (sum(f, x, y, &HORIZ), sum(f, x, y, &VERT));
        let (h2, v2) = (sum(f, x, y, &HORIZ2), sum(f, x, y, &VERT2));
        v[hc] = (5.0 * c0 + 4.0 * h1 - h2 - diag + 0.5 * v2) * 0.125;
        v[vc] = (5.0 * c0 + 4.0 * v1 - v2 - diag + 0.5 * h2) * 0.125;
    } else {
        let ring2 = sum(f, x, y, &CROSS2);
        v[G] = (4.0 * c0 + 2.0 * sum(f, x, y, &CROSS) - ring2) * 0.125;
        v[R + B - c] = (6.0 * c0 + 2.0 * sum(f, x, y, &DIAG) - 1.5 * ring2) * 0.125;
    }
    v
}

fn edge(f: &Cfa, gr: &dyn Fn(i64, i64) -> f32, x: i64, y: i64) -> [f32; 3] {
    let c = f.colour(x, y);
    // Colour difference (sample minus green) at a red or blue site.
    let d = |dx: i64, dy: i64| f.at(x + dx, y + dy) - gr(x + dx, y + dy);
    let mut v = [0.0; 3];
    let g = gr(x, y);
    v[G] = g;
    if c == G {
        let (hc, vc) = hv_colours(f, x, y);
        v[hc] = g + 0.5 * (d(-1, 0) + d(1, 0));
        v[vc] = g + 0.5 * (d(0, -1) + d(0, 1));
    } else {
        v[c] = f.at(x, y);
        v[R + B - c] = g + 0.25 * (d(-1, -1) + d(1, -1) + d(-1, 1) + d(1, 1));
    }
    v
}
