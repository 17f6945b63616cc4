//! `filterctl stream -f SPEC --size WxH --format FMT [IN|-] [-o OUT|-]`:
//! runs a pipeline over a stream of headerless raw camera frames.

use std::fs::File;
use std::io::{BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use clfilter::image::raw::RawFormat;
use clfilter::pipeline::stream::{
    run_source, FrameSink, OutFrame, Source, StreamOptions, StreamTotals,
};
use serde::Serialize;

use clfilter::image::output::OutputFile;

use crate::error::CliError;
use crate::guard::{self, Inputs};
use crate::util::{check_output, check_output_folder, ms, parse_size};
use crate::Global;

/// Options of `filterctl stream`.
#[derive(Debug, clap::Args)]
#[command(after_help = "Output: '-' writes raw frames to stdout; a name with a \
    frame-number pattern (out_%05d.png, %d) writes one image file per frame; an \
    existing folder receives frame_000000.png, ...; any other name receives the \
    raw frames one after another (an image extension without a frame number, such \
    as out.png, is refused). Without -o the frames are computed and dropped \
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
    /// bayer_rggb12p (PFNC), bayer_rggb12packed (GigE), bayer_rggb12mipi and
    /// bayer_rggb10mipi (MIPI CSI-2 RAW12, RAW10), bayer_rggb16, bayer_rggb16be
    /// (big-endian), mono8, mono16, ... (any pattern: rggb, bggr, grbg, gbrg).
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

    /// Batches in flight on a device (2..8).
    #[arg(long, value_name = "N", default_value_t = 3)]
    in_flight: usize,

    /// Frames per batch on a device (1..64): one upload, one download and
    /// the frames' kernels queued together. Default: enough frames for
    /// about 4 MiB per upload, at most 16 (1 for frames of 4 MiB or more).
    #[arg(long, value_name = "N")]
    batch: Option<usize>,

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
    Raw(RawSink),
    /// One image file per frame, named by a pattern.
    Files {
        pattern: Pattern,
        /// The inputs, which no frame file may overwrite.
        inputs: Inputs,
    },
}

/// A raw frame stream to stdout or to a file.
struct RawSink {
    out: RawOut,
    /// Frames written whole.
    frames: usize,
    /// Their bytes.
    bytes: u64,
}

enum RawOut {
    Stdout(BufWriter<std::io::Stdout>),
    /// Written straight (no buffer), so that after a failed write the file
    /// holds every whole frame before it.
    File(OutputFile),
}

impl RawSink {
    fn name(&self) -> PathBuf {
        match &self.out {
            RawOut::Stdout(_) => PathBuf::from("stdout"),
            RawOut::File(f) => f.path().to_path_buf(),
        }
    }

    fn write(&mut self, bytes: &[u8]) -> clfilter::Result<()> {
        let written = match &mut self.out {
            RawOut::Stdout(w) => w.write_all(bytes),
            RawOut::File(f) => f.write_all(bytes),
        };
        written.map_err(|source| clfilter::Error::Io {
            path: self.name(),
            source,
        })?;
        self.frames += 1;
        self.bytes += bytes.len() as u64;
        Ok(())
    }

    /// Ends the stream: `ok` commits the file whole; otherwise the file
    /// keeps the frames written whole (or the old file stays, when there are
    /// none). Returns what was kept, for the message.
    fn finish(self, ok: bool) -> Result<String, CliError> {
        let (frames, bytes) = (self.frames, self.bytes);
        match self.out {
            RawOut::Stdout(mut w) => {
                w.flush().map_err(CliError::Stdout)?;
                Ok(format!("{frames} whole frames written to stdout"))
            }
            RawOut::File(f) if !f.is_atomic() => {
                let path = f.path().display().to_string();
                f.commit()?;
                Ok(if ok {
                    String::new()
                } else {
                    format!("{frames} whole frames were written to {path}")
                })
            }
            RawOut::File(f) if ok => {
                f.commit()?;
                Ok(String::new())
            }
            RawOut::File(f) if frames == 0 => Ok(format!(
                "no frame was written; {} is unchanged",
                f.path().display()
            )),
            RawOut::File(f) => {
                let path = f.path().display().to_string();
                f.commit_prefix(bytes)?;
                Ok(format!(
                    "kept {frames} whole frames ({}) in {path}",
                    crate::util::bytes(bytes)
                ))
            }
        }
    }
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
        if let Some(signal) = guard::stopped() {
            return Err(clfilter::Error::InvalidArgument(format!(
                "stopped by signal {signal}"
            )));
        }
        match self {
            Sink::Discard => Ok(()),
            Sink::Raw(r) => r.write(f.bytes),
            Sink::Files { pattern, inputs } => {
                let name = pattern.name(f.index);
                inputs
                    .check_output(&name)
                    .map_err(|e| clfilter::Error::InvalidArgument(e.to_string()))?;
                clfilter::image::save(&f.to_image()?, name)
            }
        }
    }
}

#[derive(Serialize)]
struct Json<'a> {
    spec: String,
    format: String,
    width: usize,
    height: usize,
    stats: &'a StreamTotals,
    transfer_bound: Option<&'a StreamTotals>,
    fraction_of_transfer_bound: Option<f64>,
}

fn open_input(
    path: &Path,
    synthetic: Option<usize>,
) -> Result<Source<Box<dyn Read + Send>>, CliError> {
    if let Some(frames) = synthetic {
        return Ok(Source::Synthetic { frames });
    }
    if crate::batch::is_stdio(path) {
        return Ok(Source::Reader(Box::new(guard::StopReader::stdin())));
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

fn line(s: &StreamTotals) -> String {
    let mb = |b: usize| b as f64 * s.fps / 1e6;
    format!(
        "{} frames, {:.1} fps sustained (first {}), in {:.0} MB/s, out {:.0} MB/s, on {}{}",
        s.frames,
        s.fps,
        if s.batch > 1 {
            format!(
                "batch {}, batches of {} frames{}",
                ms(s.first_frame),
                s.batch,
                if s.stacked { " stacked" } else { "" }
            )
        } else {
            format!("frame {}", ms(s.first_frame))
        },
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

/// Checks, before the first frame, that the image files of `pattern` can
/// hold frames of type `ot` and shape `(ow, oh, oc)`: an extension (stream
/// has no --out-format, which check_output's message for a name without
/// one suggests), the type and channels, and the size the format allows.
fn check_frame_files(
    pattern: &Pattern,
    ot: clfilter::SampleType,
    (ow, oh, oc): (usize, usize, usize),
) -> Result<(), CliError> {
    let first = pattern.name(0);
    if first.extension().is_none() {
        return Err(CliError::usage(format!(
            "output {} has no extension after its frame number, and stream takes the \
             frames' image format from it: end the name with .png, .tif/.tiff, .jpg/.jpeg, \
             .webp, .pgm, .ppm, .pnm or .pam (or write raw frames to a name without a frame \
             number)",
            first.display()
        )));
    }
    check_output(&first, ot, oc, false)?;
    match clfilter::image::OutputFormat::from_path(&first).map(|f| f.check_size(ow, oh)) {
        Ok(Err(why)) => Err(CliError::usage(format!(
            "output {}: {why}",
            first.display()
        ))),
        _ => Ok(()),
    }
}

/// Refuses a raw output `p` whose extension names an image format: raw
/// bytes under an image name would be a file that is not what its name
/// says (and would replace such an image).
fn refuse_image_name(p: &Path) -> Result<(), CliError> {
    let Some(f) = p
        .extension()
        .and_then(|e| clfilter::image::OutputFormat::from_extension(&e.to_string_lossy()))
    else {
        return Ok(());
    };
    let stem = p.file_stem().unwrap_or_default().to_string_lossy();
    Err(CliError::usage(format!(
        "output {} names an image file ({}), but a name without a frame number receives \
         the raw frames one after another; use a frame pattern such as {} for one image per \
         frame, or a raw name such as {} for the raw stream",
        p.display(),
        f.extension(),
        p.with_file_name(format!("{stem}_%05d.{}", f.extension()))
            .display(),
        p.with_extension("raw").display()
    )))
}

/// Where `-o` sends the frames: nowhere, stdout, numbered image files, or
/// one raw file. `ot` and `shape` are the output frames' type and shape.
/// No output may be one of `inputs`.
fn open_sink(
    output: Option<&Path>,
    ot: clfilter::SampleType,
    shape: (usize, usize, usize),
    inputs: Inputs,
) -> Result<Sink, CliError> {
    let raw = |out| {
        Sink::Raw(RawSink {
            out,
            frames: 0,
            bytes: 0,
        })
    };
    Ok(match output {
        None => Sink::Discard,
        Some(p) if crate::batch::is_stdio(p) => {
            inputs.check_stdout()?;
            raw(RawOut::Stdout(BufWriter::with_capacity(
                1 << 20,
                std::io::stdout(),
            )))
        }
        Some(p) => {
            let s = p.to_string_lossy().to_string();
            if !p.is_dir() {
                check_output_folder(p)?;
            }
            if let Some(pattern) = Pattern::parse(&s) {
                let pattern = pattern?;
                check_frame_files(&pattern, ot, shape)?;
                Sink::Files { pattern, inputs }
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
                check_frame_files(&pattern, ot, shape)?;
                Sink::Files { pattern, inputs }
            } else {
                refuse_image_name(p)?;
                inputs.check_output(p)?;
                raw(RawOut::File(OutputFile::create(p)?))
            }
        }
    })
}

/// Checks the input (a folder is named as one) and records it.
fn check_input(a: &Args) -> Result<Inputs, CliError> {
    let mut inputs = Inputs::default();
    if a.synthetic.is_some() {
        return Ok(inputs);
    }
    if a.input.as_os_str() == "-" {
        inputs.add_stdin();
    } else {
        if a.input.is_dir() {
            return Err(CliError::usage(format!(
                "input {} is a folder; stream reads one file of raw frames, or - for stdin",
                a.input.display()
            )));
        }
        inputs.add(&a.input);
    }
    Ok(inputs)
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
    // A pipe or FIFO cannot be read a second time (a FIFO's second open
    // would wait for a writer that has gone).
    let piped = a.input.as_os_str() == "-"
        || std::fs::metadata(&a.input).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if a.compare_transfer && piped && a.synthetic.is_none() {
        return Err(CliError::usage(
            "--compare-transfer streams the input twice, so it needs a regular file, not stdin or a pipe",
        ));
    }
    if a.frames == Some(0) || a.synthetic == Some(0) {
        return Err(CliError::usage(
            "--frames and --synthetic count frames to process: give 1 or more",
        ));
    }
    let mut opts = StreamOptions::new(w, h, a.format);
    opts.skip = a.skip;
    opts.frames = a.frames;
    opts.in_flight = a.in_flight;
    opts.batch = a.batch;
    opts.input_name = if a.input.as_os_str() == "-" {
        PathBuf::from("stdin")
    } else {
        a.input.clone()
    };
    let (ow, oh, oc, ot) =
        clfilter::pipeline::stream::output_shape(&ops, (w, h, 1), a.format.sample());
    // Every argument, the input and the device are checked before an output
    // is opened.
    clfilter::pipeline::stream::batch_size(a.batch, a.format.frame_bytes(w, h)?)?;
    clfilter::pipeline::stream::check_stages(&ops)?;
    clfilter::image::check_shape(ow, oh, oc)?;
    let inputs = check_input(&a)?;
    let engine = global.engine()?;
    if a.compare_transfer && engine.backend().device().is_none() {
        return Err(CliError::usage(
            "--compare-transfer measures host-device transfers, and the CPU backend has none; \
             pick an OpenCL device with --device",
        ));
    }
    let source = open_input(&a.input, a.synthetic)?;
    let mut sink = open_sink(a.output.as_deref(), ot, (ow, oh, oc), inputs)?;
    log::info!(
        "stream: {w}x{h} {} -> {ow}x{oh}x{oc} {ot} per frame",
        a.format
    );
    guard::catch_stop_signals();
    let stats = run_source(&engine, &ops, &opts, source, &mut sink);
    let stats = finish(sink, stats, &a.input)?;
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

/// Closes the output after the stream: whole on success; after a failure
/// or a stop signal, with the whole frames written so far, said on stderr.
fn finish(
    sink: Sink,
    stats: clfilter::Result<StreamTotals>,
    input: &Path,
) -> Result<StreamTotals, CliError> {
    let signal = guard::stopped();
    // A stream that held no frame (an empty input, or --skip past its end)
    // fails, and so keeps a file that -o names as it was.
    let empty = matches!(&stats, Ok(s) if s.frames == 0);
    let ok = stats.is_ok() && signal.is_none() && !empty;
    let kept = match sink {
        Sink::Raw(r) => r.finish(ok)?,
        _ => String::new(),
    };
    if ok {
        return stats.map_err(CliError::from);
    }
    if let Some(signal) = signal {
        return Err(CliError::Interrupted {
            signal,
            done: if kept.is_empty() {
                "before the end of the stream".into()
            } else {
                format!("before the end of the stream; {kept}")
            },
        });
    }
    if !kept.is_empty() {
        note!("filterctl: {kept}");
    }
    if empty {
        return Err(CliError::Failed(format!(
            "stream {}: the stream holds no frame",
            input.display()
        )));
    }
    stats.map_err(|e| CliError::from(e).context(format!("stream {}", input.display())))
}

/// Prints the stream's figures: JSON on stdout, or lines on stderr.
fn report(
    a: &Args,
    ops: &[clfilter::pipeline::Op],
    stats: &StreamTotals,
    bound: Option<&StreamTotals>,
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
        status!("stages: {}", stats.stages.join(" -> "));
        status!("{}", line(stats));
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
