//! `filterctl view IN [-f SPEC]`: a window that shows the pipeline's output
//! live, on an image file or on raw camera frames from a file or stdin.
//!
//! The window needs the `gl` feature (glium over glutin and winit); a build
//! without it keeps the subcommand, checks the spec and says how to get it
//! (exit 2), so that `cargo build` needs no GL or X11 libraries.
//! `controls.rs` edits the pipeline for the keys, `source.rs` reads the
//! frames and converts them to RGBA8, `live.rs` holds the state and the
//! title, and `window.rs` is the only GL code.

use std::path::PathBuf;

use clfilter::image::raw::RawFormat;
use clfilter::pipeline;

use crate::error::CliError;
use crate::util::parse_size;
use crate::Global;

#[cfg(feature = "gl")]
mod controls;
#[cfg(feature = "gl")]
mod live;
#[cfg(feature = "gl")]
mod source;
#[cfg(feature = "gl")]
mod window;

/// Options of `filterctl view`.
#[derive(Debug, clap::Args)]
// Without `gl` only the spec is read: the window code reads the rest.
#[cfg_attr(not(feature = "gl"), allow(dead_code))]
#[command(
    after_help = "Keys: Up/Down change the selected stage's main parameter \
    (its first numeric option, for example sigma), Tab selects the next stage, V cycles \
    its variants, Space flips between the original and the filtered image, S saves a \
    screenshot, Q or Esc quits. The title shows the pipeline, the stage, its variant, \
    fps, the device and the interop mode. Example: filterctl view photo.png -f \
    gaussian=sigma=4; a camera preview: cam | filterctl view - --size 1920x1080 \
    --format bayer_rggb8 -f demosaic,convert=u8"
)]
pub struct Args {
    /// The image file, or with --size and --format a raw frame stream
    /// ('-': stdin, an image or the stream).
    #[arg(value_name = "IN")]
    input: PathBuf,

    /// The pipeline, for example 'gaussian=sigma=4' (none: the input as it is).
    #[arg(short = 'f', long = "filter", value_name = "SPEC")]
    spec: Option<String>,

    /// Raw frames: the frame size in pixels.
    #[arg(long, value_name = "WxH", value_parser = parse_size, requires = "format")]
    size: Option<(usize, usize)>,

    /// Raw frames: their format, as for `filterctl stream`.
    #[arg(long, value_name = "FMT", requires = "size")]
    format: Option<RawFormat>,

    /// Raw frames: bytes to skip after each frame (a per-frame trailer).
    #[arg(long, value_name = "BYTES", default_value_t = 0, requires = "size")]
    skip: usize,

    /// Show N frames, then exit (at the end of a stream at the latest).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    frames: Option<u64>,

    /// With --frames: write what the window shows, as a PNG, before
    /// exiting. Also the name of the first screenshot the S key takes.
    #[arg(long, value_name = "PATH")]
    screenshot: Option<PathBuf>,
}

/// Parses the spec (against the raw format, when there is one).
fn parse(args: &Args) -> Result<Vec<pipeline::Op>, CliError> {
    Ok(match &args.spec {
        Some(spec) => pipeline::parse_with_format(spec, args.format.as_ref())?,
        None => Vec::new(),
    })
}

/// Runs `filterctl view`.
#[cfg(not(feature = "gl"))]
pub fn run(_global: &Global, args: Args) -> Result<(), CliError> {
    parse(&args)?;
    Err(CliError::usage(
        "this filterctl was built without a window: `filterctl view` needs the `gl` feature \
         (cargo build --release --features gl)",
    ))
}

/// Runs `filterctl view`.
#[cfg(feature = "gl")]
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    use crate::guard::Inputs;
    use crate::util::check_output;
    use clfilter::image::SampleType;

    let ops = parse(&args)?;
    let mut inputs = Inputs::default();
    let stdin = crate::batch::is_stdio(&args.input);
    if stdin {
        inputs.add_stdin();
    } else {
        inputs.add(&args.input);
    }
    if let Some(shot) = &args.screenshot {
        check_output(shot, SampleType::U8, 3, false)?;
        inputs.check_output(shot)?;
    }
    let engine = global.engine()?;
    let source = match (args.size, args.format) {
        (Some(size), Some(format)) => source::Source::stream(&args.input, format, size, args.skip)?,
        // An image file, or one image on stdin, within FILTERCTL_DECODE_LIMIT.
        _ => source::Source::still(crate::batch::load_one(&args.input)?),
    };
    let name = crate::batch::input_name(&args.input);
    let live = live::Live::start(engine, ops, source, name)?;
    let options = window::Options {
        frames: args.frames.map(|n| n as usize),
        screenshot: args.screenshot,
    };
    window::run(live, options)
}
