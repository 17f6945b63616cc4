//! `gamma`'s kernel arguments (launched by [`crate::ops::pixel_stage`]):
//! `pixel` computes the curve (`CURVE`) per pixel from the full scale and
//! the inverse power; `lut` reads the host's table, one sample per
//! work-item.

use super::*;
use crate::ops::pixel_stage::{Items, PixelKernel, PixelLaunch, Scalar};
use crate::ops::VariantSpec;

impl PixelKernel for GammaParams {
    fn spec() -> &'static OpSpec {
        &SPEC
    }

    /// The power (any channels).
    fn check(&self, _: usize, _: SampleType) -> Result<()> {
        self.validate()
    }

    fn launch(&self, spec: &VariantSpec, logical: SampleType) -> Result<PixelLaunch> {
        let (curve, inv) = self.kernel_args();
        let (items, args) = if spec.name == "lut" {
            (Items::Samples, Vec::new())
        } else {
            let full = logical.full_scale();
            (Items::Pixels(1), vec![Scalar::F32(full), Scalar::F32(inv)])
        };
        Ok(PixelLaunch {
            options: format!("-DCURVE={curve}"),
            items,
            args,
        })
    }

    /// `lut`'s table ([`GammaParams::table`]), for u8 and u16 samples.
    fn lookup_table<T: Sample>(&self, spec: &VariantSpec) -> Result<Option<Vec<T>>> {
        if spec.name != "lut" {
            return Ok(None);
        }
        self.table::<T>()
            .map(Some)
            .ok_or_else(|| Error::arg("gamma's lut variant reads u8 or u16 samples"))
    }

    /// The curves map 0..full into 0..full.
    fn unsaturated(&self, _: SampleType) -> bool {
        false
    }
}
