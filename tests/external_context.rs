//! Engines on a caller's own OpenCL context and queue: the pipeline runs and
//! matches the CPU engine, and after the engine drops, the caller's handles
//! are still valid and usable, with the caller's reference counts. Needs an
//! OpenCL device (PoCL in CI); without one each test prints "skipped: no
//! OpenCL device" (`FILTERCTL_REQUIRE_OPENCL=1` turns that into a failure).
#![cfg(feature = "opencl")]

mod common;

use clfilter::backend::opencl::{CallerContext, QueueOrigin};
use clfilter::{backend, CacheDir, DynImage, Engine, EngineOptions, Error, Pipeline};
use common::{assert_images, opencl_required, process_cache_dir, random_image, Rng};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};
use opencl3::memory::{Buffer, CL_MEM_READ_WRITE};
use opencl3::types::{cl_command_queue_properties, CL_BLOCKING};
use std::sync::{Mutex, MutexGuard};

/// PoCL lists no devices to threads that initialise it while another one
/// does; each test holds this for its whole run.
static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// The caller's side: a context and an in-order queue made with opencl3.
fn caller_handles(props: cl_command_queue_properties) -> Option<(Context, CommandQueue)> {
    let Some(&id) = get_all_devices(CL_DEVICE_TYPE_ALL)
        .unwrap_or_default()
        .first()
    else {
        assert!(!opencl_required(), "no OpenCL device");
        println!("skipped: no OpenCL device");
        return None;
    };
    let context = Context::from_device(&Device::new(id)).expect("clCreateContext");
    // SAFETY: the device is the context's only device.
    #[allow(deprecated)]
    let queue = unsafe { CommandQueue::create(&context, id, props) }.expect("queue");
    Some((context, queue))
}

fn counts(context: &Context, queue: &CommandQueue) -> (u32, u32) {
    (
        context
            .reference_count()
            .expect("CL_CONTEXT_REFERENCE_COUNT"),
        queue.reference_count().expect("CL_QUEUE_REFERENCE_COUNT"),
    )
}

/// Runs `gaussian=sigma=2,transpose` on `engine` and on the CPU engine.
fn run_and_compare(engine: &Engine) {
    let img = random_image::<f32>(&mut Rng::new(18), 37, 29, 1);
    let p = Pipeline::new(clfilter::pipeline::parse("gaussian=sigma=2,transpose").unwrap());
    let (got, stages) = p.run(engine, img.clone().into()).expect("device run");
    assert!(
        stages.iter().all(|s| s.on_device),
        "a stage left the device: {stages:?}"
    );
    // The device runs Deriche's recursion (within 1e-3 of the largest
    // |input| of the exact blur), the CPU engine the exact FIR at sigma 2
    // (within 1e-5): they agree within the sum of the two bounds.
    let largest = img.rows().flatten().fold(0f32, |m, v| m.max(v.abs()));
    let tol = (1e-3 + 1e-5) * largest;
    let (want, _) = p.run(&Engine::cpu(), img.into()).expect("cpu run");
    match (got, want) {
        (DynImage::F32(g), DynImage::F32(w)) => assert_images(&g, &w, tol, "caller context"),
        _ => panic!("the pipeline changed the sample type"),
    }
}

/// The caller writes and reads back a buffer on its own handles.
fn caller_still_works(context: &Context, queue: &CommandQueue) {
    let data: Vec<u32> = (0..1000).map(|i| i * 7 + 1).collect();
    // SAFETY: no host pointer; the driver allocates.
    let mut buf = unsafe {
        Buffer::<u32>::create(context, CL_MEM_READ_WRITE, data.len(), std::ptr::null_mut())
    }
    .expect("clCreateBuffer on the caller's context");
    let mut back = vec![0u32; data.len()];
    // SAFETY: blocking transfers of exactly the buffer's length.
    unsafe {
        queue
            .enqueue_write_buffer(&mut buf, CL_BLOCKING, 0, &data, &[])
            .expect("write on the caller's queue");
        queue
            .enqueue_read_buffer(&buf, CL_BLOCKING, 0, &mut back, &[])
            .expect("read on the caller's queue");
    }
    queue.finish().expect("clFinish on the caller's queue");
    assert_eq!(back, data);
}

fn options() -> EngineOptions {
    EngineOptions {
        cache: CacheDir::Dir(process_cache_dir()),
        ..EngineOptions::default()
    }
}

/// Builds an engine from `caller`, runs the pipeline, drops the engine and
/// checks that the caller's handles are back to their counts and usable.
fn check(
    context: &Context,
    queue: &CommandQueue,
    adopt: impl Fn() -> CallerContext,
    origin: QueueOrigin,
) {
    let before = counts(context, queue);
    {
        let caller = adopt();
        let engine =
            Engine::on_backend(backend::adopt(caller, &options().cache).unwrap(), options())
                .unwrap();
        let dev = engine.backend().device().expect("an OpenCL backend");
        assert_eq!(dev.queue_origin(), &origin);
        run_and_compare(&engine);
        // A clone shares the device: dropping one keeps the handles alive.
        let clone = engine.clone();
        drop(engine);
        run_and_compare(&clone);
    }
    assert_eq!(
        counts(context, queue),
        before,
        "reference counts after drop"
    );
    caller_still_works(context, queue);
    // A second engine on the same handles loads the programs the first
    // one wrote to the disk cache (keyed by the device, as usual).
    {
        let engine = Engine::on_backend(
            backend::adopt(adopt(), &options().cache).unwrap(),
            options(),
        )
        .unwrap();
        run_and_compare(&engine);
        let (built, loaded, dir) = engine.backend().program_counts().unwrap();
        assert!(
            dir.is_some() && loaded > 0 && built == 0,
            "{built} {loaded} {dir:?}"
        );
    }
    assert_eq!(
        counts(context, queue),
        before,
        "reference counts after drop"
    );
}

#[test]
fn typed_handles_with_profiling_run_on_the_callers_queue() {
    let _serial = serial();
    let Some((context, queue)) = caller_handles(CL_QUEUE_PROFILING_ENABLE) else {
        return;
    };
    let adopt = || CallerContext::from_opencl3(&context, &queue).unwrap();
    check(&context, &queue, adopt, QueueOrigin::Caller);
}

#[test]
fn raw_handles_without_profiling_get_our_own_queue() {
    let _serial = serial();
    let Some((context, queue)) = caller_handles(0) else {
        return;
    };
    // SAFETY: both handles are live opencl3 values for the whole test.
    let adopt = || unsafe { CallerContext::from_raw(context.get(), queue.get()) }.unwrap();
    let reason = "the caller's queue has no profiling (kernel timings need it)".to_string();
    check(
        &context,
        &queue,
        adopt,
        QueueOrigin::OwnOnCallerContext { reason },
    );
}

#[test]
fn null_or_mismatched_handles_are_errors() {
    let _serial = serial();
    let Some((context, queue)) = caller_handles(CL_QUEUE_PROFILING_ENABLE) else {
        return;
    };
    let before = counts(&context, &queue);
    // SAFETY: each handle is null or live.
    let nulls = unsafe {
        [
            CallerContext::from_raw(std::ptr::null_mut(), queue.get()),
            CallerContext::from_raw(context.get(), std::ptr::null_mut()),
        ]
    };
    for r in nulls {
        assert!(matches!(r, Err(Error::OpenCl { .. })), "{r:?}");
    }
    let (other, _q) = caller_handles(0).unwrap();
    let e = CallerContext::from_opencl3(&other, &queue).unwrap_err();
    assert!(e.to_string().contains("another context"), "{e}");
    assert_eq!(counts(&context, &queue), before);
}

#[test]
fn pocl_reports_no_gl_sharing() {
    let _serial = serial();
    let Some((context, queue)) = caller_handles(CL_QUEUE_PROFILING_ENABLE) else {
        return;
    };
    let caller = CallerContext::from_opencl3(&context, &queue).unwrap();
    let engine = Engine::on_backend(
        backend::adopt(caller, &CacheDir::Disabled).unwrap(),
        options(),
    );
    let engine = engine.unwrap();
    let dev = engine.backend().device().unwrap();
    if dev.info().platform.contains("Portable Computing Language") {
        assert!(!dev.reports_gl_sharing());
    }
}

/// Without a current GL context (tests have none), sharing is off and the
/// reason says so.
#[cfg(feature = "gl")]
#[test]
fn no_current_gl_context_means_copy_mode() {
    let (mode, caller) = clfilter::backend::opencl::gl::share_current_gl();
    assert!(caller.is_none());
    match mode {
        clfilter::backend::opencl::gl::InteropMode::Copy { reason } => {
            assert!(reason.contains("no GL context is current"), "{reason}")
        }
        m => panic!("{m:?}"),
    }
}
