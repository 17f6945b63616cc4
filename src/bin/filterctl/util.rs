//! Helpers shared by the subcommands.

use std::path::Path;
use std::time::Duration;

use clfilter::{DynImage, Image, RunReport, Sample, SampleType};

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

/// Parses a sample type name (`u8`, `u16`, `f32`).
pub fn parse_sample(s: &str) -> Result<SampleType, String> {
    SampleType::parse(s.trim())
        .ok_or_else(|| format!("'{s}' is not a sample type; use u8, u16 or f32"))
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

/// The extensions `clfilter::image::save` writes.
const WRITABLE: &[&str] = &["png", "tif", "tiff", "pgm", "ppm", "pnm", "pbm", "pam"];

/// Checks, before any work, that `path` can hold an image of this sample
/// type and channel count (the rules of `clfilter::image::save`): a known
/// extension, f32 only as TIFF, 4 channels not as PNM.
pub fn check_output(
    path: &Path,
    sample: SampleType,
    channels: usize,
    into_dir: bool,
) -> Result<(), CliError> {
    let ext_hint = |e: &str| {
        if into_dir {
            format!(", or pass --ext {e}")
        } else {
            String::new()
        }
    };
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase())
        .unwrap_or_default();
    if !WRITABLE.contains(&ext.as_str()) {
        let what = if ext.is_empty() {
            "has no extension".to_string()
        } else if ext == "jpg" || ext == "jpeg" {
            "is JPEG, which is read-only here (lossy)".to_string()
        } else {
            format!("has an unknown image extension '.{ext}'")
        };
        return Err(CliError::usage(format!(
            "output {} {what}; use .png, .tif/.tiff or .pgm/.ppm{}",
            path.display(),
            ext_hint("png")
        )));
    }
    if sample == SampleType::F32 && ext != "tif" && ext != "tiff" {
        return Err(CliError::usage(format!(
            "output {}: the pipeline produces f32 samples, which only TIFF holds; \
             write to .tif{}, or end the spec with normalize=out=u8 (or out=u16)",
            path.display(),
            ext_hint("tif")
        )));
    }
    if channels == 4 && matches!(ext.as_str(), "pgm" | "ppm" | "pnm" | "pbm" | "pam") {
        return Err(CliError::usage(format!(
            "output {}: the image has 4 channels, which PNM does not hold; use .png or .tif{}",
            path.display(),
            ext_hint("png")
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
    fn output_checks() {
        let ok = |p: &str, t, c| check_output(Path::new(p), t, c, false).is_ok();
        assert!(ok("a.png", SampleType::U8, 3));
        assert!(ok("a.PNG", SampleType::U16, 4));
        assert!(ok("a.tif", SampleType::F32, 1));
        assert!(!ok("a.png", SampleType::F32, 1));
        assert!(!ok("a.jpg", SampleType::U8, 3));
        assert!(!ok("a", SampleType::U8, 3));
        assert!(!ok("a.ppm", SampleType::U8, 4));
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
