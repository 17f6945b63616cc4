//! OpenCL variants of `deband`. All are integer arithmetic repeating
//! [`super::math`], so each is bit-exact against the reference (tolerance 0).
//!
//! `direct` and `rgba8` filter the colour channels as they are
//! (`space=rgb`); the three `ycc_*` variants replay the seed's layout
//! experiment on YCbCr16 data (`space=ycc`): packed `short3` (6 bytes a
//! pixel), `short4` padded to 8 bytes for aligned vector loads, and three
//! planes (SoA). Each `ycc_*` variant runs `<kernel>_to` (RGB to its
//! layout), the filter, and `<kernel>_from` (back, alpha from the input).

use super::{DebandParams, Space};
use crate::image::SampleType;
use crate::ops::{no_local, Shape, VariantSpec};

/// The request's deband parameters (every deband request carries them).
fn params(s: &Shape) -> Result<&DebandParams, String> {
    s.params
        .get::<DebandParams>()
        .ok_or_else(|| "a deband request carries its parameters".to_string())
}

fn rgb_space(s: &Shape) -> Result<(), String> {
    match params(s)?.space {
        Space::Rgb => Ok(()),
        Space::Ycc => Err("filters space=rgb; this request is space=ycc".into()),
    }
}

fn rgba8(s: &Shape) -> Result<(), String> {
    rgb_space(s)?;
    if s.sample != SampleType::U8 || s.channels != 4 {
        return Err(format!(
            "reads RGBA8 only; this request is {}x{}",
            s.sample, s.channels
        ));
    }
    Ok(())
}

fn ycc_space(s: &Shape) -> Result<(), String> {
    match params(s)?.space {
        Space::Ycc if s.channels >= 3 => Ok(()),
        Space::Ycc => Err("needs RGB or RGBA".into()),
        Space::Rgb => Err("filters space=ycc; this request is space=rgb".into()),
    }
}

/// The variant table.
pub static VARIANTS: &[VariantSpec] = &[
    VariantSpec {
        name: "direct",
        summary: "space=rgb: one pixel per work-item, scalar loads; any type and channel count",
        files: &["deband/deband.cl"],
        options: "",
        local: [16, 16],
        local_bytes: no_local,
        supports: rgb_space,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "rgba8",
        summary: "space=rgb on RGBA8: one aligned uchar4 load per pixel and reference",
        files: &["deband/deband.cl"],
        options: "",
        local: [16, 16],
        local_bytes: no_local,
        supports: rgba8,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "ycc_short3",
        summary: "space=ycc, AoS short3 (6 bytes, packed): the seed's PIXEL_YC layout",
        files: &["deband/deband.cl"],
        options: "",
        local: [16, 16],
        local_bytes: no_local,
        supports: ycc_space,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "ycc_short4",
        summary: "space=ycc, AoS padded to short4 (8 bytes): one aligned vector load a pixel",
        files: &["deband/deband.cl"],
        options: "",
        local: [16, 16],
        local_bytes: no_local,
        supports: ycc_space,
        requires: &[],
        tolerance: 0.0,
    },
    VariantSpec {
        name: "ycc_soa",
        summary: "space=ycc, three planes of short (SoA): three 2-byte loads a pixel",
        files: &["deband/deband.cl"],
        options: "",
        local: [16, 16],
        local_bytes: no_local,
        supports: ycc_space,
        requires: &[],
        tolerance: 0.0,
    },
];
