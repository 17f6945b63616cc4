// subgroup.cl: reduce_x_subgroup, appended to reduce.cl for that variant
// only (its table entry requires cl_khr_subgroups or cl_intel_subgroups).
// Each work-item walks every LWS-th pixel of the group's row, as in
// x_tree; sub_group_reduce_* then combines a sub-group without local
// memory or barriers, and one local-memory tree of LWS entries (the
// sub-groups' results, identities elsewhere) finishes the row.

#if defined(cl_khr_subgroups)
#pragma OPENCL EXTENSION cl_khr_subgroups : enable
#endif

#if defined(cl_khr_subgroups) || defined(cl_intel_subgroups)

// The sub-group builtins take scalars: one call per channel.
#define SG1(op, v) ((op) == REDUCE_MIN ? sub_group_reduce_min(v) \
                    : (op) == REDUCE_MAX ? sub_group_reduce_max(v) : sub_group_reduce_add(v))
#if CH == 1
#define SGN(op, v) SG1(op, v)
#elif CH == 3
#define SGN(op, v) ((float3)(SG1(op, (v).x), SG1(op, (v).y), SG1(op, (v).z)))
#else
#define SGN(op, v) ((float4)(SG1(op, (v).x), SG1(op, (v).y), SG1(op, (v).z), SG1(op, (v).w)))
#endif

__kernel void reduce_x_subgroup(__global const T* in, int width, int height, int op,
                                __global float* out)
{
    __local FLOATN buf[LWS];
    int y = get_global_id(1);
    int lid = get_local_id(0);
    if (y >= height) return;
    FLOATN a = IDENTITY(op), c = (FLOATN)(0.0f);
    for (int x = lid; x < width; x += LWS) {
        FLOATN v = PIXEL(in, x, y, width);
        ACCUMULATE(op, a, c, v);
    }
    // NaN-free min/max: sub_group_reduce_min's NaN rule is not fmin's, so
    // NaN (already ignored by fmin above) cannot reach it except as the
    // identity, which is a number.
    FLOATN r = SGN(op, SETTLE(op, a, c));
    buf[lid] = IDENTITY(op);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_sub_group_local_id() == 0) buf[get_sub_group_id()] = r;
    TREE(op, buf, lid, LWS)
    if (lid == 0) STOREP(FINISH(op, buf[0], width), out, y);
}

#endif
