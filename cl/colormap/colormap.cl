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

// Linear interpolation in the table at t * 255.
inline float4 cm_colour(float t, __global const float4* tab)
{
    float pos = t * 255.0f;
    int i = min((int)pos, 254);
    float f = pos - (float)i;
    float4 a = tab[i];
    return a + (tab[i + 1] - a) * f;
}

// One pixel per work-item; the table is read through the global-memory cache.
__kernel void colormap_pixel(__global const T* in, __global TOUT* out, int n,
                             float4 r, __global const float4* tab)
{
    int i = get_global_id(0);
    if (i < n) {
        float4 c = cm_colour(cm_t(convert_float(in[i]), r), tab);
        STORE_OUT(TO_OUT(OUT_RGB(c * r.w)), out, i);
    }
}
