//! The reference transpose: the plainest loop.

use crate::error::Result;
use crate::image::{Image, Sample};

/// `out(y, x) = in(x, y)` for every pixel.
pub fn transpose<T: Sample>(src: &Image<T>) -> Result<Image<T>> {
    let c = src.channels();
    Image::from_fn(src.height(), src.width(), c, |x, y, ch| src.get(y, x, ch))
}
