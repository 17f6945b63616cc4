//! The fault campaign behind the counts in docs/RELIABILITY.md: it runs the
//! real `filterctl` on generated inputs, mutated files (bit flips,
//! truncations, edited headers, appended bytes), hostile spec strings and
//! injected faults (a full or failing output, outputs that are inputs, a
//! closed stdout or stderr, signals, corrupt caches, non-finite pixels),
//! and counts:
//!
//! - **panics**: "panicked" in the output, or death by a signal the run
//!   did not send;
//! - **inputs lost**: an input file whose bytes changed;
//! - **wrong outputs silently accepted**: exit 0 with an output that
//!   differs from the clean input's output where the fault is detectable
//!   (any change to a PNG, whose chunks and zlib stream carry checksums; a
//!   truncation of any file; a cut raw stream), or an all-NaN result.
//!
//! CI runs it at scale 2 (about 1,200 runs). The documented long run:
//! `FAULT_SCALE=10 cargo test --release --test fault_campaign -- --nocapture`
//! (`FAULT_SEED=N` picks other mutations).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use clfilter::image::raw::RawFormat;
use clfilter::{DynImage, Image};

/// xorshift64*: the campaign is reproducible from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| (self.next() >> 56) as u8).collect()
    }
}

/// The counts, and one line per defect.
#[derive(Default)]
struct Tally {
    inputs: usize,
    faults: usize,
    runs: usize,
    panics: Vec<String>,
    lost: Vec<String>,
    wrong: Vec<String>,
}

struct Campaign {
    dir: tempfile::TempDir,
    rng: Rng,
    scale: usize,
    tally: Tally,
}

/// How a run ended.
struct Ran {
    code: Option<i32>,
    out: Output,
}

impl Campaign {
    fn new() -> Campaign {
        let env = |k: &str, d: u64| {
            std::env::var(k)
                .ok()
                .and_then(|v| v.parse().ok())
                .unwrap_or(d)
        };
        Campaign {
            dir: tempfile::tempdir().unwrap(),
            rng: Rng(env("FAULT_SEED", 0x5eed_f417) | 1),
            scale: env("FAULT_SCALE", 2) as usize,
            tally: Tally::default(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn command(&self) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_filterctl"));
        c.current_dir(self.dir.path())
            .env("FILTERCTL_CACHE_DIR", self.path("cache"))
            .env("FILTERCTL_DEVICE", "cpu")
            .env_remove("FILTERCTL_VARIANT")
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        c
    }

    /// Runs `c`, counts it, and records a panic (`what` names the run).
    fn run(&mut self, mut c: Command, what: &str) -> Ran {
        let out = c.output().expect("filterctl starts");
        self.tally.runs += 1;
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        let code = out.status.code();
        if text.contains("panicked") || code.is_none() || code.is_some_and(|c| c > 2 && c < 128) {
            self.tally
                .panics
                .push(format!("{what}: {:?} {}", out.status, first_line(&text)));
        }
        Ran { code, out }
    }

    /// Runs `apply -f SPEC IN -o OUT` and checks the input survived.
    fn apply(&mut self, spec: &str, input: &Path, out: &Path, what: &str) -> Ran {
        let before = std::fs::read(input).ok();
        let mut c = self.command();
        c.args(["apply", "-f", spec]).arg(input).arg("-o").arg(out);
        let ran = self.run(c, what);
        if std::fs::read(input).ok() != before {
            self.tally
                .lost
                .push(format!("{what}: {} changed", input.display()));
        }
        ran
    }
}

fn first_line(s: &str) -> String {
    s.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .chars()
        .take(200)
        .collect()
}

/// The clean images: every layout and sample type, in every format that holds it.
fn clean_images(rng: &mut Rng) -> Vec<(String, DynImage)> {
    let mut v = Vec::new();
    for (c, layout) in [(1, "gray"), (3, "rgb"), (4, "rgba")] {
        let (w, h) = (13 + rng.below(20), 7 + rng.below(20));
        let u8i = Image::<u8>::from_vec(w, h, c, rng.bytes(w * h * c)).unwrap();
        let u16i = Image::<u16>::from_vec(
            w,
            h,
            c,
            rng.bytes(w * h * c * 2)
                .chunks(2)
                .map(|b| u16::from_le_bytes([b[0], b[1]]))
                .collect(),
        )
        .unwrap();
        let exts: &[&str] = match c {
            1 => &["png", "tif", "pgm", "pam"],
            3 => &["png", "tif", "ppm", "pam"],
            _ => &["png", "tif", "pam"],
        };
        for ext in exts {
            v.push((format!("{layout}8.{ext}"), DynImage::U8(u8i.clone())));
            v.push((format!("{layout}16.{ext}"), DynImage::U16(u16i.clone())));
        }
    }
    let f = Image::<f32>::from_vec(11, 9, 1, (0..99).map(|i| i as f32 * 0.25 - 3.0).collect());
    v.push(("grayf.tif".into(), DynImage::F32(f.unwrap())));
    v
}

/// A JPEG, which our `save` does not write: encoded through `image`.
fn write_jpeg(path: &Path, rng: &mut Rng) {
    let (w, h) = (24u32, 16u32);
    let buf = image::RgbImage::from_raw(w, h, rng.bytes((w * h * 3) as usize)).unwrap();
    image::DynamicImage::ImageRgb8(buf).save(path).unwrap();
}

/// One mutation of `bytes`: its kind (for the report), the result, and
/// whether a decoder can always tell (a cut, or any change under checksums).
fn mutate(bytes: &[u8], rng: &mut Rng, checksummed: bool) -> (String, Vec<u8>, bool) {
    let mut b = bytes.to_vec();
    match rng.below(5) {
        0 => {
            let at = rng.below(b.len());
            b.truncate(at);
            (format!("cut at {at}"), b, true)
        }
        1 | 2 => {
            let n = 1 + rng.below(3);
            for _ in 0..n {
                let at = rng.below(b.len());
                b[at] ^= 1 << rng.below(8);
            }
            (format!("{n} bit flips"), b, checksummed)
        }
        3 => {
            let at = rng.below(b.len().min(64));
            b[at] = b[at].wrapping_add(1 + rng.below(255) as u8);
            (format!("header byte {at} changed"), b, checksummed)
        }
        _ => {
            let n = 1 + rng.below(64);
            let extra = rng.bytes(n);
            b.extend_from_slice(&extra);
            // Trailing bytes after a whole image are harmless: not counted.
            ("bytes appended".into(), b, false)
        }
    }
}

fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in bytes {
        crc ^= b as u32;
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xedb8_8320 & (crc & 1).wrapping_neg());
        }
    }
    !crc
}

/// A PNG with the data of one chunk changed and its CRC made valid again,
/// so only the zlib checksum or the image's size can tell: a changed IDAT
/// byte, or an IHDR claiming other dimensions (a huge one is a "bomb").
fn mutate_png_chunk(bytes: &[u8], rng: &mut Rng) -> Option<(String, Vec<u8>)> {
    let mut b = bytes.to_vec();
    let mut at = 8;
    let mut chunks = Vec::new();
    while at + 12 <= b.len() {
        let len = u32::from_be_bytes(b[at..at + 4].try_into().unwrap()) as usize;
        chunks.push((at, len, b[at + 4..at + 8].to_vec()));
        at += 12 + len;
    }
    let want: &[u8] = if rng.below(2) == 0 { b"IDAT" } else { b"IHDR" };
    let &(start, len, _) = chunks.iter().find(|(_, l, t)| t == want && *l > 0)?;
    let data = start + 8;
    let kind = if want == b"IHDR" {
        let dims = [1u32, 2, 3, 65_535, 1 << 20, 1 << 30][rng.below(6)];
        let field = data + 4 * rng.below(2);
        b[field..field + 4].copy_from_slice(&dims.to_be_bytes());
        format!("IHDR side {dims}, CRC fixed")
    } else {
        let i = data + rng.below(len);
        b[i] ^= 1 << rng.below(8);
        format!("IDAT byte {} flipped, CRC fixed", i - data)
    };
    let crc = crc32(&b[start + 4..data + len]);
    b[data + len..data + len + 4].copy_from_slice(&crc.to_be_bytes());
    Some((kind, b))
}

/// Mutated image files through `apply -f transpose` (exact, so a wrong
/// decode shows in the output).
fn image_files(c: &mut Campaign) {
    let mut files = clean_images(&mut c.rng);
    files.push((
        "photo.jpg".into(),
        DynImage::U8(Image::from_vec(1, 1, 1, vec![0]).unwrap()),
    ));
    for (name, img) in files {
        let clean = c.path(&name);
        if name.ends_with(".jpg") {
            write_jpeg(&clean, &mut c.rng);
        } else {
            clfilter::image::save(&img, &clean).unwrap();
        }
        c.tally.inputs += 1;
        let ext = if name.contains("f.") { "tif" } else { "png" };
        let want = c.path(&format!("want-{name}.{ext}"));
        let ran = c.apply("transpose", &clean, &want, &name);
        assert_eq!(
            ran.code,
            Some(0),
            "clean {name}: {}",
            first_line(&String::from_utf8_lossy(&ran.out.stderr))
        );
        let want = clfilter::image::load(&want).unwrap();
        let bytes = std::fs::read(&clean).unwrap();
        for i in 0..12 * c.scale {
            let png = name.ends_with(".png");
            let (kind, mutant, detectable) = match png && i % 3 == 0 {
                true => match mutate_png_chunk(&bytes, &mut c.rng) {
                    Some((kind, b)) => (kind, b, true),
                    None => mutate(&bytes, &mut c.rng, png),
                },
                false => mutate(&bytes, &mut c.rng, png),
            };
            let input = c.path(&format!("m{i}-{name}"));
            std::fs::write(&input, &mutant).unwrap();
            c.tally.inputs += 1;
            c.tally.faults += 1;
            let out = c.path(&format!("m{i}-out.{ext}"));
            let what = format!("{name} {kind}");
            let ran = c.apply("transpose", &input, &out, &what);
            if ran.code == Some(0) && detectable {
                match clfilter::image::load(&out) {
                    Ok(got) if got == want => {}
                    _ => c
                        .tally
                        .wrong
                        .push(format!("{what}: exit 0 with a different image")),
                }
            }
            if ran.code != Some(0) && out.exists() {
                c.tally
                    .wrong
                    .push(format!("{what}: failed, yet {} exists", out.display()));
            }
            let _ = std::fs::remove_file(&input);
            let _ = std::fs::remove_file(&out);
        }
    }
}

/// Cut raw streams in every format: the whole frames before the cut, no
/// more, in the output, and exit 1.
fn raw_streams(c: &mut Campaign) {
    for format in RawFormat::all() {
        let (w, h) = (8, 6);
        let frame = format.frame_bytes(w, h).unwrap();
        let input = c.path("stream.raw");
        let data = c.rng.bytes(4 * frame);
        std::fs::write(&input, &data).unwrap();
        c.tally.inputs += 1;
        let spec = if format.pattern.is_some() {
            "demosaic,gaussian=sigma=1"
        } else {
            "gaussian=sigma=1"
        };
        let stream = |c: &Campaign, input: &Path, out: &str| {
            let mut cmd = c.command();
            cmd.args([
                "stream",
                "-f",
                spec,
                "--size",
                "8x6",
                "--format",
                &format.to_string(),
            ])
            .arg(input)
            .args(["-o", out]);
            cmd
        };
        let cmd = stream(c, &input, "clean.raw");
        let ran = c.run(cmd, &format.to_string());
        assert_eq!(
            ran.code,
            Some(0),
            "{format}: {}",
            String::from_utf8_lossy(&ran.out.stderr)
        );
        let clean = std::fs::read(c.path("clean.raw")).unwrap();
        let out_frame = clean.len() / 4;
        for i in 0..3 * c.scale {
            let cut = 1 + c.rng.below(4 * frame - 1);
            let cut_file = c.path("cut.raw");
            std::fs::write(&cut_file, &data[..cut]).unwrap();
            c.tally.inputs += 1;
            c.tally.faults += 1;
            let what = format!("{format} cut at {cut} (run {i})");
            let cmd = stream(c, &cut_file, "out.raw");
            let ran = c.run(cmd, &what);
            let got = std::fs::read(c.path("out.raw")).unwrap_or_default();
            let whole = cut / frame;
            let ok_code = if cut.is_multiple_of(frame) { 0 } else { 1 };
            if ran.code != Some(ok_code)
                || got.len() != whole * out_frame
                || got[..] != clean[..got.len()]
            {
                c.tally.wrong.push(format!(
                    "{what}: exit {:?}, {} bytes out, want {} whole frames",
                    ran.code,
                    got.len(),
                    whole
                ));
            }
            let _ = std::fs::remove_file(c.path("out.raw"));
        }
    }
}

/// Random spec strings from spec-like tokens: no panic, exit 0, 1 or 2,
/// and an output that loads whenever the exit is 0.
fn hostile_specs(c: &mut Campaign) {
    const TOKENS: &[&str] = &[
        "gaussian",
        "transpose",
        "minmax",
        "normalize",
        "demosaic",
        "colormap",
        "convert",
        "sigma",
        "sigma_x",
        "out",
        "map",
        "method",
        "pattern",
        "variant",
        "low",
        "high",
        "=",
        "=",
        ":",
        ",",
        ",",
        "1",
        "2.5",
        "0",
        "-1",
        "nan",
        "inf",
        "-inf",
        "1e39",
        "1e-45",
        "u8",
        "f32",
        "turbo",
        "rggb",
        "mhc",
        "cpu",
        "99999999999999999999",
        "%",
        " ",
        "",
        "\u{0}",
        "é",
        "x",
    ];
    let png = c.path("spec-in.png");
    let img = Image::<u8>::from_vec(9, 8, 3, c.rng.bytes(9 * 8 * 3)).unwrap();
    clfilter::image::save(&DynImage::U8(img), &png).unwrap();
    for i in 0..150 * c.scale {
        let n = 1 + c.rng.below(9);
        let spec: String = (0..n).map(|_| TOKENS[c.rng.below(TOKENS.len())]).collect();
        if spec.contains('\u{0}') {
            continue; // not passable as an argument
        }
        c.tally.inputs += 1;
        let out = c.path(&format!("spec{i}.tif"));
        let ran = c.apply(&spec, &png, &out, &format!("spec {spec:?}"));
        if ran.code == Some(0)
            && !spec_ends_in_minmax(&spec)
            && clfilter::image::load(&out).is_err()
        {
            c.tally
                .wrong
                .push(format!("spec {spec:?}: exit 0 without a readable output"));
        }
        let _ = std::fs::remove_file(&out);
    }
}

fn spec_ends_in_minmax(spec: &str) -> bool {
    spec.rsplit(',')
        .next()
        .is_some_and(|s| s.trim().starts_with("minmax"))
}

/// Random argument lists for every subcommand, from each one's options and
/// hostile values: no panic, and exit 0, 1 or 2.
fn hostile_args(c: &mut Campaign) {
    const VALUES: &[&str] = &[
        "0",
        "1",
        "-1",
        "3",
        "8x8",
        "0x0",
        "7x5",
        "99999999999x99999999999",
        "nan",
        "inf",
        "1e39",
        "-",
        "",
        "x",
        "bayer_rggb12p",
        "mono16",
        "f32",
        "u8",
        "4",
        "%d.png",
        "%0999d.png",
        "/dev/null",
        "/dev/full",
        "missing",
        ".",
        "gaussian",
        "transpose",
        "cpu",
        "auto",
    ];
    let commands: &[(&str, &[&str])] = &[
        (
            "stream",
            &[
                "-f",
                "--size",
                "--format",
                "-o",
                "--frames",
                "--skip",
                "--synthetic",
                "--in-flight",
                "--compare-transfer",
                "--json",
            ],
        ),
        (
            "apply",
            &[
                "-f", "--size", "--format", "-o", "--ext", "--report", "--json",
            ],
        ),
        (
            "bench",
            &[
                "--ops",
                "--size",
                "--type",
                "--channels",
                "--iters",
                "--sigma",
                "--method",
                "--no-cpu",
                "--json",
            ],
        ),
        (
            "tune",
            &["--ops", "--sizes", "--budget", "--json", "--show", "--type"],
        ),
        ("variants", &["--json"]),
        ("devices", &["--json"]),
    ];
    std::fs::write(c.path("args.raw"), c.rng.bytes(256)).unwrap();
    for _ in 0..60 * c.scale {
        let (name, opts) = commands[c.rng.below(commands.len())];
        let mut args = vec![name.to_string()];
        for _ in 0..c.rng.below(6) {
            args.push(opts[c.rng.below(opts.len())].to_string());
            if c.rng.below(4) > 0 {
                args.push(VALUES[c.rng.below(VALUES.len())].to_string());
            }
        }
        // Bound the work a valid combination may ask for.
        if name == "bench" || name == "tune" {
            args.extend(["--size", "8x8"].map(String::from));
            if name == "tune" {
                args.extend(["--budget", "1"].map(String::from));
            }
        }
        if name == "stream" && !args.iter().any(|a| a == "--synthetic") {
            args.push("args.raw".into());
        }
        c.tally.inputs += 1;
        let mut cmd = c.command();
        cmd.args(&args);
        let ran = c.run(cmd, &format!("{args:?}"));
        if !matches!(ran.code, Some(0..=2)) {
            c.tally.wrong.push(format!("{args:?}: exit {:?}", ran.code));
        }
    }
}

/// Non-finite pixels, and finite ones near f32's limit, through an
/// operation that spreads them (the IIR Gaussian): never exit 0 with
/// non-finite output.
fn nonfinite(c: &mut Campaign) {
    for (i, bad) in [f32::NAN, f32::INFINITY, f32::NEG_INFINITY]
        .into_iter()
        .enumerate()
    {
        let mut px: Vec<f32> = (0..15 * 11).map(|v| v as f32 / 7.0).collect();
        let at = c.rng.below(px.len());
        px[at] = bad;
        let input = c.path(&format!("nan{i}.tif"));
        clfilter::image::save(
            &DynImage::F32(Image::from_vec(15, 11, 1, px).unwrap()),
            &input,
        )
        .unwrap();
        c.tally.inputs += 1;
        c.tally.faults += 1;
        let out = c.path(&format!("nan{i}-out.tif"));
        let ran = c.apply("gaussian=sigma=2", &input, &out, &format!("{bad} pixel"));
        if ran.code == Some(0) {
            let finite = match clfilter::image::load(&out) {
                Ok(DynImage::F32(img)) => {
                    (0..img.height()).all(|y| img.row(y).iter().all(|v| v.is_finite()))
                }
                _ => false,
            };
            if !finite {
                c.tally
                    .wrong
                    .push(format!("{bad} pixel: exit 0 with non-finite output"));
            }
        }
    }
}

/// Injected output faults: a full device, outputs that are inputs by other
/// names, a closed stdout and stderr, and corrupt caches.
fn output_faults(c: &mut Campaign) {
    let png = c.path("f-in.png");
    let img = Image::<u8>::from_vec(10, 10, 3, c.rng.bytes(300)).unwrap();
    clfilter::image::save(&DynImage::U8(img), &png).unwrap();
    std::fs::create_dir_all(c.path("sub")).unwrap();
    c.tally.inputs += 1;
    for out in [
        "f-in.png",
        "./f-in.png",
        "sub/../f-in.png",
        "link.png",
        "hard.png",
    ] {
        #[cfg(unix)]
        {
            let _ = std::os::unix::fs::symlink("f-in.png", c.path("link.png"));
            let _ = std::fs::hard_link(&png, c.path("hard.png"));
        }
        c.tally.faults += 1;
        let ran = c.apply(
            "gaussian=sigma=1",
            &png,
            Path::new(out),
            &format!("-o {out}"),
        );
        if ran.code != Some(2) {
            c.tally
                .wrong
                .push(format!("-o {out} (the input): exit {:?}", ran.code));
        }
    }
    let raw = c.path("f-in.raw");
    std::fs::write(&raw, c.rng.bytes(64 * 3)).unwrap();
    for (out, pipe) in [
        ("/dev/full", ""),
        ("-", " 2>&-"),
        ("-", " >&-"),
        ("-", " | head -c 10"),
    ] {
        c.tally.faults += 1;
        let mut cmd = Command::new("sh");
        cmd.current_dir(c.dir.path())
            .env("FILTERCTL_CACHE_DIR", c.path("cache"))
            .env("FILTERCTL_DEVICE", "cpu")
            .arg("-c")
            .arg(format!(
                "'{}' stream -f demosaic --size 8x8 --format bayer_rggb8 f-in.raw -o {out}{pipe} > /dev/null",
                env!("CARGO_BIN_EXE_filterctl")
            ));
        c.run(cmd, &format!("stream -o {out}{pipe}"));
    }
    for garbage in [&b"{not json"[..], b"", &[0xff; 4096]] {
        std::fs::create_dir_all(c.path("cache")).unwrap();
        std::fs::write(c.path("cache/tuning.json"), garbage).unwrap();
        c.tally.faults += 1;
        let ran = c.apply(
            "gaussian=sigma=1",
            &png,
            &c.path("cached.png"),
            "corrupt tuning.json",
        );
        if ran.code != Some(0) {
            c.tally
                .wrong
                .push(format!("corrupt tuning.json: exit {:?}", ran.code));
        }
    }
}

#[test]
fn fault_campaign() {
    let mut c = Campaign::new();
    image_files(&mut c);
    raw_streams(&mut c);
    hostile_specs(&mut c);
    hostile_args(&mut c);
    nonfinite(&mut c);
    output_faults(&mut c);
    let t = &c.tally;
    let mut report = String::new();
    let _ = writeln!(report, "| inputs tried | faults injected | runs | panics | inputs lost | wrong outputs silently accepted |");
    let _ = writeln!(report, "|---|---|---|---|---|---|");
    let _ = writeln!(
        report,
        "| {} | {} | {} | {} | {} | {} |",
        t.inputs,
        t.faults,
        t.runs,
        t.panics.len(),
        t.lost.len(),
        t.wrong.len()
    );
    for line in t.panics.iter().chain(&t.lost).chain(&t.wrong) {
        let _ = writeln!(report, "- {line}");
    }
    println!("fault campaign (scale {}):\n{report}", c.scale);
    assert!(
        t.panics.is_empty() && t.lost.is_empty() && t.wrong.is_empty(),
        "{report}"
    );
}
