//! Demosaic's tuning key fields.

use super::DemosaicParams;

impl DemosaicParams {
    /// The tuning parameter bucket: the method sets the neighbourhood (and
    /// so the cost), and RGB and RGBA stores differ in width (`mhc rgb`).
    pub fn bucket_words(&self) -> (&'static str, &'static str) {
        (
            self.method.name(),
            if self.channels == 4 { "rgba" } else { "rgb" },
        )
    }
}
