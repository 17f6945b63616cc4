//! `wb`'s entry points, on anything that dispatches (the [`crate::Engine`]).

use super::*;
use crate::ops::stats::StatsExt;
use crate::ops::Dispatch;

/// `wb` on an engine: `engine.wb(..)` (in [`crate::prelude`]).
pub trait WbExt: Dispatch {
    /// White-balances an RGB(A) image (see the module docs for the rules).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{Engine, Image};
    /// use clfilter::ops::wb::WbParams;
    /// let img = Image::<u8>::from_fn(2, 1, 3, |_, _, c| [100, 50, 25][c])?;
    /// let out = Engine::cpu().wb(&img, &WbParams::Gains([1.0, 2.0, 4.0]))?;
    /// assert_eq!(out.row(0), &[100; 6]);
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    fn wb<T: Sample>(&self, img: &Image<T>, p: &WbParams) -> Result<Image<T>> {
        self.wb_report(img, p).map(|(i, _)| i)
    }

    /// [`WbExt::wb`], also reporting what ran: `stats` (gray world only)
    /// and `wb`.
    fn wb_report<T: Sample>(
        &self,
        img: &Image<T>,
        p: &WbParams,
    ) -> Result<(Image<T>, Vec<RunReport>)> {
        p.validate()?;
        check_channels(img.channels())?;
        let mut reports = Vec::new();
        let gains = match *p {
            WbParams::Gains(g) => g,
            WbParams::Auto => {
                let (s, r) = self.stats_report(img)?;
                reports.push(r);
                gray_world([s.mean[0], s.mean[1], s.mean[2]])?
            }
        };
        let (out, r) = self.wb_gains_report(img, gains)?;
        reports.push(r);
        Ok((out, reports))
    }

    /// The `wb` kernel (or the rayon path) with the given gains, checked.
    fn wb_gains_report<T: Sample>(
        &self,
        img: &Image<T>,
        gains: [f32; 3],
    ) -> Result<(Image<T>, RunReport)> {
        let cpu = || cpu::wb(img, gains);
        crate::ops::pixel_stage::dispatch(self, &device::Gains(gains), img, cpu)
    }
}

impl<D: Dispatch + ?Sized> WbExt for D {}
