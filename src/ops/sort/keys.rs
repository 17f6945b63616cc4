//! The keys `sort` orders: f32, u32 and i32, each mapped to a u32 whose
//! unsigned order is the order wanted, so every variant sorts u32 words.
//!
//! For f32 the map is IEEE-754 `totalOrder`'s: a negative value's bits are
//! all flipped, a positive value gets its sign bit set. That orders
//! -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN (NaNs among themselves
//! by payload), exactly as [`f32::total_cmp`] does, and maps back to the
//! very bits it came from. i32 flips the sign bit; u32 is itself.

/// A key type `sort` accepts: `f32`, `u32` or `i32`.
pub trait SortKey:
    Copy + Default + Send + Sync + std::fmt::Debug + sealed::Sealed + 'static
{
    /// The type's name (`f32`, `u32`, `i32`).
    const NAME: &'static str;
    /// The order-preserving u32 word.
    fn to_word(self) -> u32;
    /// The key a word came from.
    fn from_word(w: u32) -> Self;
}

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for u32 {}
    impl Sealed for i32 {}
}

/// The f32 total-order word (see the module docs).
#[inline(always)]
pub fn f32_word(v: f32) -> u32 {
    let b = v.to_bits();
    if b & 0x8000_0000 != 0 {
        !b
    } else {
        b | 0x8000_0000
    }
}

/// The f32 a total-order word came from.
#[inline(always)]
pub fn f32_from_word(w: u32) -> f32 {
    f32::from_bits(if w & 0x8000_0000 != 0 {
        w & 0x7fff_ffff
    } else {
        !w
    })
}

impl SortKey for f32 {
    const NAME: &'static str = "f32";
    #[inline(always)]
    fn to_word(self) -> u32 {
        f32_word(self)
    }
    #[inline(always)]
    fn from_word(w: u32) -> Self {
        f32_from_word(w)
    }
}

impl SortKey for u32 {
    const NAME: &'static str = "u32";
    #[inline(always)]
    fn to_word(self) -> u32 {
        self
    }
    #[inline(always)]
    fn from_word(w: u32) -> Self {
        w
    }
}

impl SortKey for i32 {
    const NAME: &'static str = "i32";
    #[inline(always)]
    fn to_word(self) -> u32 {
        (self as u32) ^ 0x8000_0000
    }
    #[inline(always)]
    fn from_word(w: u32) -> Self {
        (w ^ 0x8000_0000) as i32
    }
}

/// `keys` as words, in parallel.
pub fn to_words<K: SortKey>(keys: &[K]) -> Vec<u32> {
    use rayon::prelude::*;
    keys.par_iter().map(|k| k.to_word()).collect()
}

/// Words back to keys, in parallel.
pub fn from_words<K: SortKey>(words: &[u32]) -> Vec<K> {
    use rayon::prelude::*;
    words.par_iter().map(|&w| K::from_word(w)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f32_words_follow_total_cmp_and_round_trip() {
        let v = [
            f32::from_bits(0xffff_ffff),
            -f32::NAN,
            f32::NEG_INFINITY,
            -1.5,
            -f32::MIN_POSITIVE,
            -0.0,
            0.0,
            f32::from_bits(1),
            2.0,
            f32::INFINITY,
            f32::NAN,
            f32::from_bits(0x7fff_ffff),
        ];
        for a in v {
            assert_eq!(f32_from_word(f32_word(a)).to_bits(), a.to_bits());
            for b in v {
                assert_eq!(f32_word(a).cmp(&f32_word(b)), a.total_cmp(&b), "{a} {b}");
            }
        }
        for a in [i32::MIN, -1, 0, 1, i32::MAX] {
            assert_eq!(i32::from_word(a.to_word()), a);
            assert_eq!(a.to_word().cmp(&0.to_word()), a.cmp(&0));
        }
    }
}
