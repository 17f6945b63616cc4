//! The working image of device-resident pipelines, and the plumbing
//! kernels around it (`cl/pipeline.cl`: load, store, scale and unpack).
//!
//! Between stages the image is a [`Work`]: f32 pixels, one float for gray
//! and one float4 for colour, in the units of the stage's logical sample
//! type, saturated to its range as the host path saturates, but unrounded.
//! Only the final store rounds, so a chained pipeline is at least as exact
//! as the same stages run one by one on the host, which round after every
//! stage; stages that report numbers about the image read it rounded as
//! the host has it ([`Work::host_values`]). A stage may leave a pending scale (and a pending saturation) that
//! the next stage that needs them applies with one small pass, or that the
//! final store folds in.

use std::time::{Duration, Instant};

use crate::backend::opencl::{Arg, ClEvent, DeviceBuffer, DeviceImage, Kernel};
use crate::backend::Dev;
use crate::error::{Error, Result};
use crate::image::{finite, Image, NonFinite, Sample, SampleType};
pub(crate) use crate::ops::demosaic::device::DeviceRaw;
use crate::ops::{any_shape, no_local, Dispatch, OpParams, RunReport, Shape, VariantSpec};

/// A device-resident chain's context: the dispatcher, the device, the
/// backend's description for reports, and how many frames the images hold.
pub struct Chain<'a> {
    /// Chooses each stage's variant and builds kernels.
    pub d: &'a dyn Dispatch,
    /// The device the chain runs on.
    pub dev: &'a Dev,
    /// The backend in words (for the reports of plumbing work).
    pub backend: String,
    /// Frames stacked in the chain's images: 1, or for a stream's batch
    /// (only through stages whose [`crate::ops::StageOp::stacks`] holds)
    /// that many frames one below the other, each `height / frames` rows,
    /// which stencil stages filter one by one in the same launches.
    pub frames: usize,
}

impl Chain<'_> {
    /// A report for work the pipeline does itself (no variant table).
    pub fn own_report(&self, what: &str, start: Instant, kt: Duration) -> RunReport {
        RunReport {
            op: "pipeline",
            variant: what.into(),
            backend: self.backend.clone(),
            elapsed: start.elapsed(),
            kernel_time: Some(kt),
            fallbacks: Vec::new(),
        }
    }
}

/// What a stage of a chain receives: the working image, or the raw frame
/// as uploaded (only for stages that read raw frames, and only as the
/// chain's first stage).
pub struct ChainInput<'a>(Received<'a>);

enum Received<'a> {
    Raw(&'a DeviceRaw),
    Work(Work),
}

impl<'a> ChainInput<'a> {
    /// A raw frame.
    pub(crate) fn raw(r: &'a DeviceRaw) -> Self {
        ChainInput(Received::Raw(r))
    }

    /// A working image.
    pub fn work(w: Work) -> Self {
        ChainInput(Received::Work(w))
    }

    /// The raw frame, or the working image when the stage gets none.
    pub(crate) fn into_raw(self) -> std::result::Result<&'a DeviceRaw, Work> {
        match self.0 {
            Received::Raw(r) => Ok(r),
            Received::Work(w) => Err(w),
        }
    }

    /// The working image (the chain loads raw frames for stages that do
    /// not read them).
    pub fn into_work(self) -> Work {
        match self.0 {
            Received::Work(w) => w,
            Received::Raw(_) => unreachable!("the chain loads raw frames before such stages"),
        }
    }
}

/// A kernel's device time.
pub fn time(ev: ClEvent) -> Result<Duration> {
    Ok(ev.duration()?.unwrap_or_default())
}

/// The table entry the plumbing kernels are built under (`pipeline.cl` is
/// not an operation; its kernels have no alternatives).
static PLUMBING: VariantSpec = VariantSpec {
    name: "pipeline",
    summary: "load, store, scale and unpack kernels of device-resident pipelines",
    files: &["pipeline.cl"],
    options: "",
    local: [256, 1],
    local_bytes: no_local,
    supports: any_shape,
    requires: &[],
    tolerance: 0.0,
};

/// Floats each work-item of `pipeline_nonfinite` reads: enough to keep
/// its few atomics and its launch overhead out of the time, few enough
/// to keep a GPU busy with 4K images (a 4K gray image is half a million
/// work-items).
const NONFINITE_PER_ITEM: usize = 16;

/// An image between two stages of a device-resident pipeline.
pub struct Work {
    /// f32 pixels: 1 channel (gray) or 4 (colour; RGB leaves the 4th unused).
    pub img: DeviceImage<f32>,
    /// The logical channels (1, 3 or 4).
    pub channels: usize,
    /// The logical sample type: the units the values are in.
    pub ty: SampleType,
    /// Pending factor: the logical values are the stored ones times this.
    pub scale: f32,
    /// Whether values may lie outside `0..=ty.full_scale()` for an integer
    /// `ty` (after `convert` or `normalize` into one), where the host path
    /// would have saturated them.
    pub unsaturated: bool,
}

/// A plumbing kernel for typed pixels of `t` with `ch` channels.
fn plumbing(
    d: &dyn Dispatch,
    dev: &Dev,
    t: SampleType,
    ch: usize,
    extra: &str,
    name: &str,
) -> Result<Kernel> {
    plumbing_from(d.programs(), dev, t, ch, extra, name)
}

/// [`plumbing`] from a program cache alone (kernel-only timing has no
/// dispatcher).
fn plumbing_from(
    progs: &crate::ops::Programs,
    dev: &Dev,
    t: SampleType,
    ch: usize,
    extra: &str,
    name: &str,
) -> Result<Kernel> {
    let shape = Shape::new(1, 1, ch, t);
    progs.kernel(dev, "pipeline", &PLUMBING, &shape, extra, name)
}

impl Work {
    /// Width in pixels.
    pub fn width(&self) -> usize {
        self.img.width()
    }

    /// Height in pixels.
    pub fn height(&self) -> usize {
        self.img.height()
    }

    /// The shape variant tables check: what the kernels really process.
    pub fn working_shape(&self, params: OpParams) -> Shape {
        Shape::new(
            self.width(),
            self.height(),
            self.img.channels(),
            SampleType::F32,
        )
        .with_params(params)
    }

    /// The shape the tuner keys on: the user's pixels.
    pub fn logical_shape(&self, params: OpParams) -> Shape {
        Shape::new(self.width(), self.height(), self.channels, self.ty).with_params(params)
    }

    /// Applies the pending scale and saturation, for stages that need the
    /// logical values (all but `transpose` and `convert`; the Gaussian is
    /// linear, but blurring unsaturated values would differ from the host).
    pub fn materialize(&mut self, d: &dyn Dispatch, dev: &Dev) -> Result<Duration> {
        self.fix(d, dev, false)
    }

    /// [`Work::materialize`], then rounds to whole steps of `ty` (when an
    /// integer type widens, the host path rounded at the narrower type).
    pub fn quantize(&mut self, d: &dyn Dispatch, dev: &Dev) -> Result<Duration> {
        self.fix(d, dev, true)
    }

    /// The values the host path holds here, for stages whose result is
    /// numbers about the image (`stats`, `minmax`, `reduce`, a percentile's
    /// histogram), which must not see the fractions a chain keeps between
    /// stages: [`Work::quantize`] for an integer `ty` (the host rounded to
    /// its steps, e.g. at a `convert=u8`), [`Work::materialize`] for f32.
    pub fn host_values(&mut self, d: &dyn Dispatch, dev: &Dev) -> Result<Duration> {
        if self.ty == SampleType::F32 {
            self.materialize(d, dev)
        } else {
            self.quantize(d, dev)
        }
    }

    fn fix(&mut self, d: &dyn Dispatch, dev: &Dev, round: bool) -> Result<Duration> {
        if self.scale == 1.0 && !self.unsaturated && !round {
            return Ok(Duration::ZERO);
        }
        let hi = if self.unsaturated {
            self.ty.full_scale()
        } else {
            f32::INFINITY
        };
        let k = plumbing(d, dev, SampleType::F32, 1, "", "pipeline_fix")?;
        let n = self.img.pixel_count() * self.img.channels();
        let ev = dev.launch(
            &k,
            &[n],
            &[PLUMBING.local[0]],
            &[
                Arg::img(&self.img),
                Arg::int(n)?,
                Arg::F32(self.scale),
                Arg::F32(hi),
                Arg::int(round as usize)?,
            ],
        )?;
        self.scale = 1.0;
        self.unsaturated = false;
        time(ev)
    }

    /// Applies the non-finite `policy` for operation `op` before it reads
    /// this image: a working image of logical type f32 is counted on the
    /// device (one read, and a readback of two numbers); if it holds NaN or
    /// infinities, [`Error::NonFinite`] or, to repair them, one download,
    /// the host's [`finite::repair`] and one upload. Returns the device
    /// time, or `None` for integer types, which cannot hold them.
    pub fn apply_nonfinite(
        &mut self,
        d: &dyn Dispatch,
        dev: &Dev,
        op: &str,
        policy: NonFinite,
    ) -> Result<Option<Duration>> {
        if self.ty != SampleType::F32 {
            return Ok(None);
        }
        // A pending scale can overflow finite values: check what the stage reads.
        let mut kt = self.materialize(d, dev)?;
        let k = plumbing(d, dev, SampleType::F32, 1, "", "pipeline_nonfinite")?;
        let lanes = self.img.channels();
        let n = self.img.pixel_count() * lanes;
        let out = DeviceBuffer::from_slice(dev, &[0u32, u32::MAX])?;
        let local = k.max_work_group().clamp(1, PLUMBING.local[0]);
        // Grid-stride: never split.
        let ev = dev.launch_whole(
            &k,
            &[n.div_ceil(NONFINITE_PER_ITEM)],
            &[local],
            &[
                Arg::img(&self.img),
                Arg::int(n)?,
                Arg::int(lanes)?,
                Arg::int(self.channels.min(lanes))?,
                Arg::buf(&out),
            ],
        )?;
        kt += time(ev)?;
        let [count, first] = <[u32; 2]>::try_from(out.to_vec(dev)?)
            .map_err(|_| Error::arg("the non-finite count came back with another length"))?;
        if count == 0 {
            return Ok(Some(kt));
        }
        let (i, w) = (first as usize, self.width());
        let found = finite::Found {
            count: u64::from(count),
            first: ((i / lanes) % w, i / lanes / w, i % lanes),
        };
        if policy == NonFinite::Error {
            return Err(found.error(op));
        }
        let mut host = self.img.download(dev)?;
        finite::repair(&mut host, policy);
        self.img.write(dev, &host)?;
        Ok(Some(kt))
    }

    /// The same image with new pixels (shape, type and scale kept).
    pub fn with(&self, img: DeviceImage<f32>) -> Work {
        Work {
            img,
            channels: self.channels,
            ty: self.ty,
            scale: self.scale,
            unsaturated: self.unsaturated,
        }
    }
}

/// Loads a typed device image into working form.
pub(crate) fn load<T: Sample>(
    d: &dyn Dispatch,
    dev: &Dev,
    src: &DeviceImage<T>,
) -> Result<(Work, Duration)> {
    let ch = src.channels();
    let img = DeviceImage::<f32>::new(dev, src.width(), src.height(), if ch == 1 { 1 } else { 4 })?;
    let t = load_into(d.programs(), dev, src, &img)?;
    let work = Work {
        img,
        channels: ch,
        ty: T::TYPE,
        scale: 1.0,
        unsaturated: false,
    };
    Ok((work, t))
}

/// Converts a typed device image into the working pixels `img` (f32, 1
/// channel for gray, 4 for colour, of `src`'s size): `pipeline_load`.
pub(crate) fn load_into<T: Sample>(
    progs: &crate::ops::Programs,
    dev: &Dev,
    src: &DeviceImage<T>,
    img: &DeviceImage<f32>,
) -> Result<Duration> {
    let ch = src.channels();
    let k = plumbing_from(progs, dev, T::TYPE, ch, "", "pipeline_load")?;
    let n = src.pixel_count();
    let ev = dev.launch(
        &k,
        &[n],
        &[PLUMBING.local[0]],
        &[Arg::img(src), Arg::img(img), Arg::int(n)?],
    )?;
    time(ev)
}

/// Loads a mono raw frame (8-bit, 16-bit containers, or packed 12-bit,
/// which becomes u16 values 0..4095) into working form.
pub(crate) fn load_raw(d: &dyn Dispatch, dev: &Dev, raw: &DeviceRaw) -> Result<(Work, Duration)> {
    match raw {
        DeviceRaw::U8(i) => load(d, dev, i),
        DeviceRaw::U16(i) => load(d, dev, i),
        DeviceRaw::Packed {
            bytes,
            width,
            height,
            packing,
        } => {
            let n = width * height;
            let img = DeviceImage::<f32>::new(dev, *width, *height, 1)?;
            let packed = packing.kernel_code();
            let k = plumbing(
                d,
                dev,
                SampleType::U8,
                1,
                &format!("-DPACKED={packed}"),
                "pipeline_unpack12",
            )?;
            let ev = dev.launch(
                &k,
                &[n / 2],
                &[PLUMBING.local[0]],
                &[Arg::buf(bytes), Arg::img(&img), Arg::int(n)?],
            )?;
            let work = Work {
                img,
                channels: 1,
                ty: SampleType::U16,
                scale: 1.0,
                unsaturated: false,
            };
            Ok((work, time(ev)?))
        }
    }
}

/// Stores working pixels as a typed image of the logical channels into `out`
/// (rounded and saturated for integer types).
pub(crate) fn store_into<U: Sample>(
    progs: &crate::ops::Programs,
    dev: &Dev,
    w: &Work,
    out: &DeviceImage<U>,
) -> Result<Duration> {
    if (out.width(), out.height(), out.channels()) != (w.width(), w.height(), w.channels) {
        return Err(Error::arg(format!(
            "pipeline output must be {}x{}x{}, got {}x{}x{}",
            w.width(),
            w.height(),
            w.channels,
            out.width(),
            out.height(),
            out.channels()
        )));
    }
    let extra = format!(
        "-DTOUT={} -DOUT_FLOAT={}",
        U::TYPE.cl_name(),
        (U::TYPE == SampleType::F32) as u8
    );
    from_work(progs, dev, w, out, &extra, "pipeline_store", &[])
}

/// Launches plumbing kernel `name` (built with `extra`) from `w` into
/// `out`, one work-item a pixel, with the arguments (in, out, n, scale,
/// `more`...).
fn from_work<U: Sample>(
    progs: &crate::ops::Programs,
    dev: &Dev,
    w: &Work,
    out: &DeviceImage<U>,
    extra: &str,
    name: &str,
    more: &[f32],
) -> Result<Duration> {
    // The working layout follows CH: 1 -> float, 3 or 4 -> float4.
    let k = plumbing_from(progs, dev, SampleType::F32, w.channels, extra, name)?;
    let n = w.img.pixel_count();
    let mut args = vec![
        Arg::img(&w.img),
        Arg::img(out),
        Arg::int(n)?,
        Arg::F32(w.scale),
    ];
    args.extend(more.iter().map(|&v| Arg::F32(v)));
    let ev = dev.launch(&k, &[n], &[PLUMBING.local[0]], &args)?;
    time(ev)
}

/// Writes `w` as display pixels into `out`, a 4-channel image of `u8`
/// (RGBA8) or `f32` (RGBA32F) of `w`'s size: cl/pipeline.cl's
/// `pipeline_display`, the numbers of [`crate::image::display`].
pub(crate) fn display_into<U: Sample>(
    d: &dyn Dispatch,
    dev: &Dev,
    w: &Work,
    out: &DeviceImage<U>,
) -> Result<Duration> {
    use crate::image::display::DisplayFormat;
    let format = match U::TYPE {
        SampleType::U8 => DisplayFormat::Rgba8,
        SampleType::F32 => DisplayFormat::Rgba32F,
        SampleType::U16 => return Err(Error::arg("display pixels are u8 or f32, not u16")),
    };
    if (out.width(), out.height(), out.channels()) != (w.width(), w.height(), 4) {
        return Err(Error::arg(format!(
            "display pixels of a {}x{} image must be {0}x{1}x4, got {}x{}x{}",
            w.width(),
            w.height(),
            out.width(),
            out.height(),
            out.channels()
        )));
    }
    let float = format == DisplayFormat::Rgba32F;
    let extra = format!(
        "-DDOUT={} -DDOUT_FLOAT={}",
        if float { "float4" } else { "uchar4" },
        float as u8
    );
    let (hi, mul, opaque) = format.factors(w.ty);
    from_work(
        d.programs(),
        dev,
        w,
        out,
        &extra,
        "pipeline_display",
        &[hi, mul, opaque],
    )
}

/// Uploads a decoded frame as it is (packed frames stay packed).
pub(crate) fn upload_frame(dev: &Dev, f: &crate::image::raw::RawImage) -> Result<DeviceRaw> {
    Ok(match f {
        crate::image::raw::RawImage::U8(i) => DeviceRaw::U8(DeviceImage::upload(dev, i)?),
        crate::image::raw::RawImage::U16(i) => DeviceRaw::U16(DeviceImage::upload(dev, i)?),
        crate::image::raw::RawImage::Packed12 {
            data,
            width,
            height,
            packing,
        } => DeviceRaw::Packed {
            // A hand-built frame's bytes are checked here, as the host's
            // unpacking checks them: the kernels read the whole frame.
            bytes: crate::backend::opencl::DeviceBuffer::from_slice(
                dev,
                checked_packed(data, *width, *height)?,
            )?,
            width: *width,
            height: *height,
            packing: *packing,
        },
    })
}

/// `data`, when it holds exactly a packed 12-bit frame of `width` x
/// `height` (a valid image size with an even pixel count); otherwise the
/// errors [`crate::image::raw::RawImage::to_dyn`] documents.
fn checked_packed(data: &[u8], width: usize, height: usize) -> Result<&[u8]> {
    crate::image::check_shape(width, height, 1)?;
    if !(width * height).is_multiple_of(2) {
        return Err(Error::InvalidArgument(format!(
            "a {width}x{height} 12-bit packed frame: packed frames hold pairs of pixels, \
             and {width}x{height} is an odd count"
        )));
    }
    let need = crate::image::bayer::Packing::frame_bytes(width, height);
    if data.len() != need {
        return Err(Error::InvalidInput(format!(
            "a {width}x{height} 12-bit packed frame has {need} bytes, got {}",
            data.len()
        )));
    }
    Ok(data)
}

/// Uploads an 8- or 16-bit image as a raw frame, checked as a Bayer frame
/// (`None` for f32 images, which are no frames).
pub(crate) fn upload_image_frame(
    dev: &Dev,
    img: &crate::image::DynImage,
) -> Result<Option<DeviceRaw>> {
    use crate::image::DynImage;
    use crate::ops::demosaic::Raw;
    Ok(match img {
        DynImage::U8(i) => Some(DeviceRaw::upload(dev, &Raw::U8(i))?),
        DynImage::U16(i) => Some(DeviceRaw::upload(dev, &Raw::U16(i))?),
        DynImage::F32(_) => None,
    })
}

/// A case's input on the device: uploaded by its first kernel runner and
/// shared by the rest (one device per case).
#[derive(Default)]
pub struct OnDevice(std::cell::OnceCell<Box<dyn std::any::Any>>);

impl OnDevice {
    /// `img` on `dev`, uploaded on first use.
    pub fn image<T: Sample>(&self, dev: &Dev, img: &Image<T>) -> Result<&DeviceImage<T>> {
        if self.0.get().is_none() {
            let up: Box<dyn std::any::Any> = Box::new(DeviceImage::upload(dev, img)?);
            let _ = self.0.set(up);
        }
        self.0
            .get()
            .and_then(|b| b.downcast_ref::<DeviceImage<T>>())
            .ok_or_else(|| Error::arg("a case's device input has another sample type"))
    }

    /// `words` on `dev` (a 1-D case, such as a sort's keys), uploaded on
    /// first use.
    pub(crate) fn words(&self, dev: &Dev, words: &[u32]) -> Result<&DeviceBuffer<u32>> {
        if self.0.get().is_none() {
            let up: Box<dyn std::any::Any> = Box::new(DeviceBuffer::from_slice(dev, words)?);
            let _ = self.0.set(up);
        }
        self.0
            .get()
            .and_then(|b| b.downcast_ref::<DeviceBuffer<u32>>())
            .ok_or_else(|| Error::arg("a case's device input is not a word buffer"))
    }
}
