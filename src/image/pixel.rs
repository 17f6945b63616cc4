//! Sample types: the scalar in one channel of a pixel.

use serde::Serialize;

/// The scalar type of one channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SampleType {
    /// 8-bit unsigned, full range 0..=255.
    U8,
    /// 16-bit unsigned, full range 0..=65535.
    U16,
    /// 32-bit float, nominal range 0.0..=1.0.
    F32,
}

impl SampleType {
    /// Size of one sample in bytes.
    pub fn size(self) -> usize {
        match self {
            SampleType::U8 => 1,
            SampleType::U16 => 2,
            SampleType::F32 => 4,
        }
    }

    /// The OpenCL C scalar type name.
    pub fn cl_name(self) -> &'static str {
        match self {
            SampleType::U8 => "uchar",
            SampleType::U16 => "ushort",
            SampleType::F32 => "float",
        }
    }

    /// The short name used on the command line and in keys (`u8`, `u16`, `f32`).
    pub fn name(self) -> &'static str {
        match self {
            SampleType::U8 => "u8",
            SampleType::U16 => "u16",
            SampleType::F32 => "f32",
        }
    }

    /// The value that stands for "full intensity": 255, 65535 or 1.0.
    pub fn full_scale(self) -> f32 {
        match self {
            SampleType::U8 => 255.0,
            SampleType::U16 => 65535.0,
            SampleType::F32 => 1.0,
        }
    }

    /// Parses `u8`, `u16` or `f32`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "u8" => Some(SampleType::U8),
            "u16" => Some(SampleType::U16),
            "f32" => Some(SampleType::F32),
            _ => None,
        }
    }
}

impl std::fmt::Display for SampleType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for u8 {}
    impl Sealed for u16 {}
    impl Sealed for f32 {}
}

/// A sample type the engine processes: `u8`, `u16` or `f32`.
pub trait Sample:
    sealed::Sealed + Copy + Default + PartialOrd + Send + Sync + std::fmt::Debug + 'static
{
    /// The runtime tag of this type.
    const TYPE: SampleType;

    /// Widens to f32 without scaling (200u8 becomes 200.0).
    fn to_f32(self) -> f32;

    /// Narrows from f32 as OpenCL's `convert_T_sat_rte` does: round half to
    /// even, saturate to the type's range, NaN becomes 0. For f32 it is the identity.
    fn from_f32(v: f32) -> Self;
}

impl Sample for u8 {
    const TYPE: SampleType = SampleType::U8;
    #[inline]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline]
    fn from_f32(v: f32) -> Self {
        // `as` saturates and maps NaN to 0, matching the OpenCL _sat conversions.
        v.round_ties_even() as u8
    }
}

impl Sample for u16 {
    const TYPE: SampleType = SampleType::U16;
    #[inline]
    fn to_f32(self) -> f32 {
        self as f32
    }
    #[inline]
    fn from_f32(v: f32) -> Self {
        v.round_ties_even() as u16
    }
}

impl Sample for f32 {
    const TYPE: SampleType = SampleType::F32;
    #[inline]
    fn to_f32(self) -> f32 {
        self
    }
    #[inline]
    fn from_f32(v: f32) -> Self {
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn narrowing_rounds_half_to_even_and_saturates() {
        assert_eq!(u8::from_f32(2.5), 2);
        assert_eq!(u8::from_f32(3.5), 4);
        assert_eq!(u8::from_f32(-3.0), 0);
        assert_eq!(u8::from_f32(300.0), 255);
        assert_eq!(u8::from_f32(f32::NAN), 0);
        assert_eq!(u16::from_f32(65535.6), 65535);
        assert_eq!(u16::from_f32(0.5), 0);
        assert!(f32::from_f32(f32::NAN).is_nan());
    }
}
