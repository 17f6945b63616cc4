//! `stats`' tuning and bench entry, and the check of a result against the
//! reference within the bounds of the module docs.

use super::reference::Exact;
use super::*;
use crate::image::SampleType;
use crate::ops::tuning::{self, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, OpParams, VariantSpec};

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    /// One read of the pixel (the result is a few numbers).
    fn bytes_per_pixel(&self, sample: usize, channels: usize) -> usize {
        sample * channels
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        _: OpParams,
    ) -> Result<Box<dyn Case>> {
        tuning::boxed_case!(sample, T => StatsCase::<T>::new(w, h, c)?)
    }
}

pub(super) struct StatsCase<T: Sample> {
    pub(super) img: Image<T>,
    pub(super) on_device: OnDevice,
}

impl<T: Sample> StatsCase<T> {
    fn new(w: usize, h: usize, c: usize) -> Result<Self> {
        Ok(StatsCase {
            img: tuning::test_image(w, h, c)?,
            on_device: OnDevice::default(),
        })
    }
}

/// `Err(what)` unless `got` is within the module docs' bounds of `want`
/// for a sum bound of `k * u * sum(|x|)`: min and max exact, every
/// non-finite reference value matched exactly (NaN by NaN).
pub fn check_stats(got: &Stats, want: &Exact, k: f64) -> std::result::Result<(), String> {
    let w = &want.stats;
    if (got.channels, got.count) != (w.channels, w.count) {
        return Err(format!(
            "{} channels of {} samples, the reference {} of {}",
            got.channels, got.count, w.channels, w.count
        ));
    }
    let u = f64::from(f32::EPSILON / 2.0);
    let n = w.count as f64;
    for c in 0..w.channels {
        let a = want.abs_sum[c];
        let dm = (k + 1.0) * u * a / n;
        let e = (k + 4.0) * u * want.shifted_sq[c] / n
            + (2.0 * (w.mean[c] - want.shift[c]).abs() + dm) * dm;
        let std_bound = if w.std[c] > 0.0 {
            e.sqrt().min(e / w.std[c])
        } else {
            e.sqrt()
        };
        let fields = [
            ("sum", got.sum[c], w.sum[c], k * u * a),
            ("mean", got.mean[c], w.mean[c], dm),
            ("std", got.std[c], w.std[c], std_bound),
            ("min", got.min[c], w.min[c], 0.0),
            ("max", got.max[c], w.max[c], 0.0),
        ];
        for (name, g, r, limit) in fields {
            let ok = if r.is_finite() {
                (g - r).abs() <= limit
            } else {
                g == r || (g.is_nan() && r.is_nan())
            };
            if !ok {
                return Err(format!(
                    "channel {c} {name}: {g}, reference {r} (bound {limit:e}, k = {k})"
                ));
            }
        }
    }
    Ok(())
}

impl<T: Sample> Case for StatsCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        )
    }

    /// f64 sums: within 1 u of f32, held to 2.
    fn cpu_tolerance(&self) -> f32 {
        2.0
    }

    fn reference(&self) -> Result<Expected> {
        Ok(Expected::Custom(Box::new(reference::stats(&self.img))))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (s, r) = d.stats_report(&self.img)?;
        Ok((Box::new(s), r))
    }

    /// `tolerance` is the sum's bound in units of `u * sum(|x|)` (see
    /// [`super::variants`]); the other bounds follow from it.
    fn check(
        &self,
        got: &Output,
        want: &Expected,
        tolerance: f32,
    ) -> std::result::Result<(), String> {
        match (got.downcast_ref::<Stats>(), want) {
            (Some(g), Expected::Custom(w)) => match w.downcast_ref::<Exact>() {
                Some(w) => check_stats(g, w, f64::from(tolerance)),
                None => Err(tuning::MISMATCH.into()),
            },
            _ => Err(tuning::MISMATCH.into()),
        }
    }

    fn kernel_runner<'a>(
        &'a self,
        progs: &'a crate::ops::Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>> {
        super::device::kernel_runner(self, progs, dev, spec)
    }

    fn cpu_runner(&self) -> Result<Runner<'_>> {
        Ok(tuning::wall(move || {
            let _ = cpu::stats(&self.img);
            Ok(())
        }))
    }
}
