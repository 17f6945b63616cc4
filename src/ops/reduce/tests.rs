//! The rayon path's sums and means of u8, u16 and f32 images against the
//! f64 reference: exact for integers (every u8/u16 sum here is below 2^24,
//! so its f32 is the exact sum rounded once), within the stated 2u for f32,
//! on odd sizes, bands and groups of rows with remainders, and padded rows.

use super::reference::{self, Exact};
use super::{cpu, Axis, ReduceParams, Reduction};
use crate::image::{Image, Sample};

/// Random 32-bit samples.
fn noise(n: usize, seed: u32) -> impl Iterator<Item = u32> {
    let mut rng = crate::test_rng::Rng::new(seed.into());
    (0..n).map(move |_| (rng.next_u64() >> 32) as u32)
}

/// `w x h x c` samples from `f`, rows `pad` samples longer than the
/// pixels, the padding holding the largest sample (which a sum that read
/// it would show).
fn image<T: Sample>(
    (w, h, c): (usize, usize, usize),
    pad: usize,
    seed: u32,
    f: impl Fn(u32) -> T,
    top: T,
) -> Image<T> {
    let stride = w * c + pad;
    let mut data: Vec<T> = noise(stride * h, seed).map(f).collect();
    for row in data.chunks_mut(stride) {
        row[w * c..].fill(top);
    }
    Image::from_vec_with_stride(w, h, c, stride, data).expect("valid layout")
}

const SHAPES: [(usize, usize); 9] = [
    (1, 1),
    (1, 13),
    (13, 1),
    (97, 37),
    (131, 70),
    (300, 2),
    (2, 300),
    (1027, 9),
    (61, 129),
];

/// Every sum and mean of `img` along both axes, each value `got` checked
/// by `ok(got, want, scale)`, `scale` the sum of |x| behind it (over the
/// count for a mean).
fn check_all<T: Sample>(img: &Image<T>, ok: impl Fn(f32, f64, f64) -> bool) {
    for axis in [Axis::X, Axis::Y] {
        for op in [Reduction::Sum, Reduction::Mean] {
            let p = ReduceParams { axis, op };
            let got = cpu::reduce(img, &p).expect("reduces");
            let Exact {
                value,
                abs_sum,
                count,
                ..
            } = reference::reduce(img, &p);
            let per = if op == Reduction::Mean { count as f64 } else { 1.0 };
            let got: Vec<f32> = got.rows().flatten().copied().collect();
            assert_eq!(got.len(), value.len(), "{p}");
            for (i, (g, (w, a))) in got.iter().zip(value.iter().zip(&abs_sum)).enumerate() {
                assert!(
                    ok(*g, *w, *a / per),
                    "{p} {}x{}x{} value {i}: {g} for {w}",
                    img.width(),
                    img.height(),
                    img.channels()
                );
            }
        }
    }
}

#[test]
fn integer_sums_and_means_are_the_exact_values_rounded_once() {
    for c in [1, 3, 4] {
        for (k, &(w, h)) in SHAPES.iter().enumerate() {
            for pad in [0, 5] {
                let seed = (k * 8 + c + pad) as u32;
                let shape = (w, h, c);
                let u8s = image(shape, pad, seed, |v| (v >> 24) as u8, u8::MAX);
                check_all(&u8s, |g, w, _| g == w as f32);
                let u16s = image(shape, pad, seed, |v| (v >> 16) as u16, u16::MAX);
                check_all(&u16s, |g, w, _| g == w as f32);
            }
        }
    }
}

#[test]
fn saturated_integer_columns_and_rows_are_exact() {
    // 257 rows of 255 (and of 65535) pass every band and group boundary.
    let u8s = Image::from_vec(517, 257, 4, vec![u8::MAX; 517 * 257 * 4]).expect("image");
    check_all(&u8s, |g, w, _| g == w as f32);
    let u16s = Image::from_vec(517, 257, 3, vec![u16::MAX; 517 * 257 * 3]).expect("image");
    check_all(&u16s, |g, w, _| g == w as f32);
}

#[test]
fn f32_sums_and_means_stay_within_two_units() {
    let u = f64::from(f32::EPSILON) / 2.0;
    for c in [1, 3, 4] {
        for (k, &(w, h)) in SHAPES.iter().enumerate() {
            for pad in [0, 3] {
                let seed = (k * 8 + c + pad) as u32;
                let f = |v: u32| (v >> 8) as f32 / 65_536.0 - 128.0;
                let img = image((w, h, c), pad, seed, f, 1e30);
                check_all(&img, |g, want, scale| {
                    (f64::from(g) - want).abs() <= 2.0 * u * scale
                });
            }
        }
    }
}
