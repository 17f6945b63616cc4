// gaussian/common.cl: what every Gaussian program shares: the working
// image, its conversions and the recursive filter's steps. The passes are
// in the other files of this folder, one family each: iir.cl (one
// work-item per line), blocks.cl (block-parallel columns and the carry),
// rows.cl (rows in local memory), tiles.cl (square tiles, iir_tiles) and
// fir.cl (fir_local). A kernel one variant uses is named
// gaussian_<variant>_<pass>; a kernel several share, gaussian_<stage>
// (src/ops/gaussian/passes.rs lists them). Every size and layout constant
// comes from src/ops/gaussian/geometry.rs as a -D build option.
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

#ifndef T_IS_FLOAT
#error "T_IS_FLOAT must be passed with -D"
#endif

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
