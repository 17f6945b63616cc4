// gaussian.cl: Gaussian blur stages.
//
// Passes work on a float "working image" of W pixels: W = float for gray,
// float4 for RGB and RGBA (RGB is expanded to RGBA here, the 4th channel
// unused). gaussian_to_w / gaussian_from_w convert from and to the user's
// T/CH layout; for f32 gray and f32 RGBA the user's buffer is used directly.
//
// Recursive passes use Deriche's 4th-order filter as two complex first-order
// sections (src/ops/gaussian/coeffs.rs). Arguments, as float4 over the two
// sections (re0, im0, re1, im1): P poles, A output weights, SC causal and SA
// anticausal steady-state factors for the replicate border.

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
#define IIR_LINE(TYPE, LD, ST)                                                  \
    {                                                                           \
        TYPE x0 = LD(base);                                                     \
        TYPE w0r = x0 * SC.x, w0i = x0 * SC.y, w1r = x0 * SC.z, w1i = x0 * SC.w; \
        for (int k = 0; k < n; k++) {                                           \
            int idx = base + k * step;                                          \
            TYPE v = LD(idx);                                                   \
            TYPE t0 = P.x * w0r - P.y * w0i + v;                                \
            w0i = P.x * w0i + P.y * w0r;                                        \
            w0r = t0;                                                           \
            TYPE t1 = P.z * w1r - P.w * w1i + v;                                \
            w1i = P.z * w1i + P.w * w1r;                                        \
            w1r = t1;                                                           \
            ST(idx, A.x * w0r - A.y * w0i + A.z * w1r - A.w * w1i);             \
        }                                                                       \
        TYPE xl = LD(base + (n - 1) * step);                                    \
        TYPE v0r = xl * SA.x, v0i = xl * SA.y, v1r = xl * SA.z, v1i = xl * SA.w; \
        for (int k = n - 1; k >= 0; k--) {                                      \
            int idx = base + k * step;                                          \
            TYPE v = LD(idx);                                                   \
            ST(idx, LDO(idx) + A.x * v0r - A.y * v0i + A.z * v1r - A.w * v1i);  \
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
              float4 P, float4 A, float4 SC, float4 SA)
IIR_LINE(W, LD_W, ST_W)

// rgV: one work-item per column; neighbouring work-items read neighbouring
// pixels, so every access is coalesced. Only `width` work-items exist.
__kernel void gaussian_iir_cols(__global const W* in, __global W* out, int width, int height,
                                float4 P, float4 A, float4 SC, float4 SA)
{
    int x = get_global_id(0);
    if (x < width)
        iir_line(in, out, x, width, height, P, A, SC, SA);
}

// rgH: one work-item per row. Neighbouring work-items are a whole row apart,
// so no access is coalesced: the cost of this layout is what the transposing
// variants avoid.
__kernel void gaussian_iir_rows(__global const W* in, __global W* out, int width, int height,
                                float4 P, float4 A, float4 SC, float4 SA)
{
    int y = get_global_id(0);
    if (y < height)
        iir_line(in, out, y * width, 1, width, P, A, SC, SA);
}

#if CH == 1
#undef LDO
#define LD_V4(i) vload4(0, in + (i))
#define ST_V4(i, v) vstore4((v), 0, out + (i))
#define LDO(i) vload4(0, out + (i))
void iir_line4(__global const float* in, __global float* out, int base, int step, int n,
               float4 P, float4 A, float4 SC, float4 SA)
IIR_LINE(float4, LD_V4, ST_V4)
#undef LDO
#define LDO(i) out[(i)]

// rgV on gray with float4: each work-item filters 4 adjacent columns with
// vector loads and stores (16 bytes per access). Columns past the last
// multiple of 4 go through the scalar line.
__kernel void gaussian_iir_cols4(__global const float* in, __global float* out, int width, int height,
                                 float4 P, float4 A, float4 SC, float4 SA)
{
    int x = get_global_id(0) * 4;
    if (x + 3 < width) {
        iir_line4(in, out, x, width, height, P, A, SC, SA);
    } else {
        for (; x < width; x++)
            iir_line(in, out, x, width, height, P, A, SC, SA);
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
