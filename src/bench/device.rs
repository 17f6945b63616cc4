//! Device-side timing helpers (also used by the tuner and the criterion
//! benches): the copy kernel's bandwidth, and kernel-only times of a
//! case's variant.

#[cfg(feature = "opencl")]
pub use cl::{copy_bandwidth, time_kernel};

#[cfg(feature = "opencl")]
mod cl {
    use std::time::Duration;

    use crate::backend::opencl::{Arg, ClDevice, DeviceBuffer};
    use crate::engine::Engine;
    use crate::error::Result;
    use crate::image::SampleType;
    use crate::ops::tuning::Case;
    use crate::ops::{self, Shape, VariantSpec};

    /// The copy variant: a plain float4 copy, kept out of the op tables
    /// because it is a yardstick, not an operation.
    static COPY: VariantSpec = VariantSpec {
        name: "f4",
        summary: "float4 copy, the bandwidth yardstick",
        files: &["copy.cl"],
        options: "",
        local: [256, 1],
        local_bytes: ops::no_local,
        supports: ops::any_shape,
        requires: &[],
        tolerance: 0.0,
    };

    /// Read + write GB/s of the copy kernel over `bytes` (rounded up to 16),
    /// the median of `iters` runs (at least 1) after a warm-up.
    pub fn copy_bandwidth(
        engine: &Engine,
        dev: &ClDevice,
        bytes: usize,
        iters: usize,
    ) -> Result<f64> {
        let n4 = bytes.div_ceil(16).max(1);
        let shape = Shape::new(n4, 1, 4, SampleType::F32);
        let k = engine
            .programs()
            .kernel(dev, "copy", &COPY, &shape, "", "copy_f4")?;
        let a = DeviceBuffer::<[f32; 4]>::new(dev, n4)?;
        let b = DeviceBuffer::<[f32; 4]>::new(dev, n4)?;
        let iters = iters.max(1);
        let mut times = Vec::with_capacity(iters);
        for i in 0..=iters {
            let ev = dev.launch(
                &k,
                &[n4],
                &[256],
                &[Arg::buf(&a), Arg::buf(&b), Arg::int(n4)?],
            )?;
            let t = ev.duration()?.unwrap_or_default();
            if i > 0 {
                times.push(t);
            }
        }
        times.sort_unstable();
        let mid = times[times.len() / 2].as_secs_f64();
        Ok(2.0 * (n4 * 16) as f64 / mid / 1e9)
    }

    /// Kernel times of `iters` runs of device variant `spec` on `case`'s input
    /// (on the device; see [`Case::kernel_runner`]), after one warm-up.
    pub fn time_kernel(
        engine: &Engine,
        dev: &ClDevice,
        case: &dyn Case,
        spec: &'static VariantSpec,
        iters: usize,
    ) -> Result<Vec<Duration>> {
        let mut once = case.kernel_runner(engine.programs(), dev, spec)?;
        once()?;
        (0..iters).map(|_| once()).collect()
    }

    impl super::super::Bench<'_> {
        /// The copy bandwidth, then every device variant's kernel times.
        pub(crate) fn device_rows(
            &mut self,
            engine: &Engine,
            dev: &crate::backend::Dev,
        ) -> Result<()> {
            let c = self.cfg;
            let bytes = c.width * c.height * c.sample.size() * c.channels;
            let copy = copy_bandwidth(engine, dev, bytes, c.iters)?;
            self.report.copy_gb_per_s = Some(copy);
            for (t, sets) in &self.plan {
                for params in sets.iter() {
                    // A case that cannot be made (a type or channel count the
                    // operation does not read) is every variant's error.
                    let case = self.case(*t, params.clone());
                    for spec in t.spec().variants {
                        let timed = case.as_ref().map(|case| {
                            spec.check_device(dev.info())
                                .map_err(|reason| crate::error::Error::Unsupported {
                                    op: t.spec().name.into(),
                                    variant: spec.name.into(),
                                    reason,
                                })
                                .and_then(|()| time_kernel(engine, dev, &**case, spec, c.iters))
                        });
                        let failed = |e: &crate::error::Error| {
                            crate::bench::BenchRow::failed(t.spec().name, spec.name, params, e)
                        };
                        let row = match timed {
                            Ok(Ok(times)) => self.row((*t, params), spec.name, times, Some(copy)),
                            Ok(Err(e)) => failed(&e),
                            Err(e) => failed(e),
                        };
                        self.report.rows.push(row);
                    }
                }
            }
            Ok(())
        }
    }
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
impl super::Bench<'_> {
    pub(crate) fn device_rows(
        &mut self,
        _: &crate::engine::Engine,
        dev: &crate::backend::Dev,
    ) -> crate::error::Result<()> {
        match *dev {}
    }
}
