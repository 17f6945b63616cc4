//! Borrowed views over caller memory: pipelines read a strided `&[T]` and
//! write a strided `&mut [T]` with the same results as on owned images,
//! on the CPU backend and on OpenCL (PoCL, selected explicitly), without
//! touching the output's padding; bad layouts and outputs are typed errors.

mod common;

use clfilter::image::ViewError;
use clfilter::{
    DynImage, DynView, DynViewMut, Engine, Error, Image, ImageView, ImageViewMut, Pipeline,
};
use common::{assert_images, opencl_engine, random_image, strided_copy, Rng, TestSample};

/// Odd sizes: single pixels, single rows and columns, primes.
const SIZES: &[(usize, usize)] = &[(1, 1), (1, 7), (7, 1), (2, 3), (5, 3), (17, 13), (31, 33)];

const SPECS: &[&str] = &[
    "gaussian=sigma=1.5",
    "transpose",
    "transpose,normalize=out=u8",
];

/// The padding value of output buffers; it must survive every run.
fn sentinel<T: TestSample>() -> T {
    T::extremes().1
}

/// Runs `p` from `input` into a fresh output buffer with `pad` samples of
/// padding per row; checks the padding and returns the result.
fn run_out<U: TestSample>(
    engine: &Engine,
    p: &Pipeline,
    input: DynView<'_>,
    shape: (usize, usize, usize),
    pad: usize,
    ctx: &str,
) -> Image<U>
where
    for<'a> DynViewMut<'a>: From<ImageViewMut<'a, U>>,
{
    let (w, h, c) = shape;
    let stride = w * c + pad;
    let mut buf = vec![sentinel::<U>(); stride * h];
    let view = ImageViewMut::with_stride(&mut buf, w, h, c, stride).unwrap();
    let outcomes = p
        .run_into(engine, input, &mut DynViewMut::from(view))
        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
    assert_eq!(outcomes.len(), p.ops().len(), "{ctx}");
    for y in 0..h {
        for v in &buf[y * stride + w * c..(y + 1) * stride] {
            assert!(
                U::same(*v, sentinel::<U>()),
                "{ctx}: padding of row {y} written"
            );
        }
    }
    Image::from_vec_with_stride(w, h, c, stride, buf).unwrap()
}

/// Every spec, size, channel count and padding from a `T` view equals the
/// same pipeline run on the packed image with the same engine.
fn views_match<T: TestSample>(engine: &Engine, name: &str)
where
    DynImage: From<Image<T>>,
    for<'a> DynView<'a>: From<ImageView<'a, T>>,
{
    let mut rng = Rng::new(0x71e3);
    for spec in SPECS {
        let p: Pipeline = spec.parse().unwrap();
        for &(w, h) in SIZES {
            for c in [1, 3, 4] {
                let img = random_image::<T>(&mut rng, w, h, c);
                let (want, _) = p.run(engine, img.clone().into()).unwrap();
                let shape = want.shape();
                for (pad_in, pad_out) in [(0, 0), (3, 0), (0, 2), (5, 7)] {
                    let padded = strided_copy(&img, pad_in);
                    let input = DynView::from(padded.view());
                    let ctx = format!(
                        "{name} {spec} {w}x{h}x{c} {} pads {pad_in}/{pad_out}",
                        T::TYPE
                    );
                    match &want {
                        DynImage::U8(want) => {
                            let got = run_out::<u8>(engine, &p, input, shape, pad_out, &ctx);
                            assert_images(&got, want, 0.0, &ctx);
                        }
                        DynImage::U16(want) => {
                            let got = run_out::<u16>(engine, &p, input, shape, pad_out, &ctx);
                            assert_images(&got, want, 0.0, &ctx);
                        }
                        DynImage::F32(want) => {
                            let got = run_out::<f32>(engine, &p, input, shape, pad_out, &ctx);
                            assert_images(&got, want, 0.0, &ctx);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn cpu_views_match_images() {
    let e = Engine::cpu();
    views_match::<u8>(&e, "cpu");
    views_match::<u16>(&e, "cpu");
    views_match::<f32>(&e, "cpu");
}

#[test]
fn opencl_views_match_images() {
    let Some(e) = opencl_engine() else { return };
    views_match::<u8>(&e, "opencl");
    views_match::<u16>(&e, "opencl");
    views_match::<f32>(&e, "opencl");
}

/// On a device the view is uploaded and downloaded by the chain itself.
#[test]
fn opencl_view_runs_on_the_device() {
    let Some(e) = opencl_engine() else { return };
    let img = random_image::<u16>(&mut Rng::new(5), 13, 9, 3);
    let padded = strided_copy(&img, 4);
    let mut out = vec![0u16; 13 * 9 * 3];
    let view = ImageViewMut::new(&mut out, 13, 9, 3).unwrap();
    let p: Pipeline = "gaussian=sigma=2".parse().unwrap();
    let outcomes = p.run_into(&e, padded.view(), &mut view.into()).unwrap();
    assert!(outcomes.iter().all(|o| o.on_device), "{outcomes:?}");
}

/// A first stage that reads raw frames reads a padded Bayer view as it
/// reads the image.
#[test]
fn raw_stage_reads_a_view() {
    let engines: Vec<Engine> = std::iter::once(Engine::cpu())
        .chain(opencl_engine())
        .collect();
    let p: Pipeline = "demosaic=pattern=rggb".parse().unwrap();
    for e in &engines {
        for (w, h) in [(2, 2), (6, 4), (18, 10)] {
            let img = random_image::<u16>(&mut Rng::new(w as u64), w, h, 1);
            let (want, _) = p.run(e, img.clone().into()).unwrap();
            let DynImage::U16(want) = want else {
                panic!("demosaic keeps u16")
            };
            let padded = strided_copy(&img, 3);
            let got = run_out::<u16>(e, &p, padded.view().into(), want.shape3(), 1, "demosaic");
            assert_images(
                &got,
                &want,
                0.0,
                &format!("demosaic {w}x{h} on {:?}", e.backend()),
            );
        }
    }
}

trait Shape3 {
    fn shape3(&self) -> (usize, usize, usize);
}
impl<T: clfilter::Sample> Shape3 for Image<T> {
    fn shape3(&self) -> (usize, usize, usize) {
        (self.width(), self.height(), self.channels())
    }
}

#[test]
fn bad_layouts_are_typed_errors() {
    let buf = [0u8; 12];
    let short = ImageView::with_stride(&buf, 4, 3, 1, 5).unwrap_err();
    assert!(
        matches!(
            short,
            Error::View(ViewError::TooShort { len: 12, need: 14 })
        ),
        "{short}"
    );
    let narrow = ImageView::with_stride(&buf, 4, 2, 1, 3).unwrap_err();
    assert!(matches!(
        narrow,
        Error::View(ViewError::StrideTooShort { stride: 3, row: 4 })
    ));
    let mut wide = [0u16; 12];
    let odd = ImageViewMut::with_byte_stride(&mut wide, 2, 2, 1, 5).unwrap_err();
    assert!(matches!(
        odd,
        Error::View(ViewError::StrideAlign { bytes: 5, size: 2 })
    ));
    let two = ImageView::new(&buf, 3, 2, 2).unwrap_err();
    assert!(matches!(two, Error::View(ViewError::Shape(_))), "{two}");
    assert!(ImageView::new(&buf, 0, 2, 1).is_err());
    assert!(ImageView::with_stride(&buf, 4, 3, 1, usize::MAX).is_err());
}

/// A single row may have any stride (no row follows it): one near
/// `usize::MAX` overflowed the byte offsets computed from it (a panic in
/// the transpose and in the OpenCL upload). Packed data longer than the
/// image is refused: a wrong width or channel count would misalign it.
#[test]
fn single_rows_take_any_stride_and_packed_data_is_exact() {
    use clfilter::prelude::TransposeExt;
    let data: Vec<f32> = (0..15).map(|i| i as f32 * 0.25 - 1.0).collect();
    let packed = Image::from_vec(5, 1, 3, data.clone()).unwrap();
    let want = Engine::cpu().transpose(&packed).unwrap();
    let engines: Vec<Engine> = std::iter::once(Engine::cpu())
        .chain(opencl_engine())
        .collect();
    for stride in [15, 16, 1 << 40, usize::MAX / 2, usize::MAX] {
        let img = Image::from_vec_with_stride(5, 1, 3, stride, data.clone()).unwrap();
        assert_eq!(img.row(0), packed.row(0), "stride {stride}");
        assert_eq!(img.is_packed(), stride == 15, "stride {stride}");
        let view = ImageView::with_stride(&data, 5, 1, 3, stride).unwrap();
        for e in &engines {
            assert_eq!(e.transpose(&img).unwrap(), want, "stride {stride}");
            let p: Pipeline = "transpose".parse().unwrap();
            let mut out = vec![0f32; 15];
            let o = ImageViewMut::new(&mut out, 1, 5, 3).unwrap();
            p.run_into(e, DynView::F32(view), &mut DynViewMut::F32(o))
                .unwrap();
            assert_eq!(out, want.rows().flatten().copied().collect::<Vec<_>>());
        }
    }
    let long = Image::<u8>::from_vec(3, 3, 1, (0..12).collect()).unwrap_err();
    assert!(matches!(long, Error::InvalidArgument(_)), "{long}");
    assert!(long.to_string().contains("12 samples"), "{long}");
    assert!(Image::<u8>::from_vec(3, 3, 1, (0..9).collect()).is_ok());
    assert!(Image::<u8>::from_vec(3, 3, 1, (0..8).collect()).is_err());
}

/// An output of the wrong type is refused before anything runs, one of the
/// wrong shape once the result exists; either way it is left as it was.
#[test]
fn wrong_outputs_are_typed_errors_and_untouched() {
    let engines: Vec<Engine> = std::iter::once(Engine::cpu())
        .chain(opencl_engine())
        .collect();
    let img = random_image::<u8>(&mut Rng::new(9), 7, 5, 3);
    for e in &engines {
        let p: Pipeline = "transpose".parse().unwrap();
        let mut f = vec![0.5f32; 7 * 5 * 3];
        let view = ImageViewMut::new(&mut f, 5, 7, 3).unwrap();
        let err = p.run_into(e, img.view(), &mut view.into()).unwrap_err();
        assert!(
            matches!(err, Error::View(ViewError::Mismatch { .. })),
            "{err}"
        );
        assert!(f.iter().all(|&v| v == 0.5));

        let mut same = vec![1u8; 7 * 5 * 3];
        let view = ImageViewMut::new(&mut same, 7, 5, 3).unwrap();
        let err = p.run_into(e, img.view(), &mut view.into()).unwrap_err();
        assert!(
            matches!(err, Error::View(ViewError::Mismatch { .. })),
            "{err}"
        );
        assert!(err.to_string().contains("5x7x3 u8"), "{err}");
        assert!(same.iter().all(|&v| v == 1), "on {:?}", e.backend());
    }
}

/// Views into and out of owned images, and copies between them.
#[test]
fn image_views_round_trip() {
    let img = random_image::<f32>(&mut Rng::new(3), 5, 4, 4);
    let padded = strided_copy(&img, 2);
    assert_eq!(padded.view().to_image(), img);
    let mut out = Image::<f32>::new(5, 4, 4).unwrap();
    out.view_mut().copy_from(&padded).unwrap();
    assert_eq!(out, img);
    let mut other = Image::<f32>::new(4, 5, 4).unwrap();
    assert!(matches!(
        other.view_mut().copy_from(&img),
        Err(Error::View(ViewError::Mismatch { .. }))
    ));
}
