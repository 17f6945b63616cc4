// columns.cl: the y-axis kernels of reduce (reduce_y_column, y_split's
// two passes or y_fused, reduce_y_merge), appended to reduce.cl for the
// y variants only; reduce.cl's header describes the options, the
// accumulators and the integer walks they share.

// Axis y, one work-item per column: a sequential compensated walk down it
// (neighbouring work-items read neighbouring pixels, so loads coalesce).
__kernel void reduce_y_column(__global const T* in, int width, int height, int op,
                              __global float* out)
{
    int x = get_global_id(0);
    if (x >= width) return;
    FLOATN a = IDENTITY(op), c = (FLOATN)(0.0f);
    for (int y = 0; y < height; y++) {
        FLOATN v = PIXEL(in, x, y, width);
        ACCUMULATE(op, a, c, v);
    }
    STOREP(FINISH(op, SETTLE(op, a, c), height), out, x);
}

// y_fused (Y_FUSED): y_split's two passes in one kernel. Each group writes
// its block's partials as y_split does, then counts itself done on its
// strip of columns (done[GROUP_ID(0)], zeroed by the host); the group
// that counts last for a strip merges that strip's partials as
// reduce_y_merge would, in block order, so the outputs are y_split's bit
// for bit. A device fence orders each writer's partials before the count
// (PTX_FENCE: NVIDIA's membar.gl, else OpenCL's global mem_fence), and
// the tuner's check stands between a device that breaks this and the
// variant. Chunked launches pass the same `blocks` and count alike.
#ifdef Y_FUSED
#define Y_KERNEL reduce_y_fused
#define Y_EXTRA_ARGS , int blocks, __global uint* done, __global float* out
#ifdef PTX_FENCE
#define FENCE_DEVICE() asm volatile("membar.gl;" ::: "memory")
#else
#define FENCE_DEVICE() mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif
void merge_column(__global const float* partial, int width, int blocks, int height, int op,
                  __global float* out, int x);

// At kernel scope, for every work-item of the group, after its partial
// writes and their FENCE_DEVICE: the last group of a strip merges its
// COLS * cols columns from x0.
#define FUSED_TAIL(x0, cols)                                            \
    __local int last_;                                                  \
    barrier(CLK_GLOBAL_MEM_FENCE | CLK_LOCAL_MEM_FENCE);                \
    if (lx == 0 && part == 0) {                                         \
        last_ = atomic_inc(&done[GROUP_ID(0)]) == (uint)(blocks - 1);   \
        FENCE_DEVICE();                                                 \
    }                                                                   \
    barrier(CLK_LOCAL_MEM_FENCE);                                       \
    if (last_)                                                          \
        for (int j_ = part * COLS + lx; j_ < COLS * (cols); j_ += COLS * SPLIT) \
            if ((x0) + j_ < width)                                      \
                merge_column(partial, width, blocks, height, op, out, (x0) + j_);
#else
#define Y_KERNEL reduce_y_split
#define Y_EXTRA_ARGS
#define FENCE_DEVICE()
#define FUSED_TAIL(x0, cols)
#endif

#if defined(INT_SUM) && CH == 1 && defined(YPACK)
// y_split's pass 1 on gray integer images whose width is a multiple of
// YPACK (the host defines YPACK only then, so every row starts aligned to
// YPACK samples): a work-item takes YPACK adjacent columns, one vector load
// per row, and the group COLS x YPACK columns. One sample per load left the
// pass far below a GPU's bandwidth (H100, 8192x8192: u8 34-35 %, u16
// 57-58 % of copy). Everything else is the scalar pass's, lane by lane.
// Integer RGB whose 3 x width is a multiple of 4 comes here too, read by
// the host as gray samples 3 x width wide (the same column sums, in order).
#define YU CAT(uint, YPACK)
#define YL CAT(ulong, YPACK)
#define YV CAT(T, YPACK)
#define TO_YU(v) CAT(convert_, YU)(v)
// A block's result per lane: a uint where the host's BLOCK_FITS says the
// block's rows fit one uint chunk (then the local tree holds half the
// bytes, and a block writes one row of partials), else a ulong. The same
// holds for the pixel kernel below (Y_ACC). H200, 8192x8192, y_fused
// (docs/results/2026-11-29-s48-gpu.md): u8 gray 61-66% of copy to 73-78%,
// u16 gray 79-81% to 86-88%, u8 RGBA 83-86% to 84-86% (committed build).
#ifdef BLOCK_FITS
#define YB YU
#define YB_OF(a) (a)
#else
#define YB YL
#define YB_OF(a) CAT(convert_, YL)(a)
#endif

// `count` vectors at v[base + j * stride], folded with `op` per lane.
// Where the count fits one uint lane (always, but for parts of more than
// I_CHUNK rows), the walk holds that lane alone, with 32-bit counters and
// a moving pointer: the general walk kept its ulong lanes and 64-bit
// indices live through the loop, 48 registers in the u8 gray program
// against 42, so fewer groups per compute unit. With that, the reduction
// as a constant (three inlined walks) is faster here too. H200, 8192x8192
// (docs/results/2026-11-29-s46-gpu.md): u8 gray `y_fused` 52-55% of copy
// to 61-65%, u8 RGB (read as gray) 66-69% to 81-83%, u16 gray unchanged;
// the uint lane alone with the op at run time gave 56-68% and 55-71%.
inline YB walk_cols(__global const YV* v, size_t base, size_t stride, long count, int op)
{
    YU id = (op) == REDUCE_MIN ? (YU)(UINT_MAX) : (YU)(0);
    // Under BLOCK_FITS the host's blocks hold at most I_CHUNK rows, so the
    // one-lane walk is the whole walk.
#ifndef BLOCK_FITS
    if (count <= I_CHUNK)
#endif
    {
        __global const YV* p = v + base;
        int n = (int)count, k = 0;
        YU a = id;
        for (; k + 3 < n; k += 4, p += 4 * stride) {
            YU v0 = TO_YU(p[0]), v1 = TO_YU(p[stride]);
            YU v2 = TO_YU(p[2 * stride]), v3 = TO_YU(p[3 * stride]);
            a = I_COMBINE(op, a, v0);
            a = I_COMBINE(op, a, v1);
            a = I_COMBINE(op, a, v2);
            a = I_COMBINE(op, a, v3);
        }
        for (; k < n; k++, p += stride) a = I_COMBINE(op, a, TO_YU(*p));
        return YB_OF(a);
    }
#ifndef BLOCK_FITS
    YL t = CAT(convert_, YL)(id);
    size_t i = base;
    for (long j0 = 0; j0 < count; j0 += I_CHUNK) {
        long j1 = min(count, j0 + (long)I_CHUNK), j = j0;
        YU a = id;
        for (; j + 3 < j1; j += 4, i += 4 * stride) {
            YU v0 = TO_YU(v[i]), v1 = TO_YU(v[i + stride]);
            YU v2 = TO_YU(v[i + 2 * stride]), v3 = TO_YU(v[i + 3 * stride]);
            a = I_COMBINE(op, a, v0);
            a = I_COMBINE(op, a, v1);
            a = I_COMBINE(op, a, v2);
            a = I_COMBINE(op, a, v3);
        }
        for (; j < j1; j++, i += stride) a = I_COMBINE(op, a, TO_YU(v[i]));
        t = I_COMBINE(op, t, CAT(convert_, YL)(a));
    }
    return t;
#endif
}

__kernel void Y_KERNEL(__global const T* in, int width, int height, int op, int rows,
                       __global float* partial Y_EXTRA_ARGS)
{
    __local YB buf[SPLIT][COLS];
    int x = get_global_id(0) * YPACK;
    int lx = get_local_id(0), part = get_local_id(1);
    int block = GROUP_ID(1);
    int y1 = min((block + 1) * rows, height);
    int y0 = block * rows + part;
    long count = (x < width && y0 < y1) ? (y1 - y0 + SPLIT - 1) / SPLIT : 0;
    buf[part][lx] = BY_OP(op, walk_cols, (__global const YV*)in,
                          ((size_t)y0 * (size_t)width + x) / YPACK,
                          (size_t)SPLIT * (size_t)(width / YPACK), count);
    for (int s = SPLIT / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (part < s) buf[part][lx] = I_COMBINE(op, buf[part][lx], buf[part + s][lx]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (part == 0 && x < width) {
        YB t = buf[0][lx];
#ifdef BLOCK_FITS
        CAT(vstore, YPACK)(CAT(as_float, YPACK)(t), 0, partial + (size_t)block * width + x);
#else
        CAT(vstore, YPACK)(CAT(as_float, YPACK)(TO_YU(t)), 0,
                           partial + (size_t)(2 * block) * width + x);
        CAT(vstore, YPACK)(CAT(as_float, YPACK)(TO_YU(t >> 32)), 0,
                           partial + (size_t)(2 * block + 1) * width + x);
#endif
        FENCE_DEVICE();
    }
    FUSED_TAIL((int)(get_global_id(0) - lx) * YPACK, YPACK)
}
#else
// Axis y in two passes. Pass 1: a group is COLS columns by SPLIT parts of
// one block of `rows` rows (block GROUP_ID(1)); part p walks the block's
// rows p, p + SPLIT, ...; the parts of a column meet in local memory, and
// the block's result goes to row `block` of `partial` (width x blocks
// pixels of CH floats). Blocks put enough work-items in flight to fill a
// large GPU even for short images; pass 2 (reduce_y_merge) combines them.
#if defined(INT_SUM) && defined(BLOCK_FITS)
#define Y_ACC UINTN
#define Y_ACC_OF(v) TO_UINTN(v)
#else
#define Y_ACC ACC_T
#define Y_ACC_OF(v) (v)
#endif
__kernel void Y_KERNEL(__global const T* in, int width, int height, int op, int rows,
                       __global float* partial Y_EXTRA_ARGS)
{
    __local Y_ACC buf[SPLIT][COLS];
    int x = get_global_id(0);
    int lx = get_local_id(0), part = get_local_id(1);
    int block = GROUP_ID(1);
    int y1 = min((block + 1) * rows, height);
#ifdef INT_SUM
    // The block's result per channel: a uint to row `block` of `partial`
    // (BLOCK_FITS), else a ulong whose low and high words go to rows
    // 2 block and 2 block + 1, bit for bit.
    int y0 = block * rows + part;
    long count = (x < width && y0 < y1) ? (y1 - y0 + SPLIT - 1) / SPLIT : 0;
    buf[part][lx] = Y_ACC_OF(BY_OP(op, walk_int, in, (size_t)y0 * (size_t)width + x,
                                   (size_t)SPLIT * (size_t)width, count));
    for (int s = SPLIT / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (part < s) buf[part][lx] = I_COMBINE(op, buf[part][lx], buf[part + s][lx]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (part == 0 && x < width) {
        Y_ACC t = buf[0][lx];
#ifdef BLOCK_FITS
        STOREP(AS_FLOATN(t), partial, (size_t)block * width + x);
#else
        STOREP(AS_FLOATN(TO_UINTN(t)), partial, (size_t)(2 * block) * width + x);
        STOREP(AS_FLOATN(TO_UINTN(t >> 32)), partial, (size_t)(2 * block + 1) * width + x);
#endif
        FENCE_DEVICE();
    }
#else
    FLOATN a = IDENTITY(op), c = (FLOATN)(0.0f);
    if (x < width) {
        int y = block * rows + part;
        // As in reduce_x_tree: four loads in flight, the same order of adds.
        for (; y + 3 * SPLIT < y1; y += 4 * SPLIT) {
            FLOATN v0 = PIXEL(in, x, y, width), v1 = PIXEL(in, x, y + SPLIT, width);
            FLOATN v2 = PIXEL(in, x, y + 2 * SPLIT, width);
            FLOATN v3 = PIXEL(in, x, y + 3 * SPLIT, width);
            ACCUMULATE(op, a, c, v0);
            ACCUMULATE(op, a, c, v1);
            ACCUMULATE(op, a, c, v2);
            ACCUMULATE(op, a, c, v3);
        }
        for (; y < y1; y += SPLIT) {
            FLOATN v = PIXEL(in, x, y, width);
            ACCUMULATE(op, a, c, v);
        }
    }
    buf[part][lx] = SETTLE(op, a, c);
    for (int s = SPLIT / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (part < s) buf[part][lx] = COMBINE(op, buf[part][lx], buf[part + s][lx]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (part == 0 && x < width) {
        STOREP(buf[0][lx], partial, (size_t)block * width + x);
        FENCE_DEVICE();
    }
#endif
    FUSED_TAIL((int)(get_global_id(0) - lx), 1)
}
#endif

// Column x's block results (y_split's pass 2, y_fused's last group),
// combined in block order (compensated for sums; exact in integers under
// INT_SUM), finished over all `height` rows.
void merge_column(__global const float* partial, int width, int blocks, int height, int op,
                  __global float* out, int x)
{
#ifdef INT_SUM
    ULONGN t = TO_ULONGN(I_IDENTITY(op));
    for (int b = 0; b < blocks; b++) {
#ifdef BLOCK_FITS
        t = I_COMBINE(op, t, TO_ULONGN(AS_UINTN(LOADP(partial, (size_t)b * width + x))));
#else
        ULONGN lo = TO_ULONGN(AS_UINTN(LOADP(partial, (size_t)(2 * b) * width + x)));
        ULONGN hi = TO_ULONGN(AS_UINTN(LOADP(partial, (size_t)(2 * b + 1) * width + x)));
        t = I_COMBINE(op, t, lo | (hi << 32));
#endif
    }
    STOREP(FINISH(op, TO_FLOATN(t), height), out, x);
#else
    FLOATN a = IDENTITY(op), c = (FLOATN)(0.0f);
    for (int b = 0; b < blocks; b++) {
        FLOATN v = LOADP(partial, (size_t)b * width + x);
        ACCUMULATE(op, a, c, v);
    }
    STOREP(FINISH(op, SETTLE(op, a, c), height), out, x);
#endif
}

__kernel void reduce_y_merge(__global const float* partial, int width, int blocks, int height,
                             int op, __global float* out)
{
    int x = get_global_id(0);
    if (x < width) merge_column(partial, width, blocks, height, op, out, x);
}
