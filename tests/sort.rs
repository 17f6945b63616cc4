//! `sort`: every variant and the CPU path against a reference sort written
//! here, compared bit for bit: NaNs of both signs (with payloads), ±0,
//! ±inf, duplicates, n = 0, 1, 2, 3, primes and 2^k ± 1 around the
//! kernels' block sizes; all-equal keys and keys that share their high
//! bytes (few digits in a radix pass); stable key-value pairs;
//! `filterctl sort`.

use std::process::Command;

use clfilter::ops::sort::{SortExt, SortKey};
use clfilter::{Engine, Error};

mod common;
use common::Rng;

/// Lengths: tiny, primes, and 2^k ± 1 around the bitonic block (512) and
/// the radix tiles (2048 pairs, 4096 keys); 40_009 and 70_001 span several
/// tiles and several blocks of the radix scan (blocks of sqrt(tiles) tiles).
const LENGTHS: &[usize] = &[
    0, 1, 2, 3, 5, 7, 31, 255, 257, 511, 512, 513, 1021, 2047, 2048, 2049, 4095, 4096, 4097, 4099,
    8191, 12_289, 40_009, 70_001,
];

/// Engines to check: the CPU, and with OpenCL each variant forced.
fn engines() -> Vec<(String, Engine)> {
    let mut out = vec![("cpu".to_string(), Engine::cpu())];
    match common::opencl_engine() {
        Some(e) => {
            for v in clfilter::ops::sort::SPEC.variants {
                out.push((v.name.to_string(), e.with_variant(Some("sort"), v.name)));
            }
        }
        None => common::skip_no_opencl("sort variants"),
    }
    out
}

fn f32_keys(rng: &mut Rng, n: usize) -> Vec<f32> {
    let special = [
        0.0,
        -0.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
        f32::from_bits(0x7f80_0001),
        f32::from_bits(0xffc0_0abc),
        f32::MIN_POSITIVE / 2.0,
        -1.0,
    ];
    (0..n)
        .map(|_| match rng.below(3) {
            0 => special[rng.below(special.len() as u64) as usize],
            1 => rng.below(16) as f32 - 8.0,
            _ => f32::from_bits(rng.next_u64() as u32),
        })
        .collect()
}

/// The reference: a stable sort by the keys' own order.
fn reference<K: Copy>(keys: &[K], cmp: fn(&K, &K) -> std::cmp::Ordering) -> Vec<K> {
    let mut v = keys.to_vec();
    v.sort_by(cmp);
    v
}

fn bits<K: SortKey>(v: &[K]) -> Vec<u32> {
    v.iter().map(|k| k.to_word()).collect()
}

#[test]
fn every_variant_sorts_exactly() {
    let engines = engines();
    for &n in LENGTHS {
        let mut rng = Rng::from_parts(&[n as u64, 1]);
        let f = f32_keys(&mut rng, n);
        let want_f: Vec<u32> = reference(&f, f32::total_cmp)
            .iter()
            .map(|k| k.to_bits())
            .collect();
        let u: Vec<u32> = (0..n)
            .map(|_| rng.next_u64() as u32 >> rng.below(32))
            .collect();
        let i: Vec<i32> = (0..n)
            .map(|_| rng.next_u64() as i32 >> rng.below(32))
            .collect();
        let (want_u, want_i) = (reference(&u, u32::cmp), reference(&i, i32::cmp));
        for (name, e) in &engines {
            let got: Vec<u32> = e.sort(&f).unwrap().iter().map(|k| k.to_bits()).collect();
            assert_eq!(got, want_f, "{name} f32 n={n}");
            assert_eq!(
                bits(&e.sort(&u).unwrap()),
                bits(&want_u),
                "{name} u32 n={n}"
            );
            assert_eq!(
                bits(&e.sort(&i).unwrap()),
                bits(&want_i),
                "{name} i32 n={n}"
            );
        }
    }
}

/// The order at a glance: -NaN first, -0 before +0, +NaN last.
#[test]
fn f32_total_order_is_as_documented() {
    let keys = [
        f32::NAN,
        0.0,
        -f32::NAN,
        -0.0,
        f32::INFINITY,
        -1.0,
        f32::NEG_INFINITY,
    ];
    for (name, e) in engines() {
        let s: Vec<u32> = e.sort(&keys).unwrap().iter().map(|k| k.to_bits()).collect();
        let want: Vec<u32> = [
            -f32::NAN,
            f32::NEG_INFINITY,
            -1.0,
            -0.0,
            0.0,
            f32::INFINITY,
            f32::NAN,
        ]
        .iter()
        .map(|k| k.to_bits())
        .collect();
        assert_eq!(s, want, "{name}");
    }
}

/// Keys that leave most radix digits constant: all equal (one digit per
/// pass), and uniform floats in [-1, 1) (a few distinct high bytes), with
/// pairs, whose values must keep their input order.
#[test]
fn few_distinct_digits_sort_exactly() {
    let engines = engines();
    for &n in &[1usize, 4097, 9973, 70_001] {
        let mut rng = Rng::from_parts(&[n as u64, 4]);
        let uniform: Vec<f32> = (0..n)
            .map(|_| (rng.next_u64() >> 40) as f32 / (1u64 << 23) as f32 - 1.0)
            .collect();
        let values: Vec<u32> = (0..n as u32).rev().collect();
        for keys in [vec![0.75f32; n], vec![-f32::NAN; n], uniform] {
            let mut want: Vec<(f32, u32)> =
                keys.iter().copied().zip(values.iter().copied()).collect();
            want.sort_by(|a, b| a.0.total_cmp(&b.0));
            let want_k: Vec<u32> = want.iter().map(|p| p.0.to_bits()).collect();
            let want_v: Vec<u32> = want.iter().map(|p| p.1).collect();
            for (name, e) in &engines {
                let got: Vec<u32> = e.sort(&keys).unwrap().iter().map(|k| k.to_bits()).collect();
                assert_eq!(got, want_k, "{name} keys n={n}");
                let (k, v) = e.sort_pairs(&keys, &values).unwrap();
                let k: Vec<u32> = k.iter().map(|k| k.to_bits()).collect();
                assert_eq!(k, want_k, "{name} pair keys n={n}");
                assert_eq!(v, want_v, "{name} values n={n}");
            }
        }
    }
}

/// Pairs are stable: equal keys keep their values' input order.
#[test]
fn pairs_are_stable_on_every_variant() {
    let engines = engines();
    for &n in LENGTHS {
        let mut rng = Rng::from_parts(&[n as u64, 2]);
        let keys: Vec<f32> = (0..n)
            .map(|_| [-0.0, 0.0, 1.0, f32::NAN, -f32::NAN, 2.5][rng.below(6) as usize])
            .collect();
        let values: Vec<u32> = (0..n).map(|_| rng.next_u64() as u32).collect();
        let mut want: Vec<(f32, u32)> = keys.iter().copied().zip(values.iter().copied()).collect();
        want.sort_by(|a, b| a.0.total_cmp(&b.0));
        let want_k: Vec<u32> = want.iter().map(|p| p.0.to_bits()).collect();
        let want_v: Vec<u32> = want.iter().map(|p| p.1).collect();
        for (name, e) in &engines {
            let (k, v) = e.sort_pairs(&keys, &values).unwrap();
            let k: Vec<u32> = k.iter().map(|k| k.to_bits()).collect();
            assert_eq!(k, want_k, "{name} keys n={n}");
            assert_eq!(v, want_v, "{name} values n={n}");
        }
    }
    let e = Engine::cpu();
    assert!(matches!(
        e.sort_pairs(&[1u32, 2], &[0]),
        Err(Error::InvalidArgument(_))
    ));
}

fn filterctl() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
    c.env("FILTERCTL_CACHE_DIR", "disabled")
        .env_remove("FILTERCTL_VARIANT");
    c
}

fn temp_dir(name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("clfilter-sort-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&d).unwrap();
    d
}

#[test]
fn cli_sorts_raw_files_and_refuses_bad_ones() {
    let dir = temp_dir("cli");
    let mut rng = Rng::new(3);
    let keys = f32_keys(&mut rng, 1001);
    let raw: Vec<u8> = keys.iter().flat_map(|k| k.to_le_bytes()).collect();
    let (input, output) = (dir.join("in.raw"), dir.join("out.raw"));
    std::fs::write(&input, &raw).unwrap();
    let want: Vec<u8> = reference(&keys, f32::total_cmp)
        .iter()
        .flat_map(|k| k.to_le_bytes())
        .collect();
    for device in ["cpu", "auto"] {
        let st = filterctl()
            .args(["--device", device, "sort", "--type", "f32"])
            .arg(&input)
            .arg("-o")
            .arg(&output)
            .status()
            .unwrap();
        assert!(st.success(), "{device}");
        assert_eq!(std::fs::read(&output).unwrap(), want, "{device}");
    }
    // stdin to stdout, as i32.
    let ints: Vec<i32> = (0..77).map(|i| (i * 7919) % 101 - 50).collect();
    let mut sorted = ints.clone();
    sorted.sort();
    let out = filterctl()
        .args(["--device", "cpu", "sort", "--type", "i32", "-", "-o", "-"])
        .stdin(
            std::fs::File::open({
                let p = dir.join("ints.raw");
                std::fs::write(
                    &p,
                    ints.iter()
                        .flat_map(|k| k.to_le_bytes())
                        .collect::<Vec<u8>>(),
                )
                .unwrap();
                p
            })
            .unwrap(),
        )
        .output()
        .unwrap();
    assert!(out.status.success());
    assert_eq!(
        out.stdout,
        sorted
            .iter()
            .flat_map(|k| k.to_le_bytes())
            .collect::<Vec<u8>>()
    );
    // A length that is no multiple of 4: exit 1, nothing written.
    let cut = dir.join("cut.raw");
    std::fs::write(&cut, &raw[..7]).unwrap();
    let bad = dir.join("bad.raw");
    let out = filterctl()
        .args(["--device", "cpu", "sort", "--type", "u32"])
        .arg(&cut)
        .arg("-o")
        .arg(&bad)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a whole number of 4-byte keys"));
    assert!(!bad.exists());
    // The output is the input: exit 2, the input kept.
    let out = filterctl()
        .args(["--device", "cpu", "sort", "--type", "f32"])
        .arg(&input)
        .arg("-o")
        .arg(dir.join(".").join("in.raw"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(std::fs::read(&input).unwrap(), raw);
    // A bad type: clap's usage error.
    let out = filterctl()
        .args(["sort", "--type", "f64", "x", "-o", "y"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).unwrap();
}
