// bilateral.cl: the bilateral filter, one output pixel per work-item.
//
// Weight of tap (dx, dy), dx² + dy² <= r²:
//   exp(-(dx² + dy²) ks) * exp(-|I(q) - I(p)|² kr),
// ks = 1 / (2 sigma_s²), kr = 1 / (2 sigma_r²) in sample units (both from
// Rust). f32 samples (T_FLOAT 1) scale each difference by
// rk = sqrt(kr) = 1 / (sigma_r sqrt 2) before squaring it: the square of a
// difference of f32 samples (up to 2^121) would overflow, and kr overflow
// or underflow for a sigma_r far from 1, where the scaled difference does
// neither (an infinite one is a weight of 0, never NaN). Integer samples
// differ by less than 65536, so their squares are exact and rk is kr itself
// (capped at FLT_MAX: a zero difference still weighs 1), which saves the
// multiply. The colour distance is over 1 channel (CH 1) or 3 (CH 3, 4); the
// 4th channel (RGBA's alpha, or the unused lane of a pipeline's RGB
// working image) is copied. The centre's weight is 1, so the sum of
// weights is at least 1.
//
// Options (from Rust):
//   T_FLOAT    1 when T is float (results stored as they are), else 0
//              (rounded half to even and saturated: convert_T_sat_rte)
//   MIRROR     defined: half-sample symmetric border (cba|abc); else replicate
//   TX, TY     the local variants' work-group (tile) size
//   LOCAL_RMAX the largest radius their tiles hold
//
// Exact variants call exp() (<= 3 ulp in OpenCL 1.2's full profile). Fast
// variants (`fast*`) read (dx, dy, spatial weight) from a table in
// constant memory and take the range weight from native_exp.

#ifndef T_FLOAT
#error "T_FLOAT must be passed with -D"
#endif

// Border index.
#ifdef MIRROR
inline int border_index(int i, int n)
{
    int m = i % (2 * n);
    if (m < 0) m += 2 * n;
    return m < n ? m : 2 * n - 1 - m;
}
#else
inline int border_index(int i, int n) { return clamp(i, 0, n - 1); }
#endif

// Colour values: a float (gray) or a float4 whose 4th lane is 0, so the
// squared distance is dot(d, d) over the colours only.
#if CH == 1
#define COLV float
#define LOADC(p, i) convert_float((p)[(i)])
#define DIST2(d) ((d) * (d))
#elif CH == 3
#define COLV float4
#define LOADC(p, i) ((float4)(convert_float3(vload3((i), (p))), 0.0f))
#define DIST2(d) dot((d), (d))
#else
#define COLV float4
#define LOADC(p, i) ((float4)(convert_float4(vload4((i), (p))).xyz, 0.0f))
#define DIST2(d) dot((d), (d))
#endif

#if T_FLOAT
#define TO_T(v) (v)
#define TO_T3(v) (v)
#define TO_T4(v) (v)
#else
#define TO_T(v) CAT(CAT(convert_, T), _sat_rte)(v)
#define TO_T3(v) CAT(CAT(convert_, VEC3(T)), _sat_rte)(v)
#define TO_T4(v) CAT(CAT(convert_, VEC4(T)), _sat_rte)(v)
#endif
#define VEC3(t) CAT(t, 3)
#define VEC4(t) CAT(t, 4)

// Stores pixel i: the colours from v, alpha copied from the input.
inline void store_px(__global const T* in, __global T* out, int i, COLV v)
{
#if CH == 1
    out[i] = TO_T(v);
#elif CH == 3
    vstore3(TO_T3(v.xyz), i, out);
#else
    vstore3(TO_T3(v.xyz), 0, out + 4 * i);
    out[4 * i + 3] = in[4 * i + 3];
#endif
}

// floor(sqrt(q)) for 0 <= q, exact (sqrt may be 3 ulp off).
inline int isqrt(int q)
{
    int s = (int)sqrt((float)q);
    while (s * s > q) s--;
    while ((s + 1) * (s + 1) <= q) s++;
    return s;
}

// A tap's colour difference, and its range exponent from its squared
// length d2 (see the top).
#if T_FLOAT
#define RANGE_D(n, c) (((n) - (c)) * rk)
#define RANGE_E(d2) (d2)
#else
#define RANGE_D(n, c) ((n) - (c))
#define RANGE_E(d2) ((d2) * rk)
#endif
// The exact weight of a tap at squared distance s2 with colour distance d2.
#define EXACT_W(s2, d2) exp(-(float)(s2) * ks - RANGE_E(d2))
// The fast weight: the tap's spatial weight times the range weight.
#define FAST_W(sw, d2) ((sw) * native_exp(-RANGE_E(d2)))

// One work-item per pixel; every tap read from global memory with the
// border applied. Exact.
__kernel void bilateral_direct(__global const T* in, __global T* out, int w, int h,
                               int r, float rk, float ks)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    COLV c = LOADC(in, y * w + x);
    COLV acc = 0.0f;
    float ws = 0.0f;
    for (int dy = -r; dy <= r; dy++) {
        int row = border_index(y + dy, h) * w;
        int rx = isqrt(r * r - dy * dy);
        for (int dx = -rx; dx <= rx; dx++) {
            COLV n = LOADC(in, row + border_index(x + dx, w));
            COLV d = RANGE_D(n, c);
            float wt = EXACT_W(dx * dx + dy * dy, DIST2(d));
            ws += wt;
            acc += wt * n;
        }
    }
    store_px(in, out, y * w + x, acc / ws);
}

// The taps from constant memory (x, y: offset; z: spatial weight) and
// native_exp. Fast.
__kernel void bilateral_fast(__global const T* in, __global T* out, int w, int h,
                             int r, float rk, __constant float4* taps, int ntaps)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    COLV c = LOADC(in, y * w + x);
    COLV acc = 0.0f;
    float ws = 0.0f;
    for (int k = 0; k < ntaps; k++) {
        float4 t = taps[k];
        int xx = border_index(x + (int)t.x, w), yy = border_index(y + (int)t.y, h);
        COLV n = LOADC(in, yy * w + xx);
        COLV d = RANGE_D(n, c);
        float wt = FAST_W(t.z, DIST2(d));
        ws += wt;
        acc += wt * n;
    }
    store_px(in, out, y * w + x, acc / ws);
}

#ifdef TX
#ifndef TY
#error "TY must be passed with -D"
#endif
#ifndef LOCAL_RMAX
#error "LOCAL_RMAX must be passed with -D"
#endif
#define TILE_STRIDE (TX + 2 * LOCAL_RMAX)

// Loads the group's TX x TY pixels and r around them into `tile` (row
// stride TILE_STRIDE), the border applied; every work-item of the group
// must call it.
inline void load_tile(__global const T* in, __local COLV* tile, int w, int h, int r)
{
    int x0 = GROUP_ID(0) * TX - r, y0 = GROUP_ID(1) * TY - r;
    int tw = TX + 2 * r, th = TY + 2 * r;
    int lid = get_local_id(1) * TX + get_local_id(0);
    for (int i = lid; i < tw * th; i += TX * TY) {
        int ly = i / tw, lx = i - ly * tw;
        int gx = border_index(x0 + lx, w), gy = border_index(y0 + ly, h);
        tile[ly * TILE_STRIDE + lx] = LOADC(in, gy * w + gx);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

// A TX x TY tile and its halo of r <= LOCAL_RMAX staged in local memory;
// every tap read from there. Exact.
__kernel void bilateral_local(__global const T* in, __global T* out, int w, int h,
                              int r, float rk, float ks)
{
    __local COLV tile[(TY + 2 * LOCAL_RMAX) * TILE_STRIDE];
    load_tile(in, tile, w, h, r);
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    __local const COLV* ctr = tile + (get_local_id(1) + r) * TILE_STRIDE + get_local_id(0) + r;
    COLV c = *ctr;
    COLV acc = 0.0f;
    float ws = 0.0f;
    for (int dy = -r; dy <= r; dy++) {
        int rx = isqrt(r * r - dy * dy);
        for (int dx = -rx; dx <= rx; dx++) {
            COLV n = ctr[dy * TILE_STRIDE + dx];
            COLV d = RANGE_D(n, c);
            float wt = EXACT_W(dx * dx + dy * dy, DIST2(d));
            ws += wt;
            acc += wt * n;
        }
    }
    store_px(in, out, y * w + x, acc / ws);
}

// bilateral_local with the taps from constant memory and native_exp. Fast.
__kernel void bilateral_fast_local(__global const T* in, __global T* out, int w, int h,
                                   int r, float rk, __constant float4* taps, int ntaps)
{
    __local COLV tile[(TY + 2 * LOCAL_RMAX) * TILE_STRIDE];
    load_tile(in, tile, w, h, r);
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    __local const COLV* ctr = tile + (get_local_id(1) + r) * TILE_STRIDE + get_local_id(0) + r;
    COLV c = *ctr;
    COLV acc = 0.0f;
    float ws = 0.0f;
    for (int k = 0; k < ntaps; k++) {
        float4 t = taps[k];
        COLV n = ctr[(int)t.y * TILE_STRIDE + (int)t.x];
        COLV d = RANGE_D(n, c);
        float wt = FAST_W(t.z, DIST2(d));
        ws += wt;
        acc += wt * n;
    }
    store_px(in, out, y * w + x, acc / ws);
}
#endif

#if CH == 4
// RGBA through the buffer as an array of T4 (uchar4, ushort4, float4):
// one aligned 4-, 8- or 16-byte load per tap where vload4 may be four
// loads of one sample. Buffers start aligned (OpenCL aligns them to at
// least 128 bytes) and pixels are packed.
#define PIX4 VEC4(T)
#define LOAD4(p, i) ((float4)(convert_float4((p)[(i)]).xyz, 0.0f))

inline void store4(__global const PIX4* in, __global PIX4* out, int i, float4 v)
{
    PIX4 o = TO_T4(v);
    o.w = in[i].w;
    out[i] = o;
}

// bilateral_direct on RGBA pixels as T4 vectors. Exact.
__kernel void bilateral_rgba(__global const PIX4* in, __global PIX4* out, int w, int h,
                             int r, float rk, float ks)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float4 c = LOAD4(in, y * w + x);
    float4 acc = 0.0f;
    float ws = 0.0f;
    for (int dy = -r; dy <= r; dy++) {
        __global const PIX4* row = in + border_index(y + dy, h) * w;
        int rx = isqrt(r * r - dy * dy);
        for (int dx = -rx; dx <= rx; dx++) {
            float4 n = LOAD4(row, border_index(x + dx, w));
            float4 d = RANGE_D(n, c);
            float wt = EXACT_W(dx * dx + dy * dy, dot(d, d));
            ws += wt;
            acc += wt * n;
        }
    }
    store4(in, out, y * w + x, acc / ws);
}

// bilateral_rgba with the taps from constant memory and native_exp. Fast.
__kernel void bilateral_fast_rgba(__global const PIX4* in, __global PIX4* out, int w, int h,
                                  int r, float rk, __constant float4* taps, int ntaps)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) return;
    float4 c = LOAD4(in, y * w + x);
    float4 acc = 0.0f;
    float ws = 0.0f;
    for (int k = 0; k < ntaps; k++) {
        float4 t = taps[k];
        int xx = border_index(x + (int)t.x, w), yy = border_index(y + (int)t.y, h);
        float4 n = LOAD4(in, yy * w + xx);
        float4 d = RANGE_D(n, c);
        float wt = FAST_W(t.z, dot(d, d));
        ws += wt;
        acc += wt * n;
    }
    store4(in, out, y * w + x, acc / ws);
}
#endif
