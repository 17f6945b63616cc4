//! `filterctl demo`: the main operations on the built-in photo (or `--input`),
//! with the device, variant and time of every stage, and a round-trip check.
//!
//! The demo is a table of [`Step`]s, each a pipeline spec run on the photo or
//! on an earlier step's result. A new operation joins the demo with one more
//! entry in [`STEPS`].

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Instant;

use clfilter::{pipeline, DynImage, Engine, Image};

use crate::error::CliError;
use crate::util::{describe, difference, file_name_for, ms, report_line, short_backend};
use crate::Global;

/// The built-in photo: 600x400 RGB, 8 bits (CC0).
const PHOTO: &[u8] = include_bytes!("../../../examples/data/coffee.png");

/// Options of `filterctl demo`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Folder for the results (created if missing).
    #[arg(long, value_name = "DIR", default_value = "filterctl-demo")]
    out: PathBuf,

    /// Use this image instead of the built-in photo.
    #[arg(long, value_name = "FILE")]
    input: Option<PathBuf>,
}

/// What a step checks about its result.
enum Check {
    /// The result must equal this earlier image, sample for sample.
    Equals(&'static str),
}

/// One demo step: a spec run on `from` (`input` or an earlier step's name).
struct Step {
    /// The result's name (and file name without extension).
    name: &'static str,
    /// What it shows.
    about: &'static str,
    /// The image it starts from.
    from: &'static str,
    /// The pipeline.
    spec: &'static str,
    /// Whether to write the result (`name.png`, `name.tif` for f32).
    save: bool,
    /// A check on the result.
    check: Option<Check>,
}

/// The demo. Later operations (demosaic) add entries here.
const STEPS: &[Step] = &[
    Step {
        name: "blurred",
        about: "Gaussian blur, sigma 2 (recursive, exact replicate borders)",
        from: "input",
        spec: "gaussian=sigma=2",
        save: true,
        check: None,
    },
    Step {
        name: "blurred-heavy",
        about: "Gaussian blur, sigma 16: same cost as sigma 2",
        from: "input",
        spec: "gaussian=sigma=16",
        save: true,
        check: None,
    },
    Step {
        name: "minmax",
        about: "per-channel range of the photo",
        from: "input",
        spec: "minmax",
        save: false,
        check: None,
    },
    Step {
        name: "normalized-f32",
        about: "stretch min..max to 0..1 as f32",
        from: "input",
        spec: "normalize=out=f32",
        save: true,
        check: None,
    },
    Step {
        name: "normalized",
        about: "and back to u8, stretched to 0..255",
        from: "normalized-f32",
        spec: "normalize=out=u8",
        save: true,
        check: None,
    },
    Step {
        name: "transposed",
        about: "rows and columns swapped",
        from: "input",
        spec: "transpose",
        save: true,
        check: None,
    },
    Step {
        name: "transposed-back",
        about: "transposed again: must equal the input",
        from: "transposed",
        spec: "transpose",
        save: false,
        check: Some(Check::Equals("input")),
    },
];

/// Decodes the built-in photo as an RGB u8 image.
fn builtin_photo() -> Result<Image<u8>, CliError> {
    let decoded = image::load_from_memory(PHOTO)
        .map_err(|e| CliError::Failed(format!("decoding the built-in photo: {e}")))?
        .to_rgb8();
    let (w, h) = (decoded.width() as usize, decoded.height() as usize);
    Ok(Image::from_vec(w, h, 3, decoded.into_raw())?)
}

fn save(img: &DynImage, dir: &std::path::Path, stem: &str) -> Result<PathBuf, CliError> {
    let path = dir.join(file_name_for(stem, img.sample_type()));
    clfilter::image::save(img, &path)?;
    Ok(path)
}

/// Program build statistics, on OpenCL backends.
fn build_stats(engine: &Engine) -> Option<String> {
    #[cfg(feature = "opencl")]
    if let clfilter::Backend::OpenCl(dev) = engine.backend() {
        let s = dev.programs().stats();
        return Some(format!(
            "kernel programs: {} built from source, {} loaded from the disk cache{}",
            s.built_from_source,
            s.loaded_from_binary,
            match dev.programs().dir() {
                Some(d) => format!(" ({})", d.display()),
                None => " (disk cache off)".into(),
            }
        ));
    }
    let _ = engine;
    None
}

/// Runs `filterctl demo`.
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    let start = Instant::now();
    let (input, source): (DynImage, String) = match &args.input {
        Some(p) => (clfilter::image::load(p)?, p.display().to_string()),
        None => (builtin_photo()?.into(), "coffee.png (built in, CC0)".into()),
    };
    if args.out.exists() && !args.out.is_dir() {
        return Err(CliError::usage(format!(
            "--out {}: this is a file; the demo writes several images into a folder",
            args.out.display()
        )));
    }
    std::fs::create_dir_all(&args.out).map_err(|source| CliError::Io {
        path: args.out.clone(),
        source,
    })?;
    let engine = global.engine()?;
    let full = engine.backend().describe();
    let short = format!("[{}]", short_backend(&engine));
    out!("filterctl demo: {source}, {}", describe(&input))?;
    out!("backend {short}: {full}")?;
    let path = save(&input, &args.out, "input")?;
    out!("wrote {}", path.display())?;

    let mut images: HashMap<&str, DynImage> = HashMap::new();
    images.insert("input", input);
    let mut failed = Vec::new();
    for (i, step) in STEPS.iter().enumerate() {
        let ops = pipeline::parse(step.spec)?;
        let from = images.get(step.from).cloned().ok_or_else(|| {
            CliError::Failed(format!(
                "demo step {} reads '{}', which no earlier step made",
                step.name, step.from
            ))
        })?;
        out!(
            "[{}/{}] {}: {} (spec '{}' on {})",
            i + 1,
            STEPS.len(),
            step.name,
            step.about,
            step.spec,
            step.from
        )?;
        let (result, outcomes) = pipeline::run_stages(&engine, &ops, from)
            .map_err(|e| CliError::from(e).context(format!("demo step {}", step.name)))?;
        for (k, o) in outcomes.iter().enumerate() {
            for r in &o.reports {
                // Every step here is one stage, so the stage number is left out.
                let stage = (outcomes.len() > 1).then_some(k + 1);
                out!(
                    "      {}",
                    report_line(stage, o.op.name(), r, Some((&full, &short)))
                )?;
            }
            for line in &o.lines {
                out!("      {line}")?;
            }
        }
        if step.save {
            let path = save(&result, &args.out, step.name)?;
            out!("      wrote {} ({})", path.display(), describe(&result))?;
        }
        match &step.check {
            Some(Check::Equals(other)) => {
                let expected = &images[other];
                match difference(&result, expected) {
                    None => out!(
                        "      check: {} == {}: ok ({})",
                        step.name,
                        other,
                        describe(&result)
                    )?,
                    Some(d) => {
                        out!("      check: {} == {}: FAILED: {d}", step.name, other)?;
                        failed.push(format!("{} differs from {other}: {d}", step.name));
                    }
                }
            }
            None => {}
        }
        images.insert(step.name, result);
    }
    if let Some(stats) = build_stats(&engine) {
        out!("{stats}")?;
    }
    out!(
        "done in {} (outputs in {})",
        ms(start.elapsed()),
        args.out.display()
    )?;
    if !failed.is_empty() {
        return Err(CliError::Failed(format!(
            "demo check failed: {}",
            failed.join("; ")
        )));
    }
    Ok(())
}
