//! `histogram`'s tuning and bench entry: the type's default bins (256),
//! and 4096 bins, where private histograms cost more local memory.

use super::*;
use crate::ops::tuning::{self, Case, Expected, Output, Runner, Tunable};
use crate::ops::{Dispatch, OpParams, VariantSpec};

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

/// The bin counts a run measures.
const BIN_COUNTS: [usize; 2] = [256, 4096];

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    /// Bin counts only (the asked count, else [`BIN_COUNTS`]): the case
    /// sets the range from the sample type.
    fn params(&self, ask: &tuning::Ask<'_>) -> Result<Vec<OpParams>> {
        let counts = match ask.bins {
            Some(bins) => vec![bins],
            None => BIN_COUNTS.to_vec(),
        };
        Ok(counts
            .into_iter()
            .map(|bins| {
                OpParams::new(HistogramParams {
                    bins,
                    lo: 0.0,
                    hi: 1.0,
                })
            })
            .collect())
    }

    /// One read of the pixel.
    fn bytes_per_pixel(&self, sample: usize, channels: usize) -> usize {
        sample * channels
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Box<dyn Case>> {
        let bins = params
            .get::<HistogramParams>()
            .ok_or_else(|| Error::arg("a histogram case needs histogram parameters"))?
            .bins;
        // The type's default range, so that the bins see the whole input.
        let p = HistogramParams {
            bins,
            ..HistogramParams::default_for(sample)
        };
        tuning::boxed_case!(sample, T => HistogramCase::<T>::new(w, h, c, p)?)
    }
}

/// The input and its parameters.
pub(super) type HistogramCase<T> = tuning::ImageCase<T, HistogramParams>;

impl<T: Sample> Case for HistogramCase<T> {
    fn shape(&self) -> Shape {
        Shape::new(
            self.img.width(),
            self.img.height(),
            self.img.channels(),
            T::TYPE,
        )
        .with_params(OpParams::new(self.params))
    }

    fn reference(&self) -> Result<Expected> {
        let b = self.params.binning()?;
        Ok(Expected::Custom(Box::new(reference::histogram(&self.img, &b))))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        let (h, r) = d.histogram_report(&self.img, &self.params)?;
        Ok((Box::new(h), r))
    }

    /// Counts are exact whatever the tolerance.
    fn check(
        &self,
        got: &Output,
        want: &Expected,
        _tolerance: f32,
    ) -> std::result::Result<(), String> {
        let (Some(g), Expected::Custom(w)) = (got.downcast_ref::<Histogram>(), want) else {
            return Err(tuning::MISMATCH.into());
        };
        let Some(w) = w.downcast_ref::<Histogram>() else {
            return Err(tuning::MISMATCH.into());
        };
        for (c, (gc, wc)) in g.counts.iter().zip(&w.counts).enumerate() {
            if let Some(b) = (0..wc.len()).find(|&b| gc.get(b) != wc.get(b)) {
                return Err(format!(
                    "channel {c} bin {b}: {:?}, reference {}",
                    gc.get(b),
                    wc[b]
                ));
            }
        }
        if g != w {
            return Err(format!(
                "channels or exclusions differ: {} lists, excluded {:?}; reference {}, {:?}",
                g.counts.len(),
                g.excluded,
                w.counts.len(),
                w.excluded
            ));
        }
        Ok(())
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
        let b = self.params.binning()?;
        Ok(tuning::wall(move || {
            let _ = cpu::histogram(&self.img, &b);
            Ok(())
        }))
    }
}
