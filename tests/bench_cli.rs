//! `filterctl bench` times the Gaussian's OpenCL variants kernel-only on
//! every integer colour format (u8 and u16, RGB and RGBA), not only on f32
//! gray and RGBA: each variant gives a time, none an error (issue 21 §3).
//! Needs an OpenCL device (PoCL in CI); skips without one.

use assert_cmd::Command;

mod common;

#[test]
fn bench_times_integer_colour_gaussians_kernel_only() {
    if common::opencl_engine().is_none() {
        return;
    }
    let cache = tempfile::tempdir().unwrap();
    for (sample, channels) in [("u8", "3"), ("u8", "4"), ("u16", "3"), ("u16", "4")] {
        let out = Command::new(env!("CARGO_BIN_EXE_filterctl"))
            .env("FILTERCTL_CACHE_DIR", cache.path())
            .env_remove("FILTERCTL_VARIANT")
            .env_remove("RUST_LOG")
            .args(["--device", "opencl", "bench", "--ops", "gaussian"])
            .args(["--size", "41x29", "--type", sample, "--channels", channels])
            .args(["--iters", "1", "--no-cpu", "--json"])
            .output()
            .unwrap();
        let what = format!("{sample} x{channels}");
        assert!(
            out.status.success(),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(report["sample"], sample, "{what}");
        let rows = report["rows"].as_array().unwrap();
        assert!(
            rows.len() >= 4,
            "{what}: only {} variants timed",
            rows.len()
        );
        for row in rows {
            assert!(row["error"].is_null(), "{what}: {row}");
            assert_eq!(row["op"], "gaussian", "{what}");
            assert!(row["median_ms"].as_f64().unwrap() > 0.0, "{what}: {row}");
        }
    }
}
