// dp4a.cl: put before reduce.cl for x_shfl only, after ptx.cl's dp4a. On
// gray u8 rows (16 bytes a load), a sum or mean folds each load's four
// words with dp4a against 0x01010101 (exact: unsigned bytes into the
// work-item's uint, whose I_CHUNK bound stands); min and max keep
// reduce.cl's fold, since packed-byte extremes in PTX (vmin4 / vmax4) were
// slower. H200, 8192x8192, 2026-11-27: x_shfl sum 0.026 to 0.022 ms (70-72%
// to 80-86% of copy), min and max 0.024-0.026 ms, with vmin4 / vmax4
// 0.027-0.029. The branch on op sits outside the loop: with the fold
// chosen per load in one conditional expression, the sum gained nothing.

#if defined(INT_SUM) && defined(PACK) && PACK == 16
inline uint sum_bytes(uint a, uint4 w)
{
    a = dp4a(w.x, 0x01010101u, a);
    a = dp4a(w.y, 0x01010101u, a);
    a = dp4a(w.z, 0x01010101u, a);
    return dp4a(w.w, 0x01010101u, a);
}

// A sum's fold of one 16-byte load (walk_packed in reduce.cl).
#define SUM_PACKED(op, a, x) sum_bytes(a, as_uint4(x))
#endif

#if defined(INT_SUM) && defined(RGB_BYTES)
// The sums of a 16-byte load's three classes of bytes (walk_rgb in
// reduce.cl; class m: bytes m, m + 3, ..), each word's bytes of a class
// picked by a dp4a against ones in their places: class 0 is bytes 0 and 3
// of word x, 2 of y, 1 of z, 0 and 3 of w.
inline uint3 rgb_sum_classes(uint4 w)
{
    const uint b03 = 0x01000001u, b1 = 0x00000100u, b2 = 0x00010000u;
    return (uint3)(dp4a(w.x, b03, dp4a(w.y, b2, dp4a(w.z, b1, dp4a(w.w, b03, 0u)))),
                   dp4a(w.x, b1, dp4a(w.y, b03, dp4a(w.z, b2, dp4a(w.w, b1, 0u)))),
                   dp4a(w.x, b2, dp4a(w.y, b1, dp4a(w.z, b03, dp4a(w.w, b2, 0u)))));
}
#define RGB_SUM_CLASSES(w) rgb_sum_classes(w)
#endif
