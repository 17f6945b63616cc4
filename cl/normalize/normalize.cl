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

// Four pixels per work-item, one global-size apart: each of the four
// loads is coalesced across the work-group, and a quarter of the work-items
// are scheduled. (Four *adjacent* pixels per work-item would make
// neighbouring work-items 4 pixels apart, which halves GPU bandwidth.)
__kernel void normalize_x4(__global const T* in, __global TOUT* out, int n,
                           float4 sub, float4 factor)
{
    // Unsigned: the index after the last step may pass INT_MAX without wrapping.
    uint stride = get_global_size(0);
    FLOATN s = F4_TO_N(sub), f = F4_TO_N(factor);
    uint i = get_global_id(0);
    for (int k = 0; k < 4; k++, i += stride) {
        if (i < (uint)n) {
            FLOATN v = (TO_FLOATN(LOADP(in, i)) - s) * f;
            STOREP(TO_OUT(v), out, i);
        }
    }
}
