//! Where each input of `filterctl apply` goes: folders expanded, `-` for
//! stdin and stdout, one output per input, checked before any work.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use clfilter::image::OutputFormat;
use clfilter::pipeline::Op;

use super::Args;
use crate::batch::{self, is_stdio};
use crate::error::CliError;
use crate::guard::Inputs;
use crate::util::{check_output_folder, output_format};

/// One input and where its result goes.
pub(super) struct Job {
    pub input: PathBuf,
    pub output: Option<PathBuf>,
}

/// Where each input's result goes, checked before any work: an output for
/// every input unless the spec ends with minmax or stats, no two outputs the
/// same, no output that is an input.
pub(super) fn plan(args: &Args, ops: &[Op]) -> Result<Vec<Job>, CliError> {
    let (inputs, folder_input) = batch::expand_folders(&args.inputs)?;
    check_stdin(args, &inputs)?;
    let ends_with_report = ops.last().is_some_and(|o| o.stage.reports());
    let Some(out) = &args.output else {
        if !ends_with_report {
            return Err(CliError::usage(
                "-o OUT is required: the last stage produces an image \
                 (only a spec that ends with minmax or stats needs no output)",
            ));
        }
        if args.ext.is_some() {
            return Err(CliError::usage("--ext needs -o DIR"));
        }
        return Ok(inputs
            .iter()
            .map(|i| Job {
                input: i.clone(),
                output: None,
            })
            .collect());
    };
    let into_dir = !is_stdio(out) && (inputs.len() > 1 || folder_input || names_folder(out));
    if !into_dir {
        if args.ext.is_some() {
            return Err(CliError::usage(
                "--ext applies when -o is a folder; give the output file's extension instead",
            ));
        }
        if inputs.len() > 1 {
            return Err(CliError::usage(format!(
                "-o -: stdout holds one image, and there are {} inputs",
                inputs.len()
            )));
        }
        return Ok(vec![Job {
            input: inputs[0].clone(),
            output: Some(out.clone()),
        }]);
    }
    folder_jobs(args, out, &inputs)
}

/// Whether `-o out` names a folder: one that exists, or a name ending in
/// `/`, which says a folder is meant (created like one for several inputs).
pub(super) fn names_folder(out: &Path) -> bool {
    out.is_dir() || out.as_os_str().to_string_lossy().ends_with('/')
}

/// `-` (stdin) is the only input, and holds an image, not raw frames.
fn check_stdin(args: &Args, inputs: &[PathBuf]) -> Result<(), CliError> {
    if inputs.iter().any(|i| is_stdio(i)) {
        if inputs.len() > 1 {
            return Err(CliError::usage(
                "`-` (stdin) must be the only input: stdin holds one image",
            ));
        }
        if args.size.is_some() {
            return Err(CliError::usage(
                "raw frames from stdin: use `filterctl stream`, which reads a stream of them",
            ));
        }
    }
    Ok(())
}

/// One job per input into the folder `out`, each named as its input (with
/// `--ext`'s or `--out-format`'s extension); two inputs on one name are an
/// error.
fn folder_jobs(args: &Args, out: &Path, inputs: &[PathBuf]) -> Result<Vec<Job>, CliError> {
    if out.exists() && !out.is_dir() {
        return Err(CliError::usage(format!(
            "-o {}: with {} inputs the output must be a folder, and this is a file",
            out.display(),
            inputs.len()
        )));
    }
    if is_stdio(&inputs[0]) {
        return Err(CliError::usage(
            "an image from stdin has no name to write into a folder; give -o FILE or -o -",
        ));
    }
    let ext = match args.ext.as_deref().map(|e| e.trim_start_matches('.')) {
        // `set_extension` panics on a separator; an extension names no folder.
        Some(e) if e.contains(['/', std::path::MAIN_SEPARATOR]) => {
            return Err(CliError::usage(format!(
                "--ext takes an extension such as png, not a path: {e:?}"
            )));
        }
        Some("") => {
            return Err(CliError::usage("--ext needs an extension such as png"));
        }
        e => e.or(args.out_format.map(OutputFormat::extension)),
    };
    let mut jobs = Vec::new();
    let mut seen: HashMap<PathBuf, &Path> = HashMap::new();
    for input in inputs {
        let Some(name) = input.file_name() else {
            return Err(CliError::usage(format!(
                "input {} has no file name",
                input.display()
            )));
        };
        let mut target = out.join(name);
        if let Some(e) = ext {
            target.set_extension(e);
        }
        if let Some(other) = seen.insert(target.clone(), input) {
            return Err(CliError::usage(format!(
                "inputs {} and {} would both be written to {}",
                other.display(),
                input.display(),
                target.display()
            )));
        }
        jobs.push(Job {
            input: input.clone(),
            output: Some(target),
        });
    }
    Ok(jobs)
}

/// Refuses an output that is one of the inputs (the same file by device
/// and inode: the same path, a link, `..` forms; stdout redirected to an
/// input), and a JSON report on stdout beside an image there.
pub(super) fn check_inputs(args: &Args, jobs: &[Job]) -> Result<(), CliError> {
    let mut inputs = Inputs::default();
    for job in jobs {
        if is_stdio(&job.input) {
            inputs.add_stdin();
        } else {
            inputs.add(&job.input);
        }
    }
    for out in jobs.iter().filter_map(|j| j.output.as_deref()) {
        if is_stdio(out) {
            if args.json {
                return Err(CliError::usage(
                    "--json prints to stdout, where -o - writes the image; \
                     write the image to a file",
                ));
            }
            inputs.check_stdout()?;
        } else {
            inputs.check_output(out)?;
        }
    }
    Ok(())
}

/// Checks the outputs before any work: each output's extension, and (for a
/// single output file) that its folder exists; in folder mode, creates the
/// output folder.
pub(super) fn prepare_outputs(args: &Args, jobs: &[Job], dir_mode: bool) -> Result<(), CliError> {
    // The extension alone is checked now; the sample type once the input is loaded.
    for job in jobs {
        if let Some(out) = &job.output {
            output_format(out, args.out_format, dir_mode)?;
        }
    }
    if !dir_mode {
        // A missing output folder is found now, not after the work.
        if let Some(out) = args.output.as_deref().filter(|o| !is_stdio(o)) {
            check_output_folder(out)?;
        }
    }
    if dir_mode {
        if let Some(dir) = &args.output {
            std::fs::create_dir_all(dir).map_err(|source| CliError::Io {
                path: dir.clone(),
                source,
            })?;
        }
    }
    Ok(())
}
