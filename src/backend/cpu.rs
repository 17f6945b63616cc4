//! The rayon CPU backend: the production path when no OpenCL device is used.

/// A description of the CPU backend for logs and reports.
pub fn describe() -> String {
    format!("cpu (rayon, {} threads)", rayon::current_num_threads())
}

#[cfg(all(
    target_os = "linux",
    any(target_arch = "x86_64", target_arch = "aarch64")
))]
/// Asks the kernel to back a large output buffer with transparent huge
/// pages (fewer page faults while the CPU paths write it for the first time).
pub(crate) fn advise_huge_pages<T>(buf: &mut [T]) {
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
pub(crate) fn advise_huge_pages<T>(_: &mut [T]) {}
