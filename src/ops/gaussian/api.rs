//! `gaussian`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::Dispatch;

/// `gaussian` on an engine: `engine.gaussian(..)` (in [`crate::prelude`]).
pub trait GaussianExt: Dispatch {
    /// Blurs `img` with a Gaussian (see [`GaussianParams`]); the result has
    /// the input's size, channels and sample type. Both sigmas 0 is a copy.
    ///
    /// A blur spreads NaN and infinities, so an f32 `img` that holds some
    /// is refused with [`Error::NonFinite`], or repaired first, as the
    /// engine's [`Dispatch::nonfinite`] policy says (a copy is exact and
    /// keeps them).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::gaussian::GaussianParams;
    /// let img = Image::<f32>::from_fn(9, 7, 3, |x, _, _| x as f32)?;
    /// let out = Engine::cpu().gaussian(&img, &GaussianParams::new(1.5))?;
    /// assert_eq!((out.width(), out.height(), out.channels()), (9, 7, 3));
    /// assert!(out.get(0, 3, 0) > 0.0 && out.get(8, 3, 0) < 8.0); // edges pulled in
    /// assert!((out.get(4, 3, 1) - 4.0).abs() < 1e-4); // a ramp's middle stays
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn gaussian<T: Sample>(&self, img: &Image<T>, p: &GaussianParams) -> Result<Image<T>> {
        self.gaussian_report(img, p).map(|(i, _)| i)
    }

    /// [`GaussianExt::gaussian`], also saying which variant ran and how long it took.
    fn gaussian_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &GaussianParams,
    ) -> Result<(Image<T>, RunReport)> {
        p.validate()?;
        if p.min_nonzero_sigma().is_none() {
            let start = std::time::Instant::now();
            let out = img.clone();
            return Ok((out, copy_report(start)));
        }
        let img = &*crate::ops::guard_nonfinite(self, &SPEC, img)?;
        crate::ops::dispatch(
            self,
            &SPEC,
            &gaussian_shape(img, p),
            |dev: &Dev, spec| device::run(self.programs(), dev, spec, img, p),
            || cpu::gaussian(img, p),
        )
    }

    /// [`GaussianExt::gaussian`] into `dst`, which must have the input's size
    /// and channels (else [`Error::InvalidArgument`](crate::Error), and
    /// `dst` is left as it was, as it is on [`Error::NonFinite`]); all its
    /// samples are overwritten. On the
    /// CPU path nothing is allocated when `dst`'s rows are packed, so a loop
    /// that keeps `dst` from frame to frame saves an allocation per call and
    /// the clearing of its fresh pages. A device result is downloaded and
    /// copied in. Returns what ran.
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::gaussian::GaussianParams;
    /// let engine = Engine::cpu();
    /// let p = GaussianParams::new(2.0);
    /// let mut dst = Image::<u8>::new(16, 12, 1)?; // kept from frame to frame
    /// for frame in 0..3u8 {
    ///     let img = Image::<u8>::from_fn(16, 12, 1, |_, _, _| 40 * frame)?;
    ///     engine.gaussian_into(&img, &p, &mut dst)?;
    ///     assert!(dst.rows().flatten().all(|&v| v == 40 * frame));
    /// }
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn gaussian_into<T: Sample>(
        &self,
        img: &Image<T>,
        p: &GaussianParams,
        dst: &mut Image<T>,
    ) -> Result<RunReport> {
        p.validate()?;
        if p.min_nonzero_sigma().is_none() {
            let start = std::time::Instant::now();
            cpu::gaussian_into(img, p, dst)?;
            return Ok(copy_report(start));
        }
        cpu::check_into(img, dst)?;
        let img = &*crate::ops::guard_nonfinite(self, &SPEC, img)?;
        let (out, report) = crate::ops::dispatch(
            self,
            &SPEC,
            &gaussian_shape(img, p),
            |dev: &Dev, spec| {
                device::run(self.programs(), dev, spec, img, p)
                    .map(|(out, t)| (Some(out), t))
            },
            || cpu::gaussian_into(img, p, dst).map(|()| None),
        )?;
        if let Some(out) = out {
            for (y, row) in out.rows().enumerate() {
                dst.row_mut(y).copy_from_slice(row);
            }
        }
        Ok(report)
    }

}

impl<D: Dispatch + ?Sized> GaussianExt for D {}
