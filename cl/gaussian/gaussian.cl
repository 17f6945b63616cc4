// gaussian.cl: Gaussian blur stages.
//
// Passes work on a float "working image" of W pixels: W = float for gray,
// float4 for RGB and RGBA (RGB is expanded to RGBA here, the 4th channel
// unused). gaussian_to_w / gaussian_from_w convert from and to the user's
// T/CH layout; for f32 gray and f32 RGBA the user's buffer is used directly.
//
// Recursive passes use Deriche's 4th-order filter as two complex first-order
// sections (src/ops/gaussian/coeffs.rs). Arguments, as float4 over the two
// sections (re0, im0, re1, im1): P poles, A output weights, SA the
// anticausal steady-state factor for the replicate border (the causal one is
// not needed: lines are filtered as deviations from their first sample, whose
// causal steady state is 0).

#if CH == 1
#define W float
#else
#define W float4
#endif

#if CH == 1
#define TO_W(v) convert_float(v)
#elif CH == 3
#define TO_W(v) ((float4)(convert_float3(v), 0.0f))
#else
#define TO_W(v) convert_float4(v)
#endif

#if T_IS_FLOAT
#define NARROW(v) (v)
#else
#define NARROW(v) CAT(CAT(convert_, PIX), _sat_rte)(v)
#endif

#if CH == 3
#define FROM_W(v) NARROW((v).xyz)
#else
#define FROM_W(v) NARROW(v)
#endif

__kernel void gaussian_to_w(__global const T* in, __global W* out, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = TO_W(LOADP(in, i));
}

__kernel void gaussian_from_w(__global const W* in, __global T* out, int n)
{
    int i = get_global_id(0);
    if (i < n)
        STOREP(FROM_W(in[i]), out, i);
}

// One sample into the causal state (w0, w1) or the anticausal state (v0, v1)
// of both sections (poles P). The causal state is updated before its output
// is taken; the anticausal output is taken before the update.
#define CAUSAL_STEP_T(TYPE, v)                                                  \
    {                                                                           \
        TYPE t0 = P.x * w0r - P.y * w0i + (v);                                     \
        w0i = P.x * w0i + P.y * w0r;                                            \
        w0r = t0;                                                               \
        TYPE t1 = P.z * w1r - P.w * w1i + (v);                                     \
        w1i = P.z * w1i + P.w * w1r;                                            \
        w1r = t1;                                                               \
    }
#define ANTI_STEP_T(TYPE, v)                                                    \
    {                                                                           \
        TYPE ur = (v) + v0r, ui = v0i;                                             \
        v0r = P.x * ur - P.y * ui;                                              \
        v0i = P.x * ui + P.y * ur;                                              \
        ur = (v) + v1r;                                                         \
        ui = v1i;                                                               \
        v1r = P.z * ur - P.w * ui;                                              \
        v1i = P.z * ui + P.w * ur;                                              \
    }
// s += Q * (lr, li, mr, mi), both sections.
#define CMAD(Q, ar, ai, br, bi, lr, li, mr, mi)                                 \
    {                                                                           \
        ar += Q.x * (lr) - Q.y * (li);                                          \
        ai += Q.x * (li) + Q.y * (lr);                                          \
        br += Q.z * (mr) - Q.w * (mi);                                          \
        bi += Q.z * (mi) + Q.w * (mr);                                          \
    }
#define CSQUARE(Q) ((float4)(Q.x * Q.x - Q.y * Q.y, 2.0f * Q.x * Q.y, Q.z * Q.z - Q.w * Q.w, 2.0f * Q.z * Q.w))
#define CAUSAL_STEP(v) CAUSAL_STEP_T(W, v)
#define ANTI_STEP(v) ANTI_STEP_T(W, v)

// One line (n samples, `step` apart from `base`) through both sections:
// forward (causal) writes out, backward (anticausal) adds to it. TYPE is the
// sample type, LD/ST load and store one TYPE at an element index.
//
// The line is filtered as deviations from its first sample c (the DC gain
// is 1, so c is added back at the end). The states hold up to ~sigma/2 times
// their input, so filtering raw values would round c itself at large sigma
// (a constant 40001 came back as 40002 at sigma 1000); deviations are exactly
// zero for a constant line and small wherever the line is smooth.
#define IIR_LINE(TYPE, LD, ST)                                                  \
    {                                                                           \
        TYPE c = LD(base);                                                      \
        TYPE w0r = 0.0f, w0i = 0.0f, w1r = 0.0f, w1i = 0.0f;                    \
        for (int k = 0; k < n; k++) {                                           \
            int idx = base + k * step;                                          \
            TYPE v = LD(idx) - c;                                               \
            CAUSAL_STEP_T(TYPE, v)                                              \
            ST(idx, A.x * w0r - A.y * w0i + A.z * w1r - A.w * w1i);             \
        }                                                                       \
        TYPE xl = LD(base + (n - 1) * step) - c;                                \
        TYPE v0r = xl * SA.x, v0i = xl * SA.y, v1r = xl * SA.z, v1i = xl * SA.w; \
        for (int k = n - 1; k >= 0; k--) {                                      \
            int idx = base + k * step;                                          \
            TYPE v = LD(idx) - c;                                               \
            ST(idx, LDO(idx) + (A.x * v0r - A.y * v0i + A.z * v1r - A.w * v1i) + c); \
            ANTI_STEP_T(TYPE, v)                                                \
        }                                                                       \
    }

#define LD_W(i) in[(i)]
#define ST_W(i, v) (out[(i)] = (v))
#define LDO(i) out[(i)]

void iir_line(__global const W* in, __global W* out, int base, int step, int n,
              float4 P, float4 A, float4 SA)
IIR_LINE(W, LD_W, ST_W)

// rgV: one work-item per column; neighbouring work-items read neighbouring
// pixels, so every access is coalesced. Only `width` work-items exist.
__kernel void gaussian_iir_cols(__global const W* in, __global W* out, int width, int height,
                                float4 P, float4 A, float4 SA)
{
    int x = get_global_id(0);
    if (x < width)
        iir_line(in, out, x, width, height, P, A, SA);
}

// rgH: one work-item per row. Neighbouring work-items are a whole row apart,
// so no access is coalesced: the cost of this layout is what the transposing
// variants avoid.
__kernel void gaussian_iir_rows(__global const W* in, __global W* out, int width, int height,
                                float4 P, float4 A, float4 SA)
{
    int y = get_global_id(0);
    if (y < height)
        iir_line(in, out, y * width, 1, width, P, A, SA);
}

#if CH == 1
#undef LDO
#define LD_V4(i) vload4(0, in + (i))
#define ST_V4(i, v) vstore4((v), 0, out + (i))
#define LDO(i) vload4(0, out + (i))
void iir_line4(__global const float* in, __global float* out, int base, int step, int n,
               float4 P, float4 A, float4 SA)
IIR_LINE(float4, LD_V4, ST_V4)
#undef LDO
#define LDO(i) out[(i)]

// rgV on gray with float4: each work-item filters 4 adjacent columns with
// vector loads and stores (16 bytes per access). Columns past the last
// multiple of 4 go through the scalar line.
__kernel void gaussian_iir_cols4(__global const float* in, __global float* out, int width, int height,
                                 float4 P, float4 A, float4 SA)
{
    int x = get_global_id(0) * 4;
    if (x + 3 < width) {
        iir_line4(in, out, x, width, height, P, A, SA);
    } else {
        for (; x < width; x++)
            iir_line(in, out, x, width, height, P, A, SA);
    }
}
#endif

// Border index for the FIR passes.
#ifdef MIRROR
inline int border_index(int i, int n)
{
    int m = i % (2 * n);
    if (m < 0) m += 2 * n;
    return m < n ? m : 2 * n - 1 - m;
}
#else
inline int border_index(int i, int n) { return clamp(i, 0, n - 1); }
#endif

#ifdef FIR_RMAX
// Separable FIR, horizontal: a FIR_LX-wide segment of one row plus r pixels
// on each side is staged in local memory and every tap reads from there.
__kernel void gaussian_fir_rows(__global const W* in, __global W* out, int width, int height,
                                __global const float* taps, int r)
{
    __local W tile[FIR_LX + 2 * FIR_RMAX];
    int lx = get_local_id(0);
    int x0 = get_group_id(0) * FIR_LX;
    int y = get_global_id(1);
    int yy = min(y, height - 1);  // rows past the end load a valid row, then write nothing
    for (int i = lx; i < FIR_LX + 2 * r; i += FIR_LX)
        tile[i] = in[yy * width + border_index(x0 - r + i, width)];
    barrier(CLK_LOCAL_MEM_FENCE);
    int x = x0 + lx;
    if (x < width && y < height) {
        W acc = 0.0f;
        for (int k = 0; k <= 2 * r; k++)
            acc += taps[k] * tile[lx + k];
        out[y * width + x] = acc;
    }
}

// Separable FIR, vertical: a FIR_TY x FIR_TX tile plus r rows above and below.
__kernel void gaussian_fir_cols(__global const W* in, __global W* out, int width, int height,
                                __global const float* taps, int r)
{
    __local W tile[FIR_TY + 2 * FIR_RMAX][FIR_TX];
    int lx = get_local_id(0), ly = get_local_id(1);
    int x = get_global_id(0);
    int y0 = get_group_id(1) * FIR_TY;
    int xx = min(x, width - 1);
    for (int i = ly; i < FIR_TY + 2 * r; i += FIR_TY)
        tile[i][lx] = in[border_index(y0 - r + i, height) * width + xx];
    barrier(CLK_LOCAL_MEM_FENCE);
    int y = y0 + ly;
    if (x < width && y < height) {
        W acc = 0.0f;
        for (int k = 0; k <= 2 * r; k++)
            acc += taps[k] * tile[ly + k][lx];
        out[y * width + x] = acc;
    }
}
#endif



#if defined(COL_BLK) || defined(ROW_SEG)
// Block sums of the block-parallel passes: 8 working values per (line,
// block), sums[(k * nblocks + b) * lines + line], where a line is a column
// (iir_blocks, iir_local) or a row (iir_rowblk) and k 0-3 are the causal
// state after the block, 4-7 the anticausal state it hands to the block
// before it, each the two sections' (re, im). Consecutive lines are adjacent,
// so the carry pass's accesses coalesce.
#define SUMS_AT(k, b, line, lines) sums[((k) * nblocks + (b)) * (lines) + (line)]
#endif

#ifdef ROW_SEG
// Rows staged in local memory, ROW_SEG samples per work-item, ROW_WG
// work-items filtering consecutive segments of one row:
//  - iir_local: gaussian_row_local, one work-group per row holding the whole
//    row (ROW_WG * ROW_SEG >= width).
//  - iir_rowblk: the row cut into tiles of ROW_TILE samples, one work-group
//    per (tile, row), and the tiles joined like the column blocks:
//    gaussian_rowblk_sums (each tile's zero-state totals into the block
//    sums), gaussian_blk_carry (exact incoming states per tile),
//    gaussian_rowblk_apply (each tile filtered from them).
// Within a group each work-item filters its segment from zero state, a
// Hillis-Steele scan over the work-group (log2 steps, pole powers squared per
// step) gives every segment its exact incoming states, and each segment is
// filtered again, its causal outputs kept in registers. Loads and stores go
// through local memory, so they are coalesced, and there are no transposes.
//
// Segment t lives at xs[t * RSP ...]: RSP is odd, so the 32 work-items of a
// warp reading "their" m-th sample hit 32 different banks.
//
// The row is padded with its last value to a whole number of ROW_TILE (one
// group's length). The anticausal pass starts at the padded end from the
// replicate steady state (for iir_rowblk the carry hands it to the last
// tile), which constant input keeps unchanged, so the padding changes
// nothing and every segment has the same length: one pole power PS =
// p^ROW_SEG for the whole scan, and PL = p^ROW_TILE between tiles.
//
// Per work-item, states are W s[8]: 0-3 causal (w0r, w0i, w1r, w1i), 4-7
// anticausal (v0r, v0i, v1r, v1i).
#define RSP (ROW_SEG + 1)
#define ROW_TILE (ROW_WG * ROW_SEG)

// Stages samples x0 .. x0 + ROW_TILE - 1 of `row` as deviations from c,
// past the row's end its last value.
void row_stage(__global const W* row, __local W* xs, int x0, int width, W c)
{
    int t = get_local_id(0);
    // Unrolled so that all of a work-item's loads are in flight at once.
#pragma unroll
    for (int k = 0; k < ROW_SEG; k++) {
        int i = t + k * ROW_WG;
        xs[(i / ROW_SEG) * RSP + i % ROW_SEG] = row[min(x0 + i, width - 1)] - c;
    }
}

// Writes the staged samples that lie inside the row.
void row_unstage(__global W* row, __local const W* xs, int x0, int width)
{
    int n = min(ROW_TILE, width - x0);
    for (int i = get_local_id(0); i < n; i += ROW_WG)
        row[x0 + i] = xs[(i / ROW_SEG) * RSP + i % ROW_SEG];
}

// Zero-state sweeps over one segment: the causal state after it and the
// anticausal state it hands to the segment before it.
void row_seg_sums(__local const W* seg, float4 P, W* s)
{
    W w0r = 0.0f, w0i = 0.0f, w1r = 0.0f, w1i = 0.0f;
    W v0r = 0.0f, v0i = 0.0f, v1r = 0.0f, v1i = 0.0f;
#pragma unroll
    for (int m = 0; m < ROW_SEG; m++)
        CAUSAL_STEP(seg[m]);
#pragma unroll
    for (int m = ROW_SEG - 1; m >= 0; m--)
        ANTI_STEP(seg[m]);
    s[0] = w0r; s[1] = w0i; s[2] = w1r; s[3] = w1i;
    s[4] = v0r; s[5] = v0i; s[6] = v1r; s[7] = v1i;
}

// Adds the group's incoming states e (causal before its first sample,
// anticausal at its last, padded, sample) to the end states of the first and
// the last segment, carried across the segment by PS = p^ROW_SEG.
void row_inject(float4 PS, W* s, const W* e)
{
    int t = get_local_id(0);
    if (t == 0)
        CMAD(PS, s[0], s[1], s[2], s[3], e[0], e[1], e[2], e[3]);
    if (t == ROW_WG - 1)
        CMAD(PS, s[4], s[5], s[6], s[7], e[4], e[5], e[6], e[7]);
}

// Inclusive scans of the segments' end states: causal left to right,
// anticausal right to left. Afterwards segment t holds the causal state after
// it and the anticausal state it hands on, given what row_inject added.
// sc holds 4 * ROW_WG working values.
void row_scan(__local W* sc, float4 PS, W* s)
{
    int t = get_local_id(0);
    float4 Q = PS;
    for (int d = 1; d < ROW_WG; d *= 2) {
        sc[t] = s[0]; sc[ROW_WG + t] = s[1]; sc[2 * ROW_WG + t] = s[2]; sc[3 * ROW_WG + t] = s[3];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t >= d)
            CMAD(Q, s[0], s[1], s[2], s[3], sc[t - d], sc[ROW_WG + t - d], sc[2 * ROW_WG + t - d],
                 sc[3 * ROW_WG + t - d]);
        barrier(CLK_LOCAL_MEM_FENCE);
        sc[t] = s[4]; sc[ROW_WG + t] = s[5]; sc[2 * ROW_WG + t] = s[6]; sc[3 * ROW_WG + t] = s[7];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (t + d < ROW_WG)
            CMAD(Q, s[4], s[5], s[6], s[7], sc[t + d], sc[ROW_WG + t + d], sc[2 * ROW_WG + t + d],
                 sc[3 * ROW_WG + t + d]);
        barrier(CLK_LOCAL_MEM_FENCE);
        Q = CSQUARE(Q);
    }
}

// Inclusive to exclusive: segment t starts from segment t-1's causal total
// and from segment t+1's anticausal total; the first and the last segment
// start from the group's incoming states e.
void row_shift(__local W* sc, W* s, const W* e)
{
    int t = get_local_id(0);
    sc[t] = s[0]; sc[ROW_WG + t] = s[1]; sc[2 * ROW_WG + t] = s[2]; sc[3 * ROW_WG + t] = s[3];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t > 0) {
        s[0] = sc[t - 1]; s[1] = sc[ROW_WG + t - 1]; s[2] = sc[2 * ROW_WG + t - 1]; s[3] = sc[3 * ROW_WG + t - 1];
    } else {
        s[0] = e[0]; s[1] = e[1]; s[2] = e[2]; s[3] = e[3];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    sc[t] = s[4]; sc[ROW_WG + t] = s[5]; sc[2 * ROW_WG + t] = s[6]; sc[3 * ROW_WG + t] = s[7];
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t < ROW_WG - 1) {
        s[4] = sc[t + 1]; s[5] = sc[ROW_WG + t + 1]; s[6] = sc[2 * ROW_WG + t + 1]; s[7] = sc[3 * ROW_WG + t + 1];
    } else {
        s[4] = e[4]; s[5] = e[5]; s[6] = e[6]; s[7] = e[7];
    }
}

// Exact sweeps over one segment from its incoming states s: causal outputs
// held in registers, then the anticausal sweep adds its part and overwrites
// each sample (plus c) once it is used.
void row_seg_apply(__local W* seg, float4 P, float4 A, W c, const W* s)
{
    W w0r = s[0], w0i = s[1], w1r = s[2], w1i = s[3];
    W v0r = s[4], v0i = s[5], v1r = s[6], v1i = s[7];
    W ys[ROW_SEG];
#pragma unroll
    for (int m = 0; m < ROW_SEG; m++) {
        CAUSAL_STEP(seg[m]);
        ys[m] = A.x * w0r - A.y * w0i + A.z * w1r - A.w * w1i;
    }
#pragma unroll
    for (int m = ROW_SEG - 1; m >= 0; m--) {
        W v = seg[m];
        seg[m] = ys[m] + (A.x * v0r - A.y * v0i + A.z * v1r - A.w * v1i) + c;
        ANTI_STEP(v);
    }
}

// iir_local: one work-group per row, the whole row in local memory, read
// once and written once. PS holds p^ROW_SEG for both sections.
__kernel __attribute__((reqd_work_group_size(ROW_WG, 1, 1)))
void gaussian_row_local(__global const W* in, __global W* out, int width, int height,
                        float4 P, float4 A, float4 SA, float4 PS)
{
    __local W xs[ROW_WG * RSP];
    __local W sc[4 * ROW_WG];
    int y = get_group_id(0);
    __global const W* row = in + y * width;
    W c = row[0];
    row_stage(row, xs, 0, width, c);
    barrier(CLK_LOCAL_MEM_FENCE);
    __local W* seg = xs + get_local_id(0) * RSP;
    W s[8];
    row_seg_sums(seg, P, s);
    // Incoming: causally 0 (the first sample's deviation is 0), the
    // replicate steady state at the padded end.
    // (Assigned one by one: a brace list would fill float4 elements lane by lane.)
    W xl = row[width - 1] - c;
    W e[8];
    e[0] = e[1] = e[2] = e[3] = 0.0f;
    e[4] = xl * SA.x; e[5] = xl * SA.y; e[6] = xl * SA.z; e[7] = xl * SA.w;
    row_inject(PS, s, e);
    row_scan(sc, PS, s);
    row_shift(sc, s, e);
    row_seg_apply(seg, P, A, c, s);
    barrier(CLK_LOCAL_MEM_FENCE);
    row_unstage(out + y * width, xs, 0, width);
}

// iir_rowblk pass 1: tile b of row y from zero state; its causal state after
// the tile (the last segment's inclusive total) and the anticausal state it
// hands to the tile before it (the first segment's) go into the block sums,
// one block per tile. The launch is exactly nblocks x height groups.
__kernel __attribute__((reqd_work_group_size(ROW_WG, 1, 1)))
void gaussian_rowblk_sums(__global const W* in, __global W* sums, int width, int height,
                          int nblocks, float4 P, float4 PS)
{
    __local W xs[ROW_WG * RSP];
    __local W sc[4 * ROW_WG];
    int t = get_local_id(0);
    int b = get_group_id(0), y = get_group_id(1);
    __global const W* row = in + y * width;
    row_stage(row, xs, b * ROW_TILE, width, row[0]);
    barrier(CLK_LOCAL_MEM_FENCE);
    W s[8];
    row_seg_sums(xs + t * RSP, P, s);
    row_scan(sc, PS, s);
    if (t == ROW_WG - 1)
        for (int k = 0; k < 4; k++)
            SUMS_AT(k, b, y, height) = s[k];
    if (t == 0)
        for (int k = 4; k < 8; k++)
            SUMS_AT(k, b, y, height) = s[k];
}

// iir_rowblk pass 3: tile b of row y filtered from the exact incoming states
// that gaussian_blk_carry wrote over its sums (the last tile's anticausal one
// is the steady state at its padded end). The launch is exactly nblocks x
// height groups.
__kernel __attribute__((reqd_work_group_size(ROW_WG, 1, 1)))
void gaussian_rowblk_apply(__global const W* in, __global const W* sums, __global W* out,
                           int width, int height, int nblocks, float4 P, float4 A, float4 PS)
{
    __local W xs[ROW_WG * RSP];
    __local W sc[4 * ROW_WG];
    int b = get_group_id(0), y = get_group_id(1);
    __global const W* row = in + y * width;
    W c = row[0];
    row_stage(row, xs, b * ROW_TILE, width, c);
    barrier(CLK_LOCAL_MEM_FENCE);
    __local W* seg = xs + get_local_id(0) * RSP;
    W s[8], e[8];
    row_seg_sums(seg, P, s);
    for (int k = 0; k < 8; k++)
        e[k] = SUMS_AT(k, b, y, height);
    row_inject(PS, s, e);
    row_scan(sc, PS, s);
    row_shift(sc, s, e);
    row_seg_apply(seg, P, A, c, s);
    barrier(CLK_LOCAL_MEM_FENCE);
    row_unstage(out + y * width, xs, b * ROW_TILE, width);
}
#endif

#ifdef COL_BLK
// Block-parallel recursive filtering along columns (iir_blocks, iir_local),
// after Nehab et al. (2011) but simpler, because each section is first
// order: a column is cut into blocks of COL_BLK rows, one work-item per
// (column, block), which gives width x height / COL_BLK work-items instead
// of width. Pass 1 filters each block from zero state, pass 2 turns those
// sums into exact incoming states, pass 3 filters each block from them.
// Blocks are held in registers (no local memory, so occupancy is limited
// by registers alone). The last block is padded with the column's last
// value: the anticausal pass enters it from the replicate steady state,
// which constant input keeps, so every block has the same length and one
// pole power PL = p^COL_BLK carries states between blocks. Pass 2 is
// gaussian_blk_carry below, shared with iir_rowblk's rows; the sums layout
// is SUMS_AT's.
#define CSUM(k) SUMS_AT(k, b, x, width)

// Pass 1: each block's zero-state causal end state and anticausal start.
__kernel void gaussian_blk_sums(__global const W* in, __global W* sums, int width, int height,
                                 int nblocks, float4 P)
{
    int x = get_global_id(0), b = get_global_id(1);
    if (x >= width || b >= nblocks)
        return;
    int y0 = b * COL_BLK;
    W c = in[x];
    W xs[COL_BLK];
#pragma unroll
    for (int m = 0; m < COL_BLK; m++)
        xs[m] = in[min(y0 + m, height - 1) * width + x] - c;
    W w0r = 0.0f, w0i = 0.0f, w1r = 0.0f, w1i = 0.0f;
    W v0r = 0.0f, v0i = 0.0f, v1r = 0.0f, v1i = 0.0f;
#pragma unroll
    for (int m = 0; m < COL_BLK; m++)
        CAUSAL_STEP(xs[m]);
#pragma unroll
    for (int m = COL_BLK - 1; m >= 0; m--)
        ANTI_STEP(xs[m]);
    CSUM(0) = w0r; CSUM(1) = w0i; CSUM(2) = w1r; CSUM(3) = w1i;
    CSUM(4) = v0r; CSUM(5) = v0i; CSUM(6) = v1r; CSUM(7) = v1i;
}

// Pass 3: each block filtered from its exact states, in registers.
__kernel void gaussian_blk_apply(__global const W* in, __global const W* sums, __global W* out,
                                  int width, int height, int nblocks, float4 P, float4 A)
{
    int x = get_global_id(0), b = get_global_id(1);
    if (x >= width || b >= nblocks)
        return;
    int y0 = b * COL_BLK;
    W c = in[x];
    W xs[COL_BLK], ys[COL_BLK];
#pragma unroll
    for (int m = 0; m < COL_BLK; m++)
        xs[m] = in[min(y0 + m, height - 1) * width + x] - c;
    W w0r = CSUM(0), w0i = CSUM(1), w1r = CSUM(2), w1i = CSUM(3);
    W v0r = CSUM(4), v0i = CSUM(5), v1r = CSUM(6), v1i = CSUM(7);
#pragma unroll
    for (int m = 0; m < COL_BLK; m++) {
        CAUSAL_STEP(xs[m]);
        ys[m] = A.x * w0r - A.y * w0i + A.z * w1r - A.w * w1i;
    }
#pragma unroll
    for (int m = COL_BLK - 1; m >= 0; m--) {
        if (y0 + m < height)
            out[(y0 + m) * width + x] = ys[m] + (A.x * v0r - A.y * v0i + A.z * v1r - A.w * v1i) + c;
        ANTI_STEP(xs[m]);
    }
}
#undef CSUM
#endif

#if defined(COL_BLK) || defined(ROW_SEG)
// Pass 2 of the block-parallel passes, columns (iir_blocks, iir_local) and
// rows (iir_rowblk) alike: zero-state sums in, exact incoming states out
// (the causal state before each block's first sample, the anticausal state
// at its last). A line's blocks are split into CARRY_LANES runs of
// consecutive blocks, one work-item each (one work-item per column left the
// GPU nearly idle): each run's total from zero state, the totals folded
// across runs in local memory, then each run walked again from its exact
// incoming state. Work-group: 32 lines x CARRY_LANES runs.
#define CARRY_LANES 8
#if CH == 1
#define CARRY_BATCH 8
#else
#define CARRY_BATCH 4
#endif

// Walks blocks b = first, first + dir, ... (n of them) through
// s <- sum(k0..k3) + PL * s, in batches whose loads are all issued before
// any is used. With STORE, each block's incoming state is written over its
// sums first. (The batch loops have constant bounds, so compilers unroll
// them without a pragma, which a macro could not carry portably.)
#define CSUM(k) SUMS_AT(k, b, x, lines)
#define CARRY_WALK(k0, first, dir, n, sr, si, tr, ti, STORE)                    \
    for (int j0 = 0; j0 < (n); j0 += CARRY_BATCH) {                             \
        W e[4][CARRY_BATCH];                                                    \
        for (int j = 0; j < CARRY_BATCH; j++) {                                 \
            int b = (first) + (dir) * min(j0 + j, (n) - 1);                     \
            e[0][j] = CSUM(k0); e[1][j] = CSUM(k0 + 1);                         \
            e[2][j] = CSUM(k0 + 2); e[3][j] = CSUM(k0 + 3);                     \
        }                                                                       \
        for (int j = 0; j < CARRY_BATCH; j++) {                                 \
            if (j0 + j < (n)) {                                                 \
                int b = (first) + (dir) * (j0 + j);                             \
                if (STORE) {                                                    \
                    CSUM(k0) = sr; CSUM(k0 + 1) = si;                           \
                    CSUM(k0 + 2) = tr; CSUM(k0 + 3) = ti;                       \
                }                                                               \
                CMAD(PL, e[0][j], e[1][j], e[2][j], e[3][j], sr, si, tr, ti);   \
                sr = e[0][j]; si = e[1][j]; tr = e[2][j]; ti = e[3][j];          \
            }                                                                   \
        }                                                                       \
    }

// Line x starts at in[x * stride] and ends at in[x * stride + span]:
// stride 1, span (height - 1) * width for columns; stride width, span
// width - 1 for rows.
__kernel __attribute__((reqd_work_group_size(32, CARRY_LANES, 1)))
void gaussian_blk_carry(__global const W* in, __global W* sums, int lines, int stride, int span,
                         int nblocks, float4 SA, float4 PL)
{
    __local W tot[CARRY_LANES][4][32];
    __local float4 pw[CARRY_LANES];  // PL^(blocks in the run)
    int lx = get_local_id(0), lane = get_local_id(1);
    int x = get_global_id(0);
    int run = (nblocks + CARRY_LANES - 1) / CARRY_LANES;
    int b0 = lane * run;
    int n = (x < lines) ? clamp(nblocks - b0, 0, run) : 0;
    __global const W* line = in + min(x, lines - 1) * stride;
    W c = line[0];
    if (lx == 0) {
        float4 q = (float4)(1.0f, 0.0f, 1.0f, 0.0f);
        int m = clamp(nblocks - b0, 0, run);
        for (int k = 0; k < m; k++)
            q = (float4)(q.x * PL.x - q.y * PL.y, q.x * PL.y + q.y * PL.x,
                         q.z * PL.z - q.w * PL.w, q.z * PL.w + q.w * PL.z);
        pw[lane] = q;
    }

    // Causal, forwards. The first sample's deviation is 0, so the causal
    // steady state before the line is 0.
    W sr = 0.0f, si = 0.0f, tr = 0.0f, ti = 0.0f;
    CARRY_WALK(0, b0, 1, n, sr, si, tr, ti, 0)
    tot[lane][0][lx] = sr; tot[lane][1][lx] = si; tot[lane][2][lx] = tr; tot[lane][3][lx] = ti;
    barrier(CLK_LOCAL_MEM_FENCE);
    sr = si = tr = ti = 0.0f;
    for (int k = 0; k < lane; k++) {
        W ar = tot[k][0][lx], ai = tot[k][1][lx], br = tot[k][2][lx], bi = tot[k][3][lx];
        float4 q = pw[k];
        CMAD(q, ar, ai, br, bi, sr, si, tr, ti);
        sr = ar; si = ai; tr = br; ti = bi;
    }
    CARRY_WALK(0, b0, 1, n, sr, si, tr, ti, 1)
    barrier(CLK_LOCAL_MEM_FENCE);

    // Anticausal, backwards, from the replicate steady state at the last
    // (padded) sample.
    int last = b0 + n - 1;
    sr = si = tr = ti = 0.0f;
    CARRY_WALK(4, last, -1, n, sr, si, tr, ti, 0)
    tot[lane][0][lx] = sr; tot[lane][1][lx] = si; tot[lane][2][lx] = tr; tot[lane][3][lx] = ti;
    barrier(CLK_LOCAL_MEM_FENCE);
    W xl = line[span] - c;
    sr = xl * SA.x; si = xl * SA.y; tr = xl * SA.z; ti = xl * SA.w;
    for (int k = CARRY_LANES - 1; k > lane; k--) {
        W ar = tot[k][0][lx], ai = tot[k][1][lx], br = tot[k][2][lx], bi = tot[k][3][lx];
        float4 q = pw[k];
        CMAD(q, ar, ai, br, bi, sr, si, tr, ti);
        sr = ar; si = ai; tr = br; ti = bi;
    }
    CARRY_WALK(4, last, -1, n, sr, si, tr, ti, 1)
}
#undef CARRY_WALK
#undef CSUM

#endif

#ifdef T2_TILE
// iir_tiles: both directions from two reads of the image, after Nehab et
// al. (2011), "GPU-efficient recursive filtering and summed-area tables":
// square tiles of T2_TILE x T2_TILE, one work-group of T2_TILE work-items
// per tile, the tile staged at a padded stride in local memory.
//
//  1. gaussian_t2_sums: the tile's columns filtered from zero state (held in
//     registers), their block sums (as gaussian_blk_sums), then the tile's
//     rows of that zero-state result summed from zero state (as the row
//     tiles of iir_rowblk), relative to each row's first raw sample.
//  2. gaussian_blk_carry over the column sums: exact column states.
//  3. gaussian_t2_fix: the exact column states change the column-filtered
//     tile by a field that is separable (a pole power down the column times
//     the column's state), so their effect on the row sums is a small
//     product: per tile, tk[k][s] = sum over columns of the row-sum weight k
//     times state s, then per row the column weights f_s(m). The row sums
//     become those of the exact column-filtered image, relative to its
//     first sample in the row, and each row's first and last exactly
//     column-filtered values go into `exact`.
//  4. gaussian_blk_carry over the row sums (lines: `exact`): exact row states.
//  5. gaussian_t2_apply: each tile filtered down its columns from their
//     exact states and along its rows from theirs, written once.
//
// Passes 1 and 5 are bound by arithmetic, not memory, so their tile lines
// run each section as a real second-order recursion: up to sigma 64 in a
// direction as a biquad (t2_line_bq; on an H200 at 8192x8192 this took pass
// 1 from 167 to 148 us and pass 5 from 242 to 198 against the complex
// form), above that in delta form (t2_line_dq; at sigma 100 pass 1 from
// 173 to 159 us, pass 5 from 240 to 219). The carries and the fix-up keep
// the complex states, and pass 1's row sums the complex recursion (they
// need no outputs, only states).
//
// The last tile of a row is padded with copies of the row's last column
// (so by linearity its corrections use that column's states), the last tile
// of a column with the column's last row, as the other block passes do.
// Gray only: a float4 tile would not fit local memory at this size.
#define TL T2_TILE
#define TSP (TL + 1)
// Where the tile lines' coefficients (Deriche::tile_biquads or
// tile_deltas) start in the tables (`tab`): the columns', then the rows'.
#define T2_BQ_AT (16 * TL + 8)

// Zero-state sums of one row of the tile, row[j] - r over j, into s
// (SUMS_AT order). P is the row poles. (As dot products with a weight table
// this was slower on an H200: 188 against 170 us for the pass.)
void t2_row_sums(__local const float* row, float r, float4 P, float* s)
{
    float w0r = 0.0f, w0i = 0.0f, w1r = 0.0f, w1i = 0.0f;
    float v0r = 0.0f, v0i = 0.0f, v1r = 0.0f, v1i = 0.0f;
    for (int j = 0; j < TL; j++)
        CAUSAL_STEP(row[j] - r);
    for (int j = TL - 1; j >= 0; j--)
        ANTI_STEP(row[j] - r);
    s[0] = w0r; s[1] = w0i; s[2] = w1r; s[3] = w1i;
    s[4] = v0r; s[5] = v0i; s[6] = v1r; s[7] = v1i;
}

// One line of the tile, TL samples at p[m * stride], read as deviations
// p - rin and written back as the filtered deviations plus rout, from the
// states s (SUMS_AT order, complex: the causal state before the line's
// first sample, the anticausal state at its last), which on return hold the
// states at the other ends (the causal state after the last sample, the
// anticausal state handed on before the first). Only the causal outputs are
// held in registers. Up to BIQUAD_MAX_SIGMA each section runs as a real
// biquad (Deriche::tile_biquads gives the coefficients `q` and says why;
// the complex recursion the other passes use costs a half more per
// sample): causal y[m] = n0 x[m] +
// n1 x[m-1] + d1 y[m-1] + d2 y[m-2], anticausal q[m] = m0 x[m+1] +
// m1 x[m+2] + d1 q[m+1] + d2 q[m+2]. Each section's first two outputs come from its complex
// state, and its complex state at the far end from its last two outputs
// and the last sample (the 2x2 inverse `inv`). Above BIQUAD_MAX_SIGMA this
// form's f32 rounding grows too fast: the inverse grows like sigma, and the
// feedback, near a double pole at 1, sums each step's rounding twice over
// the tile (sigma 1000 measured 4e-5 of full scale on a 2x3 image, against
// 2e-6 for the complex form, on PoCL).
#define BQ_D1 0
#define BQ_D2 2
#define BQ_N0 4
#define BQ_N1 6
#define BQ_M0 8
#define BQ_M1 10
#define BQ_B 12
#define BQ_INV 16
#define BQ_CR 24
#define BQ_LEN 26
#define BQ_STEP(d1, d2, f0, f1, y1, y2, x0, x1) ((d1) * (y1) + ((d2) * (y2) + ((f1) * (x1) + (f0) * (x0))))
// A line's complex states for both sections (s[0..4], SUMS_AT order) back
// from each section's last value (ya, yb) and its partner (ea, eb: the value
// before, or the step, plus the sample term) through the 2x2 inverses at
// q[BQ_INV].
void t2_states_back(__global const float* q, float ya, float ea, float yb, float eb, float* s)
{
    s[0] = q[BQ_INV] * ya + q[BQ_INV + 1] * ea;
    s[1] = q[BQ_INV + 2] * ya + q[BQ_INV + 3] * ea;
    s[2] = q[BQ_INV + 4] * yb + q[BQ_INV + 5] * eb;
    s[3] = q[BQ_INV + 6] * yb + q[BQ_INV + 7] * eb;
}

void t2_line_bq(__local float* p, int stride, float rin, float rout, float4 A,
                __global const float* q, float* s)
{
    float ys[TL];
    float d1a = q[BQ_D1], d1b = q[BQ_D1 + 1], d2a = q[BQ_D2], d2b = q[BQ_D2 + 1];
    float4 B = vload4(0, q + BQ_B);
    // Causal: ya, yb the sections' last outputs, ya1, yb1 the ones before,
    // x1 the last sample.
    {
        float n0a = q[BQ_N0], n0b = q[BQ_N0 + 1], n1a = q[BQ_N1], n1b = q[BQ_N1 + 1];
        float x1 = p[0] - rin;
        float ya1 = A.x * s[0] - A.y * s[1], yb1 = A.z * s[2] - A.w * s[3];
        float ya = B.x * s[0] - B.y * s[1] + n0a * x1, yb = B.z * s[2] - B.w * s[3] + n0b * x1;
        ys[0] = ya + yb;
#pragma unroll
        for (int m = 1; m < TL; m++) {
            float x = p[m * stride] - rin;
            float na = BQ_STEP(d1a, d2a, n0a, n1a, ya, ya1, x, x1);
            float nb = BQ_STEP(d1b, d2b, n0b, n1b, yb, yb1, x, x1);
            ya1 = ya; ya = na; yb1 = yb; yb = nb; x1 = x;
            ys[m] = na + nb;
        }
        float ea = ya1 + q[BQ_CR] * x1, eb = yb1 + q[BQ_CR + 1] * x1;
        t2_states_back(q, ya, ea, yb, eb, s);
    }
    // Anticausal: qa1, qb1 the outputs at m + 1, qa2, qb2 at m + 2; x1, x2
    // the samples there.
    {
        float m0a = q[BQ_M0], m0b = q[BQ_M0 + 1], m1a = q[BQ_M1], m1b = q[BQ_M1 + 1];
        float x2 = p[(TL - 1) * stride] - rin;
        float qa2 = A.x * s[4] - A.y * s[5], qb2 = A.z * s[6] - A.w * s[7];
        float qa1 = B.x * s[4] - B.y * s[5] + B.x * x2, qb1 = B.z * s[6] - B.w * s[7] + B.z * x2;
        p[(TL - 1) * stride] = ys[TL - 1] + qa2 + qb2 + rout;
        float x1 = p[(TL - 2) * stride] - rin;
        p[(TL - 2) * stride] = ys[TL - 2] + qa1 + qb1 + rout;
#pragma unroll
        for (int m = TL - 3; m >= 0; m--) {
            float x = p[m * stride] - rin;
            float na = BQ_STEP(d1a, d2a, m0a, m1a, qa1, qa2, x1, x2);
            float nb = BQ_STEP(d1b, d2b, m0b, m1b, qb1, qb2, x1, x2);
            p[m * stride] = ys[m] + na + nb + rout;
            qa2 = qa1; qa1 = na; qb2 = qb1; qb1 = nb; x2 = x1; x1 = x;
        }
        // One step past the first sample gives the state handed on.
        float na = BQ_STEP(d1a, d2a, m0a, m1a, qa1, qa2, x1, x2);
        float nb = BQ_STEP(d1b, d2b, m0b, m1b, qb1, qb2, x1, x2);
        float ea = qa1 + A.x * x1, eb = qb1 + A.z * x1;
        t2_states_back(q, na, ea, nb, eb, s + 4);
    }
}

// The same line in delta form, for sigma above BIQUAD_MAX_SIGMA
// (Deriche::tile_deltas gives `q` in the biquads' layout and says why):
// each section runs on its output y and the output's step e = y - y_prev,
// causal e[m] = e1 y[m-1] + g e[m-1] + n0 x[m] + n1 x[m-1], y[m] = y[m-1] +
// e[m], anticausal the same upwards with m0, m1. Five operations per step
// and section against the complex form's six to seven, with its rounding
// (the feedback carries the small steps, not the signal). A section's first
// output and step come from its complex state, and the complex state at the
// far end from the last output and step (the 2x2 inverse `inv`).
#define DQ_E1 0
#define DQ_G 2
#define DQ_BA 12
#define DQ_STEP(e1, g, f0, f1, y, e, x0, x1) ((e1) * (y) + ((g) * (e) + ((f1) * (x1) + (f0) * (x0))))
void t2_line_dq(__local float* p, int stride, float rin, float rout, float4 A,
                __global const float* q, float* s)
{
    float ys[TL];
    float e1a = q[DQ_E1], e1b = q[DQ_E1 + 1], ga = q[DQ_G], gb = q[DQ_G + 1];
    float4 D = vload4(0, q + DQ_BA);
    // Causal: ya, yb the sections' last outputs, ea, eb their steps, x1 the
    // last sample.
    {
        float n0a = q[BQ_N0], n0b = q[BQ_N0 + 1], n1a = q[BQ_N1], n1b = q[BQ_N1 + 1];
        float x1 = p[0] - rin;
        float ea = D.x * s[0] - D.y * s[1] + n0a * x1, eb = D.z * s[2] - D.w * s[3] + n0b * x1;
        float ya = A.x * s[0] - A.y * s[1] + ea, yb = A.z * s[2] - A.w * s[3] + eb;
        ys[0] = ya + yb;
#pragma unroll
        for (int m = 1; m < TL; m++) {
            float x = p[m * stride] - rin;
            ea = DQ_STEP(e1a, ga, n0a, n1a, ya, ea, x, x1);
            eb = DQ_STEP(e1b, gb, n0b, n1b, yb, eb, x, x1);
            ya += ea; yb += eb; x1 = x;
            ys[m] = ya + yb;
        }
        float da = ea - q[BQ_CR] * x1, db = eb - q[BQ_CR + 1] * x1;
        t2_states_back(q, ya, da, yb, db, s);
    }
    // Anticausal: qa, qb the outputs at m + 1, ea, eb their steps; x1, x2
    // the samples at m + 1 and m + 2.
    {
        float m0a = q[BQ_M0], m0b = q[BQ_M0 + 1], m1a = q[BQ_M1], m1b = q[BQ_M1 + 1];
        float x2 = p[(TL - 1) * stride] - rin;
        float qa = A.x * s[4] - A.y * s[5], qb = A.z * s[6] - A.w * s[7];
        p[(TL - 1) * stride] = ys[TL - 1] + qa + qb + rout;
        float ea = D.x * s[4] - D.y * s[5] + m0a * x2, eb = D.z * s[6] - D.w * s[7] + m0b * x2;
        qa += ea; qb += eb;
        float x1 = p[(TL - 2) * stride] - rin;
        p[(TL - 2) * stride] = ys[TL - 2] + qa + qb + rout;
#pragma unroll
        for (int m = TL - 3; m >= 0; m--) {
            float x = p[m * stride] - rin;
            ea = DQ_STEP(e1a, ga, m0a, m1a, qa, ea, x1, x2);
            eb = DQ_STEP(e1b, gb, m0b, m1b, qb, eb, x1, x2);
            qa += ea; qb += eb;
            p[m * stride] = ys[m] + qa + qb + rout;
            x2 = x1; x1 = x;
        }
        // One step past the first sample gives the state handed on.
        ea = DQ_STEP(e1a, ga, m0a, m1a, qa, ea, x1, x2);
        eb = DQ_STEP(e1b, gb, m0b, m1b, qb, eb, x1, x2);
        qa += ea; qb += eb;
        float da = ea - A.x * x1, db = eb - A.z * x1;
        t2_states_back(q, qa, da, qb, db, s + 4);
    }
}

// The line forms the build chose per direction: T2_BQC (columns) and
// T2_BQR (rows) are 1 for biquads, 2 for the delta form.
#if T2_BQC == 2
#define T2_LINE_C t2_line_dq
#else
#define T2_LINE_C t2_line_bq
#endif
#if T2_BQR == 2
#define T2_LINE_R t2_line_dq
#else
#define T2_LINE_R t2_line_bq
#endif

// Column x of the tile whose first row is y0 (rows past the image repeat
// its last row), as deviations from the column's first sample c, staged at
// tile[m * TSP + lx] and filtered down there from the states s (as
// t2_line_bq); each value plus c replaces its sample.
void t2_col(__global const float* in, int x, int y0, int width, int height, float c,
            float4 A, __global const float* q, float* s, __local float* tile, int lx)
{
#pragma unroll
    for (int m = 0; m < TL; m++)
        tile[m * TSP + lx] = in[min(y0 + m, height - 1) * width + x] - c;
    T2_LINE_C(tile + lx, TSP, 0.0f, c, A, q, s);
}

// Pass 1. Launch: (ntx * TL, nty) work-items in groups of (TL, 1).
__kernel __attribute__((reqd_work_group_size(TL, 1, 1)))
void gaussian_t2_sums(__global const float* in, __global float* colsums, __global float* rowsums,
                      __global float* edges, __global const float* tab, int width,
                      int height, int ntx, int nty, float4 Ac, float4 Pr)
{
    __local float tile[TL * TSP];
    int lx = get_local_id(0), tx = get_group_id(0), ty = get_group_id(1);
    int x0 = tx * TL, y0 = ty * TL;
    int x = min(x0 + lx, width - 1);
    {
        float s[8];
        for (int k = 0; k < 8; k++)
            s[k] = 0.0f;
        t2_col(in, x, y0, width, height, in[x], Ac, tab + T2_BQ_AT, s, tile, lx);
        __global float* sums = colsums;
        int nblocks = nty;
        if (x0 + lx < width)
            for (int k = 0; k < 8; k++)
                SUMS_AT(k, ty, x, width) = s[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int y = y0 + lx;
    if (y < height) {
        __local const float* row = tile + lx * TSP;
        float s[8], r = in[y * width];
        t2_row_sums(row, r, Pr, s);
        __global float* sums = rowsums;
        int nblocks = ntx;
        for (int k = 0; k < 8; k++)
            SUMS_AT(k, tx, y, height) = s[k];
        if (tx == 0) {
            edges[3 * y] = row[0];
            edges[3 * y + 2] = r;
        }
        if (tx == ntx - 1)
            edges[3 * y + 1] = row[width - 1 - x0];
    }
}

// Pass 3 (after the column carry). `colsums` holds exact column states,
// `edges` pass 1's zero-state first and last values per row and the raw
// first sample its sums are relative to; `exact`
// receives the exact ones. `tab` is Deriche::tile_tables: sum weights
// sw[k][j], state weights f[s][m], sums of a constant 1. Launch as pass 1.
__kernel __attribute__((reqd_work_group_size(TL, 1, 1)))
void gaussian_t2_fix(__global const float* in, __global const float* colsums,
                     __global float* rowsums, __global const float* edges,
                     __global float* exact, __global const float* tab, int width, int height,
                     int ntx, int nty)
{
    // The pass is bound by its local and global load instructions (two per
    // multiply-add took 30 of its 64 us on an H200), so the products below
    // load float4s. States are rows of STS floats: eight work-items read
    // one float4 from each of the eight rows at once, which a stride of TL
    // (a multiple of the 32 banks) would put in the same four banks.
#define STS (TL + 4)
    __local float4 st4[8 * STS / 4];
    __local float4 tk[8][2];  // tk[k][s / 4].s[s % 4]
    __local float* st = (__local float*)st4;
    __global const float4* sw4 = (__global const float4*)tab;
    __global const float* fw = tab + 8 * TL;
    __global const float* one = tab + 16 * TL;
    int lx = get_local_id(0), tx = get_group_id(0), ty = get_group_id(1);
    int x0 = tx * TL, y0 = ty * TL;
    {
        __global const float* sums = colsums;
        int nblocks = nty, x = min(x0 + lx, width - 1);
        for (int s = 0; s < 8; s++)
            st[s * STS + lx] = SUMS_AT(s, ty, x, width);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // tk[k][s]: the tile's row sum k of state s's column weights.
    for (int i = lx; i < 64; i += TL) {
        int k = i / 8, s = i % 8;
        float4 acc = 0.0f;
#pragma unroll 4
        for (int j = 0; j < TL / 4; j++)
            acc += sw4[k * (TL / 4) + j] * st4[s * (STS / 4) + j];
        ((__local float*)tk)[i] = acc.x + acc.y + acc.z + acc.w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int y = y0 + lx;
    if (y >= height)
        return;
    float4 f0 = (float4)(fw[lx], fw[TL + lx], fw[2 * TL + lx], fw[3 * TL + lx]);
    float4 f1 = (float4)(fw[4 * TL + lx], fw[5 * TL + lx], fw[6 * TL + lx], fw[7 * TL + lx]);
    // Exact first and last values of the row (columns 0 and width - 1).
    float first = edges[3 * y], last = edges[3 * y + 1];
    {
        __global const float* sums = colsums;
        int nblocks = nty;
        float4 c0 = (float4)(SUMS_AT(0, ty, 0, width), SUMS_AT(1, ty, 0, width),
                             SUMS_AT(2, ty, 0, width), SUMS_AT(3, ty, 0, width));
        float4 c1 = (float4)(SUMS_AT(4, ty, 0, width), SUMS_AT(5, ty, 0, width),
                             SUMS_AT(6, ty, 0, width), SUMS_AT(7, ty, 0, width));
        int xl = width - 1;
        float4 l0 = (float4)(SUMS_AT(0, ty, xl, width), SUMS_AT(1, ty, xl, width),
                             SUMS_AT(2, ty, xl, width), SUMS_AT(3, ty, xl, width));
        float4 l1 = (float4)(SUMS_AT(4, ty, xl, width), SUMS_AT(5, ty, xl, width),
                             SUMS_AT(6, ty, xl, width), SUMS_AT(7, ty, xl, width));
        first += dot(f0, c0) + dot(f1, c1);
        last += dot(f0, l0) + dot(f1, l1);
    }
    if (tx == 0) {
        exact[2 * y] = first;
        exact[2 * y + 1] = last;
    }
    // Pass 1 summed (zero-state column result - raw first sample); now
    // (exact column result - exact first value).
    float shift = edges[3 * y + 2] - first;
    __global float* sums = rowsums;
    int nblocks = ntx;
    for (int k = 0; k < 8; k++)
        SUMS_AT(k, tx, y, height) += shift * one[k] + dot(f0, tk[k][0]) + dot(f1, tk[k][1]);
#undef STS
}

// Pass 5: `colsums` and `rowsums` hold exact incoming states, `exact` each
// row's exact first value (the rows' reference). Launch as pass 1.
__kernel __attribute__((reqd_work_group_size(TL, 1, 1)))
void gaussian_t2_apply(__global const float* in, __global const float* colsums,
                       __global const float* rowsums, __global const float* exact,
                       __global const float* tab, __global float* out, int width,
                       int height, int ntx, int nty, float4 Ac, float4 Ar)
{
    __local float tile[TL * TSP];
    int lx = get_local_id(0), tx = get_group_id(0), ty = get_group_id(1);
    int x0 = tx * TL, y0 = ty * TL;
    int x = min(x0 + lx, width - 1);
    {
        __global const float* sums = colsums;
        int nblocks = nty;
        float s[8];
        for (int k = 0; k < 8; k++)
            s[k] = SUMS_AT(k, ty, x, width);
        t2_col(in, x, y0, width, height, in[x], Ac, tab + T2_BQ_AT, s, tile, lx);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int y = y0 + lx;
    if (y < height) {
        float r = exact[2 * y];
        __global const float* sums = rowsums;
        int nblocks = ntx;
        float s[8];
        for (int k = 0; k < 8; k++)
            s[k] = SUMS_AT(k, tx, y, height);
        T2_LINE_R(tile + lx * TSP, 1, r, r, Ar, tab + T2_BQ_AT + BQ_LEN, s);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (x0 + lx < width)
        for (int m = 0; m < TL && y0 + m < height; m++)
            out[(y0 + m) * width + x0 + lx] = tile[m * TSP + lx];
}
#undef TL
#undef TSP
#endif
