//! What `filterctl apply` needs around its inputs and outputs: folders
//! expanded into their image files, `-` for stdin and stdout, and several
//! inputs run in parallel under one progress bar.

use std::io::Write;
use std::path::{Path, PathBuf};

use clfilter::image::{DecodeLimits, Metadata, OutputFormat, SaveOptions};
use clfilter::DynImage;
use rayon::prelude::*;

use crate::error::CliError;
use crate::guard;

/// `-`: stdin as an input, stdout as an output.
pub fn is_stdio(path: &Path) -> bool {
    path == Path::new("-")
}

/// The extensions of the image files a folder input contributes.
const IMAGE_EXTENSIONS: &[&str] = &[
    "png", "tif", "tiff", "jpg", "jpeg", "webp", "pgm", "ppm", "pnm", "pam", "pbm", "dng",
];

/// The inputs with each folder replaced by the image files directly in it
/// (by extension, any case; sorted by name; hidden files and sub-folders
/// left out). Returns whether any input was a folder.
pub fn expand_folders(inputs: &[PathBuf]) -> Result<(Vec<PathBuf>, bool), CliError> {
    let mut out = Vec::new();
    let mut any = false;
    for input in inputs {
        if is_stdio(input) || !input.is_dir() {
            out.push(input.clone());
            continue;
        }
        any = true;
        let io = |source| CliError::Io {
            path: input.clone(),
            source,
        };
        let mut files = Vec::new();
        for entry in std::fs::read_dir(input).map_err(io)? {
            let path = entry.map_err(io)?.path();
            let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
            let ext = path
                .extension()
                .map(|e| e.to_string_lossy().to_ascii_lowercase());
            let image = ext.is_some_and(|e| IMAGE_EXTENSIONS.contains(&e.as_str()));
            if image && path.is_file() && !name.is_some_and(|n| n.starts_with('.')) {
                files.push(path);
            }
        }
        if files.is_empty() {
            return Err(CliError::usage(format!(
                "input folder {} holds no image files (.{})",
                input.display(),
                IMAGE_EXTENSIONS.join(", .")
            )));
        }
        files.sort();
        out.extend(files);
    }
    Ok((out, any))
}

/// Loads the image `path` names, or one from stdin for `-`, within the
/// decode limit of `FILTERCTL_DECODE_LIMIT` (for the subcommands that take
/// one image and have no `--decode-limit`).
pub fn load_one(path: &Path) -> Result<DynImage, CliError> {
    let limits = DecodeLimits::from_env()?;
    if is_stdio(path) {
        return Ok(read_stdin(&limits)?.0);
    }
    Ok(clfilter::image::load_with(path, &limits)?)
}

/// How errors and result lines name an input: its path, or `stdin` for `-`.
pub fn input_name(path: &Path) -> String {
    if is_stdio(path) {
        "stdin".to_string()
    } else {
        path.display().to_string()
    }
}

/// Reads one image from stdin, whole, within `limits`.
pub fn read_stdin(limits: &DecodeLimits) -> Result<(DynImage, Metadata), CliError> {
    Ok(clfilter::image::read_from(
        crate::guard::StopReader::stdin(),
        "<stdin>",
        limits,
    )?)
}

/// Writes `img` to stdout as `format`. A closed pipe is an error that says
/// so (the image did not get through), not the quiet end that text
/// outputs get.
pub fn write_stdout(
    img: &DynImage,
    format: OutputFormat,
    options: &SaveOptions,
) -> Result<(), CliError> {
    let stdout = std::io::stdout().lock();
    match clfilter::image::write_to(img, stdout, format, options) {
        Err(e) if is_closed_pipe(&e) => Err(closed_pipe("stdout")),
        // The library calls the writer `<output>`; here it is stdout.
        Err(clfilter::Error::Io { source, .. }) => Err(CliError::Io {
            path: "stdout".into(),
            source,
        }),
        other => Ok(other?),
    }
}

/// Whether `e` is a write into a pipe whose reader has gone.
pub fn is_closed_pipe(e: &clfilter::Error) -> bool {
    matches!(e, clfilter::Error::Io { source, .. } if source.kind() == std::io::ErrorKind::BrokenPipe)
}

/// The error for an image that a closed pipe cut short (written to `to`:
/// stdout, or a name for it such as `/dev/stdout`): the image did not get
/// through, which text outputs' quiet end would hide.
pub fn closed_pipe(to: &str) -> CliError {
    CliError::Failed(format!(
        "writing the image to {to}: the reading end of the pipe closed \
         before the image was written (broken pipe)"
    ))
}

/// How many inputs run at once by default: the cores, at most 4 (each
/// holds its image, and the engine spreads one image over the cores too).
pub fn default_jobs() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .min(4)
}

/// Runs `run` on every item, `jobs` at a time, under one progress bar on
/// stderr (drawn only on a terminal). A failure is printed when it happens
/// (above the bar) and the other items go on; the results come back in the
/// items' order. After a stop signal no new item starts; those left out
/// are `None`.
pub fn run_parallel<J: Sync, T: Send>(
    items: &[J],
    jobs: usize,
    run: impl Fn(&J) -> Result<T, CliError> + Sync,
) -> Result<Vec<Option<Result<T, CliError>>>, CliError> {
    let pb = indicatif::ProgressBar::with_draw_target(
        Some(items.len() as u64),
        indicatif::ProgressDrawTarget::stderr(),
    );
    if let Ok(style) =
        indicatif::ProgressStyle::with_template("[{wide_bar}] {pos}/{len} ETA {eta} {msg}")
    {
        pb.set_style(style.progress_chars("=> "));
    }
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(jobs.max(1))
        .build()
        .map_err(|e| CliError::Failed(format!("starting {jobs} worker threads: {e}")))?;
    let results = pool.install(|| {
        items
            .par_iter()
            .map(|item| {
                if guard::stopped().is_some() {
                    return None;
                }
                let result = run(item);
                if let Err(e) = &result {
                    pb.suspend(|| {
                        let _ = writeln!(std::io::stderr(), "{}", e.report());
                    });
                }
                pb.inc(1);
                Some(result)
            })
            .collect()
    });
    pb.finish_and_clear();
    Ok(results)
}
