// shfl.cl: reduce_x_shfl, appended to reduce.cl for that variant only
// (after ptx.cl). Its table entry requires an NVIDIA device: ptx.cl's
// inline PTX (shfl.sync) is NVIDIA's dialect, and NVIDIA's OpenCL lists no
// sub-group extension, so this is how x_subgroup's warp-level combine is
// reached there.
//
// As x_tree, each work-item computes row_part of its team's row. Each warp
// of 32 then combines its lanes in registers with five butterfly steps of
// shfl.sync.bfly (no local memory, no barrier). A team of one warp is done
// (no barrier at all); in a larger team lane 0 of each warp puts the warp's
// result in local memory, and the team's first warp combines those
// TEAM / 32 results with up to three more steps. The depth (5 + 3 at most)
// is x_tree's, so the sum's bound is x_tree's; integer sums (INT_SUM) stay
// exact.

#define WARP 32
#define WARPS (LWS / WARP)
#if WARPS > WARP || (WARPS & (WARPS - 1)) != 0 || TEAM < WARP
#error "LWS / 32 must be a power of two of at most 32, and TEAM at least 32"
#endif

// shfl_xor of every channel of a pixel-sized value of type `t`.
#if CH == 1
#define SHFL_N(f, t, v, m) f((v), (m))
#elif CH == 3
#define SHFL_N(f, t, v, m) ((t)(f((v).x, (m)), f((v).y, (m)), f((v).z, (m))))
#else
#define SHFL_N(f, t, v, m) ((t)(f((v).x, (m)), f((v).y, (m)), f((v).z, (m)), f((v).w, (m))))
#endif

#ifdef INT_SUM
#define SHFL_ACC(v, m) SHFL_N(shfl_xor_ul, ULONGN, v, m)
#else
#define SHFL_ACC(v, m) SHFL_N(shfl_xor_f, FLOATN, v, m)
#endif

__kernel void reduce_x_shfl(__global const T* in, int width, int height, int op,
                            __global float* out)
{
    int lid = get_local_id(0), t = lid % TEAM;
    int y = get_global_id(1) * (LWS / TEAM) + lid / TEAM;
    // A team is whole warps, so every lane of a warp reaches its shuffles.
    ACC_T a = y < height ? row_part(in, y, width, t, op) : ACC_IDENTITY(op);
    // The shuffle outside the combine: every lane shuffles once per step.
    for (int m = WARP / 2; m > 0; m >>= 1) {
        ACC_T o = SHFL_ACC(a, m);
        a = ACC_COMBINE(op, a, o);
    }
#if TEAM > WARP
    // The team's TEAM / 32 warps meet in local memory; its first warp
    // combines them.
    __local ACC_T buf[WARPS];
    if (lid % WARP == 0) buf[lid / WARP] = a;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < WARP) {
        a = t < TEAM / WARP ? buf[lid / WARP + t] : ACC_IDENTITY(op);
        for (int m = TEAM / WARP / 2; m > 0; m >>= 1) {
            ACC_T o = SHFL_ACC(a, m);
            a = ACC_COMBINE(op, a, o);
        }
    }
#endif
    if (t == 0 && y < height) STOREP(FINISH(op, TO_FLOATN(a), width), out, y);
}
