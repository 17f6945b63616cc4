//! Safe helpers for output buffers that start uninitialised, and for slices
//! whose element type is only known generically.
//!
//! A fresh output is written where it lies, never cleared first (that
//! would be a pass over memory). Code that writes one proves that it wrote
//! all of it by handing back the same memory as initialised samples
//! (`&mut [T]`): safe code can only make those by writing every sample
//! ([`fill_init`], [`write_copy`], [`super::Simd::strips_into`],
//! [`super::Simd::interleave_quads`], [`Filler`]). The helpers here check
//! that the memory handed back is the memory handed out, and panic if not.

use std::any::TypeId;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;

use rayon::prelude::*;

use crate::error::Error;
use crate::image::{recycle, Sample};

/// Whether `S` and `T` are the same type.
#[inline(always)]
fn same<S: 'static, T: 'static>() -> bool {
    TypeId::of::<S>() == TypeId::of::<T>()
}

/// `s` as a slice of `T` when `S` is `T`.
#[inline(always)]
pub fn cast_slice<S: 'static, T: 'static>(s: &[S]) -> Option<&[T]> {
    // SAFETY: the types are equal, so the cast is the identity.
    same::<S, T>().then(|| unsafe { &*(s as *const [S] as *const [T]) })
}

/// `s` as a slice of `T` when `S` is `T`.
#[inline(always)]
pub fn cast_slice_mut<S: 'static, T: 'static>(s: &mut [S]) -> Option<&mut [T]> {
    // SAFETY: the types are equal, so the cast is the identity.
    same::<S, T>().then(|| unsafe { &mut *(s as *mut [S] as *mut [T]) })
}

/// `s` as uninitialised `T` when `S` is `T`.
#[inline(always)]
pub fn cast_uninit_mut<S: 'static, T: 'static>(
    s: &mut [MaybeUninit<S>],
) -> Option<&mut [MaybeUninit<T>]> {
    // SAFETY: the types are equal, so the cast is the identity.
    same::<S, T>().then(|| unsafe { &mut *(s as *mut [MaybeUninit<S>] as *mut [MaybeUninit<T>]) })
}

/// `s` as initialised samples.
///
/// # Safety
/// Every element of `s` must have been written.
#[inline(always)]
pub(super) unsafe fn assume_init_mut<T>(s: &mut [MaybeUninit<T>]) -> &mut [T] {
    // SAFETY: `MaybeUninit<T>` has `T`'s layout, and the caller guarantees
    // that the values are initialised.
    unsafe { &mut *(s as *mut [MaybeUninit<T>] as *mut [T]) }
}

/// Writes `v` into every element of `s`, and returns it initialised.
pub fn fill_init<T: Copy>(s: &mut [MaybeUninit<T>], v: T) -> &mut [T] {
    for x in s.iter_mut() {
        x.write(v);
    }
    // SAFETY: every element was just written.
    unsafe { assume_init_mut(s) }
}

/// Writes `f` of each pixel of `C` samples of `src` into the same place of
/// `d` (as long as `src`, a multiple of `C`), and returns it initialised.
#[inline]
pub fn write_pixels<'d, S: Copy, T, const C: usize>(
    d: &'d mut [MaybeUninit<T>],
    src: &[S],
    mut f: impl FnMut([S; C]) -> [T; C],
) -> &'d mut [T] {
    assert!(
        d.len() == src.len() && src.len().is_multiple_of(C),
        "write_pixels: lengths differ or are not whole pixels"
    );
    for (d, s) in d.chunks_exact_mut(C).zip(src.chunks_exact(C)) {
        let px: [S; C] = s.try_into().expect("a pixel");
        for (d, v) in d.iter_mut().zip(f(px)) {
            d.write(v);
        }
    }
    // SAFETY: the lengths are equal and whole pixels, so every element
    // was just written.
    unsafe { assume_init_mut(d) }
}

/// Copies `src` into `d` (of the same length), and returns it initialised.
#[inline]
pub fn write_copy<'d, T: Copy>(d: &'d mut [MaybeUninit<T>], src: &[T]) -> &'d mut [T] {
    assert_eq!(d.len(), src.len(), "write_copy: lengths differ");
    for (d, s) in d.iter_mut().zip(src) {
        d.write(*s);
    }
    // SAFETY: the lengths are equal, so every element was just written.
    unsafe { assume_init_mut(d) }
}

/// Outputs of at least this many bytes are worth writing with
/// [`write_stream`]: the input and output outgrow an L3 cache, and a plain
/// store would read every line of the output first.
pub const STREAM_BYTES: usize = 16 << 20;

/// Copies `src` into `d` (of the same length) with stores that bypass the
/// caches where the build has them (x86-64, unless `FILTERCTL_SIMD=portable`
/// chose the portable code: SSE2 `movntdq` for the 16-byte-aligned part,
/// then `sfence`), and returns `d` initialised. For outputs far larger than
/// the caches: each line is written without being read first (a plain
/// store reads it for ownership), and it does not push the input out of
/// the caches. Elsewhere, a plain copy.
#[inline]
pub fn write_stream<'d, T: Sample>(d: &'d mut [MaybeUninit<T>], src: &[T]) -> &'d mut [T] {
    assert_eq!(d.len(), src.len(), "write_stream: lengths differ");
    #[cfg(target_arch = "x86_64")]
    if super::Isa::detect() > super::Isa::Portable {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_sfence, _mm_stream_si128};
        let bytes = std::mem::size_of_val(src);
        let (s, o) = (src.as_ptr().cast::<u8>(), d.as_mut_ptr().cast::<u8>());
        // Bytes up to the first 16-byte boundary of `d`, then whole 16-byte
        // blocks; both multiples of the sample size (a power of two at most
        // 4, which `d`'s address is a multiple of).
        let head = o.align_offset(16).min(bytes);
        let body = (bytes - head) / 16 * 16;
        // SAFETY: `src` and `d` are distinct slices of `bytes` bytes each
        // (`d` is borrowed mutably); every offset below stays under
        // `bytes`. The streaming stores go to 16-byte-aligned addresses
        // (`head` reached the boundary), and SSE2 is part of x86-64. The
        // fence orders them before any later store, so the samples are
        // written when `d` is handed back. Samples are plain data (u8,
        // u16, f32), so their bytes may be copied in any pieces.
        unsafe {
            ptr::copy_nonoverlapping(s, o, head);
            let mut i = head;
            while i < head + body {
                let v = _mm_loadu_si128(s.add(i).cast::<__m128i>());
                _mm_stream_si128(o.add(i).cast::<__m128i>(), v);
                i += 16;
            }
            ptr::copy_nonoverlapping(s.add(i), o.add(i), bytes - i);
            _mm_sfence();
            return assume_init_mut(d);
        }
    }
    write_copy(d, src)
}

/// An uninitialised buffer written piece by piece, front to back: hands
/// out pieces ([`Filler::next`]), takes them back written
/// ([`Filler::commit`]), and once all of it is back, returns the whole
/// buffer initialised ([`Filler::finish`]).
pub struct Filler<'a, T> {
    /// The buffer's start and length.
    start: *mut T,
    len: usize,
    /// The part not handed out yet (its end is the buffer's).
    rest: &'a mut [MaybeUninit<T>],
    /// Elements taken back written: a prefix.
    done: usize,
    /// Invariant in `'a`: pieces come back with exactly the lifetime they
    /// were handed out with.
    _inv: PhantomData<fn(&'a ()) -> &'a ()>,
}

impl<'a, T> Filler<'a, T> {
    /// A filler of `buf`.
    #[inline]
    pub fn new(buf: &'a mut [MaybeUninit<T>]) -> Self {
        let (start, len) = (buf.as_mut_ptr(), buf.len());
        // SAFETY: the same memory as `buf`, which is borrowed for 'a and
        // not used again; everything handed out is derived from `start`,
        // which `finish` uses once they are all back.
        let rest = unsafe { std::slice::from_raw_parts_mut(start, len) };
        Filler {
            start: start.cast(),
            len,
            rest,
            done: 0,
            _inv: PhantomData,
        }
    }

    /// The next `n` elements. Panics if fewer are left.
    #[inline]
    pub fn next(&mut self, n: usize) -> &'a mut [MaybeUninit<T>] {
        let (piece, rest) = std::mem::take(&mut self.rest).split_at_mut(n);
        self.rest = rest;
        piece
    }

    /// Takes back the elements after those already back, written. Panics
    /// unless `piece` is that memory and was handed out.
    #[inline]
    pub fn commit(&mut self, piece: &'a mut [T]) {
        let out = self.len - self.rest.len();
        let ok = ptr::eq(piece.as_ptr(), self.start.wrapping_add(self.done))
            && piece.len() <= out - self.done;
        assert!(ok, "Filler::commit: not the next piece handed out");
        self.done += piece.len();
    }

    /// The whole buffer, initialised. Panics unless all of it is back.
    #[inline]
    pub fn finish(self) -> &'a mut [T] {
        assert_eq!(self.done, self.len, "Filler::finish: pieces missing");
        // SAFETY: every element lies in a piece that came back as `&'a mut
        // [T]`, which safe code can only make by writing it, and with
        // lifetime 'a, so no piece outlives this borrow of the memory it
        // shares. `start` is the buffer's, borrowed for 'a.
        unsafe { std::slice::from_raw_parts_mut(self.start, self.len) }
    }
}

/// Writes `block`, whole rows of `row_len` elements, one column range at
/// a time and two rows at a time: `segs` cuts each row into ranges, left
/// to right, and `f(s, i, first, second)` is called for range `s` of rows
/// `i` and `i + 1` (`second` is `None` where row `i` is the block's last),
/// pairs of rows top to bottom within each range, ranges in order; it
/// must return its pieces written. Returns the block initialised. For work
/// that keeps a few columns of many rows in cache, and makes two rows from
/// one pass over them. Panics unless the ranges cover `0..row_len` in
/// order, each piece comes back as it went out, and `block` holds whole
/// rows.
pub fn fill_segment_pairs<'a, T, F>(
    block: &'a mut [MaybeUninit<T>],
    row_len: usize,
    segs: &[std::ops::Range<usize>],
    mut f: F,
) -> &'a mut [T]
where
    F: for<'c> FnMut(
        usize,
        usize,
        &'c mut [MaybeUninit<T>],
        Option<&'c mut [MaybeUninit<T>]>,
    ) -> (&'c mut [T], Option<&'c mut [T]>),
{
    assert!(
        row_len > 0 && block.len().is_multiple_of(row_len),
        "fill_segment_pairs: a block of whole rows"
    );
    let mut end = 0;
    for r in segs {
        assert!(
            r.start == end && r.end > r.start,
            "fill_segment_pairs: ranges out of order"
        );
        end = r.end;
    }
    assert_eq!(
        end, row_len,
        "fill_segment_pairs: ranges do not cover the row"
    );
    let came_back = |piece: (*const T, usize), done: Option<&mut [T]>| {
        done.is_some_and(|d| ptr::eq(d.as_ptr(), piece.0) && d.len() == piece.1)
    };
    for (s, r) in segs.iter().enumerate() {
        for (i, rows) in block.chunks_mut(2 * row_len).enumerate() {
            let (a, b) = rows.split_at_mut(row_len);
            let a = &mut a[r.clone()];
            let pa = (a.as_ptr().cast::<T>(), a.len());
            let b = (!b.is_empty()).then(|| &mut b[r.clone()]);
            let pb = b.as_ref().map(|b| (b.as_ptr().cast::<T>(), b.len()));
            let (da, db) = f(s, 2 * i, a, b);
            let ok = came_back(pa, Some(da))
                && match pb {
                    Some(pb) => came_back(pb, db),
                    None => db.is_none(),
                };
            assert!(
                ok,
                "fill_segment_pairs: piece {s} of rows {} did not come back",
                2 * i
            );
        }
    }
    // SAFETY: the ranges cover each row exactly (checked above: in order,
    // adjacent, ending at `row_len`), and each range of each row came back
    // from `f` as initialised elements at the same address and length.
    unsafe { assume_init_mut(block) }
}

/// Writes `buf` in chunks of `chunk` elements on the rayon pool: `f(state,
/// index, chunk)` must return its chunk written, with `state` made by
/// `init` per rayon job (as [`ParallelIterator::for_each_init`]). Returns
/// `buf` initialised. Panics if `f` returns other memory.
pub fn par_fill<'a, T, I, Init, F>(
    buf: &'a mut [MaybeUninit<T>],
    chunk: usize,
    init: Init,
    f: F,
) -> &'a mut [T]
where
    T: Send,
    Init: Fn() -> I + Sync + Send,
    F: for<'c> Fn(&mut I, usize, &'c mut [MaybeUninit<T>]) -> &'c mut [T] + Sync + Send,
{
    buf.par_chunks_mut(chunk)
        .enumerate()
        .for_each_init(init, |state, (i, c)| {
            let (p, n) = (c.as_ptr().cast::<T>(), c.len());
            let done = f(state, i, c);
            let ok = ptr::eq(done.as_ptr(), p) && done.len() == n;
            assert!(ok, "par_fill: chunk {i} did not come back");
        });
    // SAFETY: every chunk came back from `f` as initialised samples at the
    // same address and length, and the chunks cover `buf`.
    unsafe { assume_init_mut(buf) }
}

/// An empty vector with room for exactly `n` elements, or
/// [`Error::OutOfMemory`] where the system refuses the memory (instead of
/// the abort of `Vec::with_capacity`).
pub fn try_with_capacity<T>(n: usize) -> Result<Vec<T>, Error> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| out_of_memory::<T>(n))?;
    Ok(v)
}

/// `n` samples of zero (each sample type's default), or
/// [`Error::OutOfMemory`]. Like `vec![T::default(); n]`, the memory comes
/// from the allocator already zeroed (fresh pages are not written), so an
/// untouched part costs nothing.
pub fn try_zeroed<T: Sample>(n: usize) -> Result<Vec<T>, Error> {
    if n == 0 || std::mem::size_of::<T>() == 0 {
        return Ok(Vec::new());
    }
    let layout = std::alloc::Layout::array::<T>(n).map_err(|_| out_of_memory::<T>(n))?;
    // SAFETY: the layout has a non-zero size (n > 0, T not zero-sized).
    let p = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<T>();
    if p.is_null() {
        return Err(out_of_memory::<T>(n));
    }
    // SAFETY: `p` was allocated by the global allocator with the layout of
    // `[T; n]`, so capacity n matches; every `Sample` (u8, u16, f32) is
    // valid with all bits zero, and that value is its default.
    Ok(unsafe { Vec::from_raw_parts(p, n, n) })
}

/// The error for `n` elements of `T` that could not be allocated.
fn out_of_memory<T>(n: usize) -> Error {
    Error::OutOfMemory {
        what: format!("a buffer of {n} {}-byte elements", std::mem::size_of::<T>()),
        bytes: (n as u64).saturating_mul(std::mem::size_of::<T>() as u64),
    }
}

/// A vector of `n` samples written by `f`, which must return its argument
/// written (or an error). The memory is not cleared first: it is a large
/// dropped image's buffer where one of about this size is kept
/// ([`crate::image::recycle`]), or new memory, for which transparent huge
/// pages are asked if it is large ([`advise_huge_pages`]). Memory the system
/// refuses is an [`Error::OutOfMemory`] (after the kept buffers are freed
/// and the allocation tried again). Panics if `f` returns other memory.
pub fn vec_filled<T, E, F>(n: usize, f: F) -> Result<Vec<T>, E>
where
    T: Send + 'static,
    F: for<'x> FnOnce(&'x mut [MaybeUninit<T>]) -> Result<&'x mut [T], E>,
    E: From<Error>,
{
    let mut v = match recycle::take::<T>(n) {
        Some(v) => v,
        None => {
            let mut v = try_with_capacity::<T>(n).or_else(|_| {
                recycle::release();
                try_with_capacity::<T>(n)
            })?;
            advise_huge_pages(v.spare_capacity_mut());
            v
        }
    };
    let spare = &mut v.spare_capacity_mut()[..n];
    let p = spare.as_ptr().cast::<T>();
    let done = f(spare)?;
    assert!(
        ptr::eq(done.as_ptr(), p) && done.len() == n,
        "vec_filled: the buffer did not come back"
    );
    // SAFETY: `f` returned the first n elements of the spare capacity as
    // initialised samples.
    unsafe { v.set_len(n) };
    Ok(v)
}

/// Overwrites `s` through `f`, which sees it as uninitialised and must
/// return it written. Should `f` panic or return other memory (a panic),
/// `s` is reset to `T::default()` before the panic goes on, so it never
/// holds uninitialised values.
pub fn overwrite<T: Copy + Default, F>(s: &mut [T], f: F)
where
    F: for<'x> FnOnce(&'x mut [MaybeUninit<T>]) -> &'x mut [T],
{
    /// Resets the samples when dropped (only on a panic).
    struct Reset<T: Copy + Default> {
        p: *mut T,
        n: usize,
    }
    impl<T: Copy + Default> Drop for Reset<T> {
        fn drop(&mut self) {
            for i in 0..self.n {
                // SAFETY: `p..p + n` is the caller's slice, borrowed for
                // this call, and the view given to `f` is no longer used.
                unsafe { self.p.add(i).write(T::default()) };
            }
        }
    }
    let (p, n) = (s.as_mut_ptr(), s.len());
    let reset = Reset { p, n };
    // SAFETY: `MaybeUninit<T>` has `T`'s layout; the view is `s`'s memory,
    // derived from `p` and not used after `f` returns. Whatever `f` leaves
    // there is initialised again below or by `reset`.
    let view = unsafe { std::slice::from_raw_parts_mut(p.cast::<MaybeUninit<T>>(), n) };
    let done = f(view);
    assert!(
        ptr::eq(done.as_ptr(), p) && done.len() == n,
        "overwrite: the slice did not come back"
    );
    std::mem::forget(reset);
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
/// Asks the kernel to back a large output buffer with transparent huge
/// pages (fewer page faults while the CPU paths write it for the first time).
pub fn advise_huge_pages<T>(buf: &mut [T]) {
    const HUGE: usize = 2 << 20;
    let start = buf.as_mut_ptr() as usize;
    let end = start + std::mem::size_of_val(buf);
    let (a, b) = (start.next_multiple_of(HUGE), end / HUGE * HUGE);
    if b >= a + 2 * HUGE {
        // SAFETY: [a, b) lies inside `buf`, which we own; MADV_HUGEPAGE is
        // advice about backing pages and never changes the memory's contents.
        // Failure (no THP support) only means the advice is not taken.
        unsafe {
            libc::madvise(a as *mut libc::c_void, b - a, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
)))]
/// Asks nothing where transparent huge pages are not available.
pub fn advise_huge_pages<T>(_: &mut [T]) {}
