// black.cl: black-level subtraction, out = max(in - black, 0) * k on the
// colour channels (alpha, the fourth of four, is copied), converted to T
// with round-half-to-even and saturation (src/ops/black/mod.rs).
// Options: OUT_FLOAT (1 when T is float).
// The arithmetic is the rayon path's two f32 operations, so the two agree
// exactly.

#if OUT_FLOAT
#define TO_PIX(v) (v)
#else
#define TO_PIX(v) CAT(CAT(convert_, PIX), _sat_rte)(v)
#endif

// One pixel per work-item. fmax maps NaN to 0, as the rayon path's f32::max.
__kernel void black_pixel(__global const T* in, __global T* out, int n,
                          float black, float k)
{
    int i = get_global_id(0);
    if (i < n) {
        FLOATN v = TO_FLOATN(LOADP(in, i));
        FLOATN r = fmax(v - black, 0.0f) * k;
#if CH == 4
        r.w = v.w;
#endif
        STOREP(TO_PIX(r), out, i);
    }
}
