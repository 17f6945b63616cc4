//! One rayon task: a band of output rows, both axes (see the module docs
//! of `cpu`), and the horizontal filter of each chunk of rows.

use std::any::TypeId;
use std::mem::MaybeUninit;
use std::ops::Range;

use super::iir::{border_states, Iir, STATE_ROWS};
use super::kernels::{Anticausal, BlockIir, Causal};
use super::{Axis, Plan, Rows, STEP_ROWS};
use crate::image::Sample;
use crate::ops::gaussian::reference::source_index;
use crate::ops::gaussian::Border;
use crate::simd::mem::{self, Filler};
use crate::simd::Simd;

/// Per-task buffers.
#[derive(Default)]
struct Work {
    /// Each column's reference level, its first sample.
    refs: Vec<f32>,
    /// Causal and anticausal states down the image's columns (4 rows each).
    fw: Vec<f32>,
    bw: Vec<f32>,
    /// One chunk of vertically filtered rows.
    rows: Vec<f32>,
    /// The causal half of one segment (u8, u16), written before it is read.
    park: Vec<MaybeUninit<f32>>,
    /// The horizontal filter's.
    block: Block,
}

/// The horizontal filter's buffers.
#[derive(Default)]
struct Block {
    /// The chunk transposed, and its horizontal result.
    x: Vec<f32>,
    y: Vec<f32>,
    /// Start states of a block (8 rows of its width).
    init: Vec<f32>,
    /// f64 sums for mirror borders.
    acc: Vec<f64>,
}

thread_local! {
    /// Each worker's buffers, kept between bands and calls.
    static WORK: std::cell::Cell<Option<Box<Work>>> = const { std::cell::Cell::new(None) };
}

/// Work buffers above this many bytes are not kept for the next call.
const KEEP_BYTES: usize = 64 << 20;

impl Work {
    /// This thread's buffers (or new ones).
    fn take() -> Box<Work> {
        WORK.with(|w| w.take()).unwrap_or_default()
    }

    /// Hands the buffers back for the thread's next band, unless they are huge.
    fn give_back(self: Box<Work>) {
        let b = &self.block;
        let floats = [
            &self.refs, &self.fw, &self.bw, &self.rows, &b.x, &b.y, &b.init,
        ]
        .iter()
        .map(|v| v.capacity())
        .sum::<usize>()
            + self.park.capacity();
        let bytes = 4 * floats + 8 * b.acc.capacity();
        if bytes <= KEEP_BYTES {
            WORK.with(|w| w.set(Some(self)));
        }
    }
}

/// Row ranges of at most `size` rows covering `r`.
fn chunks(r: Range<usize>, size: usize) -> impl DoubleEndedIterator<Item = Range<usize>> {
    let (start, end) = (r.start, r.end);
    (0..(end - start).div_ceil(size))
        .map(move |i| start + i * size..(start + (i + 1) * size).min(end))
}

/// One band: output rows `r0..` (as many as `dst` holds), all written and
/// returned as such.
#[inline(always)]
pub(super) fn band_task<'d, T: Sample, const C: usize, S: Simd>(
    simd: S,
    plan: &Plan,
    src: &Rows<T>,
    r0: usize,
    dst: &'d mut [MaybeUninit<T>],
) -> &'d mut [T] {
    let row_len = plan.width * C;
    let r1 = r0 + dst.len() / row_len;
    let mut wk = Work::take();
    grown(&mut wk.rows, plan.chunk.min(r1 - r0) * row_len);
    let band = Band {
        simd,
        plan,
        src: *src,
        out_rows: r0..r1,
        row_len,
    };
    let mut out = Filler::new(dst);
    match &plan.fy {
        Axis::Copy => band.copy::<C>(&mut wk, &mut out),
        Axis::Fir { taps, border } => band.fir::<C>(taps, *border, &mut wk, &mut out),
        Axis::Iir { c, border } => band.iir::<C>(c, *border, &mut wk, &mut out),
    }
    wk.give_back();
    out.finish()
}

/// What a band's steps share.
struct Band<'p, T, S> {
    simd: S,
    plan: &'p Plan,
    src: Rows<'p, T>,
    /// The band's output rows.
    out_rows: Range<usize>,
    row_len: usize,
}

impl<T: Sample, S: Simd> Band<'_, T, S> {
    /// The vertical axis copied, chunk by chunk.
    #[inline(always)]
    fn copy<'d, const C: usize>(&self, wk: &mut Work, out: &mut Filler<'d, T>) {
        let row_len = self.row_len;
        for ch in chunks(self.out_rows.clone(), self.plan.chunk) {
            let nr = ch.len();
            for (i, d) in ch.clone().zip(wk.rows.chunks_exact_mut(row_len)) {
                for (d, s) in d.iter_mut().zip(self.src.row(i)) {
                    *d = s.to_f32();
                }
            }
            self.horizontal_chunk::<C>(nr, wk, out);
        }
    }

    /// The vertical FIR, chunk by chunk.
    #[inline(always)]
    fn fir<'d, const C: usize>(
        &self,
        taps: &[f32],
        border: Border,
        wk: &mut Work,
        out: &mut Filler<'d, T>,
    ) {
        let (row_len, r) = (self.row_len, (taps.len() / 2) as i64);
        for ch in chunks(self.out_rows.clone(), self.plan.chunk) {
            let nr = ch.len();
            for (i, d) in ch.clone().zip(wk.rows.chunks_exact_mut(row_len)) {
                d.fill(0.0);
                for (k, &t) in taps.iter().enumerate() {
                    let s = source_index(i as i64 + k as i64 - r, self.plan.height as i64, border);
                    for (d, s) in d.iter_mut().zip(self.src.row(s)) {
                        *d += t * s.to_f32();
                    }
                }
            }
            self.horizontal_chunk::<C>(nr, wk, out);
        }
    }

    /// The next `nr` output rows: the horizontal filter of `wk.rows`.
    #[inline(always)]
    fn horizontal_chunk<'d, const C: usize>(
        &self,
        nr: usize,
        wk: &mut Work,
        out: &mut Filler<'d, T>,
    ) {
        let n = nr * self.row_len;
        let o = mem::fill_init(out.next(n), T::default());
        horizontal::<T, C, S>(self.simd, self.plan, &wk.rows[..n], o, &mut wk.block);
        out.commit(o);
    }

    /// The vertical recursion, segment by segment, so that the rows in
    /// flight stay in cache: the causal pass carries on down the segment,
    /// its half parked in the output rows themselves for f32 (a buffer
    /// otherwise); the anticausal pass starts from zero `memory` rows below
    /// the segment (or from the border), then runs back up through it, and
    /// each chunk it finishes is filtered horizontally into the output.
    #[inline(always)]
    fn iir<'d, const C: usize>(
        &self,
        c: &Iir,
        border: Border,
        wk: &mut Work,
        out: &mut Filler<'d, T>,
    ) {
        let (row_len, (r0, r1)) = (self.row_len, (self.out_rows.start, self.out_rows.end));
        let Work {
            refs,
            fw,
            bw,
            rows,
            park,
            block,
        } = wk;
        let refs = grown(refs, row_len);
        for (r, x) in refs.iter_mut().zip(self.src.row(0)) {
            *r = x.to_f32();
        }
        let refs: &[f32] = refs;
        let fw = grown(fw, STATE_ROWS * row_len);
        let bw = grown(bw, STATE_ROWS * row_len);
        self.causal_start(c, border, refs, fw, &mut block.acc);
        let in_place = TypeId::of::<T>() == TypeId::of::<f32>();
        let parked_len = if in_place {
            0
        } else {
            self.plan.segment.min(r1 - r0) * row_len
        };
        if park.len() < parked_len {
            park.resize(parked_len, MaybeUninit::uninit());
        }
        for sg in chunks(r0..r1, self.plan.segment) {
            let dst = out.next(sg.len() * row_len);
            let park = match in_place {
                true => None,
                false => Some(&mut park[..sg.len() * row_len]),
            };
            let (seg, parked) = self.causal_segment(c, sg.clone(), refs, fw, dst, park);
            self.anti_start(c, border, sg.end, refs, bw, &mut block.acc);
            let anti = (c, refs, &mut *bw, parked.as_deref());
            self.anti_segment::<C>(anti, sg, seg, rows, block);
            out.commit(seg);
        }
    }

    /// The causal state entering the band's first row into `fw`: from the
    /// border, or from zero `memory` rows above, through the rows in between.
    #[inline(always)]
    fn causal_start(
        &self,
        c: &Iir,
        border: Border,
        refs: &[f32],
        fw: &mut [f32],
        acc: &mut Vec<f64>,
    ) {
        let (n, r0, src) = (self.plan.height, self.out_rows.start, self.src);
        let start = r0.saturating_sub(c.memory);
        if start == 0 {
            let states = (Some(&mut *fw), None);
            border_states(
                c,
                border,
                (n, self.row_len),
                |i| src.row(i),
                refs,
                states,
                acc,
            );
        } else {
            fw.fill(0.0);
        }
        for ch in chunks(start..r0, STEP_ROWS) {
            let st = &mut *fw;
            let mut causal = Causal {
                c,
                src,
                refs,
                rows: ch,
                st,
            };
            self.simd.strips(self.row_len, &mut causal);
        }
    }

    /// The causal pass down segment `sg` from the state `fw`, into `dst`
    /// (f32: the causal half) or into `park` (u8, u16: `dst` is zeroed, to
    /// be written by the horizontal pass). Returns both written.
    #[inline(always)]
    fn causal_segment<'d, 'w>(
        &self,
        c: &Iir,
        sg: Range<usize>,
        refs: &[f32],
        fw: &mut [f32],
        dst: &'d mut [MaybeUninit<T>],
        park: Option<&'w mut [MaybeUninit<f32>]>,
    ) -> (&'d mut [T], Option<&'w mut [f32]>) {
        let row_len = self.row_len;
        let mut seg = Filler::new(dst);
        let mut parked = park.map(Filler::new);
        for ch in chunks(sg, STEP_ROWS) {
            let n = ch.len() * row_len;
            let piece = seg.next(n);
            let st = &mut *fw;
            let mut causal = Causal {
                c,
                src: self.src,
                refs,
                rows: ch,
                st,
            };
            match parked.as_mut() {
                None => {
                    let o = mem::cast_uninit_mut::<T, f32>(piece).expect("f32 samples");
                    let o = self.simd.strips_into(row_len, o, &mut causal);
                    seg.commit(mem::cast_slice_mut::<f32, T>(o).expect("f32 samples"));
                }
                Some(p) => {
                    // Zeroed, to be initialised, just before the
                    // horizontal pass writes it, while in cache.
                    seg.commit(mem::fill_init(piece, T::default()));
                    let o = p.next(n);
                    p.commit(self.simd.strips_into(row_len, o, &mut causal));
                }
            }
        }
        (seg.finish(), parked.map(Filler::finish))
    }

    /// The anticausal state entering segment row `end - 1` from below into
    /// `bw`: from the border, or from zero `memory` rows below.
    #[inline(always)]
    fn anti_start(
        &self,
        c: &Iir,
        border: Border,
        end: usize,
        refs: &[f32],
        bw: &mut [f32],
        acc: &mut Vec<f64>,
    ) {
        let (n, src, row_len) = (self.plan.height, self.src, self.row_len);
        let below = (end + c.memory).min(n);
        if below == n {
            let states = (None, Some(&mut *bw));
            border_states(c, border, (n, row_len), |i| src.row(i), refs, states, acc);
        } else {
            bw.fill(0.0);
        }
        for ch in chunks(end..below, STEP_ROWS).rev() {
            let st = &mut *bw;
            let mut anti = Anticausal::<T, f32> {
                c,
                src,
                refs,
                rows: ch,
                st,
                io: None,
            };
            self.simd.strips(row_len, &mut anti);
        }
    }

    /// The anticausal pass up segment `sg`, chunk by chunk, each chunk then
    /// filtered horizontally into `seg`. `anti`: the filter, the reference
    /// levels, the states and the parked causal half (else it is in `seg`).
    #[inline(always)]
    fn anti_segment<const C: usize>(
        &self,
        (c, refs, bw, parked): (&Iir, &[f32], &mut [f32], Option<&[f32]>),
        sg: Range<usize>,
        seg: &mut [T],
        rows: &mut [f32],
        block: &mut Block,
    ) {
        let row_len = self.row_len;
        for ch in chunks(sg.clone(), self.plan.chunk).rev() {
            let span = (ch.start - sg.start) * row_len..(ch.end - sg.start) * row_len;
            let rows = &mut rows[..ch.len() * row_len];
            for sub in chunks(ch.clone(), STEP_ROWS).rev() {
                let at = (sub.start - sg.start) * row_len..(sub.end - sg.start) * row_len;
                let half = match parked {
                    Some(p) => &p[at],
                    None => mem::cast_slice::<T, f32>(&seg[at]).expect("f32 samples"),
                };
                let out =
                    &mut rows[(sub.start - ch.start) * row_len..(sub.end - ch.start) * row_len];
                let st = &mut *bw;
                let io = Some((half, out));
                let mut anti = Anticausal {
                    c,
                    src: self.src,
                    refs,
                    rows: sub,
                    st,
                    io,
                };
                self.simd.strips(row_len, &mut anti);
            }
            horizontal::<T, C, S>(self.simd, self.plan, rows, &mut seg[span], block);
        }
    }
}

/// The horizontal filter of a chunk of rows (`rows`, f32) into `dst`.
#[inline(always)]
fn horizontal<D: Sample, const C: usize, S: Simd>(
    simd: S,
    plan: &Plan,
    rows: &[f32],
    dst: &mut [D],
    b: &mut Block,
) {
    let (w, row_len) = (plan.width, plan.width * C);
    let m = rows.len() / plan.width;
    let (x, y) = (grown(&mut b.x, w * m), grown(&mut b.y, w * m));
    match &plan.fx {
        Axis::Copy => {
            for (d, s) in dst.iter_mut().zip(rows) {
                *d = D::from_f32(*s);
            }
            return;
        }
        Axis::Fir { taps, border } => {
            simd.transpose_in::<C>(rows, row_len, x, m);
            fir_block(taps, *border, x, y, w, m);
        }
        Axis::Iir { c, border } => {
            simd.transpose_in::<C>(rows, row_len, x, m);
            let x: &[f32] = x;
            let init = grown(&mut b.init, 2 * STATE_ROWS * m);
            let (fw, bw) = init.split_at_mut(STATE_ROWS * m);
            let (row, refs) = (|i: usize| &x[i * m..][..m], &x[..m]);
            border_states(
                c,
                *border,
                (w, m),
                row,
                refs,
                (Some(fw), Some(bw)),
                &mut b.acc,
            );
            simd.strips(m, &mut BlockIir { c, x, y, m, init });
        }
    }
    simd.transpose_out::<D, C>(y, m, dst, row_len);
}

/// The sampled Gaussian down the columns of the block `x` (`n` rows of `m`).
#[inline(always)]
fn fir_block(t: &[f32], border: Border, x: &[f32], y: &mut [f32], n: usize, m: usize) {
    let r = (t.len() / 2) as i64;
    for (i, yr) in y.chunks_exact_mut(m).enumerate() {
        yr.fill(0.0);
        for (k, &tk) in t.iter().enumerate() {
            let s = source_index(i as i64 + k as i64 - r, n as i64, border);
            for (yv, xv) in yr.iter_mut().zip(&x[s * m..][..m]) {
                *yv += tk * xv;
            }
        }
    }
}

/// The first `n` entries of `v`, grown to that size if needed.
fn grown<T: Default + Clone>(v: &mut Vec<T>, n: usize) -> &mut [T] {
    if v.len() < n {
        v.resize(n, T::default());
    }
    &mut v[..n]
}
