//! `filterctl variants`: every operation's variant table.

use clfilter::ops::{OpSpec, CPU, OPS};
use serde::Serialize;

use crate::error::CliError;

/// Options of `filterctl variants`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Print the tables as JSON on stdout.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct VariantRow {
    name: &'static str,
    summary: &'static str,
    /// `None` for the CPU path, which has no table entry.
    tolerance: Option<f32>,
    kernel: Option<String>,
    files: &'static [&'static str],
}

#[derive(Serialize)]
struct OpRow {
    op: &'static str,
    gpu_order: &'static [&'static str],
    cpu_device_order: &'static [&'static str],
    variants: Vec<VariantRow>,
}

const CPU_SUMMARY: &str =
    "the rayon CPU path: the CPU backend, and the fallback when every device variant fails";

fn rows(op: &OpSpec) -> OpRow {
    let mut variants: Vec<VariantRow> = op
        .variants
        .iter()
        .map(|v| VariantRow {
            name: v.name,
            summary: v.summary,
            tolerance: Some(v.tolerance),
            kernel: Some(v.kernel_name(op.name)),
            files: v.files,
        })
        .collect();
    variants.push(VariantRow {
        name: CPU,
        summary: CPU_SUMMARY,
        tolerance: None,
        kernel: None,
        files: &[],
    });
    OpRow {
        op: op.name,
        gpu_order: op.gpu_order,
        cpu_device_order: op.cpu_device_order,
        variants,
    }
}

/// Runs `filterctl variants`.
pub fn run(args: Args) -> Result<(), CliError> {
    let ops: Vec<OpRow> = OPS.iter().map(|o| rows(o)).collect();
    if args.json {
        out!("{}", serde_json::to_string_pretty(&ops)?)?;
        return Ok(());
    }
    for (i, op) in ops.iter().enumerate() {
        if i > 0 {
            out!()?;
        }
        out!(
            "{}  (default order: GPU {}; CPU device {})",
            op.op,
            op.gpu_order.join(" > "),
            op.cpu_device_order.join(" > ")
        )?;
        let width = op
            .variants
            .iter()
            .map(|v| v.name.len())
            .max()
            .unwrap_or(0)
            .max(7);
        out!("  {:width$}  {:>9}  summary", "variant", "tolerance")?;
        for v in &op.variants {
            let tol = match v.tolerance {
                Some(0.0) => "exact".to_string(),
                Some(t) => format!("{t:e}"),
                None => "-".to_string(),
            };
            out!("  {:width$}  {:>9}  {}", v.name, tol, v.summary)?;
        }
    }
    Ok(())
}
