//! A band's working rows: the levelled CFA (and the edge method's green
//! plane) split into even and odd columns, with mirrored aprons.

use super::filters::WIDE;
use super::{CHUNK, QPAD};
use crate::ops::demosaic::reference::mirror;

/// A band's working rows, kept from band to band by each rayon job
/// (`for_each_init`), so they are allocated a few times per frame.
#[derive(Default)]
pub(super) struct Scratch {
    /// The levelled CFA half-rows.
    pub(super) cfa: Vec<f32>,
    /// The edge method's green half-rows (and colour differences).
    pub(super) green: Vec<f32>,
    /// The edge method's CFA half-rows as integers, where the levelled
    /// samples are the raw bytes ([`super::Band::ints`]).
    pub(super) ints: Vec<i16>,
}

/// `v`'s first `n` elements, growing it if needed.
pub(super) fn grown<T: Copy + Default>(v: &mut Vec<T>, n: usize) -> &mut [T] {
    if v.len() < n {
        v.resize(n, T::default());
    }
    &mut v[..n]
}

/// Rows split into their even and odd columns: `[row][parity][QPAD + i]`
/// holds column `2 i + parity` of band row `row - top`, each half-row `hs`
/// long (the apron mirrored, then whole chunks).
#[derive(Clone, Copy)]
pub(super) struct Halves<'a, T = f32> {
    pub(super) buf: &'a [T],
    pub(super) hs: usize,
    pub(super) top: usize,
}

impl<'a, T> Halves<'a, T> {
    /// Chunk `k` of band row `row` at column offset `col` (any integer: the
    /// parity and quad offset of a neighbour of a site of column parity 0).
    #[inline(always)]
    pub(super) fn at(self, row: isize, col: isize, k: usize) -> &'a [T; CHUNK] {
        let r = (row + self.top as isize) as usize;
        let start = (2 * r + col.rem_euclid(2) as usize) * self.hs
            + (QPAD + k * CHUNK).wrapping_add_signed(col.div_euclid(2));
        self.buf[start..start + CHUNK].try_into().unwrap()
    }

    /// What is kept beside chunk `k` of band row `row` at column offset
    /// `col`: the same quads of the other parity's half-row (where the edge
    /// method keeps the colour differences of its red and blue sites).
    #[inline(always)]
    pub(super) fn beside(self, row: isize, col: isize, k: usize) -> &'a [T; CHUNK] {
        self.at(row, col + 1 - 2 * col.rem_euclid(2), k)
    }

    /// Chunk `k` of the half-row of parity `par` of band row `row`, with
    /// one quad more either side.
    #[inline(always)]
    pub(super) fn wide(self, row: isize, par: usize, k: usize) -> &'a [T; WIDE] {
        let r = (row + self.top as isize) as usize;
        let start = (2 * r + par) * self.hs + QPAD + k * CHUNK - 1;
        self.buf[start..start + WIDE].try_into().unwrap()
    }
}

/// Mirrors a row's ends into the apron of its half-rows (`half` quads each,
/// `w` pixels): quad `i` holds column `2 (i - QPAD) + parity`, and reflection
/// keeps the parity.
#[inline(always)]
pub(super) fn fill_apron<T: Copy>(even: &mut [T], odd: &mut [T], half: usize, w: usize) {
    fill_apron_of(even, 0, half, w);
    fill_apron_of(odd, 1, half, w);
}

/// [`fill_apron`] of one half-row that holds the columns of parity `par`.
#[inline(always)]
pub(super) fn fill_apron_of<T: Copy>(h: &mut [T], par: usize, half: usize, w: usize) {
    for i in (0..QPAD).chain(QPAD + half..2 * QPAD + half) {
        let col = 2 * i as i64 - 2 * QPAD as i64 + par as i64;
        h[i] = h[QPAD + mirror(col, w) / 2];
    }
}

/// Where a colour of a site comes from.
#[derive(Clone, Copy)]
pub(super) enum From {
    /// The site's own levelled sample.
    Own,
    /// The green plane (the edge method's red and blue sites).
    Green,
    /// One of the site's two [`Slots`].
    Slot(usize),
}
