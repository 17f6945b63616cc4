//! The OpenCL C sources in `cl/`, embedded at compile time.
//!
//! The sources shared by every program live here; each operation embeds its
//! own `cl/<op>/*.cl` files with [`cl_source!`](crate::cl_source) in its
//! `OpSpec`, and `ops::all_sources` joins the two lists.
//!
//! `FILTERCTL_CL_DIR=path` (or [`crate::EngineOptions::cl_dir`]) reads them
//! from that folder at run time instead, so kernels can be edited without
//! rebuilding the crate.

use std::path::Path;

use crate::error::{Error, Result};

/// One embedded source: its path under `cl/` and its text.
pub type Source = (&'static str, &'static str);

/// Embeds `cl/<path>` as a [`Source`]: `cl_source!("gaussian/iir.cl")`.
#[macro_export]
macro_rules! cl_source {
    ($path:literal) => {
        (
            $path,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/cl/", $path)),
        )
    };
}

/// The sources that belong to no operation: `common.cl` (prepended to every
/// program), the bandwidth yardstick, the pipelines' plumbing and the
/// inline-PTX helpers of the NVIDIA-only variants.
pub const SHARED: &[Source] = &[
    cl_source!("common.cl"),
    cl_source!("copy.cl"),
    cl_source!("pipeline.cl"),
    cl_source!("ptx.cl"),
];

/// The text of one source file (without `common.cl`): read from `dir`, or
/// looked up in `embedded`.
pub(crate) fn one(file: &str, dir: Option<&Path>, embedded: &[Source]) -> Result<String> {
    match dir {
        Some(d) => {
            let p = d.join(file);
            std::fs::read_to_string(&p).map_err(|source| Error::Io { path: p, source })
        }
        None => embedded
            .iter()
            .find(|(n, _)| *n == file)
            .map(|(_, s)| s.to_string())
            .ok_or_else(|| Error::arg(format!("no embedded kernel source {file}"))),
    }
}

/// The full program text for `files`: `common.cl` followed by each file in
/// order, each numbered from line 1 so build logs point into the right file.
pub fn program_source(files: &[&str], dir: Option<&Path>, embedded: &[Source]) -> Result<String> {
    let mut text = one("common.cl", dir, embedded)?;
    for file in files {
        text.push_str("\n#line 1\n");
        text.push_str(&one(file, dir, embedded)?);
    }
    Ok(text)
}
