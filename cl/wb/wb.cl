// wb.cl: white balance, out = in * gain per channel on RGB(A), converted to
// T with round-half-to-even and saturation (src/ops/wb/mod.rs).
// Options: OUT_FLOAT (1 when T is float).
// Arguments: gains = (r, g, b, 1): alpha times 1 is alpha, bit for bit.
// One f32 product, as the rayon path does, so the two agree exactly.

#if CH == 1
#error "wb reads RGB or RGBA images"
#endif

#if OUT_FLOAT
#define TO_PIX(v) (v)
#else
#define TO_PIX(v) CAT(CAT(convert_, PIX), _sat_rte)(v)
#endif

// One pixel per work-item.
__kernel void wb_pixel(__global const T* in, __global T* out, int n, float4 gains)
{
    int i = get_global_id(0);
    if (i < n) {
        STOREP(TO_PIX(TO_FLOATN(LOADP(in, i)) * F4_TO_N(gains)), out, i);
    }
}
