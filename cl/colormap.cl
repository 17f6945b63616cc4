// colormap.cl: a 1-channel image (T, CH == 1) to RGB(A) through a 256-entry
// colour table, linearly interpolated (src/ops/colormap/mod.rs defines it).
// Options: TOUT (output sample type), OUT_FLOAT (1 when TOUT is float),
// COUT (output channels, 3 or 4).
// Arguments: r = (lo, hi, k, scale), k = 1 / (hi - lo) in f32 (unused when
// hi <= lo), scale = the output's full-scale value; tab = 256 float4 RGBA
// entries with alpha 1, so alpha comes out as exactly `scale`.
// The arithmetic is the rayon path's, step for step.

#if CH != 1
#error "colormap reads 1-channel images"
#endif

#if COUT == 3
#define OUT_RGB(c) ((c).xyz)
#define STORE_OUT(v, p, i) vstore3((v), (i), (p))
#else
#define OUT_RGB(c) (c)
#define STORE_OUT(v, p, i) vstore4((v), (i), (p))
#endif

#if OUT_FLOAT
#define TO_OUT(v) (v)
#else
#define TO_OUT(v) CAT(CAT(CAT(convert_, TOUT), COUT), _sat_rte)(v)
#endif

// t = clamp((v - lo) * k, 0, 1) with NaN -> 0 (`>=` is false for NaN); an
// empty range (hi <= lo) is a step: 1 above hi, else 0.
inline float cm_t(float v, float4 r)
{
    float t = r.y > r.x ? (v - r.x) * r.z : (v > r.y ? 1.0f : 0.0f);
    return t >= 0.0f ? fmin(t, 1.0f) : 0.0f;
}

// Linear interpolation at t * 255 in a table of any address space.
#define CM_COLOUR(tab, t, c)                      \
    do {                                          \
        float pos_ = (t) * 255.0f;                \
        int i_ = min((int)pos_, 254);             \
        float f_ = pos_ - (float)i_;              \
        float4 a_ = (tab)[i_];                    \
        (c) = a_ + ((tab)[i_ + 1] - a_) * f_;     \
    } while (0)

#define CM_PIXEL(tab, i)                                   \
    do {                                                   \
        float4 c_;                                         \
        CM_COLOUR(tab, cm_t(convert_float(in[i]), r), c_); \
        STORE_OUT(TO_OUT(OUT_RGB(c_ * r.w)), out, i);      \
    } while (0)

// One pixel per work-item, the table read through the global-memory cache.
__kernel void colormap_pixel(__global const T* in, __global TOUT* out, int n,
                             float4 r, __global const float4* tab)
{
    int i = get_global_id(0);
    if (i < n)
        CM_PIXEL(tab, i);
}

// The table in __constant memory.
__kernel void colormap_constant(__global const T* in, __global TOUT* out, int n,
                                float4 r, __constant float4* tab)
{
    int i = get_global_id(0);
    if (i < n)
        CM_PIXEL(tab, i);
}

// Four pixels per work-item, a global size apart.
__kernel void colormap_x4(__global const T* in, __global TOUT* out, int n,
                          float4 r, __global const float4* tab)
{
    uint stride = get_global_size(0);
    uint i = get_global_id(0);
    for (int k = 0; k < 4; k++, i += stride)
        if (i < (uint)n)
            CM_PIXEL(tab, i);
}

// The table copied to local memory once per work-group; a few groups per
// compute unit walk the image with a grid stride, so each copy serves many
// pixels.
__kernel void colormap_local(__global const T* in, __global TOUT* out, int n,
                             float4 r, __global const float4* gtab)
{
    __local float4 tab[256];
    for (int j = get_local_id(0); j < 256; j += get_local_size(0))
        tab[j] = gtab[j];
    barrier(CLK_LOCAL_MEM_FENCE);
    // Unsigned: the index after the last step may pass INT_MAX without wrapping.
    uint stride = get_global_size(0);
    for (uint i = get_global_id(0); i < (uint)n; i += stride)
        CM_PIXEL(tab, i);
}
