//! `filterctl bench` times the Gaussian's OpenCL variants kernel-only on
//! every integer colour format (u8 and u16, RGB and RGBA), not only on f32
//! gray and RGBA: each variant gives a time, none an error (issue 21 §3).
//! Needs an OpenCL device (PoCL in CI); skips without one. And `--bins`
//! picks the histogram rows' one bin count.

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

#[test]
fn bench_histogram_times_the_bins_asked_for_and_refuses_none() {
    let run = |bins: &str| {
        Command::new(env!("CARGO_BIN_EXE_filterctl"))
            .env_remove("FILTERCTL_VARIANT")
            .env_remove("RUST_LOG")
            .args([
                "--device",
                "cpu",
                "bench",
                "--ops",
                "histogram",
                "--bins",
                bins,
            ])
            .args(["--size", "33x7", "--type", "u8", "--iters", "1", "--json"])
            .output()
            .unwrap()
    };
    // 5000 bins fall in the bucket past 4096: one row, that bucket's.
    let out = run("5000");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = report["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["params"], "bins>4096", "{rows:?}");
    assert!(rows[0]["error"].is_null(), "{rows:?}");
    for bad in ["0", "16777217"] {
        let out = run(bad);
        assert_eq!(out.status.code(), Some(2), "--bins {bad}");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("histogram bins must be"),
            "--bins {bad}"
        );
    }
}
