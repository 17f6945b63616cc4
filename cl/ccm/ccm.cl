// ccm.cl: colour-correction matrix on RGB(A), out = M * (r, g, b), converted
// to T with round-half-to-even and saturation (src/ops/ccm/mod.rs).
// Options: OUT_FLOAT (1 when T is float).
// Arguments: the matrix's rows m0, m1, m2 as float4 (w unused); alpha, the
// fourth of four, is copied.

#if CH == 1
#error "ccm reads RGB or RGBA images"
#endif

#if OUT_FLOAT
#define TO_PIX(v) (v)
#else
#define TO_PIX(v) CAT(CAT(convert_, PIX), _sat_rte)(v)
#endif

// Pixel i: each row's dot product with (r, g, b), summed left to right as
// the rayon path does.
inline void ccm_at(__global const T* in, __global T* out, int i,
                   float4 m0, float4 m1, float4 m2)
{
    FLOATN v = TO_FLOATN(LOADP(in, i));
    FLOATN r = v;
    r.x = m0.x * v.x + m0.y * v.y + m0.z * v.z;
    r.y = m1.x * v.x + m1.y * v.y + m1.z * v.z;
    r.z = m2.x * v.x + m2.y * v.y + m2.z * v.z;
    STOREP(TO_PIX(r), out, i);
}

// One pixel per work-item.
__kernel void ccm_pixel(__global const T* in, __global T* out, int n,
                        float4 m0, float4 m1, float4 m2)
{
    int i = get_global_id(0);
    if (i < n) {
        ccm_at(in, out, i, m0, m1, m2);
    }
}

// Four consecutive pixels per work-item: a quarter of the work-items, for
// devices where each item's overhead shows (CPU devices).
__kernel void ccm_pixel4(__global const T* in, __global T* out, int n,
                         float4 m0, float4 m1, float4 m2)
{
    int i = 4 * get_global_id(0);
    for (int k = 0; k < 4; k++) {
        if (i + k < n) {
            ccm_at(in, out, i + k, m0, m1, m2);
        }
    }
}
