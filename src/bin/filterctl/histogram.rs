//! `filterctl histogram IN [--bins N] [--range LO:HI] [--json] [--plot PNG]`:
//! per-channel counts of an image (the `histogram` operation).

use std::path::{Path, PathBuf};

use clap::Parser;
use clfilter::ops::histogram::{Histogram, HistogramExt, HistogramParams};
use clfilter::{DynImage, SampleType};
use serde::Serialize;

use crate::batch::{input_name, is_stdio, load_one};
use crate::error::CliError;
use crate::guard::Inputs;
use crate::util;
use crate::Global;

/// `filterctl histogram` arguments.
#[derive(Debug, Parser)]
pub struct Args {
    /// The image (PNG, TIFF, PNM, JPEG, WebP), or `-` for stdin.
    #[arg(value_name = "IN")]
    input: PathBuf,

    /// Bins per channel (default 256).
    #[arg(long, value_name = "N")]
    bins: Option<usize>,

    /// The range the bins span, both edges included (default: 0:255 for
    /// u8, 0:65535 for u16, 0:1 for f32). Samples outside it and NaN are
    /// not counted; the text output says how many.
    #[arg(long, value_name = "LO:HI", allow_hyphen_values = true)]
    range: Option<String>,

    /// Print `{"bins": N, "range": [lo, hi], "counts": [[...], ...]}`, one
    /// list of counts per channel.
    #[arg(long)]
    json: bool,

    /// Also draw the histogram as a chart (channels in their colours) into
    /// this file: a PNG, or the format its extension names (.tif, .jpg,
    /// .webp, .ppm, .pnm, .pam). Not `-`: stdout carries the table or the JSON.
    #[arg(long, value_name = "PNG")]
    plot: Option<PathBuf>,
}

/// The JSON output, exactly these keys.
#[derive(Serialize)]
struct Json<'a> {
    bins: usize,
    range: [f32; 2],
    counts: &'a [Vec<u64>],
}

/// Parses `LO:HI` (either may be negative).
fn parse_range(s: &str) -> Result<(f32, f32), CliError> {
    let bad = || CliError::usage(format!("--range {s}: expected LO:HI, for example 0:255"));
    // The separator is the first ':' after the first character, so a
    // leading '-' belongs to LO.
    let at = s
        .char_indices()
        .skip(1)
        .find(|&(_, c)| c == ':')
        .map(|(i, _)| i);
    let (lo, hi) = at.map(|i| (&s[..i], &s[i + 1..])).ok_or_else(bad)?;
    let end = |t: &str| -> Result<f32, CliError> {
        let v: f64 = t.trim().parse().map_err(|_| bad())?;
        // A finite value past f32's range would become an infinity, which
        // the engine's message would show instead of what was typed.
        if v.is_finite() && v.abs() > f64::from(f32::MAX) {
            return Err(CliError::usage(format!(
                "--range {s}: {} is beyond the f32 range (at most {:e} in magnitude)",
                t.trim(),
                f32::MAX
            )));
        }
        Ok(v as f32)
    };
    Ok((end(lo)?, end(hi)?))
}

/// The channel names of a `channels`-channel image.
pub(crate) fn channel_names(channels: usize) -> &'static [&'static str] {
    match channels {
        1 => &["gray"],
        3 => &["R", "G", "B"],
        _ => &["R", "G", "B", "A"],
    }
}

/// Runs the subcommand.
pub fn run(global: &Global, a: Args) -> Result<(), CliError> {
    // The chart must not replace the input, and its name must say a format
    // the writer knows: both checked before any work.
    let mut inputs = Inputs::default();
    if is_stdio(&a.input) {
        inputs.add_stdin();
    } else {
        inputs.add(&a.input);
    }
    inputs.check_stdout()?;
    if let Some(path) = &a.plot {
        if is_stdio(path) {
            return Err(CliError::usage(
                "--plot -: the chart goes to an image file; stdout carries the table or the JSON",
            ));
        }
        inputs.check_output(path)?;
        crate::util::check_output_file(path)?;
    }
    let plot_format = a.plot.as_deref().map(plot_format).transpose()?;
    let img = load_one(&a.input)?;
    let mut p = HistogramParams::default_for(img.sample_type());
    if let Some(b) = a.bins {
        p.bins = b;
    }
    if let Some(r) = &a.range {
        (p.lo, p.hi) = parse_range(r)?;
    }
    // Bad bins or ranges are usage errors, before any device is opened.
    p.binning()?;
    #[cfg(not(feature = "plot"))]
    let _ = plot_format;
    #[cfg(not(feature = "plot"))]
    if a.plot.is_some() {
        return Err(CliError::usage(
            "--plot needs a filterctl built with the `plot` feature",
        ));
    }
    let engine = global.engine()?;
    let (h, report) = match &img {
        DynImage::U8(i) => engine.histogram_report(i, &p),
        DynImage::U16(i) => engine.histogram_report(i, &p),
        DynImage::F32(i) => engine.histogram_report(i, &p),
    }
    .map_err(|e| CliError::from(e).context(input_name(&a.input)))?;
    status!(
        "histogram: {} on {} in {:.2} ms",
        report.variant,
        report.backend,
        report.elapsed.as_secs_f64() * 1e3
    );
    #[cfg(feature = "plot")]
    if let Some(path) = &a.plot {
        let title = match a.input.file_name() {
            Some(n) if !is_stdio(&a.input) => n.to_string_lossy().into_owned(),
            _ => input_name(&a.input),
        };
        let format = plot_format.unwrap_or(clfilter::image::OutputFormat::Png);
        crate::plot::histogram_png(&h, &p, &title, (path, format))?;
        status!("wrote {}", path.display());
    }
    if a.json {
        let j = Json {
            bins: h.bins,
            range: [p.lo, p.hi],
            counts: &h.counts,
        };
        out!("{}", serde_json::to_string(&j)?)?;
        return Ok(());
    }
    print_text(&h, &p, &a.input)
}

/// A table: a header, the excluded counts, then one line per bin.
fn print_text(h: &Histogram, p: &HistogramParams, input: &std::path::Path) -> Result<(), CliError> {
    let names = channel_names(h.counts.len());
    out!(
        "histogram of {}: {} bins over {}..={}, channels {}",
        input_name(input),
        h.bins,
        p.lo,
        p.hi,
        names.join(" ")
    )?;
    let excluded: Vec<String> = names
        .iter()
        .zip(&h.excluded)
        .map(|(n, e)| format!("{n} {e}"))
        .collect();
    out!(
        "not counted (outside the range, or NaN): {}",
        excluded.join(", ")
    )?;
    out!("bin\tlow_edge\t{}", names.join("\t"))?;
    let b = p.binning()?;
    for i in 0..h.bins {
        let counts: Vec<String> = h.counts.iter().map(|c| c[i].to_string()).collect();
        out!("{i}\t{}\t{}", b.edge(i), counts.join("\t"))?;
    }
    Ok(())
}

/// The chart's format: the one `path`'s extension names, PNG without an
/// extension; checked to hold an 8-bit RGB image (exit 2 if not, or for
/// an unknown extension).
fn plot_format(path: &Path) -> Result<clfilter::image::OutputFormat, CliError> {
    let png = path
        .extension()
        .is_none()
        .then_some(clfilter::image::OutputFormat::Png);
    util::check_output_as(path, png, SampleType::U8, 3, false)
}
