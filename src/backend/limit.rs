//! How long one kernel dispatch may run ([`DispatchLimit`]): the setting
//! exists in every build; OpenCL devices split their launches by it
//! (`backend::opencl::watchdog`).

use std::time::Duration;

use crate::error::{Error, Result};

/// The limit used where a device drives a display and none is set: a
/// quarter of Windows' 2-second TDR, with room for the estimate's error.
pub const DISPLAY_DEFAULT: Duration = Duration::from_millis(500);

/// How long one dispatch may run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DispatchLimit {
    /// [`DISPLAY_DEFAULT`] where the device reports a kernel watchdog
    /// (NVIDIA's `CL_DEVICE_KERNEL_EXEC_TIMEOUT_NV`) or is an Apple GPU,
    /// else no limit.
    #[default]
    DeviceDefault,
    /// Never split.
    Off,
    /// Split launches so that each dispatch stays under this time.
    Max(Duration),
}

impl DispatchLimit {
    /// From `FILTERCTL_MAX_DISPATCH_MS`: unset or empty is the device's
    /// default, `0` turns splitting off, a positive number of milliseconds
    /// (fractions allowed) is the limit; anything else is an error.
    pub fn from_env() -> Result<Self> {
        match std::env::var("FILTERCTL_MAX_DISPATCH_MS") {
            Ok(v) if !v.trim().is_empty() => Self::parse_ms(v.trim()),
            Ok(_) | Err(std::env::VarError::NotPresent) => Ok(DispatchLimit::DeviceDefault),
            // Not text (invalid UTF-8): not a number either.
            Err(std::env::VarError::NotUnicode(v)) => Err(not_ms(&format!("{v:?}"))),
        }
    }

    /// `0` (off) or a positive, finite number of milliseconds.
    pub fn parse_ms(v: &str) -> Result<Self> {
        let bad = || not_ms(v);
        let ms: f64 = v.parse().map_err(|_| bad())?;
        if ms == 0.0 {
            return Ok(DispatchLimit::Off);
        }
        if !(0.0..=3.6e6).contains(&ms) {
            return Err(bad());
        }
        // At least 1 ns, so that a tiny limit does not read as 0 in messages.
        Ok(DispatchLimit::Max(
            Duration::from_secs_f64(ms / 1e3).max(Duration::from_nanos(1)),
        ))
    }
}

/// The error for a `FILTERCTL_MAX_DISPATCH_MS` value that is not a limit.
fn not_ms(v: &str) -> Error {
    Error::arg(format!(
        "FILTERCTL_MAX_DISPATCH_MS={v}: give milliseconds above 0 and up to \
         3600000 (one hour), or 0 to never split a dispatch"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn limits_from_the_environment_text() {
        assert_eq!(DispatchLimit::parse_ms("0").unwrap(), DispatchLimit::Off);
        assert_eq!(
            DispatchLimit::parse_ms("2.5").unwrap(),
            DispatchLimit::Max(Duration::from_micros(2500))
        );
        assert_eq!(
            DispatchLimit::parse_ms("0.0000001").unwrap(),
            DispatchLimit::Max(Duration::from_nanos(1))
        );
        for bad in ["-1", "NaN", "inf", "fast", "1e9", "1e308"] {
            assert!(DispatchLimit::parse_ms(bad).is_err(), "{bad}");
        }
    }
}
