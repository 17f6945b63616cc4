//! The OpenCL C sources in `cl/`, embedded at compile time.
//!
//! `FILTERCTL_CL_DIR=path` (or [`crate::EngineOptions::cl_dir`]) reads them
//! from that folder at run time instead, so kernels can be edited without
//! rebuilding the crate.

use std::path::Path;

use crate::error::{Error, Result};

/// Every source file: (file name, embedded text). `common.cl` is prepended to the others.
pub const SOURCES: &[(&str, &str)] = &[
    ("common.cl", include_str!("../cl/common.cl")),
    ("copy.cl", include_str!("../cl/copy.cl")),
    ("transpose.cl", include_str!("../cl/transpose.cl")),
    ("minmax.cl", include_str!("../cl/minmax.cl")),
    ("normalize.cl", include_str!("../cl/normalize.cl")),
    ("gaussian.cl", include_str!("../cl/gaussian.cl")),
    ("demosaic.cl", include_str!("../cl/demosaic.cl")),
    ("pipeline.cl", include_str!("../cl/pipeline.cl")),
    ("colormap.cl", include_str!("../cl/colormap.cl")),
];

/// The text of one source file (without `common.cl`), embedded or from `dir`.
pub(crate) fn one(file: &str, dir: Option<&Path>) -> Result<String> {
    match dir {
        Some(d) => {
            let p = d.join(file);
            std::fs::read_to_string(&p).map_err(|source| Error::Io { path: p, source })
        }
        None => SOURCES
            .iter()
            .find(|(n, _)| *n == file)
            .map(|(_, s)| s.to_string())
            .ok_or_else(|| Error::arg(format!("no embedded kernel source {file}"))),
    }
}

/// The full program text for `file`: `common.cl` followed by the file.
pub fn program_source(file: &str, dir: Option<&Path>) -> Result<String> {
    let common = one("common.cl", dir)?;
    let body = one(file, dir)?;
    Ok(format!("{common}\n#line 1\n{body}"))
}
