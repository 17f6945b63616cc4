//! A desktop app that owns its window, its GL context and its OpenCL
//! context and queue, and calls clfilter once per frame: the shape to copy
//! into an app (docs/DESKTOP.md).
//!
//! ```text
//! cargo run --release --features gl --example desktop_app [IMAGE] [FRAMES]
//! ```
//!
//! Without `IMAGE` it animates a generated test card. Each frame it blurs
//! the picture with a sigma that breathes between 0.5 and 8, on the app's
//! own OpenCL queue, and shows it through a GL texture (the copy interop:
//! the result comes back to the host and is uploaded; docs/DESKTOP.md says
//! when a shared texture applies). The title shows the frame rate. With
//! `FRAMES` it exits after that many frames (for scripts and CI).

use std::error::Error;
use std::time::Instant;

use clfilter::backend::opencl::CallerContext;
use clfilter::pipeline::Pipeline;
use clfilter::{backend, CacheDir, DynImage, Engine, EngineOptions, Image};
use glium::backend::glutin::SimpleWindowBuilder;
use glium::glutin::surface::WindowSurface;
use glium::index::{NoIndices, PrimitiveType};
use glium::program::ProgramCreationInput;
use glium::texture::{MipmapsOption, RawImage2d, Texture2d, UncompressedFloatFormat};
use glium::uniforms::MagnifySamplerFilter;
use glium::vertex::EmptyVertexAttributes;
use glium::winit::application::ApplicationHandler;
use glium::winit::event::WindowEvent;
use glium::winit::event_loop::{ActiveEventLoop, EventLoop};
use glium::winit::window::{Window, WindowId};
use glium::{Display, Program, Surface};
use opencl3::command_queue::{CommandQueue, CL_QUEUE_PROFILING_ENABLE};
use opencl3::context::Context;
use opencl3::device::{get_all_devices, Device, CL_DEVICE_TYPE_ALL};

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

/// What the app keeps between frames.
struct App {
    /// The app's own OpenCL objects. The engine holds its own references,
    /// so the app may keep using (and finally drop) these as it likes.
    _cl: (Context, CommandQueue),
    engine: Engine,
    picture: Image<u8>,
    frames_left: Option<usize>,
    shown: usize,
    start: Instant,
    gl: Option<(Window, Display<WindowSurface>, Program)>,
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

impl App {
    /// One frame: the pipeline on the app's queue, then into a texture.
    fn frame(&mut self) -> Result<Option<Texture2d>, Box<dyn Error>> {
        let Some((_, display, _)) = &self.gl else {
            return Ok(None);
        };
        let t = self.start.elapsed().as_secs_f32();
        let sigma = 4.25 + 3.75 * (t * 1.5).sin();
        let pipeline: Pipeline = format!("gaussian=sigma={sigma:.2}").parse()?;
        let (out, _) = pipeline.run(&self.engine, DynImage::U8(self.picture.clone()))?;
        let DynImage::U8(out) = out else {
            return Err("the blur of u8 RGBA is u8 RGBA".into());
        };
        let (w, h) = (out.width() as u32, out.height() as u32);
        let raw = RawImage2d::from_raw_rgba(out.packed_samples().into_owned(), (w, h));
        let texture = Texture2d::with_format(
            display,
            raw,
            UncompressedFloatFormat::U8U8U8U8,
            MipmapsOption::NoMipmap,
        )?;
        Ok(Some(texture))
    }

    fn draw(&mut self, event_loop: &ActiveEventLoop) -> Result<(), Box<dyn Error>> {
        let Some(texture) = self.frame()? else {
            return Ok(());
        };
        let Some((window, display, program)) = &self.gl else {
            return Ok(());
        };
        let mut target = display.draw();
        let sampler = texture
            .sampled()
            .magnify_filter(MagnifySamplerFilter::Nearest);
        target.draw(
            EmptyVertexAttributes { len: 4 },
            NoIndices(PrimitiveType::TriangleStrip),
            program,
            &glium::uniform! { image: sampler },
            &Default::default(),
        )?;
        target.finish()?;
        self.shown += 1;
        let fps = self.shown as f64 / self.start.elapsed().as_secs_f64();
        window.set_title(&format!(
            "clfilter on the app's OpenCL queue: {fps:.1} fps, {}",
            self.engine.backend().describe()
        ));
        if self.frames_left.is_some_and(|n| self.shown >= n) {
            event_loop.exit();
        } else {
            window.request_redraw();
        }
        Ok(())
    }
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gl.is_some() {
            return;
        }
        let (w, h) = (self.picture.width() as u32, self.picture.height() as u32);
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
        match Program::new(&display, input) {
            Ok(program) => {
                window.request_redraw();
                self.gl = Some((window, display, program));
            }
            Err(e) => {
                eprintln!("shaders: {e}");
                event_loop.exit();
            }
        }
    }

    fn window_event(&mut self, event_loop: &ActiveEventLoop, _: WindowId, event: WindowEvent) {
        match event {
            WindowEvent::CloseRequested => event_loop.exit(),
            WindowEvent::Resized(size) => {
                if let Some((_, display, _)) = &self.gl {
                    display.resize(size.into());
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
    let picture = match args.next().filter(|a| a.parse::<usize>().is_err()) {
        Some(path) => match clfilter::image::load(&path)? {
            DynImage::U8(img) if img.channels() == 4 => img,
            other => {
                // Any other layout: through the library's own conversion to RGBA8.
                let p: Pipeline = "convert=u8".parse()?;
                let (img, _) = p.run(&Engine::cpu(), other)?;
                match img {
                    DynImage::U8(i) => Image::from_fn(i.width(), i.height(), 4, |x, y, c| {
                        let ch = i.channels();
                        match (ch, c) {
                            (_, 3) if ch < 4 => 255,
                            (1, _) => i.get(x, y, 0),
                            _ => i.get(x, y, c),
                        }
                    })?,
                    _ => return Err("convert=u8 gives u8".into()),
                }
            }
        },
        None => test_card(),
    };
    let frames_left = std::env::args().skip(1).find_map(|a| a.parse().ok());
    // The app's OpenCL, and an engine that runs on it: its kernels go on the
    // app's queue, in order with the app's own commands.
    let (context, queue) = app_opencl()?;
    let backend = backend::adopt(
        CallerContext::from_opencl3(&context, &queue)?,
        &CacheDir::Default,
    )?;
    let engine = Engine::on_backend(backend, EngineOptions::default())?;
    let mut app = App {
        _cl: (context, queue),
        engine,
        picture,
        frames_left,
        shown: 0,
        start: Instant::now(),
        gl: None,
    };
    EventLoop::new()?.run_app(&mut app)?;
    println!(
        "{} frames, {:.1} fps",
        app.shown,
        app.shown as f64 / app.start.elapsed().as_secs_f64()
    );
    Ok(())
}
