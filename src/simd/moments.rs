//! Exact moments of integer samples: the sum, the sum of squares, the
//! minimum and the maximum ([`Moments`]), and for gray u8 rows an AVX2
//! kernel ([`GrayBytes`], in `x86::moments`) where the CPU has it.

use super::Isa;

/// The exact moments of some integer samples.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Moments {
    /// Sum of the samples.
    pub sum: u64,
    /// Sum of their squares.
    pub sq: u64,
    /// Minimum (`u64::MAX` before any sample).
    pub min: u64,
    /// Maximum (0 before any sample).
    pub max: u64,
}

impl Moments {
    /// No sample yet.
    pub const EMPTY: Moments = Moments {
        sum: 0,
        sq: 0,
        min: u64::MAX,
        max: 0,
    };

    /// Adds the sample `x`.
    #[inline(always)]
    pub fn add(&mut self, x: u64) {
        self.sum += x;
        self.sq += x * x;
        self.min = self.min.min(x);
        self.max = self.max.max(x);
    }

    /// The moments of both sets of samples.
    pub fn merge(self, o: Moments) -> Moments {
        Moments {
            sum: self.sum + o.sum,
            sq: self.sq + o.sq,
            min: self.min.min(o.min),
            max: self.max.max(o.max),
        }
    }
}

/// The running moments of gray u8 rows, in AVX2 registers (`vpsadbw` for
/// the sum, `vpmaddwd` for the squares). Made only where the CPU has AVX2
/// and `isa` allows it.
#[derive(Debug, Clone)]
pub struct GrayBytes {
    #[cfg(target_arch = "x86_64")]
    inner: super::x86::moments::GrayBytes,
    /// None is made elsewhere.
    #[cfg(not(target_arch = "x86_64"))]
    inner: std::convert::Infallible,
}

impl GrayBytes {
    /// Nothing added yet; `None` where `isa` is below AVX2 or the CPU
    /// lacks it.
    pub fn new(isa: Isa) -> Option<GrayBytes> {
        #[cfg(target_arch = "x86_64")]
        if isa >= Isa::Avx2 {
            if let Some(t) = super::x86::Avx2::try_new() {
                let inner = super::x86::moments::GrayBytes::new(t);
                return Some(GrayBytes { inner });
            }
        }
        let _ = isa;
        None
    }

    /// Adds the samples of `row`.
    pub fn add_row(&mut self, row: &[u8]) {
        #[cfg(target_arch = "x86_64")]
        self.inner.add_row(row);
        #[cfg(not(target_arch = "x86_64"))]
        {
            let _ = row;
            match self.inner {}
        }
    }

    /// The moments of every sample added.
    pub fn finish(self) -> Moments {
        #[cfg(target_arch = "x86_64")]
        return self.inner.finish();
        #[cfg(not(target_arch = "x86_64"))]
        match self.inner {}
    }
}
