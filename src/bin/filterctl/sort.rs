//! `filterctl sort`: sorts a raw file of little-endian f32, u32 or i32
//! keys in ascending order (f32 by IEEE-754 totalOrder: -NaN first, then
//! -inf .. -0, +0 .. +inf, +NaN last) into another raw file.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use clfilter::image::output::OutputFile;
use clfilter::image::DecodeLimits;
use clfilter::ops::sort::{SortExt, SortKey};
use clfilter::ops::RunReport;
use clfilter::simd::mem::try_with_capacity;
use clfilter::Engine;
use serde::Serialize;

use crate::batch::{input_name, is_stdio};
use crate::error::CliError;
use crate::guard::Inputs;
use crate::util::check_output_file;
use crate::util::report_line;
use crate::Global;

/// The key types.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum KeyType {
    /// IEEE-754 single precision, ordered by totalOrder.
    F32,
    /// Unsigned 32-bit integers.
    U32,
    /// Signed 32-bit integers.
    I32,
}

/// Options of `filterctl sort`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// The key type of the input's little-endian 4-byte words.
    #[arg(long = "type", value_enum, value_name = "f32|u32|i32")]
    key: KeyType,

    /// The input file, or `-` for stdin. Its length must be a multiple of 4.
    #[arg(value_name = "IN")]
    input: PathBuf,

    /// The output file (written whole or not at all), or `-` for stdout.
    #[arg(short, long, value_name = "OUT")]
    output: PathBuf,

    /// Print `{"keys": N, "type": "f32", "report": {...}}` (the engine's
    /// run report: variant, backend, times) on stdout (not with -o -).
    #[arg(long)]
    json: bool,
}

/// The `--json` output.
#[derive(Serialize)]
struct Json<'a> {
    keys: usize,
    #[serde(rename = "type")]
    key: &'static str,
    report: &'a RunReport,
}

/// Runs `filterctl sort`.
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    let mut inputs = Inputs::default();
    if is_stdio(&args.input) {
        inputs.add_stdin();
    } else {
        inputs.add(&args.input);
    }
    if is_stdio(&args.output) {
        if args.json {
            return Err(CliError::usage(
                "--json prints to stdout, where -o - writes the keys; use one of them",
            ));
        }
        inputs.check_stdout()?;
    } else {
        inputs.check_output(&args.output)?;
        check_output_file(&args.output)?;
    }
    let bytes = read_input(&args.input, &DecodeLimits::from_env()?)?;
    if bytes.len() % 4 != 0 {
        return Err(CliError::Engine(clfilter::Error::InvalidInput(format!(
            "{}: {} bytes is not a whole number of 4-byte keys",
            args.input.display(),
            bytes.len()
        ))));
    }
    let engine = global.engine()?;
    let (sorted, report) = match args.key {
        KeyType::F32 => sort_as::<f32>(&engine, bytes, f32::from_le_bytes, f32::to_le_bytes),
        KeyType::U32 => sort_as::<u32>(&engine, bytes, u32::from_le_bytes, u32::to_le_bytes),
        KeyType::I32 => sort_as::<i32>(&engine, bytes, i32::from_le_bytes, i32::to_le_bytes),
    }
    .map_err(|e| e.context(input_name(&args.input)))?;
    status!("{}", report_line(None, "sort", &report, None));
    write_output(&args.output, &sorted)?;
    if args.json {
        let key = match args.key {
            KeyType::F32 => "f32",
            KeyType::U32 => "u32",
            KeyType::I32 => "i32",
        };
        let j = Json {
            keys: sorted.len() / 4,
            key,
            report: &report,
        };
        out!("{}", serde_json::to_string(&j)?)?;
    }
    Ok(())
}

/// Sorts the words of `bytes` as `K` and returns them as bytes again.
/// Every array here is asked for fallibly, and `bytes` and the keys are
/// dropped once copied, so the most held at once is the keys and the
/// sort's two working arrays (3 times the input; the probe below asks for
/// the working arrays' size first, because the sort allocates them
/// infallibly). Memory the system refuses is then an `OutOfMemory`
/// error, not an abort.
fn sort_as<K: SortKey>(
    engine: &Engine,
    bytes: Vec<u8>,
    from: fn([u8; 4]) -> K,
    to: fn(K) -> [u8; 4],
) -> Result<(Vec<u8>, RunReport), CliError> {
    let n = bytes.len() / 4;
    let mut keys: Vec<K> = try_with_capacity(n)?;
    keys.extend(
        bytes
            .chunks_exact(4)
            .map(|c| from([c[0], c[1], c[2], c[3]])),
    );
    drop(bytes);
    drop(try_with_capacity::<K>(2 * n)?);
    let (sorted, report) = engine.sort_report(&keys)?;
    drop(keys);
    let mut out: Vec<u8> = try_with_capacity(4 * n)?;
    out.extend(sorted.into_iter().flat_map(to));
    Ok((out, report))
}

/// The input's bytes, at most `limits`' bytes (the decode limit, which
/// bounds every input the tool holds whole): a regular file's length is
/// checked first and its memory asked for fallibly; anything else (stdin,
/// a pipe, a device such as `/dev/zero`) is read up to one byte past the
/// limit.
fn read_input(path: &Path, limits: &DecodeLimits) -> Result<Vec<u8>, CliError> {
    let io = |source| CliError::Io {
        path: path.to_path_buf(),
        source,
    };
    let cap = limits.max_bytes.unwrap_or(u64::MAX);
    let over = |need| clfilter::Error::DecodeLimit {
        path: path.to_path_buf(),
        what: "the keys".to_string(),
        need,
        limit: cap,
    };
    let mut v = Vec::new();
    if is_stdio(path) {
        std::io::stdin()
            .lock()
            .take(cap.saturating_add(1))
            .read_to_end(&mut v)
            .map_err(io)?;
    } else {
        let f = std::fs::File::open(path).map_err(io)?;
        let meta = f.metadata().map_err(io)?;
        if meta.is_dir() {
            return Err(CliError::Failed(format!(
                "{}: is a folder, not a file of keys",
                path.display()
            )));
        }
        if meta.is_file() {
            if meta.len() > cap {
                return Err(over(Some(meta.len())).into());
            }
            v = try_with_capacity(meta.len() as usize)?;
        }
        f.take(cap.saturating_add(1))
            .read_to_end(&mut v)
            .map_err(io)?;
    }
    if v.len() as u64 > cap {
        return Err(over(None).into());
    }
    Ok(v)
}

fn write_output(path: &Path, bytes: &[u8]) -> Result<(), CliError> {
    if is_stdio(path) {
        let mut out = std::io::stdout().lock();
        // As `apply`'s image: keys cut short by a closed pipe did not get
        // through, which the quiet end of text outputs would hide.
        return out
            .write_all(bytes)
            .and_then(|_| out.flush())
            .map_err(|e| match e.kind() {
                std::io::ErrorKind::BrokenPipe => CliError::Failed(
                    "writing the sorted keys to stdout: the reading end of the pipe closed \
                     before they were all written (broken pipe)"
                        .into(),
                ),
                _ => CliError::Stdout(e),
            });
    }
    let mut f = OutputFile::create(path)?;
    f.write_all(bytes).map_err(|source| CliError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    f.commit()?;
    Ok(())
}
