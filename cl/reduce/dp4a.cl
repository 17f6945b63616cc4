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
