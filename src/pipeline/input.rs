//! What a pipeline runs on: [`Input`].

use crate::image::{DynImage, DynView, SampleType};

/// What a pipeline runs on: a decoded image, a borrowed view over caller
/// memory, or a raw camera frame (see [`super::run_frame`]).
#[derive(Debug, Clone, Copy)]
pub enum Input<'a> {
    /// An image.
    Image(&'a DynImage),
    /// A raw camera frame.
    Frame(&'a crate::image::raw::RawImage),
    /// A borrowed view (see [`crate::image::view`]): a device uploads it
    /// straight from its rows; the host path copies it into an image first.
    View(DynView<'a>),
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
            Input::View(v) => {
                let (w, h, c) = v.shape();
                (w, h, c, v.sample_type())
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

impl<'a> From<DynView<'a>> for Input<'a> {
    fn from(view: DynView<'a>) -> Self {
        Input::View(view)
    }
}

impl<'a, T: crate::image::Sample> From<crate::image::ImageView<'a, T>> for Input<'a>
where
    DynView<'a>: From<crate::image::ImageView<'a, T>>,
{
    fn from(view: crate::image::ImageView<'a, T>) -> Self {
        Input::View(view.into())
    }
}
