//! The window: winit's event loop, glium (safe OpenGL) drawing the frame as
//! a texture on one quad, the keys, the title line and the screenshot read
//! read back from the frame the window presents.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use glium::backend::glutin::SimpleWindowBuilder;
use glium::glutin::surface::WindowSurface;
use glium::index::{NoIndices, PrimitiveType};
use glium::program::ProgramCreationInput;
use glium::texture::pixel_buffer::PixelBuffer;
use glium::texture::{MipmapsOption, RawImage2d, Texture2d, UncompressedFloatFormat};
use glium::uniforms::{MagnifySamplerFilter, MinifySamplerFilter};
use glium::vertex::EmptyVertexAttributes;
use glium::winit::application::ApplicationHandler;
use glium::winit::event::{ElementState, KeyEvent, WindowEvent};
use glium::winit::event_loop::{ActiveEventLoop, EventLoop};
use glium::winit::keyboard::{Key, NamedKey};
use glium::winit::window::{Window, WindowId};
use glium::BlitTarget;
use glium::{Display, Program, Surface};

use clfilter::backend::opencl::gl::{share_current_gl, InteropMode};
use clfilter::image::display::DisplayFrame;
use clfilter::image::{DynImage, Image};

use super::live::Live;
use crate::error::CliError;

/// The quad covers the window; its top edge samples the image's first row
/// (GL's textures and windows count rows from the bottom), and `gl_VertexID`
/// makes it without a vertex buffer.
const VERTEX_SHADER: &str = "#version 140
out vec2 uv;
void main() {
    vec2 p = vec2(float(gl_VertexID & 1), float(gl_VertexID >> 1));
    uv = vec2(p.x, 1.0 - p.y);
    gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}";

const FRAGMENT_SHADER: &str = "#version 140
in vec2 uv;
out vec4 color;
uniform sampler2D image;
void main() { color = texture(image, uv); }";

/// How much of the screen a large image's window may take.
const SCREEN_SHARE: f64 = 0.9;

/// What the command line asks of the window besides the frames.
pub struct Options {
    /// Render this many frames, then exit.
    pub frames: Option<usize>,
    /// Where `--frames` writes its screenshot, and `S` its first one.
    pub screenshot: Option<PathBuf>,
}

/// The pixel buffer RGBA8 frames are uploaded through.
type Staging = PixelBuffer<(u8, u8, u8, u8)>;

/// The window and its GL objects, made once the event loop runs.
struct Gfx {
    window: Window,
    display: Display<WindowSurface>,
    program: Program,
    /// The frame on show; kept while frames keep its size.
    texture: Texture2d,
    /// The staging buffer frames are uploaded through (the texture's size).
    staging: Staging,
}

/// The event loop's state.
struct App {
    frames: Live,
    options: Options,
    gfx: Option<Gfx>,
    /// The first error, returned once the loop ends.
    error: Option<CliError>,
    /// Screenshots taken with `S`.
    shots: usize,
    title_at: Instant,
    /// When the window opened, and the frames run by then.
    opened: Option<(Instant, usize)>,
}

/// Opens the window and runs until it is closed, `Q`/`Esc` is pressed, or
/// `--frames` frames are shown.
pub fn run(frames: Live, options: Options) -> Result<(), CliError> {
    let event_loop = EventLoop::new().map_err(|e| {
        CliError::Failed(format!(
            "cannot open a window: {e} (is DISPLAY or WAYLAND_DISPLAY set? \
             Without a screen, run under Xvfb: xvfb-run filterctl view ...)"
        ))
    })?;
    let mut app = App {
        frames,
        options,
        gfx: None,
        error: None,
        shots: 0,
        title_at: Instant::now(),
        opened: None,
    };
    event_loop
        .run_app(&mut app)
        .map_err(|e| CliError::Failed(format!("window event loop: {e}")))?;
    app.error.map_or(Ok(()), Err)
}

impl ApplicationHandler for App {
    fn resumed(&mut self, event_loop: &ActiveEventLoop) {
        if self.gfx.is_none() {
            if let Err(e) = self.open(event_loop) {
                self.fail(event_loop, e);
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
            WindowEvent::KeyboardInput {
                event:
                    KeyEvent {
                        state: ElementState::Pressed,
                        logical_key,
                        ..
                    },
                ..
            } => {
                if let Err(e) = self.key(event_loop, &logical_key) {
                    self.fail(event_loop, e);
                }
            }
            WindowEvent::RedrawRequested => {
                if let Err(e) = self.redraw(event_loop) {
                    self.fail(event_loop, e);
                }
            }
            _ => {}
        }
    }

    fn about_to_wait(&mut self, _: &ActiveEventLoop) {
        // A still image runs the pipeline again for every frame; a stream
        // waits here (briefly, so keys stay responsive) for its next frame.
        match self.frames.poll(Duration::from_millis(10)) {
            Ok(_) => {
                if let Some(g) = &self.gfx {
                    g.window.request_redraw();
                }
            }
            Err(e) => self.error = self.error.take().or(Some(e)),
        }
    }
}

impl App {
    /// Creates the window at the image's size (scaled down to fit the
    /// screen), the shader program and the first texture.
    fn open(&mut self, event_loop: &ActiveEventLoop) -> Result<(), CliError> {
        let (w, h) = {
            let frame = rgba8(self.frames.shown_frame()?);
            (frame.width() as u32, frame.height() as u32)
        };
        let screen = event_loop
            .primary_monitor()
            .or_else(|| event_loop.available_monitors().next())
            .map(|m| m.size());
        let scale = screen.map_or(1.0, |s| {
            let fit_w = f64::from(s.width) * SCREEN_SHARE / f64::from(w);
            let fit_h = f64::from(s.height) * SCREEN_SHARE / f64::from(h);
            fit_w.min(fit_h).min(1.0)
        });
        let size = |v: u32| ((f64::from(v) * scale).round() as u32).max(1);
        let builder = SimpleWindowBuilder::new()
            .with_title(&self.frames.title())
            .with_inner_size(size(w), size(h));
        let (window, display) = build_window(builder, event_loop)?;
        let program = Program::new(
            &display,
            ProgramCreationInput::SourceCode {
                vertex_shader: VERTEX_SHADER,
                tessellation_control_shader: None,
                tessellation_evaluation_shader: None,
                geometry_shader: None,
                fragment_shader: FRAGMENT_SHADER,
                transform_feedback_varyings: None,
                // The samples are shown as they are: no sRGB conversion on write.
                outputs_srgb: true,
                uses_point_size: false,
            },
        )
        .map_err(|e| CliError::Failed(format!("building the view's shaders: {e}")))?;
        let frame = rgba8(self.frames.shown_frame()?);
        let (texture, staging) = textures(&display, frame)?;
        upload(&texture, &staging, frame);
        let renderer = display.get_opengl_renderer_string().to_string();
        let answer = ask_shared();
        log::info!("GL renderer {renderer}; a shared OpenCL context: {answer}");
        self.frames.set_gl(renderer, answer);
        self.opened = Some((Instant::now(), self.frames.count()));
        self.gfx = Some(Gfx {
            window,
            display,
            program,
            texture,
            staging,
        });
        Ok(())
    }

    /// Shows the latest frame; after `--frames` frames, takes the
    /// screenshot and ends the loop.
    fn redraw(&mut self, event_loop: &ActiveEventLoop) -> Result<(), CliError> {
        let fresh = self.frames.take_fresh();
        let Some(g) = &mut self.gfx else {
            return Ok(());
        };
        if fresh {
            let frame = rgba8(self.frames.shown_frame()?);
            let (w, h) = (frame.width() as u32, frame.height() as u32);
            if g.texture.dimensions() != (w, h) {
                (g.texture, g.staging) = textures(&g.display, frame)?;
            }
            upload(&g.texture, &g.staging, frame);
        }
        let done = self
            .options
            .frames
            .is_some_and(|n| self.frames.count() >= n || self.frames.ended());
        let shot = draw(g, done && self.options.screenshot.is_some())?;
        if self.title_at.elapsed() > Duration::from_millis(250) {
            g.window.set_title(&self.frames.title());
            self.title_at = Instant::now();
        }
        if done {
            // The rate leaves out the PNG's encoding (not its read-back).
            let secs = self.opened.map(|(at, _)| at.elapsed().as_secs_f64());
            if let (Some(img), Some(path)) = (shot, &self.options.screenshot) {
                save(img, path)?;
            }
            if let (Some(secs), Some((_, before))) = (secs, self.opened) {
                note!(
                    "{}",
                    self.frames.summary(self.frames.count() - before, secs)
                );
            }
            event_loop.exit();
        }
        Ok(())
    }

    /// Acts on one key press.
    fn key(&mut self, event_loop: &ActiveEventLoop, key: &Key) -> Result<(), CliError> {
        match key {
            Key::Named(NamedKey::Escape) => event_loop.exit(),
            Key::Named(NamedKey::ArrowUp) => self.frames.scale(super::controls::STEP),
            Key::Named(NamedKey::ArrowDown) => self.frames.scale(1.0 / super::controls::STEP),
            Key::Named(NamedKey::Tab) => self.frames.select_next(),
            Key::Named(NamedKey::Space) => self.frames.flip(),
            Key::Character(c) => match c.to_lowercase().as_str() {
                "q" => event_loop.exit(),
                "v" => self.frames.next_variant(),
                "s" => self.save_shot()?,
                _ => {}
            },
            _ => {}
        }
        if let Some(g) = &self.gfx {
            g.window.set_title(&self.frames.title());
            g.window.request_redraw();
        }
        Ok(())
    }

    /// `S`: the window as it is now, to `--screenshot`'s path the first
    /// time, then to `filterctl-view-N.png` in the current folder.
    fn save_shot(&mut self) -> Result<(), CliError> {
        let Some(g) = &self.gfx else {
            return Ok(());
        };
        self.shots += 1;
        let path = match (&self.options.screenshot, self.shots) {
            (Some(p), 1) => p.clone(),
            // The next name that is free: a key press never overwrites a file.
            _ => loop {
                let p = PathBuf::from(format!("filterctl-view-{}.png", self.shots));
                if !p.exists() {
                    break p;
                }
                self.shots += 1;
            },
        };
        screenshot(g, &path)?;
        status!("screenshot: {}", path.display());
        Ok(())
    }

    fn fail(&mut self, event_loop: &ActiveEventLoop, e: CliError) {
        self.error = self.error.take().or(Some(e));
        event_loop.exit();
    }
}

/// The view asks for RGBA8 display pixels only.
fn rgba8(frame: &DisplayFrame) -> &Image<u8> {
    match frame {
        DisplayFrame::Rgba8(img) => img,
        DisplayFrame::Rgba32F(_) => unreachable!("the view runs pipelines into RGBA8"),
    }
}

/// A texture and a pixel buffer of the frame's size, for RGBA8 sampled
/// without sRGB decoding.
fn textures(
    display: &Display<WindowSurface>,
    frame: &Image<u8>,
) -> Result<(Texture2d, Staging), CliError> {
    let (w, h) = (frame.width() as u32, frame.height() as u32);
    let texture = Texture2d::empty_with_format(
        display,
        UncompressedFloatFormat::U8U8U8U8,
        MipmapsOption::NoMipmap,
        w,
        h,
    )
    .map_err(|e| CliError::Failed(format!("making the frame's GL texture: {e}")))?;
    Ok((
        texture,
        PixelBuffer::new_empty(display, frame.pixel_count()),
    ))
}

/// Writes the frame's pixels into the staging buffer, and has GL copy them
/// into the texture from there (asynchronously: the call returns once the
/// buffer is written; glium's buffer takes pixels as tuples, hence one
/// host copy). Rows go in the order given: the shader puts the
/// first at the top.
fn upload(texture: &Texture2d, staging: &Staging, frame: &Image<u8>) {
    let pixels: Vec<(u8, u8, u8, u8)> = frame
        .packed_samples()
        .chunks_exact(4)
        .map(|s| (s[0], s[1], s[2], s[3]))
        .collect();
    staging.write(&pixels);
    let (w, h) = texture.dimensions();
    texture
        .main_level()
        .raw_upload_from_pixel_buffer(staging.as_slice(), 0..w, 0..h, 0..1);
}

/// Draws the texture over the whole window and presents it; with
/// `capture`, first copies the drawn frame (the back buffer about to be
/// presented) into a texture and returns it as RGB8 rows from the top.
/// At 1:1 each pixel centre samples its texel exactly (nearest); a scaled
/// window interpolates.
fn draw(g: &Gfx, capture: bool) -> Result<Option<Image<u8>>, CliError> {
    let failed = |e: &dyn std::fmt::Display| CliError::Failed(format!("drawing the frame: {e}"));
    let (fw, fh) = g.display.get_framebuffer_dimensions();
    let one_to_one = (fw, fh) == g.texture.dimensions();
    let (mag, min) = if one_to_one {
        (MagnifySamplerFilter::Nearest, MinifySamplerFilter::Nearest)
    } else {
        (MagnifySamplerFilter::Linear, MinifySamplerFilter::Linear)
    };
    let sampled = g.texture.sampled().magnify_filter(mag).minify_filter(min);
    let mut frame = g.display.draw();
    frame.clear_color(0.0, 0.0, 0.0, 1.0);
    let drawn = frame
        .draw(
            EmptyVertexAttributes { len: 4 },
            NoIndices(PrimitiveType::TriangleStrip),
            &g.program,
            &glium::uniform! { image: sampled },
            &Default::default(),
        )
        .map_err(|e| failed(&e));
    let shot = match (&drawn, capture) {
        (Ok(()), true) => Some(read_back(g, &frame, fw, fh)),
        _ => None,
    };
    let finished = frame.finish().map_err(|e| failed(&e));
    drawn?;
    finished?;
    shot.transpose()
}

/// The frame as drawn: the window's back buffer blitted into a texture
/// (EGL cannot read a window's front buffer) and read from there, GL's
/// bottom-up rows turned the right way up.
fn read_back(g: &Gfx, frame: &glium::Frame, w: u32, h: u32) -> Result<Image<u8>, CliError> {
    let copy = Texture2d::empty_with_format(
        &g.display,
        UncompressedFloatFormat::U8U8U8U8,
        MipmapsOption::NoMipmap,
        w,
        h,
    )
    .map_err(|e| CliError::Failed(format!("reading the window back: {e}")))?;
    let whole = BlitTarget {
        left: 0,
        bottom: 0,
        width: w as i32,
        height: h as i32,
    };
    frame.blit_whole_color_to(&copy.as_surface(), &whole, MagnifySamplerFilter::Nearest);
    let raw: RawImage2d<u8> = copy.read();
    let (w, h) = (w as usize, h as usize);
    let mut rgb = Vec::with_capacity(w * h * 3);
    for row in raw.data.chunks_exact(w * 4).rev() {
        for px in row.chunks_exact(4) {
            rgb.extend_from_slice(&px[..3]);
        }
    }
    Ok(Image::from_vec(w, h, 3, rgb)?)
}

/// Asks the driver for an OpenCL context shared with the GL context just
/// made current (on this thread), and returns its answer; the context, if
/// there is one, is dropped: the view renders through the host either way.
/// A panic inside ocl-interop comes back as a `Copy` with its message;
/// the default hook's report of it is kept off stderr.
fn ask_shared() -> InteropMode {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let (mode, _context) = share_current_gl();
    std::panic::set_hook(hook);
    mode
}

/// A panic's message.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> &str {
    payload
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| payload.downcast_ref::<&str>().copied())
        .unwrap_or("unknown reason")
}

/// Opens the window and its GL context. glium's builder panics where
/// glutin finds no usable GL configuration (a display without GL): that
/// becomes an error, and the default panic message is kept off stderr.
fn build_window(
    builder: SimpleWindowBuilder,
    event_loop: &ActiveEventLoop,
) -> Result<(Window, Display<WindowSurface>), CliError> {
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let built =
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| builder.build(event_loop)));
    std::panic::set_hook(hook);
    built.map_err(|payload| {
        let why = panic_text(&*payload);
        CliError::Failed(format!(
            "could not open an OpenGL window ({why}); is there a display with GL (DISPLAY, Mesa's libgl1-mesa-dri)?"
        ))
    })
}

/// Draws a frame and writes what the window shows as an RGB8 PNG.
fn screenshot(g: &Gfx, path: &Path) -> Result<(), CliError> {
    match draw(g, true)? {
        Some(img) => save(img, path),
        None => Ok(()),
    }
}

/// Writes a screenshot.
fn save(img: Image<u8>, path: &Path) -> Result<(), CliError> {
    clfilter::image::save(&DynImage::U8(img), path)
        .map_err(|e| CliError::from(e).context("screenshot"))
}
