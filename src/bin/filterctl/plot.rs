//! Charts drawn with plotters (the `plot` feature): the histogram PNG.
//! The text uses DejaVu Sans Mono, embedded (`fonts/` beside this file, its
//! licence with it), so the chart looks the same on machines without fonts.

use std::path::Path;

use clfilter::image::{OutputFormat, SaveOptions};
use clfilter::ops::histogram::{Histogram, HistogramParams};
use clfilter::{DynImage, Image};
use plotters::prelude::*;
use plotters::style::{register_font, FontStyle};

use crate::error::CliError;

const WIDTH: u32 = 960;
const HEIGHT: u32 = 540;

static FONT: &[u8] = include_bytes!("fonts/DejaVuSansMono.ttf");

/// Each channel's line colour: gray for one channel, else R, G, B and a
/// dark gray for alpha.
fn colour(channels: usize, c: usize) -> RGBColor {
    match (channels, c) {
        (1, _) => RGBColor(80, 80, 80),
        (_, 0) => RGBColor(220, 30, 30),
        (_, 1) => RGBColor(20, 160, 40),
        (_, 2) => RGBColor(30, 70, 220),
        _ => RGBColor(40, 40, 40),
    }
}

fn plot_err(e: impl std::fmt::Display) -> CliError {
    CliError::Failed(format!("drawing the histogram: {e}"))
}

/// Draws `h` (made with `p`) as a step chart per channel into an image
/// file at `path`, in `format` (8-bit RGB: PNG, TIFF, JPEG, WebP, PPM...).
pub fn histogram_png(
    h: &Histogram,
    p: &HistogramParams,
    title: &str,
    (path, format): (&Path, OutputFormat),
) -> Result<(), CliError> {
    // Registering twice replaces the same bytes; the error type says only
    // that the font failed to parse, which an embedded font cannot.
    register_font("sans-serif", FontStyle::Normal, FONT)
        .map_err(|_| plot_err("the embedded font did not load"))?;
    let b = p.binning()?;
    let top = h.counts.iter().flatten().copied().max().unwrap_or(0).max(1) as f64;
    let mut buf = vec![0u8; (WIDTH * HEIGHT * 3) as usize];
    {
        let root = BitMapBackend::with_buffer(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(plot_err)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(
                format!("histogram of {title}: {} bins", h.bins),
                ("sans-serif", 22),
            )
            .margin(16)
            .x_label_area_size(48)
            .y_label_area_size(80)
            .build_cartesian_2d(p.lo as f64..p.hi as f64, 0.0..top * 1.05)
            .map_err(plot_err)?;
        chart
            .configure_mesh()
            .x_desc("sample value")
            .y_desc("count")
            .label_style(("sans-serif", 14))
            .axis_desc_style(("sans-serif", 16))
            .y_label_formatter(&|v| format!("{v:.0}"))
            .draw()
            .map_err(plot_err)?;
        let names = crate::histogram::channel_names(h.counts.len());
        for (c, counts) in h.counts.iter().enumerate() {
            let col = colour(h.counts.len(), c);
            // A step per bin: its count across its width.
            let steps = counts
                .iter()
                .enumerate()
                .flat_map(|(i, &n)| [(b.edge(i), n as f64), (b.edge(i + 1), n as f64)]);
            chart
                .draw_series(LineSeries::new(steps, col.stroke_width(2)))
                .map_err(plot_err)?
                .label(names[c])
                .legend(move |(x, y)| PathElement::new([(x, y), (x + 20, y)], col.stroke_width(3)));
        }
        chart
            .configure_series_labels()
            .background_style(WHITE.mix(0.8))
            .border_style(BLACK)
            .label_font(("sans-serif", 14))
            .draw()
            .map_err(plot_err)?;
        root.present().map_err(plot_err)?;
    }
    let img = Image::<u8>::from_vec(WIDTH as usize, HEIGHT as usize, 3, buf)?;
    let options = SaveOptions {
        format: Some(format),
        ..SaveOptions::default()
    };
    clfilter::image::save_with(&DynImage::U8(img), path, &options)?;
    Ok(())
}
