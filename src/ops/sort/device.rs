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

    /// Four LSD passes of 8 bits, ping-ponging between two buffer pairs;
    /// the first pass reads `input` and makes the indices.
    fn radix(
        dev: &Dev,
        kernel: &KernelOf<'_>,
        input: &Buf,
        n: usize,
        pairs: bool,
        events: &mut Vec<ClEvent>,
    ) -> Result<(Buf, Option<Buf>)> {
        let k = RadixKernels {
            count: kernel("sort_radix_count")?,
            reduce: kernel("sort_radix_reduce")?,
            top: kernel("sort_radix_top")?,
            down: kernel("sort_radix_down")?,
            scatter: kernel("sort_radix_scatter")?,
        };
        let groups = n.div_ceil(tile_words(pairs));
        // The count table's scan walks blocks of `per` tiles, one
        // work-group per block, then the blocks in one work-group: about
        // sqrt(groups) steps each.
        let per = groups.isqrt().max(1);
        let blocks = groups.div_ceil(per);
        let sizes = RadixSizes {
            n,
            groups,
            per,
            blocks,
        };
        let hist = Buf::new(dev, RADIX * groups)?;
        let sums = Buf::new(dev, RADIX * blocks)?;
        let a = (Buf::new(dev, n)?, Buf::new(dev, if pairs { n } else { 1 })?);
        let b = (Buf::new(dev, n)?, Buf::new(dev, if pairs { n } else { 1 })?);
        for pass in 0..4usize {
            // Pass 0 reads the input (into b), then b -> a, a -> b, b -> a:
            // the fourth pass leaves the result in a.
            let (src, dst) = match pass {
                0 => ((input, &b.1), &b),
                1 | 3 => ((&b.0, &b.1), &a),
                _ => ((&a.0, &a.1), &b),
            };
            radix_pass(dev, &k, &sizes, pass, src, dst, (&hist, &sums), events)?;
        }
        Ok((a.0, pairs.then_some(a.1)))
    }

    /// Digits of the radix passes (8 bits).
    const RADIX: usize = 256;

    /// Words per radix tile (one work-group): ITEMS per work-item for
    /// keys, half as many with pairs (the kernels' `PER`).
    fn tile_words(pairs: bool) -> usize {
        GROUP * if pairs { ITEMS / 2 } else { ITEMS }
    }

    /// The radix kernels of one program.
    struct RadixKernels {
        count: crate::backend::opencl::Kernel,
        reduce: crate::backend::opencl::Kernel,
        top: crate::backend::opencl::Kernel,
        down: crate::backend::opencl::Kernel,
        scatter: crate::backend::opencl::Kernel,
    }

    /// Words, tiles, tiles per scan block, and scan blocks.
    struct RadixSizes {
        n: usize,
        groups: usize,
        per: usize,
        blocks: usize,
    }

    /// One pass (digit `pass`, bits 8 pass .. 8 pass + 7) from `src` (keys,
    /// indices) into `dst`, with the count table and block sums `tables`.
    #[allow(clippy::too_many_arguments)]
    fn radix_pass(
        dev: &Dev,
        k: &RadixKernels,
        s: &RadixSizes,
        pass: usize,
        src: (&Buf, &Buf),
        dst: &(Buf, Buf),
        (hist, sums): (&Buf, &Buf),
        events: &mut Vec<ClEvent>,
    ) -> Result<()> {
        let (n, groups, per, blocks) = (
            Arg::int(s.n)?,
            Arg::int(s.groups)?,
            Arg::int(s.per)?,
            Arg::int(s.blocks)?,
        );
        let shift = Arg::int(8 * pass)?;
        let (tiles, scan) = ([s.groups * GROUP], [s.blocks * GROUP]);
        let l = [GROUP];
        let h = Arg::buf(hist);
        events.push(dev.launch(&k.count, &tiles, &l, &[Arg::buf(src.0), n, shift, h, groups])?);
        events.push(dev.launch(&k.reduce, &scan, &l, &[h, groups, per, Arg::buf(sums), blocks])?);
        events.push(dev.launch(&k.top, &l, &l, &[Arg::buf(sums), blocks])?);
        events.push(dev.launch(&k.down, &scan, &l, &[h, groups, per, Arg::buf(sums), blocks])?);
        let iota = Arg::int((pass == 0) as usize)?;
        let args = [
            Arg::buf(src.0),
            Arg::buf(src.1),
            n,
            shift,
            h,
            groups,
            iota,
            Arg::buf(&dst.0),
            Arg::buf(&dst.1),
        ];
        events.push(dev.launch(&k.scatter, &tiles, &l, &args)?);
        Ok(())
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
