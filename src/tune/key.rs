//! Tuning keys: which measurements apply to which requests.

use serde::{Deserialize, Serialize};

use crate::backend::DeviceInfo;
use crate::ops::gaussian::Border;
use crate::ops::{OpParams, Shape};

/// What a tuning result is valid for. Requests with equal keys share a
/// result; a request with no equal key uses the nearest size bucket of an
/// otherwise equal key (see `docs/TUNING.md`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct TuneKey {
    /// The device fingerprint (see [`fingerprint`]).
    pub device: String,
    /// The operation.
    pub op: String,
    /// Pixel format: sample type and channels, `f32x1`.
    pub format: String,
    /// Size bucket: the pixel count's base-2 logarithm, rounded to the
    /// nearest integer (1920x1080 is 21, 3840x2160 is 23).
    pub size_bucket: u32,
    /// Parameter bucket: `-` for operations whose variants do not depend on
    /// parameters; for `gaussian` the sigma range and the border (see [`params_bucket`]).
    pub params: String,
}

/// Platform name and version, device name, driver version and compute
/// units: what must match for timings to carry over.
pub fn fingerprint(info: &DeviceInfo) -> String {
    format!(
        "{} {} | {} | driver {} | {} CU",
        info.platform.trim(),
        info.platform_version.trim(),
        info.name.trim(),
        info.driver_version.trim(),
        info.compute_units
    )
}

/// The size bucket of a `width x height` image (see [`TuneKey::size_bucket`]).
pub fn size_bucket(width: usize, height: usize) -> u32 {
    let px = (width.max(1) as f64) * (height.max(1) as f64);
    px.log2().round() as u32
}

/// The parameter bucket of a request. Gaussian sigma (the larger of the
/// two) falls in `sigma<2` (where the FIR is cheap and the recursive
/// variants are near their accuracy limit), `sigma2-8` (both kinds run;
/// the FIR's radius grows with sigma) or `sigma>=8` (beyond the local-memory
/// FIR's radius), followed by the border. Demosaic buckets by method and
/// output channels (`mhc rgb`); colormap by output channels alone (`rgba`:
/// every map costs the same).
pub fn params_bucket(params: &OpParams) -> String {
    match params_parts(params) {
        None => "-".into(),
        Some((word, "")) => word.into(),
        Some((range, border)) => format!("{range} {border}"),
    }
}

/// [`params_bucket`]'s two words (the second may be empty), or `None` for `-`.
fn params_parts(params: &OpParams) -> Option<(&'static str, &'static str)> {
    match params {
        OpParams::None => None,
        OpParams::Gaussian(p) => {
            let s = p.sigma_x.max(p.sigma_y);
            let range = if s < 2.0 {
                "sigma<2"
            } else if s < 8.0 {
                "sigma2-8"
            } else {
                "sigma>=8"
            };
            let border = match p.border {
                Border::Replicate => "replicate",
                Border::Mirror => "mirror",
            };
            Some((range, border))
        }
        // The method sets the neighbourhood (and so the cost); RGB and RGBA
        // stores differ in width.
        OpParams::Demosaic(p) => Some((
            p.method.name(),
            if p.channels == 4 { "rgba" } else { "rgb" },
        )),
        OpParams::Colormap(p) => Some((if p.channels == 4 { "rgba" } else { "rgb" }, "")),
    }
}

impl TuneKey {
    /// The key of a request of `shape` for `op` on the device `fingerprint`.
    pub fn new(fingerprint: &str, op: &str, shape: &Shape) -> Self {
        TuneKey {
            device: fingerprint.to_string(),
            op: op.to_string(),
            format: format!("{}x{}", shape.sample, shape.channels),
            size_bucket: size_bucket(shape.width, shape.height),
            params: params_bucket(&shape.params),
        }
    }

    /// Whether this key's format and parameter bucket are those of `shape`
    /// (what [`TuneKey::new`] would give), without building strings: the
    /// engine asks on every call.
    pub fn fits(&self, shape: &Shape) -> bool {
        let format = self
            .format
            .split_once('x')
            .is_some_and(|(t, c)| t == shape.sample.name() && c.parse() == Ok(shape.channels));
        let params = match params_parts(&shape.params) {
            None => self.params == "-",
            Some((word, "")) => self.params == word,
            Some(parts) => self.params.split_once(' ') == Some(parts),
        };
        format && params
    }
}

impl std::fmt::Display for TuneKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} {} 2^{} px {}",
            self.op, self.format, self.size_bucket, self.params
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::gaussian::GaussianParams;
    use crate::SampleType;

    #[test]
    fn buckets() {
        assert_eq!(size_bucket(256, 256), 16);
        assert_eq!(size_bucket(640, 480), 18);
        assert_eq!(size_bucket(1920, 1080), 21);
        assert_eq!(size_bucket(3840, 2160), 23);
        assert_eq!(size_bucket(8192, 8192), 26);
        assert_eq!(size_bucket(1, 1), 0);
        let g = |s: f32| params_bucket(&OpParams::Gaussian(GaussianParams::new(s)));
        assert_eq!(g(1.5), "sigma<2 replicate");
        assert_eq!(g(2.0), "sigma2-8 replicate");
        assert_eq!(g(8.0), "sigma>=8 replicate");
        assert_eq!(params_bucket(&OpParams::None), "-");
        let cm = crate::ops::colormap::ColormapParams {
            channels: 4,
            ..Default::default()
        };
        assert_eq!(params_bucket(&OpParams::Colormap(cm)), "rgba");
        let cm_shape = Shape::new(9, 9, 1, SampleType::U8).with_params(OpParams::Colormap(cm));
        let key = TuneKey::new("d", "colormap", &cm_shape);
        assert!(key.fits(&cm_shape));
        let rgb = OpParams::Colormap(crate::ops::colormap::ColormapParams::default());
        assert!(!key.fits(&cm_shape.with_params(rgb)));
        let shape = Shape::new(1920, 1080, 1, SampleType::F32);
        let k = TuneKey::new("dev", "transpose", &shape);
        assert_eq!(k.format, "f32x1");
        for shape in [
            Shape::new(7, 5, 3, SampleType::U16),
            Shape::new(7, 5, 1, SampleType::F32)
                .with_params(OpParams::Gaussian(GaussianParams::new(9.0))),
        ] {
            let key = TuneKey::new("d", "gaussian", &shape);
            assert!(key.fits(&shape));
            assert!(!key.fits(&Shape {
                channels: 4,
                ..shape
            }));
            assert!(!key.fits(
                &Shape::new(7, 5, 3, SampleType::U8)
                    .with_params(OpParams::Gaussian(GaussianParams::new(1.0)))
            ));
        }
    }
}
