//! Turning pixels upright by their EXIF orientation, for every sample type
//! (the `image` crate's `apply_orientation` has no gray f32).

use ::image::metadata::Orientation;

use super::{DynImage, Image, Sample};

/// `img` with `o` applied, as `DynamicImage::apply_orientation` would:
/// the pixel at (x, y) of the result is the source pixel that `o` moves
/// there.
pub(crate) fn apply(img: DynImage, o: Orientation) -> DynImage {
    match img {
        DynImage::U8(i) => DynImage::U8(orient(&i, o)),
        DynImage::U16(i) => DynImage::U16(orient(&i, o)),
        DynImage::F32(i) => DynImage::F32(orient(&i, o)),
    }
}

fn orient<T: Sample>(img: &Image<T>, o: Orientation) -> Image<T> {
    use Orientation as O;
    let (w, h) = (img.width(), img.height());
    // Where the result's pixel (x, y) comes from.
    let source: fn(usize, usize, usize, usize) -> (usize, usize) = match o {
        O::NoTransforms => |x, y, _, _| (x, y),
        O::Rotate90 => |x, y, _, h| (y, h - 1 - x),
        O::Rotate180 => |x, y, w, h| (w - 1 - x, h - 1 - y),
        O::Rotate270 => |x, y, w, _| (w - 1 - y, x),
        O::FlipHorizontal => |x, y, w, _| (w - 1 - x, y),
        O::FlipVertical => |x, y, _, h| (x, h - 1 - y),
        O::Rotate90FlipH => |x, y, _, _| (y, x),
        O::Rotate270FlipH => |x, y, w, h| (w - 1 - y, h - 1 - x),
    };
    let turned = matches!(
        o,
        O::Rotate90 | O::Rotate270 | O::Rotate90FlipH | O::Rotate270FlipH
    );
    let (ow, oh) = if turned { (h, w) } else { (w, h) };
    Image::from_fn(ow, oh, img.channels(), |x, y, c| {
        let (sx, sy) = source(x, y, w, h);
        img.get(sx, sy, c)
    })
    .expect("the same samples as the source, in another shape")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every orientation against the `image` crate's, on odd sizes.
    #[test]
    fn matches_apply_orientation() {
        use Orientation as O;
        for (w, h) in [(1, 1), (1, 5), (4, 1), (7, 3), (5, 11)] {
            let src = Image::<u8>::from_fn(w, h, 3, |x, y, c| (x * 31 + y * 7 + c) as u8).unwrap();
            for o in [
                O::NoTransforms,
                O::Rotate90,
                O::Rotate180,
                O::Rotate270,
                O::FlipHorizontal,
                O::FlipVertical,
                O::Rotate90FlipH,
                O::Rotate270FlipH,
            ] {
                let mut want = ::image::DynamicImage::from(
                    ::image::RgbImage::from_raw(w as u32, h as u32, src.clone().into_vec())
                        .unwrap(),
                );
                want.apply_orientation(o);
                let DynImage::U8(got) = apply(DynImage::U8(src.clone()), o) else {
                    unreachable!()
                };
                assert_eq!(
                    (got.width() as u32, got.height() as u32),
                    (want.width(), want.height()),
                    "{o:?} {w}x{h}"
                );
                assert_eq!(got.into_vec(), want.into_bytes(), "{o:?} {w}x{h}");
            }
        }
    }
}
