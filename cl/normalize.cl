// normalize.cl: out = convert((in - sub) * factor), per channel.
// Options: TOUT (output sample type), OUT_FLOAT (1 when TOUT is float).
// Integer outputs round half to even and saturate (convert_T_sat_rte), as
// the CPU path does; the arithmetic is the same two f32 operations, so the
// two paths agree exactly.

#if OUT_FLOAT
#define TO_OUT(v) (v)
#else
#define TO_OUT(v) CAT(CAT(convert_, VEC(TOUT)), _sat_rte)(v)
#endif

// One pixel per work-item.
__kernel void normalize_pixel(__global const T* in, __global TOUT* out, int n,
                              float4 sub, float4 factor)
{
    int i = get_global_id(0);
    if (i < n) {
        FLOATN v = (TO_FLOATN(LOADP(in, i)) - F4_TO_N(sub)) * F4_TO_N(factor);
        STOREP(TO_OUT(v), out, i);
    }
}

// Four adjacent pixels per work-item: fewer work-items, more bytes in flight each.
__kernel void normalize_x4(__global const T* in, __global TOUT* out, int n,
                           float4 sub, float4 factor)
{
    int i0 = get_global_id(0) * 4;
    FLOATN s = F4_TO_N(sub), f = F4_TO_N(factor);
    for (int k = 0; k < 4; k++) {
        int i = i0 + k;
        if (i < n) {
            FLOATN v = (TO_FLOATN(LOADP(in, i)) - s) * f;
            STOREP(TO_OUT(v), out, i);
        }
    }
}
