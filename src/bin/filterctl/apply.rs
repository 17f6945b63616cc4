//! `filterctl apply -f SPEC IN... [-o OUT]`: runs a pipeline on image files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use clfilter::pipeline::{self, Op, OpKind};
use clfilter::{DynImage, Engine, RunReport, SampleType};
use serde::Serialize;

use crate::error::CliError;
use crate::util::{check_extension, check_output, describe, ms, report_line};
use crate::Global;

/// Options of `filterctl apply`.
#[derive(Debug, clap::Args)]
#[command(
    after_help = "Spec grammar: name=key=value:key=value,name2,...  Stages: \
    transpose; minmax; normalize=sub=N:factor=N:out=u8|u16|f32. Every stage takes \
    variant=NAME. Example: -f 'normalize=out=f32,transpose'"
)]
pub struct Args {
    /// The pipeline, for example 'transpose,normalize=out=u8,minmax'.
    #[arg(short = 'f', long = "filter", value_name = "SPEC")]
    spec: String,

    /// Input image files (PNG, TIFF, PNM, JPEG).
    #[arg(value_name = "IN", required = true)]
    inputs: Vec<PathBuf>,

    /// Output file; with several inputs, or when it is an existing folder,
    /// the folder that receives one output per input, named as the input.
    /// Not needed when the spec ends with minmax.
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    output: Option<PathBuf>,

    /// Extension for outputs written into a folder (for example tif for f32
    /// results, png for JPEG inputs); default: the input's.
    #[arg(long, value_name = "EXT")]
    ext: Option<String>,

    /// Print each stage's variant, device and time to stderr.
    #[arg(long)]
    report: bool,

    /// Print a JSON report (stages, variants, times, minmax results) to stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct JsonMinMax {
    min: Vec<f32>,
    max: Vec<f32>,
}

#[derive(Serialize)]
struct JsonStage {
    stage: usize,
    spec: String,
    calls: Vec<RunReport>,
    minmax: Option<JsonMinMax>,
    #[serde(serialize_with = "clfilter::ops::ser_ms")]
    ms: Duration,
}

#[derive(Serialize)]
struct JsonFile {
    input: PathBuf,
    output: Option<PathBuf>,
    width: usize,
    height: usize,
    channels: usize,
    sample: SampleType,
    output_sample: SampleType,
    #[serde(serialize_with = "clfilter::ops::ser_ms")]
    load_ms: Duration,
    #[serde(serialize_with = "clfilter::ops::ser_opt_ms")]
    save_ms: Option<Duration>,
    stages: Vec<JsonStage>,
}

#[derive(Serialize)]
struct JsonReport {
    backend: String,
    spec: String,
    files: Vec<JsonFile>,
}

/// One input and where its result goes.
struct Job {
    input: PathBuf,
    output: Option<PathBuf>,
}

/// Where each input's result goes, checked before any work: an output for
/// every input unless the spec ends with minmax, no two outputs the same, no
/// output that is an input.
fn plan(args: &Args, ops: &[Op]) -> Result<Vec<Job>, CliError> {
    let ends_with_minmax = matches!(ops.last().map(|o| &o.kind), Some(OpKind::MinMax));
    let Some(out) = &args.output else {
        if !ends_with_minmax {
            return Err(CliError::usage(
                "-o OUT is required: the last stage produces an image \
                 (only a spec that ends with minmax needs no output)",
            ));
        }
        if args.ext.is_some() {
            return Err(CliError::usage("--ext needs -o DIR"));
        }
        return Ok(args
            .inputs
            .iter()
            .map(|i| Job {
                input: i.clone(),
                output: None,
            })
            .collect());
    };
    let into_dir = args.inputs.len() > 1 || out.is_dir();
    if !into_dir {
        if args.ext.is_some() {
            return Err(CliError::usage(
                "--ext applies when -o is a folder; give the output file's extension instead",
            ));
        }
        return Ok(vec![Job {
            input: args.inputs[0].clone(),
            output: Some(out.clone()),
        }]);
    }
    if out.exists() && !out.is_dir() {
        return Err(CliError::usage(format!(
            "-o {}: with {} inputs the output must be a folder, and this is a file",
            out.display(),
            args.inputs.len()
        )));
    }
    let ext = args
        .ext
        .as_deref()
        .map(|e| e.trim_start_matches('.'))
        .filter(|e| !e.is_empty());
    let mut jobs = Vec::new();
    let mut seen: HashMap<PathBuf, &Path> = HashMap::new();
    for input in &args.inputs {
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

/// Refuses to overwrite an input with an output.
fn check_not_input(jobs: &[Job]) -> Result<(), CliError> {
    let canon = |p: &Path| std::fs::canonicalize(p).ok();
    let inputs: Vec<(PathBuf, &Path)> = jobs
        .iter()
        .filter_map(|j| canon(&j.input).map(|c| (c, j.input.as_path())))
        .collect();
    for job in jobs {
        let Some(out) = job.output.as_deref().and_then(canon) else {
            continue;
        };
        if let Some((_, input)) = inputs.iter().find(|(c, _)| *c == out) {
            return Err(CliError::usage(format!(
                "output {} is the input {}; refusing to overwrite it",
                job.output.as_deref().unwrap_or(&out).display(),
                input.display()
            )));
        }
    }
    Ok(())
}

/// Runs the stages on one image, printing report lines (when asked) and
/// minmax results as they come.
fn run_one(
    engine: &Engine,
    ops: &[Op],
    img: DynImage,
    args: &Args,
    prefix: &str,
) -> Result<(DynImage, Vec<JsonStage>), CliError> {
    let mut img = img;
    let mut stages = Vec::new();
    for (i, op) in ops.iter().enumerate() {
        let start = Instant::now();
        let (next, outcome) = pipeline::run_stage(engine, op, img)
            .map_err(|e| CliError::from(e).context(format!("stage {} {op}", i + 1)))?;
        img = next;
        if args.report && !args.json {
            for r in &outcome.reports {
                note!("{prefix}{}", report_line(Some(i + 1), op.name(), r, None));
            }
        }
        if !args.json {
            for line in &outcome.lines {
                out!("{prefix}{line}")?;
            }
        }
        stages.push(JsonStage {
            stage: i + 1,
            spec: op.to_string(),
            calls: outcome.reports,
            minmax: outcome.minmax.map(|m| JsonMinMax {
                min: m.min[..m.channels].to_vec(),
                max: m.max[..m.channels].to_vec(),
            }),
            ms: start.elapsed(),
        });
    }
    Ok((img, stages))
}

/// Runs `filterctl apply`.
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    let ops = pipeline::parse(&args.spec)?;
    let jobs = plan(&args, &ops)?;
    check_not_input(&jobs)?;
    let dir_mode = jobs.len() > 1 || args.output.as_deref().is_some_and(Path::is_dir);
    // The extension alone is checked now; the sample type once the input is loaded.
    for job in &jobs {
        if let Some(out) = &job.output {
            check_extension(out, dir_mode)?;
        }
    }
    if !dir_mode {
        // A missing output folder is found now, not after the work.
        if let Some(parent) = args.output.as_deref().and_then(Path::parent) {
            if !parent.as_os_str().is_empty() && !parent.is_dir() {
                return Err(CliError::Io {
                    path: parent.to_path_buf(),
                    source: std::io::Error::new(
                        std::io::ErrorKind::NotFound,
                        "output folder does not exist",
                    ),
                });
            }
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
    let engine = global.engine()?;
    let mut files = Vec::new();
    for job in &jobs {
        let prefix = if jobs.len() > 1 {
            format!("{}: ", job.input.display())
        } else {
            String::new()
        };
        let t = Instant::now();
        let img = clfilter::image::load(&job.input)?;
        let load = t.elapsed();
        let (w, h, c) = img.shape();
        let sample = img.sample_type();
        let out_sample = pipeline::output_type(&ops, sample);
        if let Some(out) = &job.output {
            check_output(out, out_sample, c, dir_mode)
                .map_err(|e| e.context(job.input.display().to_string()))?;
        }
        if args.report && !args.json {
            note!(
                "loaded {} ({}) in {}",
                job.input.display(),
                describe(&img),
                ms(load)
            );
        }
        let (result, stages) = run_one(&engine, &ops, img, &args, &prefix)
            .map_err(|e| e.context(job.input.display().to_string()))?;
        let mut save_ms = None;
        if let Some(out) = &job.output {
            let t = Instant::now();
            clfilter::image::save(&result, out)?;
            save_ms = Some(t.elapsed());
            if args.report && !args.json {
                note!(
                    "saved {} ({}) in {}",
                    out.display(),
                    describe(&result),
                    ms(t.elapsed())
                );
            }
        }
        files.push(JsonFile {
            input: job.input.clone(),
            output: job.output.clone(),
            width: w,
            height: h,
            channels: c,
            sample,
            output_sample: out_sample,
            load_ms: load,
            save_ms,
            stages,
        });
    }
    if args.json {
        let report = JsonReport {
            backend: engine.backend().describe(),
            spec: pipeline::to_spec(&ops),
            files,
        };
        out!("{}", serde_json::to_string_pretty(&report)?)?;
    }
    Ok(())
}
