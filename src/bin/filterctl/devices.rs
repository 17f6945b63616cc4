//! `filterctl devices`: every OpenCL platform and device, which one `auto`
//! picks, and the CPU backend.

use clfilter::backend::{self, DeviceInfo};
use clfilter::{DeviceSelector, Engine};
use serde::Serialize;

use crate::error::CliError;
use crate::util::{bytes, short_backend};
use crate::Global;

/// Options of `filterctl devices`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the list as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct DeviceRow<'a> {
    #[serde(flatten)]
    info: &'a DeviceInfo,
    /// Whether `--device auto` picks this device.
    auto: bool,
    /// Whether the `--device` given picks this device.
    selected: bool,
}

#[derive(Serialize)]
struct CpuBackend {
    description: String,
    threads: usize,
}

#[derive(Serialize)]
struct Listing<'a> {
    /// Why there is no OpenCL device at all, if there is none.
    opencl_unavailable: Option<&'a str>,
    devices: Vec<DeviceRow<'a>>,
    /// What `auto` picks: `P:D`, or `cpu` for the CPU backend.
    auto: String,
    /// What `--device` picks, when it was given and is not `auto`.
    selected: Option<String>,
    cpu_backend: CpuBackend,
}

/// `P:D`, or `cpu` for the CPU backend.
fn pick(engine: &Engine) -> String {
    short_backend(engine)
}

/// Runs `filterctl devices`.
pub fn run(global: &Global, args: Args) -> Result<(), CliError> {
    let listed = backend::list_devices();
    // `auto` below lists the devices afresh and records what it found.
    backend::forget_devices(&clfilter::CacheDir::Default);
    let auto = Global {
        device: DeviceSelector::Auto,
        ..global.clone()
    }
    .engine()
    .map(|e| pick(&e))
    .unwrap_or_else(|e| {
        log::warn!("opening the auto device failed: {e}");
        "cpu".into()
    });
    // `--device` other than auto: show what it selects, and fail (after the
    // listing) when it selects nothing.
    let (selected, select_err) = if global.device == DeviceSelector::Auto {
        (None, None)
    } else {
        match global.engine() {
            Ok(e) => (Some(pick(&e)), None),
            Err(e) => (None, Some(e)),
        }
    };
    let cpu = CpuBackend {
        description: backend::cpu::describe(),
        threads: rayon::current_num_threads(),
    };
    let (devices, reason): (&[DeviceInfo], Option<&str>) = match &listed {
        Ok(d) => (d, None),
        Err(r) => (&[], Some(r.as_str())),
    };
    let label = |i: &DeviceInfo| format!("{}:{}", i.index.0, i.index.1);
    let rows: Vec<DeviceRow> = devices
        .iter()
        .map(|info| DeviceRow {
            info,
            auto: auto == label(info),
            selected: selected.as_deref() == Some(label(info).as_str()),
        })
        .collect();
    if args.json {
        let listing = Listing {
            opencl_unavailable: reason,
            devices: rows,
            auto,
            selected,
            cpu_backend: cpu,
        };
        out!("{}", serde_json::to_string_pretty(&listing)?)?;
    } else {
        match reason {
            Some(r) => out!("OpenCL: none ({r}); the CPU backend is used")?,
            None if rows.is_empty() => out!("OpenCL: no devices")?,
            None => out!("OpenCL devices:")?,
        }
        for row in &rows {
            print_device(row)?;
        }
        let mut marks = Vec::new();
        if auto == "cpu" {
            marks.push("auto");
        }
        if selected.as_deref() == Some("cpu") {
            marks.push("selected");
        }
        let mark = if marks.is_empty() {
            String::new()
        } else {
            format!("   <- {}", marks.join(", "))
        };
        out!("CPU backend (--device cpu): {} threads{mark}", cpu.threads)?;
    }
    match select_err {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

fn print_device(row: &DeviceRow) -> Result<(), CliError> {
    let i = row.info;
    let mut marks = Vec::new();
    if row.auto {
        marks.push("auto");
    }
    if row.selected {
        marks.push("selected");
    }
    let mark = if marks.is_empty() {
        String::new()
    } else {
        format!("   <- {}", marks.join(", "))
    };
    out!(
        "{} {}:{}  {}{mark}",
        if row.auto { '*' } else { ' ' },
        i.index.0,
        i.index.1,
        i.name
    )?;
    let field = |k: &str, v: String| out!("      {k:<15} {v}");
    field(
        "platform",
        format!("{} ({})", i.platform, i.platform_version),
    )?;
    field("vendor", i.vendor.clone())?;
    field(
        "type",
        format!(
            "{}{}",
            i.kind,
            if i.available { "" } else { " (NOT available)" }
        ),
    )?;
    field("compute units", i.compute_units.to_string())?;
    field(
        "global memory",
        format!(
            "{} (largest buffer {})",
            bytes(i.global_mem),
            bytes(i.max_alloc)
        ),
    )?;
    field("local memory", bytes(i.local_mem))?;
    field("max work-group", i.max_work_group.to_string())?;
    field("driver", i.driver_version.clone())?;
    field("OpenCL", i.version.clone())?;
    field("OpenCL C", i.opencl_c_version.clone())?;
    field(
        "extensions",
        if i.extensions_of_note.is_empty() {
            "(none of note)".into()
        } else {
            i.extensions_of_note.join(" ")
        },
    )?;
    Ok(())
}
