//! The rayon Gaussian against the reference, on every instruction set the
//! host runs.

use super::fir::{self, FirTaps, FIR_MAX_ERROR, FIR_MAX_SIGMA, FIR_MAX_SIGMA_F32_512};
use super::fixed::{weight_error, weights, FixedTaps, FIXED_MAX_SIGMA, MAX_WEIGHT_ERROR};
use super::iir::Iir;
use super::*;
use crate::image::SampleType;
use crate::ops::gaussian::coeffs::{Deriche, BIQUAD_MAX_SIGMA};
use crate::ops::gaussian::reference::{self, source_index};

const SIZES: [(usize, usize); 7] = [(1, 1), (1, 7), (7, 1), (2, 3), (13, 11), (31, 17), (64, 5)];
const SIGMAS: [f32; 8] = [0.0, 0.3, 0.8, 1.0, 2.5, 7.0, 40.0, 1000.0];

fn random<T: Sample>(w: usize, h: usize, c: usize, seed: u64) -> Image<T> {
    let mut rng = crate::test_rng::Rng::new(seed);
    let full = T::TYPE.full_scale();
    Image::from_fn(w, h, c, |_, _, _| T::from_f32(rng.unit() * full)).unwrap()
}

fn params(sx: f32, sy: f32, border: Border) -> GaussianParams {
    GaussianParams {
        sigma_x: sx,
        sigma_y: sy,
        border,
    }
}

/// Max |cpu - reference| with the instruction set `isa`, in units of the
/// input's max |value|, after allowing for the output's rounding.
fn max_error<T: Sample>(img: &Image<T>, p: &GaussianParams, isa: Isa) -> f64 {
    let want = reference::gaussian(img, p).unwrap();
    let scale = img
        .rows()
        .flatten()
        .map(|v| v.to_f32().abs())
        .fold(0.0, f32::max)
        .max(1e-30) as f64;
    let rounding = if T::TYPE == SampleType::F32 { 0.0 } else { 0.5 };
    let got = gaussian_with(img, p, isa).unwrap();
    assert_eq!(
        (got.width(), got.height(), got.channels()),
        (img.width(), img.height(), img.channels())
    );
    let mut worst = 0.0f64;
    for (g, r) in got.rows().flatten().zip(want.rows().flatten()) {
        let e = ((g.to_f32() as f64 - *r as f64).abs() - rounding).max(0.0) / scale;
        assert!(e.is_finite(), "{isa:?} {p:?}: {g:?} vs {r}");
        worst = worst.max(e);
    }
    worst
}

/// Max |cpu - reference| over every instruction set, in levels.
fn max_abs_error<T: Sample>(img: &Image<T>, p: &GaussianParams) -> f64 {
    let want = reference::gaussian(img, p).unwrap();
    let mut worst = 0.0f64;
    for isa in Isa::available() {
        let got = gaussian_with(img, p, isa).unwrap();
        for (g, r) in got.rows().flatten().zip(want.rows().flatten()) {
            worst = worst.max((g.to_f32() as f64 - *r as f64).abs());
        }
    }
    worst
}

/// The documented limits with the instruction set `isa`: 1e-5 of the
/// largest |input| for the FIRs (below [`IIR_MIN_SIGMA`], and u16 and f32
/// where [`Fir::new`] takes them), 1e-3 for Deriche's recursion.
fn tolerance<T: Sample>(p: &GaussianParams, shape: (usize, usize, usize), isa: Isa) -> f64 {
    if p.sigma_x.max(p.sigma_y) < IIR_MIN_SIGMA || Fir::new::<T>(p, shape, isa).is_some() {
        1e-5
    } else {
        1e-3
    }
}

fn check<T: Sample>(w: usize, h: usize, c: usize, p: &GaussianParams, seed: u64) {
    let img = random::<T>(w, h, c, seed);
    if T::TYPE == SampleType::U8 && Fixed::new(p, w, h).is_some() {
        let e = max_abs_error(&img, p);
        assert!(e < 1.0, "{w}x{h}x{c} u8 fixed: {p:?}: error {e} levels");
        return;
    }
    for isa in Isa::available() {
        let e = max_error(&img, p, isa);
        assert!(
            e <= tolerance::<T>(p, (w, h, c), isa),
            "{w}x{h}x{c} {} {isa:?}: {p:?}: error {e:.2e}",
            T::TYPE
        );
    }
}

fn check_any(t: usize, w: usize, h: usize, c: usize, p: &GaussianParams, seed: u64) {
    match t % 3 {
        0 => check::<u8>(w, h, c, p, seed),
        1 => check::<u16>(w, h, c, p, seed),
        _ => check::<f32>(w, h, c, p, seed),
    }
}

#[test]
fn matches_the_reference_for_every_size_and_sigma() {
    let mut i = 0;
    for (w, h) in SIZES {
        for s in SIGMAS {
            for border in [Border::Replicate, Border::Mirror] {
                // Rotate types and channels; 1000 only on one channel (the
                // reference is O(sigma) per sample).
                let c = if s > 100.0 { 1 } else { [1, 3, 4][i % 3] };
                check_any(i / 3, w, h, c, &params(s, s, border), i as u64);
                i += 1;
            }
        }
    }
}

#[test]
fn matches_the_reference_for_every_type_channel_count_and_sigma_pair() {
    let pairs = [
        (0.0, 2.5),
        (2.5, 0.0),
        (0.3, 7.0),
        (7.0, 0.8),
        (1.0, 40.0),
        (40.0, 1.0),
        (0.3, 0.8),
        (0.8, 0.0),
        (2.5, 7.0),
    ];
    let mut i = 0;
    for (sx, sy) in pairs {
        for border in [Border::Replicate, Border::Mirror] {
            for c in [1, 3, 4] {
                for t in 0..3 {
                    let (w, h) = [(13, 11), (31, 17), (7, 1), (1, 7)][i % 4];
                    check_any(t, w, h, c, &params(sx, sy, border), i as u64);
                    i += 1;
                }
            }
        }
    }
}

#[test]
fn both_forms_meet_the_limit_around_the_switch() {
    // Biquads up to BIQUAD_MAX_SIGMA, complex sections above: long
    // lines (rounding accumulates over them) on both sides.
    let below = BIQUAD_MAX_SIGMA as f32;
    let above = below + 0.5;
    assert!(Iir::new(below as f64).bq.is_some() && Iir::new(above as f64).bq.is_none());
    for s in [below, above] {
        for border in [Border::Replicate, Border::Mirror] {
            check::<f32>(700, 3, 1, &params(s, 0.0, border), 11);
            check::<u16>(5, 600, 4, &params(0.0, s, border), 12);
        }
    }
}

#[test]
fn matches_the_reference_across_blocks_strips_and_tasks() {
    // Wide enough for several blocks and tasks and every strip width.
    for (w, h, c) in [(300, 50, 3), (45, 170, 4), (531, 9, 1)] {
        for border in [Border::Replicate, Border::Mirror] {
            check::<f32>(w, h, c, &params(2.5, 4.0, border), (w * h) as u64);
            check::<u8>(w, h, c, &params(0.6, 1.5, border), (w + h) as u64);
        }
    }
}

#[test]
fn bands_and_segments_do_not_show() {
    // Tall images split into several bands and segments (warm-ups from
    // zero states), under different thread counts.
    for threads in [1, 3, 7] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            for border in [Border::Replicate, Border::Mirror] {
                check::<f32>(40, 700, 1, &params(2.0, 2.0, border), threads as u64);
                check::<u16>(17, 300, 4, &params(1.5, 3.0, border), 5 + threads as u64);
                check::<u8>(9, 400, 3, &params(0.0, 1.0, border), 9 + threads as u64);
            }
        });
    }
}

#[test]
fn constant_images_pass_unchanged() {
    fn run<T: Sample>(v: f32) {
        for (i, (w, h)) in SIZES.into_iter().chain([(40, 3), (3, 300)]).enumerate() {
            for (k, s) in SIGMAS.into_iter().chain([10_000.0]).enumerate() {
                let c = [1, 3, 4][(i + k) % 3];
                let img = Image::<T>::from_fn(w, h, c, |_, _, _| T::from_f32(v)).unwrap();
                {
                    for border in [Border::Replicate, Border::Mirror] {
                        for p in [params(s, s, border), params(s, 1.5, border)] {
                            for isa in Isa::available() {
                                let out = gaussian_with(&img, &p, isa).unwrap();
                                for g in out.rows().flatten() {
                                    let ok = if T::TYPE == SampleType::F32 {
                                        (g.to_f32() - v).abs() <= 1e-6 * v
                                    } else {
                                        g.to_f32() == v
                                    };
                                    assert!(
                                        ok,
                                        "{w}x{h}x{c} {} {p:?} {isa:?}: {g:?} != {v}",
                                        T::TYPE
                                    );
                                }
                            }
                        }
                    }
                }
            }
        }
    }
    run::<u8>(201.0);
    run::<u16>(51_234.0);
    run::<f32>(0.737);
}

#[test]
fn long_constant_lines_stay_exact() {
    // Where f32 recursions reach their steady state: thousands of samples
    // at sigma 1000 (each line's level is subtracted, so nothing drifts).
    for (w, h) in [(1, 40_000), (40_000, 1), (3, 9_000)] {
        for border in [Border::Replicate, Border::Mirror] {
            let p = params(1000.0, 1000.0, border);
            let img = Image::<u16>::from_fn(w, h, 3, |_, _, c| [65535, 40001, 3][c]).unwrap();
            assert_eq!(gaussian(&img, &p).unwrap(), img, "{w}x{h} {border:?}");
            let img = Image::<f32>::from_fn(w, h, 1, |_, _, _| 1.0e6).unwrap();
            assert_eq!(gaussian(&img, &p).unwrap(), img, "{w}x{h} {border:?}");
        }
    }
}

#[test]
fn into_a_kept_destination_gives_the_same_result() {
    let img = random::<u16>(37, 29, 3, 21);
    let p = params(2.5, 40.0, Border::Mirror);
    let want = gaussian(&img, &p).unwrap();
    // Packed, reused twice (stale contents must not show), and padded.
    let mut dst = random::<u16>(37, 29, 3, 22);
    for _ in 0..2 {
        gaussian_into(&img, &p, &mut dst).unwrap();
        assert_eq!(dst, want);
    }
    let mut padded = Image::from_vec_with_stride(37, 29, 3, 120, vec![9u16; 29 * 120]).unwrap();
    gaussian_into(&img, &p, &mut padded).unwrap();
    assert!(padded.rows().eq(want.rows()));
    // A copy (both sigmas 0) too.
    let copy = params(0.0, 0.0, Border::Replicate);
    gaussian_into(&img, &copy, &mut dst).unwrap();
    assert_eq!(dst, img);
    // The wrong size or channel count is an error, and dst is untouched.
    for (w, h, c) in [(36, 29, 3), (37, 30, 3), (37, 29, 4)] {
        let mut bad = Image::<u16>::from_fn(w, h, c, |_, _, _| 7).unwrap();
        let e = gaussian_into(&img, &p, &mut bad).unwrap_err();
        assert!(e.to_string().contains("destination"), "{e}");
        assert!(bad.rows().flatten().all(|v| *v == 7));
    }
}

#[test]
fn padded_rows_give_the_same_result() {
    let img = random::<u16>(19, 13, 3, 5);
    let mut data = vec![7u16; 13 * 61];
    for y in 0..13 {
        data[y * 61..y * 61 + 57].copy_from_slice(img.row(y));
    }
    let padded = Image::from_vec_with_stride(19, 13, 3, 61, data).unwrap();
    for p in [
        params(2.0, 3.0, Border::Mirror),
        params(0.5, 0.0, Border::Replicate),
        params(0.0, 0.0, Border::Mirror),
    ] {
        assert_eq!(gaussian(&img, &p).unwrap(), gaussian(&padded, &p).unwrap());
    }
}

#[test]
fn huge_sigma_on_long_lines_stays_accurate() {
    // Far beyond the image and the reference's reach: compare with Deriche in f64.
    for border in [Border::Replicate, Border::Mirror] {
        let img = random::<f32>(1, 3000, 1, 9);
        let p = params(0.0, 10_000.0, border);
        let got = gaussian(&img, &p).unwrap();
        let x: Vec<f64> = img.rows().flatten().map(|v| *v as f64).collect();
        let want = deriche_f64(&x, 10_000.0, border);
        let e = got
            .rows()
            .flatten()
            .zip(&want)
            .map(|(a, b)| (*a as f64 - b).abs())
            .fold(0.0, f64::max);
        assert!(e < 1e-4, "{border:?}: {e:.2e}");
    }
}

/// Deriche's filter in f64 on the explicitly extended line (for mirror:
/// enough periods that the rest is negligible... or all of it for replicate).
fn deriche_f64(x: &[f64], sigma: f64, border: Border) -> Vec<f64> {
    let n = x.len() as i64;
    let pad = 40 * sigma as i64;
    let ext: Vec<f64> = (-pad..n + pad)
        .map(|i| x[source_index(i, n, border)])
        .collect();
    let d = Deriche::new(sigma);
    let mut line = ext.clone();
    let mut tmp = vec![0.0; line.len()];
    d.filter_line_f64(&mut line, &mut tmp);
    line[pad as usize..(pad + n) as usize].to_vec()
}

#[test]
fn accuracy_summary() {
    // Not a limit test: prints the measured errors for the record.
    for s in [0.3f32, 0.8, 1.0, 2.0, 2.5, 7.0, 16.0, 40.0] {
        for border in [Border::Replicate, Border::Mirror] {
            let img = random::<f32>(64, 48, 1, 3);
            let p = params(s, s, border);
            let e = Isa::available().into_iter().map(|isa| max_error(&img, &p, isa)).fold(0.0, f64::max);
            eprintln!("sigma {s:>5} {border:?}: max |cpu - reference| = {e:.2e} of full scale");
        }
    }
}

/// Up to 6: the bound holds past the cut-off ([`FIXED_MAX_SIGMA`]).
const FIXED_SIGMAS: [f32; 14] = [
    0.2, 0.3, 0.5, 0.8, 1.0, 1.3, 2.0, 2.5, 2.9, 3.0, 3.7, 4.0, 5.0, 6.0,
];

#[test]
fn u8_fixed_point_is_within_one_level_of_the_reference() {
    // Odd sizes, rows shorter and longer than a block of columns (with a
    // tail), every border, gray/RGB/RGBA, one axis copied or both filtered.
    let sizes = [(1, 1), (1, 9), (9, 1), (2, 3), (13, 11), (37, 5), (131, 7), (5, 67)];
    let (mut i, mut worst) = (0u64, 0.0f64);
    for (w, h) in sizes {
        for s in FIXED_SIGMAS {
            for border in [Border::Replicate, Border::Mirror] {
                let c = [1, 3, 4][i as usize % 3];
                let sy = [s, 0.0, 1.7, FIXED_MAX_SIGMA][i as usize % 4];
                for p in [params(s, s, border), params(s, sy, border), params(0.0, s, border)] {
                    let img = random::<u8>(w, h, c, i);
                    let e = max_abs_error(&img, &p);
                    assert!(e < 1.0, "{w}x{h}x{c} {p:?}: {e} levels");
                    worst = worst.max(e);
                    i += 1;
                }
            }
        }
    }
    // For the record (docs/QUALITY.md): the worst |out - reference|.
    eprintln!("u8 fixed point: worst {worst:.3} levels");
}

#[test]
fn u8_fixed_point_stays_exact_on_edges_and_extremes() {
    // Steps between 0 and 255 put the most weight on the rounding.
    for (w, h) in [(64, 64), (3, 40), (70, 2)] {
        for c in [1, 3, 4] {
            let img = Image::<u8>::from_fn(w, h, c, |x, y, ch| {
                if (x / 3 + y / 5 + ch) % 2 == 0 { 255 } else { 0 }
            })
            .unwrap();
            for s in [0.5, 1.0, 2.0, FIXED_MAX_SIGMA] {
                for border in [Border::Replicate, Border::Mirror] {
                    let p = params(s, s, border);
                    let e = max_abs_error(&img, &p);
                    assert!(e < 1.0, "{w}x{h}x{c} {p:?}: {e} levels");
                }
            }
        }
    }
}

#[test]
fn u8_fixed_point_error_budget_is_below_half_a_level() {
    // The documented bound: the floors (under 1/128 of a level per kept tap
    // and axis, centred by the bias to half of that) plus each axis's
    // weights against the reference's full kernel (cut, renormalised,
    // rounded: at most MAX_WEIGHT_ERROR) stay below 0.5, so the output is
    // the reference rounded down or up.
    for s in FIXED_SIGMAS {
        let t = reference::taps(s as f64);
        let Some(f) = FixedTaps::new(s) else {
            // Copied: every side tap of the reference is below 2^-17.
            assert!(4.0 * t[t.len() / 2 - 1] * 255.0 < 0.01, "sigma {s}");
            continue;
        };
        let moved = weight_error(&t, &f.w);
        assert!(moved <= MAX_WEIGHT_ERROR, "sigma {s}: {moved}");
        // The smallest such radius: one less is over the budget.
        if f.radius() > 1 {
            let shorter = weights(&t, f.radius() - 1);
            assert!(weight_error(&t, &shorter) > MAX_WEIGHT_ERROR, "sigma {s}");
        }
        let floors = (f.radius() + 1) as f64 / 128.0;
        let budget = floors + 2.0 * moved;
        assert!(budget < 0.5, "sigma {s}: {budget:.3} levels");
    }
    assert!(FixedTaps::new(0.1).is_none() && FixedTaps::new(0.3).is_some());
    // The documented radii, against OpenCV's default window's 3, 6, 9, 12.
    let radii = [1.0, 2.0, 3.0, 4.0].map(|s| FixedTaps::new(s).map(|f| f.radius()));
    assert_eq!(radii, [Some(3), Some(7), Some(10), Some(14)]);
}

#[test]
fn fir_matches_the_reference_at_every_strip_width() {
    // Widths around one and two vectors of every instruction set (the
    // strips' tails), primes, single rows and columns; sigmas up to the
    // switch, one axis copied or both filtered; u16 and f32.
    // Heights of one pair of rows (2), and of pairs and a last row alone
    // (3, 5, 9, 11).
    let sizes = [(1, 1), (1, 23), (23, 1), (7, 3), (15, 9), (16, 5), (17, 6), (33, 4)];
    let sizes = sizes.into_iter().chain([(37, 11), (131, 5), (5, 131), (64, 3), (19, 2), (2, 2)]);
    let mut i = 0u64;
    for (w, h) in sizes {
        for s in [0.3, 1.0, 2.0, 2.7, FIR_MAX_SIGMA] {
            for border in [Border::Replicate, Border::Mirror] {
                let c = [1, 3, 4][i as usize % 3];
                let sy = [s, 0.0, 1.3][i as usize % 3];
                for p in [params(s, sy, border), params(0.0, s, border)] {
                    assert!(Fir::new::<f32>(&p, (w, h, c), Isa::Portable).is_some());
                    check::<f32>(w, h, c, &p, i);
                    check::<u16>(w, h, c, &p, i + 1);
                    i += 2;
                }
            }
        }
    }
}

#[test]
fn fir_column_ranges_and_row_groups_do_not_show() {
    // Rows longer than one column range (about 2048 samples: 1050 + 1050,
    // 467 + 467 + 466, and five of 434 + 430 pixels), and bands taller than
    // one group of rows (one thread), or not (three), so each range's ring
    // carries on across groups; f32 and u16 with both axes filtered.
    for threads in [1, 3] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .unwrap();
        pool.install(|| {
            for (w, h, c) in [(2100, 37, 1), (1400, 40, 3), (2600, 20, 4)] {
                for (i, border) in [Border::Replicate, Border::Mirror].into_iter().enumerate() {
                    let p = params(2.5 + i as f32 * 0.5, 1.5, border);
                    assert!(Fir::new::<f32>(&p, (w, h, c), Isa::Portable).is_some());
                    check::<f32>(w, h, c, &p, (w + i) as u64);
                    let p = params(FIR_MAX_SIGMA, 2.0, border);
                    check::<u16>(w, h, c, &p, (h + i + threads) as u64);
                }
            }
        });
    }
}

#[test]
fn fir_weights_are_within_their_budget() {
    // Each axis's f32 weights against the reference's full kernel: at
    // most FIR_MAX_ERROR (L1), at the smallest such radius; two axes and
    // the f32 sums stay inside the 1e-5 that `tolerance` allows.
    for s in [0.2f32, 0.3, 0.5, 0.8, 1.0, 1.3, 2.0, 2.5, 2.9, FIR_MAX_SIGMA] {
        let t = reference::taps(s as f64);
        let f = FirTaps::new(s);
        let moved = fir::weight_error(&t, &f.w);
        assert!(moved <= FIR_MAX_ERROR, "sigma {s}: {moved:.2e}");
        if f.radius() > 0 {
            let shorter = fir::weights(&t, f.radius() - 1);
            assert!(fir::weight_error(&t, &shorter) > FIR_MAX_ERROR, "sigma {s}");
        }
    }
    const { assert!(2.0 * FIR_MAX_ERROR < 1e-5) };
    // The documented radii, against OpenCV's default float window's 4, 8, 12.
    let radii = [1.0, 2.0, 3.0].map(|s| FirTaps::new(s).radius());
    assert_eq!(radii, [5, 10, 14]);
    // Types and sigmas the FIR leaves to other paths.
    let p = params(2.0, FIR_MAX_SIGMA + 0.1, Border::Mirror);
    assert!(Fir::new::<f32>(&p, (9, 9, 1), Isa::Portable).is_none());
    let p = params(2.0, 2.0, Border::Mirror);
    assert!(Fir::new::<u8>(&p, (9, 9, 1), Isa::Portable).is_none());
    // Where the recursion has 512-bit vectors, f32 gray takes the FIR up
    // to FIR_MAX_SIGMA_F32_512 only; colour f32 and u16 up to
    // FIR_MAX_SIGMA still.
    #[cfg(target_arch = "x86_64")]
    {
        let wide = |s: f32| params(s, FIR_MAX_SIGMA_F32_512, Border::Mirror);
        let over = wide(FIR_MAX_SIGMA_F32_512 + 0.1);
        assert!(Fir::new::<f32>(&wide(1.0), (9, 9, 1), Isa::Avx512).is_some());
        assert!(Fir::new::<f32>(&over, (9, 9, 1), Isa::Avx512).is_none());
        assert!(Fir::new::<f32>(&wide(2.0), (9, 9, 1), Isa::Avx2).is_some());
        for c in [3, 4] {
            assert!(Fir::new::<f32>(&wide(FIR_MAX_SIGMA), (9, 9, c), Isa::Avx512).is_some());
        }
        assert!(Fir::new::<u16>(&wide(FIR_MAX_SIGMA), (9, 9, 1), Isa::Avx512).is_some());
    }
}

#[test]
fn direct_bands_are_tall_enough_to_pay_for_their_overlap() {
    // (threads, height, ry) -> rows per band: two bands per thread where
    // each is then at least 16 ry tall, one per thread else, never below
    // 4 ry, never past the image.
    for (threads, h, ry, want) in [
        (2, 2160, 10, 540),
        (16, 2160, 10, 135),
        (16, 2160, 0, 68),
        (16, 100, 10, 40),
        (3, 30, 10, 30),
        (1, 1, 5, 1),
    ] {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        let got = pool.install(|| direct_band(h, ry));
        assert_eq!(got, want, "{threads} threads, {h} rows, ry {ry}");
    }
}
