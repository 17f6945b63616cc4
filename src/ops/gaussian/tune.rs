//! The Gaussian's tuning key fields.

use super::{Border, GaussianParams};

impl GaussianParams {
    /// The tuning parameter bucket: the larger sigma falls in `sigma<2`
    /// (where the FIR is cheap and the recursive variants are near their
    /// accuracy limit), `sigma2-8` (both kinds run; the FIR's radius grows
    /// with sigma) or `sigma>=8` (beyond the local-memory FIR's radius),
    /// followed by the border.
    pub fn bucket_words(&self) -> (&'static str, &'static str) {
        let s = self.sigma_x.max(self.sigma_y);
        let range = if s < 2.0 {
            "sigma<2"
        } else if s < 8.0 {
            "sigma2-8"
        } else {
            "sigma>=8"
        };
        let border = match self.border {
            Border::Replicate => "replicate",
            Border::Mirror => "mirror",
        };
        (range, border)
    }
}
