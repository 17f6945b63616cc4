// stats.cl: per-channel sum, sum of shifted squares, minimum and maximum
// of a whole image in one pass over it, then one small pass over the
// work-groups' partials. The host turns the result into sum, mean,
// population standard deviation, min and max (src/ops/stats/mod.rs).
// Options: LWS (work-group size, a power of two), PER_ITEM (loads per
// work-item).
//
// The squares are taken about a shift K per channel: the image's first
// pixel where it is finite, else 0. Sum((x - K)^2) stays close to
// n * variance when K is a typical sample, where sum(x^2) would cancel
// against n * mean^2. Each work-item keeps compensated (Kahan) sums, the
// group combines them in a local-memory tree, and stats_final does the
// same over the groups; docs/QUALITY.md states the bound. A non-finite
// running sum drops its compensation, so an infinity stays an infinity
// and NaN stays NaN, as in f64. min/max ignore NaN (fmin/fmax).
//
// Chunk safety: work-group g covers the fixed block of LWS * PER_ITEM
// pixels (or quads) starting at g * LWS * PER_ITEM, with g computed from
// get_global_id(0) / LWS (the global id includes a launch's offset), and
// writes partial slot g. A launch split into chunks of whole groups
// writes the same partials. stats_final is one work-group.

#ifndef LWS
#error "LWS must be defined"
#endif
#ifndef PER_ITEM
#error "PER_ITEM must be defined"
#endif

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

// A local-memory tree over LWS entries of the four arrays; entry 0 holds
// the result. Every work-item of the group must reach it.
#define TREE4(ls, lq, lmn, lmx, lid)                                    \
    for (int s_ = LWS / 2; s_ > 0; s_ >>= 1) {                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                   \
        if ((lid) < s_) {                                               \
            ls[lid] += ls[(lid) + s_];                                  \
            lq[lid] += lq[(lid) + s_];                                  \
            lmn[lid] = fmin(lmn[lid], lmn[(lid) + s_]);                 \
            lmx[lid] = fmax(lmx[lid], lmx[(lid) + s_]);                 \
        }                                                               \
    }                                                                   \
    barrier(CLK_LOCAL_MEM_FENCE);

// A pixel of `in`. vload4 promises only the sample's alignment, so a
// compiler may split it into four loads (NVIDIA's does for uchar4); a
// 4-channel pixel of a buffer (the buffer's start is aligned far more) is
// aligned to its whole size, so it loads as one vector.
#if CH == 4
#define LOADPIX(p, i) (((__global const PIX*)(p))[(i)])
#else
#define LOADPIX(p, i) LOADP(p, i)
#endif

// The shift K: the first pixel where finite, else 0 (per channel).
inline FLOATN shift_of(__global const T* in)
{
    FLOATN p = TO_FLOATN(LOADP(in, 0));
    return select((FLOATN)(0.0f), p, isfinite(p));
}

// Writes a group's result to partial slot g: sum, shifted squares, min, max.
#define WRITE_PARTIAL(partial, g, s, q, mn, mx)                         \
    {                                                                   \
        partial[4 * (g)] = (s);                                         \
        partial[4 * (g) + 1] = (q);                                     \
        partial[4 * (g) + 2] = (mn);                                    \
        partial[4 * (g) + 3] = (mx);                                    \
    }

// One pixel per load: work-item `lid` of group g reads pixels
// g * LWS * PER_ITEM + r * LWS + lid, r < PER_ITEM (coalesced per r).
__kernel void stats_tree(__global const T* in, int n, __global float4* partial)
{
    __local FLOATN ls[LWS], lq[LWS], lmn[LWS], lmx[LWS];
    int lid = get_local_id(0);
    size_t g = get_global_id(0) / LWS;
    size_t first = g * (size_t)(LWS * PER_ITEM);
    FLOATN k = shift_of(in);
    FLOATN s = (FLOATN)(0.0f), cs = (FLOATN)(0.0f);
    FLOATN q = (FLOATN)(0.0f), cq = (FLOATN)(0.0f);
    FLOATN mn = (FLOATN)(INFINITY), mx = (FLOATN)(-INFINITY);
    for (int r = 0; r < PER_ITEM; r++) {
        size_t i = first + (size_t)r * LWS + lid;
        if (i < (size_t)n) {
            FLOATN v = TO_FLOATN(LOADPIX(in, i));
            FLOATN d = v - k;
            KAHAN_ADD(FLOATN, s, cs, v)
            KAHAN_ADD(FLOATN, q, cq, d * d)
            mn = fmin(mn, v);
            mx = fmax(mx, v);
        }
    }
    ls[lid] = SETTLE(FLOATN, s, cs);
    lq[lid] = SETTLE(FLOATN, q, cq);
    lmn[lid] = mn;
    lmx[lid] = mx;
    TREE4(ls, lq, lmn, lmx, lid)
    if (lid == 0)
        WRITE_PARTIAL(partial, g, N_TO_F4(ls[0]), N_TO_F4(lq[0]), N_TO_F4(lmn[0]), N_TO_F4(lmx[0]))
}

#if CH == 1
// Gray only: four adjacent samples per vector load (quad j is samples
// 4j..4j+3); the last quad may be partial, its missing samples left out.
// Blocks are counted in quads.
__kernel void stats_tree_vec4(__global const T* in, int n, __global float4* partial)
{
    __local float ls[LWS], lq[LWS], lmn[LWS], lmx[LWS];
    int lid = get_local_id(0);
    size_t g = get_global_id(0) / LWS;
    size_t first = g * (size_t)(LWS * PER_ITEM);
    size_t total = (size_t)n, quads = (total + 3) / 4;
    float k = shift_of(in);
    float4 s = (float4)(0.0f), cs = (float4)(0.0f);
    float4 q = (float4)(0.0f), cq = (float4)(0.0f);
    float4 mn = (float4)(INFINITY), mx = (float4)(-INFINITY);
    for (int r = 0; r < PER_ITEM; r++) {
        size_t j = first + (size_t)r * LWS + lid;
        if (j < quads) {
            size_t b = 4 * j;
            float4 v;
            int4 ok;
            if (b + 4 <= total) {
                v = CAT(convert_, float4)(vload4(j, in));
                ok = (int4)(-1);
            } else {
                // The partial last quad: never read past the image.
                v = (float4)(convert_float(in[b]),
                             b + 1 < total ? convert_float(in[b + 1]) : 0.0f,
                             b + 2 < total ? convert_float(in[b + 2]) : 0.0f, 0.0f);
                ok = (int4)(-1, b + 1 < total ? -1 : 0, b + 2 < total ? -1 : 0, 0);
            }
            float4 d = v - k;
            KAHAN_ADD(float4, s, cs, select((float4)(0.0f), v, ok))
            KAHAN_ADD(float4, q, cq, select((float4)(0.0f), d * d, ok))
            mn = fmin(mn, select((float4)(INFINITY), v, ok));
            mx = fmax(mx, select((float4)(-INFINITY), v, ok));
        }
    }
    s = SETTLE(float4, s, cs);
    q = SETTLE(float4, q, cq);
    ls[lid] = (s.x + s.y) + (s.z + s.w);
    lq[lid] = (q.x + q.y) + (q.z + q.w);
    lmn[lid] = fmin(fmin(mn.x, mn.y), fmin(mn.z, mn.w));
    lmx[lid] = fmax(fmax(mx.x, mx.y), fmax(mx.z, mx.w));
    TREE4(ls, lq, lmn, lmx, lid)
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
    TREE4(ls, lq, lmn, lmx, lid)
    if (lid == 0) {
        result[0] = ls[0];
        result[1] = lq[0];
        result[2] = lmn[0];
        result[3] = lmx[0];
        result[4] = N_TO_F4(shift_of(in));
    }
}
