//! Unit tests of the spec compiler. The tests that need real operations
//! (typed stages, Display round-trips, errors listing the known stages, the
//! host path) are in `tests/pipeline_spec.rs`.

use super::*;

fn err(spec: &str) -> String {
    match parse(spec).unwrap_err() {
        Error::Spec(m) => m,
        other => panic!("expected a spec error, got {other:?}"),
    }
}

fn first_line(spec: &str) -> String {
    err(spec).lines().next().unwrap().to_string()
}

#[test]
fn syntax_errors_come_through() {
    assert!(first_line("flip,,blur").contains("stage 2 is empty"));
    assert!(first_line("scale=out=u8:out=f32").contains("option 'out' is given twice"));
}

#[test]
fn bounds_in_range() {
    assert!(in_range(Some(INTEGER_BOUND)));
    assert!(in_range(Some(f64::from(
        crate::image::finite::MAX_MAGNITUDE
    ))));
    assert!(!in_range(Some(1e37)));
    assert!(!in_range(None));
}
