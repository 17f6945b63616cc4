//! The device side shared by every operation: building a variant's kernel
//! for a request.

#![cfg(feature = "opencl")]

use crate::backend::opencl::{program_id, Kernel};
use crate::backend::Dev;
use crate::error::Result;
use crate::ops::{Programs, Shape, VariantSpec};

impl Programs {
    /// Builds (or fetches from the caches) `spec`'s program with the shape's
    /// type options plus `extra`, and creates kernel `kernel`.
    #[cfg(feature = "opencl")]
    pub(crate) fn kernel(
        &self,
        dev: &Dev,
        op: &str,
        spec: &VariantSpec,
        shape: &Shape,
        extra: &str,
        kernel: &str,
    ) -> Result<Kernel> {
        let source = self.hashed_source(spec.files)?;
        let options = format!(
            "-cl-std=CL1.2 -DT={} -DCH={} {} {}",
            shape.sample.cl_name(),
            shape.channels,
            spec.options,
            extra
        );
        let program = dev.program_hashed(
            program_id(op, spec.name),
            &source.text,
            source.hash,
            options.trim(),
        )?;
        dev.kernel(&program, kernel)
    }
}
