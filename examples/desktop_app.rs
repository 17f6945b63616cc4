//! A desktop app that owns its window, its GL context and its OpenCL
//! context and queue, and calls clfilter once per frame: the shape to copy
//! into an app (docs/DESKTOP.md).
//!
//! ```text
//! cargo run --release --features gl --example desktop_app [IMAGE] [FRAMES]
//! ```
//!
//! Without `IMAGE` it animates a generated test card. Each frame it blurs
//! the picture with a sigma that breathes between 0.5 and 8 and shows it
//! through one GL texture, in one of the two interop modes:
//! - **shared**, where the driver offers an OpenCL context that shares
//!   with the window's GL context: the engine runs on that context and
//!   writes the texture itself (`Pipeline::run_into_gl`), nothing crosses
//!   the host;
//! - **copy** otherwise: the engine runs on the app's own OpenCL context
//!   and queue, the device converts the result to RGBA8
//!   (`Pipeline::run_display`), and the app uploads it through a
//!   pixel-buffer object.
//!
//! The title shows the mode and the frame rate. With `FRAMES` it exits
//! after that many frames (for scripts and CI) and prints them, with the
//! mode.

use std::error::Error;
use std::time::Instant;

use clfilter::backend::opencl::gl::{share_current_gl, GlTexture, InteropMode};
use clfilter::backend::opencl::CallerContext;
use clfilter::image::display::{DisplayFormat, DisplayFrame};
use clfilter::pipeline::{Input, Pipeline};
use clfilter::{backend, CacheDir, DynImage, Engine, EngineOptions, Image};
use glium::backend::glutin::SimpleWindowBuilder;
use glium::glutin::surface::WindowSurface;
use glium::index::{NoIndices, PrimitiveType};
use glium::program::ProgramCreationInput;
use glium::texture::pixel_buffer::PixelBuffer;
use glium::texture::{MipmapsOption, Texture2d, UncompressedFloatFormat};
use glium::uniforms::MagnifySamplerFilter;
use glium::vertex::EmptyVertexAttributes;
use glium::winit::application::ApplicationHandler;
use glium::winit::event::WindowEvent;
use glium::winit::event_loop::{ActiveEventLoop, EventLoop};
use glium::winit::window::{Window, WindowId};
use glium::{Display, GlObject, Program, Surface};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};

/// `GL_TEXTURE_2D`.
const GL_TEXTURE_2D: u32 = 0x0DE1;

/// A quad over the window from `gl_VertexID`; the texture's first row at
/// the top (GL counts rows from the bottom).
const VERTEX: &str = "#version 140
out vec2 uv;
void main() {
    vec2 p = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
    uv = vec2(p.x, 1.0 - p.y);
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}";

const FRAGMENT: &str = "#version 140
in vec2 uv;
out vec4 color;
uniform sampler2D image;
void main() { color = texture(image, uv); }";

/// How frames reach the texture.
enum Mode {
    /// The engine's device writes the texture (a context shared with GL).
    Shared(GlTexture),
    /// The app uploads RGBA8 frames through this pixel buffer; the app's
    /// own OpenCL objects stay alive beside the engine, which holds its
    /// own references to them.
    Copy {
        pbo: Box<PixelBuffer<(u8, u8, u8, u8)>>,
        _app_cl: (Context, CommandQueue),
    },
}

/// The window, its GL objects, the texture on show and the engine.
struct Gfx {
    window: Window,
    display: Display<WindowSurface>,
    program: Program,
    texture: Texture2d,
    engine: Engine,
    mode: Mode,
    /// Why sharing is off, for the title (copy mode).
    why_copy: Option<String>,
}

/// What the app keeps between frames.
struct App {
    picture: DynImage,
    frames_left: Option<usize>,
    shown: usize,
    start: Instant,
    gfx: Option<Gfx>,
}

/// The app's OpenCL context and an in-order profiling queue on the first
/// device (an app that already uses OpenCL has its own).
fn app_opencl() -> Result<(Context, CommandQueue), Box<dyn Error>> {
    let id = *get_all_devices(CL_DEVICE_TYPE_ALL)?
        .first()
        .ok_or("no OpenCL device")?;
    let context = Context::from_device(&Device::new(id))?;
    // OpenCL 1.2's call, so that Apple's OpenCL takes it as well.
    #[allow(deprecated)]
    let queue = CommandQueue::create_default(&context, CL_QUEUE_PROFILING_ENABLE)?;
    Ok((context, queue))
}

/// An engine on OpenCL handles the app holds (its program and tuning
/// caches are the default ones).
fn engine_on(caller: CallerContext) -> Result<Engine, Box<dyn Error>> {
    let backend = backend::adopt(caller, &CacheDir::Default)?;
    Ok(Engine::on_backend(backend, EngineOptions::default())?)
}

/// A 640x400 RGBA test card: colour ramps and a sharp checkerboard, which
/// the blur visibly softens.
fn test_card() -> Image<u8> {
    Image::from_fn(640, 400, 4, |x, y, c| match c {
        0 => (x * 255 / 639) as u8,
        1 => (y * 255 / 399) as u8,
        2 => ((x / 40 + y / 40) % 2 * 255) as u8,
        _ => 255,
    })
    .expect("a valid size")
}

impl Gfx {
    /// The window and GL objects, and the engine in the mode the driver
    /// allows: shared if it offers a context shared with this (current) GL
    /// context, else copy on the app's own OpenCL context and queue.
    fn open(event_loop: &ActiveEventLoop, (w, h): (u32, u32)) -> Result<Gfx, Box<dyn Error>> {
        let (window, display) = SimpleWindowBuilder::new()
            .with_title("clfilter desktop example")
            .with_inner_size(w, h)
            .build(event_loop);
        let input = ProgramCreationInput::SourceCode {
            vertex_shader: VERTEX,
            tessellation_control_shader: None,
            tessellation_evaluation_shader: None,
            geometry_shader: None,
            fragment_shader: FRAGMENT,
            transform_feedback_varyings: None,
            outputs_srgb: true,
            uses_point_size: false,
        };
        let program = Program::new(&display, input)?;
        let texture = Texture2d::empty_with_format(
            &display,
            UncompressedFloatFormat::U8U8U8U8,
            MipmapsOption::NoMipmap,
            w,
            h,
        )?;
        let (engine, mode, why_copy) = match share_current_gl() {
            (InteropMode::Shared, Some(caller)) => {
                let engine = engine_on(caller)?;
                let dev = engine
                    .backend()
                    .device()
                    .ok_or("a shared context has a device")?;
                let shared = dev.gl_texture(GL_TEXTURE_2D, texture.get_id())?;
                (engine, Mode::Shared(shared), None)
            }
            (mode, _) => {
                let (context, queue) = app_opencl()?;
                let engine = engine_on(CallerContext::from_opencl3(&context, &queue)?)?;
                let pbo = Box::new(PixelBuffer::new_empty(&display, (w * h) as usize));
                let why = match mode {
                    InteropMode::Copy { reason } => reason,
                    InteropMode::Shared => "no shared context came back".into(),
                };
                (
                    engine,
                    Mode::Copy {
                        pbo,
                        _app_cl: (context, queue),
                    },
                    Some(why),
                )
            }
        };
        window.request_redraw();
        Ok(Gfx {
            window,
            display,
            program,
            texture,
            engine,
            mode,
            why_copy,
        })
    }

    /// One frame: the pipeline into the texture, in the engine's mode.
    fn frame(&self, pipeline: &Pipeline, picture: &DynImage) -> Result<(), Box<dyn Error>> {
        match &self.mode {
            Mode::Shared(shared) => {
                // GL must be done with the texture before OpenCL takes it
                // (cl_khr_gl_event would make the acquire wait by itself).
                self.display.finish();
                pipeline.run_into_gl(&self.engine, Input::Image(picture), shared)?;
            }
            Mode::Copy { pbo, .. } => {
                let (frame, _) = pipeline.run_display(
                    &self.engine,
                    Input::Image(picture),
                    DisplayFormat::Rgba8,
                )?;
                let DisplayFrame::Rgba8(rgba) = frame else {
                    return Err("RGBA8 was asked for".into());
                };
                let pixels: Vec<(u8, u8, u8, u8)> = rgba
                    .packed_samples()
                    .chunks_exact(4)
                    .map(|p| (p[0], p[1], p[2], p[3]))
                    .collect();
                pbo.write(&pixels);
                let (w, h) = self.texture.dimensions();
                self.texture.main_level().raw_upload_from_pixel_buffer(
                    pbo.as_slice(),
                    0..w,
                    0..h,
                    0..1,
                );
            }
        }
        Ok(())
    }

    /// The interop mode in words.
    fn mode(&self) -> String {
        match (&self.mode, &self.why_copy) {
            (Mode::Shared(_), _) => "shared".into(),
            (Mode::Copy { .. }, Some(why)) => format!("copy ({why})"),
            (Mode::Copy { .. }, None) => "copy".into(),
        }
    }
}

impl App {
    fn draw(&mut self, event_loop: &ActiveEventLoop) -> Result<(), Box<dyn Error>> {
        let Some(g) = &self.gfx else {
            return Ok(());
        };
        let t = self.start.elapsed().as_secs_f32();
        let sigma = 4.25 + 3.75 * (t * 1.5).sin();
        let pipeline: Pipeline = format!("gaussian=sigma={sigma:.2}").parse()?;
        g.frame(&pipeline, &self.picture)?;
        let mut target = g.display.draw();
        let sampler = g
            .texture
            .sampled()
            .magnify_filter(MagnifySamplerFilter::Nearest);
        target.draw(
            EmptyVertexAttributes { len: 4 },
            NoIndices(PrimitiveType::TriangleStrip),
            &g.program,
            &glium::uniform! { image: sampler },
            &Default::default(),
        )?;
        target.finish()?;
        self.shown += 1;
        let fps = self.shown as f64 / self.start.elapsed().as_secs_f64();
        g.window.set_title(&format!(
            "clfilter: {fps:.1} fps, {}, interop {}",
            g.engine.backend().describe(),
            g.mode()
        ));
        if self.frames_left.is_some_and(|n| self.shown >= n) {
            event_loop.exit();
        } else {
            g.window.request_redraw();
        }
        Ok(())
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gfx.is_some() {
            return;
        }
        let (w, h, _) = self.picture.shape();
        match Gfx::open(event_loop, (w as u32, h as u32)) {
            Ok(g) => self.gfx = Some(g),
            Err(e) => {
                eprintln!("opening the window: {e}");
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                if let Some(g) = &self.gfx {
                    g.display.resize(size.into());
                }
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.draw(event_loop) {
                    eprintln!("frame {}: {e}", self.shown);
                    event_loop.exit();
                }
            }
            _ => {}
        }
    }
}

fn main() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    // Any image the library loads: gray or colour, 8-bit, 16-bit or float
    // (the display conversion makes RGBA8 of it).
    let picture = match args.next().filter(|a| a.parse::<usize>().is_err()) {
        Some(path) => clfilter::image::load(&path)?,
        None => test_card().into(),
    };
    let frames_left = std::env::args().skip(1).find_map(|a| a.parse().ok());
    let mut app = App {
        picture,
        frames_left,
        shown: 0,
        start: Instant::now(),
        gfx: None,
    };
    EventLoop::new()?.run_app(&mut app)?;
    let mode = app.gfx.as_ref().map_or("-".into(), Gfx::mode);
    println!(
        "{} frames, {:.1} fps, interop {mode}",
        app.shown,
        app.shown as f64 / app.start.elapsed().as_secs_f64()
    );
    Ok(())
}
