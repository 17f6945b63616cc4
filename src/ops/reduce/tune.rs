//! `reduce`'s tuning and bench entry: one parameter set per axis and
//! reduction.

use super::reference::Exact;
use super::variants::U;
use super::*;
use crate::image::SampleType;
use crate::ops::tuning::{self, Case, Expected, Output, Runner, Tunable};
use crate::ops::{Dispatch, OpParams, VariantSpec};

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    /// Every axis and reduction; a method `x` or `y` keeps one axis.
    fn params(&self, ask: &tuning::Ask<'_>) -> Result<Vec<OpParams>> {
        let axes = match ask.method.map(Axis::parse) {
            Some(Ok(axis)) => vec![axis],
            // No method, or another operation's (`filterctl bench` passes
            // its --method, a Bayer method by default, to every operation).
            _ => vec![Axis::X, Axis::Y],
        };
        Ok(axes
            .into_iter()
            .flat_map(|axis| {
                Reduction::ALL
                    .into_iter()
                    .map(move |op| OpParams::new(ReduceParams { axis, op }))
            })
            .collect())
    }

    /// One read of the pixel (the output is a line).
    fn bytes_per_pixel(&self, sample: usize, channels: usize) -> usize {
        sample * channels
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Box<dyn Case>> {
        let p = *params
            .get::<ReduceParams>()
            .ok_or_else(|| Error::arg("a reduce case needs reduce parameters"))?;
        tuning::boxed_case!(sample, T => ReduceCase::<T>::new(w, h, c, p)?)
    }
}

/// The input and its parameters.
pub(super) type ReduceCase<T> = tuning::ImageCase<T, ReduceParams>;

/// `Err(where)` unless `got` (the output image) is within `k * u * sum(|x|)`
/// of `want` for sums (plus the division's 3u for means, over the count),
/// and equal for min and max; non-finite references must be matched
/// exactly (NaN by NaN).
pub fn check_reduced(
    got: &Image<f32>,
    want: &Exact,
    op: Reduction,
    k: f32,
) -> std::result::Result<(), String> {
    let values: Vec<f32> = got.rows().flat_map(|r| r.iter().copied()).collect();
    if values.len() != want.value.len() || got.channels() != want.channels {
        return Err(format!(
            "output has {} values in {} channels, the reference {} in {}",
            values.len(),
            got.channels(),
            want.value.len(),
            want.channels
        ));
    }
    let u = f64::from(U);
    for (i, (&g, (&w, &abs))) in values
        .iter()
        .zip(want.value.iter().zip(&want.abs_sum))
        .enumerate()
    {
        let g = f64::from(g);
        let limit = match op {
            Reduction::Sum => f64::from(k) * u * abs,
            Reduction::Mean => (f64::from(k) + 3.0) * u * abs / want.count as f64,
            Reduction::Min | Reduction::Max => 0.0,
        };
        let ok = if w.is_finite() {
            (g - w).abs() <= limit
        } else {
            g == w || (g.is_nan() && w.is_nan())
        };
        if !ok {
            return Err(format!(
                "output {} channel {}: {g}, reference {w} (bound {limit:e} = {k} u sum|x|)",
                i / want.channels,
                i % want.channels
            ));
        }
    }
    Ok(())
}

impl<T: Sample> Case for ReduceCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        )
        .with_params(OpParams::new(self.params))
    }

    /// f64 sums rounded once to f32: within 1 u, held to 2.
    fn cpu_tolerance(&self) -> f32 {
        2.0
    }

    fn reference(&self) -> Result<Expected> {
        Ok(Expected::Custom(Box::new(reference::reduce(
            &self.img,
            &self.params,
        ))))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (out, r) = d.reduce_report(&self.img, &self.params)?;
        Ok((Box::new(out), r))
    }

    /// `tolerance` is the sum's bound in units of `u * sum(|x|)` (see
    /// [`super::variants`]); min and max are held to exactness.
    fn check(
        &self,
        got: &Output,
        want: &Expected,
        tolerance: f32,
    ) -> std::result::Result<(), String> {
        match (got.downcast_ref::<Image<f32>>(), want) {
            (Some(g), Expected::Custom(w)) => match w.downcast_ref::<Exact>() {
                Some(w) => check_reduced(g, w, self.params.op, tolerance),
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
            cpu::reduce(&self.img, &self.params).map(drop)
        }))
    }
}
