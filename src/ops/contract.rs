//! What an operation's entry points need from the layer above them: a way
//! to build its kernels ([`Programs`]) and a way to choose and run one of
//! its variants ([`Dispatch`], implemented by [`crate::Engine`]). Defining
//! them here keeps the imports pointing down: operations never name the
//! engine.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::ops::{OpSpec, RunReport, Shape, VariantSpec, CPU};

/// Where kernel sources come from (embedded, or `FILTERCTL_CL_DIR`), and
/// how a variant's program is built for a request.
#[derive(Debug, Clone, Default)]
pub struct Programs {
    cl_dir: Option<Arc<PathBuf>>,
}

impl Programs {
    /// Sources from `cl_dir` when given, else the embedded copies.
    pub fn new(cl_dir: Option<PathBuf>) -> Self {
        Programs {
            cl_dir: cl_dir.map(Arc::new),
        }
    }

    /// The folder sources are read from, if not embedded.
    pub fn cl_dir(&self) -> Option<&Path> {
        self.cl_dir.as_deref().map(|p| p.as_path())
    }

    /// The program text for kernel files: `common.cl` plus the files,
    /// embedded or read from the kernel folder.
    pub fn source(&self, files: &[&str]) -> Result<String> {
        crate::kernels::program_source(files, self.cl_dir(), &crate::ops::all_sources())
    }

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
    ) -> Result<crate::backend::opencl::Kernel> {
        let source = self.source(spec.files)?;
        let options = format!(
            "-cl-std=CL1.2 -DT={} -DCH={} {} {}",
            shape.sample.cl_name(),
            shape.channels,
            spec.options,
            extra
        );
        let program = dev.program(
            crate::backend::opencl::program_id(op, spec.name),
            &source,
            options.trim(),
        )?;
        dev.kernel(&program, kernel)
    }
}

/// A device variant's run inside [`Dispatch`]: returns the kernels' device
/// time; the caller keeps the result.
pub type RunCl<'a> = dyn FnMut(&Dev, &'static VariantSpec) -> Result<Duration> + 'a;

/// Chooses and runs variants: forced, then tuned, then the device's default
/// order, then the fallback chain, then the CPU (see `crate::dispatch`).
pub trait Dispatch: Sync {
    /// How kernels are built.
    fn programs(&self) -> &Programs;

    /// A host-in, host-out call of `op` for `shape`: tries device variants
    /// with `run_cl` and the CPU path with `run_cpu`, in the engine's order.
    fn run_variants(
        &self,
        op: &'static OpSpec,
        shape: &Shape,
        run_cl: &mut RunCl<'_>,
        run_cpu: &mut dyn FnMut() -> Result<()>,
    ) -> Result<RunReport>;

    /// A call on data that stays on `dev` (a pipeline stage): device
    /// variants only, `stage_forced` first. `logical` is the user's pixels
    /// (what tuning keys on), `working` what the kernels process.
    fn run_on_device(
        &self,
        op: &'static OpSpec,
        stage_forced: Option<&str>,
        logical: &Shape,
        working: &Shape,
        run_cl: &mut RunCl<'_>,
    ) -> Result<RunReport>;

    /// A dispatcher that also forces `variant` for `op`.
    fn forcing(&self, op: &'static str, variant: &str) -> Box<dyn Dispatch + '_>;
}

/// [`Dispatch::run_variants`] for closures that return their result.
pub fn dispatch<D: Dispatch + ?Sized, R>(
    d: &D,
    op: &'static OpSpec,
    shape: &Shape,
    mut run_cl: impl FnMut(&Dev, &'static VariantSpec) -> Result<(R, Duration)>,
    run_cpu: impl FnOnce() -> Result<R>,
) -> Result<(R, RunReport)> {
    let (mut from_cl, mut from_cpu) = (None, None);
    let mut cpu = Some(run_cpu);
    let report = d.run_variants(
        op,
        shape,
        &mut |dev, spec| {
            let (r, kt) = run_cl(dev, spec)?;
            from_cl = Some(r);
            Ok(kt)
        },
        &mut || {
            let f = cpu.take().ok_or_else(|| no_result(op))?;
            from_cpu = Some(f()?);
            Ok(())
        },
    )?;
    let out = if report.variant == CPU {
        from_cpu
    } else {
        from_cl
    };
    Ok((out.ok_or_else(|| no_result(op))?, report))
}

/// [`Dispatch::run_on_device`] for closures that return their result.
pub fn dispatch_on_device<D: Dispatch + ?Sized, R>(
    d: &D,
    op: &'static OpSpec,
    stage_forced: Option<&str>,
    (logical, working): (&Shape, &Shape),
    mut run_cl: impl FnMut(&Dev, &'static VariantSpec) -> Result<(R, Duration)>,
) -> Result<(R, RunReport)> {
    let mut out = None;
    let report = d.run_on_device(op, stage_forced, logical, working, &mut |dev, spec| {
        let (r, kt) = run_cl(dev, spec)?;
        out = Some(r);
        Ok(kt)
    })?;
    Ok((out.ok_or_else(|| no_result(op))?, report))
}

/// A dispatcher that reported success without running anything: a bug in
/// the dispatcher, reported as an error rather than a panic.
fn no_result(op: &OpSpec) -> Error {
    Error::arg(format!("dispatch of {} returned no result", op.name))
}
