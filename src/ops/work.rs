//! The working image of device-resident pipelines ([`Work`]), what a stage
//! of a chain receives ([`ChainInput`]) and the chain's context
//! ([`Chain`]). With the `opencl` feature they are the device types of
//! `work_device.rs`; without it they have no values, so the stages' device arms
//! exist (and compile) but cannot be called.

#[cfg(feature = "opencl")]
#[path = "work_device.rs"]
mod device;
#[cfg(feature = "opencl")]
pub use device::*;
#[cfg(not(feature = "opencl"))]
pub use none::*;

#[cfg(not(feature = "opencl"))]
mod none {
    use std::convert::Infallible;
    use std::marker::PhantomData;

    /// A device-resident chain's context (no value exists without OpenCL).
    pub struct Chain<'a>(Infallible, PhantomData<&'a ()>);

    impl Chain<'_> {
        /// Proof that this code is unreachable: no chain exists.
        pub fn never(&self) -> ! {
            match self.0 {}
        }
    }

    /// What a stage of a chain receives (no value exists without OpenCL).
    pub struct ChainInput<'a>(Infallible, PhantomData<&'a ()>);

    /// A working image on a device (no value exists without OpenCL).
    pub struct Work(Infallible);

    /// A case's input on the device (nothing to hold without OpenCL).
    #[derive(Default)]
    pub struct OnDevice(());
}
