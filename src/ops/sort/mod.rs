//! `sort`: ascending sorts of 1-D arrays of f32, u32 or i32 keys, alone or
//! with u32 values ([`SortExt::sort_pairs`]). Not an image operation: it
//! has its own entry points and `filterctl sort`, and no pipeline stage.
//!
//! - f32 keys follow IEEE-754 `totalOrder` ([`f32::total_cmp`]):
//!   -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN; keys come back with
//!   their exact bits (NaN payloads included). See [`keys`].
//! - Pairs are stable: values of equal keys keep their input order, on
//!   every variant, so all variants give the same result bit for bit.
//! - Every variant sorts u32 words ([`keys::SortKey::to_word`]); the
//!   variants' [`Shape`] is `n x 1`, one channel, sample type f32 (nominal:
//!   the words are what the kernels see), with [`SortParams`].

pub mod api;
pub mod cpu;
pub(crate) mod device;
pub mod keys;
// Private: its `sort_pairs` trusts one value per key, which `cpu::sort_pairs`
// checks (a typed error) before calling it.
mod radix;
pub mod reference;
mod tune;
pub mod variants;

use crate::backend::Dev;
use crate::error::Result;
use crate::ops::{OpParams, OpSpec, RunReport, Shape, TuneBucket};
pub use api::SortExt;
pub use keys::SortKey;
pub use tune::TUNE;

/// The operation's description.
pub static SPEC: OpSpec = OpSpec {
    name: "sort",
    sources: &[crate::cl_source!("sort/sort.cl")],
    variants: variants::VARIANTS,
    gpu_order: &["radix", "bitonic"],
    cpu_device_order: &["radix", "bitonic"],
    prefer: None,
    // Keys move; a NaN moves with its slot.
    spreads_nonfinite: false,
    overflows: false,
};

/// The operation's registry entry.
pub static OP: crate::ops::Operation = crate::ops::Operation {
    spec: &SPEC,
    stages: &[],
    tune: &TUNE,
};

/// What a sort carries besides its keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SortParams {
    /// Whether each key carries a u32 value (index), which doubles the
    /// bytes each pass moves.
    pub pairs: bool,
}

impl TuneBucket for SortParams {
    fn bucket_words(&self) -> (&'static str, &'static str) {
        if self.pairs {
            ("pairs", "")
        } else {
            ("keys", "")
        }
    }
}

/// The shape the variant tables see for `n` keys.
pub fn shape(n: usize, pairs: bool) -> Shape {
    Shape::new(n, 1, 1, crate::SampleType::F32).with_params(OpParams::new(SortParams { pairs }))
}

/// Whether the request carries values.
pub(crate) fn pairs_of(shape: &Shape) -> bool {
    shape.params.get::<SortParams>().is_some_and(|p| p.pairs)
}
