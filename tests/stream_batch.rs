//! Batched streams on the OpenCL device (PoCL in CI): a stream of frames in
//! batches (one upload and one download per batch; stacked, one launch per
//! kernel for the whole batch, or frame by frame on sub-buffers) must hand
//! over exactly the bytes of the unbatched stream, for odd and prime frame
//! sizes, every frame format the device reads, batches cut short by the
//! end of the input, and a truncated last frame.

mod common;

use std::io::Cursor;

use clfilter::image::raw::{RawFormat, RawImage};
use clfilter::pipeline::stream::{
    batch_size, run_stream, FrameSink, OutFrame, StreamOptions, AUTO_BATCH_MAX, MAX_BATCH,
};
use clfilter::pipeline::{self, run_stages};
use clfilter::{DynImage, Engine, Error};
use common::{opencl_engine, Rng};

/// Every frame the stream hands over: its index and its bytes as given.
#[derive(Default)]
struct Frames(Vec<(usize, Vec<u8>)>);

impl FrameSink for Frames {
    fn frame(&mut self, f: &OutFrame<'_>) -> clfilter::Result<()> {
        self.0.push((f.index, f.bytes.to_vec()));
        Ok(())
    }
}

/// `n` frames of random bytes (every byte pattern is a valid frame of the
/// formats used here).
fn random_frames(rng: &mut Rng, frame_bytes: usize, n: usize) -> Vec<u8> {
    (0..frame_bytes * n).map(|_| rng.next_u64() as u8).collect()
}

/// Streams `bytes` through `spec` with `batch` frames per batch (`None`:
/// the automatic choice); the frames handed over, and the stream's result.
fn stream(
    engine: &Engine,
    spec: &str,
    fmt: RawFormat,
    (w, h): (usize, usize),
    batch: Option<usize>,
    bytes: &[u8],
) -> (
    Frames,
    clfilter::Result<clfilter::pipeline::stream::StreamTotals>,
) {
    let ops = pipeline::format::parse_with_format(spec, Some(&fmt)).unwrap();
    let mut opts = StreamOptions::new(w, h, fmt);
    opts.batch = batch;
    let mut sink = Frames::default();
    let r = run_stream(engine, &ops, &opts, Cursor::new(bytes.to_vec()), &mut sink);
    (sink, r)
}

/// Streams `n` random frames batched and unbatched: the same frames, in
/// order, byte for byte. Returns whether the batches ran stacked.
fn check(
    engine: &Engine,
    spec: &str,
    fmt: &str,
    size: (usize, usize),
    n: usize,
    batch: usize,
) -> bool {
    let fmt: RawFormat = fmt.parse().unwrap();
    let frame_bytes = fmt.frame_bytes(size.0, size.1).unwrap();
    let mut rng = Rng::from_parts(&[size.0 as u64, size.1 as u64, n as u64, batch as u64]);
    let bytes = random_frames(&mut rng, frame_bytes, n);
    let (one, s1) = stream(engine, spec, fmt, size, Some(1), &bytes);
    let (many, sb) = stream(engine, spec, fmt, size, Some(batch), &bytes);
    let (s1, sb) = (s1.unwrap(), sb.unwrap());
    assert_eq!((s1.batch, sb.batch), (1, batch));
    assert_eq!((s1.frames, sb.frames), (n, n));
    assert!(sb.overlapped && sb.host_fallback_frames == 0, "{sb:?}");
    assert!(!s1.stacked, "a batch of one frame is not stacked");
    let indices: Vec<usize> = many.0.iter().map(|f| f.0).collect();
    assert_eq!(indices, (0..n).collect::<Vec<_>>(), "frames out of order");
    for (i, (a, b)) in one.0.iter().zip(&many.0).enumerate() {
        assert!(
            a.1 == b.1,
            "{spec} {fmt} {size:?} batch {batch}: frame {i} differs from the unbatched stream"
        );
    }
    sb.stacked
}

/// [`check`] on a pipeline that must run stacked.
fn check_stacked(
    engine: &Engine,
    spec: &str,
    fmt: &str,
    size: (usize, usize),
    n: usize,
    batch: usize,
) {
    assert!(
        check(engine, spec, fmt, size, n, batch),
        "{spec} {fmt} {size:?} batch {batch}: the batches did not run stacked"
    );
}

/// The FIR Gaussian, forced: the variant that stacks.
const FIR: &str = "gaussian=sigma=2:variant=fir_local";

#[test]
fn stacked_batches_equal_frames_alone_in_every_format() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let mono = format!("{FIR},convert=u8");
    // Odd and prime sizes, single rows and columns, a last batch cut short
    // (11 = 4 + 4 + 3; 7 = 2 + 2 + 2 + 1), a batch longer than the stream.
    for (size, n, batch) in [
        ((37, 23), 11, 4),
        ((1, 1), 7, 2),
        ((1, 29), 5, 3),
        ((31, 1), 5, 4),
        ((13, 7), 3, 8),
    ] {
        check_stacked(&engine, &mono, "mono8", size, n, batch);
    }
    for fmt in ["mono10", "mono16"] {
        check_stacked(&engine, FIR, fmt, (23, 37), 7, 3);
    }
    // Packed frames: width x height even.
    for fmt in ["mono12p", "mono12packed", "mono12mipi"] {
        check_stacked(&engine, &mono, fmt, (38, 21), 10, 4);
    }
    // Pointwise alone, f32 and u16 results.
    check_stacked(&engine, "convert=f32", "mono12", (29, 13), 9, 4);
    check_stacked(&engine, "convert=u16", "mono8", (17, 19), 5, 2);
    // Each axis alone, unequal sigmas, the mirror border: every frame's
    // columns are bordered at its own first and last rows.
    for blur in [
        "gaussian=sigma_x=3:sigma_y=0:variant=fir_local",
        "gaussian=sigma_x=0:sigma_y=3:variant=fir_local",
        "gaussian=sigma_x=1:sigma_y=4:border=mirror:variant=fir_local",
    ] {
        check_stacked(&engine, blur, "mono8", (19, 11), 9, 4);
    }
    // Camera pipelines in every bayer layout the device reads.
    let camera = format!("demosaic=method=mhc,{FIR},convert=u8");
    for fmt in [
        "bayer_rggb8",
        "bayer_bggr16",
        "bayer_grbg12",
        "bayer_gbrg12p",
        "bayer_rggb12packed",
        "bayer_bggr12mipi",
    ] {
        check_stacked(&engine, &camera, fmt, (38, 22), 13, 5);
    }
    for method in ["bilinear", "edge"] {
        let spec = format!("demosaic=method={method}:channels=4,{FIR}");
        check_stacked(&engine, &spec, "bayer_gbrg8", (46, 14), 9, 16);
    }
    // The smallest frames: one quad, one quad row or column.
    for size in [(2, 2), (2, 34), (34, 2)] {
        check_stacked(&engine, &camera, "bayer_rggb8", size, 7, 3);
    }
}

#[test]
fn stages_that_do_not_stack_run_frame_by_frame() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    // A recursive Gaussian carries state along whole columns; the median
    // does not say that it stacks.
    for spec in [
        "gaussian=sigma=2:variant=iir_rowblk,convert=u8",
        "median=radius=1",
    ] {
        assert!(
            !check(&engine, spec, "mono8", (37, 23), 9, 4),
            "{spec} ran stacked"
        );
    }
}

#[test]
fn batched_streams_equal_unbatched_ones_byte_for_byte() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let blur = "gaussian=sigma=2,convert=u8";
    // Odd and prime sizes, with a last batch cut short (11 = 4 + 4 + 3).
    check(&engine, blur, "mono8", (37, 23), 11, 4);
    check(&engine, blur, "mono8", (1, 1), 6, 4);
    check(&engine, blur, "mono8", (1, 29), 5, 2);
    check(&engine, blur, "mono8", (31, 1), 5, 3);
    // A batch as long as the stream, and one longer.
    check(&engine, blur, "mono8", (37, 23), 5, 5);
    check(&engine, blur, "mono8", (37, 23), 3, 8);
    // 16-bit and packed inputs, u16 and f32 results.
    check(&engine, "gaussian=sigma=1.5", "mono16", (23, 37), 7, 3);
    check(&engine, "convert=u16", "mono12", (29, 13), 9, 4);
    check(
        &engine,
        "gaussian=sigma=3,convert=u8",
        "mono12p",
        (38, 21),
        10,
        4,
    );
    let camera = "demosaic=method=mhc,gaussian=sigma=2,convert=u8";
    check(&engine, camera, "bayer_rggb12p", (38, 22), 13, 5);
    check(&engine, camera, "bayer_gbrg8", (46, 14), 9, 16);
}

#[test]
fn automatic_batches_match_the_host_path() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let fmt: RawFormat = "bayer_rggb8".parse().unwrap();
    let (w, h) = (34, 18);
    let n = AUTO_BATCH_MAX + 5;
    let mut rng = Rng::new(21);
    let bytes = random_frames(&mut rng, w * h, n);
    let spec = "demosaic=method=mhc,gaussian=sigma=2,convert=u8";
    let (got, s) = stream(&engine, spec, fmt, (w, h), None, &bytes);
    let s = s.unwrap();
    // Frames this small fill the largest automatic batch.
    assert_eq!((s.batch, s.frames), (AUTO_BATCH_MAX, n));
    let ops = pipeline::format::parse_with_format(spec, Some(&fmt)).unwrap();
    for (i, (index, out)) in got.0.iter().enumerate() {
        assert_eq!(*index, i);
        let frame = fmt
            .decode(&bytes[i * w * h..(i + 1) * w * h], w, h)
            .unwrap();
        let RawImage::U8(frame) = frame else {
            panic!("an 8-bit frame expected")
        };
        let (want, _) = run_stages(&Engine::cpu(), &ops, frame.into()).unwrap();
        let DynImage::U8(want) = want else {
            panic!("a u8 result expected")
        };
        let diff = out
            .iter()
            .zip(want.rows().flatten())
            .map(|(&a, &b)| (a as i32 - b as i32).abs())
            .max();
        assert!(diff <= Some(2), "frame {i} differs by {diff:?}");
    }
}

#[test]
fn a_truncated_frame_in_a_batch_keeps_every_whole_frame() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let fmt: RawFormat = "mono8".parse().unwrap();
    let (w, h) = (37, 23);
    let mut rng = Rng::new(8);
    // 9 whole frames and 100 bytes of a tenth: with batches of 4, the cut
    // frame is the second of the third batch.
    let mut bytes = random_frames(&mut rng, w * h, 10);
    bytes.truncate(9 * w * h + 100);
    for spec in [
        "gaussian=sigma=2,convert=u8",
        "gaussian=sigma=2:variant=fir_local",
    ] {
        truncated_batches(&engine, spec, fmt, (w, h), &bytes);
    }
}

/// Streams `bytes`, whose tenth frame is cut after 100 bytes, in batches
/// of 4, 3 and 16: the nine whole frames, as the unbatched stream gives
/// them, then the error.
fn truncated_batches(
    engine: &Engine,
    spec: &str,
    fmt: RawFormat,
    (w, h): (usize, usize),
    bytes: &[u8],
) {
    let (one, _) = stream(engine, spec, fmt, (w, h), Some(1), bytes);
    for batch in [4, 3, 16] {
        let (got, r) = stream(engine, spec, fmt, (w, h), Some(batch), bytes);
        let err = r.unwrap_err();
        assert!(
            matches!(
                err,
                Error::TruncatedFrame {
                    index: 9,
                    got: 100,
                    ..
                }
            ),
            "batch {batch}: {err:?}"
        );
        assert_eq!(
            got.0.len(),
            9,
            "batch {batch}: the whole frames before the cut"
        );
        assert!(
            got.0 == one.0,
            "batch {batch}: differs from the unbatched frames"
        );
    }
}

#[test]
fn transfer_bounds_run_in_batches() {
    let Some(engine) = opencl_engine() else {
        return;
    };
    let fmt: RawFormat = "mono8".parse().unwrap();
    let ops = pipeline::format::parse_with_format("gaussian=sigma=2", Some(&fmt)).unwrap();
    let mut opts = StreamOptions::new(17, 5, fmt);
    opts.batch = Some(3);
    opts.transfer_only = true;
    let bytes = random_frames(&mut Rng::new(2), 17 * 5, 7);
    let mut sink = Frames::default();
    let s = run_stream(&engine, &ops, &opts, Cursor::new(bytes), &mut sink).unwrap();
    assert_eq!((s.frames, s.batch, sink.0.len()), (7, 3, 0));
}

#[test]
fn batch_sizes_follow_the_frame_size() {
    // The automatic choice: about 4 MiB per upload, at most AUTO_BATCH_MAX.
    let fmt = |s: &str| s.parse::<RawFormat>().unwrap();
    let bytes = |f: &str, w, h| fmt(f).frame_bytes(w, h).unwrap();
    assert_eq!(
        batch_size(None, bytes("bayer_rggb12p", 4096, 3000)).unwrap(),
        1
    );
    assert_eq!(
        batch_size(None, bytes("bayer_rggb8", 1920, 1200)).unwrap(),
        2
    );
    assert_eq!(
        batch_size(None, bytes("bayer_rggb8", 640, 480)).unwrap(),
        14
    );
    assert_eq!(batch_size(None, 1).unwrap(), AUTO_BATCH_MAX);
    assert_eq!(batch_size(Some(7), 1 << 30).unwrap(), 7);
    for bad in [0, MAX_BATCH + 1] {
        let e = batch_size(Some(bad), 100);
        assert!(matches!(e, Err(Error::InvalidArgument(_))), "{e:?}");
    }
    // A bad batch is refused before any frame is read, on any backend.
    let mut o = StreamOptions::new(4, 4, fmt("mono8"));
    o.batch = Some(0);
    let e = run_stream(
        &Engine::cpu(),
        &[],
        &o,
        Cursor::new(vec![0u8; 16]),
        &mut Frames::default(),
    );
    assert!(matches!(e, Err(Error::InvalidArgument(_))), "{e:?}");
}
