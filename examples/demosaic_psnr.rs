//! Mosaics photos to RGGB, demosaics them with each method and prints the
//! PSNR against the original (8-bit, 10-pixel border left out).
//!
//! `cargo run --release --example demosaic_psnr -- [IMAGE.png ...]`
//! (default: `examples/data/coffee.png`).

use clfilter::ops::demosaic::{mosaic, psnr, DemosaicParams, Method, Pattern, Raw};
use clfilter::prelude::*;
use clfilter::{DynImage, Engine, Image};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut paths: Vec<String> = std::env::args().skip(1).collect();
    if paths.is_empty() {
        paths.push(concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/coffee.png").into());
    }
    let engine = Engine::from_env()?;
    println!("backend: {}", engine.backend().describe());
    println!(
        "{:<40} {:>9} {:>9} {:>9}",
        "image (RGGB)", "bilinear", "mhc", "edge"
    );
    for path in &paths {
        let rgb: Image<u8> = match clfilter::image::load(path)? {
            DynImage::U8(i) if i.channels() >= 3 => i,
            _ => return Err(format!("{path}: expected an 8-bit RGB image").into()),
        };
        // The CFA needs even sides: drop a last odd column or row.
        let (w, h) = (rgb.width() & !1, rgb.height() & !1);
        let rgb = Image::from_fn(w, h, 3, |x, y, c| rgb.get(x, y, c))?;
        let cfa = mosaic(&rgb, Pattern::Rggb)?;
        let mut line = format!("{path:<40}");
        for m in Method::ALL {
            let out: Image<u8> =
                engine.demosaic(&Raw::U8(&cfa), &DemosaicParams::new(Pattern::Rggb, m))?;
            line += &format!(" {:>9.2}", psnr(&out, &rgb, 10)?);
        }
        println!("{line}");
    }
    Ok(())
}
