//! The reference median: gather the window, sort it, take the middle.

use super::{filtered_channels, MedianParams};
use crate::error::Result;
use crate::image::{Image, Sample};

/// For every pixel and filtered channel, the middle of the sorted
/// (2r+1)^2 window with coordinates clamped to the image (replicate), in
/// [`f32::total_cmp`]'s order; alpha (channel 3 of 4) copied.
pub fn median<T: Sample>(src: &Image<T>, p: &MedianParams) -> Result<Image<T>> {
    p.validate()?;
    let r = p.radius as isize;
    let (w, h, c) = (src.width(), src.height(), src.channels());
    let filtered = filtered_channels(c);
    Image::from_fn(w, h, c, |x, y, ch| {
        if ch >= filtered {
            return src.get(x, y, ch);
        }
        let mut v = Vec::new();
        for dy in -r..=r {
            for dx in -r..=r {
                let xx = (x as isize + dx).clamp(0, w as isize - 1) as usize;
                let yy = (y as isize + dy).clamp(0, h as isize - 1) as usize;
                v.push(src.get(xx, yy, ch));
            }
        }
        v.sort_by(|a, b| a.to_f32().total_cmp(&b.to_f32()));
        v[v.len() / 2]
    })
}
