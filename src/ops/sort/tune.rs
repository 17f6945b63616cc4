//! `sort`'s tuning and bench entry. Its cases are n-key arrays, not
//! images: a job of `w x h x c` sorts `w * h * c` f32 keys (so
//! `filterctl tune --ops sort --sizes 1024x1024` measures 2^20 keys), and
//! the gate is bit-for-bit equality with the reference sort.

use super::*;
use crate::error::Error;
use crate::image::SampleType;
use crate::ops::tuning::{self, Ask, Case, Expected, OnDevice, Output, Runner, Tunable};
use crate::ops::{Dispatch, VariantSpec};

/// The tuning and bench entry (see [`crate::ops::tuning`]).
pub struct Tune;

/// The entry, for the registry.
pub static TUNE: Tune = Tune;

impl Tunable for Tune {
    fn spec(&self) -> &'static OpSpec {
        &SPEC
    }

    /// Keys alone, and keys with values.
    fn params(&self, _: &Ask<'_>) -> Result<Vec<OpParams>> {
        Ok([false, true]
            .into_iter()
            .map(|pairs| OpParams::new(SortParams { pairs }))
            .collect())
    }

    /// Its cases are f32 keys (u32 and i32 keys sort the same words).
    fn reads(&self, sample: SampleType) -> std::result::Result<(), String> {
        match sample {
            SampleType::F32 => Ok(()),
            _ => Err("sort's tuning cases are f32 keys (--type f32)".into()),
        }
    }

    fn job_shape(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Shape> {
        crate::image::check_shape(w, h, c)?;
        self.reads(sample).map_err(Error::arg)?;
        Ok(shape(w * h * c, params.get::<SortParams>().is_some_and(|p| p.pairs)))
    }

    fn case(
        &self,
        sample: SampleType,
        (w, h, c): (usize, usize, usize),
        params: OpParams,
    ) -> Result<Box<dyn Case>> {
        self.reads(sample).map_err(Error::arg)?;
        let pairs = params.get::<SortParams>().is_some_and(|p| p.pairs);
        Ok(Box::new(SortCase::new(w * h * c, pairs)))
    }
}

/// `n` reproducible f32 keys: random bit patterns (every class, NaNs of
/// both signs with payloads included), many duplicates, and the special
/// values (±0, ±inf, ±NaN).
pub fn test_keys(n: usize) -> Vec<f32> {
    let mut s: u64 = 0x2545_F491_4F6C_DD1D;
    let special = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        1.0,
        -1.0,
    ];
    (0..n)
        .map(|_| {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            let r = (s >> 32) as u32;
            match s & 3 {
                0 => special[(r % 8) as usize],
                1 => (r % 64) as f32 - 32.0,
                _ => f32::from_bits(r),
            }
        })
        .collect()
}

pub(super) struct SortCase {
    pub(super) keys: Vec<f32>,
    pub(super) pairs: bool,
    pub(super) on_device: OnDevice,
}

impl SortCase {
    fn new(n: usize, pairs: bool) -> Self {
        let keys = test_keys(n);
        SortCase {
            keys,
            pairs,
            on_device: OnDevice::default(),
        }
    }

    fn values(&self) -> Vec<u32> {
        (0..self.keys.len() as u32).collect()
    }
}

/// Keys' bits, then the values.
fn as_words(keys: &[f32], values: Option<&[u32]>) -> Vec<u32> {
    let mut w: Vec<u32> = keys.iter().map(|k| k.to_bits()).collect();
    w.extend(values.unwrap_or_default());
    w
}

impl Case for SortCase {
    fn shape(&self) -> Shape {
        shape(self.keys.len(), self.pairs)
    }

    fn reference(&self) -> Result<Expected> {
        Ok(Expected::Words(if self.pairs {
            let (k, v) = reference::sort_pairs(&self.keys, &self.values());
            as_words(&k, Some(&v))
        } else {
            as_words(&reference::sort(&self.keys), None)
        }))
    }

    fn run(&self, d: &dyn Dispatch) -> Result<(Output, RunReport)> {
        Ok(if self.pairs {
            let (k, v, r) = d.sort_pairs_report(&self.keys, &self.values())?;
            (Box::new(as_words(&k, Some(&v))), r)
        } else {
            let (k, r) = d.sort_report(&self.keys)?;
            (Box::new(as_words(&k, None)), r)
        })
    }

    fn check(&self, got: &Output, want: &Expected, _: f32) -> std::result::Result<(), String> {
        let (Some(g), Expected::Words(w)) = (got.downcast_ref::<Vec<u32>>(), want) else {
            return Err("the call returned another kind of result than the reference".into());
        };
        if g.len() != w.len() {
            return Err(format!("{} words, reference {}", g.len(), w.len()));
        }
        match g.iter().zip(w).position(|(a, b)| a != b) {
            None => Ok(()),
            Some(i) => {
                let n = self.keys.len();
                let what = if i < n { "key" } else { "value" };
                Err(format!(
                    "wrong {what} at {}: bits {:#010x}, reference {:#010x}",
                    i % n.max(1),
                    g[i],
                    w[i]
                ))
            }
        }
    }

    fn kernel_runner<'a>(
        &'a self,
        progs: &'a crate::ops::Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<Runner<'a>> {
        super::device::kernel_runner(self, progs, dev, spec)
    }

    fn cpu_runner(&self) -> Result<Runner<'_>> {
        let values = self.values();
        Ok(tuning::wall(move || {
            if self.pairs {
                cpu::sort_pairs(&self.keys, &values).map(drop)
            } else {
                cpu::sort(&self.keys).map(drop)
            }
        }))
    }
}
