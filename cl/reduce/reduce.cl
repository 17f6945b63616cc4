// reduce.cl: per-channel sum, mean, min or max along one axis.
// Options: LWS, COLS, SPLIT (the variant's), TEAM (below), and the integer
// paths' (INT_SUM, I_CHUNK, PACK, YPACK); the reduction is the runtime argument `op`
// (REDUCE_SUM/MEAN/MIN/MAX below, the Rust side's `Reduction as i32`), so
// one program per pixel type serves all four.
//
// Every kernel reads `in` (width x height pixels of CH samples of T) and
// writes `out`, CH floats per output pixel: height outputs for the x axis,
// width outputs for the y axis. The x-axis kernels are here, the y-axis
// ones in columns.cl, which the y variants append (their programs hold
// both; the x variants' programs only this file).
//
// Sums are compensated (Kahan) inside each work-item, then combined with
// plain adds in a tree; docs/QUALITY.md states the bound per variant. A
// non-finite running sum drops its compensation, so an infinity stays an
// infinity and NaN stays NaN, as in f64. min/max ignore NaN (fmin/fmax).
//
// Positions come from get_global_id, which includes a launch's global
// offset, so a launch split into chunks along the outputs (x_row, y_column:
// dimension 0; x_tree, x_subgroup: rows, dimension 1; y_split: columns,
// dimension 0) computes the same outputs. A work-group is never split.

// The row-group variants (x_tree, x_shfl) give each row a team of TEAM
// work-items (a power of two, 32 to LWS; the host's -DTEAM, else LWS), so
// a group of LWS takes LWS / TEAM rows. Short rows (8192 u8 samples are
// 512 16-byte loads) left a group of 256 two loads each and a tree of 8
// barriers per row: H100 and H200 read 8192x8192 u8 gray at the same
// 0.033-0.035 ms, 53-58 % of copy on one and 55 % on the other.
#ifndef TEAM
#define TEAM LWS
#endif
#if TEAM > LWS || LWS % TEAM != 0
#error "TEAM must divide LWS"
#endif
// walk_packed and walk_rgb give each of a row's unaligned head and tail
// samples (fewer than 16 bytes each) to work-item lid < TEAM.
#if TEAM < 16
#error "TEAM must be at least 16"
#endif

#define REDUCE_SUM 0
#define REDUCE_MEAN 1
#define REDUCE_MIN 2
#define REDUCE_MAX 3

// The identity of `op`.
#define IDENTITY(op) ((op) == REDUCE_MIN ? (FLOATN)(INFINITY) \
                      : (op) == REDUCE_MAX ? (FLOATN)(-INFINITY) : (FLOATN)(0.0f))

// Adds v to the compensated sum (s, c); the true sum is s - c.
#define KAHAN_ADD(s, c, v)                                              \
    {                                                                   \
        FLOATN y_ = (v) - (c);                                          \
        FLOATN t_ = (s) + y_;                                           \
        (c) = select((FLOATN)(0.0f), (t_ - (s)) - y_, isfinite(t_));    \
        (s) = t_;                                                       \
    }

// One sample into a work-item's accumulator (a, c): c is used by sums only.
#define ACCUMULATE(op, a, c, v)                                         \
    if ((op) == REDUCE_MIN) (a) = fmin((a), (v));                       \
    else if ((op) == REDUCE_MAX) (a) = fmax((a), (v));                  \
    else KAHAN_ADD(a, c, v)

// A work-item's result: the compensated sum folded in (finite sums only).
#define SETTLE(op, a, c) \
    (((op) <= REDUCE_MEAN) ? (a) - select((FLOATN)(0.0f), (c), isfinite(a)) : (a))

// Two partial results combined.
#define COMBINE(op, a, b) \
    ((op) == REDUCE_MIN ? fmin((a), (b)) : (op) == REDUCE_MAX ? fmax((a), (b)) : (a) + (b))

// The final value of `count` samples.
#define FINISH(op, a, count) ((op) == REDUCE_MEAN ? (a) / (float)(count) : (a))


// A local-memory tree over `n` (a power of two) entries of `buf` with the
// two-argument combiner `comb`; entry 0 holds the result. Every work-item
// of the group must reach it.
#define TREE_BY(comb, op, buf, lid, n)                                  \
    for (int s_ = (n) / 2; s_ > 0; s_ >>= 1) {                          \
        barrier(CLK_LOCAL_MEM_FENCE);                                   \
        if ((lid) < s_) buf[lid] = comb(op, buf[lid], buf[(lid) + s_]); \
    }                                                                   \
    barrier(CLK_LOCAL_MEM_FENCE);
#define TREE(op, buf, lid, n) TREE_BY(COMBINE, op, buf, lid, n)

#ifdef INT_SUM
// Integer samples (uchar, ushort; the host defines INT_SUM and I_CHUNK for
// them), in x_tree and y_split: sums, min and max in integers, exact. A
// work-item adds at most I_CHUNK samples in a uint (2^24 for uchar, 2^16
// for ushort: 255 * 2^24 and 65535 * 2^16 stay below 2^32), then folds
// them into a ulong; groups combine ulongs. The one rounding is the final
// conversion to float (to nearest), then the mean's division.
#define UINTN VEC(uint)
#define ULONGN VEC(ulong)
#define TO_UINTN(v) CAT(convert_, UINTN)(v)
#define TO_ULONGN(v) CAT(convert_, ULONGN)(v)
#define AS_FLOATN(v) CAT(as_, FLOATN)(v)
#define AS_UINTN(v) CAT(as_, UINTN)(v)
// The identity of `op` (UINT_MAX exceeds every sample, so it serves min in
// the ulong fold too).
#define I_IDENTITY(op) ((op) == REDUCE_MIN ? (UINTN)(UINT_MAX) : (UINTN)(0))
#define I_COMBINE(op, a, b) \
    ((op) == REDUCE_MIN ? min((a), (b)) : (op) == REDUCE_MAX ? max((a), (b)) : (a) + (b))
#define IPIX(in, i) TO_UINTN(LOADPIX(in, i))

// `count` samples at in[base + j * stride], j < count (in pixels), folded
// with `op`; four loads in flight per step.
inline ULONGN walk_int(__global const T* in, size_t base, size_t stride, long count, int op)
{
#if CH == 4
    if (count <= I_CHUNK) {
        // One uint lane, 32-bit counters and a moving pointer (every
        // realistic row or column part): the chunked walk below keeps
        // ulong lanes and 64-bit counters live. H200, 8192x8192 (s47): u8
        // RGBA 77-89% of copy to 88-93% along x, 79-83% to 82-86% along y;
        // u16 RGBA 93-97% to 101-102% along x. The same path for RGB
        // pixels (the op at run time) cost u16 RGB sums along x 1-6
        // points, and in walk_packed and walk_rgb, u8 gray min and max
        // along x up to 8 points and u8 RGB sums in x_shfl 6-7
        // (docs/results/2026-11-29-s47-gpu.md).
        __global const T* p = in + base * CH;
        size_t step = stride * CH;
        int n = (int)count, k = 0;
        UINTN a = I_IDENTITY(op);
        for (; k + 3 < n; k += 4, p += 4 * step) {
            UINTN v0 = IPIX(p, 0), v1 = IPIX(p, stride);
            UINTN v2 = IPIX(p, 2 * stride), v3 = IPIX(p, 3 * stride);
            a = I_COMBINE(op, a, v0);
            a = I_COMBINE(op, a, v1);
            a = I_COMBINE(op, a, v2);
            a = I_COMBINE(op, a, v3);
        }
        for (; k < n; k++, p += step) a = I_COMBINE(op, a, IPIX(p, 0));
        return TO_ULONGN(a);
    }
#endif
    ULONGN t = TO_ULONGN(I_IDENTITY(op));
    size_t i = base;
    for (long j0 = 0; j0 < count; j0 += I_CHUNK) {
        long j1 = min(count, j0 + (long)I_CHUNK), j = j0;
        UINTN a = I_IDENTITY(op);
        for (; j + 3 < j1; j += 4, i += 4 * stride) {
            UINTN v0 = IPIX(in, i), v1 = IPIX(in, i + stride);
            UINTN v2 = IPIX(in, i + 2 * stride), v3 = IPIX(in, i + 3 * stride);
            a = I_COMBINE(op, a, v0);
            a = I_COMBINE(op, a, v1);
            a = I_COMBINE(op, a, v2);
            a = I_COMBINE(op, a, v3);
        }
        for (; j < j1; j++, i += stride) a = I_COMBINE(op, a, IPIX(in, i));
        t = I_COMBINE(op, t, TO_ULONGN(a));
    }
    return t;
}
#define ACC_T ULONGN
// f(a, b, c, d, op) with `op` a constant in each arm (BY_OP) or as given
// (AT_RUN_TIME). A constant op inlines three copies of the walk (min, max,
// and add, which serves sum and mean), each folding I_COMBINE to one
// operation a sample, where a run-time op kept a choice of min, max and
// add for every sample. On an H200 (8192x8192, 2026-11-29,
// docs/results/2026-11-29-s45-gpu.md) that took u8 RGBA from 67-70% of
// copy to 83-84% along y and from 70-73% to 77-89% along x, u8 gray along
// x from 66-74% to 75-81%, and u16 gray along y from 75-77% to 79-81%; but
// u8 RGB pixels lost (along y 51% to 40%), so they keep the run-time op
// (RGB of u16 too, which was not measured with a constant op). The u8
// gray column walk lost as well (53% to 44%) until it held fewer
// registers (walk_cols, s46). u8 RGB rows read as bytes
// (walk_rgb, RGB_BY_OP) take the constant: 71-84% of copy along x against
// 62-75% with the op at run time (H200, s46). Four arguments, as every
// walk has: NVIDIA's OpenCL C refuses variadic macros.
#define AT_RUN_TIME(op, f, a, b, c, d) f(a, b, c, d, op)
#define BY_OP_CONST(op, f, a, b, c, d)                                  \
    ((op) == REDUCE_MIN   ? f(a, b, c, d, REDUCE_MIN)                   \
     : (op) == REDUCE_MAX ? f(a, b, c, d, REDUCE_MAX)                   \
                          : f(a, b, c, d, REDUCE_SUM))
#if CH == 3
#define BY_OP AT_RUN_TIME
#define RGB_BY_OP BY_OP_CONST
#else
#define BY_OP BY_OP_CONST
#endif
#else
#define ACC_T FLOATN
#endif
#if defined(INT_SUM) && CH == 1 && defined(PACK)
// Gray rows in 16-byte loads of PACK samples (16 uchar, 8 ushort; the host
// defines PACK for them): one sample per load left the row variants far
// below a GPU's bandwidth (H100, 8192x8192: u8 52-58 %, u16 70-85 % of
// copy). A buffer starts aligned far beyond 16 bytes, so a row's samples
// before its first 16-byte boundary, and those after its last whole load,
// are read one at a time.
#define PACKT CAT(T, PACK)
#define PACKU CAT(uint, PACK)

inline uint fold8(int op, uint8 v)
{
    uint4 a = I_COMBINE(op, v.lo, v.hi);
    uint2 b = I_COMBINE(op, a.lo, a.hi);
    return I_COMBINE(op, b.x, b.y);
}

inline uint fold_pack(int op, PACKU v)
{
#if PACK == 16
    return fold8(op, I_COMBINE(op, v.lo, v.hi));
#else
    return fold8(op, v);
#endif
}

// The aligned middle of walk_packed: the loads lid, lid + TEAM, ... (four
// in flight), each folded into a uint by `fold`, I_CHUNK samples a uint,
// the uints into t.
#define PACKED_MIDDLE(fold)                                                     \
    for (int j = lid; j < nvec;) {                                              \
        uint a = I_IDENTITY(op);                                                \
        int k = 0;                                                              \
        for (; k < I_CHUNK / PACK && j + 3 * TEAM < nvec; k += 4, j += 4 * TEAM) { \
            PACKT v0 = v[j], v1 = v[j + TEAM], v2 = v[j + 2 * TEAM], v3 = v[j + 3 * TEAM]; \
            a = fold(op, a, v0);                                                \
            a = fold(op, a, v1);                                                \
            a = fold(op, a, v2);                                                \
            a = fold(op, a, v3);                                                \
        }                                                                       \
        for (; k < I_CHUNK / PACK && j < nvec; k++, j += TEAM) a = fold(op, a, v[j]); \
        t = I_COMBINE(op, t, (ulong)a);                                         \
    }
#define FOLD_GENERIC(op, a, x) I_COMBINE(op, a, fold_pack(op, CAT(convert_, PACKU)(x)))

// Work-item `lid`'s share (lid < TEAM) of the `width` samples from
// in[base], folded with `op`: the loads lid, lid + TEAM, ... of the aligned
// middle, four in flight, and one sample of the unaligned head and tail.
inline ulong walk_packed(__global const T* in, size_t base, int width, int lid, int op)
{
    int head = min(width, (int)((PACK - base % PACK) % PACK));
    int nvec = (width - head) / PACK;
    int tail = head + nvec * PACK;
    ulong t = (ulong)I_IDENTITY(op);
    if (lid < head) t = I_COMBINE(op, t, (ulong)IPIX(in, base + lid));
    if (lid < width - tail) t = I_COMBINE(op, t, (ulong)IPIX(in, base + tail + lid));
    __global const PACKT* v = (__global const PACKT*)(in + base + head);
    // A variant may define SUM_PACKED before this file (x_shfl:
    // cl/reduce/dp4a.cl), a sum's fold of one load; the branch on op sits
    // outside the loop.
#ifdef SUM_PACKED
    if (op != REDUCE_MIN && op != REDUCE_MAX) {
        PACKED_MIDDLE(SUM_PACKED)
        return t;
    }
#endif
    PACKED_MIDDLE(FOLD_GENERIC)
    return t;
}
#endif

#if defined(INT_SUM) && CH == 3 && defined(RGB_BYTES)
// u8 RGB rows read as bytes in 16-byte loads (the host defines RGB_BYTES
// for them): a pixel of three bytes was one load each (H200, 8192x8192:
// 58-66 % of copy along x, where 16-byte loads of gray and RGBA rows reach
// 75-89 %). Byte b of a row is channel b % 3, and 16 = 1 (mod 3), so byte k
// of the load that starts at row byte o is channel (o + k) % 3: a load's
// bytes fall in three classes k % 3, and class m goes to channel
// (m + o) % 3. The row's bytes before its first 16-byte boundary, and
// those after its last whole load, are read one at a time.

// The folds of a load's three classes of bytes (class m: bytes m, m + 3, ..).
inline uint3 rgb_classes(int op, uint4 w)
{
    uint16 u = convert_uint16(as_uchar16(w));
#define C_(a, b) I_COMBINE(op, a, b)
    return (uint3)(C_(C_(C_(u.s0, u.s3), C_(u.s6, u.s9)), C_(u.sc, u.sf)),
                   C_(C_(C_(u.s1, u.s4), C_(u.s7, u.sa)), u.sd),
                   C_(C_(C_(u.s2, u.s5), C_(u.s8, u.sb)), u.se));
#undef C_
}

// A load's contribution to the three channels when its first byte is
// channel p: channel c takes class (c - p) mod 3.
inline uint3 rgb_turn(uint3 s, uint p)
{
    return p == 0 ? s : p == 1 ? s.zxy : s.yzx;
}

// A variant may define RGB_SUM_CLASSES before this file (x_shfl:
// cl/reduce/dp4a.cl), the class sums of one load for a sum.
#ifdef RGB_SUM_CLASSES
#define RGB_FOLD(op, w) ((op) == REDUCE_MIN || (op) == REDUCE_MAX ? rgb_classes(op, w) : RGB_SUM_CLASSES(w))
#else
#define RGB_FOLD(op, w) rgb_classes(op, w)
#endif

// One byte `v` of channel c as a pixel: the other channels hold op's identity.
inline uint3 rgb_one(int op, uint c, uint v)
{
    uint3 a = I_IDENTITY(op);
    return (uint3)(c == 0 ? v : a.x, c == 1 ? v : a.y, c == 2 ? v : a.z);
}

// Work-item `lid`'s share (lid < TEAM) of the `width` pixels from pixel
// `base`, folded with `op` per channel: the 16-byte loads lid, lid + TEAM,
// ... of the aligned middle (four in flight), and one byte of the
// unaligned head and tail (each shorter than 16 <= TEAM bytes).
inline ulong3 walk_rgb(__global const T* in, size_t base, int width, int lid, int op)
{
    size_t b0 = 3 * base;
    int nbytes = 3 * width;
    int head = min(nbytes, (int)((16 - b0 % 16) % 16));
    int nvec = (nbytes - head) / 16;
    int tail = head + nvec * 16;
    ulong3 t = convert_ulong3(I_IDENTITY(op));
    if (lid < head)
        t = I_COMBINE(op, t, convert_ulong3(rgb_one(op, (uint)lid % 3, in[b0 + lid])));
    if (lid < nbytes - tail)
        t = I_COMBINE(op, t, convert_ulong3(rgb_one(op, (uint)(tail + lid) % 3, in[b0 + tail + lid])));
    __global const uint4* v = (__global const uint4*)(in + b0 + head);
    // Load j starts at row byte head + 16 j: its first byte is channel
    // (head + j) % 3.
    for (int j = lid; j < nvec;) {
        uint3 a = I_IDENTITY(op);
        int k = 0;
        // A load adds at most 6 bytes to a channel: I_CHUNK / 6 loads
        // (rounded up to the unrolled step of 4) stay below 2^32.
        for (; k < I_CHUNK / 6 && j + 3 * TEAM < nvec; k += 4, j += 4 * TEAM) {
            uint4 v0 = v[j], v1 = v[j + TEAM], v2 = v[j + 2 * TEAM], v3 = v[j + 3 * TEAM];
            a = I_COMBINE(op, a, rgb_turn(RGB_FOLD(op, v0), (uint)(head + j) % 3));
            a = I_COMBINE(op, a, rgb_turn(RGB_FOLD(op, v1), (uint)(head + j + TEAM) % 3));
            a = I_COMBINE(op, a, rgb_turn(RGB_FOLD(op, v2), (uint)(head + j + 2 * TEAM) % 3));
            a = I_COMBINE(op, a, rgb_turn(RGB_FOLD(op, v3), (uint)(head + j + 3 * TEAM) % 3));
        }
        for (; k < I_CHUNK / 6 && j < nvec; k++, j += TEAM)
            a = I_COMBINE(op, a, rgb_turn(RGB_FOLD(op, v[j]), (uint)(head + j) % 3));
        t = I_COMBINE(op, t, convert_ulong3(a));
    }
    return t;
}
#endif

#define PIXEL(in, x, y, width) TO_FLOATN(LOADPIX(in, (size_t)(y) * (size_t)(width) + (size_t)(x)))

// Axis x, one work-item per row: a sequential compensated walk along it.
__kernel void reduce_x_row(__global const T* in, int width, int height, int op,
                           __global float* out)
{
    int y = get_global_id(0);
    if (y >= height) return;
    FLOATN a = IDENTITY(op), c = (FLOATN)(0.0f);
    for (int x = 0; x < width; x++) {
        FLOATN v = PIXEL(in, x, y, width);
        ACCUMULATE(op, a, c, v);
    }
    STOREP(FINISH(op, SETTLE(op, a, c), width), out, y);
}

// Work-item `lid`'s part of row y in the row-group variants (x_tree,
// x_shfl): every TEAM-th pixel from lid < TEAM (coalesced across the team), in
// integers under INT_SUM, else a compensated float walk, settled.
#ifdef INT_SUM
#define ACC_COMBINE I_COMBINE
#define ACC_IDENTITY(op) TO_ULONGN(I_IDENTITY(op))
#else
#define ACC_COMBINE COMBINE
#define ACC_IDENTITY(op) IDENTITY(op)
#endif
inline ACC_T row_part(__global const T* in, int y, int width, int lid, int op)
{
#if defined(INT_SUM) && defined(PACK) && CH == 1
    return BY_OP(op, walk_packed, in, (size_t)y * (size_t)width, width, lid);
#elif defined(INT_SUM) && defined(RGB_BYTES)
    return RGB_BY_OP(op, walk_rgb, in, (size_t)y * (size_t)width, width, lid);
#elif defined(INT_SUM)
    long count = lid < width ? (width - lid + TEAM - 1) / TEAM : 0;
    return BY_OP(op, walk_int, in, (size_t)y * (size_t)width + lid, TEAM, count);
#else
    FLOATN a = IDENTITY(op), c = (FLOATN)(0.0f);
    int x = lid;
    // Four loads issued before their adds, in the same order as one at a
    // time (same result): more bytes in flight per work-item.
    for (; x + 3 * TEAM < width; x += 4 * TEAM) {
        FLOATN v0 = PIXEL(in, x, y, width), v1 = PIXEL(in, x + TEAM, y, width);
        FLOATN v2 = PIXEL(in, x + 2 * TEAM, y, width), v3 = PIXEL(in, x + 3 * TEAM, y, width);
        ACCUMULATE(op, a, c, v0);
        ACCUMULATE(op, a, c, v1);
        ACCUMULATE(op, a, c, v2);
        ACCUMULATE(op, a, c, v3);
    }
    for (; x < width; x += TEAM) {
        FLOATN v = PIXEL(in, x, y, width);
        ACCUMULATE(op, a, c, v);
    }
    return SETTLE(op, a, c);
#endif
}

// Axis x, a team of TEAM work-items per row: row_part, then a
// local-memory tree within the team. Every work-item of the group reaches
// the barriers, a team past the last row with identities.
__kernel void reduce_x_tree(__global const T* in, int width, int height, int op,
                            __global float* out)
{
    __local ACC_T buf[LWS];
    int lid = get_local_id(0), t = lid % TEAM;
    int y = get_global_id(1) * (LWS / TEAM) + lid / TEAM;
    buf[lid] = y < height ? row_part(in, y, width, t, op) : ACC_IDENTITY(op);
    for (int s = TEAM / 2; s > 0; s >>= 1) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t < s) buf[lid] = ACC_COMBINE(op, buf[lid], buf[lid + s]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0 && y < height) STOREP(FINISH(op, TO_FLOATN(buf[lid]), width), out, y);
}
