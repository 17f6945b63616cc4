//! Loading and saving through the `image` crate (and the `tiff` crate for
//! single-channel f32, which `image` cannot represent).
//!
//! Formats: PNG 8/16-bit, TIFF 8/16-bit/f32, PNM (PGM/PPM, 8/16-bit), JPEG read-only.
//! Gray+alpha files load as RGBA, so every image has 1, 3 or 4 channels.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::path::Path;

use image::{DynamicImage, ImageFormat};

use super::{DynImage, Image, Sample};
use crate::error::{Error, Result};

fn format_err(path: &Path, message: impl Into<String>) -> Error {
    Error::Format {
        path: path.to_path_buf(),
        message: message.into(),
    }
}

fn io_err(path: &Path, source: std::io::Error) -> Error {
    Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

fn is_tiff(path: &Path) -> bool {
    matches!(
        path.extension().and_then(|e| e.to_str()).map(|e| e.to_ascii_lowercase()),
        Some(e) if e == "tif" || e == "tiff"
    )
}

/// Loads an image file. The format is taken from the file's contents.
pub fn load(path: impl AsRef<Path>) -> Result<DynImage> {
    let path = path.as_ref();
    if is_tiff(path) {
        if let Some(img) = load_tiff_gray_f32(path)? {
            return Ok(img);
        }
    }
    let reader = image::ImageReader::open(path)
        .map_err(|e| io_err(path, e))?
        .with_guessed_format()
        .map_err(|e| io_err(path, e))?;
    let decoded = reader.decode().map_err(|e| match e {
        image::ImageError::IoError(io) => io_err(path, io),
        other => format_err(path, other.to_string()),
    })?;
    from_dynamic(path, decoded)
}

/// Gray f32 TIFF, which `image` does not decode. `Ok(None)`: not that kind of file.
fn load_tiff_gray_f32(path: &Path) -> Result<Option<DynImage>> {
    let file = File::open(path).map_err(|e| io_err(path, e))?;
    let Ok(mut dec) = tiff::decoder::Decoder::new(BufReader::new(file)) else {
        // Not a readable TIFF: let the generic path produce the error message.
        return Ok(None);
    };
    if !matches!(dec.colortype(), Ok(tiff::ColorType::Gray(32))) {
        return Ok(None);
    }
    let (w, h) = dec
        .dimensions()
        .map_err(|e| format_err(path, e.to_string()))?;
    match dec.read_image() {
        Ok(tiff::decoder::DecodingResult::F32(v)) => {
            Image::from_vec(w as usize, h as usize, 1, v).map(|i| Some(DynImage::F32(i)))
        }
        Ok(_) => Err(format_err(
            path,
            "32-bit integer gray TIFF is not supported; use 8/16-bit integer or 32-bit float",
        )),
        Err(e) => Err(format_err(path, e.to_string())),
    }
}

fn from_dynamic(path: &Path, d: DynamicImage) -> Result<DynImage> {
    let (w, h) = (d.width() as usize, d.height() as usize);
    let img = match d {
        DynamicImage::ImageLuma8(b) => DynImage::U8(Image::from_vec(w, h, 1, b.into_raw())?),
        DynamicImage::ImageRgb8(b) => DynImage::U8(Image::from_vec(w, h, 3, b.into_raw())?),
        DynamicImage::ImageRgba8(b) => DynImage::U8(Image::from_vec(w, h, 4, b.into_raw())?),
        DynamicImage::ImageLumaA8(_) => {
            DynImage::U8(Image::from_vec(w, h, 4, d.into_rgba8().into_raw())?)
        }
        DynamicImage::ImageLuma16(b) => DynImage::U16(Image::from_vec(w, h, 1, b.into_raw())?),
        DynamicImage::ImageRgb16(b) => DynImage::U16(Image::from_vec(w, h, 3, b.into_raw())?),
        DynamicImage::ImageRgba16(b) => DynImage::U16(Image::from_vec(w, h, 4, b.into_raw())?),
        DynamicImage::ImageLumaA16(_) => {
            DynImage::U16(Image::from_vec(w, h, 4, d.into_rgba16().into_raw())?)
        }
        DynamicImage::ImageRgb32F(b) => DynImage::F32(Image::from_vec(w, h, 3, b.into_raw())?),
        DynamicImage::ImageRgba32F(b) => DynImage::F32(Image::from_vec(w, h, 4, b.into_raw())?),
        other => {
            return Err(format_err(
                path,
                format!("unsupported pixel layout {:?}", other.color()),
            ))
        }
    };
    Ok(img)
}

/// Saves an image; the format comes from the file extension.
///
/// f32 images can only be saved as TIFF; asking for another format is an
/// error that says so. JPEG is read-only here (it is lossy).
pub fn save(img: &DynImage, path: impl AsRef<Path>) -> Result<()> {
    let path = path.as_ref();
    let format = ImageFormat::from_path(path).map_err(|_| {
        format_err(
            path,
            "unknown output extension; use .png, .tif/.tiff, .pgm/.ppm",
        )
    })?;
    let (_, _, ch) = img.shape();
    match format {
        ImageFormat::Png | ImageFormat::Tiff | ImageFormat::Pnm => {}
        ImageFormat::Jpeg => {
            return Err(format_err(
                path,
                "JPEG output is not supported (lossy); use .png or .tif",
            ))
        }
        other => {
            return Err(format_err(
                path,
                format!("{other:?} output is not supported; use .png, .tif/.tiff, .pgm/.ppm"),
            ))
        }
    }
    if format == ImageFormat::Pnm && ch == 4 {
        return Err(format_err(
            path,
            "PNM holds 1 (PGM) or 3 (PPM) channels; save 4-channel images as .png or .tif",
        ));
    }
    if img.sample_type() == super::SampleType::F32 && format != ImageFormat::Tiff {
        return Err(format_err(
            path,
            "f32 images can only be saved as TIFF (.tif); convert to u8/u16 first for PNG/PNM",
        ));
    }
    if let DynImage::F32(i) = img {
        if ch == 1 {
            return save_tiff_gray_f32(i, path);
        }
    }
    let dynamic = to_dynamic(img);
    dynamic.save_with_format(path, format).map_err(|e| match e {
        image::ImageError::IoError(io) => io_err(path, io),
        other => format_err(path, other.to_string()),
    })
}

fn buf<P: image::Pixel>(i: &Image<P::Subpixel>) -> image::ImageBuffer<P, Vec<P::Subpixel>>
where
    P::Subpixel: Sample,
{
    image::ImageBuffer::from_raw(
        i.width() as u32,
        i.height() as u32,
        i.packed_samples().into_owned(),
    )
    .expect("packed samples match the image shape")
}

fn to_dynamic(img: &DynImage) -> DynamicImage {
    use image::{Luma, Rgb, Rgba};
    match img {
        DynImage::U8(i) => match i.channels() {
            1 => DynamicImage::ImageLuma8(buf::<Luma<u8>>(i)),
            3 => DynamicImage::ImageRgb8(buf::<Rgb<u8>>(i)),
            _ => DynamicImage::ImageRgba8(buf::<Rgba<u8>>(i)),
        },
        DynImage::U16(i) => match i.channels() {
            1 => DynamicImage::ImageLuma16(buf::<Luma<u16>>(i)),
            3 => DynamicImage::ImageRgb16(buf::<Rgb<u16>>(i)),
            _ => DynamicImage::ImageRgba16(buf::<Rgba<u16>>(i)),
        },
        DynImage::F32(i) => match i.channels() {
            3 => DynamicImage::ImageRgb32F(buf::<Rgb<f32>>(i)),
            // Gray f32 is written by save_tiff_gray_f32 before we get here.
            _ => DynamicImage::ImageRgba32F(buf::<Rgba<f32>>(i)),
        },
    }
}

fn save_tiff_gray_f32(img: &Image<f32>, path: &Path) -> Result<()> {
    let file = File::create(path).map_err(|e| io_err(path, e))?;
    let mut enc = tiff::encoder::TiffEncoder::new(BufWriter::new(file))
        .map_err(|e| format_err(path, e.to_string()))?;
    enc.write_image::<tiff::encoder::colortype::Gray32Float>(
        img.width() as u32,
        img.height() as u32,
        &img.packed_samples(),
    )
    .map_err(|e| format_err(path, e.to_string()))
}
