//! The engine's error type.

use std::path::PathBuf;

/// Every fallible engine call returns this.
///
/// The enum is `#[non_exhaustive]`: later operations add variants without
/// breaking callers that match on it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// An argument is out of range or inconsistent (sizes, strides, channels, parameters).
    #[error("invalid argument: {0}")]
    InvalidArgument(String),

    /// The input data cannot be processed as asked (for example a range that is not finite).
    #[error("invalid input: {0}")]
    InvalidInput(String),

    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file involved.
        path: PathBuf,
        /// The underlying I/O error.
        #[source]
        source: std::io::Error,
    },

    /// A file was read but could not be decoded or encoded as an image.
    #[error("{path}: {message}")]
    Format {
        /// The file involved.
        path: PathBuf,
        /// What went wrong, in words.
        message: String,
    },

    /// The `--device` selector matched no device.
    #[error("no OpenCL device matches '{selector}'; available: {available}")]
    DeviceNotFound {
        /// The selector as given.
        selector: String,
        /// The devices that exist, one `P:D name (type)` entry each, or a reason why there are none.
        available: String,
    },

    /// An OpenCL call failed.
    #[error("OpenCL error {code} ({name}) in {call}")]
    OpenCl {
        /// The API call or action that failed.
        call: String,
        /// The OpenCL status code.
        code: i32,
        /// The symbolic name of `code`.
        name: &'static str,
    },

    /// A kernel program failed to build; `log` is the compiler's full build log.
    #[error("building {op}/{variant} for {device} failed:\n{log}")]
    Build {
        /// The operation.
        op: String,
        /// The variant whose program failed.
        variant: String,
        /// The device name.
        device: String,
        /// The full build log from the OpenCL compiler.
        log: String,
    },

    /// The named variant does not exist for this operation.
    #[error("operation '{op}' has no variant '{variant}'; known: {known}")]
    UnknownVariant {
        /// The operation.
        op: String,
        /// The variant asked for.
        variant: String,
        /// The variants that exist.
        known: String,
    },

    /// The variant exists but cannot run this request on this backend.
    #[error("variant {op}/{variant} cannot run this request: {reason}")]
    Unsupported {
        /// The operation.
        op: String,
        /// The variant.
        variant: String,
        /// Why not.
        reason: String,
    },

    /// Decoding an image file would take more memory than the decode limit
    /// allows ([`crate::image::DecodeLimits`]). Nothing that large was
    /// allocated.
    #[error("{}", decode_limit(path, what, *need, *limit))]
    DecodeLimit {
        /// The file involved.
        path: PathBuf,
        /// What needs the memory, in words (`a 60000x60000 8-bit gray image`).
        what: String,
        /// The bytes it needs, where known before decoding (a decoder that
        /// hits the limit in its own buffers does not say how far it is over).
        need: Option<u64>,
        /// The limit in force, in bytes.
        limit: u64,
    },

    /// The system refused the memory for a buffer (an allocation failed,
    /// as under a memory limit or with overcommit off). Nothing was
    /// written.
    #[error("out of memory: {what} needs {bytes} bytes, and the system refused them")]
    OutOfMemory {
        /// What needed the memory, in words (`an image of 1600000000 samples`).
        what: String,
        /// The bytes asked for.
        bytes: u64,
    },

    /// A filter spec string could not be parsed.
    #[error("filter spec: {0}")]
    Spec(String),

    /// An operation that spreads NaN and infinities over its result was
    /// given f32 samples that are not finite, under the default policy
    /// [`NonFinite::Error`](crate::NonFinite) (`docs/QUALITY.md`,
    /// "Non-finite pixels").
    #[error("{}", nonfinite(op, *count, *first))]
    NonFinite {
        /// The operation that refused them.
        op: String,
        /// How many samples are NaN, +inf, -inf or beyond ±2^120
        /// ([`crate::image::finite::MAX_MAGNITUDE`]).
        count: u64,
        /// `(x, y, channel)` of the first, in reading order, in the
        /// operation's input.
        first: (usize, usize, usize),
    },

    /// A stream of raw frames ended inside a frame
    /// ([`crate::image::raw::FrameReader`]).
    #[error("{}", truncated_frame(*index, *got, *want))]
    TruncatedFrame {
        /// The frame's index, counted from 0: the number of whole frames before it.
        index: usize,
        /// The bytes of the frame that arrived.
        got: usize,
        /// The bytes a whole frame has.
        want: usize,
    },

    /// The call needs a cargo feature this build of the library leaves out:
    /// loading and saving image files need `formats` (on by default; a
    /// library built with `default-features = false` has in-memory images
    /// and raw frames only).
    #[error(
        "{path}: {what} needs the clfilter feature `{feature}`, which this build leaves out; \
         enable it in Cargo.toml (features = [\"{feature}\"])"
    )]
    FeatureDisabled {
        /// The feature, such as `formats`.
        feature: &'static str,
        /// What needs it, in words (`loading an image file`).
        what: &'static str,
        /// The file involved.
        path: PathBuf,
    },

    /// A borrowed view's layout or type does not fit
    /// ([`crate::image::view`]: slice too short, stride shorter than a
    /// row, an output view of the wrong type or shape).
    #[error("image view: {0}")]
    View(crate::image::ViewError),
}

/// The message of [`Error::TruncatedFrame`].
fn truncated_frame(index: usize, got: usize, want: usize) -> String {
    let before = match index {
        0 => "there is no frame before it".to_string(),
        1 => "the 1 frame before it is complete".to_string(),
        n => format!("the {n} frames before it are complete"),
    };
    format!("frame {index} is truncated: the input ended after {got} of its {want} bytes; {before}")
}

/// The message of [`Error::NonFinite`].
fn nonfinite(op: &str, count: u64, (x, y, c): (usize, usize, usize)) -> String {
    let what = match count {
        1 => "1 sample that is NaN, infinite or beyond ±2^120".to_string(),
        n => format!("{n} samples that are NaN, infinite or beyond ±2^120"),
    };
    format!(
        "{op}: the f32 input holds {what}, the first at x={x} y={y} channel {c}; \
         {op} would spread them over its result. Repair them with nonfinite=zero or \
         nonfinite=clamp (a stage option; Engine::with_nonfinite in the library)"
    )
}

/// The message of [`Error::DecodeLimit`]: what, how much, and how to raise
/// the limit.
fn decode_limit(path: &std::path::Path, what: &str, need: Option<u64>, limit: u64) -> String {
    use crate::image::decode::{human_bytes, suggested_limit};
    let (needs, raise) = match need {
        Some(n) => (
            format!("needs {} ({n} bytes)", human_bytes(n)),
            suggested_limit(n).to_string(),
        ),
        // The decoder stopped at the limit without saying how far over it
        // was: the suggestion is a step up, not a figure known to suffice.
        None => (
            "needs more (the decoder did not say how much)".to_string(),
            format!("{} or more", suggested_limit(limit.saturating_mul(4))),
        ),
    };
    format!(
        "{}: decoding {what} {needs}, over the decode limit of {} ({limit} bytes); \
         raise it with {}={raise} (or 'none'), or DecodeLimits in the library",
        path.display(),
        human_bytes(limit),
        crate::image::DecodeLimits::ENV
    )
}

/// `Result` with the engine's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// Shorthand for [`Error::InvalidArgument`].
    pub(crate) fn arg(msg: impl Into<String>) -> Self {
        Error::InvalidArgument(msg.into())
    }

    /// [`Error::Io`] for the file `path`.
    pub(crate) fn io(path: &std::path::Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }

    /// [`Error::FeatureDisabled`] for the `formats` feature: `what` (loading
    /// or saving) the file `path` needs the codecs.
    #[cfg_attr(feature = "formats", allow(dead_code))]
    pub(crate) fn formats_off(path: &std::path::Path, what: &'static str) -> Self {
        Error::FeatureDisabled {
            feature: "formats",
            what,
            path: path.to_path_buf(),
        }
    }

    /// [`Error::Format`] for the file `path`.
    pub(crate) fn format(path: &std::path::Path, message: impl Into<String>) -> Self {
        Error::Format {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// `v` as messages show a number: as Rust prints it (`2`, `0.97`), but in
/// exponent form (`1e30`, `1e-45`) where that would take dozens of digits.
pub fn num<T>(v: T) -> String
where
    T: Copy + Into<f64> + std::fmt::Display + std::fmt::LowerExp,
{
    let a = v.into().abs();
    if a == 0.0 || !a.is_finite() || (1e-4..1e16).contains(&a) {
        format!("{v}")
    } else {
        format!("{v:e}")
    }
}

/// Levenshtein distance between two short strings (in characters), for
/// "did you mean" suggestions in error messages.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.chars().enumerate() {
        cur[0] = i + 1;
        for (j, &cb) in b.iter().enumerate() {
            let subst = prev[j] + usize::from(ca != cb);
            cur[j + 1] = subst.min(prev[j + 1] + 1).min(cur[j] + 1);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}
