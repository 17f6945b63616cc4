//! Large sample buffers kept for reuse: when an [`Image`](super::Image) of
//! at least [`MIN_BYTES`] is dropped, its buffer is kept here, and the next
//! CPU output of about its size is written into it instead of into fresh
//! memory.
//!
//! Fresh memory is costly where the CPU paths are fast: the system hands
//! out large allocations as new pages, and the kernel clears each page at
//! its first write. On a 2-core AVX2 VM that clearing was 32% of a `perf`
//! profile of the median benchmark (3x3 to 7x7, u8 to f32, 3840x2160;
//! 2026-11-29), and the benchmark's times varied from process to process by
//! up to 3x with the host's own paging.
//! A loop over frames, a bench, or a pipeline whose stages drop their
//! inputs writes into memory it has already touched instead. (OpenCV's C++
//! callers get the same by passing the same `dst` each time.)
//!
//! What is kept is bounded: at most [`MAX_BUFFERS`] buffers and
//! [`limit`] bytes (default [`DEFAULT_LIMIT`]); the oldest go first.
//! [`set_limit`]`(0)` turns keeping off, and [`release`] frees what is kept
//! (an allocation that fails releases it and tries once more). Buffers are
//! only handed to code that writes every sample before anything reads it
//! (`simd::mem::vec_filled`), so a reused buffer's old samples are never
//! seen.

use std::any::Any;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

/// Buffers smaller than this are not kept: the allocator reuses small
/// blocks itself (glibc keeps blocks below 32 MiB in its heap after the
/// first is freed; this keeps everything from 4 MiB, as numpy asks for huge
/// pages from 4 MiB).
pub const MIN_BYTES: usize = 4 << 20;
/// At most this many buffers are kept (a pipeline alternates between two
/// outputs; a bench of several sizes needs a few more).
pub const MAX_BUFFERS: usize = 4;
/// The default bound on the bytes kept: four 3840x2160 RGBA f32 images.
pub const DEFAULT_LIMIT: usize = 512 << 20;

/// A kept buffer: a `Vec<T>` of some sample type, and its capacity in bytes.
struct Kept {
    bytes: usize,
    buf: Box<dyn Any + Send>,
}

/// Kept buffers (oldest first) and their bound.
struct Pool {
    kept: Mutex<Vec<Kept>>,
    limit: AtomicUsize,
}

/// The process's pool.
static POOL: Pool = Pool::new();

/// The bound on the bytes of buffers kept for reuse.
pub fn limit() -> usize {
    POOL.limit.load(Ordering::Relaxed)
}

/// Sets the bound on the bytes of buffers kept for reuse (0: keep none),
/// and frees the oldest kept buffers beyond it.
pub fn set_limit(bytes: usize) {
    POOL.set_limit(bytes)
}

/// Frees every kept buffer.
pub fn release() {
    let freed = std::mem::take(&mut *POOL.lock());
    drop(freed);
}

/// The bytes of the buffers kept now.
pub fn kept_bytes() -> usize {
    POOL.kept_bytes()
}

/// Keeps `buf` for reuse if it is large enough and fits the bound.
pub(crate) fn give<T: Send + 'static>(buf: Vec<T>) {
    POOL.give(buf)
}

/// An empty kept buffer of `T` with room for `n` elements and at most a
/// quarter more (the smallest such), if there is one.
pub(crate) fn take<T: Send + 'static>(n: usize) -> Option<Vec<T>> {
    POOL.take(n)
}

impl Pool {
    const fn new() -> Pool {
        Pool {
            kept: Mutex::new(Vec::new()),
            limit: AtomicUsize::new(DEFAULT_LIMIT),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Vec<Kept>> {
        // Every change is one push or remove, so a panicking holder left
        // a whole list.
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn kept_bytes(&self) -> usize {
        self.lock().iter().map(|k| k.bytes).sum()
    }

    fn set_limit(&self, bytes: usize) {
        let freed = {
            let mut kept = self.lock();
            self.limit.store(bytes, Ordering::Relaxed);
            trim(&mut kept, bytes)
        };
        drop(freed);
    }

    fn give<T: Send + 'static>(&self, mut buf: Vec<T>) {
        let bytes = buf.capacity().saturating_mul(std::mem::size_of::<T>());
        if bytes < MIN_BYTES {
            return;
        }
        buf.clear();
        let freed = {
            let mut kept = self.lock();
            // Read under the lock, which `set_limit` holds while it trims.
            let limit = self.limit.load(Ordering::Relaxed);
            if bytes > limit {
                drop(kept);
                return;
            }
            kept.push(Kept {
                bytes,
                buf: Box::new(buf),
            });
            trim(&mut kept, limit)
        };
        // Freed outside the lock: returning memory to the system can take
        // a while.
        drop(freed);
    }

    fn take<T: Send + 'static>(&self, n: usize) -> Option<Vec<T>> {
        if n.saturating_mul(std::mem::size_of::<T>()) < MIN_BYTES {
            return None;
        }
        let mut kept = self.lock();
        let fits = |k: &Kept| {
            k.buf
                .downcast_ref::<Vec<T>>()
                .is_some_and(|v| v.capacity() >= n && v.capacity() - n <= n / 4)
        };
        let at = (0..kept.len())
            .filter(|&i| fits(&kept[i]))
            .min_by_key(|&i| kept[i].bytes)?;
        kept.remove(at).buf.downcast::<Vec<T>>().ok().map(|b| *b)
    }
}

/// Removes the oldest buffers until at most [`MAX_BUFFERS`] remain and
/// their bytes are within `limit`, and returns them (to be freed outside
/// the lock).
fn trim(kept: &mut Vec<Kept>, limit: usize) -> Vec<Kept> {
    let mut total: usize = kept.iter().map(|k| k.bytes).sum();
    let mut n = 0;
    while n < kept.len() && (kept.len() - n > MAX_BUFFERS || total > limit) {
        total -= kept[n].bytes;
        n += 1;
    }
    kept.drain(..n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_are_kept_bounded_and_handed_back_by_type_and_size() {
        // A pool of its own: tests in parallel drop images into the
        // process's pool.
        let pool = Pool::new();
        let big = MIN_BYTES; // f32 elements: 4 MIN_BYTES
        let v: Vec<f32> = Vec::with_capacity(big);
        let p = v.as_ptr();
        pool.give(v);
        assert_eq!(pool.kept_bytes(), 4 * MIN_BYTES);
        // Another type, a size it cannot hold, one it would hold with more
        // than a quarter to spare, and one under MIN_BYTES get nothing.
        assert!(pool.take::<u32>(big).is_none());
        assert!(pool.take::<f32>(big + 1).is_none());
        assert!(pool.take::<f32>(big * 3 / 4).is_none());
        assert!(pool.take::<u8>(MIN_BYTES - 1).is_none());
        let got = pool.take::<f32>(big - big / 8).expect("kept");
        assert_eq!((got.as_ptr(), got.len()), (p, 0));
        assert_eq!(pool.kept_bytes(), 0);
        // Small buffers are not kept; the oldest go first past the count.
        pool.give(Vec::<u8>::with_capacity(MIN_BYTES - 1));
        assert_eq!(pool.kept_bytes(), 0);
        for k in 0..MAX_BUFFERS + 2 {
            pool.give(Vec::<u8>::with_capacity(MIN_BYTES + k));
        }
        let sizes: Vec<usize> = pool.lock().iter().map(|k| k.bytes).collect();
        assert_eq!(
            sizes,
            (2..MAX_BUFFERS + 2)
                .map(|k| MIN_BYTES + k)
                .collect::<Vec<_>>()
        );
        // The smallest that fits is taken; a lower bound frees the oldest.
        assert_eq!(
            pool.take::<u8>(MIN_BYTES).map(|v| v.capacity()),
            Some(MIN_BYTES + 2)
        );
        pool.set_limit(2 * MIN_BYTES + 10);
        let sizes: Vec<usize> = pool.lock().iter().map(|k| k.bytes).collect();
        assert_eq!(sizes, vec![MIN_BYTES + 4, MIN_BYTES + 5]);
        pool.set_limit(0);
        assert_eq!(pool.kept_bytes(), 0);
        pool.give(Vec::<u8>::with_capacity(MIN_BYTES));
        assert_eq!(pool.kept_bytes(), 0);
    }
}
