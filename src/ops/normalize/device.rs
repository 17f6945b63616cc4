//! `normalize` on OpenCL devices. Without the `opencl` feature, [`Dev`] has no
//! values, so `run` cannot be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

#[cfg(feature = "opencl")]
pub(crate) use cl::launch;

/// Normalizes `img` into a `U` image with `spec` on `dev`. Returns the result and the kernels' device time.
#[cfg(feature = "opencl")]
pub(super) fn run<T: Sample, U: Sample>(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    img: &Image<T>,
    k: &Coefficients,
) -> Result<(Image<U>, Duration)> {
    use crate::backend::opencl::DeviceImage;
    let input = DeviceImage::upload(dev, img)?;
    let out = DeviceImage::<U>::new(dev, img.width(), img.height(), img.channels())?;
    let kt = launch(progs, dev, spec, &input, &out, k)?
        .duration()?
        .unwrap_or_default();
    Ok((out.download(dev)?, kt))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run<T: Sample, U: Sample>(
    _: &Programs,
    dev: &Dev,
    _: &VariantSpec,
    _: &Image<T>,
    _: &Coefficients,
) -> Result<(Image<U>, Duration)> {
    match *dev {}
}

#[cfg(feature = "opencl")]
mod cl {
    use super::*;

    /// Runs `spec` on device images of the same shape.
    pub(crate) fn launch<T: Sample, U: Sample>(
        progs: &Programs,
        dev: &Dev,
        spec: &crate::ops::VariantSpec,
        input: &crate::backend::opencl::DeviceImage<T>,
        out: &crate::backend::opencl::DeviceImage<U>,
        k: &Coefficients,
    ) -> Result<crate::backend::opencl::ClEvent> {
        use crate::backend::opencl::Arg;
        let shape = Shape::new(input.width(), input.height(), input.channels(), T::TYPE);
        if (out.width(), out.height(), out.channels())
            != (shape.width, shape.height, shape.channels)
        {
            return Err(Error::arg("normalize output must have the input's shape"));
        }
        let extra = format!(
            "-DTOUT={} -DOUT_FLOAT={}",
            U::TYPE.cl_name(),
            (U::TYPE == SampleType::F32) as u8
        );
        let k2 = progs.kernel(
            dev,
            SPEC.name,
            spec,
            &shape,
            &extra,
            &spec.kernel_name(SPEC.name),
        )?;
        let n = input.pixel_count();
        let items = if spec.name == "x4" { n.div_ceil(4) } else { n };
        dev.launch(
            &k2,
            &[items],
            &[spec.local[0]],
            &[
                Arg::img(input),
                Arg::img(out),
                Arg::int(n)?,
                Arg::F32x4(k.sub),
                Arg::F32x4(k.factor),
            ],
        )
    }
}
