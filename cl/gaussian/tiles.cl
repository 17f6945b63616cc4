// gaussian/tiles.cl: iir_tiles, both directions in square tiles read
// twice. A build with T2_BQC (and T2_BQR: the tile lines' forms) compiles
// it. Needs blocks.cl (SUMS_AT).

#ifdef T2_BQC
#ifndef T2_TILE
#error "T2_TILE must be passed with -D"
#endif
#ifndef T2_BQR
#error "T2_BQR must be passed with -D"
#endif
#ifndef TSP
#error "TSP must be passed with -D"
#endif
#ifndef T2_FW_AT
#error "T2_FW_AT must be passed with -D"
#endif
#ifndef T2_ONE_AT
#error "T2_ONE_AT must be passed with -D"
#endif
#ifndef T2_BQ_AT
#error "T2_BQ_AT must be passed with -D"
#endif
#ifndef T2_CS
#error "T2_CS must be passed with -D"
#endif
// iir_tiles: both directions from two reads of the image, after Nehab et
// al. (2011), "GPU-efficient recursive filtering and summed-area tables":
// square tiles of T2_TILE x T2_TILE, one work-group of T2_TILE work-items
// per tile, the tile staged at a padded stride in local memory.
//
//  1. gaussian_iir_tiles_sums: the tile's columns filtered from zero state (held in
//     registers), their block sums (as gaussian_blk_sums), then the tile's
//     rows of that zero-state result summed from zero state (as the row
//     tiles of iir_rowblk), relative to each row's first raw sample.
//  2. gaussian_iir_tiles_carry over the column sums: exact column states.
//  3. gaussian_iir_tiles_fix: the exact column states change the column-filtered
//     tile by a field that is separable (a pole power down the column times
//     the column's state), so their effect on the row sums is a small
//     product: per tile, tk[k][s] = sum over columns of the row-sum weight k
//     times state s, then per row the column weights f_s(m). The row sums
//     become those of the exact column-filtered image, relative to its
//     first sample in the row, and each row's first and last exactly
//     column-filtered values go into `exact`.
//  4. gaussian_iir_tiles_carry over the row sums (lines: `exact`): exact row
//     states.
//  5. gaussian_iir_tiles_apply: each tile filtered down its columns from their
//     exact states and along its rows from theirs, written once.
//
// Passes 1 and 5 are bound by arithmetic, not memory, so their tile lines
// run each section as a real second-order recursion, which takes fewer
// operations per sample than the complex form: up to BIQUAD_MAX_SIGMA
// (src/ops/gaussian/policy.rs) in a direction as a biquad (t2_line_bq,
// T2_BQC / T2_BQR 1), above that in delta form (t2_line_dq, 2);
// docs/PERFORMANCE.md has the measurements. The carries and the fix-up keep
// the complex states, and pass 1's row sums the complex recursion (they
// need no outputs, only states).
//
// The last tile of a row is padded with copies of the row's last column
// (so by linearity its corrections use that column's states), the last tile
// of a column with the column's last row, as the other block passes do.
//
// Colour (CH 3 or 4: float4 working pixels) runs the same float lines, one
// work-item per (line, channel): a work-group is TL * NC work-items, work-item
// i on channel i % NC of column (then row) i / NC, and the tile is staged
// as NC float planes. Global memory is read as floats, so consecutive
// work-items read consecutive floats; the sums, `edges` and `exact` are
// float4 per line (as gaussian_iir_tiles_carry reads them), float NC * i + c
// here. Colour tiles are smaller (T2_TILE, src/ops/gaussian/geometry.rs),
// so that NC planes fit local memory.
// TSP is the tile's padded stride in local memory (TL + 1). The tables
// (`tab`, src/ops/gaussian/device/tiles.rs) hold the rows' sum weights at
// 0, the columns' state weights at T2_FW_AT, the rows' sums of a constant 1
// at T2_ONE_AT, and the tile lines' coefficients (Deriche::tile_biquads or
// tile_deltas, BQ_LEN each, fields at BQ_*) at T2_BQ_AT: the columns', then
// the rows'.
#define TL T2_TILE
#if CH == 1
#define NC 1
#else
#define NC 4
#endif
// T2_CS: floats between the channel planes of the staged tile (TL * TSP
// padded to 8 mod 32 banks, so a warp's 32 work-items, 8 lines x 4
// channels, reading their lines' m-th sample hit 32 different banks).
// Float index of channel c of pixel i in a working image, and of state k of
// block b of line `line` in the sums (SUMS_AT's, per channel).
#define PXF(i) ((i) * NC + c)
// The input and output are the user's samples (T: float, or uchar / ushort
// of a gray or RGBA image, converted here so that no working image is
// written), everything else float.
#if T_IS_FLOAT
#define T2_LOAD(p, i) ((p)[i])
#define T2_STORE(v) (v)
#else
#define T2_LOAD(p, i) convert_float((p)[i])
#define T2_STORE(v) CAT(CAT(convert_, T), _sat_rte)(v)
#endif
#define SUMS_C(k, b, line, lines) sums[PXF(((k) * nblocks + (b)) * (lines) + (line))]

// Zero-state sums of one row of the tile, row[j] - r over j, into s
// (SUMS_AT order). P is the row poles. (As dot products with a weight table
// this was slower on an H200.)
void t2_row_sums(__local const float* row, float r, float4 P, float* s)
{
    float w0r = 0.0f, w0i = 0.0f, w1r = 0.0f, w1i = 0.0f;
    float v0r = 0.0f, v0i = 0.0f, v1r = 0.0f, v1i = 0.0f;
    for (int j = 0; j < TL; j++)
        CAUSAL_STEP_T(float, row[j] - r);
    for (int j = TL - 1; j >= 0; j--)
        ANTI_STEP_T(float, row[j] - r);
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
#ifndef BQ_D1
#error "BQ_D1 must be passed with -D"
#endif
#ifndef BQ_D2
#error "BQ_D2 must be passed with -D"
#endif
#ifndef BQ_N0
#error "BQ_N0 must be passed with -D"
#endif
#ifndef BQ_N1
#error "BQ_N1 must be passed with -D"
#endif
#ifndef BQ_M0
#error "BQ_M0 must be passed with -D"
#endif
#ifndef BQ_M1
#error "BQ_M1 must be passed with -D"
#endif
#ifndef BQ_B
#error "BQ_B must be passed with -D"
#endif
#ifndef BQ_INV
#error "BQ_INV must be passed with -D"
#endif
#ifndef BQ_CR
#error "BQ_CR must be passed with -D"
#endif
#ifndef BQ_LEN
#error "BQ_LEN must be passed with -D"
#endif
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
#define DQ_E1 BQ_D1
#define DQ_G BQ_D2
#define DQ_BA BQ_B
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

// Channel c of column x of the tile whose first row is y0 (rows past the
// image repeat its last row), as deviations from the column's first sample
// c0, staged at p[m * TSP] and filtered down there from the states s (as
// t2_line_bq); each value plus c0 replaces its sample.
void t2_col(__global const T* in, int x, int c, int y0, int width, int height, float c0,
            float4 A, __global const float* q, float* s, __local float* p)
{
#pragma unroll
    for (int m = 0; m < TL; m++)
        p[m * TSP] = T2_LOAD(in, PXF(min(y0 + m, height - 1) * width + x)) - c0;
    T2_LINE_C(p, TSP, 0.0f, c0, A, q, s);
}

// Pass 1. Launch: (ntx * TL * NC, nty) work-items in groups of (TL * NC, 1).
// `colends` receives the image's first row and then its last, the column
// carry's references.
__kernel __attribute__((reqd_work_group_size(TL * NC, 1, 1)))
void gaussian_iir_tiles_sums(__global const T* in, __global float* colsums,
                             __global float* rowsums, __global float* edges,
                             __global float* colends, __global const float* tab, int width,
                             int height, int ntx, int nty, float4 Ac, float4 Pr)
{
    __local float tile[NC * T2_CS];
    int lid = get_local_id(0), tx = GROUP_ID(0), ty = GROUP_ID(1);
    int l = lid / NC, c = lid % NC;
    __local float* plane = tile + c * T2_CS;
    int x0 = tx * TL, y0 = ty * TL;
    int x = min(x0 + l, width - 1);
    {
        float s[8];
        for (int k = 0; k < 8; k++)
            s[k] = 0.0f;
        float c0 = T2_LOAD(in, PXF(x));
        if (ty == 0 && x0 + l < width) {
            colends[PXF(x)] = c0;
            colends[PXF(width + x)] = T2_LOAD(in, PXF((height - 1) * width + x));
        }
        t2_col(in, x, c, y0, width, height, c0, Ac, tab + T2_BQ_AT, s, plane + l);
        __global float* sums = colsums;
        int nblocks = nty;
        if (x0 + l < width)
            for (int k = 0; k < 8; k++)
                SUMS_C(k, ty, x, width) = s[k];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int y = y0 + l;
    if (y < height) {
        __local const float* row = plane + l * TSP;
        float s[8], r = T2_LOAD(in, PXF(y * width));
        t2_row_sums(row, r, Pr, s);
        __global float* sums = rowsums;
        int nblocks = ntx;
        for (int k = 0; k < 8; k++)
            SUMS_C(k, tx, y, height) = s[k];
        if (tx == 0) {
            edges[PXF(3 * y)] = row[0];
            edges[PXF(3 * y + 2)] = r;
        }
        if (tx == ntx - 1)
            edges[PXF(3 * y + 1)] = row[width - 1 - x0];
    }
}

// Pass 3 (after the column carry). `colsums` holds exact column states,
// `edges` pass 1's zero-state first and last values per row and the raw
// first sample its sums are relative to; `exact`
// receives the exact ones. `tab` is Deriche::tile_tables: sum weights
// sw[k][j], state weights f[s][m], sums of a constant 1. Launch as pass 1.
__kernel __attribute__((reqd_work_group_size(TL * NC, 1, 1)))
void gaussian_iir_tiles_fix(__global const float* colsums, __global float* rowsums,
                            __global const float* edges, __global float* exact,
                            __global const float* tab, int width, int height, int ntx, int nty)
{
    // The pass is bound by its local and global load instructions (two per
    // multiply-add had made it so on an H200), so the products below
    // load float4s. States are rows of STS floats: eight work-items read
    // one float4 from each of the eight rows at once, which a stride of TL
    // (a multiple of the 32 banks) would put in the same four banks.
#define STS (TL + 4)
    __local float4 st4[NC * 8 * STS / 4];
    __local float4 tk[NC][8][2];  // tk[c][k][s / 4].s[s % 4]
    __local float* st = (__local float*)st4;
    __global const float4* sw4 = (__global const float4*)tab;
    __global const float* fw = tab + T2_FW_AT;
    __global const float* one = tab + T2_ONE_AT;
    int lid = get_local_id(0), tx = GROUP_ID(0), ty = GROUP_ID(1);
    int l = lid / NC, c = lid % NC;
    int x0 = tx * TL, y0 = ty * TL;
    int y = y0 + l, yc = min(y, height - 1);
    // Every global load is issued before the products, so that their
    // latency overlaps the products'.
    float first = edges[PXF(3 * yc)], last = edges[PXF(3 * yc + 1)], raw = edges[PXF(3 * yc + 2)];
    float rs[8];
    float4 c0, c1, l0, l1;
    {
        __global const float* sums = rowsums;
        int nblocks = ntx;
        for (int k = 0; k < 8; k++)
            rs[k] = SUMS_C(k, tx, yc, height);
    }
    {
        __global const float* sums = colsums;
        int nblocks = nty, x = min(x0 + l, width - 1), xl = width - 1;
        for (int s = 0; s < 8; s++)
            st[(c * 8 + s) * STS + l] = SUMS_C(s, ty, x, width);
        c0 = (float4)(SUMS_C(0, ty, 0, width), SUMS_C(1, ty, 0, width),
                      SUMS_C(2, ty, 0, width), SUMS_C(3, ty, 0, width));
        c1 = (float4)(SUMS_C(4, ty, 0, width), SUMS_C(5, ty, 0, width),
                      SUMS_C(6, ty, 0, width), SUMS_C(7, ty, 0, width));
        l0 = (float4)(SUMS_C(0, ty, xl, width), SUMS_C(1, ty, xl, width),
                      SUMS_C(2, ty, xl, width), SUMS_C(3, ty, xl, width));
        l1 = (float4)(SUMS_C(4, ty, xl, width), SUMS_C(5, ty, xl, width),
                      SUMS_C(6, ty, xl, width), SUMS_C(7, ty, xl, width));
    }
    float4 f0 = (float4)(fw[l], fw[TL + l], fw[2 * TL + l], fw[3 * TL + l]);
    float4 f1 = (float4)(fw[4 * TL + l], fw[5 * TL + l], fw[6 * TL + l], fw[7 * TL + l]);
    barrier(CLK_LOCAL_MEM_FENCE);
    // tk[c][k][s]: the tile's row sum k of state s's column weights, in
    // channel c.
    for (int i = lid; i < 64 * NC; i += TL * NC) {
        int ci = i / 64, k = (i / 8) % 8, s = i % 8;
        float4 acc = 0.0f;
#pragma unroll 4
        for (int j = 0; j < TL / 4; j++)
            acc += sw4[k * (TL / 4) + j] * st4[(ci * 8 + s) * (STS / 4) + j];
        ((__local float*)tk)[i] = acc.x + acc.y + acc.z + acc.w;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (y >= height)
        return;
    // Exact first and last values of the row (columns 0 and width - 1).
    first += dot(f0, c0) + dot(f1, c1);
    last += dot(f0, l0) + dot(f1, l1);
    if (tx == 0) {
        exact[PXF(2 * y)] = first;
        exact[PXF(2 * y + 1)] = last;
    }
    // Pass 1 summed (zero-state column result - raw first sample); now
    // (exact column result - exact first value).
    float shift = raw - first;
    __global float* sums = rowsums;
    int nblocks = ntx;
    for (int k = 0; k < 8; k++)
        SUMS_C(k, tx, y, height) = rs[k] + shift * one[k] + dot(f0, tk[c][k][0]) + dot(f1, tk[c][k][1]);
#undef STS
}

// Pass 5: `colsums` and `rowsums` hold exact incoming states, `exact` each
// row's exact first value (the rows' reference). Launch as pass 1.
__kernel __attribute__((reqd_work_group_size(TL * NC, 1, 1)))
void gaussian_iir_tiles_apply(__global const T* in, __global const float* colsums,
                              __global const float* rowsums, __global const float* exact,
                              __global const float* tab, __global T* out, int width,
                              int height, int ntx, int nty, float4 Ac, float4 Ar)
{
    __local float tile[NC * T2_CS];
    int lid = get_local_id(0), tx = GROUP_ID(0), ty = GROUP_ID(1);
    int l = lid / NC, c = lid % NC;
    __local float* plane = tile + c * T2_CS;
    int x0 = tx * TL, y0 = ty * TL;
    int x = min(x0 + l, width - 1);
    {
        __global const float* sums = colsums;
        int nblocks = nty;
        float s[8];
        for (int k = 0; k < 8; k++)
            s[k] = SUMS_C(k, ty, x, width);
        t2_col(in, x, c, y0, width, height, T2_LOAD(in, PXF(x)), Ac, tab + T2_BQ_AT, s,
               plane + l);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int y = y0 + l;
    if (y < height) {
        float r = exact[PXF(2 * y)];
        __global const float* sums = rowsums;
        int nblocks = ntx;
        float s[8];
        for (int k = 0; k < 8; k++)
            s[k] = SUMS_C(k, tx, y, height);
        T2_LINE_R(plane + l * TSP, 1, r, r, Ar, tab + T2_BQ_AT + BQ_LEN, s);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Work-item lid writes float lid of each of the tile's rows (pixel l,
    // channel c): consecutive work-items, consecutive floats.
    if (x0 + l < width)
        for (int m = 0; m < TL && y0 + m < height; m++)
            out[PXF((y0 + m) * width + x0 + l)] = T2_STORE(plane[m * TSP + l]);
}
#ifndef T2_RUN
#error "T2_RUN must be passed with -D"
#endif
#ifndef T2_CARRY_WG
#error "T2_CARRY_WG must be passed with -D"
#endif
// Passes 2 and 4: the carries, as gaussian_blk_carry (blocks.cl), but each
// work-item holds a run of at most T2_RUN consecutive blocks of its line in
// registers, so each sum is read once (gaussian_blk_carry reads its runs
// twice), and a line has nblocks / T2_RUN runs (rounded up, at most
// T2_CARRY_WG: get_local_size(1)), which keeps more loads in flight.
// Work-group: T2_CARRY_WG / runs lines x runs. PL, PR: the pole powers over
// a block and over a run.
__kernel void gaussian_iir_tiles_carry(__global const W* in, __global W* sums, int lines,
                                       int stride, int span, int nblocks, float4 SA,
                                       float4 PL, float4 PR)
{
    __local W tot[4][T2_CARRY_WG];
    int lx = get_local_id(0), lane = get_local_id(1), nl = get_local_size(0);
    int x = get_global_id(0), xc = min(x, lines - 1);
    int b0 = lane * T2_RUN;
    int n = (x < lines) ? clamp(nblocks - b0, 0, T2_RUN) : 0;
    W e[8][T2_RUN];
#pragma unroll
    for (int j = 0; j < T2_RUN; j++) {
        int b = min(b0 + j, nblocks - 1);
        for (int k = 0; k < 8; k++)
            e[k][j] = SUMS_AT(k, b, xc, lines);
    }
    // Causal, forwards: the run's total from zero state, the runs before
    // folded (all full), then the incoming states written over the sums.
    W sr = 0.0f, si = 0.0f, tr = 0.0f, ti = 0.0f;
#pragma unroll
    for (int j = 0; j < T2_RUN; j++)
        if (j < n) {
            W ar = e[0][j], ai = e[1][j], br = e[2][j], bi = e[3][j];
            CMAD(PL, ar, ai, br, bi, sr, si, tr, ti);
            sr = ar; si = ai; tr = br; ti = bi;
        }
    int me = lane * nl + lx;
    tot[0][me] = sr; tot[1][me] = si; tot[2][me] = tr; tot[3][me] = ti;
    barrier(CLK_LOCAL_MEM_FENCE);
    sr = si = tr = ti = 0.0f;
    for (int k = 0; k < lane; k++) {
        int o = k * nl + lx;
        W ar = tot[0][o], ai = tot[1][o], br = tot[2][o], bi = tot[3][o];
        CMAD(PR, ar, ai, br, bi, sr, si, tr, ti);
        sr = ar; si = ai; tr = br; ti = bi;
    }
#pragma unroll
    for (int j = 0; j < T2_RUN; j++)
        if (j < n) {
            int b = b0 + j;
            SUMS_AT(0, b, x, lines) = sr; SUMS_AT(1, b, x, lines) = si;
            SUMS_AT(2, b, x, lines) = tr; SUMS_AT(3, b, x, lines) = ti;
            CMAD(PL, e[0][j], e[1][j], e[2][j], e[3][j], sr, si, tr, ti);
            sr = e[0][j]; si = e[1][j]; tr = e[2][j]; ti = e[3][j];
        }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Anticausal, backwards, from the replicate steady state at the last
    // (padded) sample; the last run may be partial (m blocks).
    sr = si = tr = ti = 0.0f;
#pragma unroll
    for (int j = T2_RUN - 1; j >= 0; j--)
        if (j < n) {
            W ar = e[4][j], ai = e[5][j], br = e[6][j], bi = e[7][j];
            CMAD(PL, ar, ai, br, bi, sr, si, tr, ti);
            sr = ar; si = ai; tr = br; ti = bi;
        }
    tot[0][me] = sr; tot[1][me] = si; tot[2][me] = tr; tot[3][me] = ti;
    barrier(CLK_LOCAL_MEM_FENCE);
    int last = (nblocks - 1) / T2_RUN, m = nblocks - last * T2_RUN;
    float4 q = (float4)(1.0f, 0.0f, 1.0f, 0.0f);
    for (int k = 0; k < m; k++)
        q = (float4)(q.x * PL.x - q.y * PL.y, q.x * PL.y + q.y * PL.x,
                     q.z * PL.z - q.w * PL.w, q.z * PL.w + q.w * PL.z);
    __global const W* line = in + xc * stride;
    W xl = line[span] - line[0];
    sr = xl * SA.x; si = xl * SA.y; tr = xl * SA.z; ti = xl * SA.w;
    for (int k = last; k > lane; k--) {
        int o = k * nl + lx;
        W ar = tot[0][o], ai = tot[1][o], br = tot[2][o], bi = tot[3][o];
        float4 pk = (k == last) ? q : PR;
        CMAD(pk, ar, ai, br, bi, sr, si, tr, ti);
        sr = ar; si = ai; tr = br; ti = bi;
    }
#pragma unroll
    for (int j = T2_RUN - 1; j >= 0; j--)
        if (j < n) {
            int b = b0 + j;
            SUMS_AT(4, b, x, lines) = sr; SUMS_AT(5, b, x, lines) = si;
            SUMS_AT(6, b, x, lines) = tr; SUMS_AT(7, b, x, lines) = ti;
            CMAD(PL, e[4][j], e[5][j], e[6][j], e[7][j], sr, si, tr, ti);
            sr = e[4][j]; si = e[5][j]; tr = e[6][j]; ti = e[7][j];
        }
}

#undef PXF
#undef T2_LOAD
#undef T2_STORE
#undef SUMS_C
#undef NC
#undef TL
#endif
