// gaussian/iir.cl: recursive passes with one work-item per line:
// gaussian_iir_cols (shared by iir_rows_cols, iir_transpose and, for
// colour, iir_transpose_f4), iir_rows_cols' row pass and iir_transpose_f4's
// gray column pass.

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

// rgH (iir_rows_cols): one work-item per row. Neighbouring work-items are a whole row apart,
// so no access is coalesced: the cost of this layout is what the transposing
// variants avoid.
__kernel void gaussian_iir_rows_cols_rows(__global const W* in, __global W* out, int width,
                                          int height, float4 P, float4 A, float4 SA)
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

// rgV on gray with float4 (iir_transpose_f4): each work-item filters 4 adjacent columns with
// vector loads and stores (16 bytes per access). Columns past the last
// multiple of 4 go through the scalar line.
__kernel void gaussian_iir_transpose_f4_cols(__global const float* in, __global float* out,
                                             int width, int height, float4 P, float4 A, float4 SA)
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
