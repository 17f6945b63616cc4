//! The rayon demosaic against the reference, on every instruction set it
//! is compiled for. (The narrowing and the byte stores are tested in
//! `crate::simd`.)

use super::{demosaic_with, CHUNK, VECTOR_BITS};
use crate::image::{Image, Sample};
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
