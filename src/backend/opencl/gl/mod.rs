//! OpenCL/OpenGL sharing: what can be decided without a GL context.
//!
//! The context property lists for sharing with a GL context, the detection
//! of the sharing extensions in a device's extension string, and the
//! [`InteropMode`] reported to the caller are plain data and functions,
//! built with the `opencl` feature and tested on any machine. Creating a
//! shared context and moving frames into GL textures (the `interop`
//! submodule, cargo feature `gl`) needs a current GL context and a driver
//! that shares; it is compiled and clippy-checked here but unverified on
//! hardware: PoCL reports no GL extension, and NVIDIA's OpenCL on the H100
//! (no display) reports `cl_khr_gl_event` but not `cl_khr_gl_sharing`.
//! Drivers that report sharing are NVIDIA's desktop GPU drivers, AMD's and
//! Intel's GPU drivers, and Apple's OpenCL (`cl_APPLE_gl_sharing`).

#[cfg(feature = "gl")]
mod interop;

#[cfg(feature = "gl")]
pub use interop::{share_current_gl, GlTexture};

use std::ffi::c_void;

use opencl3::types::{cl_context_properties, cl_platform_id};

use super::ClDevice;

/// `CL_GL_CONTEXT_KHR` (cl_gl.h).
const CL_GL_CONTEXT_KHR: cl_context_properties = 0x2008;
/// `CL_GLX_DISPLAY_KHR` (cl_gl.h).
const CL_GLX_DISPLAY_KHR: cl_context_properties = 0x200A;
/// `CL_CONTEXT_PLATFORM` (cl.h).
const CL_CONTEXT_PLATFORM: cl_context_properties = 0x1084;
/// `CL_CONTEXT_PROPERTY_USE_CGL_SHAREGROUP_APPLE` (cl_gl_ext.h).
const CL_CGL_SHAREGROUP_APPLE: cl_context_properties = 0x1000_0000;

/// The GL context an OpenCL context is to share with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GlShare {
    /// Linux/X11: the `GLXContext` and its X `Display*`.
    Glx {
        /// `glXGetCurrentContext()`.
        context: *mut c_void,
        /// `glXGetCurrentDisplay()`.
        display: *mut c_void,
    },
    /// macOS: `CGLGetShareGroup(CGLGetCurrentContext())`.
    CglShareGroup(*mut c_void),
}

impl GlShare {
    /// Reads the GL handles out of a context property list (pairs, an
    /// optional 0 terminator). `None` when it names no GL context, or a
    /// null one (no GL context is current).
    pub fn from_properties(props: &[cl_context_properties]) -> Option<Self> {
        let get = |key| {
            props
                .chunks_exact(2)
                .take_while(|p| p[0] != 0)
                .find(|p| p[0] == key)
                .map(|p| p[1] as *mut c_void)
                .filter(|v| !v.is_null())
        };
        if let Some(group) = get(CL_CGL_SHAREGROUP_APPLE) {
            return Some(GlShare::CglShareGroup(group));
        }
        Some(GlShare::Glx {
            context: get(CL_GL_CONTEXT_KHR)?,
            display: get(CL_GLX_DISPLAY_KHR)?,
        })
    }

    /// The zero-terminated `clCreateContext` / `clGetGLContextInfoKHR`
    /// property list that shares with this GL context on `platform`
    /// (Apple's share group implies its one platform).
    pub fn properties(&self, platform: cl_platform_id) -> Vec<cl_context_properties> {
        match *self {
            GlShare::Glx { context, display } => vec![
                CL_GL_CONTEXT_KHR,
                context as cl_context_properties,
                CL_GLX_DISPLAY_KHR,
                display as cl_context_properties,
                CL_CONTEXT_PLATFORM,
                platform as cl_context_properties,
                0,
            ],
            GlShare::CglShareGroup(group) => {
                vec![CL_CGL_SHAREGROUP_APPLE, group as cl_context_properties, 0]
            }
        }
    }
}

/// Whether an extension string names a GL-sharing extension
/// (`cl_khr_gl_sharing`, or Apple's `cl_APPLE_gl_sharing`).
pub fn reports_gl_sharing(extensions: &str) -> bool {
    extensions
        .split_whitespace()
        .any(|e| e == "cl_khr_gl_sharing" || e == "cl_APPLE_gl_sharing")
}

/// Whether an extension string names `cl_khr_gl_event`: acquiring GL
/// objects then waits for the GL commands issued before it, so the caller
/// need not call `glFinish` first.
pub fn reports_gl_event(extensions: &str) -> bool {
    extensions
        .split_whitespace()
        .any(|e| e == "cl_khr_gl_event")
}

/// How processed frames reach a GL texture.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InteropMode {
    /// The OpenCL context shares with the GL context: frames are copied
    /// into the texture on the device (`GlTexture`).
    Shared,
    /// Frames come back to the host and the application uploads them
    /// (through a pixel-buffer object): `reason` says why sharing is off.
    Copy {
        /// Why the shared path is not used.
        reason: String,
    },
}

impl std::fmt::Display for InteropMode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InteropMode::Shared => f.write_str("shared (OpenCL writes the GL texture)"),
            InteropMode::Copy { reason } => write!(f, "copy through the host ({reason})"),
        }
    }
}

impl ClDevice {
    /// Whether this device reports a GL-sharing extension.
    pub fn reports_gl_sharing(&self) -> bool {
        reports_gl_sharing(&self.device.extensions().unwrap_or_default())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glx_properties_round_trip() {
        let (c, d, p) = (
            0x10 as *mut c_void,
            0x20 as *mut c_void,
            0x30 as cl_platform_id,
        );
        let share = GlShare::Glx {
            context: c,
            display: d,
        };
        let props = share.properties(p);
        assert_eq!(props, vec![0x2008, 0x10, 0x200A, 0x20, 0x1084, 0x30, 0]);
        assert_eq!(GlShare::from_properties(&props), Some(share));
    }

    #[test]
    fn cgl_properties_round_trip() {
        let share = GlShare::CglShareGroup(0x40 as *mut c_void);
        let props = share.properties(std::ptr::null_mut());
        assert_eq!(props, vec![0x1000_0000, 0x40, 0]);
        assert_eq!(GlShare::from_properties(&props), Some(share));
    }

    #[test]
    fn no_current_gl_context_is_none() {
        assert_eq!(GlShare::from_properties(&[]), None);
        // glXGetCurrentContext() answers null with no current context.
        assert_eq!(
            GlShare::from_properties(&[0x2008, 0, 0x200A, 0x20, 0]),
            None
        );
        assert_eq!(GlShare::from_properties(&[0x1084, 0x30, 0]), None);
    }

    #[test]
    fn extension_detection() {
        assert!(reports_gl_sharing(
            "cl_khr_fp64 cl_khr_gl_sharing cl_khr_gl_event"
        ));
        assert!(reports_gl_sharing(
            "cl_APPLE_SetMemObjectDestructor cl_APPLE_gl_sharing"
        ));
        // NVIDIA on a display-less H100: the event extension only.
        assert!(!reports_gl_sharing(
            "cl_khr_global_int32_base_atomics cl_khr_gl_event"
        ));
        assert!(reports_gl_event("cl_khr_gl_event"));
        assert!(!reports_gl_sharing("cl_khr_gl_sharing_extra"));
        assert!(!reports_gl_sharing(""));
    }
}
