//! Helpers shared by the subcommands.

use std::path::Path;
use std::time::Duration;

use clfilter::image::OutputFormat;
use clfilter::{DynImage, Image, RawFormat, RunReport, Sample, SampleType};

use crate::error::CliError;

/// Parses `WxH` (also `WXH`): both sides at least 1, and a pixel count that
/// fits the engine's 32-bit indexing.
pub fn parse_size(s: &str) -> Result<(usize, usize), String> {
    let t = s.trim();
    let Some((w, h)) = t.split_once(['x', 'X']) else {
        return Err(format!(
            "size '{s}' has no 'x'; write WIDTHxHEIGHT, for example 1920x1080"
        ));
    };
    let side = |v: &str, what: &str| -> Result<usize, String> {
        let v = v.trim();
        if v.is_empty() {
            return Err(format!("size '{s}' has no {what}; write WIDTHxHEIGHT"));
        }
        if !v.bytes().all(|b| b.is_ascii_digit()) {
            return Err(format!("size '{s}': {what} '{v}' is not a whole number"));
        }
        match v.parse::<usize>() {
            Ok(0) => Err(format!("size '{s}': {what} must be at least 1")),
            Ok(n) => Ok(n),
            Err(_) => Err(format!("size '{s}': {what} {v} is too large")),
        }
    };
    let (w, h) = (side(w, "width")?, side(h, "height")?);
    match w.checked_mul(h) {
        Some(n) if n <= i32::MAX as usize => Ok((w, h)),
        _ => Err(format!(
            "size '{s}': {w}x{h} pixels is too many (at most 2^31 - 1)"
        )),
    }
}

/// Parses a raw frame format name (`bayer_rggb12p`, `mono16`, ...; see
/// `clfilter::image::raw`). The error gives the grammar and the nearest name.
pub fn parse_format(s: &str) -> Result<RawFormat, String> {
    s.parse::<RawFormat>().map_err(|e| match e {
        clfilter::Error::InvalidArgument(m) => m,
        other => other.to_string(),
    })
}

/// Parses a sample type name (`u8`, `u16`, `f32`).
pub fn parse_sample(s: &str) -> Result<SampleType, String> {
    SampleType::parse(s.trim())
        .ok_or_else(|| format!("'{s}' is not a sample type; use u8, u16 or f32"))
}

/// The operation names of an `--ops` list (empty: every operation). A list
/// given but holding no name (`--ops ""`) is refused rather than read as
/// every operation.
pub fn op_names(given: &[String]) -> Result<Vec<String>, CliError> {
    let ops: Vec<String> = given
        .iter()
        .map(|s| s.trim().to_string())
        .filter(|s| !s.is_empty())
        .collect();
    if ops.is_empty() && !given.is_empty() {
        return Err(CliError::usage(
            "--ops names no operation; name at least one, or leave --ops out for all of them",
        ));
    }
    Ok(ops)
}

/// Milliseconds with a precision that suits the value.
pub fn ms(d: Duration) -> String {
    let v = d.as_secs_f64() * 1e3;
    if v >= 100.0 {
        format!("{v:.0} ms")
    } else if v >= 10.0 {
        format!("{v:.1} ms")
    } else {
        format!("{v:.2} ms")
    }
}

/// `stage 2 normalize (minmax) variant=tree on DEVICE: 1.23 ms (kernel 0.10 ms)`.
///
/// The `(minmax)` part appears only when the call is not the stage's own
/// operation (normalize's automatic range); `stage N ` only when `stage` is
/// given. `alias` replaces a long backend description by a short name
/// (`(full, short)`). Variants that failed first are listed below the line.
pub fn report_line(
    stage: Option<usize>,
    stage_name: &str,
    r: &RunReport,
    alias: Option<(&str, &str)>,
) -> String {
    let call = if r.op == stage_name {
        String::new()
    } else {
        format!(" ({})", r.op)
    };
    let backend = match alias {
        Some((full, short)) if r.backend == full => short,
        _ => r.backend.as_str(),
    };
    let mut line = match stage {
        Some(i) => format!("stage {i} "),
        None => String::new(),
    };
    line.push_str(&format!(
        "{stage_name}{call} variant={} on {backend}: {}",
        r.variant,
        ms(r.elapsed)
    ));
    if let Some(k) = r.kernel_time {
        line.push_str(&format!(" (kernel {})", ms(k)));
    }
    for f in &r.fallbacks {
        line.push_str(&format!("\n    after failed variant {f}"));
    }
    line
}

/// A short name for the engine's backend: `P:D` for an OpenCL device,
/// `cpu` for the CPU backend.
pub fn short_backend(engine: &clfilter::Engine) -> String {
    match engine.backend().device_info() {
        Some(i) => format!("{}:{}", i.index.0, i.index.1),
        None => "cpu".into(),
    }
}

/// Bytes as `12.3 GiB`.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1024.0 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// `600x400 RGB u8`.
pub fn describe(img: &DynImage) -> String {
    let (w, h, c) = img.shape();
    let layout = match c {
        1 => "gray",
        3 => "RGB",
        _ => "RGBA",
    };
    format!("{w}x{h} {layout} {}", img.sample_type())
}

/// The format `path` is written in: `forced` (`--out-format`) when given,
/// else the one its extension names (`clfilter::image::OutputFormat`).
/// `into_dir`: the name comes from an input, so the error suggests `--ext`.
pub fn output_format(
    path: &Path,
    forced: Option<OutputFormat>,
    into_dir: bool,
) -> Result<OutputFormat, CliError> {
    if let Some(f) = forced {
        return Ok(f);
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if let Some(f) = OutputFormat::from_extension(&ext) {
        return Ok(f);
    }
    const USE: &str = "use .png, .tif/.tiff, .jpg/.jpeg, .webp, .pgm, .ppm, .pnm or .pam";
    let (what, suggest) = if path == Path::new("-") {
        (
            "is stdout, which has no extension; pass --out-format \
             png|tif|jpg|webp|pgm|ppm|pnm|pam"
                .to_string(),
            "",
        )
    } else if ext.is_empty() {
        (
            format!("has no extension; {USE}, or pass --out-format"),
            "png",
        )
    } else if ext == "pbm" {
        (
            "is PBM (1-bit black and white), which is read-only here; \
             use .pgm for gray (or .png, .tif/.tiff, .pnm, .pam)"
                .to_string(),
            "pgm",
        )
    } else {
        (
            format!("has an unknown image extension '.{ext}'; {USE}"),
            "png",
        )
    };
    Err(CliError::usage(format!(
        "output {} {what}{}",
        path.display(),
        ext_hint(into_dir, suggest)
    )))
}

/// `, or pass --ext EXT` when the output is a folder (the name comes from
/// the input).
fn ext_hint(into_dir: bool, ext: &str) -> String {
    if into_dir && !ext.is_empty() {
        format!(", or pass --ext {ext}")
    } else {
        String::new()
    }
}

/// Checks, before any work, that `path` can hold an image of this sample
/// type and channel count, in the format its extension names.
pub fn check_output(
    path: &Path,
    sample: SampleType,
    channels: usize,
    into_dir: bool,
) -> Result<(), CliError> {
    check_output_as(path, None, sample, channels, into_dir).map(|_| ())
}

/// [`check_output`] in `forced` format (`--out-format`) when given (the
/// rules of `OutputFormat::check`: f32 only as TIFF, 8-bit only for JPEG
/// and WebP, the channels each holds). Returns the format.
pub fn check_output_as(
    path: &Path,
    forced: Option<OutputFormat>,
    sample: SampleType,
    channels: usize,
    into_dir: bool,
) -> Result<OutputFormat, CliError> {
    let format = output_format(path, forced, into_dir)?;
    let Err(why) = format.check(sample, channels) else {
        return Ok(format);
    };
    let fix = match sample {
        SampleType::F32 => ", or end the spec with normalize=out=u8 (or out=u16)",
        SampleType::U16 if matches!(format, OutputFormat::Jpeg | OutputFormat::WebP) => {
            ", or end the spec with normalize=out=u8"
        }
        _ => "",
    };
    let suggest = match (sample, channels) {
        (SampleType::F32, _) => "tif",
        (_, 1) if format != OutputFormat::Jpeg => "pgm",
        (_, 3) if format != OutputFormat::Jpeg => "ppm",
        _ => "png",
    };
    Err(CliError::usage(format!(
        "output {}: {why}{}{fix}",
        path.display(),
        ext_hint(forced.is_none() && into_dir, suggest)
    )))
}

/// Checks, before any work, that the folder `path` would be written into
/// exists: its parent, or `path` itself when it ends with `/` (a folder
/// that was meant to exist).
pub fn check_output_folder(path: &Path) -> Result<(), CliError> {
    let text = path.as_os_str().to_string_lossy();
    let dir = if text.ends_with('/') {
        Some(path)
    } else {
        path.parent().filter(|p| !p.as_os_str().is_empty())
    };
    match dir {
        Some(d) if !d.is_dir() => Err(CliError::Io {
            path: d.to_path_buf(),
            source: if d.exists() {
                std::io::Error::new(
                    std::io::ErrorKind::NotADirectory,
                    "the output's folder is a file, not a folder",
                )
            } else {
                std::io::Error::new(std::io::ErrorKind::NotFound, "output folder does not exist")
            },
        }),
        _ => Ok(()),
    }
}

/// Checks, before any work, that `path` can be created as one file: its
/// folder exists ([`check_output_folder`]) and it is not a folder itself.
pub fn check_output_file(path: &Path) -> Result<(), CliError> {
    check_output_folder(path)?;
    if path.is_dir() {
        return Err(CliError::usage(format!(
            "output {}: this is a folder; name a file to write",
            path.display()
        )));
    }
    Ok(())
}

/// The file name for an image of this type: `NAME.png`, or `NAME.tif` for f32.
pub fn file_name_for(stem: &str, sample: SampleType) -> String {
    match sample {
        SampleType::F32 => format!("{stem}.tif"),
        _ => format!("{stem}.png"),
    }
}

fn first_difference<T: Sample>(a: &Image<T>, b: &Image<T>, bits: fn(T) -> u32) -> Option<String> {
    for y in 0..a.height() {
        let (ra, rb) = (a.row(y), b.row(y));
        if let Some(i) = (0..ra.len()).find(|&i| bits(ra[i]) != bits(rb[i])) {
            let c = a.channels();
            return Some(format!(
                "pixel ({}, {y}) channel {}: {:?} vs {:?}",
                i / c,
                i % c,
                ra[i],
                rb[i]
            ));
        }
    }
    None
}

/// `None` when the two images have the same shape, type and samples (f32
/// compared bit for bit); otherwise where they first differ.
pub fn difference(a: &DynImage, b: &DynImage) -> Option<String> {
    if a.shape() != b.shape() || a.sample_type() != b.sample_type() {
        return Some(format!("{} vs {}", describe(a), describe(b)));
    }
    match (a, b) {
        (DynImage::U8(a), DynImage::U8(b)) => first_difference(a, b, u32::from),
        (DynImage::U16(a), DynImage::U16(b)) => first_difference(a, b, u32::from),
        (DynImage::F32(a), DynImage::F32(b)) => first_difference(a, b, f32::to_bits),
        _ => Some("different sample types".into()),
    }
}

/// Program build statistics, on OpenCL backends.
pub fn build_stats(engine: &clfilter::Engine) -> Option<String> {
    let (built, loaded, dir) = engine.backend().program_counts()?;
    Some(format!(
        "kernel programs: {built} built from source, {loaded} loaded from the disk cache{}",
        match dir {
            Some(d) => format!(" ({})", d.display()),
            None => " (disk cache off)".into(),
        }
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("8192x4096"), Ok((8192, 4096)));
        assert_eq!(parse_size(" 3X2 "), Ok((3, 2)));
        assert!(parse_size("8192").unwrap_err().contains("has no 'x'"));
        assert!(parse_size("x5").unwrap_err().contains("has no width"));
        assert!(parse_size("5x").unwrap_err().contains("has no height"));
        assert!(parse_size("0x5")
            .unwrap_err()
            .contains("width must be at least 1"));
        assert!(parse_size("5x0")
            .unwrap_err()
            .contains("height must be at least 1"));
        assert!(parse_size("-5x5")
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_size("5x1.5")
            .unwrap_err()
            .contains("not a whole number"));
        assert!(parse_size("99999999999999999999999x1")
            .unwrap_err()
            .contains("too large"));
        assert!(parse_size("65536x65536").unwrap_err().contains("too many"));
        assert!(parse_size("4x4x4")
            .unwrap_err()
            .contains("not a whole number"));
    }

    #[test]
    fn formats() {
        assert_eq!(
            parse_format(" Bayer_GRBG12packed ").unwrap().to_string(),
            "bayer_grbg12packed"
        );
        let e = parse_format("BayerRG12p").unwrap_err();
        assert!(e.starts_with("unknown raw format 'BayerRG12p' (did you mean 'bayer_rggb12p'?); formats are bayer_PATTERN"), "{e}");
    }

    #[test]
    fn output_checks() {
        let ok = |p: &str, t, c| check_output(Path::new(p), t, c, false).is_ok();
        assert!(ok("a.png", SampleType::U8, 3));
        assert!(ok("a.PNG", SampleType::U16, 4));
        assert!(ok("a.tif", SampleType::F32, 1));
        assert!(!ok("a.png", SampleType::F32, 1));
        assert!(ok("a.jpg", SampleType::U8, 3));
        assert!(!ok("a.jpg", SampleType::U16, 3));
        assert!(!ok("a.jpeg", SampleType::U8, 4));
        assert!(ok("a.webp", SampleType::U8, 4));
        assert!(!ok("a.webp", SampleType::F32, 3));
        assert!(!ok("a", SampleType::U8, 3));
        assert!(!ok("a.ppm", SampleType::U8, 4));
        // PNM: .pgm 1 channel, .ppm 3, .pnm 1 or 3, .pam 1, 3 or 4; no .pbm.
        for (ext, fits) in [
            ("pgm", [true, false, false]),
            ("PGM", [true, false, false]),
            ("ppm", [false, true, false]),
            ("pnm", [true, true, false]),
            ("pam", [true, true, true]),
            ("pbm", [false, false, false]),
        ] {
            for (c, want) in [1, 3, 4].into_iter().zip(fits) {
                for t in [SampleType::U8, SampleType::U16] {
                    assert_eq!(ok(&format!("a.{ext}"), t, c), want, "{t} {c}ch .{ext}");
                }
                assert!(!ok(&format!("a.{ext}"), SampleType::F32, c), "f32 .{ext}");
            }
        }
        let msg = |p: &str, c| {
            check_output(Path::new(p), SampleType::U8, c, false)
                .unwrap_err()
                .to_string()
        };
        assert!(
            msg("a.pgm", 3).contains("save it as .ppm"),
            "{}",
            msg("a.pgm", 3)
        );
        assert!(
            msg("a.ppm", 1).contains("save it as .pgm"),
            "{}",
            msg("a.ppm", 1)
        );
        assert!(
            msg("a.pnm", 4).contains("save it as .pam"),
            "{}",
            msg("a.pnm", 4)
        );
        assert!(msg("a.pbm", 1).contains("use .pgm"), "{}", msg("a.pbm", 1));
        // The extension alone.
        assert_eq!(
            output_format(Path::new("a.PPM"), None, false).unwrap(),
            OutputFormat::Ppm
        );
        assert_eq!(
            output_format(Path::new("-"), Some(OutputFormat::WebP), false).unwrap(),
            OutputFormat::WebP
        );
        assert!(output_format(Path::new("-"), None, false)
            .unwrap_err()
            .to_string()
            .contains("--out-format"));
        assert!(output_format(Path::new("a.pbm"), None, true)
            .unwrap_err()
            .to_string()
            .contains("--ext pgm"));
    }

    #[test]
    fn differences() {
        let a = Image::<f32>::from_vec(2, 1, 1, vec![0.0, f32::NAN]).unwrap();
        let b = Image::<f32>::from_vec(2, 1, 1, vec![0.0, 1.0]).unwrap();
        assert_eq!(difference(&a.clone().into(), &a.clone().into()), None);
        assert!(difference(&a.into(), &b.into())
            .unwrap()
            .starts_with("pixel (1, 0) channel 0"));
    }
}
