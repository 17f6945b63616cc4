// gaussian/blocks.cl: the block-parallel passes' shared parts: the block
// sums' layout, the column blocks (COL_BLK rows in registers; iir_blocks,
// iir_local, iir_rowblk, and iir_tiles with one sigma 0) and the carry
// that joins blocks of columns or of rows (gaussian_blk_carry). A build
// with COL_BLK compiles the column blocks; one with COL_BLK or ROW_SEG
// (rows.cl) compiles the carry.

#ifndef CARRY_LINES
#error "CARRY_LINES must be passed with -D"
#endif
#ifndef CARRY_LANES
#error "CARRY_LANES must be passed with -D"
#endif

// Block sums of the block-parallel passes: 8 working values per (line,
// block), sums[(k * nblocks + b) * lines + line], where a line is a column
// (iir_blocks, iir_local) or a row (iir_rowblk) and k 0-3 are the causal
// state after the block, 4-7 the anticausal state it hands to the block
// before it, each the two sections' (re, im). Consecutive lines are adjacent,
// so the carry pass's accesses coalesce.
#define SUMS_AT(k, b, line, lines) sums[((k) * nblocks + (b)) * (lines) + (line)]

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
// incoming state. Work-group: CARRY_LINES lines x CARRY_LANES runs.
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
__kernel __attribute__((reqd_work_group_size(CARRY_LINES, CARRY_LANES, 1)))
void gaussian_blk_carry(__global const W* in, __global W* sums, int lines, int stride, int span,
                         int nblocks, float4 SA, float4 PL)
{
    __local W tot[CARRY_LANES][4][CARRY_LINES];
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
