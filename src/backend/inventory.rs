//! What `auto` found the last time it looked for OpenCL devices, kept in
//! `<cache>/devices.json` so that a machine whose only OpenCL device is a
//! CPU device (PoCL) does not load every installed driver on each run only
//! to choose the rayon path. Listing platforms makes PoCL load LLVM: 40 to
//! 100 ms per process on the 2-core VM, more than a small image's whole run
//! on the rayon path (docs/PERFORMANCE.md, "Choosing `auto`'s device").
//!
//! The record holds while the OpenCL driver registry looks as it did when it
//! was written: the ICD files (names and contents, and the size and time of
//! each library they name by absolute path), the environment variables that
//! steer loaders and drivers, and the GPU device nodes present. Any change
//! there, a run with another `--device`, or `filterctl devices` looks again.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::cache::{self, fnv1a};
use super::DeviceInfo;

/// The record's format version; a record of another version is ignored.
const FORMAT: u32 = 1;

/// The largest record read; a real one is under 2 KiB.
const MAX_BYTES: u64 = 64 << 10;

/// `devices.json`: what `auto` would open on this registry.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
struct Record {
    format: u32,
    /// [`registry`] when the devices were listed.
    registry: String,
    /// The device `auto` opens, or `None` when no device is usable.
    auto: Option<DeviceInfo>,
}

/// The record's file in cache folder `dir`.
pub fn path_in(dir: &Path) -> PathBuf {
    dir.join("devices.json")
}

/// What the record in `dir` says `auto` opens (`Some(None)`: no device),
/// when it matches the current registry; `None`: list the devices.
pub(crate) fn recorded(dir: &Path) -> Option<Option<DeviceInfo>> {
    let bytes = cache::read_capped(&path_in(dir), MAX_BYTES).ok()?;
    let record: Record = serde_json::from_slice(&bytes).ok()?;
    (record.format == FORMAT && record.registry == registry()).then_some(record.auto)
}

/// Records in `dir` what `auto` opens after a listing: `chosen` is the
/// device it picked, `None` when none is usable. The file is written only
/// when it changes; a failed write is logged and costs the next run a listing.
pub(crate) fn record(dir: &Path, chosen: Option<&DeviceInfo>) {
    let record = Record {
        format: FORMAT,
        registry: registry(),
        auto: chosen.cloned(),
    };
    let Ok(bytes) = serde_json::to_vec_pretty(&record) else {
        return;
    };
    let file = path_in(dir);
    if cache::read_capped(&file, MAX_BYTES).is_ok_and(|old| old == bytes) {
        return;
    }
    if std::fs::create_dir_all(dir).is_ok() {
        cache::write_atomic(&file, &bytes);
    }
}

/// Drops the record in `dir`, so the next `auto` lists the devices.
pub(crate) fn forget(dir: &Path) {
    let _ = std::fs::remove_file(path_in(dir));
}

/// Environment variables that change which OpenCL platforms and devices
/// appear: the ICD loaders' (ocl-icd, Khronos), PoCL's, and the GPU
/// runtimes' device masks.
const STEERING_PREFIXES: [&str; 11] = [
    "OCL_", "OPENCL_", "POCL_", "RUSTICL_", "CUDA_", "NVIDIA_", "ROCR_", "HIP_", "GPU_", "ZE_",
    "ONEAPI_",
];

/// The ICD folders the loaders read.
const VENDOR_DIRS: [&str; 2] = ["/etc/OpenCL/vendors", "/usr/local/etc/OpenCL/vendors"];

/// A hash of everything the record depends on (see the module docs).
fn registry() -> String {
    let mut text = String::new();
    let mut vars: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| STEERING_PREFIXES.iter().any(|p| k.starts_with(p)))
        // Where cl3 looks for the loader: this crate sets this value before
        // its first listing when the variable is unset
        // (`opencl::widen_library_search`), so it counts as unset.
        .filter(|(k, v)| !(k == "OPENCL_DYLIB_PATH" && v == super::opencl::DEFAULT_DYLIB_PATH))
        .collect();
    vars.sort();
    for (k, v) in vars {
        text.push_str(&format!("env {k}={v}\n"));
    }
    let mut dirs: Vec<PathBuf> = VENDOR_DIRS.iter().map(PathBuf::from).collect();
    if let Some(v) = std::env::var_os("OCL_ICD_VENDORS") {
        dirs.push(PathBuf::from(v));
    }
    for dir in dirs {
        for entry in sorted_entries(&dir) {
            text.push_str(&format!("icd {}\n", entry.display()));
            let content = std::fs::read_to_string(&entry).unwrap_or_default();
            for line in content.lines().map(str::trim).filter(|l| !l.is_empty()) {
                text.push_str(&format!("lib {line} {}\n", stamp(Path::new(line))));
            }
        }
    }
    for node in sorted_entries(Path::new("/dev/dri")).into_iter().chain(
        sorted_entries(Path::new("/dev")).into_iter().filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("nvidia") || n == "kfd" || n == "accel")
        }),
    ) {
        text.push_str(&format!("dev {}\n", node.display()));
    }
    format!("{:016x}", fnv1a(text.as_bytes()))
}

/// The entries of `dir`, sorted; none when it cannot be read.
fn sorted_entries(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| rd.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    out.sort();
    out
}

/// Size and modification time of an absolutely named library (a driver
/// update replaces it); empty for a name the loader searches for.
fn stamp(lib: &Path) -> String {
    if !lib.is_absolute() {
        return String::new();
    }
    match std::fs::metadata(lib) {
        Ok(m) => {
            let secs = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_secs());
            format!("{} {secs}", m.len())
        }
        Err(_) => "missing".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::DeviceKind;

    fn info(kind: DeviceKind) -> DeviceInfo {
        DeviceInfo {
            index: (0, 0),
            platform: "P".into(),
            platform_version: "OpenCL 3.0".into(),
            name: "D".into(),
            vendor: "V".into(),
            kind,
            compute_units: 2,
            global_mem: 1 << 30,
            max_alloc: 1 << 28,
            local_mem: 1 << 15,
            max_work_group: 256,
            driver_version: "1".into(),
            version: "OpenCL 3.0".into(),
            opencl_c_version: "OpenCL C 1.2".into(),
            extensions_of_note: Vec::new(),
            // Not recorded (`filterctl devices` JSON leaves it out too).
            extensions: Vec::new(),
            available: true,
        }
    }

    #[test]
    fn the_record_gives_back_what_was_recorded() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(recorded(dir.path()), None, "no record yet");
        for chosen in [
            Some(info(DeviceKind::Cpu)),
            None,
            Some(info(DeviceKind::Gpu)),
        ] {
            record(dir.path(), chosen.as_ref());
            assert_eq!(recorded(dir.path()), Some(chosen));
        }
        forget(dir.path());
        assert!(!path_in(dir.path()).exists());
        assert_eq!(recorded(dir.path()), None);
    }

    #[test]
    fn another_registry_a_corrupt_record_or_another_format_lists_again() {
        let dir = tempfile::tempdir().unwrap();
        record(dir.path(), Some(&info(DeviceKind::Cpu)));
        let good = std::fs::read_to_string(path_in(dir.path())).unwrap();
        let other = good.replace(&registry(), "0000000000000000");
        std::fs::write(path_in(dir.path()), other).unwrap();
        assert_eq!(recorded(dir.path()), None);
        std::fs::write(path_in(dir.path()), &good[..good.len() / 2]).unwrap();
        assert_eq!(recorded(dir.path()), None);
        let newer = good.replace("\"format\": 1", "\"format\": 2");
        std::fs::write(path_in(dir.path()), newer).unwrap();
        assert_eq!(recorded(dir.path()), None);
        // A later listing replaces the bad record.
        record(dir.path(), Some(&info(DeviceKind::Cpu)));
        assert!(recorded(dir.path()).is_some());
    }
}
