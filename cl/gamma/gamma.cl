// gamma.cl: the encoding curves (OETFs), linear -> encoded, on every colour
// sample (alpha, the fourth of four, is copied): L = max(in / full, 0),
// out = E(L) * full, converted to T with round-half-to-even and saturation
// (src/ops/gamma/mod.rs).
// Options: OUT_FLOAT (1 when T is float); CURVE 0: sRGB, 1: Rec.709,
// 2: power 1/N (pixel only).

#if OUT_FLOAT
#define TO_PIX(v) (v)
#else
#define TO_PIX(v) CAT(CAT(convert_, PIX), _sat_rte)(v)
#endif

#ifndef CURVE
#error "gamma needs -DCURVE"
#endif

// l^y for l >= 0 as exp2(y log2 l): within 3 ulp each, and y <= 10 times
// log2's error stays far inside the tolerance (variants.rs); PoCL's powr is
// a scalar library call several times slower.
inline float pow_pos(float l, float y)
{
    return l > 0.0f ? exp2(y * log2(l)) : 0.0f;
}

// E(L) for L >= 0 (fmax maps NaN to 0 before). inv is 1/N for the power.
inline float encode(float l, float inv)
{
#if CURVE == 0
    return l <= 0.0031308f ? 12.92f * l : 1.055f * pow_pos(l, 1.0f / 2.4f) - 0.055f;
#elif CURVE == 1
    return l < 0.018f ? 4.5f * l : 1.099f * pow_pos(l, 0.45f) - 0.099f;
#else
    return pow_pos(l, inv);
#endif
}

// One pixel per work-item, the formula in f32.
__kernel void gamma_pixel(__global const T* in, __global T* out, int n,
                          float full, float inv)
{
    int i = get_global_id(0);
    if (i < n) {
        FLOATN v = TO_FLOATN(LOADP(in, i));
        FLOATN l = fmax(v / full, 0.0f);
        FLOATN r;
#if CH == 1
        r = encode(l, inv) * full;
#else
        r.x = encode(l.x, inv) * full;
        r.y = encode(l.y, inv) * full;
        r.z = encode(l.z, inv) * full;
#endif
#if CH == 4
        r.w = v.w;
#endif
        STOREP(TO_PIX(r), out, i);
    }
}

#if !OUT_FLOAT
// One sample per work-item through a table of every input value's
// rounded result (256 or 65536 entries of T, made on the host from the f64
// formula): a gather instead of a pow, exact.
__kernel void gamma_lut(__global const T* in, __global T* out, int n,
                        __global const T* lut)
{
    int j = get_global_id(0);
    if (j < n) {
#if CH == 4
        out[j] = (j & 3) == 3 ? in[j] : lut[in[j]];
#else
        out[j] = lut[in[j]];
#endif
    }
}
#endif
