//! Histograms with hostile bin counts: `filterctl histogram --bins
//! 16777216` on a small image. Each parallel band of the CPU path keeps a
//! whole set of counts; one set per band and thread (a 23x37 f32 image took
//! 31 s, and 4 channels on 128 cores would have held 64 GiB) gave way to
//! bands of at least as many samples as there are counts.

use clfilter::ops::histogram::{HistogramExt, HistogramParams};
use clfilter::{Engine, Image};

use crate::common::{random_image, Rng};
use crate::{peak_during, serial};

#[test]
fn many_bins_on_a_small_image_hold_one_set_of_counts() {
    let _serial = serial();
    let mut rng = Rng::new(5);
    let (w, h, c, bins) = (64, 48, 4, 1usize << 20);
    let img: Image<f32> = random_image(&mut rng, w, h, c);
    let p = HistogramParams {
        bins,
        lo: 0.0,
        hi: 1.0,
    };
    // Many threads: one set of counts each would be 16 x 32 MiB.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(16)
        .build()
        .unwrap();
    let (got, peak) = peak_during(|| pool.install(|| Engine::cpu().histogram(&img, &p).unwrap()));
    let set = c * bins * 8;
    // The counts, the per-channel lists made from them, and small change.
    assert!(
        peak <= 2 * set + (8 << 20),
        "peak {peak} bytes, a set is {set}"
    );
    // The counts themselves, against a plain count.
    let mut want = vec![vec![0u64; bins]; c];
    for (i, &v) in img.rows().flatten().enumerate() {
        if (0.0..=1.0).contains(&v) {
            want[i % c][((v as f64 * bins as f64) as usize).min(bins - 1)] += 1;
        }
    }
    assert_eq!(got.counts, want);
}
