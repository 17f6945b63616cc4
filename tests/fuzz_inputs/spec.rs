//! Pipeline spec strings: arbitrary text and mutations of valid specs parse
//! to ops or to an `Error::Spec` whose caret points into the spec, and a
//! spec that parses prints to one that parses to the same ops.

use clfilter::pipeline::{self, format::parse_with_format, parse_stages};
use clfilter::{Error, RawFormat};
use proptest::prelude::*;

use crate::{config, serial};

/// Valid specs to mutate: every stage, short forms, options, variants.
const VALID: &[&str] = &[
    "transpose,normalize=factor=2:out=u8,minmax",
    "demosaic=pattern=rggb:method=mhc,gaussian=sigma=2,convert=u8",
    "convert=f32,colormap=turbo:min=0:max=1",
    "gaussian=2,convert=u8",
    "normalize=sub=-1.5:factor=2e-3:out=f32:variant=x4",
    "transpose=variant=local_x4, minmax=variant=cpu",
    "demosaic=bits=12,convert=u8,transpose,minmax",
    "minmax,normalize=out=f32,transpose,normalize=out=u8",
];

/// Characters that matter to the grammar, and some that trouble byte
/// offsets and caret columns (multi-byte, wide, control).
fn spec_char() -> impl Strategy<Value = char> {
    prop_oneof![
        4 => prop::sample::select(vec![',', '=', ':', ' ', '-', '_', '.', '\t']),
        4 => prop::char::range('a', 'z'),
        2 => prop::char::range('0', '9'),
        1 => prop::sample::select(vec!['é', '→', '字', '\u{0}', '\u{7f}', '\n', '😀', '\u{301}']),
        1 => any::<char>(),
    ]
}

/// Checks one spec against every parser entry: no panic; an error is an
/// `Error::Spec` whose caret line points into the spec (or one past its
/// end); a success prints to a spec that parses to the same ops.
fn check(spec: &str) -> Result<(), TestCaseError> {
    let formats = [
        None,
        Some("bayer_rggb12p"),
        Some("mono16"),
        Some("bayer_gbrg8"),
    ];
    for f in formats {
        let fmt = f.map(|f| f.parse::<RawFormat>().unwrap());
        let result = std::panic::catch_unwind(|| parse_with_format(spec, fmt.as_ref()));
        let Ok(result) = result else {
            return Err(TestCaseError::fail(format!("{spec:?} with {f:?} panicked")));
        };
        match result {
            Ok(ops) => {
                let again = pipeline::to_spec(&ops);
                let back = parse_with_format(&again, fmt.as_ref()).map_err(|e| {
                    TestCaseError::fail(format!("{spec:?} printed as {again:?}: {e}"))
                })?;
                prop_assert_eq!(back, ops, "{:?} printed as {:?}", spec, again);
            }
            Err(Error::Spec(m)) => check_caret(spec, &m)?,
            Err(other) => {
                return Err(TestCaseError::fail(format!(
                    "{spec:?} with {f:?}: not an Error::Spec: {other:?}"
                )))
            }
        }
    }
    let syntax = std::panic::catch_unwind(|| parse_stages(spec));
    prop_assert!(syntax.is_ok(), "parse_stages({:?}) panicked", spec);
    Ok(())
}

/// The caret line of an `Error::Spec` message points at a token: the
/// message ends with the spec (indented 4) and a line of carets under it.
fn check_caret(spec: &str, m: &str) -> Result<(), TestCaseError> {
    if spec.trim().is_empty() {
        // Nothing to point at: the message says the spec is empty.
        prop_assert!(m.contains("empty"), "{:?}: {}", spec, m);
        return Ok(());
    }
    let shown: String = spec
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let tail = format!("\n    {shown}\n    ");
    let Some(at) = m.rfind(&tail) else {
        return Err(TestCaseError::fail(format!(
            "{spec:?}: no spec line in {m:?}"
        )));
    };
    let carets = &m[at + tail.len()..];
    let col = carets.chars().take_while(|&c| c == ' ').count();
    let width = carets.chars().skip(col).take_while(|&c| c == '^').count();
    prop_assert!(width >= 1, "{:?}: no caret in {:?}", spec, m);
    prop_assert_eq!(col + width, carets.chars().count(), "{:?}: {:?}", spec, m);
    prop_assert!(
        col + width <= shown.chars().count() + 1,
        "{:?}: caret at {}+{} past the spec in {:?}",
        spec,
        col,
        width,
        m
    );
    Ok(())
}

/// A valid spec with `edits` applied: (char position, what to do).
fn mutate(spec: &str, edits: &[(usize, u8, char)]) -> String {
    let mut c: Vec<char> = spec.chars().collect();
    for &(pos, op, ch) in edits {
        let i = pos % (c.len() + 1);
        match op % 5 {
            0 => c.insert(i, ch),
            1 if i < c.len() => {
                c.remove(i);
            }
            2 if i < c.len() => c[i] = ch,
            3 => {
                // Repeat a slice: duplicated stages, keys and separators.
                let j = (i + usize::from(op)) % (c.len() + 1);
                let (a, b) = (i.min(j), i.max(j));
                let piece: Vec<char> = c[a..b].to_vec();
                c.splice(b..b, piece);
            }
            _ => c.truncate(i),
        }
    }
    c.into_iter().collect()
}

#[test]
fn arbitrary_text_parses_or_points_at_a_token() {
    let _serial = serial();
    proptest!(config(2000), |(spec in prop::collection::vec(spec_char(), 0..40))| {
        check(&spec.into_iter().collect::<String>())?;
    });
}

#[test]
fn mutated_valid_specs_parse_or_point_at_a_token() {
    let _serial = serial();
    for spec in VALID {
        check(spec).unwrap();
        assert!(pipeline::parse(spec).is_ok(), "{spec}");
    }
    proptest!(config(3000), |(
        k in 0..VALID.len(),
        edits in prop::collection::vec((any::<usize>(), any::<u8>(), spec_char()), 1..5),
    )| {
        check(&mutate(VALID[k], &edits))?;
    });
}

#[test]
fn long_and_deep_specs_finish_quickly() {
    let _serial = serial();
    let t = std::time::Instant::now();
    for spec in [
        "transpose,".repeat(2000) + "minmax",
        format!("{}=1", "x".repeat(20000)),
        format!("gaussian={}", "sigma=1:".repeat(3000)),
        ",".repeat(10000),
        "=".repeat(10000),
        format!("normalize=factor={}", "9".repeat(5000)),
    ] {
        check(&spec).unwrap();
    }
    assert!(t.elapsed().as_secs() < 20, "{:?}", t.elapsed());
}
