//! The Gaussian's tuning key fields, and its tuning and bench entry.

use super::*;
use crate::image::SampleType;
use crate::ops::tuning::{self, Ask, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, Programs, VariantSpec};

impl crate::ops::TuneBucket for GaussianParams {
    /// The tuning parameter bucket: the larger sigma falls in `sigma<2`
    /// (where the FIR is cheap and the recursive variants are near their
    /// accuracy limit), `sigma2-8` (both kinds run; the FIR's radius grows
    /// with sigma) or `sigma>=8` (beyond the local-memory FIR's radius),
    /// followed by the border ([`super::policy::BUCKET_SIGMAS`]).
    fn bucket_words(&self) -> (&'static str, &'static str) {
        super::policy::params_bucket_parts(self)
    }
}

/// The tuning and bench entry (see [`crate::ops::tuning`]): one parameter
/// set per sigma asked for (both axes, replicate border).
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    fn params(&self, ask: &Ask<'_>) -> Result<Vec<OpParams>> {
        Ok(ask
            .sigmas
            .iter()
            .map(|&s| OpParams::new(GaussianParams::new(s)))
            .collect())
    }

    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        if let Some(p) = params.get::<GaussianParams>().copied() {
            p.validate()?;
            if p.sigma_x <= 0.0 {
                return Err(Error::arg("gaussian is timed and tuned at a sigma above 0 (sigma 0 is a copy)"));
            }
        }
        Ok(Shape::new(w, h, c, sample).with_params(params))
    }

    fn sigma(&self, params: &OpParams) -> Option<f32> {
        params.get::<GaussianParams>().map(|p| p.sigma_x)
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Box<dyn Case>> {
        let Some(p) = params.get::<GaussianParams>().copied() else {
            return Err(Error::arg("tuning gaussian needs its parameters"));
        };
        tuning::boxed_case!(sample, T => GaussianCase::<T>::new(w, h, c, p)?)
    }
}

pub(super) struct GaussianCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) gauss: GaussianParams,
    pub(super) on_device: OnDevice,
}

impl<T: Sample> GaussianCase<T> {
    fn new(w: usize, h: usize, c: usize, gauss: GaussianParams) -> Result<Self> {
        Ok(GaussianCase {
            img: tuning::test_image(w, h, c)?,
            gauss,
            on_device: OnDevice::default(),
        })
    }

    /// The reference blur as two row passes: rows, then the columns as the
    /// rows of the transposed image. The reference's own column pass reads
    /// with a stride of a whole row per tap, which takes minutes at
    /// 8192x8192; this takes seconds. The f32 intermediate is far below
    /// every tolerance (1e-7 against 1e-5).
    fn row_pass_reference(&self) -> Result<Image<f32>> {
        use crate::ops::transpose::reference::transpose;
        let p = self.gauss;
        let rows = reference::gaussian(&self.img, &GaussianParams { sigma_y: 0.0, ..p })?;
        let cols = reference::gaussian(
            &transpose(&rows)?,
            &GaussianParams {
                sigma_x: p.sigma_y,
                sigma_y: 0.0,
                ..p
            },
        )?;
        transpose(&cols)
    }
}

impl<T: Sample> Case for GaussianCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        )
        .with_params(OpParams::new(self.gauss))
    }

    /// The recursive variants' bound: the CPU path is recursive too.
    fn cpu_tolerance(&self) -> f32 {
        variants::IIR_TOLERANCE
    }

    fn reference(&self) -> Result<Expected> {
        Ok(Expected::Image(
            self.row_pass_reference()?,
            tuning::rounding::<T>(),
        ))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (o, r) = d.gaussian_report(&self.img, &self.gauss)?;
        Ok((Box::new(o), r))
    }

    /// Kernel time on the device ([`super::device::kernel_runner`] says
    /// which passes each input's time includes).
    fn kernel_runner<'a>(
        &'a self,
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>> {
        super::device::kernel_runner(self, progs, dev, spec)
    }

    fn cpu_runner(&self) -> Result<Runner<'_>> {
        Ok(tuning::wall(move || {
            cpu::gaussian(&self.img, &self.gauss).map(drop)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_pass_reference_equals_the_reference() {
        for (w, h, c, sx, sy) in [
            (37, 23, 1, 2.0, 2.0),
            (16, 40, 3, 1.5, 4.0),
            (9, 9, 4, 3.0, 0.5),
        ] {
            let p = GaussianParams {
                sigma_y: sy,
                ..GaussianParams::new(sx)
            };
            let case = GaussianCase::<u16>::new(w, h, c, p).unwrap();
            let fast = case.row_pass_reference().unwrap();
            let slow = reference::gaussian(&case.img, &case.gauss).unwrap();
            for y in 0..h {
                for (a, b) in fast.row(y).iter().zip(slow.row(y)) {
                    assert!((a - b).abs() <= 1e-6 * 65535.0, "{w}x{h}x{c}: {a} vs {b}");
                }
            }
        }
    }
}
