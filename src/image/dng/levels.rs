//! The leveling tags (linearization, black and white levels, as-shot
//! neutral) and the crop from the whole raw image to the default crop.

use super::find::{tag, Layout};
use super::ifd::{Ifd, Tiff};
use super::Dng;
use crate::image::bayer::Pattern;
use crate::image::Image;

/// The black level of each site of a [`Dng`]'s mosaic: a 2x2 block of
/// levels, plus per-column and per-row deltas (`BlackLevelDeltaH`/`V`).
#[derive(Debug, Clone, PartialEq)]
pub struct DarkLevels {
    /// The levels of the mosaic's top-left 2x2 block, in reading order
    /// (four equal values for a single `BlackLevel`).
    pub cells: [f64; 4],
    /// Added per column of the mosaic; empty without `BlackLevelDeltaH`.
    pub delta_h: Vec<f64>,
    /// Added per row of the mosaic; empty without `BlackLevelDeltaV`.
    pub delta_v: Vec<f64>,
}

impl DarkLevels {
    /// The lowest black level of any site of the mosaic, the deltas
    /// included (`cells` repeat every 2 sites, so each parity of column and
    /// of row takes its smallest delta).
    pub fn lowest(&self) -> f64 {
        let least = |d: &[f64], parity: usize| {
            if d.is_empty() {
                return 0.0;
            }
            d.iter()
                .skip(parity)
                .step_by(2)
                .fold(f64::INFINITY, |a, &b| a.min(b))
        };
        (0..4)
            .map(|i| self.cells[i] + least(&self.delta_h, i % 2) + least(&self.delta_v, i / 2))
            .fold(f64::INFINITY, f64::min)
    }

    /// The black level at site (x, y) of the mosaic.
    pub fn at(&self, x: usize, y: usize) -> f64 {
        self.cells[(y % 2) * 2 + x % 2]
            + self.delta_h.get(x).copied().unwrap_or(0.0)
            + self.delta_v.get(y).copied().unwrap_or(0.0)
    }
}

/// Maps stored values through `LinearizationTable` (values past its end
/// take its last entry).
pub(super) fn linearize(raw: &mut [u16], table: &[usize]) -> Result<(), String> {
    if table.is_empty() || table.len() > 65536 || table.iter().any(|&v| v > 65535) {
        return Err("a LinearizationTable that is empty, too long or above 65535".into());
    }
    let last = table.len() - 1;
    for v in raw.iter_mut() {
        *v = table[usize::from(*v).min(last)] as u16;
    }
    Ok(())
}

/// The crop inside the active area: origin and size, sides even.
fn default_crop(t: &Tiff, ifd: &Ifd, aw: usize, ah: usize) -> Result<[usize; 4], String> {
    let num = |tag: u16| -> Result<Option<[f64; 2]>, String> {
        Ok(match t.numbers(ifd, tag)?.as_deref() {
            None => None,
            Some(&[a, b]) if a.is_finite() && b.is_finite() && a >= 0.0 && b >= 0.0 => Some([a, b]),
            Some(v) => return Err(format!("DefaultCrop tag {tag} holds {v:?}")),
        })
    };
    let [cx, cy] = num(tag::CROP_ORIGIN)?
        .unwrap_or([0.0; 2])
        .map(|v| v as usize);
    let [tw, th] = num(tag::CROP_SIZE)?
        .unwrap_or([aw as f64, ah as f64])
        .map(|v| v as usize);
    // Even sides, so that the crop keeps whole 2x2 CFA cells.
    let (cw, ch) = (tw & !1, th & !1);
    if cw < 2 || ch < 2 || cx.saturating_add(cw) > aw || cy.saturating_add(ch) > ah {
        return Err(format!(
            "the default crop {tw}x{th} at ({cx}, {cy}) does not fit the {aw}x{ah} active area \
             (a Bayer frame is at least 2x2; odd sides are cut to even ones)"
        ));
    }
    Ok([cx, cy, cw, ch])
}

/// The black levels for a mosaic cut at (`cx`, `cy`) of the active area,
/// `cw` x `ch` sites.
fn dark_levels(
    t: &Tiff,
    ifd: &Ifd,
    crop: [usize; 4],
    active: (usize, usize),
) -> Result<DarkLevels, String> {
    let [cx, cy, cw, ch] = crop;
    let dim = t
        .uints(ifd, tag::DARK_REPEAT)?
        .unwrap_or_else(|| vec![1, 1]);
    let levels = t
        .numbers(ifd, tag::DARK_LEVEL)?
        .unwrap_or_else(|| vec![0.0]);
    let (rows, cols) = match dim[..] {
        [r @ 1..=2, c @ 1..=2] if levels.len() == r * c => (r, c),
        _ => {
            return Err(format!(
                "the dark-level repeat (tag 50713) {dim:?} with {} dark levels (tag 50714); read: 1x1, 1x2, 2x1 or \
                 2x2, one value per cell",
                levels.len()
            ))
        }
    };
    let mut cells = [0.0; 4];
    for (i, cell) in cells.iter_mut().enumerate() {
        let (x, y) = (cx + i % 2, cy + i / 2);
        *cell = levels[(y % rows) * cols + x % cols];
    }
    let delta = |tag: u16, n: usize, from: usize, len: usize| -> Result<Vec<f64>, String> {
        match t.numbers(ifd, tag)? {
            None => Ok(Vec::new()),
            Some(d) if d.len() == n => Ok(d[from..from + len].to_vec()),
            Some(d) => Err(format!(
                "dark-level delta tag {tag} has {} values, not {n}",
                d.len()
            )),
        }
    };
    let b = DarkLevels {
        cells,
        delta_h: delta(tag::DARK_DELTA_H, active.0, cx, cw)?,
        delta_v: delta(tag::DARK_DELTA_V, active.1, cy, ch)?,
    };
    let all = b.cells.iter().chain(&b.delta_h).chain(&b.delta_v);
    if all.clone().any(|v| !v.is_finite()) {
        return Err("a dark level (tags 50714-50716) that is not a finite number".into());
    }
    Ok(b)
}

/// Cuts the default crop out of the whole raw image and gathers its levels.
pub(super) fn crop(t: &Tiff, ifd: &Ifd, l: &Layout, raw: Vec<u16>) -> Result<Dng, String> {
    let [top, left, bottom, right] = l.active;
    let (aw, ah) = (right - left, bottom - top);
    let [cx, cy, cw, ch] = default_crop(t, ifd, aw, ah)?;
    let dark = dark_levels(t, ifd, [cx, cy, cw, ch], (aw, ah))?;
    let white = match t.numbers(ifd, tag::WHITE)?.as_deref() {
        None => f64::from((1u32 << l.bits) - 1),
        Some([w, ..]) => *w,
        Some([]) => return Err("an empty WhiteLevel tag".into()),
    };
    let darkest = dark.lowest();
    if !(white.is_finite() && white > darkest) {
        return Err(format!(
            "WhiteLevel {white} is not above the lowest dark level {darkest} \
             (tags 50714-50716, the deltas included): every site would level to 0"
        ));
    }
    // AsShotNeutral is a tag of IFD0.
    let ifd0 = t.ifd(t.first_ifd()?)?;
    let as_shot_neutral = match t.numbers(&ifd0, tag::AS_SHOT_NEUTRAL)? {
        None => None,
        Some(v) if v.len() == 3 && v.iter().all(|n| n.is_finite() && *n > 0.0) => {
            Some([v[0] as f32, v[1] as f32, v[2] as f32])
        }
        Some(v) => return Err(format!("AsShotNeutral {v:?} is not three positive numbers")),
    };
    let (x0, y0) = (left + cx, top + cy);
    let mosaic = Image::from_fn(cw, ch, 1, |x, y, _| raw[(y0 + y) * l.width + x0 + x])
        .map_err(|e| e.to_string())?;
    Ok(Dng {
        mosaic,
        pattern: shifted(l.pattern, cx, cy),
        bits: l.bits,
        dark,
        white,
        as_shot_neutral,
    })
}

/// The pattern of a mosaic cut at (`dx`, `dy`) of one with pattern `p`.
fn shifted(p: Pattern, dx: usize, dy: usize) -> Pattern {
    Pattern::ALL
        .into_iter()
        .find(|q| (0..4).all(|i| q.colour(i % 2, i / 2) == p.colour(dx + i % 2, dy + i / 2)))
        .unwrap_or(p)
}
