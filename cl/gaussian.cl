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
            TYPE t0 = P.x * w0r - P.y * w0i + v;                                \
            w0i = P.x * w0i + P.y * w0r;                                        \
            w0r = t0;                                                           \
            TYPE t1 = P.z * w1r - P.w * w1i + v;                                \
            w1i = P.z * w1i + P.w * w1r;                                        \
            w1r = t1;                                                           \
            ST(idx, A.x * w0r - A.y * w0i + A.z * w1r - A.w * w1i);             \
        }                                                                       \
        TYPE xl = LD(base + (n - 1) * step) - c;                                \
        TYPE v0r = xl * SA.x, v0i = xl * SA.y, v1r = xl * SA.z, v1i = xl * SA.w; \
        for (int k = n - 1; k >= 0; k--) {                                      \
            int idx = base + k * step;                                          \
            TYPE v = LD(idx) - c;                                               \
            ST(idx, LDO(idx) + (A.x * v0r - A.y * v0i + A.z * v1r - A.w * v1i) + c); \
            TYPE ur = v + v0r, ui = v0i;                                        \
            v0r = P.x * ur - P.y * ui;                                          \
            v0i = P.x * ui + P.y * ur;                                          \
            ur = v + v1r;                                                       \
            ui = v1i;                                                           \
            v1r = P.z * ur - P.w * ui;                                          \
            v1i = P.z * ui + P.w * ur;                                          \
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

#ifdef BLOCK_L
// iir_blocks: block-parallel recursive filtering along columns, after Nehab
// et al. (2011) but simpler, because each section is first order: a column
// is cut into blocks of BLOCK_L rows, and one work-item per (column, block)
// gives width x ceil(height / BLOCK_L) work-items instead of width.
//
// sums[(k * nblocks + b) * width + x], k = 0..7: for block b of column x,
// k 0-3 hold the two sections' causal states (re, im) and k 4-7 the
// anticausal ones. Pass 1 writes zero-state block sums there, pass 2 turns
// them into exact incoming states, pass 3 refilters each block from them.

#define SUM(k) sums[((k) * nblocks + b) * width + x]

// Pass 1, one forward sweep: E = sum_m p^(len-1-m) x[m] (causal state at
// the block's last row, from zero) by recursion, and S = sum_m p^(m+1) x[m]
// (anticausal state entering the row above the block, from zero) with a
// running power of p, so the block is read once.
__kernel void gaussian_blk_sums(__global const W* in, __global W* sums, int width, int height,
                                int nblocks, float4 P)
{
    int x = get_global_id(0), b = get_global_id(1);
    int y0 = b * BLOCK_L;
    if (x >= width || b >= nblocks)
        return;
    int len = min(BLOCK_L, height - y0);
    W c = in[x];  // deviations from the column's first sample, as in IIR_LINE
    W e0r = 0.0f, e0i = 0.0f, e1r = 0.0f, e1i = 0.0f;
    W s0r = 0.0f, s0i = 0.0f, s1r = 0.0f, s1i = 0.0f;
    float q0r = P.x, q0i = P.y, q1r = P.z, q1i = P.w;  // p^(m+1)
#pragma unroll 16
    for (int m = 0; m < len; m++) {
        W v = in[(y0 + m) * width + x] - c;
        W t = P.x * e0r - P.y * e0i + v;
        e0i = P.x * e0i + P.y * e0r;
        e0r = t;
        t = P.z * e1r - P.w * e1i + v;
        e1i = P.z * e1i + P.w * e1r;
        e1r = t;
        s0r += q0r * v;
        s0i += q0i * v;
        s1r += q1r * v;
        s1i += q1i * v;
        float u = q0r * P.x - q0i * P.y;
        q0i = q0r * P.y + q0i * P.x;
        q0r = u;
        u = q1r * P.z - q1i * P.w;
        q1i = q1r * P.w + q1i * P.z;
        q1r = u;
    }
    SUM(0) = e0r; SUM(1) = e0i; SUM(2) = e1r; SUM(3) = e1i;
    SUM(4) = s0r; SUM(5) = s0i; SUM(6) = s1r; SUM(7) = s1i;
}

// Pass 2, one work-item per column, nblocks steps: the state entering block
// b is w_in[b+1] = E[b] + p^L w_in[b] (from the replicate steady state at the
// top), and the anticausal state at block b's last row is
// v_out[b-1] = S[b] + p^len(b) v_out[b] (from the steady state at the bottom).
// PL holds p^BLOCK_L, PLAST p^(length of the last block).
__kernel void gaussian_blk_carry(__global const W* in, __global W* sums, int width, int height,
                                 int nblocks, float4 SA, float4 PL, float4 PLAST)
{
    int x = get_global_id(0);
    if (x >= width)
        return;
    int b;
    W c = in[x];
    // The first row's deviation is 0, so the causal steady state is 0.
    W w0r = 0.0f, w0i = 0.0f, w1r = 0.0f, w1i = 0.0f;
#pragma unroll 8
    for (b = 0; b < nblocks; b++) {
        W er = SUM(0), ei = SUM(1), fr = SUM(2), fi = SUM(3);
        SUM(0) = w0r; SUM(1) = w0i; SUM(2) = w1r; SUM(3) = w1i;
        W t = er + PL.x * w0r - PL.y * w0i;
        w0i = ei + PL.x * w0i + PL.y * w0r;
        w0r = t;
        t = fr + PL.z * w1r - PL.w * w1i;
        w1i = fi + PL.z * w1i + PL.w * w1r;
        w1r = t;
    }
    W xl = in[(height - 1) * width + x] - c;
    W v0r = xl * SA.x, v0i = xl * SA.y, v1r = xl * SA.z, v1i = xl * SA.w;
#pragma unroll 8
    for (b = nblocks - 1; b >= 0; b--) {
        float4 Q = (b == nblocks - 1) ? PLAST : PL;
        W sr = SUM(4), si = SUM(5), tr = SUM(6), ti = SUM(7);
        SUM(4) = v0r; SUM(5) = v0i; SUM(6) = v1r; SUM(7) = v1i;
        W t = sr + Q.x * v0r - Q.y * v0i;
        v0i = si + Q.x * v0i + Q.y * v0r;
        v0r = t;
        t = tr + Q.z * v1r - Q.w * v1i;
        v1i = ti + Q.z * v1i + Q.w * v1r;
        v1r = t;
    }
}

// Work-group size of pass 3, whose local memory holds a block per work-item.
#if CH == 1
#define BLK_WG 64
#else
#define BLK_WG 16
#endif

// Pass 3: each block filtered forward and backward from its exact states.
// The block's input deviations and causal outputs are kept in local memory
// (column `lid` belongs to this work-item alone, so no barrier is needed),
// so the image is read once and written once; re-reading it from global
// memory for the backward sweep doubled the traffic.
__kernel void gaussian_blk_apply(__global const W* in, __global const W* sums, __global W* out,
                                 int width, int height, int nblocks, float4 P, float4 A)
{
    __local W xs[BLOCK_L][BLK_WG];
    __local W ys[BLOCK_L][BLK_WG];
    int lid = get_local_id(0);
    int x = get_global_id(0), b = get_global_id(1);
    int y0 = b * BLOCK_L;
    if (x >= width || b >= nblocks)
        return;
    int len = min(BLOCK_L, height - y0);
    W c = in[x];
    // Stage the block first: the loads are independent, so unrolled they are
    // all in flight at once instead of one latency per row.
#pragma unroll 16
    for (int m = 0; m < len; m++)
        xs[m][lid] = in[(y0 + m) * width + x] - c;
    W w0r = SUM(0), w0i = SUM(1), w1r = SUM(2), w1i = SUM(3);
    for (int m = 0; m < len; m++) {
        W v = xs[m][lid];
        W t = P.x * w0r - P.y * w0i + v;
        w0i = P.x * w0i + P.y * w0r;
        w0r = t;
        t = P.z * w1r - P.w * w1i + v;
        w1i = P.z * w1i + P.w * w1r;
        w1r = t;
        ys[m][lid] = A.x * w0r - A.y * w0i + A.z * w1r - A.w * w1i;
    }
    W v0r = SUM(4), v0i = SUM(5), v1r = SUM(6), v1i = SUM(7);
    for (int m = len - 1; m >= 0; m--) {
        W v = xs[m][lid];
        out[(y0 + m) * width + x] = ys[m][lid] + (A.x * v0r - A.y * v0i + A.z * v1r - A.w * v1i) + c;
        W ur = v + v0r, ui = v0i;
        v0r = P.x * ur - P.y * ui;
        v0i = P.x * ui + P.y * ur;
        ur = v + v1r;
        ui = v1i;
        v1r = P.z * ur - P.w * ui;
        v1i = P.z * ui + P.w * ur;
    }
}
#undef SUM
#endif
