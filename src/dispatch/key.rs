//! Tuning keys: which measurements apply to which requests.

use serde::{Deserialize, Serialize};

use crate::backend::DeviceInfo;
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
    /// parameters, else the operation's own words (see [`params_bucket`]).
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

/// The parameter bucket of a request: `-` for operations whose variants do
/// not depend on parameters, else the words the operation chooses
/// ([`OpParams::bucket_words`]) joined by a space.
pub fn params_bucket(params: &OpParams) -> String {
    match params.bucket_words() {
        None => "-".into(),
        Some((word, "")) => word.into(),
        Some((range, border)) => format!("{range} {border}"),
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
        let params = match shape.params.bucket_words() {
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
    use crate::SampleType;

    #[test]
    fn buckets() {
        assert_eq!(size_bucket(256, 256), 16);
        assert_eq!(size_bucket(640, 480), 18);
        assert_eq!(size_bucket(1920, 1080), 21);
        assert_eq!(size_bucket(3840, 2160), 23);
        assert_eq!(size_bucket(8192, 8192), 26);
        assert_eq!(size_bucket(1, 1), 0);
        assert_eq!(params_bucket(&OpParams::NONE), "-");
        let shape = Shape::new(1920, 1080, 1, SampleType::F32);
        let k = TuneKey::new("dev", "op", &shape);
        assert_eq!(k.format, "f32x1");
        let shape = Shape::new(7, 5, 3, SampleType::U16);
        let key = TuneKey::new("d", "op", &shape);
        assert!(key.fits(&shape));
        assert!(!key.fits(&Shape {
            channels: 4,
            ..shape
        }));
        assert!(!key.fits(&Shape::new(7, 5, 3, SampleType::U8)));
    }
}
