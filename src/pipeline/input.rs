//! What a pipeline runs on: [`Input`].

use crate::image::{DynImage, SampleType};

/// What a pipeline runs on: a decoded image, or a raw camera frame (see
/// [`super::run_frame`]).
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// An image.
    Image(&'a DynImage),
    /// A raw camera frame.
    Frame(&'a crate::image::raw::RawImage),
}

impl Input<'_> {
    /// Width, height, channels and sample type (a raw frame is one channel
    /// of its decoded type).
    pub fn shape(&self) -> (usize, usize, usize, SampleType) {
        match self {
            Input::Image(i) => {
                let (w, h, c) = i.shape();
                (w, h, c, i.sample_type())
            }
            Input::Frame(f) => {
                let (w, h) = f.size();
                (w, h, 1, f.sample())
            }
        }
    }
}

impl<'a> From<&'a DynImage> for Input<'a> {
    fn from(img: &'a DynImage) -> Self {
        Input::Image(img)
    }
}

impl<'a> From<&'a crate::image::raw::RawImage> for Input<'a> {
    fn from(frame: &'a crate::image::raw::RawImage) -> Self {
        Input::Frame(frame)
    }
}
