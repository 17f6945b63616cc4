//! The rayon CPU backend: the production path when no OpenCL device is used.

/// A description of the CPU backend for logs and reports.
pub fn describe() -> String {
    format!("cpu (rayon, {} threads)", rayon::current_num_threads())
}
