//! The demo's input: the built-in photo or `--input`, checked and made fit
//! for every step before anything is written.

use clfilter::{DynImage, Image};

use super::{Args, Make, PHOTO, STEPS};
use crate::error::CliError;
use crate::util::file_name_for;

/// Decodes the built-in photo as an RGB u8 image.
pub(super) fn builtin_photo() -> Result<Image<u8>, CliError> {
    let decoded = image::load_from_memory(PHOTO)
        .map_err(|e| CliError::Failed(format!("decoding the built-in photo: {e}")))?
        .to_rgb8();
    let (w, h) = (decoded.width() as usize, decoded.height() as usize);
    Ok(Image::from_vec(w, h, 3, decoded.into_raw())?)
}

/// The demo's input and its description; creates the output folder.
pub(super) fn demo_input(args: &Args) -> Result<(DynImage, String), CliError> {
    let (input, source): (DynImage, String) = match &args.input {
        Some(p) => (clfilter::image::load(p)?, p.display().to_string()),
        None => (builtin_photo()?.into(), "coffee.png (built in, CC0)".into()),
    };
    // The steps' PSNR checks compare 8-bit RGB images: refuse anything else
    // before a file is written.
    let channels = input.shape().2;
    if input.sample_type() != clfilter::SampleType::U8 || channels != 3 {
        return Err(CliError::usage(format!(
            "--input {source}: the demo runs on 8-bit RGB images, and this one has {channels} channel(s) of {}",
            input.sample_type()
        )));
    }
    let (input, source) = even_sides(input, source)?;
    if args.out.exists() && !args.out.is_dir() {
        return Err(CliError::usage(format!(
            "--out {}: this is a file; the demo writes several images into a folder",
            args.out.display()
        )));
    }
    if let Some(p) = &args.input {
        check_outputs(p, &args.out)?;
    }
    std::fs::create_dir_all(&args.out).map_err(|source| CliError::Io {
        path: args.out.clone(),
        source,
    })?;
    Ok((input, source))
}

/// The smallest side the demo takes: its bilateral step keeps a border of
/// 10 pixels on each side, and the mosaic steps need whole 2x2 quads.
const MIN_SIDE: usize = 22;

/// `input` with even sides, its last column and row dropped where they
/// are odd (the RGGB mosaic steps need whole 2x2 quads), and its
/// description saying so; refuses an image smaller than [`MIN_SIDE`], so
/// that every step runs before a file is written.
fn even_sides(input: DynImage, source: String) -> Result<(DynImage, String), CliError> {
    let (w, h, _) = input.shape();
    if w < MIN_SIDE || h < MIN_SIDE {
        return Err(CliError::usage(format!(
            "--input {source}: the demo needs at least {MIN_SIDE}x{MIN_SIDE} pixels \
             (its bilateral step keeps a border of 10), and this one is {w}x{h}"
        )));
    }
    let (ew, eh) = (w & !1, h & !1);
    let DynImage::U8(img) = input else {
        return Ok((input, source));
    };
    if (ew, eh) == (w, h) {
        return Ok((img.into(), source));
    }
    let cropped = Image::from_fn(ew, eh, 3, |x, y, c| img.get(x, y, c))?;
    let note = format!("{source} ({w}x{h} cropped to {ew}x{eh}: the mosaic steps need even sides)");
    Ok((cropped.into(), note))
}

/// Refuses an `--input` that a file the demo writes into `dir` would
/// replace (the same file by device and inode): `input.png`, the saved
/// steps (`.png`, `.tif` for f32) and the histogram chart.
fn check_outputs(input: &std::path::Path, dir: &std::path::Path) -> Result<(), CliError> {
    let mut inputs = crate::guard::Inputs::default();
    inputs.add(input);
    let steps = STEPS
        .iter()
        .filter(|s| s.save || matches!(s.make, Make::HistogramPlot));
    for stem in std::iter::once("input").chain(steps.map(|s| s.name)) {
        for t in [clfilter::SampleType::U8, clfilter::SampleType::F32] {
            inputs.check_output(&dir.join(file_name_for(stem, t)))?;
        }
    }
    Ok(())
}
