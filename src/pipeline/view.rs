//! Pipelines over borrowed views: [`run_into`] and [`Pipeline::run_into`].

use super::{device, output_type, run_on_host, try_device, Input, Op, Pipeline, StageOutcome};
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::image::DynViewMut;

/// Runs the stages on `input` and writes the result into `output`, which
/// must have the result's sample type (checked before anything runs) and
/// shape (checked when the result exists); either mismatch is
/// [`crate::image::ViewError::Mismatch`] inside [`Error::View`], and
/// `output` is then left as it was. Returns what each stage did.
///
/// As [`super::run_outcomes`], the stages chain on the device when the
/// engine has one, else run on the host path. What moves where:
/// - on an OpenCL device, a view input is uploaded straight from its rows
///   and the result is read straight into the output view's rows: one
///   `clEnqueueWriteBufferRect` / `clEnqueueReadBufferRect` each when the
///   rows are padded, a plain write / read when they are packed; no host
///   copy is made (except for a first stage that reads raw frames, which
///   reads a packed copy of a view);
/// - on the host path (the CPU backend, or after a device chain failed)
///   the stages work on owned images, so a view input is copied once into
///   an [`crate::Image`], and the result's rows are copied once into the
///   output view.
///
/// Either way the output's padding is never written.
pub fn run_into(
    engine: &Engine,
    stages: &[Op],
    input: Input<'_>,
    output: &mut DynViewMut<'_>,
) -> Result<Vec<StageOutcome>> {
    let (_, _, _, ty) = input.shape();
    let want = output_type(stages, ty);
    if output.sample_type() != want {
        // The shape is not known before the stages run; the type is.
        return Err(crate::image::ViewError::Mismatch {
            want: format!("{want}"),
            got: format!("{}", output.sample_type()),
        }
        .into());
    }
    let sink = |e: &Engine, dev: &crate::backend::Dev, w: &crate::ops::work::Work| {
        match device::download_into(e, dev, w, output) {
            // A wrong output is the caller's, not the device's: no retry.
            Err(e @ Error::View(_)) => Ok(Err(e)),
            r => r.map(Ok),
        }
    };
    if let Some((r, outcomes)) = try_device(engine, stages, input, sink)? {
        return r.map(|()| outcomes);
    }
    let (img, outcomes) = run_on_host(engine, stages, input)?;
    output.copy_from(&img)?;
    Ok(outcomes)
}

impl Pipeline {
    /// Runs on `input` (a view over caller memory, an image or a raw
    /// frame) and writes the result into the `output` view (see
    /// [`run_into`]).
    ///
    /// ```
    /// use clfilter::{DynViewMut, Engine, ImageView, ImageViewMut, Pipeline};
    ///
    /// // An application's 5x3 RGB frame, rows padded to 16 samples.
    /// let frame: Vec<u8> = (0..16 * 2 + 15).map(|i| (i * 7 % 251) as u8).collect();
    /// let input = ImageView::with_stride(&frame, 5, 3, 3, 16).unwrap();
    ///
    /// // The result goes into another padded buffer; padding stays 0xAA.
    /// let mut out = vec![0xAAu8; 5 * 16];
    /// let view = ImageViewMut::with_stride(&mut out, 3, 5, 3, 16).unwrap();
    ///
    /// let p: Pipeline = "transpose,gaussian=sigma=1".parse().unwrap();
    /// p.run_into(&Engine::cpu(), input, &mut DynViewMut::from(view)).unwrap();
    /// assert_eq!(out[15], 0xAA);
    ///
    /// // A 5x3 output for a 3x5 result is refused and left as it was.
    /// let mut wrong = vec![0u8; 5 * 3 * 3];
    /// let wrong_view = ImageViewMut::new(&mut wrong, 5, 3, 3).unwrap();
    /// let err = p.run_into(&Engine::cpu(), input, &mut wrong_view.into()).unwrap_err();
    /// assert!(matches!(err, clfilter::Error::View(_)));
    /// assert!(wrong.iter().all(|&v| v == 0));
    /// ```
    pub fn run_into<'a>(
        &self,
        engine: &Engine,
        input: impl Into<Input<'a>>,
        output: &mut DynViewMut<'_>,
    ) -> Result<Vec<StageOutcome>> {
        run_into(engine, self.ops(), input.into(), output)
    }
}
