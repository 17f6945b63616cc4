//! `colormap`: a 1-channel image (u8, u16 or f32) to RGB or RGBA through a
//! colour map, which is how people look at mono sensor data.
//!
//! # The mapping
//!
//! With the range `min..max` (given, or the image's own extremes from
//! `minmax`), each pixel `v` becomes
//!
//! ```text
//! t      = clamp((v - min) / (max - min), 0, 1)        NaN -> 0
//! pos    = t * 255,  i = min(floor(pos), 254),  f = pos - i
//! colour = table[i] + (table[i + 1] - table[i]) * f
//! out    = convert(colour * full),  alpha = convert(full)
//! ```
//!
//! where `table` is the map's 256-entry table (entry `i` is the colour of
//! `t = i / 255`, see [`tables`]) and `full` the output's full scale (255,
//! 65535 or 1.0). `convert` rounds half to even and saturates for integer
//! outputs, like `convert_T_sat_rte`. The reference computes this in f64;
//! the rayon path and the kernels compute `t = (v - min) * k` in f32 with
//! `k = 1 / (max - min)` rounded to f32 (see `docs/QUALITY.md` for the bound).
//!
//! # Edge cases
//!
//! - NaN pixels map to the low end of the map (`t = 0`); infinities clamp to
//!   the ends.
//! - The automatic range ignores NaN. An image with no number at all maps to
//!   the low end. An image holding an infinity has no finite automatic range:
//!   [`Error::InvalidInput`] (give `min` and `max`).
//! - An empty range (`max <= min`), which only an automatic end can produce,
//!   is a step: pixels above `max` map to the high end, all others to the low
//!   end. So a constant image with an automatic range maps to the low end
//!   (nothing is divided by zero), and a dark frame below an explicit `min`
//!   maps to the low end.
//! - `max - min` must lie in `1e-30..=1e30`, so that the f32 arithmetic
//!   neither overflows nor meets denormals (which some devices flush to 0).

pub mod api;
pub mod cpu;
pub mod reference;
pub mod stage;
pub mod tables;
mod tune;
pub mod variants;

use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{Image, Sample};
use crate::ops::{minmax::MinMax, OpParams, OpSpec, RunReport, Shape};
pub use api::ColormapExt;
pub use tune::TUNE;

use std::fmt;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "colormap",
    sources: &[crate::cl_source!("colormap/colormap.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["pixel"],
    cpu_device_order: &["pixel"],
    prefer: None,
    // NaN maps to the low end, infinities to the ends (module docs).
    spreads_nonfinite: false,
    overflows: false,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[&stage::COLORMAP],
    tune: &TUNE,
};

/// The narrowest and widest `max - min` accepted.
pub const SPAN_LIMITS: (f64, f64) = (1e-30, 1e30);

/// A colour map.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ColorMap {
    /// Google's Turbo (2019): a perceptually smoother, brighter-ended
    /// replacement for Jet; dark blue through green and yellow to dark red.
    #[default]
    Turbo,
    /// Gnuplot's `rgbformulae 33,13,10` (matplotlib's `rainbow`): violet-blue
    /// through green and yellow to red.
    Rainbow,
    /// Linear gray, black to white.
    Gray,
}

impl ColorMap {
    /// Every map, in the order of their names above.
    pub const ALL: [ColorMap; 3] = [ColorMap::Turbo, ColorMap::Rainbow, ColorMap::Gray];

    /// The name used in specs and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            ColorMap::Turbo => "turbo",
            ColorMap::Rainbow => "rainbow",
            ColorMap::Gray => "gray",
        }
    }

    /// Position in [`ColorMap::ALL`].
    pub(crate) fn index(self) -> usize {
        self as usize
    }

    /// The map's 256 RGBA entries (alpha 1), colours in 0..1: entry `i` is
    /// the colour of `t = i / 255`.
    pub fn table(self) -> &'static [[f32; 4]; 256] {
        tables::table(self)
    }
}

impl fmt::Display for ColorMap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for ColorMap {
    type Err = Error;

    /// Parses `turbo`, `rainbow` or `gray` (any case); anything else is
    /// [`Error::InvalidArgument`] naming the known maps.
    fn from_str(s: &str) -> Result<Self> {
        ColorMap::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| {
                Error::arg(format!(
                    "unknown colour map '{s}'; known: {}",
                    ColorMap::ALL.map(ColorMap::name).join(", ")
                ))
            })
    }
}

/// Parameters of a colormap.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct ColormapParams {
    /// The colour map.
    pub map: ColorMap,
    /// The input value mapped to the low end of the map, in input units
    /// (200u8 is 200.0); `None`: the image's minimum.
    pub min: Option<f32>,
    /// The input value mapped to the high end; `None`: the image's maximum.
    pub max: Option<f32>,
    /// Output channels: 3 (RGB) or 4 (RGBA, alpha at full scale).
    pub channels: usize,
}

impl Default for ColormapParams {
    /// Turbo, automatic range, RGB.
    fn default() -> Self {
        ColormapParams {
            map: ColorMap::Turbo,
            min: None,
            max: None,
            channels: 3,
        }
    }
}

impl ColormapParams {
    /// `map` with the automatic range, RGB.
    pub fn new(map: ColorMap) -> Self {
        ColormapParams {
            map,
            ..Default::default()
        }
    }

    /// Checks the channels and the explicit ends: finite, and `min < max`
    /// when both are given ([`Error::InvalidArgument`] otherwise).
    pub fn validate(&self) -> Result<()> {
        if !matches!(self.channels, 3 | 4) {
            return Err(Error::arg(format!(
                "colormap outputs 3 or 4 channels, not {}",
                self.channels
            )));
        }
        for (what, v) in [("min", self.min), ("max", self.max)] {
            if let Some(v) = v.filter(|v| !v.is_finite()) {
                return Err(Error::arg(format!(
                    "colormap {what} must be finite, got {v}"
                )));
            }
        }
        if let (Some(lo), Some(hi)) = (self.min, self.max) {
            if lo >= hi {
                return Err(Error::arg(format!(
                    "colormap min must be below max, got min={lo} max={hi}"
                )));
            }
            check_span(lo, hi).map_err(Error::arg)?;
        }
        Ok(())
    }

    /// Whether the range needs the image's extremes (an end is `None`).
    pub fn needs_minmax(&self) -> bool {
        self.min.is_none() || self.max.is_none()
    }

    /// The range `(min, max)` actually mapped: the explicit ends, and the
    /// image's extremes `data` (from `minmax` of the 1-channel input) for
    /// the automatic ones. `data` may be `None` when both ends are given.
    /// The result may be empty (`max <= min`; see the module docs).
    pub fn range(&self, data: Option<&MinMax>) -> Result<(f32, f32)> {
        self.validate()?;
        if let (Some(lo), Some(hi)) = (self.min, self.max) {
            return Ok((lo, hi));
        }
        let m = data.ok_or_else(|| {
            Error::arg("a colormap with an automatic range needs the image's minmax")
        })?;
        let (dlo, dhi) = (m.min_of(m.channels), m.max_of(m.channels));
        if dlo > dhi {
            // No number in the image: every pixel is NaN and maps to the
            // low end whatever the range.
            let v = self.min.or(self.max).unwrap_or(0.0);
            return Ok((v, v));
        }
        let (lo, hi) = (self.min.unwrap_or(dlo), self.max.unwrap_or(dhi));
        if !lo.is_finite() || !hi.is_finite() {
            return Err(Error::InvalidInput(format!(
                "the image's range {dlo}..{dhi} is not finite; give colormap min and max"
            )));
        }
        if hi > lo {
            check_span(lo, hi).map_err(|why| {
                Error::InvalidInput(format!("{why}; give colormap min and max explicitly"))
            })?;
        }
        Ok((lo, hi))
    }
}

/// `Err(why)` unless `max - min` lies within [`SPAN_LIMITS`].
fn check_span(lo: f32, hi: f32) -> std::result::Result<(), String> {
    let span = hi as f64 - lo as f64;
    let (narrow, wide) = SPAN_LIMITS;
    if !(narrow..=wide).contains(&span) {
        return Err(format!(
            "the colormap range {lo}..{hi} spans {span:e}, outside {narrow:e}..={wide:e}"
        ));
    }
    Ok(())
}

/// What the rayon path and the kernels compute with: the range, `1 / (max
/// - min)` in f32 and the output's full-scale value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Mapping {
    pub lo: f32,
    pub hi: f32,
    pub k: f32,
    pub scale: f32,
}

impl Mapping {
    /// Checks a resolved range (finite; a non-empty one within
    /// [`SPAN_LIMITS`]) and an output scale (finite, > 0).
    pub(crate) fn new(lo: f32, hi: f32, scale: f32) -> Result<Self> {
        if !lo.is_finite() || !hi.is_finite() {
            return Err(Error::arg(format!(
                "colormap range {lo}..{hi} must be finite"
            )));
        }
        if !(scale.is_finite() && scale > 0.0) {
            return Err(Error::arg(format!(
                "colormap output scale must be finite and > 0, got {scale}"
            )));
        }
        let k = if hi > lo {
            check_span(lo, hi).map_err(Error::arg)?;
            (1.0 / (hi as f64 - lo as f64)) as f32
        } else {
            0.0
        };
        Ok(Mapping { lo, hi, k, scale })
    }

    /// `t` of a sample, as the kernels compute it.
    #[inline]
    pub(crate) fn t(&self, v: f32) -> f32 {
        let t = if self.hi > self.lo {
            (v - self.lo) * self.k
        } else if v > self.hi {
            1.0
        } else {
            0.0
        };
        // `>=` is false for NaN.
        if t >= 0.0 {
            t.min(1.0)
        } else {
            0.0
        }
    }
}

/// Checks that an input is 1-channel.
fn check_input(channels: usize) -> Result<()> {
    if channels != 1 {
        return Err(Error::arg(format!(
            "colormap reads 1-channel images, got {channels} channels"
        )));
    }
    Ok(())
}

pub(crate) mod device;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_unknown_names_list_the_known_ones() {
        for m in ColorMap::ALL {
            assert_eq!(m.name().parse::<ColorMap>().unwrap(), m);
            assert_eq!(m.to_string(), m.name());
        }
        assert_eq!(" Turbo ".parse::<ColorMap>().unwrap(), ColorMap::Turbo);
        match "jet".parse::<ColorMap>() {
            Err(Error::InvalidArgument(msg)) => {
                assert!(
                    msg.contains("'jet'") && msg.contains("turbo, rainbow, gray"),
                    "{msg}"
                )
            }
            other => panic!("expected InvalidArgument, got {other:?}"),
        }
    }

    #[test]
    fn ranges_resolve_with_their_edge_cases() {
        let mm = |lo: f32, hi: f32| MinMax {
            channels: 1,
            min: [lo, 0.0, 0.0, 0.0],
            max: [hi, 0.0, 0.0, 0.0],
        };
        let auto = ColormapParams::default();
        assert_eq!(auto.range(Some(&mm(2.0, 9.0))).unwrap(), (2.0, 9.0));
        // Constant image: an empty range, not an error.
        assert_eq!(auto.range(Some(&mm(5.0, 5.0))).unwrap(), (5.0, 5.0));
        // No number at all.
        assert_eq!(auto.range(Some(&MinMax::empty(1))).unwrap(), (0.0, 0.0));
        // One explicit end beyond the data: an empty range.
        let min_only = ColormapParams {
            min: Some(20.0),
            ..auto
        };
        assert_eq!(min_only.range(Some(&mm(2.0, 9.0))).unwrap(), (20.0, 9.0));
        // Infinite data, too wide a span: InvalidInput.
        for m in [mm(f32::NEG_INFINITY, 1.0), mm(-1e30, 1e30)] {
            assert!(matches!(auto.range(Some(&m)), Err(Error::InvalidInput(_))));
        }
        assert!(auto.range(None).is_err());
        // Explicit: equal, reversed, non-finite, channels.
        for (lo, hi) in [
            (1.0, 1.0),
            (2.0, 1.0),
            (f32::NAN, 1.0),
            (0.0, f32::INFINITY),
        ] {
            let p = ColormapParams {
                min: Some(lo),
                max: Some(hi),
                ..auto
            };
            assert!(
                matches!(p.range(None), Err(Error::InvalidArgument(_))),
                "{lo}..{hi}"
            );
        }
        let p = ColormapParams {
            channels: 2,
            ..auto
        };
        assert!(matches!(p.validate(), Err(Error::InvalidArgument(_))));
    }

    #[test]
    fn mapping_t_handles_nan_infinities_and_empty_ranges() {
        let m = Mapping::new(10.0, 20.0, 1.0).unwrap();
        assert_eq!(m.t(15.0), 0.5);
        assert_eq!(m.t(f32::NAN), 0.0);
        assert_eq!(m.t(f32::INFINITY), 1.0);
        assert_eq!(m.t(f32::NEG_INFINITY), 0.0);
        let step = Mapping::new(5.0, 5.0, 1.0).unwrap();
        assert_eq!(
            (step.t(5.0), step.t(6.0), step.t(f32::NAN)),
            (0.0, 1.0, 0.0)
        );
        assert!(Mapping::new(0.0, 1.0, 0.0).is_err());
        assert!(Mapping::new(0.0, 1e-35, 1.0).is_err());
    }
}
