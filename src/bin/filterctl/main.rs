//! `filterctl`: the command-line front end of `clfilter`.
//!
//! One file per subcommand; `error.rs` holds the CLI's error type and exit
//! codes, `util.rs` the helpers they share (size parsing, report lines,
//! output checks). Results go to stdout; logs, progress and per-stage
//! timings go to stderr. See `docs/CLI.md`.

use std::process::ExitCode;

use clap::{ArgAction, CommandFactory, FromArgMatches, Parser, Subcommand};
use clfilter::{CacheDir, DeviceSelector, Engine, EngineOptions};

use error::CliError;

/// Writes one line to stderr, ignoring failures (a closed stderr must not
/// turn into a panic).
macro_rules! note {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($t)*);
    }};
}

/// Whether `-q` was given: `status!` lines are then left out.
static QUIET: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Writes one status line to stderr (which variant ran where and how long
/// it took, which file was written), unless `-q` asked for errors only.
/// Results, and lines the user asked for (`--report`), use [`note!`].
macro_rules! status {
    ($($t:tt)*) => {{
        if !$crate::QUIET.load(std::sync::atomic::Ordering::Relaxed) {
            note!($($t)*);
        }
    }};
}

/// Writes one line to stdout; a failure (such as a closed pipe) becomes a
/// [`CliError::Stdout`], which ends the program quietly.
macro_rules! out {
    ($($t:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($t)*).map_err($crate::error::CliError::Stdout)
    }};
}

// The subcommands come after the macros, which they use.
mod apply;
mod batch;
mod bench;
mod demo;
mod devices;
mod error;
mod frames;
mod guard;
mod histogram;
#[cfg(feature = "plot")]
mod plot;
mod sort;
mod stats;
mod stream;
mod tune;
mod util;
mod variants;
mod view;

/// OpenCL image filters with a rayon CPU fallback.
#[derive(Debug, Parser)]
#[command(
    name = "filterctl",
    version,
    about,
    after_help = "Exit codes: 0 success, 2 usage error (bad arguments, spec, variant or device, \
                  or an input a stage cannot take), 1 any other failure. See docs/CLI.md."
)]
struct Cli {
    /// Device: auto (the first GPU, else the first accelerator, else the
    /// CPU backend; an OpenCL CPU device such as PoCL only where `filterctl
    /// tune` measured it faster), cpu (the rayon CPU backend), opencl (any
    /// OpenCL device, GPU first), gpu, P:D (platform:device index from
    /// `filterctl devices`), or part of a device or platform name.
    #[arg(
        long,
        global = true,
        env = "FILTERCTL_DEVICE",
        value_name = "cpu|gpu|opencl|auto|P:D|NAME",
        value_parser = parse_device
    )]
    device: Option<DeviceSelector>,

    /// Force a variant: NAME for every operation that has one of that name,
    /// or op=NAME[,op=NAME...] (see `filterctl variants`; `cpu` is the
    /// rayon path, in every operation).
    #[arg(
        long,
        global = true,
        env = "FILTERCTL_VARIANT",
        value_name = "NAME|op=NAME,..."
    )]
    variant: Option<String>,

    /// More log output on stderr: -v info, -vv debug, -vvv trace (RUST_LOG overrides).
    #[arg(short, long, global = true, action = ArgAction::Count, conflicts_with = "quiet")]
    verbose: u8,

    /// Less output on stderr: -q errors only (no timing or status lines), -qq no log output at all (RUST_LOG overrides).
    #[arg(short, long, global = true, action = ArgAction::Count)]
    quiet: u8,

    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// List the OpenCL platforms and devices, and the CPU backend.
    Devices(devices::Args),
    /// Run a filter pipeline on image files.
    Apply(apply::Args),
    /// Run the main operations on the built-in photo and write the results.
    Demo(demo::Args),
    /// Time every variant of the operations on a generated image.
    Bench(bench::Args),
    /// List every operation's variants (name, summary, tolerance).
    Variants(variants::Args),
    /// Measure every variant per size and parameters, and cache the fastest
    /// for the engine to use (--show prints the cache, --clear deletes it).
    Tune(tune::Args),
    /// Per-channel histogram of an image (or stdin): a table, --json, or a --plot PNG.
    Histogram(histogram::Args),
    /// Per-channel sum, mean, std, min and max of an image (or stdin; --json).
    Stats(stats::Args),
    /// Run a pipeline over a stream of raw camera frames (file or stdin),
    /// overlapping transfers with compute on a device.
    Stream(stream::Args),
    /// Sort a raw file of f32, u32 or i32 keys (little-endian) ascending.
    Sort(sort::Args),
    /// Show a pipeline's output live in a window, on an image file or raw
    /// camera frames (needs a build with the `gl` feature).
    View(view::Args),
}

/// Parses `--device`; an empty value (`FILTERCTL_DEVICE=`) means `auto`, as
/// `DeviceSelector::from_env` has it.
fn parse_device(s: &str) -> Result<DeviceSelector, String> {
    if s.trim().is_empty() {
        return Ok(DeviceSelector::Auto);
    }
    s.parse::<DeviceSelector>().map_err(|e| e.to_string())
}

/// The global options the subcommands need.
#[derive(Debug, Clone)]
pub struct Global {
    /// `--device`.
    pub device: DeviceSelector,
    /// `--variant`.
    pub variant: Option<String>,
    /// `-v` given this many times.
    pub verbose: u8,
}

impl Global {
    /// Opens the engine the options select (kernel sources from
    /// `FILTERCTL_CL_DIR`, caches under `FILTERCTL_CACHE_DIR`).
    pub fn engine(&self) -> Result<Engine, CliError> {
        let cl_dir = std::env::var_os("FILTERCTL_CL_DIR")
            .filter(|v| !v.is_empty())
            .map(std::path::PathBuf::from);
        let engine = Engine::new(EngineOptions {
            device: self.device.clone(),
            cache: CacheDir::Default,
            cl_dir,
            variant: self.variant.clone().filter(|v| !v.trim().is_empty()),
            dispatch_limit: clfilter::backend::DispatchLimit::from_env()?,
            ..Default::default()
        })?;
        log::info!("backend: {}", engine.backend().describe());
        Ok(engine)
    }

    /// The engine `tune` and `bench` measure: under `auto`, any OpenCL
    /// device (an OpenCL CPU device included, which `auto` alone would
    /// leave for the rayon path until it is measured), else the CPU backend.
    pub fn measuring_engine(&self) -> Result<Engine, CliError> {
        if self.device != DeviceSelector::Auto {
            return self.engine();
        }
        let opencl = Global {
            device: DeviceSelector::OpenCl,
            ..self.clone()
        };
        match opencl.engine() {
            Ok(e) => Ok(e),
            Err(e) => {
                log::info!("no OpenCL device to measure ({e}); the CPU backend");
                self.engine()
            }
        }
    }

    /// Why [`Global::measuring_engine`] fell back to the CPU backend: the
    /// error of opening an OpenCL device, where the selector is `auto`
    /// (`None` where the user chose the device, or one opens now).
    pub fn no_opencl_reason(&self) -> Option<String> {
        if self.device != DeviceSelector::Auto {
            return None;
        }
        let opencl = Global {
            device: DeviceSelector::OpenCl,
            ..self.clone()
        };
        opencl.engine().err().map(|e| e.to_string())
    }
}

fn init_logging(verbose: u8, quiet: u8) {
    let level = match (verbose, quiet) {
        (0, 0) => "warn",
        (0, 1) => "error",
        (0, _) => "off",
        (1, _) => "info",
        (2, _) => "debug",
        _ => "trace",
    };
    env_logger::Builder::from_env(env_logger::Env::default().default_filter_or(level))
        .format_timestamp(None)
        .init();
}

/// Prints clap's help, version or usage error and exits with its code, as
/// `clap::Error::exit` does, except that help or a version that cannot be
/// written (`--help > /dev/full`) is exit 1 rather than a silent success; a
/// reader that went away (`--help | head -1`) still ends quietly.
fn clap_exit(e: clap::Error) -> ! {
    // clap reads `FILTERCTL_DEVICE` and the other variables it is given
    // as `env`, and says only that "one or more arguments" are not UTF-8.
    if e.kind() == clap::error::ErrorKind::InvalidUtf8
        && std::env::args_os().all(|a| a.to_str().is_some())
    {
        let bad: Vec<String> = std::env::vars_os()
            .filter(|(k, v)| {
                k.to_str().is_some_and(|k| k.starts_with("FILTERCTL_")) && v.to_str().is_none()
            })
            .map(|(k, _)| k.to_string_lossy().into_owned())
            .collect();
        if !bad.is_empty() {
            note!(
                "filterctl: error: the environment variable {} is not valid UTF-8; \
                 unset it or give it a UTF-8 value",
                bad.join(", ")
            );
            std::process::exit(2)
        }
    }
    match e.print() {
        Err(w) if !e.use_stderr() && w.kind() != std::io::ErrorKind::BrokenPipe => {
            note!("filterctl: error: writing to stdout: {w}");
            std::process::exit(1)
        }
        _ => std::process::exit(e.exit_code()),
    }
}

fn main() -> ExitCode {
    // The stage list comes from the registry, so it is added at run time.
    let matches = Cli::command()
        .mut_subcommand("apply", |c| c.after_help(apply::stages_help()))
        .try_get_matches()
        .unwrap_or_else(|e| clap_exit(e));
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => clap_exit(e),
    };
    init_logging(cli.verbose, cli.quiet);
    QUIET.store(cli.quiet > 0, std::sync::atomic::Ordering::Relaxed);
    guard::watch_stop_signals();
    let global = Global {
        device: cli.device.unwrap_or_default(),
        variant: cli.variant,
        verbose: cli.verbose,
    };
    let result = match cli.command {
        Command::Devices(a) => devices::run(&global, a),
        Command::Apply(a) => apply::run(&global, a),
        Command::Demo(a) => demo::run(&global, a),
        Command::Bench(a) => bench::run(&global, a),
        Command::Variants(a) => variants::run(a),
        Command::Tune(a) => tune::run(&global, a),
        Command::Histogram(a) => histogram::run(&global, a),
        Command::Stats(a) => stats::run(&global, a),
        Command::Stream(a) => stream::run(&global, a),
        Command::Sort(a) => sort::run(&global, a),
        Command::View(a) => view::run(&global, a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is_broken_pipe() => ExitCode::SUCCESS,
        Err(e) => {
            note!("{}", e.report());
            ExitCode::from(e.exit_code())
        }
    }
}
