//! The live state behind the window, without any GL: the frames, the
//! pipeline run on each, what the keys changed, the rate and the title line.

use std::collections::VecDeque;
use std::fmt;
use std::time::{Duration, Instant};

use clfilter::backend::opencl::gl::InteropMode;
use clfilter::image::display::DisplayFrame;
use clfilter::pipeline::{self, Op, StageOutcome};
use clfilter::Engine;

use super::controls::Controls;
use super::source::{Input, Source};
use crate::error::CliError;

/// How the pipeline's result reaches the window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Interop {
    /// Through host memory: the device converts the result to RGBA8
    /// (`clfilter::pipeline::run_display`), it is downloaded and uploaded
    /// into the window's texture through a pixel-buffer object. It works
    /// with every OpenCL device and the CPU backend. The shared mode, in
    /// which the device writes the texture itself, is the library's
    /// `Pipeline::run_into_gl` (docs/DESKTOP.md, examples/desktop_app.rs).
    Copy,
}

impl fmt::Display for Interop {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Interop::Copy => "copy",
        })
    }
}

/// Frames over which the rate is averaged.
const RATE_WINDOW: usize = 30;

/// The frames, the pipeline and what is shown.
pub struct Live {
    engine: Engine,
    controls: Controls,
    source: Source,
    /// The input name for the title.
    name: String,
    input: Input,
    /// The pipeline's result as the window shows it.
    output: DisplayFrame,
    /// The input as the window shows it, made when first shown.
    original_frame: Option<DisplayFrame>,
    /// The variant each stage ran last time.
    ran: Vec<String>,
    /// Show the input instead of the pipeline's result.
    original: bool,
    /// A new image waits to be uploaded.
    fresh: bool,
    /// Frames run through the pipeline.
    count: usize,
    times: VecDeque<Instant>,
    interop: Interop,
    /// The GL renderer and the driver's answer when the window asked for
    /// a context shared with GL (rendering copies either way).
    gl: Option<(String, InteropMode)>,
}

impl Live {
    /// Runs the first frame (waiting for a stream's), so that errors in the
    /// pipeline or the input come before the window opens.
    pub fn start(
        engine: Engine,
        ops: Vec<Op>,
        mut source: Source,
        name: String,
    ) -> Result<Self, CliError> {
        let input = loop {
            if let Some(input) = source.next(Duration::from_millis(100))? {
                break input;
            }
            if source.ended() {
                return Err(CliError::Failed(format!(
                    "{name}: the stream holds no frame"
                )));
            }
        };
        let (output, outcomes) = run(&engine, &ops, &input).map_err(|e| e.context(name.clone()))?;
        let mut live = Live {
            engine,
            controls: Controls::new(ops),
            source,
            name,
            input,
            output,
            original_frame: None,
            ran: Vec::new(),
            original: false,
            fresh: true,
            count: 0,
            times: VecDeque::new(),
            interop: Interop::Copy,
            gl: None,
        };
        live.shown(outcomes);
        Ok(live)
    }

    /// Takes the next frame, if one is there within `wait` (a still image's
    /// always is), and runs the pipeline on it.
    pub fn poll(&mut self, wait: Duration) -> Result<(), CliError> {
        if let Some(input) = self.source.next(wait)? {
            let (output, outcomes) = run(&self.engine, &self.controls.ops, &input)?;
            self.input = input;
            self.original_frame = None;
            self.output = output;
            self.shown(outcomes);
        }
        Ok(())
    }

    /// Records a frame just run.
    fn shown(&mut self, outcomes: Vec<StageOutcome>) {
        self.ran = outcomes
            .iter()
            .map(|o| {
                o.record
                    .reports
                    .last()
                    .map_or("-", |r| r.variant.as_str())
                    .to_string()
            })
            .collect();
        self.fresh = true;
        self.count += 1;
        self.times.push_back(Instant::now());
        if self.times.len() > RATE_WINDOW {
            self.times.pop_front();
        }
    }

    /// Frames run so far.
    pub fn count(&self) -> usize {
        self.count
    }

    /// Whether a stream has ended (a still image never does).
    pub fn ended(&self) -> bool {
        self.source.ended()
    }

    /// Whether there is a new image to upload (and forgets it).
    pub fn take_fresh(&mut self) -> bool {
        std::mem::take(&mut self.fresh)
    }

    /// What the window shows: RGBA8 rows from the top.
    pub fn shown_frame(&mut self) -> Result<&DisplayFrame, CliError> {
        if !self.original {
            return Ok(&self.output);
        }
        if self.original_frame.is_none() {
            self.original_frame = Some(self.input.original()?);
        }
        Ok(self.original_frame.as_ref().expect("made above"))
    }

    /// Space: the input or the pipeline's result.
    pub fn flip(&mut self) {
        self.original = !self.original;
        self.fresh = true;
    }

    /// Tab: the next stage.
    pub fn select_next(&mut self) {
        self.controls.select_next();
    }

    /// Up/Down: the selected stage's main parameter times `factor`.
    pub fn scale(&mut self, factor: f64) {
        match self.controls.scaled(factor) {
            Ok(Some(ops)) => {
                if let Err(e) = self.try_ops(ops) {
                    log::warn!("{}", e.report());
                }
            }
            Ok(None) => log::warn!("this stage has no numeric option to change"),
            Err(e) => log::warn!("{e}"),
        }
    }

    /// V: the selected stage's next variant that can run this frame.
    pub fn next_variant(&mut self) {
        let Some(stage) = self.controls.stage() else {
            return;
        };
        let mut variant = stage.variant.clone();
        for _ in 0..self.controls.variants().len() {
            variant = self.controls.next_variant(&variant);
            let tried = self
                .controls
                .with_variant(variant.clone())
                .map_err(CliError::from)
                .and_then(|ops| self.try_ops(ops));
            match tried {
                Ok(()) => return,
                Err(e) => log::warn!("skipping variant: {}", e.report()),
            }
        }
    }

    /// Runs the current frame through `ops`; on success they replace the
    /// pipeline, otherwise it stays as it was.
    fn try_ops(&mut self, ops: Vec<Op>) -> Result<(), CliError> {
        let (output, outcomes) = run(&self.engine, &ops, &self.input)?;
        self.controls.ops = ops;
        self.output = output;
        self.shown(outcomes);
        Ok(())
    }

    /// Records the GL renderer and the driver's answer to a shared context.
    pub fn set_gl(&mut self, renderer: String, answer: InteropMode) {
        self.gl = Some((renderer, answer));
    }

    /// The device's name (`cpu` on the CPU backend).
    fn device(&self) -> String {
        self.engine
            .backend()
            .device_info()
            .map_or_else(|| "cpu".to_string(), |d| d.name.clone())
    }

    /// The line `--frames` prints at exit: `frames` shown in `secs` after
    /// the window opened, the device, the GL renderer and the interop mode
    /// with the driver's answer to a shared context.
    pub fn summary(&self, frames: usize, secs: f64) -> String {
        let fps = if secs > 0.0 {
            frames as f64 / secs
        } else {
            0.0
        };
        let (renderer, answer) = match &self.gl {
            Some((r, InteropMode::Shared)) => (
                r.as_str(),
                "offered by the driver; the view copies, Pipeline::run_into_gl shares".to_string(),
            ),
            Some((r, InteropMode::Copy { reason })) => (r.as_str(), reason.clone()),
            None => ("-", "not asked".to_string()),
        };
        format!(
            "view: {frames} frames in {secs:.3} s ({fps:.1} fps), device {}, GL {renderer}, \
             interop {} (shared context: {answer})",
            self.device(),
            self.interop
        )
    }

    /// The title line: input, pipeline, selected stage and its variant,
    /// rate, device, interop mode and what is shown.
    pub fn title(&self) -> String {
        let fps = match (self.times.front(), self.times.back()) {
            (Some(a), Some(b)) if self.times.len() > 1 && b > a => {
                (self.times.len() - 1) as f64 / (*b - *a).as_secs_f64()
            }
            _ => 0.0,
        };
        let stage = match self.controls.stage() {
            Some(op) => {
                let i = self.controls.selected;
                let forced = op.variant.as_deref().unwrap_or("auto");
                let ran = self.ran.get(i).map_or("-", String::as_str);
                format!(
                    " | stage {}/{} {}: variant {forced} (ran {ran})",
                    i + 1,
                    self.controls.ops.len(),
                    op.name()
                )
            }
            None => String::new(),
        };
        let spec = match pipeline::to_spec(&self.controls.ops) {
            s if s.is_empty() => "no filter".to_string(),
            s => s,
        };
        let device = self.device();
        let shows = if self.original {
            "original"
        } else {
            "filtered"
        };
        format!(
            "{} | {spec}{stage} | {fps:.1} fps | {device} | interop {} | {shows}",
            self.name, self.interop
        )
    }
}

/// Runs `ops` on `input`, the error naming the pipeline.
fn run(
    engine: &Engine,
    ops: &[Op],
    input: &Input,
) -> Result<(DisplayFrame, Vec<StageOutcome>), CliError> {
    input
        .run(engine, ops)
        .map_err(|e| CliError::from(e).context(format!("pipeline '{}'", pipeline::to_spec(ops))))
}
