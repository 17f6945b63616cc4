//! Pipelines into display pixels ([`crate::image::display`]): RGBA8 or
//! RGBA32F for a GL texture, converted where the pipeline ran. On a device
//! the last working image becomes display pixels there, so only 4 (or 16)
//! bytes a pixel come back (the copy interop), or none at all when the
//! device writes a shared GL texture (feature `gl`).

use super::{device, run_on_host, try_device, Input, Op, Pipeline, StageOutcome};
use crate::engine::Engine;
use crate::error::Result;
use crate::image::display::{to_display, DisplayFormat, DisplayFrame};

/// [`Pipeline::run_display`] for a list of stages.
pub fn run_display(
    engine: &Engine,
    stages: &[Op],
    input: Input<'_>,
    format: DisplayFormat,
) -> Result<(DisplayFrame, Vec<StageOutcome>)> {
    let sink = |e: &Engine, dev: &_, w: &_| device::display(e, dev, w, format);
    if let Some(r) = try_device(engine, stages, input, sink)? {
        return Ok(r);
    }
    let (img, outcomes) = run_on_host(engine, stages, input)?;
    Ok((to_display(&img, format)?, outcomes))
}

impl Pipeline {
    /// Runs on `input` and returns the result as display pixels, first row
    /// at the top, for the application to upload into a GL texture (the
    /// copy interop; a pixel-buffer object makes the upload asynchronous).
    /// On a device the conversion runs there; if the device chain fails,
    /// the host path runs from the untouched input, as in [`Pipeline::run`].
    ///
    /// ```
    /// use clfilter::image::display::{DisplayFormat, DisplayFrame};
    /// use clfilter::pipeline::Pipeline;
    /// use clfilter::{DynImage, Engine, Image};
    ///
    /// let p: Pipeline = "gaussian=sigma=1.5".parse().unwrap();
    /// let img: DynImage = Image::<u16>::from_fn(40, 30, 1, |x, _, _| (x * 1000) as u16)
    ///     .unwrap()
    ///     .into();
    /// let (frame, _) = p.run_display(&Engine::cpu(), (&img).into(), DisplayFormat::Rgba8).unwrap();
    /// let DisplayFrame::Rgba8(rgba) = frame else { unreachable!() };
    /// assert_eq!((rgba.width(), rgba.height(), rgba.channels()), (40, 30, 4));
    /// assert_eq!(rgba.get(5, 5, 3), 255); // gray comes out opaque
    /// ```
    pub fn run_display(
        &self,
        engine: &Engine,
        input: Input<'_>,
        format: DisplayFormat,
    ) -> Result<(DisplayFrame, Vec<StageOutcome>)> {
        run_display(engine, &self.ops, input, format)
    }

    /// Runs on `input` and writes the result into a GL texture that the
    /// engine's device shares ([`crate::backend::opencl::gl::share_current_gl`],
    /// then [`crate::backend::opencl::ClDevice::gl_texture`]): the texture's
    /// format (RGBA8 or RGBA32F) picks the conversion, which runs on the
    /// device, and the copy acquires and releases the texture around it and
    /// finishes before returning, after which GL may draw it. If the device
    /// chain fails, the host path runs and its pixels are uploaded into the
    /// texture, so the frame is still shown (the reason is logged). The
    /// texture must have the size of the pipeline's output.
    #[cfg(feature = "gl")]
    pub fn run_into_gl(
        &self,
        engine: &Engine,
        input: Input<'_>,
        texture: &crate::backend::opencl::gl::GlTexture,
    ) -> Result<Vec<StageOutcome>> {
        use crate::backend::opencl::DeviceImage;
        let dev = engine.backend().device().ok_or_else(|| {
            crate::error::Error::arg(
                "writing a GL texture needs an engine on the OpenCL device that shares it",
            )
        })?;
        let format = texture.format();
        let sink = |e: &Engine, dev: &crate::backend::Dev, w: &_| match device::display_on_device(
            e, dev, w, format,
        )? {
            device::DeviceDisplay::Rgba8(i) => dev.copy_to_gl_texture(&i, texture),
            device::DeviceDisplay::Rgba32F(i) => dev.copy_to_gl_texture(&i, texture),
        };
        if let Some((_, outcomes)) = try_device(engine, &self.ops, input, sink)? {
            return Ok(outcomes);
        }
        let (img, outcomes) = run_on_host(engine, &self.ops, input)?;
        match to_display(&img, format)? {
            DisplayFrame::Rgba8(i) => {
                dev.copy_to_gl_texture(&DeviceImage::upload(dev, &i)?, texture)
            }
            DisplayFrame::Rgba32F(i) => {
                dev.copy_to_gl_texture(&DeviceImage::upload(dev, &i)?, texture)
            }
        }?;
        Ok(outcomes)
    }
}
