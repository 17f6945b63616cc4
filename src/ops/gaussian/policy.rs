//! Every sigma cut-off and size threshold that decides which path a blur
//! takes: recursive or FIR, the tile lines' form, the variant an untuned
//! device tries first, and the tuning cache's parameter buckets. The
//! kernels' own sizes (tiles, work-groups) are in [`super::geometry`].

use super::geometry::{fir_tiles_geometry, row_local_geometry, FIR_RMAX, FIR_TILES_RMAX};
use super::{Border, GaussianParams};
use crate::backend::DeviceKind;
use crate::image::SampleType;
use crate::ops::Shape;

/// The largest sigma accepted. The recursive filter's cost does not depend
/// on sigma, and it stays finite and accurate far beyond this; the limit only
/// rejects values that are surely mistakes.
pub const MAX_SIGMA: f32 = 10_000.0;

/// Below this sigma Deriche's approximation is too coarse (its error passes
/// 1e-3 of full scale), so an exact FIR is used: the recursive variants
/// decline, and the rayon path filters that axis with the FIR.
pub const IIR_MIN_SIGMA: f32 = 1.0;

/// Largest sigma whose recursions run as real biquads (the rayon path's
/// lines, `iir_tiles`' tile lines); above it the rayon path runs complex
/// sections and `iir_tiles` the delta form
/// ([`Deriche::tile_deltas`](super::coeffs::Deriche::tile_deltas)), which
/// keep f32 rounding small. (See
/// [`Deriche::tile_biquads`](super::coeffs::Deriche::tile_biquads) and the
/// rayon path's `Biquad` for the measured rounding.)
pub const BIQUAD_MAX_SIGMA: f64 = 64.0;

/// On GPUs, gray blurs up to this sigma (the larger of the two) try
/// `fir_tiles` first; see [`prefer`].
pub const FIR_TILES_GRAY_MAX_SIGMA: f32 = 2.0;

/// On GPUs, colour blurs (RGB, RGBA, any sample type) up to this sigma try
/// `fir_tiles` first; see [`prefer`].
pub const FIR_TILES_COLOUR_MAX_SIGMA: f32 = 3.0;

/// On GPUs, gray images, and u8 and u16 RGBA ones, of at least this many
/// pixels (4 MP) try `iir_tiles` first; see [`prefer`].
pub const TILES_MIN_PIXELS: usize = 4 << 20;

/// The most work-items `iir_local` may put on one row (one work-group per
/// row); wider rows are declined (`iir_rowblk` takes any width).
pub const ROW_LOCAL_MAX_WG: usize = 1024;

/// The tuning cache's sigma bucket edges: `sigma<2`, `sigma2-8`, `sigma>=8`
/// (see [`params_bucket`]).
pub const BUCKET_SIGMAS: [f32; 2] = [2.0, 8.0];

/// FIR radius for a sigma, as the reference defines it: ceil(6 sigma).
pub fn radius(sigma: f32) -> usize {
    (6.0 * sigma as f64).ceil() as usize
}

/// Whether the recursive variants take `p`: replicate border, and every
/// non-zero sigma at least [`IIR_MIN_SIGMA`].
pub fn iir_fits(p: &GaussianParams) -> Result<(), String> {
    if p.border != Border::Replicate {
        return Err("the recursive variants support the replicate border only".into());
    }
    match p.min_nonzero_sigma() {
        Some(m) if m < IIR_MIN_SIGMA => Err(format!(
            "sigma {m} < {IIR_MIN_SIGMA}: Deriche's approximation is too coarse there (use fir_local)"
        )),
        _ => Ok(()),
    }
}

/// Whether `fir_local` takes `p`: both radii at most the staged
/// [`FIR_RMAX`].
pub fn fir_fits(p: &GaussianParams) -> Result<(), String> {
    let r = radius(p.sigma_x).max(radius(p.sigma_y));
    if r > FIR_RMAX {
        return Err(format!(
            "FIR radius {r} (6 sigma) exceeds the staged maximum {FIR_RMAX}"
        ));
    }
    Ok(())
}

/// The radii (rows, columns) of `fir_tiles`: [`radius`] of each sigma, 0
/// (a single tap 1) where a sigma is 0.
pub fn fir_tiles_radii(p: &GaussianParams) -> (usize, usize) {
    let r = |s: f32| if s > 0.0 { radius(s) } else { 0 };
    (r(p.sigma_x), r(p.sigma_y))
}

/// Whether `fir_tiles` takes `p` on pixels of `channels`: some tile of its
/// geometry holds both radii ([`fir_tiles_geometry`]).
pub fn fir_tiles_fits(p: &GaussianParams, channels: usize) -> Result<(), String> {
    let (rx, ry) = fir_tiles_radii(p);
    match fir_tiles_geometry(rx, ry, channels) {
        Some(_) => Ok(()),
        None => Err(format!(
            "FIR radius {} (6 sigma) exceeds fir_tiles' maximum {FIR_TILES_RMAX}",
            rx.max(ry)
        )),
    }
}

/// Whether `iir_local` can hold rows of `width` working pixels of
/// `channels` (1, else float4) in one work-group: at most
/// [`ROW_LOCAL_MAX_WG`] work-items.
pub fn row_local_fits(width: usize, channels: usize) -> Result<(), String> {
    let (wg, _) = row_local_geometry(width, channels);
    if wg > ROW_LOCAL_MAX_WG {
        return Err(format!(
            "rows of {width} pixels need {wg} work-items per row (at most {ROW_LOCAL_MAX_WG})"
        ));
    }
    Ok(())
}

/// The form of `iir_tiles`' tile lines in one direction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TileLine {
    /// Real biquads ([`Deriche::tile_biquads`](super::coeffs::Deriche::tile_biquads)).
    Biquad,
    /// Delta form ([`Deriche::tile_deltas`](super::coeffs::Deriche::tile_deltas)).
    Delta,
}

/// The tile lines' form for `sigma`: biquads up to [`BIQUAD_MAX_SIGMA`],
/// the delta form above.
pub fn tile_line(sigma: f64) -> TileLine {
    if sigma <= BIQUAD_MAX_SIGMA {
        TileLine::Biquad
    } else {
        TileLine::Delta
    }
}

/// On GPUs, small sigmas run fastest as `fir_tiles`: one pass over the
/// user's samples whose cost grows with the radius, where the recursive
/// variants' does not. On an H100 at 8192x8192, with its next band's loads
/// in flight during the column pass (docs/results/2026-11-27-s30-lead.md),
/// it beats `iir_tiles` up to sigma 2 on f32 gray (0.31 ms against 0.53 at
/// sigma 1, 0.41 against 0.53 at 2, 0.71 against 0.53 at 3: hence
/// [`FIR_TILES_GRAY_MAX_SIGMA`] 2) and up to sigma 3 on RGBA (f32: 0.80,
/// 1.16 and 1.77 ms at sigma 1, 2, 3 against 2.50, 3.70 at 4; u8: 0.59,
/// 1.09 at 1, 2 against 2.20, 2.24 at 4:
/// [`FIR_TILES_COLOUR_MAX_SIGMA`], where the times cross if
/// they grow with the radius). Above those, gray images, and u8 and u16
/// RGBA ones, of at least [`TILES_MIN_PIXELS`] go to `iir_tiles`, which
/// reads the image twice and writes it once where `iir_local` moves it
/// five times; below that size its passes over the tiles' sums weigh more,
/// and the static order (`iir_local` first, `iir_tiles` where it cannot
/// hold the row) decides, as it does for f32 colour. `filterctl tune`
/// replaces these guesses per device.
pub fn prefer(s: &Shape, kind: DeviceKind) -> Option<&'static str> {
    let p = s.params.get::<GaussianParams>()?;
    if kind == DeviceKind::Cpu {
        return None;
    }
    let sigma = p.sigma_x.max(p.sigma_y);
    let fir_max = if s.channels == 1 {
        FIR_TILES_GRAY_MAX_SIGMA
    } else {
        FIR_TILES_COLOUR_MAX_SIGMA
    };
    if sigma <= fir_max {
        return Some("fir_tiles");
    }
    let large = s.width * s.height >= TILES_MIN_PIXELS;
    let integer_rgba = s.channels == 4 && s.sample != SampleType::F32;
    (large && (s.channels == 1 || integer_rgba)).then_some("iir_tiles")
}

/// The tuning cache's parameter bucket of a blur as two words: the larger
/// sigma's range (`sigma<2`, where the FIR is cheap and the recursive
/// variants are near their accuracy limit; `sigma2-8`, where both kinds
/// run and the FIR's radius grows with sigma; `sigma>=8`, beyond the
/// local-memory FIR's radius) and the border.
pub fn params_bucket_parts(p: &GaussianParams) -> (&'static str, &'static str) {
    let s = p.sigma_x.max(p.sigma_y);
    let range = if s < BUCKET_SIGMAS[0] {
        "sigma<2"
    } else if s < BUCKET_SIGMAS[1] {
        "sigma2-8"
    } else {
        "sigma>=8"
    };
    let border = match p.border {
        Border::Replicate => "replicate",
        Border::Mirror => "mirror",
    };
    (range, border)
}

/// [`params_bucket_parts`] joined by a space: `sigma2-8 replicate`.
pub fn params_bucket(p: &GaussianParams) -> String {
    let (range, border) = params_bucket_parts(p);
    format!("{range} {border}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_are_the_tuning_keys() {
        let g = |s: f32| params_bucket(&GaussianParams::new(s));
        assert_eq!(g(1.5), "sigma<2 replicate");
        assert_eq!(g(2.0), "sigma2-8 replicate");
        assert_eq!(g(7.99), "sigma2-8 replicate");
        assert_eq!(g(8.0), "sigma>=8 replicate");
        let mirror = GaussianParams {
            border: Border::Mirror,
            ..GaussianParams::new(0.5)
        };
        assert_eq!(params_bucket_parts(&mirror), ("sigma<2", "mirror"));
    }

    #[test]
    fn preferred_variants() {
        let shape = |w, h, c, s| {
            Shape::new(w, h, c, SampleType::F32)
                .with_params(crate::ops::OpParams::new(GaussianParams::new(s)))
        };
        let gpu = DeviceKind::Gpu;
        assert_eq!(prefer(&shape(64, 64, 4, 3.0), gpu), Some("fir_tiles"));
        assert_eq!(prefer(&shape(64, 64, 3, 3.5), gpu), None);
        assert_eq!(prefer(&shape(64, 64, 1, 2.0), gpu), Some("fir_tiles"));
        assert_eq!(prefer(&shape(64, 64, 1, 2.5), gpu), None);
        assert_eq!(prefer(&shape(2048, 2048, 1, 2.0), gpu), Some("fir_tiles"));
        assert_eq!(prefer(&shape(2048, 2048, 1, 2.5), gpu), Some("iir_tiles"));
        assert_eq!(prefer(&shape(2048, 2047, 1, 8.0), gpu), None);
        assert_eq!(prefer(&shape(4096, 4096, 1, 1.0), DeviceKind::Cpu), None);
        let typed = |c, t, s| {
            Shape::new(2048, 2048, c, t)
                .with_params(crate::ops::OpParams::new(GaussianParams::new(s)))
        };
        assert_eq!(prefer(&typed(4, SampleType::U8, 2.0), gpu), Some("fir_tiles"));
        assert_eq!(prefer(&typed(4, SampleType::U8, 4.0), gpu), Some("iir_tiles"));
        assert_eq!(prefer(&typed(4, SampleType::U16, 8.0), gpu), Some("iir_tiles"));
        assert_eq!(prefer(&typed(3, SampleType::U8, 2.0), gpu), Some("fir_tiles"));
        assert_eq!(prefer(&typed(4, SampleType::F32, 8.0), gpu), None);
    }

    #[test]
    fn tile_lines_switch_above_the_biquad_limit() {
        assert_eq!(tile_line(BIQUAD_MAX_SIGMA), TileLine::Biquad);
        assert_eq!(tile_line(BIQUAD_MAX_SIGMA + 1e-9), TileLine::Delta);
    }
}
