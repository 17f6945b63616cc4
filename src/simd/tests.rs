//! Tests of the narrowing, the interleaving stores, the strip walks and the
//! output-buffer helpers, on every instruction set the host runs.

use std::marker::PhantomData;
use std::mem::MaybeUninit;

use super::mem::{self, Filler};
use super::*;

/// Quads per colour row in the store tests (the demosaic's chunk).
const CHUNK: usize = 192;

#[test]
fn narrowing_equals_from_f32() {
    let mut v = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        -0.5,
        1e30,
        -1e30,
    ];
    // Every half step over both ranges, and values just beside them.
    for i in -4..=2 * 65540 {
        let x = i as f32 * 0.5;
        v.extend([x, x.next_up(), x.next_down()]);
    }
    for x in v {
        assert_eq!(<u8 as Narrow>::narrow(x), u8::from_f32(x), "{x}");
        assert_eq!(<u16 as Narrow>::narrow(x), u16::from_f32(x), "{x}");
    }
}

/// Runs `T` with every instruction set's token.
fn on_every_isa<T: WithSimd + Clone>(op: T) {
    for isa in Isa::available() {
        isa.vectorize(op.clone());
    }
}

/// The byte and u16 stores (AVX2) narrow exactly as `narrow` (round half
/// to even, saturate, NaN to 0) and put every sample where the scalar
/// stores do; so do the other instruction sets' stores.
#[test]
fn u8_and_u16_stores_equal_narrow() {
    stores_equal_narrow::<u8>(255, 200.0);
    stores_equal_narrow::<u16>(65535, 51234.0);
}

/// [`u8_and_u16_stores_equal_narrow`] of `U` (full scale `hi`), with the
/// RGBA stores' alpha `alpha`.
fn stores_equal_narrow<U: Narrow + PartialEq + std::fmt::Debug>(hi: i32, alpha: f32) {
    let mut vals = vec![
        f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        -0.0,
        1e30,
        -1e30,
    ];
    // Half steps at the bottom and the top of the range, and beside them.
    for i in (-4..=520).chain(2 * hi - 520..=2 * hi + 10) {
        let x = i as f32 * 0.5;
        vals.extend([x, x.next_up(), x.next_down()]);
    }
    let mut data = Box::new([[[[0f32; CHUNK]; 2]; 3]; 2]);
    let mut it = vals.iter().cycle();
    for v in data.iter_mut().flatten().flatten().flatten() {
        *v = *it.next().unwrap();
    }
    // Several passes, so every value meets every position.
    for shift in 0..3 {
        on_every_isa(StoresEqualNarrow::<U, 3>(data.clone(), alpha, PhantomData));
        on_every_isa(StoresEqualNarrow::<U, 4>(data.clone(), alpha, PhantomData));
        for v in data.iter_mut().flatten().flatten().flatten() {
            *v = *it.nth(shift).unwrap();
        }
    }
}

type Planes = Box<[[[[f32; CHUNK]; 2]; 3]; 2]>;

#[derive(Clone)]
struct StoresEqualNarrow<U, const C: usize>(Planes, f32, PhantomData<U>);

impl<U: Narrow + PartialEq + std::fmt::Debug, const C: usize> WithSimd for StoresEqualNarrow<U, C> {
    type Output = ();
    fn with_simd<S: Simd>(self, s: S) {
        let data = &self.0;
        let src: Quads<CHUNK> = std::array::from_fn(|py| {
            std::array::from_fn(|c| std::array::from_fn(|px| &data[py][c][px]))
        });
        // Whole chunks, and a part with a tail of quads (not a multiple of 8).
        for q in [CHUNK, 29] {
            let n = 2 * q * C;
            let mut rows = [0, 1].map(|_| vec![MaybeUninit::new(U::narrow(7.0)); n]);
            let [r0, r1] = &mut rows;
            let out = s.interleave_quads::<U, C, CHUNK>([r0, r1], &src, q, self.1);
            for (py, row) in out.iter().enumerate() {
                for (k, got) in row.iter().enumerate() {
                    let (quad, px, c) = (k / (2 * C), k / C % 2, k % C);
                    let want = match c {
                        3 => U::narrow(self.1),
                        _ => U::narrow(data[py][c][px][quad]),
                    };
                    assert_eq!(
                        *got,
                        want,
                        "{:?} C={C} row {py} quad {quad} px {px} colour {c}",
                        S::ISA
                    );
                }
            }
        }
    }
}

/// The byte pairs split, add, subtract, scale, round and store as the
/// scalar arithmetic does, on every instruction set: every pair of bytes,
/// sums that leave 0..=255 (saturated by the store) and every shift the
/// rounding takes, into RGB and RGBA.
#[test]
fn byte_pairs_compute_and_store_as_scalars() {
    #[derive(Clone)]
    struct Run;
    impl WithSimd for Run {
        type Output = ();
        fn with_simd<S: Simd>(self, s: S) {
            s.with_pairs(Pairs(S::ISA));
        }
    }
    struct Pairs(Isa);
    impl pairs::WithPairs for Pairs {
        type Output = ();
        fn with<V: pairs::BytePairs>(self, t: V::Token) {
            pairs_with::<V, 3, 1>(t, self.0);
            pairs_with::<V, 4, 2>(t, self.0);
            pairs_with::<V, 3, 3>(t, self.0);
            pairs_with::<V, 4, 4>(t, self.0);
        }
    }
    on_every_isa(Run);
}

/// [`byte_pairs_compute_and_store_as_scalars`] for `C` channels and a
/// shift by `K`.
fn pairs_with<V: pairs::BytePairs, const C: usize, const K: i32>(t: V::Token, isa: Isa) {
    let n = V::N;
    let all: Vec<u8> = (0..=255u8)
        .flat_map(|e| (0..=255u8).flat_map(move |o| [e, o]))
        .collect();
    let scale = (-K as f32).exp2();
    let want = |x: i32| <u8 as Narrow>::narrow(x as f32 * scale);
    for s in all.chunks_exact(2 * n) {
        let [e, o] = V::split(t, s);
        let mix = |a: V, b: V| a.scale(63).sub(b.scale(32)).round_shr::<K>();
        let planes = [[mix(e, o), mix(o, e)], [e, o], [e.add(o), e.sub(o)]];
        let mut d = vec![MaybeUninit::new(7u8); 2 * n * C];
        let got = V::store::<C>(t, &mut d, &planes, 201);
        for (i, px) in got.chunks_exact(C).enumerate() {
            let (a, b) = (i32::from(s[i]), i32::from(s[i ^ 1]));
            let (e, o) = (i32::from(s[i & !1]), i32::from(s[i | 1]));
            let plus_minus = if i % 2 == 0 { e + o } else { e - o };
            let mut expect = vec![want(63 * a - 32 * b), s[i], plus_minus.clamp(0, 255) as u8];
            expect.extend((C == 4).then_some(201));
            assert_eq!(px, &expect[..], "{isa:?} C={C} K={K} pixel {i} of {s:?}");
        }
    }
}

/// Every column of a block, for widths around each strip size.
#[test]
fn strips_into_writes_every_sample() {
    #[derive(Clone)]
    struct Fill(usize);
    struct Count<'a>(&'a [f32], usize);
    impl StripsInto for Count<'_> {
        fn strip_into<V: Vf32, const K: usize>(
            &mut self,
            t: V::Token,
            j: usize,
            out: &mut StripOut<'_, V, K>,
        ) {
            for _ in 0..self.1 {
                for q in 0..K {
                    out.put(V::load(t, &self.0[j + q * V::N..]));
                }
            }
        }
    }
    impl WithSimd for Fill {
        type Output = ();
        fn with_simd<S: Simd>(self, s: S) {
            let (m, rows) = (self.0, 3);
            let src: Vec<f32> = (0..m).map(|i| i as f32).collect();
            let mut buf = vec![MaybeUninit::new(-1.0f32); rows * m];
            let got = s.strips_into(m, &mut buf, &mut Count(&src, rows));
            for (i, v) in got.iter().enumerate() {
                assert_eq!(*v, (i % m) as f32, "{:?} m={m}", S::ISA);
            }
        }
    }
    for m in (0..70).chain([95, 96, 97]) {
        on_every_isa(Fill(m));
    }
}

#[test]
fn fillers_check_what_comes_back() {
    let mut buf = vec![MaybeUninit::<u16>::uninit(); 10];
    let mut f = Filler::new(&mut buf);
    let a = f.next(4);
    let b = f.next(6);
    f.commit(mem::fill_init(a, 1));
    f.commit(mem::write_copy(b, &[2; 6]));
    assert_eq!(f.finish(), &[1, 1, 1, 1, 2, 2, 2, 2, 2, 2]);
    // Out of order, or missing pieces, panic.
    let r = std::panic::catch_unwind(|| {
        let mut buf = vec![MaybeUninit::<u16>::uninit(); 10];
        let mut f = Filler::new(&mut buf);
        let a = f.next(4);
        let b = mem::fill_init(f.next(6), 0);
        f.commit(b);
        let _ = a;
    });
    assert!(r.is_err());
    let r = std::panic::catch_unwind(|| {
        let mut buf = vec![MaybeUninit::<u16>::uninit(); 10];
        let mut f = Filler::new(&mut buf);
        let a = mem::fill_init(f.next(4), 0);
        f.commit(a);
        f.finish().len()
    });
    assert!(r.is_err());
}

#[test]
fn column_ranges_fill_every_row() {
    // Three rows of 7 in ranges 0..3, 3..4, 4..7: range by range, pairs
    // of rows top to bottom within each, the last row alone.
    let mut buf = vec![MaybeUninit::<u16>::uninit(); 21];
    let mut order = Vec::new();
    let segs = [0..3, 3..4, 4..7];
    let got = mem::fill_segment_pairs(&mut buf, 7, &segs, |s, i, a, b| {
        order.push((s, i, b.is_some()));
        let b = b.map(|b| mem::fill_init(b, (10 * s + i + 1) as u16));
        (mem::fill_init(a, (10 * s + i) as u16), b)
    });
    let row = |i: u16| [i, i, i, 10 + i, 20 + i, 20 + i, 20 + i];
    assert_eq!(got, [row(0), row(1), row(2)].concat());
    let want: Vec<_> = (0..3).flat_map(|s| [(s, 0, true), (s, 2, false)]).collect();
    assert_eq!(order, want);
    // Ranges that leave a gap, overlap or stop short, and a piece that is
    // not the one handed out, panic.
    for segs in [vec![0..3, 4..7], vec![0..4, 3..7], vec![0..2, 2..6]] {
        let r = std::panic::catch_unwind(|| {
            let mut buf = vec![MaybeUninit::<u16>::uninit(); 14];
            mem::fill_segment_pairs(&mut buf, 7, &segs, |_, _, a, b| {
                (mem::fill_init(a, 0), b.map(|b| mem::fill_init(b, 0)))
            })
            .len()
        });
        assert!(r.is_err(), "{segs:?}");
    }
    let r = std::panic::catch_unwind(|| {
        let mut buf = vec![MaybeUninit::<u16>::uninit(); 14];
        let spare = vec![MaybeUninit::<u16>::uninit(); 7];
        let spare: &'static mut [MaybeUninit<u16>] = spare.leak();
        let mut spare = Some(spare);
        mem::fill_segment_pairs(&mut buf, 7, &[0..3, 3..7], |_, _, a, b| {
            match spare.take() {
                Some(o) => (mem::fill_init(o, 0), b.map(|b| mem::fill_init(b, 0))),
                None => (mem::fill_init(a, 0), b.map(|b| mem::fill_init(b, 0))),
            }
        })
        .len()
    });
    assert!(r.is_err());
    // A second row dropped, or one made where there was none, panics.
    let r = std::panic::catch_unwind(|| {
        let mut buf = vec![MaybeUninit::<u16>::uninit(); 14];
        mem::fill_segment_pairs(&mut buf, 7, &[0..3, 3..7], |_, _, a, _| {
            (mem::fill_init(a, 0), None)
        })
        .len()
    });
    assert!(r.is_err());
    let r = std::panic::catch_unwind(|| {
        let mut buf = vec![MaybeUninit::<u16>::uninit(); 7];
        let spare: &'static mut [MaybeUninit<u16>] = vec![MaybeUninit::uninit(); 7].leak();
        let mut spare = Some(spare);
        mem::fill_segment_pairs(&mut buf, 7, &[0..3, 3..7], |_, _, a, _| {
            (
                mem::fill_init(a, 0),
                spare.take().map(|o| mem::fill_init(o, 0)),
            )
        })
        .len()
    });
    assert!(r.is_err());
}

#[test]
fn whole_buffers_come_back_written() {
    let v = mem::vec_filled(1000, |s| {
        Ok::<_, crate::Error>(mem::par_fill(
            s,
            64,
            || (),
            |(), i, c| mem::fill_init(c, i as u32),
        ))
    })
    .unwrap();
    assert!(v.iter().enumerate().all(|(k, x)| *x == (k / 64) as u32));
    // A kept buffer (of a type no other test uses, so none takes it) is
    // written where it lies; its old contents are overwritten. (The
    // refusal below frees the kept buffers, so this comes first.)
    type Odd = [u8; 5];
    let n = crate::image::recycle::MIN_BYTES / 5 + 2;
    let kept: Vec<Odd> = vec![[7; 5]; n];
    let p = kept.as_ptr();
    crate::image::recycle::give(kept);
    let v = mem::vec_filled(n - 1, |s| Ok::<_, crate::Error>(mem::fill_init(s, [1; 5]))).unwrap();
    assert_eq!((v.as_ptr(), v.len()), (p, n - 1));
    assert!(v.iter().all(|x| *x == [1; 5]));
    // Memory the system refuses is an error, not an abort.
    let refused = mem::vec_filled(1 << 62, |s: &mut [MaybeUninit<u8>]| {
        Ok::<_, crate::Error>(mem::fill_init(s, 0))
    });
    assert!(matches!(refused, Err(crate::Error::OutOfMemory { bytes, .. }) if bytes == 1 << 62));
    assert!(matches!(
        mem::try_zeroed::<u16>(1 << 61),
        Err(crate::Error::OutOfMemory { .. })
    ));
    let zeros = mem::try_zeroed::<f32>(1000).unwrap();
    assert!(zeros.len() == 1000 && zeros.iter().all(|z| z.to_bits() == 0));
    assert!(mem::try_zeroed::<u8>(0).unwrap().is_empty());
    let mut s = vec![5u8; 9];
    mem::overwrite(&mut s, |u| mem::fill_init(u, 3));
    assert_eq!(s, [3; 9]);
    // A panic inside leaves initialised (default) samples behind.
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        mem::overwrite(&mut s, |u| {
            u[0] = MaybeUninit::uninit();
            panic!("on purpose")
        })
    }));
    assert!(r.is_err());
    assert_eq!(s, [0; 9]);
}

#[test]
fn streamed_copies_write_every_sample() {
    // Every length up to a few 16-byte blocks, from every start inside a
    // block (the part before the first boundary and after the last one
    // go by plain copies).
    fn check<T: Sample + PartialEq + std::fmt::Debug>(from: fn(usize) -> T) {
        let src: Vec<T> = (0..200).map(from).collect();
        for start in 0..16 {
            for n in 0..150 {
                let mut buf = vec![MaybeUninit::<T>::uninit(); start + n];
                let got = mem::write_stream(&mut buf[start..], &src[..n]);
                assert_eq!(got, &src[..n], "{start} + {n}");
            }
        }
    }
    check::<u8>(|i| i as u8);
    check::<u16>(|i| 60000 - i as u16);
    check::<f32>(|i| i as f32 - 100.5);
}

#[test]
fn casts_only_between_equal_types() {
    let mut a = [1.0f32, 2.0];
    assert_eq!(mem::cast_slice::<f32, f32>(&a), Some(&[1.0f32, 2.0][..]));
    assert!(mem::cast_slice::<f32, u32>(&a).is_none());
    assert!(mem::cast_slice_mut::<f32, f32>(&mut a).is_some());
    let mut u = [MaybeUninit::<u8>::uninit(); 3];
    assert!(mem::cast_uninit_mut::<u8, u16>(&mut u).is_none());
    assert_eq!(
        mem::cast_uninit_mut::<u8, u8>(&mut u).map(|s| s.len()),
        Some(3)
    );
}

/// A strip that leaves out part of a row is a panic, not uninitialised
/// samples.
#[test]
fn strips_into_refuses_missing_vectors() {
    #[derive(Clone)]
    struct Short;
    struct Skip(usize);
    impl StripsInto for Skip {
        fn strip_into<V: Vf32, const K: usize>(
            &mut self,
            t: V::Token,
            _: usize,
            out: &mut StripOut<'_, V, K>,
        ) {
            for r in 0..self.0 {
                let n = if r + 1 == self.0 { K - 1 } else { K };
                for _ in 0..n {
                    out.put(V::splat(t, 1.0));
                }
            }
        }
    }
    impl WithSimd for Short {
        type Output = ();
        fn with_simd<S: Simd>(self, s: S) {
            let mut buf = vec![MaybeUninit::<f32>::uninit(); 2 * 40];
            let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                s.strips_into(40, &mut buf, &mut Skip(2)).len()
            }));
            assert!(r.is_err(), "{:?}", S::ISA);
        }
    }
    on_every_isa(Short);
}

/// `exp2_nonpositive` within 5e-7 (relative) of f64's `exp2` on every
/// lane of every instruction set (every vector width), and `2^-124` below
/// -124.
#[test]
fn exp2_nonpositive_is_within_5e_7() {
    #[derive(Clone)]
    struct Exp2;
    struct Check(Vec<f32>);
    impl Strips for Check {
        fn strip<V: Vf32, const K: usize>(&mut self, t: V::Token, j: usize) {
            for q in 0..K {
                let at = j + q * V::N;
                exp2_nonpositive(t, V::load(t, &self.0[at..])).store(&mut self.0[at..]);
            }
        }
    }
    impl WithSimd for Exp2 {
        type Output = ();
        fn with_simd<S: Simd>(self, s: S) {
            let xs: Vec<f32> = (0..=130_001)
                .map(|i| -(i as f32) * 0.001)
                .chain([
                    -0.0,
                    -1e-30,
                    -1e-7,
                    -0.5,
                    -1.5,
                    -200.0,
                    -1e30,
                    f32::NEG_INFINITY,
                ])
                .collect();
            let mut c = Check(xs.clone());
            s.strips(xs.len(), &mut c);
            for (x, got) in xs.iter().zip(&c.0) {
                let want = f64::from(*x).max(-124.0).exp2();
                let err = (f64::from(*got) - want).abs() / want;
                assert!(err <= 5e-7, "{:?} exp2({x}) = {got}, want {want}", S::ISA);
            }
        }
    }
    on_every_isa(Exp2);
}

/// `FILTERCTL_SIMD`'s values: `portable` caps at the portable vectors,
/// unknown values are refused (and so ignored by `Isa::env_cap`).
#[test]
fn env_override_values() {
    assert_eq!(Isa::cap_of(Some("portable")), Some(0));
    assert_eq!(Isa::cap_of(Some("avx2")), Some(256));
    assert_eq!(Isa::cap_of(None), Some(usize::MAX));
    assert_eq!(Isa::cap_of(Some("neon")), None);
    assert!(Isa::available().contains(&Isa::Portable));
    // Under the override (CI runs the library tests with it), every
    // operation's default choice is the portable code.
    if std::env::var("FILTERCTL_SIMD").as_deref() == Ok("portable") {
        assert_eq!(Isa::detect(), Isa::Portable);
    }
}

/// `lut::map_bytes` on every instruction set equals the tables looked up
/// one sample at a time: shared and separate tables, whole groups of 64 C
/// samples and tails.
#[test]
fn byte_tables_map_every_sample() {
    fn check<const C: usize>(tables: &[[u8; 256]; C]) {
        for px in [0, 1, 63, 64, 65, 200, 1000] {
            let n = px * C;
            let src: Vec<u8> = (0..n).map(|i| (i * 151 + i / 7) as u8).collect();
            for isa in Isa::available() {
                let mut dst = vec![MaybeUninit::new(0u8); n];
                let got = lut::map_bytes::<C>(isa, tables, &src, &mut dst);
                for (i, (g, s)) in got.iter().zip(&src).enumerate() {
                    assert_eq!(*g, tables[i % C][*s as usize], "{isa:?} C={C} n={n} at {i}");
                }
            }
        }
    }
    let t = |k: usize| -> [u8; 256] { std::array::from_fn(|v| (v * (2 * k + 1) + k) as u8) };
    check::<1>(&[t(0)]);
    check::<3>(&[t(1), t(2), t(1)]);
    check::<4>(&[t(3), t(3), t(3), t(0)]);
    check::<4>(&[t(1), t(2), t(3), t(4)]);
    // An irregular table: each of its 16 rows of 16 entries differs.
    let mut rng = crate::test_rng::Rng::new(17);
    let odd: [u8; 256] = std::array::from_fn(|_| rng.below(256) as u8);
    check::<1>(&[odd]);
    check::<3>(&[odd, t(5), odd]);
}
