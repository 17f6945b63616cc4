//! [`Programs`]: where kernel sources come from and how a variant's program
//! is built for a request.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use crate::error::Result;
use crate::kernels::Source;

/// Where kernel sources come from (embedded, or `FILTERCTL_CL_DIR`), and
/// how a variant's program is built for a request.
#[derive(Debug, Clone, Default)]
pub struct Programs {
    cl_dir: Option<Arc<PathBuf>>,
    /// Every embedded source the programs may name.
    sources: Arc<Vec<Source>>,
    /// Embedded program texts already joined, with their hashes, by file
    /// list: every launch looks its program up, and joining and hashing
    /// tens of KiB of text each time cost more than the launch itself.
    joined: Arc<Mutex<HashMap<Vec<String>, Arc<HashedSource>>>>,
}

/// A program's text and its [`crate::backend::cache::fnv1a`] hash.
#[derive(Debug)]
pub struct HashedSource {
    /// The text, as [`Programs::source`] gives it.
    pub text: String,
    /// The hash of `text`.
    pub hash: u64,
}

impl Programs {
    /// Sources from `cl_dir` when given, else the embedded copies in
    /// `sources` (the operations' and [`crate::kernels::SHARED`]).
    pub fn new(cl_dir: Option<PathBuf>, sources: Vec<Source>) -> Self {
        Programs {
            cl_dir: cl_dir.map(Arc::new),
            sources: Arc::new(sources),
            joined: Arc::default(),
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

    /// [`Programs::source`] with its hash. Embedded texts are joined once
    /// and kept; texts from the kernel folder are read every time, so
    /// edited kernels are picked up without a restart.
    pub fn hashed_source(&self, files: &[&str]) -> Result<Arc<HashedSource>> {
        let hashed = |text: String| {
            let hash = crate::backend::cache::fnv1a(text.as_bytes());
            Arc::new(HashedSource { text, hash })
        };
        if self.cl_dir.is_some() {
            return Ok(hashed(self.source(files)?));
        }
        let key: Vec<String> = files.iter().map(|f| f.to_string()).collect();
        if let Some(h) = self.joined.lock().expect("source memo lock").get(&key) {
            return Ok(h.clone());
        }
        let h = hashed(self.source(files)?);
        self.joined
            .lock()
            .expect("source memo lock")
            .insert(key, h.clone());
        Ok(h)
    }
}
