// minmax.cl: per-channel minimum and maximum of a whole image, fused.
// Options: LWS (work-group size, a power of two).
//
// Pass 1: every work-group reduces a grid-strided share of the pixels to one
// (min, max) pair with a local-memory tree and writes it to `partial` as two
// float4 (channels beyond CH are 0). Pass 2: one work-group reduces the
// partials. fmin/fmax ignore NaN, so NaN samples never become the result.
// OpenCL 1.2 has no float atomics, hence the second pass.

#define REDUCE_TREE(lmin, lmax, lid)                                   \
    for (int s = LWS / 2; s > 0; s >>= 1) {                            \
        if ((lid) < s) {                                               \
            lmin[lid] = fmin(lmin[lid], lmin[(lid) + s]);              \
            lmax[lid] = fmax(lmax[lid], lmax[(lid) + s]);              \
        }                                                              \
        barrier(CLK_LOCAL_MEM_FENCE);                                  \
    }

// Loop indices are unsigned: n <= INT_MAX, so i + global size cannot wrap,
// where a signed index would overflow past INT_MAX on large gray images.

// One pixel per loop iteration.
__kernel void minmax_tree(__global const T* in, int n, __global float4* partial)
{
    __local FLOATN lmin[LWS];
    __local FLOATN lmax[LWS];
    int lid = get_local_id(0);
    FLOATN mn = (FLOATN)(INFINITY), mx = (FLOATN)(-INFINITY);
    for (uint i = get_global_id(0); i < (uint)n; i += get_global_size(0)) {
        FLOATN v = TO_FLOATN(LOADP(in, i));
        mn = fmin(mn, v);
        mx = fmax(mx, v);
    }
    lmin[lid] = mn;
    lmax[lid] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    REDUCE_TREE(lmin, lmax, lid)
    if (lid == 0) {
        partial[2 * get_group_id(0)] = N_TO_F4(lmin[0]);
        partial[2 * get_group_id(0) + 1] = N_TO_F4(lmax[0]);
    }
}

#if CH == 1
// Gray only: each work-item loads four adjacent samples with one vector load,
// which moves 4x more bytes per load instruction for 8- and 16-bit data.
__kernel void minmax_tree_vec4(__global const T* in, int n, __global float4* partial)
{
    __local float lmin[LWS];
    __local float lmax[LWS];
    int lid = get_local_id(0);
    float4 mn4 = (float4)(INFINITY), mx4 = (float4)(-INFINITY);
    uint quads = (uint)n / 4;
    for (uint i = get_global_id(0); i < quads; i += get_global_size(0)) {
        float4 v = CAT(convert_, float4)(vload4(i, in));
        mn4 = fmin(mn4, v);
        mx4 = fmax(mx4, v);
    }
    float mn = fmin(fmin(mn4.x, mn4.y), fmin(mn4.z, mn4.w));
    float mx = fmax(fmax(mx4.x, mx4.y), fmax(mx4.z, mx4.w));
    // The last n % 4 samples.
    for (uint i = quads * 4 + get_global_id(0); i < (uint)n; i += get_global_size(0)) {
        float v = convert_float(in[i]);
        mn = fmin(mn, v);
        mx = fmax(mx, v);
    }
    lmin[lid] = mn;
    lmax[lid] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    REDUCE_TREE(lmin, lmax, lid)
    if (lid == 0) {
        partial[2 * get_group_id(0)] = (float4)(lmin[0], 0.0f, 0.0f, 0.0f);
        partial[2 * get_group_id(0) + 1] = (float4)(lmax[0], 0.0f, 0.0f, 0.0f);
    }
}
#endif

// Pass 2, shared by every variant: one work-group of LWS reduces `groups`
// partial pairs to result[0] (min) and result[1] (max).
__kernel void minmax_final(__global const float4* partial, int groups, __global float4* result)
{
    __local float4 lmin[LWS];
    __local float4 lmax[LWS];
    int lid = get_local_id(0);
    float4 mn = (float4)(INFINITY), mx = (float4)(-INFINITY);
    for (uint g = lid; g < (uint)groups; g += LWS) {
        mn = fmin(mn, partial[2 * g]);
        mx = fmax(mx, partial[2 * g + 1]);
    }
    lmin[lid] = mn;
    lmax[lid] = mx;
    barrier(CLK_LOCAL_MEM_FENCE);
    REDUCE_TREE(lmin, lmax, lid)
    if (lid == 0) {
        result[0] = lmin[0];
        result[1] = lmax[0];
    }
}
