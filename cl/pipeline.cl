// pipeline.cl: the plumbing of device-resident pipelines.
//
// Between stages a pipeline keeps its image on the device as f32 working
// pixels: one float per pixel for gray, one float4 for colour (RGB leaves
// the fourth lane unused). Values are in the units of the stage's logical
// sample type (0..255 for u8, 0..65535 for u16, 0..1 for f32), unrounded;
// only the final store rounds and saturates, as convert_T_sat_rte does.
//
// Options: T (input sample type), CH (channels of the typed image: 1, 3, 4),
// TOUT and OUT_FLOAT for pipeline_store, DOUT and DOUT_FLOAT for
// pipeline_display, PACKED (1 PFNC 12p, 2 GigE 12Packed, 3 MIPI RAW12) for
// pipeline_unpack12.

#if CH == 1
#define W float
#define W_FROM_N(v) (v)
#define N_FROM_W(v) (v)
#else
#define W float4
#define W_FROM_N(v) N_TO_F4(v)
#define N_FROM_W(v) F4_TO_N(v)
#endif

// A typed image (T, CH channels) into working pixels.
__kernel void pipeline_load(__global const T* in, __global W* out, int n)
{
    int i = get_global_id(0);
    if (i < n) {
        out[i] = W_FROM_N(TO_FLOATN(LOADP(in, i)));
    }
}

#ifdef TOUT
#if OUT_FLOAT
#define TO_OUT(v) (v)
#else
#define TO_OUT(v) CAT(CAT(convert_, VEC(TOUT)), _sat_rte)(v)
#endif

// Working pixels, times `scale` (a pending type conversion), into a typed
// image of CH channels.
__kernel void pipeline_store(__global const W* in, __global TOUT* out, int n, float scale)
{
    int i = get_global_id(0);
    if (i < n) {
        FLOATN v = N_FROM_W(in[i]) * scale;
        STOREP(TO_OUT(v), out, i);
    }
}
#endif

#ifdef DOUT
// Working pixels as RGBA display pixels for a GL texture: DOUT uchar4
// (RGBA8, 0..255) or float4 (RGBA32F, 0..1 of full scale). The logical
// value (stored times `scale`) of an integer type (hi = its full scale) is
// first rounded and saturated as pipeline_store does, so the result shows
// the stored image; f32 (hi = +inf) is taken as it is. Then it is
// multiplied by `mul` (255 / full scale for RGBA8, 1 / full scale for
// RGBA32F, computed on the host: a division here may be off by 2.5 ulp).
// Gray is repeated into RGB, and RGB gets `opaque` as its alpha.
__kernel void pipeline_display(__global const W* in, __global DOUT* out, int n, float scale,
                               float hi, float mul, float opaque)
{
    int i = get_global_id(0);
    if (i < n) {
#if CH == 1
        float x = in[i];
        float4 v = (float4)(x, x, x, 0.0f);
#else
        float4 v = in[i];
#endif
        v *= scale;
        if (hi < INFINITY) {
            v = rint(clamp(v, 0.0f, hi));
        }
        v *= mul;
#if CH != 4
        v.w = opaque;
#endif
#if DOUT_FLOAT
        out[i] = v;
#else
        // u16 to 8 bits is v / 257, never halfway: the rounding is exact.
        out[i] = convert_uchar4_sat_rte(v);
#endif
    }
}
#endif

// Multiplies n floats by `scale` in place, saturates them to 0..hi
// (hi = +inf: no saturation) and, with `round`, rounds half to even (as
// the integer stores do).
__kernel void pipeline_fix(__global float* buf, int n, float scale, float hi, int round)
{
    int i = get_global_id(0);
    if (i < n) {
        float v = clamp(buf[i] * scale, 0.0f, hi);
        buf[i] = round ? rint(v) : v;
    }
}

// Counts the NaN, infinite and too large floats of a working image of n floats in
// pixels of `lanes` (1 gray, 4 colour), reading the first `used` lanes of
// each (RGB leaves the fourth unused), and finds the first:
// out[0] += count, out[1] = min(out[1], index). out starts as {0, UINT_MAX}.
// Each work-item reads every global-size-th float4 from its id (coalesced
// on GPUs, consecutive work-items on CPU devices, which vectorise across
// them), so the common case, a finite image, takes no atomics and no
// barriers. The test is on the bits (the magnitude's bits above a bound),
// which fast-math options cannot fold away as they may fold isfinite().
// Magnitudes above 2^120 count as non-finite: the recursive Gaussian's sums
// overflow near 1e38 (src/image/finite.rs, MAX_MAGNITUDE; a test there checks
// that the two agree).
#define LIMIT_BITS 0x7b800000u

__kernel void pipeline_nonfinite(__global const float* buf, int n, int lanes, int used,
                                 volatile __global uint* out)
{
    int g = get_global_size(0), id = get_global_id(0);
    // A float4 is one colour pixel, or four gray ones.
    int4 keep = lanes == 1 ? (int4)(-1) : (int4)(0, 1, 2, 3) < (int4)(used);
    uint count = 0, first = UINT_MAX;
    for (int j = id; j < n / 4; j += g) {
        int4 bad = ((as_int4(vload4(j, buf)) & 0x7fffffff) > (int)LIMIT_BITS) & keep;
        if (any(bad)) {
            uint4 at = select((uint4)(UINT_MAX), (uint4)(4 * j) + (uint4)(0, 1, 2, 3), as_uint4(bad));
            count += (uint)(-(bad.x + bad.y + bad.z + bad.w));
            first = min(first, min(min(at.x, at.y), min(at.z, at.w)));
        }
    }
    // The last n % 4 floats (gray images only).
    int i = n / 4 * 4 + id;
    if (i < n && (as_uint(buf[i]) & 0x7fffffffu) > LIMIT_BITS) {
        count++;
        first = min(first, (uint)i);
    }
    if (count > 0) {
        atomic_add(&out[0], count);
        atomic_min(&out[1], first);
    }
}

#ifdef PACKED
// 12-bit samples packed two in three bytes into gray working pixels
// (n pixels, n even: one work-item per pair).
__kernel void pipeline_unpack12(__global const uchar* in, __global float* out, int n)
{
    int j = get_global_id(0);
    if (2 * j < n) {
        uint b0 = in[3 * j], b1 = in[3 * j + 1], b2 = in[3 * j + 2];
#if PACKED == 1
        uint p0 = b0 | (b1 & 15u) << 8, p1 = b1 >> 4 | b2 << 4;
#elif PACKED == 2
        uint p0 = b0 << 4 | (b1 & 15u), p1 = b2 << 4 | b1 >> 4;
#else
        uint p0 = b0 << 4 | (b2 & 15u), p1 = b1 << 4 | b2 >> 4;
#endif
        out[2 * j] = (float)p0;
        out[2 * j + 1] = (float)p1;
    }
}
#endif
