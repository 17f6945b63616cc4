//! `sort` on OpenCL devices: words in, words (and indices) out. Without
//! the `opencl` feature, [`Dev`] has no values, so nothing here can be called.

use super::*;
use crate::backend::Dev;
use crate::ops::{Programs, VariantSpec};
use std::time::Duration;

/// Sorts `words` (and, with `pairs`, their positions) with `spec` on `dev`:
/// upload, kernels, download. Returns the sorted words, the positions they
/// came from (with `pairs`) and the kernels' device time.
#[cfg(feature = "opencl")]
pub(super) fn run(
    progs: &Programs,
    dev: &Dev,
    spec: &VariantSpec,
    words: &[u32],
    pairs: bool,
) -> Result<(Sorted, Duration)> {
    use crate::backend::opencl::DeviceBuffer;
    if words.is_empty() {
        return Ok((Sorted::default(), Duration::ZERO));
    }
    let input = DeviceBuffer::from_slice(dev, words)?;
    let (keys, idx, kt) = cl::launch(progs, dev, spec, &input, words.len(), pairs)?;
    let idx = idx.map(|b| b.to_vec(dev)).transpose()?;
    Ok((
        Sorted {
            words: keys.to_vec(dev)?,
            idx,
        },
        kt,
    ))
}

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn run(
    _: &Programs,
    dev: &Dev,
    _: &VariantSpec,
    _: &[u32],
    _: bool,
) -> Result<(Sorted, Duration)> {
    match *dev {}
}

/// A device sort's result.
#[derive(Debug, Default)]
pub(super) struct Sorted {
    /// The words in order.
    pub(super) words: Vec<u32>,
    /// With pairs: the input position of each word.
    pub(super) idx: Option<Vec<u32>>,
}

#[cfg(feature = "opencl")]
mod cl {
    use super::super::variants::{GROUP, ITEMS};
    use super::*;
    use crate::backend::opencl::{Arg, ClEvent, DeviceBuffer};
    use crate::error::Error;

    type Buf = DeviceBuffer<u32>;

    /// Sorts the first `n` (>= 1) words of `input` (left unchanged) with
    /// `spec`: the sorted words and, with `pairs`, their input positions,
    /// each in a buffer of exactly `n`, and the kernels' device time.
    pub(crate) fn launch(
        progs: &Programs,
        dev: &Dev,
        spec: &VariantSpec,
        input: &Buf,
        n: usize,
        pairs: bool,
    ) -> Result<(Buf, Option<Buf>, Duration)> {
        let shape = super::super::shape(n, pairs);
        crate::ops::tuning::check_variant(&SPEC, spec, &shape, dev.info().local_mem)?;
        let extra = format!("-DPAIRS={}", pairs as u8);
        let kernel = |name: &str| progs.kernel(dev, SPEC.name, spec, &shape, &extra, name);
        let mut events = Vec::new();
        let (keys, idx) = match spec.name {
            "bitonic" => bitonic(dev, &kernel, input, n, pairs, &mut events)?,
            "radix" => radix(dev, &kernel, input, n, pairs, &mut events)?,
            other => {
                return Err(Error::arg(format!("sort has no device variant {other}")));
            }
        };
        let mut kt = Duration::ZERO;
        for e in &events {
            kt += e.duration()?.unwrap_or_default();
        }
        Ok((keys, idx, kt))
    }

    type KernelOf<'a> = dyn Fn(&str) -> Result<crate::backend::opencl::Kernel> + 'a;

    /// The bitonic network over `total` = max(2^ceil(log2 n), 2 GROUP)
    /// words, the tail padded with all-ones words that sort last.
    fn bitonic(
        dev: &Dev,
        kernel: &KernelOf<'_>,
        input: &Buf,
        n: usize,
        pairs: bool,
        events: &mut Vec<ClEvent>,
    ) -> Result<(Buf, Option<Buf>)> {
        let block = 2 * GROUP;
        let total = n.next_power_of_two().max(block);
        let keys = Buf::new(dev, total)?;
        let idx = if pairs { Some(Buf::new(dev, total)?) } else { None };
        let idx_arg = Arg::buf(idx.as_ref().unwrap_or(&keys));
        let (init, step, local) = (
            kernel("sort_init")?,
            kernel("sort_bitonic_step")?,
            kernel("sort_bitonic_local")?,
        );
        events.push(dev.launch(
            &init,
            &[total],
            &[GROUP],
            &[
                Arg::buf(input),
                Arg::int(n)?,
                Arg::buf(&keys),
                idx_arg,
                Arg::int(total)?,
            ],
        )?);
        let half = [total / 2];
        let fused = |k0: usize, k1: usize| {
            dev.launch(
                &local,
                &half,
                &[GROUP],
                &[Arg::buf(&keys), idx_arg, Arg::int(k0)?, Arg::int(k1)?],
            )
        };
        events.push(fused(2, block)?);
        let mut k = 2 * block;
        while k <= total {
            let mut j = k / 2;
            while j >= block {
                events.push(dev.launch(
                    &step,
                    &half,
                    &[GROUP],
                    &[Arg::buf(&keys), idx_arg, Arg::int(k)?, Arg::int(j)?],
                )?);
                j /= 2;
            }
            events.push(fused(k, k)?);
            k *= 2;
        }
        if total == n {
            return Ok((keys, idx));
        }
        let copy = kernel("sort_copy")?;
        let take = |src: &Buf, events: &mut Vec<ClEvent>| -> Result<Buf> {
            let dst = Buf::new(dev, n)?;
            events.push(dev.launch(
                &copy,
                &[n],
                &[GROUP],
                &[Arg::buf(src), Arg::buf(&dst), Arg::int(n)?],
            )?);
            Ok(dst)
        };
        let out_keys = take(&keys, events)?;
        let out_idx = idx.as_ref().map(|i| take(i, events)).transpose()?;
        Ok((out_keys, out_idx))
    }

    /// Eight LSD passes of 4 bits, ping-ponging between two buffer pairs;
    /// the first pass reads `input` and makes the indices.
    fn radix(
        dev: &Dev,
        kernel: &KernelOf<'_>,
        input: &Buf,
        n: usize,
        pairs: bool,
        events: &mut Vec<ClEvent>,
    ) -> Result<(Buf, Option<Buf>)> {
        let groups = n.div_ceil(GROUP * ITEMS);
        let hist = Buf::new(dev, 16 * groups)?;
        let (count, scan, scatter) = (
            kernel("sort_radix_count")?,
            kernel("sort_radix_scan")?,
            kernel("sort_radix_scatter")?,
        );
        let a = (Buf::new(dev, n)?, Buf::new(dev, if pairs { n } else { 1 })?);
        let b = (Buf::new(dev, n)?, Buf::new(dev, if pairs { n } else { 1 })?);
        for pass in 0..8usize {
            let shift = Arg::int(4 * pass)?;
            // Pass 0 reads the input (into b), then b -> a, a -> b, ...: the
            // eighth pass leaves the result in a.
            let (src_keys, src_idx, dst) = if pass == 0 {
                (input, &b.1, &b)
            } else if pass % 2 == 1 {
                (&b.0, &b.1, &a)
            } else {
                (&a.0, &a.1, &b)
            };
            events.push(dev.launch(
                &count,
                &[groups * GROUP],
                &[GROUP],
                &[
                    Arg::buf(src_keys),
                    Arg::int(n)?,
                    shift,
                    Arg::buf(&hist),
                    Arg::int(groups)?,
                ],
            )?);
            events.push(dev.launch(
                &scan,
                &[GROUP],
                &[GROUP],
                &[Arg::buf(&hist), Arg::int(16 * groups)?],
            )?);
            events.push(dev.launch(
                &scatter,
                &[groups * GROUP],
                &[GROUP],
                &[
                    Arg::buf(src_keys),
                    Arg::buf(src_idx),
                    Arg::int(n)?,
                    shift,
                    Arg::buf(&hist),
                    Arg::int(groups)?,
                    Arg::int((pass == 0) as usize)?,
                    Arg::buf(&dst.0),
                    Arg::buf(&dst.1),
                ],
            )?);
        }
        Ok((a.0, pairs.then_some(a.1)))
    }

    /// A kernel-only runner of `spec` on the case's words, uploaded once.
    pub(in crate::ops) fn kernel_runner<'a>(
        case: &'a super::super::tune::SortCase,
        progs: &'a Programs,
        dev: &'a Dev,
        spec: &'static VariantSpec,
    ) -> Result<crate::ops::tuning::Runner<'a>> {
        let input = case
            .on_device
            .words(dev, &super::super::keys::to_words(&case.keys))?;
        let (n, pairs) = (case.keys.len(), case.pairs);
        Ok(Box::new(move || {
            Ok(launch(progs, dev, spec, input, n, pairs)?.2)
        }))
    }
}

#[cfg(feature = "opencl")]
pub(super) use cl::kernel_runner;

/// No device exists in a build without OpenCL.
#[cfg(not(feature = "opencl"))]
pub(super) fn kernel_runner<'a>(
    case: &'a super::tune::SortCase,
    _: &'a Programs,
    dev: &'a Dev,
    _: &'static VariantSpec,
) -> Result<crate::ops::tuning::Runner<'a>> {
    let _ = &case.on_device;
    match *dev {}
}
