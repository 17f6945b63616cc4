//! Raw camera frames: every format (8-bit, 10/12/14/16-bit containers, 12p,
//! 12packed), arbitrary sizes and byte streams. Sizes are checked against
//! a model, a frame decodes only from exactly its bytes and encodes back to
//! them, a reader over short reads and interruptions returns exactly the
//! frames a model of the stream predicts, and nothing allocates more than
//! the frame it was told.

use std::io::{ErrorKind, Read};

use clfilter::image::bayer::Packing;
use clfilter::image::raw::{encode, Depth, FrameReader};
use clfilter::{Error, RawFormat};
use proptest::prelude::*;

use crate::{config, peak_during, serial};

/// Bytes a decode may hold beyond its frame: the image's own struct, an
/// error message.
const SLACK: usize = 4096;

fn formats() -> Vec<RawFormat> {
    RawFormat::all()
}

/// `frame_bytes` as the module docs state it, in `u128` so nothing wraps.
fn model_frame_bytes(f: &RawFormat, w: usize, h: usize) -> Option<u128> {
    let (w, h) = (w as u128, h as u128);
    let pixels = w * h;
    let bayer = f.pattern.is_some();
    let ok_sides = if bayer {
        w >= 2 && h >= 2 && w % 2 == 0 && h % 2 == 0 && pixels <= i32::MAX as u128 / 4
    } else {
        w >= 1 && h >= 1 && pixels <= i32::MAX as u128
    };
    match f.depth {
        _ if !ok_sides => None,
        Depth::Bits8 => Some(pixels),
        Depth::Bits16 { .. } | Depth::Bits16Be { .. } => Some(pixels * 2),
        // CSI-2 packs each line: whole groups per row.
        Depth::Packed12(Packing::Mipi12) if w % 2 == 1 => None,
        Depth::Mipi10 if w % 4 != 0 => None,
        Depth::Mipi10 => Some(pixels / 4 * 5),
        Depth::Packed12(_) if pixels % 2 == 1 => None,
        Depth::Packed12(_) => Some(pixels / 2 * 3),
    }
}

/// Sizes: mostly small, some at the 2^31-sample edge, some anything.
fn side() -> impl Strategy<Value = usize> {
    prop_oneof![
        6 => 0usize..24,
        2 => (0usize..8).prop_map(|d| 46340 + d),
        1 => (0usize..4).prop_map(|d| (i32::MAX as usize) - d),
        1 => any::<usize>(),
    ]
}

#[test]
fn frame_bytes_follow_the_rules_for_any_size() {
    let _serial = serial();
    let all = formats();
    proptest!(config(3000), |(k in 0..all.len(), w in side(), h in side())| {
        let f = &all[k];
        let got = std::panic::catch_unwind(|| f.frame_bytes(w, h));
        prop_assert!(got.is_ok(), "{} {}x{} panicked", f, w, h);
        match (got.unwrap(), model_frame_bytes(f, w, h)) {
            (Ok(n), Some(m)) => prop_assert_eq!(n as u128, m, "{} {}x{}", f, w, h),
            (Err(Error::InvalidArgument(m)), None) => {
                prop_assert!(m.contains(&f.to_string()), "{} {}x{}: {}", f, w, h, m)
            }
            (other, want) => prop_assert!(false, "{} {}x{}: {:?}, model {:?}", f, w, h, other, want),
        }
    });
}

#[test]
fn a_frame_decodes_from_exactly_its_bytes_and_encodes_back() {
    let _serial = serial();
    let all = formats();
    let case = (
        0..all.len(),
        0usize..24,
        0usize..24,
        -4i64..4,
        any::<bool>(),
        any::<u64>(),
    );
    proptest!(config(1500), |((k, w, h, delta, exact, seed) in case)| {
        let f = &all[k];
        let want = f.frame_bytes(w, h).ok();
        let len = match (want, exact) {
            (Some(n), true) => n,
            (Some(n), false) => (n as i64 + delta).max(0) as usize,
            (None, _) => (w * h * 2).saturating_add_signed(delta as isize),
        };
        let mut s = seed;
        let bytes: Vec<u8> = (0..len).map(|_| { s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407); (s >> 56) as u8 }).collect();
        let (decoded, peak) = peak_during(|| f.decode(&bytes, w, h));
        // The frame's bytes, or the u16 samples that 10mipi and big-endian
        // frames decode into (1.6x and 1x their bytes).
        let held = len.max(if f.bits() > 8 { w * h * 2 } else { 0 });
        prop_assert!(peak <= held + SLACK, "{} {}x{}: {} bytes held for {} bytes", f, w, h, peak, len);
        let (owned, _) = peak_during(|| f.decode_vec(bytes.clone(), w, h));
        match (decoded, owned) {
            (Ok(a), Ok(b)) => {
                prop_assert_eq!(Some(len), want);
                prop_assert_eq!(&a, &b);
                prop_assert_eq!(a.size(), (w, h));
                let img = a.to_dyn().unwrap();
                prop_assert_eq!(img.shape(), (w, h, 1));
                prop_assert_eq!(encode(&img, f).unwrap(), bytes, "{} {}x{}", f, w, h);
            }
            (Err(Error::InvalidArgument(_)), Err(Error::InvalidArgument(_))) => prop_assert!(want.is_none()),
            (Err(Error::InvalidInput(m)), Err(Error::InvalidInput(_))) => {
                prop_assert!(want.is_some_and(|n| n != len), "{}", m);
                prop_assert!(m.contains(&len.to_string()), "{}", m);
            }
            (a, b) => prop_assert!(false, "{} {}x{} from {} bytes: {:?} / {:?}", f, w, h, len, a, b),
        }
    });
}

#[test]
fn huge_declared_sizes_allocate_nothing() {
    let _serial = serial();
    for f in formats() {
        for (w, h) in [
            (1 << 20, 1 << 20),
            (usize::MAX, 2),
            (2, usize::MAX),
            (65536, 65536),
        ] {
            let (r, peak) = peak_during(|| f.decode(&[0u8; 64], w, h));
            assert!(r.is_err(), "{f} {w}x{h}");
            assert!(peak <= SLACK, "{f} {w}x{h}: {peak} bytes");
        }
    }
    for (frame, skip) in [(usize::MAX, 0), (1 << 40, usize::MAX), (4, usize::MAX)] {
        let data = [7u8; 10];
        let (r, peak) = peak_during(|| {
            let mut reader = FrameReader::new(&data[..], frame, skip);
            let mut buf = [0u8; 4];
            (
                reader.read_into(&mut buf).map_err(|e| e.to_string()),
                reader.read_into(&mut buf).map_err(|e| e.to_string()),
            )
        });
        assert!(peak <= SLACK, "frame {frame}, skip {skip}: {peak} bytes");
        if frame == 4 {
            // One whole frame, then the stream ends inside its trailer.
            assert_eq!(r, (Ok(true), Ok(false)));
        } else {
            assert!(
                r.0.as_ref().is_err_and(|m| m.contains("frame buffer")),
                "{r:?}"
            );
        }
    }
}

/// A reader that serves `data` in pieces of the given sizes, returns
/// `Interrupted` before some reads, and fails once at `fail_at`.
struct Choppy<'a> {
    data: &'a [u8],
    pos: usize,
    pieces: Vec<usize>,
    interrupts: Vec<bool>,
    calls: usize,
    fail_at: Option<usize>,
}

impl Read for Choppy<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        self.calls += 1;
        let k = self.calls % self.interrupts.len();
        if self.interrupts[k] {
            self.interrupts[k] = false;
            return Err(ErrorKind::Interrupted.into());
        }
        if self.fail_at == Some(self.pos) {
            self.fail_at = None;
            return Err(std::io::Error::other("the cable came loose"));
        }
        let end = self.fail_at.filter(|&f| f > self.pos).unwrap_or(usize::MAX);
        let piece = self.pieces[self.calls % self.pieces.len()];
        let n = piece
            .min(buf.len())
            .min(self.data.len() - self.pos)
            .min(end - self.pos);
        buf[..n].copy_from_slice(&self.data[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

/// What a reader of `frame`-byte frames with `skip`-byte trailers returns
/// over `len` bytes that fail at `fail_at`: the frames' offsets, then how
/// the stream ends.
#[derive(Debug, PartialEq)]
enum End {
    Clean,
    Truncated { index: usize, got: usize },
    Failed,
}

fn model(len: usize, frame: usize, skip: usize, fail_at: Option<usize>) -> (Vec<usize>, End) {
    let fails = |from: usize, to: usize| fail_at.is_some_and(|f| f >= from && f < to && f <= len);
    let mut frames = Vec::new();
    let mut pos = 0;
    loop {
        if !frames.is_empty() && skip > 0 {
            if fails(pos, pos + skip) {
                return (frames, End::Failed);
            }
            if len - pos < skip {
                return (frames, End::Clean);
            }
            pos += skip;
        }
        if fails(pos, pos + frame) {
            return (frames, End::Failed);
        }
        match len - pos {
            0 => return (frames, End::Clean),
            got if got < frame => {
                let index = frames.len();
                return (frames, End::Truncated { index, got });
            }
            _ => {}
        }
        frames.push(pos);
        pos += frame;
    }
}

#[test]
fn the_reader_returns_what_the_stream_holds() {
    let _serial = serial();
    let case = (
        1usize..40,
        0usize..12,
        prop::collection::vec(any::<u8>(), 0..300),
        prop::collection::vec(1usize..50, 1..6),
        prop::collection::vec(any::<bool>(), 1..5),
        prop::option::weighted(0.3, 0usize..320),
    );
    proptest!(config(1500), |((frame, skip, data, pieces, interrupts, fail_at) in case)| {
        let (want_frames, want_end) = model(data.len(), frame, skip, fail_at);
        let input = Choppy { data: &data, pos: 0, pieces, interrupts, calls: 0, fail_at };
        let mut r = FrameReader::new(input, frame, skip);
        let mut buf = vec![0u8; frame];
        // Room for every frame up front: only the frames count as held.
        let mut got = Vec::with_capacity(data.len() + 1);
        let (end, peak) = peak_during(|| loop {
            match r.read_into(&mut buf) {
                Ok(true) => got.push(buf.clone()),
                Ok(false) => break End::Clean,
                Err(Error::TruncatedFrame { index, got, want }) => {
                    assert_eq!(want, frame);
                    break End::Truncated { index, got };
                }
                Err(Error::Io { path, .. }) => {
                    assert_eq!(path, std::path::Path::new("-"));
                    break End::Failed;
                }
                Err(other) => panic!("{other:?}"),
            }
        });
        prop_assert!(peak <= (want_frames.len() + 1) * (frame + 64) + SLACK, "{} bytes held", peak);
        prop_assert_eq!(&end, &want_end);
        let want: Vec<Vec<u8>> = want_frames.iter().map(|&p| data[p..p + frame].to_vec()).collect();
        prop_assert_eq!(got, want);
        prop_assert_eq!(r.frames_read(), want_frames.len());
        // After the end, an error or a truncated frame: always Ok(false).
        prop_assert!(matches!(r.read_into(&mut buf), Ok(false)));
    });
}
