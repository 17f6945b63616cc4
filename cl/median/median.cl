// median.cl: the median of the (2R+1)x(2R+1) window around each pixel,
// per channel, with replicate (clamp-to-edge) borders. The alpha channel
// of 4-channel images is copied, not filtered.
// Options: R (radius 1..3), KEY_FLOAT (1 when T is float), TILE (the
// local variant's work-group edge).
//
// Samples are compared as uint keys that keep their order: integers as
// they are, floats through the IEEE-754 totalOrder transform (negative:
// all bits flipped; positive: the sign bit set), so -NaN < -inf < -0 <
// +0 < +inf < +NaN and the selected key converts back to the very bits
// it came from. Every variant selects with min/max only, so all are exact.

#ifndef R
#error "R (the radius) must be defined"
#endif
#ifndef KEY_FLOAT
#error "KEY_FLOAT must be defined"
#endif

#define DIAM (2 * R + 1)
#define N (DIAM * DIAM)
// Channels that are filtered: alpha (the 4th) is copied.
#define FILTERED (CH == 4 ? 3 : CH)

#if KEY_FLOAT
inline uint to_key(float v)
{
    uint b = as_uint(v);
    return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
}
inline float from_key(uint k)
{
    return as_float((k & 0x80000000u) ? (k & 0x7fffffffu) : ~k);
}
#else
inline uint to_key(T v) { return (uint)v; }
inline T from_key(uint k) { return (T)k; }
#endif

#define CAS(a, b) { uint t_ = min((a), (b)); (b) = max((a), (b)); (a) = t_; }

// The median of v[0..N); v is scrambled.
inline uint select_median(uint* v)
{
#if R == 1
    // The 19-exchange median-of-9 network (Paeth; Devillard's opt_med9).
    CAS(v[1], v[2]); CAS(v[4], v[5]); CAS(v[7], v[8]);
    CAS(v[0], v[1]); CAS(v[3], v[4]); CAS(v[6], v[7]);
    CAS(v[1], v[2]); CAS(v[4], v[5]); CAS(v[7], v[8]);
    CAS(v[0], v[3]); CAS(v[5], v[8]); CAS(v[4], v[7]);
    CAS(v[3], v[6]); CAS(v[1], v[4]); CAS(v[2], v[5]);
    CAS(v[4], v[7]); CAS(v[4], v[2]); CAS(v[6], v[4]);
    CAS(v[4], v[2]);
    return v[4];
#else
    // Forgetful selection: of N = 2M+1 values, a window of M+2 holds the
    // median's candidates. Its minimum and maximum cannot be the median
    // (each has M+1 values on its other side), so both leave, and the next
    // value takes the maximum's slot; M rounds leave the median in the
    // middle of the last three.
#define MID (N / 2)
#define HI (MID + 2)
#pragma unroll
    for (int lo = 0; lo < MID; lo++) {
#pragma unroll
        for (int i = lo + 1; i < HI; i++)
            CAS(v[lo], v[i]);
#pragma unroll
        for (int i = lo + 1; i < HI - 1; i++)
            CAS(v[i], v[HI - 1]);
        if (lo < MID - 1)
            v[HI - 1] = v[HI + lo];
    }
    return v[MID];
#endif
}

// One work-item per pixel; the window is read from global memory into
// registers and selected there.
__kernel void median_network(__global const T* in, __global T* out, int width, int height)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= width || y >= height)
        return;
    size_t o = ((size_t)y * width + x) * CH;
    for (int c = 0; c < FILTERED; c++) {
        uint v[N];
#pragma unroll
        for (int dy = 0; dy < DIAM; dy++) {
            size_t row = (size_t)clamp(y + dy - R, 0, height - 1) * width;
#pragma unroll
            for (int dx = 0; dx < DIAM; dx++) {
                int xx = clamp(x + dx - R, 0, width - 1);
                v[dy * DIAM + dx] = to_key(in[(row + xx) * CH + c]);
            }
        }
        out[o + c] = from_key(select_median(v));
    }
    if (CH == 4)
        out[o + 3] = in[o + 3];
}

#ifdef TILE
#define TW (TILE + 2 * R)
// A TILE x TILE work-group stages its tile plus the radius as keys in
// local memory, one channel at a time, so each sample is read from global
// memory about once instead of N times. The tile's origin comes from
// get_global_id, so a launch split with a global work offset still works.
__kernel void median_local(__global const T* in, __global T* out, int width, int height)
{
    __local uint tile[TW * TW];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x = get_global_id(0), y = get_global_id(1);
    int x0 = x - lx - R, y0 = y - ly - R;
    bool inside = x < width && y < height;
    size_t o = ((size_t)y * width + x) * CH;
    for (int c = 0; c < FILTERED; c++) {
        barrier(CLK_LOCAL_MEM_FENCE);  // the previous channel's reads are done
        for (int i = ly * TILE + lx; i < TW * TW; i += TILE * TILE) {
            int xx = clamp(x0 + i % TW, 0, width - 1);
            int yy = clamp(y0 + i / TW, 0, height - 1);
            tile[i] = to_key(in[((size_t)yy * width + xx) * CH + c]);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (inside) {
            uint v[N];
#pragma unroll
            for (int dy = 0; dy < DIAM; dy++)
#pragma unroll
                for (int dx = 0; dx < DIAM; dx++)
                    v[dy * DIAM + dx] = tile[(ly + dy) * TW + lx + dx];
            out[o + c] = from_key(select_median(v));
        }
    }
    if (CH == 4 && inside)
        out[o + 3] = in[o + 3];
}
#endif
