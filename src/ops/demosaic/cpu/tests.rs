//! The rayon demosaic against the reference, on every instruction set it
//! is compiled for. (The narrowing and the byte stores are tested in
//! `crate::simd`.)

use super::bytes::{self, exact};
use super::{demosaic_with, CHUNK, VECTOR_BITS};
use crate::image::{Image, Sample, SampleType};
use crate::ops::demosaic::{reference, DemosaicParams, Method, Pattern, Raw};
use crate::simd::Isa;

/// Every method computes the reference's arithmetic in its order, so
/// every instruction set gives exactly the reference's samples, over
/// several bands, partial chunks and both channel counts.
#[test]
fn every_method_equals_the_reference_exactly() {
    let isas: Vec<Isa> = Isa::available()
        .into_iter()
        .filter(|i| i.vector_bits() <= VECTOR_BITS)
        .collect();
    let mut rng = crate::test_rng::Rng::new(0x2545_f491_4f6c_dd1d);
    let mut next = move || rng.next_u64();
    let c = 2 * CHUNK;
    for (w, h) in [(2, 2), (6, 4), (34, 70), (c + 22, 10), (3 * c, 6)] {
        let u8s = Image::from_fn(w, h, 1, |_, _, _| next() as u8).unwrap();
        let u16s = Image::from_fn(w, h, 1, |_, _, _| (next() % 1024) as u16).unwrap();
        for (raw, bits) in [(Raw::U8(&u8s), None), (Raw::U16(&u16s), Some(10))] {
            for pattern in Pattern::ALL {
                for method in Method::ALL {
                    for channels in [3, 4] {
                        let p = DemosaicParams {
                            pattern,
                            method,
                            black: 3.0,
                            gains: [1.9, 1.0, 1.4],
                            channels,
                            bits,
                        };
                        for &isa in &isas {
                            let ctx = format!("{w}x{h} {pattern} {method} x{channels} {isa:?}");
                            same::<u8>(&raw, &p, isa, &ctx);
                            same::<u16>(&raw, &p, isa, &ctx);
                            same::<f32>(&raw, &p, isa, &ctx);
                        }
                    }
                }
            }
        }
    }
}

fn same<U: Sample>(raw: &Raw<'_>, p: &DemosaicParams, isa: Isa, ctx: &str) {
    let lv = p.levels(raw, U::TYPE).unwrap();
    let want: Image<U> = reference::demosaic(raw, p, &lv).unwrap();
    let got: Image<U> = demosaic_with(raw, p, &lv, isa).unwrap();
    assert_eq!(
        got.packed_samples(),
        want.packed_samples(),
        "{ctx} -> {}",
        U::TYPE
    );
}

/// 8-bit frames at the default levels take the integer path for bilinear
/// and mhc, and give the reference's bytes exactly: random frames and
/// extreme ones (where mhc's sums leave 0..=255 and are clamped), every
/// pattern, both channel counts, sizes down to 2 rows or columns and
/// across partial blocks and bands, on every instruction set (`demosaic`
/// and the integer path itself, which `demosaic` skips on the portable set).
#[test]
fn the_integer_path_equals_the_reference_exactly() {
    let isas: Vec<Isa> = Isa::available()
        .into_iter()
        .filter(|i| i.vector_bits() <= VECTOR_BITS)
        .collect();
    let mut rng = crate::test_rng::Rng::new(0x9e37_79b9_7f4a_7c15);
    let mut next = move || rng.next_u64();
    let c = 2 * CHUNK;
    // Widths around the first and last blocks' reach (4 lanes + 2 bytes)
    // for 8 and 16 lanes, and ones that leave partial blocks.
    let sizes = [
        (2, 2),
        (2, 14),
        (18, 2),
        (6, 4),
        (34, 4),
        (36, 2),
        (66, 6),
        (68, 4),
        (98, 8),
        (258, 34),
        (1026, 66),
        (c + 18, 6),
    ];
    for (w, h) in sizes {
        let noise = Image::from_fn(w, h, 1, |_, _, _| next() as u8).unwrap();
        let extremes = Image::from_fn(w, h, 1, |_, _, _| [0, 255][(next() & 1) as usize]).unwrap();
        for img in [&noise, &extremes] {
            let raw = Raw::U8(img);
            for pattern in Pattern::ALL {
                for method in [Method::Bilinear, Method::Mhc] {
                    for channels in [3, 4] {
                        let p = DemosaicParams {
                            channels,
                            ..DemosaicParams::new(pattern, method)
                        };
                        let lv = p.levels(&raw, SampleType::U8).unwrap();
                        assert!(exact(&raw, &p, &lv));
                        let want: Image<u8> = reference::demosaic(&raw, &p, &lv).unwrap();
                        for &isa in &isas {
                            let ctx = format!("{w}x{h} {pattern} {method} x{channels} {isa:?}");
                            same::<u8>(&raw, &p, isa, &ctx);
                            // The integer path itself, also where `demosaic`
                            // takes the f32 one (the portable set).
                            let got = crate::simd::mem::vec_filled(want.packed_samples().len(), |o| {
                                bytes::run(img, &p, o, isa)
                            })
                            .unwrap();
                            assert_eq!(got[..], want.packed_samples()[..], "{ctx}: bytes::run");
                        }
                    }
                }
            }
        }
    }
}

/// Where the integer path would not be exact, it is not taken, nor on the
/// portable instruction set.
#[test]
fn the_integer_path_only_where_exact() {
    let img = Image::from_fn(8, 8, 1, |x, y, _| (x * 31 + y * 7) as u8).unwrap();
    let raw = Raw::U8(&img);
    let ok = |p: &DemosaicParams| exact(&raw, p, &p.levels(&raw, SampleType::U8).unwrap());
    let base = DemosaicParams::new(Pattern::Rggb, Method::Bilinear);
    assert!(ok(&base));
    assert!(!ok(&DemosaicParams {
        method: Method::Edge,
        ..base
    }));
    assert!(!ok(&DemosaicParams { black: 1.0, ..base }));
    assert!(!ok(&DemosaicParams {
        gains: [1.0, 1.0, 1.5],
        ..base
    }));
    let u16s = Image::from_fn(8, 8, 1, |_, _, _| 9u16).unwrap();
    let wide = Raw::U16(&u16s);
    assert!(!exact(&wide, &base, &base.levels(&wide, SampleType::U8).unwrap()));
    // The portable set keeps the f32 path (faster there).
    assert!(!bytes::vectorised(Isa::Portable));
    assert!(Isa::available().into_iter().skip(1).all(bytes::vectorised));
}

/// The edge method's band makes its working rows as the quad rows reach
/// them (with the mirrored rows past the image's top and bottom), so it is
/// checked on frames of 2 rows or columns, bands whose last one is 2 rows
/// (h = 32 k + 2), widths that leave a partial chunk, random and 0/full
/// frames, at the default levels and with black and gains, 8-bit and full
/// 16-bit frames, every pattern and instruction set: exactly the
/// reference's samples.
#[test]
fn the_edge_method_equals_the_reference_exactly_at_odd_sizes() {
    let isas: Vec<Isa> = Isa::available()
        .into_iter()
        .filter(|i| i.vector_bits() <= VECTOR_BITS)
        .collect();
    let mut rng = crate::test_rng::Rng::new(0x6a09_e667_f3bc_c908);
    let mut next = move || rng.next_u64();
    let sizes = [(2, 2), (2, 62), (34, 2), (62, 2), (2, 34), (14, 66), (CHUNK * 2 + 6, 34), (98, 98)];
    for (w, h) in sizes {
        let noise = Image::from_fn(w, h, 1, |_, _, _| next() as u8).unwrap();
        let extremes = Image::from_fn(w, h, 1, |_, _, _| [0, 255][(next() & 1) as usize]).unwrap();
        let wide = Image::from_fn(w, h, 1, |_, _, _| next() as u16).unwrap();
        for raw in [Raw::U8(&noise), Raw::U8(&extremes), Raw::U16(&wide)] {
            for pattern in Pattern::ALL {
                let plain = DemosaicParams::new(pattern, Method::Edge);
                let levelled = DemosaicParams {
                    black: 5.0,
                    gains: [2.1, 0.9, 1.3],
                    ..plain
                };
                for p in [plain, levelled] {
                    for &isa in &isas {
                        let ctx = format!("{w}x{h} {pattern} black {} {isa:?}", p.black);
                        same::<u8>(&raw, &p, isa, &ctx);
                        same::<u16>(&raw, &p, isa, &ctx);
                        same::<f32>(&raw, &p, isa, &ctx);
                    }
                }
            }
        }
    }
}
