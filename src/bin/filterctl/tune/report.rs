//! What `filterctl tune` prints: each key's table of candidates (`-v`)
//! and the summary of winners.

use clfilter::tune::{DispatchCheck, KeyResult, Mode, Status, TuneEntry};

use crate::error::CliError;

fn num(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

/// The key in words: what was measured and what it stands for.
fn heading(e: &TuneEntry, how: &str) -> String {
    let sigma = e.sigma.map(|s| format!(" sigma {s}")).unwrap_or_default();
    format!(
        "{} {} {}x{}{sigma} [bucket 2^{} px, params {}] ({how})",
        e.key.op, e.key.format, e.width, e.height, e.key.size_bucket, e.key.params
    )
}

/// One entry as a table: a row per timed candidate and mode (fastest
/// first, the winner marked `*`), then the candidates that were not timed,
/// then the check of the engine's own call when there is one.
pub(super) fn entry_table(
    e: &TuneEntry,
    how: &str,
    check: Option<&DispatchCheck>,
) -> Result<(), CliError> {
    out!("{}", heading(e, how))?;
    if let Some(c) = e.copy_gb_per_s {
        out!("  copy kernel: {c:.2} GB/s (read + write)")?;
    }
    timing_rows(e)?;
    untimed_lines(e)?;
    if let Some(c) = check {
        dispatch_line(c)?;
    }
    out!("")?;
    Ok(())
}

/// The width of the table's variant column: the longest variant name (at
/// least `variant`) and room for the winner's ` *`.
fn variant_width(e: &TuneEntry) -> usize {
    e.candidates
        .iter()
        .map(|c| c.variant.len())
        .max()
        .unwrap_or(0)
        .max(7)
        + 2
}

/// The table's header and a row per timed candidate, kernel mode first,
/// then end to end; within a mode the fastest first, the winner marked `*`.
fn timing_rows(e: &TuneEntry) -> Result<(), CliError> {
    let vw = variant_width(e);
    out!(
        "  {:6}  {:vw$}  {:>10}  {:>7}  {:>9}  {:>7}  {:>6}",
        "mode",
        "variant",
        "median ms",
        "spread",
        "MP/s",
        "GB/s",
        "% copy"
    )?;
    for mode in [Mode::Kernel, Mode::E2e] {
        let mut rows: Vec<_> = e
            .candidates
            .iter()
            .filter_map(|c| c.timing(mode).map(|t| (c, t)))
            .collect();
        rows.sort_by(|a, b| a.1.median_ms.total_cmp(&b.1.median_ms));
        for (c, t) in rows {
            let mark = if e.winner(mode) == Some(c.variant.as_str()) {
                " *"
            } else {
                ""
            };
            out!(
                "  {:6}  {:vw$}  {:>10}  {:>7}  {:>9}  {:>7}  {:>6}",
                mode.to_string(),
                format!("{}{mark}", c.variant),
                num(t.median_ms, 3),
                format!("{:.0}%", t.spread_pct),
                num(t.mp_per_s, 1),
                num(t.gb_per_s, 2),
                t.pct_of_copy
                    .map(|p| format!("{p:.0}%"))
                    .unwrap_or_else(|| "-".into())
            )?;
        }
    }
    Ok(())
}

/// A line per candidate that was not timed: disqualified or unsupported
/// (with why), or a mode that was left out (with the note; never for the
/// CPU variant).
fn untimed_lines(e: &TuneEntry) -> Result<(), CliError> {
    for c in &e.candidates {
        match &c.status {
            Status::Disqualified(why) => out!("  disqualified {}: {}", c.variant, first_line(why))?,
            Status::Unsupported(why) => out!("  unsupported  {}: {}", c.variant, why)?,
            Status::Ok => {
                for (mode, note, t) in [
                    (Mode::Kernel, &c.kernel_note, &c.kernel),
                    (Mode::E2e, &c.e2e_note, &c.e2e),
                ] {
                    match (note, t) {
                        (Some(n), None) if c.variant != clfilter::ops::CPU => {
                            out!("  {mode} not timed {}: {n}", c.variant)?
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    Ok(())
}

/// The check of the engine's own call: the variant it runs now against the
/// forced winner, timed in the same interleaved rounds.
fn dispatch_line(c: &DispatchCheck) -> Result<(), CliError> {
    out!(
        "  engine call now runs {}: {} ms end to end, forced winner {} ms in the same {} interleaved rounds ({:+.1}%)",
        c.variant,
        num(c.median_ms, 3),
        num(c.winner_median_ms, 3),
        c.runs,
        100.0 * (c.median_ms / c.winner_median_ms - 1.0)
    )
}

/// Build logs run to many lines; the table shows the first.
fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or(s)
}

/// The figure of `variant` in `mode`, ms.
fn median_of(e: &TuneEntry, variant: &str, mode: Mode) -> Option<f64> {
    e.candidates
        .iter()
        .find(|c| c.variant == variant)
        .and_then(|c| c.timing(mode))
        .map(|t| t.median_ms)
}

/// The summary's cells of one mode: winner, its median, how much slower
/// the second-best is, and (end to end) how much slower the CPU path is.
fn winner_cells(e: &TuneEntry, mode: Mode) -> [String; 4] {
    let Some(w) = e.winner(mode) else {
        return ["-".into(), "-".into(), "-".into(), "-".into()];
    };
    let ms = median_of(e, w, mode).unwrap_or(f64::NAN);
    let mut others: Vec<f64> = e
        .candidates
        .iter()
        .filter(|c| c.variant != w)
        .filter_map(|c| c.timing(mode).map(|t| t.median_ms))
        .collect();
    others.sort_by(f64::total_cmp);
    let ratio = |o: f64| format!("{:.2}x", o / ms);
    let second = others.first().map_or("-".into(), |&o| ratio(o));
    let cpu = match median_of(e, clfilter::ops::CPU, mode) {
        Some(c) if w != clfilter::ops::CPU => ratio(c),
        _ => "-".into(),
    };
    [w.to_string(), num(ms, 3), second, cpu]
}

/// One line per key: the end-to-end winner (what host calls run) with its
/// median, the second-best's and the CPU path's time as multiples of it,
/// and the kernel-mode winner (what device-resident stages run).
pub(super) fn summary(keys: &[KeyResult]) -> Result<(), CliError> {
    let rows: Vec<[String; 9]> = keys
        .iter()
        .map(|k| {
            let e = &k.entry;
            let [w, ms, second, cpu] = winner_cells(e, Mode::E2e);
            let [kw, kms, _, _] = winner_cells(e, Mode::Kernel);
            [
                e.key.op.clone(),
                format!("{} 2^{} {}", e.key.format, e.key.size_bucket, e.key.params),
                w,
                ms,
                second,
                cpu,
                kw,
                kms,
                if k.cached { "cached" } else { "" }.into(),
            ]
        })
        .collect();
    let head = [
        "op",
        "key",
        "e2e winner",
        "ms",
        "vs 2nd",
        "vs cpu",
        "kernel winner",
        "ms",
        "",
    ];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].len())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let w: Vec<usize> = (0..head.len()).map(width).collect();
    let line = |r: [&str; 9]| {
        format!(
            "{:w0$}  {:w1$}  {:w2$}  {:>w3$}  {:>w4$}  {:>w5$}  {:w6$}  {:>w7$}  {}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            r[7],
            r[8],
            w0 = w[0],
            w1 = w[1],
            w2 = w[2],
            w3 = w[3],
            w4 = w[4],
            w5 = w[5],
            w6 = w[6],
            w7 = w[7],
        )
        .trim_end()
        .to_string()
    };
    out!("{}", line(head))?;
    for r in &rows {
        out!("{}", line(std::array::from_fn(|i| r[i].as_str())))?;
    }
    Ok(())
}
