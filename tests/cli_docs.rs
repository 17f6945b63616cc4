//! The documented commands run as tests (trycmd): each `tests/cmd/*.md`
//! holds `$ filterctl ...` blocks with their exact output, which
//! docs/CLI.md and the README point to, so that the documented help,
//! stage grammar and examples cannot drift from what the binary does.
//! Outputs are deterministic: `--device cpu`, committed inputs in
//! `examples/data/`, no timings. `TRYCMD=overwrite cargo test --test
//! cli_docs` rewrites them after an intended change.

#[test]
fn cli_docs() {
    trycmd::TestCases::new()
        .env("FILTERCTL_DEVICE", "cpu")
        .env("FILTERCTL_CACHE_DIR", "disabled")
        .env("COLUMNS", "100")
        .env("FILTERCTL_VARIANT", "")
        .env("RUST_LOG", "warn")
        .case("tests/cmd/*.md");
}
