// dp4a.cl: stats_vec4_dp4a, appended to stats.cl for that variant only
// (gray u8, INT_STATS), after ptx.cl. Its table entry requires an NVIDIA
// device: ptx.cl's inline PTX (dp4a, shfl.sync, membar.gl) is NVIDIA's
// dialect.
//
// As tree_vec4, a whole block is read in 16-byte loads, but each 4-byte
// word is summed in one dp4a against 0x01010101 and its squares in one
// dp4a against itself (exact: unsigned bytes into a u32 accumulator); the
// 16 bytes' minimum and maximum fold as a uchar16 in halves. Packed-byte
// extremes in PTX were slower or no faster (H200, 8192x8192, 2026-11-27:
// vmin4 / vmax4 0.056-0.058 ms, Hopper's min.u16x2 0.036-0.037 ms, this
// 0.037-0.038 ms, tree_vec4 0.042 ms). The tree_vec4 walk keeps the
// partial blocks and the partial last quad. The bounds of stats.cl hold:
// a work-item adds at most 4 * per samples, per <= 2^13, whose squares
// stay below 4 * 2^13 * 255^2 + 3 * 255^2 < 2^32.
//
// One kernel, no final pass: each warp combines its lanes by shfl.sync,
// the group's first warp combines the warps, and the group adds its
// result to `acc` with global atomics (sums as u64, exact in any order;
// min and max as u32). Then it counts itself done on acc's counter; the
// group that counts last (membar.gl orders every group's atomics before
// its count) reads acc and writes `result` in stats_final's layout. The
// host fills acc before the launch: sums 0, min ~0, max 0, count 0. A
// launch split into chunks counts the same `groups` groups.

#if defined(INT_STATS) && CH == 1 && CAT(IS_BYTE_, T)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable

#define WARP 32
#define WARPS (LWS / WARP)
#if WARPS > WARP || (WARPS & (WARPS - 1)) != 0
#error "LWS / 32 must be a power of two of at most 32"
#endif

// Combines (s, q, mn, mx) across the lanes of each warp: every lane ends
// with its warp's values.
#define WARP_COMBINE(s, q, mn, mx)                                      \
    for (int m_ = WARP / 2; m_ > 0; m_ >>= 1) {                         \
        s += shfl_xor_ul(s, m_);                                        \
        q += shfl_xor_ul(q, m_);                                        \
        mn = min(mn, shfl_xor(mn, m_));                                 \
        mx = max(mx, shfl_xor(mx, m_));                                 \
    }

// Adds the 16 bytes of a uint4 to the dp4a sums and the byte extremes.
#define ADD_WORD16(wd)                                                  \
    {                                                                   \
        uint4 x_ = (wd);                                                \
        sd = dp4a(x_.x, 0x01010101u, sd);                               \
        sd = dp4a(x_.y, 0x01010101u, sd);                               \
        sd = dp4a(x_.z, 0x01010101u, sd);                               \
        sd = dp4a(x_.w, 0x01010101u, sd);                               \
        qd = dp4a(x_.x, x_.x, qd);                                      \
        qd = dp4a(x_.y, x_.y, qd);                                      \
        qd = dp4a(x_.z, x_.z, qd);                                      \
        qd = dp4a(x_.w, x_.w, qd);                                      \
        uchar16 c_ = as_uchar16(x_);                                    \
        uchar8 m8 = min(c_.lo, c_.hi), M8 = max(c_.lo, c_.hi);          \
        uchar4 m4 = min(m8.lo, m8.hi), M4 = max(M8.lo, M8.hi);          \
        mnb = min(mnb, (uint)min(min(m4.x, m4.y), min(m4.z, m4.w)));    \
        mxb = max(mxb, (uint)max(max(M4.x, M4.y), max(M4.z, M4.w)));    \
    }

__kernel void stats_vec4_dp4a(__global const T* in, int n, int per, __global ulong* acc,
                              int groups, __global ulong4* result)
{
    __local ulong ls[WARPS], lq[WARPS];
    __local uint lmn[WARPS], lmx[WARPS];
    int lid = get_local_id(0);
    size_t g = get_global_id(0) / LWS;
    size_t first = g * (size_t)LWS * per;
    size_t total = (size_t)n, whole = total / 4;
    STATE(uint4, uint4)
    uint sd = 0u, qd = 0u, mnb = 0xffu, mxb = 0u;
    if (per % 4 == 0 && first + (size_t)LWS * per <= whole) {
        __global const uint4* w4 = (__global const uint4*)in + first / 4 + lid;
        int loads = per / 4, r = 0;
        for (; r + UNROLL <= loads; r += UNROLL) {
            uint4 w_[UNROLL];
            for (int u = 0; u < UNROLL; u++) w_[u] = w4[(size_t)(r + u) * LWS];
            for (int u = 0; u < UNROLL; u++) ADD_WORD16(w_[u])
        }
        for (; r < loads; r++) ADD_WORD16(w4[(size_t)r * LWS])
    } else
    WALK(QUAD, LOAD_QUAD, ADD_QUAD, whole)
    if (4 * whole < total && is_mine(whole, first, per, lid)) {
        size_t b = 4 * whole;
        int4 ok = (int4)(-1, b + 1 < total ? -1 : 0, b + 2 < total ? -1 : 0, 0);
        uint4 v = (uint4)((uint)in[b], b + 1 < total ? (uint)in[b + 1] : 0u,
                          b + 2 < total ? (uint)in[b + 2] : 0u, 0u);
        s += v;
        q += v * v;
        mn = min(mn, select((uint4)(UINT_MAX), v, ok));
        mx = max(mx, v);
    }
    ulong ws = (((ulong)s.x + s.y) + ((ulong)s.z + s.w)) + sd;
    ulong wq = (((ulong)q.x + q.y) + ((ulong)q.z + q.w)) + qd;
    uint wmn = min(min(min(mn.x, mn.y), min(mn.z, mn.w)), mnb);
    uint wmx = max(max(max(mx.x, mx.y), max(mx.z, mx.w)), mxb);
    WARP_COMBINE(ws, wq, wmn, wmx)
    if (lid % WARP == 0) {
        ls[lid / WARP] = ws;
        lq[lid / WARP] = wq;
        lmn[lid / WARP] = wmn;
        lmx[lid / WARP] = wmx;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid >= WARP)
        return;
    bool has = lid < WARPS;
    ws = has ? ls[lid] : 0;
    wq = has ? lq[lid] : 0;
    wmn = has ? lmn[lid] : UINT_MAX;
    wmx = has ? lmx[lid] : 0u;
    WARP_COMBINE(ws, wq, wmn, wmx)
    if (lid != 0)
        return;
    __global uint* words = (__global uint*)(acc + 2);
    atom_add(acc, ws);
    atom_add(acc + 1, wq);
    atomic_min(words, wmn);
    atomic_max(words + 1, wmx);
    fence_device();
    if (atomic_inc(words + 2) != (uint)(groups - 1))
        return;
    fence_device();
    // Every group's atomics are in; volatile loads bypass the L1.
    __global volatile ulong* v = acc;
    __global volatile uint* vw = words;
    result[0] = (ulong4)(v[0], 0, 0, 0);
    result[1] = (ulong4)(v[1], 0, 0, 0);
    result[2] = (ulong4)((ulong)vw[0], 0, 0, 0);
    result[3] = (ulong4)((ulong)vw[1], 0, 0, 0);
}
#endif
