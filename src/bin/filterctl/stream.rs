//! `filterctl stream -f SPEC --size WxH --format FMT [IN|-] [-o OUT|-]`:
//! runs a pipeline over a stream of headerless raw camera frames.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use clfilter::image::raw::RawFormat;
use clfilter::pipeline::stream::{
    run_source, FrameSink, OutFrame, Source, StreamOptions, StreamStats,
};
use serde::Serialize;

use crate::error::CliError;
use crate::util::{check_output, ms, parse_size};
use crate::Global;

/// Options of `filterctl stream`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Output: '-' writes raw frames to stdout; a name with a \
    frame-number pattern (out_%05d.png, %d) writes one image file per frame; an \
    existing folder receives frame_000000.png, ...; any other name receives the \
    raw frames one after another. Without -o the frames are computed and dropped \
    (to measure). Example: filterctl stream -f 'demosaic=method=mhc,gaussian=sigma=2,convert=u8' \
    --size 4096x3000 --format bayer_rggb12p cam.raw -o out.rgb")]
pub struct Args {
    /// The pipeline, for example 'demosaic=method=mhc,gaussian=sigma=2,convert=u8'.
    #[arg(short = 'f', long = "filter", value_name = "SPEC")]
    spec: String,

    /// Frame size in pixels.
    #[arg(long, value_name = "WxH", value_parser = parse_size)]
    size: (usize, usize),

    /// Frame format: bayer_rggb8, bayer_rggb12 (16-bit containers),
    /// bayer_rggb12p (PFNC), bayer_rggb12packed (GigE), bayer_rggb16,
    /// mono8, mono16, ... (any pattern: rggb, bggr, grbg, gbrg).
    #[arg(long, value_name = "FMT")]
    format: RawFormat,

    /// Input file, or '-' for stdin.
    #[arg(value_name = "IN", default_value = "-")]
    input: PathBuf,

    /// Where results go (see below).
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,

    /// Process at most N frames.
    #[arg(long, value_name = "N")]
    frames: Option<usize>,

    /// Bytes to skip after each frame (a per-frame trailer).
    #[arg(long, value_name = "BYTES", default_value_t = 0)]
    skip: usize,

    /// Read no input: run N frames of random data generated once into the
    /// stream's (pinned) input buffers, as when a camera SDK delivers frames
    /// into them; measures the device's end-to-end rate without file I/O.
    #[arg(long, value_name = "N", conflicts_with = "input")]
    synthetic: Option<usize>,

    /// Frames in flight on a device (2..8).
    #[arg(long, value_name = "N", default_value_t = 3)]
    in_flight: usize,

    /// Afterwards, stream the same input again with uploads and downloads
    /// only (no kernels), and report the pipeline's rate against that
    /// transfer bound (needs a file or --synthetic, and an OpenCL device).
    #[arg(long)]
    compare_transfer: bool,

    /// Print the statistics as JSON on stdout (not with -o -).
    #[arg(long)]
    json: bool,
}

/// Where frames go.
enum Sink {
    /// Computed and dropped.
    Discard,
    /// Raw bytes, one frame after another.
    Raw(Box<dyn Write + Send>),
    /// One image file per frame, named by a pattern.
    Files { pattern: Pattern },
}

/// A file name with a frame-number field: `prefix %0Nd suffix`.
struct Pattern {
    prefix: String,
    width: usize,
    suffix: String,
}

/// The widest frame-number field: the digits of `u64::MAX`.
const MAX_WIDTH: usize = 20;

impl Pattern {
    /// Finds `%d` or `%0Nd` in `s` (at most one).
    fn parse(s: &str) -> Option<Result<Pattern, CliError>> {
        let at = s.find('%')?;
        let rest = &s[at + 1..];
        let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
        if !rest[digits.len()..].starts_with('d') {
            return Some(Err(CliError::usage(format!(
                "output '{s}': a frame-number field is %d or %0Nd (for example %05d)"
            ))));
        }
        let suffix = rest[digits.len() + 1..].to_string();
        if suffix.contains('%') {
            return Some(Err(CliError::usage(format!(
                "output '{s}': one frame-number field only"
            ))));
        }
        // A frame number has at most 20 digits (u64); a wider field would
        // only pad, and a huge one would not fit a file name.
        let width = match digits.parse::<usize>() {
            Ok(w) if w <= MAX_WIDTH => w,
            _ if digits.is_empty() => 0,
            _ => {
                return Some(Err(CliError::usage(format!(
                    "output '{s}': the frame-number width {digits} is more than {MAX_WIDTH} digits"
                ))))
            }
        };
        Some(Ok(Pattern {
            prefix: s[..at].to_string(),
            width,
            suffix,
        }))
    }

    fn name(&self, index: usize) -> PathBuf {
        PathBuf::from(format!(
            "{}{:0w$}{}",
            self.prefix,
            index,
            self.suffix,
            w = self.width
        ))
    }
}

impl FrameSink for Sink {
    fn frame(&mut self, f: &OutFrame<'_>) -> clfilter::Result<()> {
        match self {
            Sink::Discard => Ok(()),
            Sink::Raw(w) => w.write_all(f.bytes).map_err(|source| clfilter::Error::Io {
                path: PathBuf::from("(output)"),
                source,
            }),
            Sink::Files { pattern } => clfilter::image::save(&f.to_image()?, pattern.name(f.index)),
        }
    }
}

#[derive(Serialize)]
struct Json<'a> {
    spec: String,
    format: String,
    width: usize,
    height: usize,
    stats: &'a StreamStats,
    transfer_bound: Option<&'a StreamStats>,
    fraction_of_transfer_bound: Option<f64>,
}

fn open_input(
    path: &Path,
    synthetic: Option<usize>,
) -> Result<Source<Box<dyn Read + Send>>, CliError> {
    if let Some(frames) = synthetic {
        return Ok(Source::Synthetic { frames });
    }
    if path.as_os_str() == "-" {
        return Ok(Source::Reader(Box::new(std::io::stdin())));
    }
    let f = File::open(path).map_err(|source| CliError::Io {
        path: path.into(),
        source,
    })?;
    Ok(Source::Reader(Box::new(std::io::BufReader::with_capacity(
        1 << 20,
        f,
    ))))
}

fn line(s: &StreamStats) -> String {
    let mb = |b: usize| b as f64 * s.fps / 1e6;
    format!(
        "{} frames, {:.1} fps sustained (first frame {}), in {:.0} MB/s, out {:.0} MB/s, on {}{}",
        s.frames,
        s.fps,
        ms(s.first_frame),
        mb(s.in_bytes),
        mb(s.out_bytes),
        s.backend,
        if s.overlapped {
            " (overlapped transfers)"
        } else {
            ""
        }
    )
}

/// Where `-o` sends the frames: nowhere, stdout, numbered image files, or
/// one raw file. `ot`/`oc` are the output's type and channels.
fn open_sink(
    output: Option<&std::path::Path>,
    ot: clfilter::SampleType,
    oc: usize,
) -> Result<Sink, CliError> {
    Ok(match output {
        None => Sink::Discard,
        Some(p) if p.as_os_str() == "-" => Sink::Raw(Box::new(BufWriter::new(std::io::stdout()))),
        Some(p) => {
            let s = p.to_string_lossy().to_string();
            if let Some(pattern) = Pattern::parse(&s) {
                let pattern = pattern?;
                check_output(&pattern.name(0), ot, oc, false)?;
                Sink::Files { pattern }
            } else if p.is_dir() {
                let pattern = Pattern {
                    prefix: p.join("frame_").to_string_lossy().to_string(),
                    width: 6,
                    suffix: if ot == clfilter::SampleType::F32 {
                        ".tif".into()
                    } else {
                        ".png".into()
                    },
                };
                check_output(&pattern.name(0), ot, oc, false)?;
                Sink::Files { pattern }
            } else {
                let f = File::create(p).map_err(|source| CliError::Io {
                    path: p.into(),
                    source,
                })?;
                Sink::Raw(Box::new(BufWriter::with_capacity(1 << 20, f)))
            }
        }
    })
}

/// Runs `filterctl stream`.
pub fn run(global: &Global, a: Args) -> Result<(), CliError> {
    let (w, h) = a.size;
    let ops = clfilter::pipeline::format::parse_with_format(&a.spec, Some(&a.format))?;
    if a.json && a.output.as_deref().is_some_and(|o| o.as_os_str() == "-") {
        return Err(CliError::usage(
            "--json prints to stdout, where -o - writes frames; use one of them",
        ));
    }
    if a.compare_transfer && a.input.as_os_str() == "-" && a.synthetic.is_none() {
        return Err(CliError::usage(
            "--compare-transfer streams the input twice, so it needs a file, not stdin",
        ));
    }
    let mut opts = StreamOptions::new(w, h, a.format);
    opts.skip = a.skip;
    opts.frames = a.frames;
    opts.in_flight = a.in_flight;
    let (ow, oh, oc, ot) =
        clfilter::pipeline::stream::output_shape(&ops, (w, h, 1), a.format.sample());
    // Every argument is checked before an output is opened (and truncated).
    a.format.frame_bytes(w, h)?;
    clfilter::image::check_shape(ow, oh, oc)?;
    let mut sink = open_sink(a.output.as_deref(), ot, oc)?;
    let engine = global.engine()?;
    log::info!(
        "stream: {w}x{h} {} -> {ow}x{oh}x{oc} {ot} per frame",
        a.format
    );
    let stats = run_source(
        &engine,
        &ops,
        &opts,
        open_input(&a.input, a.synthetic)?,
        &mut sink,
    );
    if let Sink::Raw(wr) = &mut sink {
        wr.flush().map_err(CliError::Stdout)?;
    }
    let stats =
        stats.map_err(|e| CliError::from(e).context(format!("stream {}", a.input.display())))?;
    let bound = if a.compare_transfer {
        let mut t = opts.clone();
        t.transfer_only = true;
        Some(run_source(
            &engine,
            &ops,
            &t,
            open_input(&a.input, a.synthetic)?,
            &mut Sink::Discard,
        )?)
    } else {
        None
    };
    report(&a, &ops, &stats, bound.as_ref())
}

/// Prints the stream's figures: JSON on stdout, or lines on stderr.
fn report(
    a: &Args,
    ops: &[clfilter::pipeline::Op],
    stats: &StreamStats,
    bound: Option<&StreamStats>,
) -> Result<(), CliError> {
    let (w, h) = a.size;
    let fraction = bound.map(|b| stats.fps / b.fps);
    if a.json {
        let j = Json {
            spec: clfilter::pipeline::to_spec(ops),
            format: a.format.to_string(),
            width: w,
            height: h,
            stats,
            transfer_bound: bound,
            fraction_of_transfer_bound: fraction,
        };
        out!("{}", serde_json::to_string_pretty(&j)?)?;
    } else {
        note!("stages: {}", stats.stages.join(" -> "));
        note!("{}", line(stats));
        if stats.host_fallback_frames > 0 {
            note!(
                "{} frames ran on the host path after a device failure (see the log)",
                stats.host_fallback_frames
            );
        }
        if let (Some(b), Some(f)) = (bound, fraction) {
            note!("transfer bound (uploads and downloads only): {}", line(b));
            note!("pipeline at {:.0}% of the transfer bound", 100.0 * f);
        }
    }
    Ok(())
}
