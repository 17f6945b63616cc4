// gaussian/rows.cl: recursive passes along rows staged in local memory:
// iir_local's whole rows and the row tiles (gaussian_rowblk_*) of
// iir_rowblk and of iir_tiles with sigma_y 0. A build with ROW_SEG
// compiles them. Needs blocks.cl (SUMS_AT, the carry).

#ifdef ROW_SEG
// Rows staged in local memory, ROW_SEG samples per work-item, ROW_WG
// work-items filtering consecutive segments of one row:
//  - iir_local: gaussian_iir_local_rows, one work-group per row holding the whole
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
// Segment t lives at xs[t * RSP ...]: RSP (ROW_SEG + 1) is odd, so the 32 work-items of a
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
#ifndef ROW_WG
#error "ROW_WG must be passed with -D"
#endif
#ifndef RSP
#error "RSP must be passed with -D"
#endif
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
void gaussian_iir_local_rows(__global const W* in, __global W* out, int width, int height,
                             float4 P, float4 A, float4 SA, float4 PS)
{
    __local W xs[ROW_WG * RSP];
    __local W sc[4 * ROW_WG];
    int y = GROUP_ID(0);
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
    int b = GROUP_ID(0), y = GROUP_ID(1);
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
    int b = GROUP_ID(0), y = GROUP_ID(1);
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
