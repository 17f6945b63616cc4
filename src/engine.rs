//! The [`Engine`]: a backend plus the rules for picking variants.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use crate::backend::{self, Backend, CacheDir, DeviceSelector};
use crate::dispatch::{self, store::Mode, Call, Tuning};
use crate::error::{Error, Result};
use crate::image::NonFinite;
use crate::ops::{Dispatch, OpSpec, Programs, RunCl, RunReport, Shape, VariantSpec, CPU};

/// How to set up an [`Engine`].
#[derive(Debug, Clone, Default)]
pub struct EngineOptions {
    /// Which device to use.
    pub device: DeviceSelector,
    /// Where to cache program binaries.
    pub cache: CacheDir,
    /// Read kernel sources from this folder instead of the embedded copies.
    pub cl_dir: Option<PathBuf>,
    /// Force a variant: `NAME` for every operation, or `op=NAME[,op=NAME...]`.
    pub variant: Option<String>,
    /// How long one kernel dispatch may run before launches are split
    /// (watchdog-safe dispatch; docs/RELIABILITY.md).
    pub dispatch_limit: crate::backend::DispatchLimit,
    /// Test-only: extra table entries `(op, variant)` that the engine, the
    /// tuner and forced dispatch treat as part of `op`'s table (not of its
    /// default order), so tests can inject a deliberately broken variant.
    #[doc(hidden)]
    pub extra_variants: Vec<(&'static str, &'static VariantSpec)>,
}

impl EngineOptions {
    /// Options from `FILTERCTL_DEVICE`, `FILTERCTL_CL_DIR`, `FILTERCTL_VARIANT`
    /// and `FILTERCTL_MAX_DISPATCH_MS` (the cache folder follows
    /// `FILTERCTL_CACHE_DIR` through [`CacheDir::Default`]).
    ///
    /// ```
    /// // FILTERCTL_DEVICE=cpu|gpu|opencl|auto|P:D|NAME, FILTERCTL_VARIANT, ...
    /// let engine = clfilter::Engine::from_env()?;
    /// println!("running on {}", engine.backend().describe());
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    pub fn from_env() -> Result<Self> {
        let non_empty = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        Ok(EngineOptions {
            device: DeviceSelector::from_env()?,
            cache: CacheDir::Default,
            cl_dir: non_empty("FILTERCTL_CL_DIR").map(PathBuf::from),
            variant: non_empty("FILTERCTL_VARIANT"),
            dispatch_limit: crate::backend::DispatchLimit::from_env()?,
            extra_variants: Vec::new(),
        })
    }
}

/// Runs operations on one backend, choosing a variant for each call and
/// falling back (next variant, then the CPU) when a device variant fails.
///
/// Cloning is cheap; clones share the device and its program cache.
#[derive(Clone, Debug)]
pub struct Engine {
    backend: Backend,
    programs: Programs,
    /// (operation or `None` for all, variant name); later entries win.
    forced: Vec<(Option<String>, String)>,
    /// Test-only table entries (see [`EngineOptions::extra_variants`]).
    extra: Arc<Vec<(&'static str, &'static VariantSpec)>>,
    /// The tuning entries valid for this device and these kernels.
    tuning: Arc<Tuning>,
    /// What operations that spread NaN and infinities do with them.
    nonfinite: NonFinite,
    /// The caller (a pipeline's host path) has bounded its inputs: they are
    /// finite and within range, so the non-finite scan is skipped.
    inputs_bounded: bool,
    /// `auto` kept an OpenCL CPU device because tuning measured it faster
    /// somewhere: requests tuning did not measure run the rayon path first.
    cpu_first_untuned: bool,
}

/// Parses and checks a variant override against the operation tables.
fn parse_forced(spec: &str) -> Result<Vec<(Option<String>, String)>> {
    let ops = crate::ops::OPS;
    spec.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|item| match item.split_once('=') {
            Some((op, v)) if !op.trim().is_empty() && !v.trim().is_empty() => {
                let (op, v) = (op.trim(), v.trim());
                let spec = ops.iter().find(|o| o.name == op).ok_or_else(|| {
                    Error::arg(format!(
                        "variant override '{item}': no operation '{op}' (known: {})",
                        ops.iter().map(|o| o.name).collect::<Vec<_>>().join(", ")
                    ))
                })?;
                if !spec.names().contains(&v) {
                    return Err(Error::UnknownVariant {
                        op: op.into(),
                        variant: v.into(),
                        known: spec.names().join(", "),
                    });
                }
                Ok((Some(op.to_string()), v.to_string()))
            }
            Some(_) => Err(Error::arg(format!(
                "bad variant override '{item}'; use NAME or op=NAME"
            ))),
            None => {
                if !ops.iter().any(|o| o.names().contains(&item)) {
                    return Err(Error::arg(format!(
                        "no operation has a variant '{item}'; known: {}",
                        ops.iter()
                            .map(|o| format!("{}: {}", o.name, o.names().join(" ")))
                            .collect::<Vec<_>>()
                            .join("; ")
                    )));
                }
                Ok((None, item.to_string()))
            }
        })
        .collect::<Result<Vec<_>>>()
        .and_then(no_repeats)
}

/// Refuses an override that names the same operation twice (`gaussian=a,
/// gaussian=b`) or the same bare variant twice: which one was meant?
/// A bare name and an `op=NAME` for the same operation are fine: the
/// operation's own entry wins.
fn no_repeats(forced: Vec<(Option<String>, String)>) -> Result<Vec<(Option<String>, String)>> {
    for (i, (op, v)) in forced.iter().enumerate() {
        if let Some((_, v2)) = forced[..i].iter().find(|(o, v2)| match (o, op) {
            (Some(a), Some(b)) => a == b,
            (None, None) => v2 == v,
            _ => false,
        }) {
            return Err(Error::arg(match op {
                Some(op) => format!(
                    "variant override names operation '{op}' twice ({op}={v2} and {op}={v}); keep one"
                ),
                None => format!("variant override names '{v}' twice; keep one"),
            }));
        }
    }
    Ok(forced)
}

/// Why `auto` can take the rayon path without listing the OpenCL devices
/// (which loads every installed driver): the last listing recorded in the
/// cache folder, with the drivers unchanged since, found no usable device,
/// or an OpenCL CPU device for which the tuning file has no entry won end
/// to end by a device variant (entries of stale kernels count too; once the
/// device is open the engine sorts those out). `None`: list them.
fn rayon_suffices(cache: &CacheDir) -> Option<String> {
    let dir = cache.resolve()?;
    let why = match backend::recorded_auto(cache)? {
        None => "no usable OpenCL device".to_string(),
        Some(info) if info.kind == backend::DeviceKind::Cpu => {
            let key = dispatch::key::fingerprint(&info);
            let tuning = dispatch::store::load(&dispatch::store::path_in(&dir));
            let proven = tuning
                .entries
                .iter()
                .any(|e| e.key.device == key && e.e2e_winner.as_deref().is_some_and(|w| w != CPU));
            if proven {
                return None;
            }
            format!(
                "the OpenCL device is {}, a CPU device that tuning has not measured faster",
                info.label()
            )
        }
        Some(_) => return None,
    };
    Some(format!(
        "{why} when last listed ({}; `filterctl devices` lists again, `--device opencl` \
         uses an OpenCL device)",
        dir.join("devices.json").display()
    ))
}

impl Engine {
    /// Opens the backend the options select. Under `auto`, an OpenCL CPU
    /// device gives way to the rayon path unless a variant is forced or the
    /// tuning cache measured the device faster end to end for some request;
    /// when it stays, requests the tuning did not measure still run the
    /// rayon path first (see [`DeviceSelector::Auto`]).
    ///
    /// ```
    /// use clfilter::{DeviceSelector, Engine, EngineOptions};
    /// let opts = EngineOptions { device: DeviceSelector::Cpu, ..Default::default() };
    /// let engine = Engine::new(opts)?;
    /// assert!(engine.backend().device().is_none()); // the rayon path
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    pub fn new(opts: EngineOptions) -> Result<Self> {
        let auto = opts.device == DeviceSelector::Auto;
        let device_forced = match &opts.variant {
            Some(v) => parse_forced(v)?.iter().any(|(_, v)| v != CPU),
            None => false,
        };
        if auto && !device_forced {
            if let Some(why) = rayon_suffices(&opts.cache) {
                log::info!("auto: the rayon CPU path without listing OpenCL devices: {why}");
                return Self::on_backend(Backend::Cpu, opts);
            }
        }
        let backend = backend::select(&opts.device, &opts.cache)?;
        let mut engine = Self::on_backend(backend, opts.clone())?;
        let cpu_device = engine
            .backend
            .device_info()
            .is_some_and(|i| i.kind == backend::DeviceKind::Cpu);
        if !auto || !cpu_device || device_forced {
            return Ok(engine);
        }
        if engine.tuning.proves_device() {
            engine.cpu_first_untuned = true;
            return Ok(engine);
        }
        log::info!(
            "auto: the rayon CPU path, not {} (an OpenCL CPU device that tuning has not \
             measured faster; `filterctl tune` measures it, `--device opencl` uses it)",
            engine.backend.describe()
        );
        Self::on_backend(Backend::Cpu, opts)
    }

    /// An engine on a backend opened elsewhere, such as one on an
    /// application's OpenCL context and queue (`backend::adopt`).
    /// `opts.device` is not used; the other options apply as in
    /// [`Engine::new`], and the tuning cache is keyed by the backend's device.
    ///
    /// ```
    /// use clfilter::{Backend, Engine, EngineOptions};
    /// // An application's OpenCL context comes in through `backend::adopt`; any
    /// // opened backend works the same way.
    /// let engine = Engine::on_backend(Backend::Cpu, EngineOptions::default())?;
    /// assert_eq!(engine.backend().describe(), Backend::Cpu.describe());
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    pub fn on_backend(backend: Backend, opts: EngineOptions) -> Result<Self> {
        let forced = match &opts.variant {
            Some(v) => parse_forced(v)?,
            None => Vec::new(),
        };
        backend.set_dispatch_limit(opts.dispatch_limit);
        let mut engine = Engine {
            backend,
            programs: Programs::new(opts.cl_dir, crate::ops::all_sources()),
            forced,
            extra: Arc::new(opts.extra_variants),
            tuning: Arc::new(Tuning::inactive()),
            nonfinite: NonFinite::default(),
            inputs_bounded: false,
            cpu_first_untuned: false,
        };
        if let Some(info) = engine.backend.device_info() {
            let checksums = engine.checksums();
            let file = opts.cache.resolve().map(|d| dispatch::store::path_in(&d));
            engine.tuning = Arc::new(Tuning::open(
                file,
                dispatch::key::fingerprint(info),
                checksums,
            ));
        }
        Ok(engine)
    }

    /// Per operation, FNV-1a (hex) over its variant names, files, options
    /// and work-group shapes and over every kernel source (as this engine
    /// reads them): what a tuning entry must match to be valid. Sources are
    /// hashed whole because variants call each other's kernels (gaussian
    /// uses transpose's). An operation whose sources cannot be read is left out.
    fn checksums(&self) -> HashMap<String, String> {
        let dir = self.programs.cl_dir();
        let mut sources = String::new();
        let embedded = self.programs.sources();
        for (file, _) in embedded {
            match crate::kernels::one(file, dir, embedded) {
                Ok(text) => {
                    sources.push_str(file);
                    sources.push('\n');
                    sources.push_str(&text);
                }
                Err(e) => {
                    log::warn!("kernel source {file}: {e}; tuning results will not be used");
                    return HashMap::new();
                }
            }
        }
        crate::ops::OPS
            .iter()
            .map(|op| {
                let mut text = format!("{} {}\n", op.name, env!("CARGO_PKG_VERSION"));
                for v in self.variants(op) {
                    text.push_str(&format!(
                        "{} {:?} {} {:?}\n",
                        v.name, v.files, v.options, v.local
                    ));
                }
                text.push_str(&sources);
                (
                    op.name.to_string(),
                    format!("{:016x}", crate::backend::cache::fnv1a(text.as_bytes())),
                )
            })
            .collect()
    }

    /// `op`'s OpenCL variants: its table, plus any test-only extra entries.
    pub fn variants(&self, op: &OpSpec) -> Vec<&'static VariantSpec> {
        op.variants
            .iter()
            .chain(
                self.extra
                    .iter()
                    .filter(|(o, _)| *o == op.name)
                    .map(|(_, v)| *v),
            )
            .collect()
    }

    /// `op`'s OpenCL variant called `name` (see [`Engine::variants`]).
    pub fn variant(&self, op: &OpSpec, name: &str) -> Option<&'static VariantSpec> {
        op.variant(name).or_else(|| {
            self.extra
                .iter()
                .find(|(o, v)| *o == op.name && v.name == name)
                .map(|(_, v)| *v)
        })
    }

    /// How this engine builds kernels (sources embedded or from its folder).
    pub fn programs(&self) -> &Programs {
        &self.programs
    }

    /// The tuning entries this engine uses (see [`crate::tune`]).
    pub fn tuning(&self) -> &Tuning {
        &self.tuning
    }

    /// The variants the tuning entries rank for a request, fastest first
    /// (`None` when untuned): what [`Engine`] calls use with
    /// [`Mode::E2e`], and what device-resident callers use with [`Mode::Kernel`].
    pub fn tuned_order(&self, op: &OpSpec, shape: &Shape, mode: Mode) -> Option<Vec<String>> {
        self.tuning
            .plan(op.name, shape, mode)
            .map(|order| order.to_vec())
    }

    /// An engine configured from the environment (see [`EngineOptions::from_env`]).
    pub fn from_env() -> Result<Self> {
        Self::new(EngineOptions::from_env()?)
    }

    /// An engine on the rayon CPU backend.
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// let img = clfilter::Image::<f32>::new(4, 3, 1)?;
    /// let t = clfilter::Engine::cpu().transpose(&img)?;
    /// assert_eq!((t.width(), t.height()), (3, 4));
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    pub fn cpu() -> Self {
        Engine {
            backend: Backend::Cpu,
            programs: Programs::new(None, crate::ops::all_sources()),
            forced: Vec::new(),
            extra: Arc::new(Vec::new()),
            tuning: Arc::new(Tuning::inactive()),
            nonfinite: NonFinite::default(),
            inputs_bounded: false,
            cpu_first_untuned: false,
        }
    }

    /// The backend in use.
    pub fn backend(&self) -> &Backend {
        &self.backend
    }

    /// A copy of this engine that forces `variant` for `op` (or for every
    /// operation when `op` is `None`).
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::ops::gaussian::GaussianParams;
    /// let engine = clfilter::Engine::cpu().with_variant(Some("gaussian"), "cpu");
    /// let img = clfilter::Image::<u8>::new(8, 8, 1)?;
    /// let (_, report) = engine.gaussian_report(&img, &GaussianParams::new(1.0))?;
    /// assert_eq!(report.variant, "cpu");
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    pub fn with_variant(&self, op: Option<&str>, variant: &str) -> Self {
        let mut e = self.clone();
        e.forced.push((op.map(str::to_string), variant.to_string()));
        e
    }

    /// What operations that spread NaN and infinities over their result
    /// (the Gaussian) do when an f32 input holds some: refuse it with
    /// [`Error::NonFinite`] (the default), or replace them first. Pipeline
    /// stages with their own `nonfinite=` use theirs.
    pub fn set_nonfinite(&mut self, policy: NonFinite) {
        self.nonfinite = policy;
    }

    /// A copy of this engine with [`Engine::set_nonfinite`] `policy`.
    ///
    /// ```
    /// use clfilter::prelude::*;
    /// use clfilter::{ops::gaussian::GaussianParams, Engine, Image, NonFinite};
    /// let img = Image::<f32>::from_fn(5, 5, 1, |x, y, _| if x == y { f32::NAN } else { 1.0 })?;
    /// let p = GaussianParams::new(1.0);
    /// assert!(Engine::cpu().gaussian(&img, &p).is_err()); // Error::NonFinite
    /// let out = Engine::cpu().with_nonfinite(NonFinite::Zero).gaussian(&img, &p)?;
    /// assert!(out.rows().flatten().all(|v| v.is_finite()));
    /// # Ok::<(), clfilter::Error>(())
    /// ```
    pub fn with_nonfinite(&self, policy: NonFinite) -> Self {
        let mut e = self.clone();
        e.nonfinite = policy;
        e
    }

    /// Whether requests the tuning did not measure run the rayon path
    /// first: `auto` kept an OpenCL CPU device that tuning measured faster
    /// for other requests ([`Engine::new`]).
    pub fn cpu_first_untuned(&self) -> bool {
        self.cpu_first_untuned
    }

    /// The policy set by [`Engine::set_nonfinite`].
    pub fn nonfinite(&self) -> NonFinite {
        self.nonfinite
    }

    /// Marks the inputs of the next calls as bounded (finite, within
    /// [`crate::image::finite::MAX_MAGNITUDE`]), which the pipeline's host
    /// path proves from its stages' bounds: no scan is needed.
    pub(crate) fn set_inputs_bounded(&mut self, bounded: bool) {
        self.inputs_bounded = bounded;
    }

    /// The variant forced for `op`: the last `op=NAME` entry, or the last
    /// bare `NAME` that `op`'s table knows (a bare name skips other operations,
    /// so `--variant local_x4` does not break the `minmax` inside `normalize`).
    pub fn forced(&self, op: &OpSpec) -> Option<&str> {
        self.forced
            .iter()
            .rev()
            .find(|(o, v)| match o {
                Some(o) => o == op.name,
                None => op.names().contains(&v.as_str()),
            })
            .map(|(_, v)| v.as_str())
    }

    /// The program text for kernel files: `common.cl` plus the files,
    /// embedded or read from the engine's kernel folder.
    pub fn source(&self, files: &[&str]) -> Result<String> {
        self.programs.source(files)
    }
}

impl Dispatch for Engine {
    fn programs(&self) -> &Programs {
        Engine::programs(self)
    }

    fn run_variants(
        &self,
        op: &'static OpSpec,
        shape: &Shape,
        run_cl: &mut RunCl<'_>,
        run_cpu: &mut dyn FnMut() -> Result<()>,
    ) -> Result<RunReport> {
        dispatch::run(self, op, shape, Call::Host { run_cpu }, run_cl)
    }

    fn run_on_device(
        &self,
        op: &'static OpSpec,
        stage_forced: Option<&str>,
        logical: &Shape,
        working: &Shape,
        run_cl: &mut RunCl<'_>,
    ) -> Result<RunReport> {
        let call = Call::Device {
            stage_forced,
            logical,
        };
        dispatch::run(self, op, working, call, run_cl)
    }

    fn forcing(&self, op: &'static str, variant: &str) -> Box<dyn Dispatch + '_> {
        Box::new(self.with_variant(Some(op), variant))
    }

    fn nonfinite(&self) -> NonFinite {
        self.nonfinite
    }

    fn inputs_bounded(&self) -> bool {
        self.inputs_bounded
    }
}
