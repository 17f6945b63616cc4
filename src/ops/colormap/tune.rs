//! Colormap's tuning key fields.

use super::ColormapParams;

impl ColormapParams {
    /// The tuning parameter bucket: the output channels alone (`rgba`), as
    /// every map costs the same.
    pub fn bucket_words(&self) -> (&'static str, &'static str) {
        (if self.channels == 4 { "rgba" } else { "rgb" }, "")
    }
}
