//! [`Programs`]: where kernel sources come from and how a variant's program
//! is built for a request.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Result;
use crate::kernels::Source;

/// Where kernel sources come from (embedded, or `FILTERCTL_CL_DIR`), and
/// how a variant's program is built for a request.
#[derive(Debug, Clone, Default)]
pub struct Programs {
    cl_dir: Option<Arc<PathBuf>>,
    /// Every embedded source the programs may name.
    sources: Arc<Vec<Source>>,
}

impl Programs {
    /// Sources from `cl_dir` when given, else the embedded copies in
    /// `sources` (the operations' and [`crate::kernels::SHARED`]).
    pub fn new(cl_dir: Option<PathBuf>, sources: Vec<Source>) -> Self {
        Programs {
            cl_dir: cl_dir.map(Arc::new),
            sources: Arc::new(sources),
        }
    }

    /// The embedded sources.
    pub fn sources(&self) -> &[Source] {
        &self.sources
    }

    /// The folder sources are read from, if not embedded.
    pub fn cl_dir(&self) -> Option<&Path> {
        self.cl_dir.as_deref().map(|p| p.as_path())
    }

    /// The program text for kernel files: `common.cl` plus the files,
    /// embedded or read from the kernel folder.
    pub fn source(&self, files: &[&str]) -> Result<String> {
        crate::kernels::program_source(files, self.cl_dir(), &self.sources)
    }
}
