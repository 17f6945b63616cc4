//! Raw frames and 1-channel image files for `filterctl apply`: reading a
//! frame of `--size`/`--format`, and checking `--format` against an image.

use std::io::Read;
use std::path::Path;

use clfilter::error::num;
use clfilter::image::raw::{Depth, RawImage};
use clfilter::ops::demosaic::check_cfa_size;
use clfilter::ops::wb::MAX_GAIN;
use clfilter::{DynImage, RawFormat, SampleType};

use crate::error::CliError;
use crate::util::describe;

/// `--size` and `--format` together: each input is one raw frame.
#[derive(Debug, Clone, Copy)]
pub(crate) struct FrameSpec {
    pub(crate) width: usize,
    pub(crate) height: usize,
    pub(crate) format: RawFormat,
    pub(crate) bytes: usize,
}

/// Reads one raw frame file: exactly one frame long, else an error naming
/// both sizes (and what the file's size would fit).
pub(crate) fn read_frame(path: &Path, f: &FrameSpec) -> Result<RawImage, CliError> {
    let io = |source| CliError::Io {
        path: path.to_path_buf(),
        source,
    };
    let meta = std::fs::metadata(path).map_err(io)?;
    if meta.is_file() && meta.len() != f.bytes as u64 {
        return Err(frame_size_error(path, f, meta.len()));
    }
    // Not a regular file (a FIFO, /dev/stdin): read at most one byte more
    // than a frame to tell a long input from a whole frame.
    let mut bytes = Vec::with_capacity(f.bytes);
    std::fs::File::open(path)
        .and_then(|file| file.take(f.bytes as u64 + 1).read_to_end(&mut bytes))
        .map_err(io)?;
    if bytes.len() != f.bytes {
        return Err(frame_size_error(path, f, bytes.len() as u64));
    }
    Ok(f.format.decode_vec(bytes, f.width, f.height)?)
}

/// `a 640x480 bayer_rggb12p frame is 460800 bytes, but the file has ...`,
/// with what the file's size fits: another depth, several frames, or an
/// image file.
fn frame_size_error(path: &Path, f: &FrameSpec, got: u64) -> CliError {
    let (w, h, fmt, want) = (f.width, f.height, f.format, f.bytes as u64);
    let diff = if got > want {
        format!("{} more", got - want)
    } else {
        format!("{} fewer", want - got)
    };
    let mut m = format!(
        "a {w}x{h} {fmt} frame is {want} bytes, but the file has {got} ({diff}); \
         check --size and --format"
    );
    let fits: Vec<&str> = [
        (Depth::Bits8, "8-bit samples"),
        (Depth::Bits16 { bits: 16 }, "16-bit containers"),
        (
            Depth::Packed12(clfilter::ops::demosaic::Packing::Pfnc12p),
            "packed 12-bit samples",
        ),
    ]
    .into_iter()
    .filter(|(d, _)| {
        let other = RawFormat { depth: *d, ..fmt };
        other.frame_bytes(w, h).ok().map(|b| b as u64) == Some(got)
    })
    .map(|(_, what)| what)
    .collect();
    if let Some(what) = fits.first() {
        m.push_str(&format!("; the file's size fits a {w}x{h} frame of {what}"));
    } else if got > want && got.is_multiple_of(want) {
        m.push_str(&format!(
            "; that is {} whole frames, and apply reads one frame per file",
            got / want
        ));
    }
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(str::to_ascii_lowercase)
        .unwrap_or_default();
    if matches!(
        ext.as_str(),
        "png" | "tif" | "tiff" | "pgm" | "ppm" | "pnm" | "pam" | "jpg" | "jpeg"
    ) {
        m.push_str(&format!(
            "; {} looks like an image file, which loads without --size",
            path.display()
        ));
    }
    CliError::Engine(clfilter::Error::InvalidInput(m))
}

/// The maxval of a PNM file's header (P2, P5, or P7 `MAXVAL`), or `None`
/// when the file is not one (or the header is unreadable). A pipe, read
/// once already, is not opened again: `None`, as for stdin.
pub(crate) fn pnm_maxval(path: &Path) -> Option<u32> {
    if !std::fs::metadata(path).ok()?.is_file() {
        return None;
    }
    let mut head = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(4096)
        .read_to_end(&mut head)
        .ok()?;
    let text = String::from_utf8_lossy(&head);
    // Tokens, leaving out comments (`#` to the end of the line).
    let mut tokens = text
        .lines()
        .flat_map(|l| l.split('#').next().unwrap_or("").split_ascii_whitespace());
    match tokens.next()? {
        "P2" | "P5" => tokens.nth(2)?.parse().ok(),
        "P7" => {
            while let Some(t) = tokens.next() {
                match t {
                    "MAXVAL" => return tokens.next()?.parse().ok(),
                    "ENDHDR" => return None,
                    _ => {}
                }
            }
            None
        }
        _ => None,
    }
}

/// Checks an image file against `--format`: 1 channel, the format's sample
/// type (u8 for 8-bit formats, u16 for the others), an even size for Bayer
/// formats. Returns the format to parse the pipeline with: the given one,
/// or, for a PNM file with a maxval below 65535 (which the loader scales to
/// 0..65535), the same format with 16 bits.
pub(crate) fn check_image_format(
    path: &Path,
    img: &DynImage,
    fmt: RawFormat,
) -> Result<RawFormat, CliError> {
    let bad = |m: String| CliError::Engine(clfilter::Error::InvalidArgument(m));
    let (w, h, c) = img.shape();
    if c != 1 {
        return Err(bad(format!(
            "--format {fmt} describes 1-channel frames, but the file is {}",
            describe(img)
        )));
    }
    let sample = img.sample_type();
    if sample != fmt.sample() {
        let fits = match sample {
            SampleType::U8 => Some(Depth::Bits8),
            SampleType::U16 => Some(Depth::Bits16 { bits: 16 }),
            SampleType::F32 => None,
        };
        let hint = match fits {
            Some(depth) => format!("; use --format {}", RawFormat { depth, ..fmt }),
            None => "; raw formats hold integer samples".to_string(),
        };
        return Err(bad(format!(
            "--format {fmt} has {}-bit samples, which load as {}, but the file has {sample} \
             samples{hint}",
            fmt.bits(),
            fmt.sample()
        )));
    }
    if fmt.pattern.is_some() {
        check_cfa_size(w, h)?;
    }
    if sample == SampleType::U16 && fmt.bits() < 16 {
        if let Some(maxval) = pnm_maxval(path).filter(|&m| m != 65535) {
            // The loader scaled the samples to 0..65535.
            let white = (1u32 << fmt.bits()) - 1;
            if maxval != white {
                return Err(bad(format!(
                    "--format {fmt} has {}-bit samples (white level {white}), but the file's \
                     maxval is {maxval}",
                    fmt.bits()
                )));
            }
            log::info!(
                "{}: maxval {maxval} is scaled to 65535 on loading, so the pipeline levels \
                 16 bits",
                path.display()
            );
            return Ok(RawFormat {
                depth: Depth::Bits16 { bits: 16 },
                ..fmt
            });
        }
    }
    Ok(fmt)
}

/// A DNG file read as a raw frame.
pub(crate) struct DngFrame {
    /// The mosaic leveled (black and white levels applied, scaled to 0..65535).
    pub raw: RawImage,
    /// Its format, `bayer_PATTERN16`.
    pub format: RawFormat,
    /// The `--report` description: the levels and the as-shot white balance as a `wb=` stage.
    pub described: String,
    /// The as-shot white balance gains (`wb=camera`), where the file has them.
    pub gains: Option<[f32; 3]>,
}

/// Reads a DNG file as a raw frame.
pub(crate) fn read_dng(
    path: &Path,
    limits: &clfilter::image::DecodeLimits,
) -> Result<DngFrame, CliError> {
    let dng = clfilter::image::dng::load(path, limits)?;
    let black = dng.dark.cells.map(|b| b.to_string()).join("/");
    let wb = match dng.as_shot_gains() {
        Some([r, g, b]) => format!("as-shot white balance wb=r={r:.4}:g={g}:b={b:.4}"),
        None => "no as-shot white balance".to_string(),
    };
    let described = format!(
        "{}x{} DNG, {}-bit {}, leveled from black {black} and white {} to 16 bits; {wb}",
        dng.mosaic.width(),
        dng.mosaic.height(),
        dng.bits,
        dng.pattern,
        dng.white,
    );
    Ok(DngFrame {
        raw: RawImage::U16(dng.linear()),
        format: dng.linear_format(),
        described,
        gains: dng.as_shot_gains(),
    })
}

/// Whether a spec's stage text is `wb=camera` (or `wb=mode=camera`).
fn is_camera_wb(stage: &str) -> bool {
    let t = stage.trim().to_ascii_lowercase();
    t == "wb=camera" || t == "wb=mode=camera"
}

/// Whether `spec` asks for a DNG's white balance (`wb=camera`).
pub(crate) fn uses_camera_wb(spec: &str) -> bool {
    spec.split(',').any(is_camera_wb)
}

/// `spec` with each `wb=camera` (or `wb=mode=camera`) stage replaced by the
/// DNG's as-shot gains, as `wb=r=..:g=..:b=..`; an error when the file
/// recorded none (or gains no `wb` stage takes: each must be above 0 and at
/// most [`MAX_GAIN`]) and the spec asks for them.
pub(crate) fn camera_wb(spec: &str, gains: Option<[f32; 3]>) -> Result<String, CliError> {
    let mut stages = Vec::new();
    for stage in spec.split(',') {
        if !is_camera_wb(stage) {
            stages.push(stage.to_string());
            continue;
        }
        match gains {
            Some([r, g, b]) if [r, g, b].iter().all(|v| *v > 0.0 && *v <= MAX_GAIN) => {
                stages.push(format!("wb=r={r}:g={g}:b={b}"));
            }
            Some([r, g, b]) => {
                return Err(CliError::usage(format!(
                    "wb=camera: the DNG's AsShotNeutral gives the gains r={}, g={}, b={}, \
                     and wb takes gains above 0 and up to {MAX_GAIN}; give r=, g=, b= or use wb=auto",
                    num(r),
                    num(g),
                    num(b)
                )))
            }
            None => {
                return Err(CliError::usage(
                    "wb=camera: this DNG records no as-shot white balance (AsShotNeutral); \
                     give r=, g=, b= or use wb=auto",
                ))
            }
        }
    }
    Ok(stages.join(","))
}
