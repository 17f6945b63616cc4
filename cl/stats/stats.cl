// stats.cl: per-channel sum, sum of squares, minimum and maximum of a
// whole image in one pass over it, then one small pass over the
// work-groups' partials. The host turns the result into sum, mean,
// population standard deviation, min and max (src/ops/stats/).
// Options: LWS (work-group size, a power of two); UNROLL (loads issued
// before the adds they feed, default 4); INT_STATS and SQ_T for integer
// samples (below). Runtime: `per`, the loads per work-item.
//
// Float samples: the squares are taken about a shift K per channel, the
// image's first pixel where it is finite, else 0. Sum((x - K)^2) stays
// close to n * variance when K is a typical sample, where sum(x^2) would
// cancel against n * mean^2. Each work-item keeps compensated (Kahan)
// sums, the group combines them in a local-memory tree, and stats_final
// does the same over the groups; docs/QUALITY.md states the bound. A
// non-finite running sum drops its compensation, so an infinity stays an
// infinity and NaN stays NaN, as in f64. min/max ignore NaN (fmin/fmax).
//
// Integer samples (INT_STATS: uchar, ushort): sums, squares (about 0),
// min and max in integers, exact. A work-item adds at most `per` <= 8192
// samples per lane (the host caps it: n < 2^31 pixels and at most 2^13
// loads each) in a uint (255 * 255 * 8192 and 65535 * 8192 < 2^32), its
// squares in SQ_T (uint for uchar, ulong for ushort); groups and the
// final pass combine ulongs (65535^2 * 2^31 < 2^64).
//
// Chunk safety: work-group g covers the fixed block of LWS * per pixels
// (or quads) starting at g * LWS * per, with g computed from
// get_global_id(0) / LWS (the global id includes a launch's offset), and
// writes partial slot g. A launch split into chunks of whole groups
// writes the same partials. stats_final is one work-group.

#ifndef LWS
#error "LWS must be defined"
#endif
#ifndef UNROLL
#define UNROLL 4
#endif

// Quad j of a gray image (samples 4j..4j+3), aligned in the same way.
#define QUAD CAT(T, 4)
#define LOADQUAD(p, j) (((__global const QUAD*)(p))[(j)])

// A local-memory tree over LWS entries of the four arrays with the
// minimum and maximum `mn_` and `mx_`; entry 0 holds the result. Every
// work-item of the group must reach it.
#define TREE4(ls, lq, lmn, lmx, lid, mn_, mx_)                          \
    for (int s_ = LWS / 2; s_ > 0; s_ >>= 1) {                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                   \
        if ((lid) < s_) {                                               \
            ls[lid] += ls[(lid) + s_];                                  \
            lq[lid] += lq[(lid) + s_];                                  \
            lmn[lid] = mn_(lmn[lid], lmn[(lid) + s_]);                  \
            lmx[lid] = mx_(lmx[lid], lmx[(lid) + s_]);                  \
        }                                                               \
    }                                                                   \
    barrier(CLK_LOCAL_MEM_FENCE);

// Writes a group's result to partial slot g: sum, squares, min, max.
#define WRITE_PARTIAL(partial, g, s, q, mn, mx)                         \
    {                                                                   \
        partial[4 * (g)] = (s);                                         \
        partial[4 * (g) + 1] = (q);                                     \
        partial[4 * (g) + 2] = (mn);                                    \
        partial[4 * (g) + 3] = (mx);                                    \
    }

// The work-item's share of the group's block: `per` loads of items
// first + r * LWS + lid (coalesced per r) of `count`, each `raw_t` value
// loaded by `load` and passed to `add`. A block wholly inside the image
// takes no bounds checks and issues UNROLL loads before their adds.
#define WALK(raw_t, load, add, count)                                   \
    if (first + (size_t)LWS * per <= (count)) {                         \
        int r_ = 0;                                                     \
        for (; r_ + UNROLL <= per; r_ += UNROLL) {                      \
            raw_t w_[UNROLL];                                           \
            for (int u_ = 0; u_ < UNROLL; u_++)                         \
                w_[u_] = load(first + (size_t)(r_ + u_) * LWS + lid);   \
            for (int u_ = 0; u_ < UNROLL; u_++) add(w_[u_]);            \
        }                                                               \
        for (; r_ < per; r_++) add(load(first + (size_t)r_ * LWS + lid)); \
    } else {                                                            \
        for (int r_ = 0; r_ < per; r_++) {                              \
            size_t i_ = first + (size_t)r_ * LWS + lid;                 \
            if (i_ < (count)) add(load(i_));                            \
        }                                                               \
    }

// Whether work-item lid of the group whose block starts at `first` owns item j.
inline bool is_mine(size_t j, size_t first, int per, int lid)
{
    return j >= first && j - first < (size_t)LWS * per && (j - first) % LWS == (size_t)lid;
}

#ifndef INT_STATS
// Adds v to the compensated sum (s, c) of type `ty`; the sum is s - c.
#define KAHAN_ADD(ty, s, c, v)                                          \
    {                                                                   \
        ty y_ = (v) - (c);                                              \
        ty t_ = (s) + y_;                                               \
        (c) = select((ty)(0.0f), (t_ - (s)) - y_, isfinite(t_));        \
        (s) = t_;                                                       \
    }

// A compensated sum's value (finite sums only carry a compensation).
#define SETTLE(ty, s, c) ((s) - select((ty)(0.0f), (c), isfinite(s)))

// The shift K: the first pixel where finite, else 0 (per channel).
inline FLOATN shift_of(__global const T* in)
{
    FLOATN p = TO_FLOATN(LOADP(in, 0));
    return select((FLOATN)(0.0f), p, isfinite(p));
}

// A work-item's running values, lanes of type `ty`, about the shift k.
#define STATE(ty)                                                       \
    ty s = (ty)(0.0f), cs = (ty)(0.0f), q = (ty)(0.0f), cq = (ty)(0.0f); \
    ty mn = (ty)(INFINITY), mx = (ty)(-INFINITY);
#define ADD_F(ty, v)                                                    \
    {                                                                   \
        ty v_ = (v), d_ = v_ - k;                                       \
        KAHAN_ADD(ty, s, cs, v_)                                        \
        KAHAN_ADD(ty, q, cq, d_ * d_)                                   \
        mn = fmin(mn, v_);                                              \
        mx = fmax(mx, v_);                                              \
    }
#define ADD_PIX(p) ADD_F(FLOATN, TO_FLOATN(p))
#define ADD_QUAD(p) ADD_F(float4, convert_float4(p))
#define LOAD_PIX(i) LOADPIX(in, i)
#define LOAD_QUAD(j) LOADQUAD(in, j)

__kernel void stats_tree(__global const T* in, int n, int per, __global float4* partial)
{
    __local FLOATN ls[LWS], lq[LWS], lmn[LWS], lmx[LWS];
    int lid = get_local_id(0);
    size_t g = get_global_id(0) / LWS;
    size_t first = g * (size_t)LWS * per;
    FLOATN k = shift_of(in);
    STATE(FLOATN)
    WALK(PIX, LOAD_PIX, ADD_PIX, (size_t)n)
    ls[lid] = SETTLE(FLOATN, s, cs);
    lq[lid] = SETTLE(FLOATN, q, cq);
    lmn[lid] = mn;
    lmx[lid] = mx;
    TREE4(ls, lq, lmn, lmx, lid, fmin, fmax)
    if (lid == 0)
        WRITE_PARTIAL(partial, g, N_TO_F4(ls[0]), N_TO_F4(lq[0]), N_TO_F4(lmn[0]), N_TO_F4(lmx[0]))
}

#if CH == 1
// Gray only: four adjacent samples per vector load (quad j is samples
// 4j..4j+3); the last quad may be partial, its missing samples left out.
// Blocks are counted in quads.
__kernel void stats_tree_vec4(__global const T* in, int n, int per, __global float4* partial)
{
    __local float ls[LWS], lq[LWS], lmn[LWS], lmx[LWS];
    int lid = get_local_id(0);
    size_t g = get_global_id(0) / LWS;
    size_t first = g * (size_t)LWS * per;
    size_t total = (size_t)n, whole = total / 4;
    float k = shift_of(in);
    STATE(float4)
    WALK(QUAD, LOAD_QUAD, ADD_QUAD, whole)
    if (4 * whole < total && is_mine(whole, first, per, lid)) {
        // The partial last quad, in the block after the whole ones: its
        // missing samples are left out (select), never read.
        size_t b = 4 * whole;
        float4 v = (float4)(convert_float(in[b]), b + 1 < total ? convert_float(in[b + 1]) : 0.0f,
                            b + 2 < total ? convert_float(in[b + 2]) : 0.0f, 0.0f);
        int4 ok = (int4)(-1, b + 1 < total ? -1 : 0, b + 2 < total ? -1 : 0, 0);
        float4 d = v - k;
        KAHAN_ADD(float4, s, cs, select((float4)(0.0f), v, ok))
        KAHAN_ADD(float4, q, cq, select((float4)(0.0f), d * d, ok))
        mn = fmin(mn, select((float4)(INFINITY), v, ok));
        mx = fmax(mx, select((float4)(-INFINITY), v, ok));
    }
    s = SETTLE(float4, s, cs);
    q = SETTLE(float4, q, cq);
    ls[lid] = (s.x + s.y) + (s.z + s.w);
    lq[lid] = (q.x + q.y) + (q.z + q.w);
    lmn[lid] = fmin(fmin(mn.x, mn.y), fmin(mn.z, mn.w));
    lmx[lid] = fmax(fmax(mx.x, mx.y), fmax(mx.z, mx.w));
    TREE4(ls, lq, lmn, lmx, lid, fmin, fmax)
    if (lid == 0)
        WRITE_PARTIAL(partial, g, (float4)(ls[0], 0.0f, 0.0f, 0.0f), (float4)(lq[0], 0.0f, 0.0f, 0.0f),
                      (float4)(lmn[0], 0.0f, 0.0f, 0.0f), (float4)(lmx[0], 0.0f, 0.0f, 0.0f))
}
#endif

// The final pass, shared by every variant: one work-group of LWS combines
// `groups` partials (compensated walks, then the tree) into result[0..3]
// (sum, shifted squares, min, max) and writes the shift K to result[4].
__kernel void stats_final(__global const T* in, __global const float4* partial, int groups,
                          __global float4* result)
{
    __local float4 ls[LWS], lq[LWS], lmn[LWS], lmx[LWS];
    int lid = get_local_id(0);
    float4 s = (float4)(0.0f), cs = (float4)(0.0f);
    float4 q = (float4)(0.0f), cq = (float4)(0.0f);
    float4 mn = (float4)(INFINITY), mx = (float4)(-INFINITY);
    // One group walks every partial: this kernel is never split.
    for (int g = lid; g < groups; g += LWS) {
        KAHAN_ADD(float4, s, cs, partial[4 * g])
        KAHAN_ADD(float4, q, cq, partial[4 * g + 1])
        mn = fmin(mn, partial[4 * g + 2]);
        mx = fmax(mx, partial[4 * g + 3]);
    }
    ls[lid] = SETTLE(float4, s, cs);
    lq[lid] = SETTLE(float4, q, cq);
    lmn[lid] = mn;
    lmx[lid] = mx;
    TREE4(ls, lq, lmn, lmx, lid, fmin, fmax)
    if (lid == 0) {
        result[0] = ls[0];
        result[1] = lq[0];
        result[2] = lmn[0];
        result[3] = lmx[0];
        result[4] = N_TO_F4(shift_of(in));
    }
}

#else
// Integer samples: lanes of uint, squares of SQ_T, group and final sums of ulong.
#define UINTN VEC(uint)
#define ULONGN VEC(ulong)
#define SQN VEC(SQ_T)
#if CH == 1
#define N_TO_L4(v) ((ulong4)((v), 0ul, 0ul, 0ul))
#elif CH == 3
#define N_TO_L4(v) ((ulong4)((v), 0ul))
#else
#define N_TO_L4(v) (v)
#endif

#define STATE(ty, sq)                                                   \
    ty s = (ty)(0), mn = (ty)(UINT_MAX), mx = (ty)(0);                  \
    sq q = (sq)(0);
#define ADD_I(ty, sq, v)                                                \
    {                                                                   \
        ty v_ = (v);                                                    \
        s += v_;                                                        \
        q += CAT(convert_, sq)(v_ * v_);                                \
        mn = min(mn, v_);                                               \
        mx = max(mx, v_);                                               \
    }
#define ADD_PIX(p) ADD_I(UINTN, SQN, CAT(convert_, UINTN)(p))
#define ADD_QUAD(p) ADD_I(uint4, CAT(SQ_T, 4), convert_uint4(p))
#define LOAD_PIX(i) LOADPIX(in, i)
#define LOAD_QUAD(j) LOADQUAD(in, j)
#define IS_BYTE_uchar 1
// The four RGBA pixels of a uint4.
#define ADD_WORDS(wd)                                                   \
    {                                                                   \
        uint4 x_ = (wd);                                                \
        ADD_PIX(as_uchar4(x_.x))                                        \
        ADD_PIX(as_uchar4(x_.y))                                        \
        ADD_PIX(as_uchar4(x_.z))                                        \
        ADD_PIX(as_uchar4(x_.w))                                        \
    }

#if CH == 3 && CAT(IS_BYTE_, T)
// u8 RGB: 16 bytes of a block per load. Byte b of the block is channel
// b % 3 (a block starts at a multiple of 3 * LWS * per bytes), and 16 = 1
// (mod 3), so byte k of the load that starts at block byte 16 j is
// channel (j + k) % 3: a load's bytes fall in three classes k % 3, and
// class m goes to channel (m + j) % 3. Three-byte pixel loads read 48 %
// of copy bandwidth on the H200 (8192x8192, s46); 16-byte loads 56-57 %
// (s47).
#define RGB_CLASS(f, u, a, b, c, d, e, g) f(f(f(u.a, u.b), f(u.c, u.d)), f(u.e, g))
#define RGB_ADD(x, y) ((x) + (y))
// The load w of block load index j into the work-item's state.
#define ADD_RGB_LOAD(w, j)                                              \
    {                                                                   \
        uint16 u_ = convert_uint16(as_uchar16(w)), q_ = u_ * u_;        \
        uint3 cs_ = (uint3)(RGB_CLASS(RGB_ADD, u_, s0, s3, s6, s9, sc, u_.sf), \
                            RGB_CLASS(RGB_ADD, u_, s1, s4, s7, sa, sd, 0u),    \
                            RGB_CLASS(RGB_ADD, u_, s2, s5, s8, sb, se, 0u));   \
        uint3 cq_ = (uint3)(RGB_CLASS(RGB_ADD, q_, s0, s3, s6, s9, sc, q_.sf), \
                            RGB_CLASS(RGB_ADD, q_, s1, s4, s7, sa, sd, 0u),    \
                            RGB_CLASS(RGB_ADD, q_, s2, s5, s8, sb, se, 0u));   \
        uint3 cn_ = (uint3)(RGB_CLASS(min, u_, s0, s3, s6, s9, sc, u_.sf),     \
                            RGB_CLASS(min, u_, s1, s4, s7, sa, sd, u_.s1),     \
                            RGB_CLASS(min, u_, s2, s5, s8, sb, se, u_.s2));    \
        uint3 cx_ = (uint3)(RGB_CLASS(max, u_, s0, s3, s6, s9, sc, u_.sf),     \
                            RGB_CLASS(max, u_, s1, s4, s7, sa, sd, 0u),        \
                            RGB_CLASS(max, u_, s2, s5, s8, sb, se, 0u));       \
        /* Channel c takes class (c - p) mod 3, p = j % 3. */           \
        uint p_ = (uint)(j) % 3;                                        \
        s += p_ == 0 ? cs_ : p_ == 1 ? cs_.zxy : cs_.yzx;               \
        q += p_ == 0 ? cq_ : p_ == 1 ? cq_.zxy : cq_.yzx;               \
        mn = min(mn, p_ == 0 ? cn_ : p_ == 1 ? cn_.zxy : cn_.yzx);      \
        mx = max(mx, p_ == 0 ? cx_ : p_ == 1 ? cx_.zxy : cx_.yzx);      \
    }
#endif

__kernel void stats_tree(__global const T* in, int n, int per, __global ulong4* partial)
{
    __local ULONGN ls[LWS], lq[LWS];
    __local UINTN lmn[LWS], lmx[LWS];
    int lid = get_local_id(0);
    size_t g = get_global_id(0) / LWS;
    size_t first = g * (size_t)LWS * per;
    STATE(UINTN, SQN)
#if CH == 4 && CAT(IS_BYTE_, T)
    // u8 RGBA: four pixels per 16-byte load (quads of the same block, so
    // the same sums), fewer loads and index computations per pixel.
    if (per % 4 == 0 && first + (size_t)LWS * per <= (size_t)n) {
        __global const uint4* w4 = (__global const uint4*)in + first / 4 + lid;
        int loads = per / 4, r = 0;
        for (; r + UNROLL <= loads; r += UNROLL) {
            uint4 w_[UNROLL];
            for (int u = 0; u < UNROLL; u++) w_[u] = w4[(size_t)(r + u) * LWS];
            for (int u = 0; u < UNROLL; u++) ADD_WORDS(w_[u])
        }
        for (; r < loads; r++) ADD_WORDS(w4[(size_t)r * LWS])
    } else
#elif CH == 3 && CAT(IS_BYTE_, T)
    // The host makes per a multiple of 16 for u8 colour: whole loads.
    if (per % 16 == 0 && first + (size_t)LWS * per <= (size_t)n) {
        __global const uint4* w4 = (__global const uint4*)(in + 3 * first) + lid;
        int loads = 3 * per / 16, r = 0;
        for (; r + UNROLL <= loads; r += UNROLL) {
            uint4 w_[UNROLL];
            for (int u = 0; u < UNROLL; u++) w_[u] = w4[(size_t)(r + u) * LWS];
            for (int u = 0; u < UNROLL; u++) ADD_RGB_LOAD(w_[u], (r + u) * LWS + lid)
        }
        for (; r < loads; r++) ADD_RGB_LOAD(w4[(size_t)r * LWS], r * LWS + lid)
    } else
#endif
    WALK(PIX, LOAD_PIX, ADD_PIX, (size_t)n)
    ls[lid] = CAT(convert_, ULONGN)(s);
    lq[lid] = CAT(convert_, ULONGN)(q);
    lmn[lid] = mn;
    lmx[lid] = mx;
    TREE4(ls, lq, lmn, lmx, lid, min, max)
    if (lid == 0)
        WRITE_PARTIAL(partial, g, N_TO_L4(ls[0]), N_TO_L4(lq[0]),
                      N_TO_L4(CAT(convert_, ULONGN)(lmn[0])), N_TO_L4(CAT(convert_, ULONGN)(lmx[0])))
}

#if CH == 1
// The quads of a 16-byte word: 4 of uchar, 2 of ushort.
#if CAT(IS_BYTE_, T)
#define QPL 4
#define ADD_QUADS(wd)                                                   \
    {                                                                   \
        uint4 x_ = (wd);                                                \
        ADD_QUAD(as_uchar4(x_.x))                                       \
        ADD_QUAD(as_uchar4(x_.y))                                       \
        ADD_QUAD(as_uchar4(x_.z))                                       \
        ADD_QUAD(as_uchar4(x_.w))                                       \
    }
#else
#define QPL 2
#define ADD_QUADS(wd)                                                   \
    {                                                                   \
        uint4 x_ = (wd);                                                \
        ADD_QUAD(as_ushort4(x_.xy))                                     \
        ADD_QUAD(as_ushort4(x_.zw))                                     \
    }
#endif

// Gray only: quads as in the float path; the partial last quad's missing
// samples add 0 and take no part in min and max.
__kernel void stats_tree_vec4(__global const T* in, int n, int per, __global ulong4* partial)
{
    __local ulong ls[LWS], lq[LWS];
    __local uint lmn[LWS], lmx[LWS];
    int lid = get_local_id(0);
    size_t g = get_global_id(0) / LWS;
    size_t first = g * (size_t)LWS * per;
    size_t total = (size_t)n, whole = total / 4;
    STATE(uint4, CAT(SQ_T, 4))
    // A whole block in 16-byte loads of QPL quads each: the block's quads,
    // so the same exact sums, in fewer and wider loads (one quad per load
    // read 50 % of copy bandwidth for u8 on an H100). Each lane still adds
    // `per` samples.
    if (per % QPL == 0 && first + (size_t)LWS * per <= whole) {
        __global const uint4* w4 = (__global const uint4*)in + first / QPL + lid;
        int loads = per / QPL, r = 0;
        for (; r + UNROLL <= loads; r += UNROLL) {
            uint4 w_[UNROLL];
            for (int u = 0; u < UNROLL; u++) w_[u] = w4[(size_t)(r + u) * LWS];
            for (int u = 0; u < UNROLL; u++) ADD_QUADS(w_[u])
        }
        for (; r < loads; r++) ADD_QUADS(w4[(size_t)r * LWS])
    } else
    WALK(QUAD, LOAD_QUAD, ADD_QUAD, whole)
    if (4 * whole < total && is_mine(whole, first, per, lid)) {
        size_t b = 4 * whole;
        int4 ok = (int4)(-1, b + 1 < total ? -1 : 0, b + 2 < total ? -1 : 0, 0);
        uint4 v = (uint4)((uint)in[b], b + 1 < total ? (uint)in[b + 1] : 0u,
                          b + 2 < total ? (uint)in[b + 2] : 0u, 0u);
        s += v;
        q += CAT(convert_, CAT(SQ_T, 4))(v * v);
        mn = min(mn, select((uint4)(UINT_MAX), v, ok));
        mx = max(mx, v);
    }
    ls[lid] = ((ulong)s.x + s.y) + ((ulong)s.z + s.w);
    lq[lid] = ((ulong)q.x + q.y) + ((ulong)q.z + q.w);
    lmn[lid] = min(min(mn.x, mn.y), min(mn.z, mn.w));
    lmx[lid] = max(max(mx.x, mx.y), max(mx.z, mx.w));
    TREE4(ls, lq, lmn, lmx, lid, min, max)
    if (lid == 0)
        WRITE_PARTIAL(partial, g, N_TO_L4(ls[0]), N_TO_L4(lq[0]), N_TO_L4((ulong)lmn[0]),
                      N_TO_L4((ulong)lmx[0]))
}
#endif

// The final pass: one work-group adds `groups` partials (exact) into
// result[0..3]: sum, sum of squares, min, max.
__kernel void stats_final(__global const T* in, __global const ulong4* partial, int groups,
                          __global ulong4* result)
{
    __local ulong4 ls[LWS], lq[LWS], lmn[LWS], lmx[LWS];
    int lid = get_local_id(0);
    ulong4 s = (ulong4)(0), q = (ulong4)(0);
    ulong4 mn = (ulong4)(UINT_MAX), mx = (ulong4)(0);
    // One group walks every partial: this kernel is never split.
    for (int g = lid; g < groups; g += LWS) {
        s += partial[4 * g];
        q += partial[4 * g + 1];
        mn = min(mn, partial[4 * g + 2]);
        mx = max(mx, partial[4 * g + 3]);
    }
    ls[lid] = s;
    lq[lid] = q;
    lmn[lid] = mn;
    lmx[lid] = mx;
    TREE4(ls, lq, lmn, lmx, lid, min, max)
    if (lid == 0) {
        result[0] = ls[0];
        result[1] = lq[0];
        result[2] = lmn[0];
        result[3] = lmx[0];
    }
}
#endif
