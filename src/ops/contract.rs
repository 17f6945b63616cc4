//! What an operation's entry points need from the layer above them: a way
//! to build its kernels ([`Programs`], from the backend) and a way to choose
//! and run one of its variants ([`Dispatch`], implemented by [`crate::Engine`]). Defining
//! them here keeps the imports pointing down: operations never name the
//! engine.

use std::any::Any;
use std::borrow::Cow;
use std::time::Duration;

pub use crate::backend::programs::Programs;
use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{finite, Image, NonFinite, Sample};
use crate::ops::{OpSpec, RunReport, Shape, VariantSpec, CPU};

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

    /// What operations that spread NaN and infinities do with them
    /// ([`guard_nonfinite`]).
    fn nonfinite(&self) -> NonFinite;

    /// Whether the caller has proven the inputs finite and in range (a
    /// pipeline from integer data): [`guard_nonfinite`] then skips its scan.
    fn inputs_bounded(&self) -> bool {
        false
    }
}

/// `img` as operation `op` may read it. When `op` spreads non-finite
/// values ([`OpSpec::spreads_nonfinite`]) and `img` is f32, it is scanned
/// once: finite, it is returned as it is; otherwise `d`'s
/// [`Dispatch::nonfinite`] policy gives [`Error::NonFinite`] or a repaired
/// copy. Integer images cannot hold NaN or infinities.
pub fn guard_nonfinite<'a, D: Dispatch + ?Sized, T: Sample>(
    d: &D,
    op: &OpSpec,
    img: &'a Image<T>,
) -> Result<Cow<'a, Image<T>>> {
    let f32_img = (img as &dyn Any).downcast_ref::<Image<f32>>();
    let Some(f) = f32_img.filter(|_| op.spreads_nonfinite && !d.inputs_bounded()) else {
        return Ok(Cow::Borrowed(img));
    };
    match finite::apply(f, d.nonfinite(), op.name)? {
        Cow::Borrowed(_) => Ok(Cow::Borrowed(img)),
        Cow::Owned(fixed) => {
            let fixed: Box<dyn Any> = Box::new(fixed);
            fixed
                .downcast::<Image<T>>()
                .map(|b| Cow::Owned(*b))
                .map_err(|_| Error::arg("a repaired image changed its sample type"))
        }
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::gaussian::SPEC;
    use crate::Engine;

    /// A caller that proved its inputs bounded skips the scan (here, on
    /// purpose, over a NaN it would otherwise refuse); others are scanned.
    #[test]
    fn bounded_inputs_skip_the_scan() {
        let img = Image::<f32>::from_vec(3, 1, 1, vec![0.0, f32::NAN, 1.0]).unwrap();
        let mut e = Engine::cpu();
        assert!(matches!(
            guard_nonfinite(&e, &SPEC, &img),
            Err(Error::NonFinite { count: 1, .. })
        ));
        e.set_inputs_bounded(true);
        assert!(matches!(
            guard_nonfinite(&e, &SPEC, &img),
            Ok(Cow::Borrowed(_))
        ));
    }
}
