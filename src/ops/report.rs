//! [`RunReport`]: what one call ran.

use std::time::Duration;

use serde::Serialize;

/// What ran for one call: which variant on which backend, how long it took,
/// and which variants were tried and failed first.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    /// The operation.
    pub op: &'static str,
    /// The variant that produced the result.
    pub variant: String,
    /// The backend it ran on.
    pub backend: String,
    /// Wall time of the whole call (transfers included).
    #[serde(serialize_with = "ser_ms")]
    pub elapsed: Duration,
    /// Device time of the kernels alone, from profiling events (OpenCL only).
    #[serde(serialize_with = "ser_opt_ms")]
    pub kernel_time: Option<Duration>,
    /// Variants that failed before this one, with the reason for each.
    pub fallbacks: Vec<String>,
}

/// Serializes a duration as milliseconds (f64), for JSON reports.
pub fn ser_ms<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64() * 1e3)
}

/// Serializes an optional duration as milliseconds (f64) or null.
pub fn ser_opt_ms<S: serde::Serializer>(d: &Option<Duration>, s: S) -> Result<S::Ok, S::Error> {
    match d {
        Some(d) => s.serialize_some(&(d.as_secs_f64() * 1e3)),
        None => s.serialize_none(),
    }
}
