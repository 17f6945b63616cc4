// demosaic.cl: Bayer CFA -> RGB(A). One work-item produces one 2x2 quad.
//
// Options (all compile-time, so the pattern costs no branches):
//   T        input sample type (uchar, ushort; uchar for packed frames)
//   PACKED   0: one T per sample; 1: PFNC 12p (LSB first); 2: GigE 12Packed;
//            3: MIPI CSI-2 RAW12
//   TOUT, OUT_FLOAT  output sample type, 1 when it is float (no rounding)
//   CLAMP_HI  (optional, float output) saturate to 0..CLAMP_HI
//   METHOD   0 bilinear, 1 mhc (Malvar-He-Cutler), 2 edge
//   RX, RY   column and row of the red site in the 2x2 block
//   TX, TY   (tile) work-group shape in quads
//
// Arguments: in, out, output channels (3 or 4, uniform, so its branch at
// the stores costs nothing), width, height (both even; of one frame when
// the launch's third dimension runs stacked frames), lev = (black, alpha, -, -),
// scale = (R, G, B, -) levelling: value = (raw - black) * scale[colour].
// Past the edges the CFA is mirrored without repeating the edge sample
// (reflect-101), which keeps the parity, so the colour of a site follows
// from its unmirrored coordinates.
//
// Both variants copy the quad's neighbourhood into a private WIN x WIN
// window and compute the quad from it with constant indices (the loops are
// unrolled, so the window lives in registers). `direct` fills the window
// with global loads; `tile` loads the work-group's CFA tile and apron into
// local memory once, unpacking and levelling each sample once.

#if METHOD == 0
#define RAD 1
#elif METHOD == 1
#define RAD 2
#else
#define RAD 3
#endif
#define WIN (2 * RAD + 2)

#define CR 0
#define CG 1
#define CB 2
// Colour of the site at (px, py) (only the parities count).
#define COLOUR(px, py) \
    ((((px) & 1) == RX && ((py) & 1) == RY) ? CR : ((((px) & 1) != RX && ((py) & 1) != RY) ? CB : CG))

inline int mirror(int i, int n)
{
    // n >= 2: reflect-101 with period 2(n - 1); a loop, because a 2-pixel
    // image reflects a 3-pixel apron more than once.
    int period = 2 * (n - 1);
    i = i % period;
    if (i < 0) i += period;
    return i >= n ? period - i : i;
}

// The raw sample at (x, y) inside the image.
inline float raw_at(__global const T* in, int x, int y, int w)
{
#if PACKED == 0
    return (float)in[y * w + x];
#else
    // w is even, so a 3-byte pair never straddles two rows.
    int i = y * w + x;
    __global const uchar* b = (__global const uchar*)in + 3 * (i >> 1);
    uint b0 = b[0], b1 = b[1], b2 = b[2];
#if PACKED == 1
    uint v = (i & 1) ? ((b1 >> 4) | (b2 << 4)) : (b0 | ((b1 & 0x0Fu) << 8));
#elif PACKED == 2
    uint v = (i & 1) ? ((b2 << 4) | (b1 >> 4)) : ((b0 << 4) | (b1 & 0x0Fu));
#else
    uint v = (i & 1) ? ((b1 << 4) | (b2 >> 4)) : ((b0 << 4) | (b2 & 0x0Fu));
#endif
    return (float)v;
#endif
}

// The levelled sample at (x, y), mirrored past the edges.
inline float level_at(__global const T* in, int x, int y, int w, int h,
                      float4 lev, float4 scale)
{
    int c = COLOUR(x & 1, y & 1);
    float s = c == CR ? scale.x : (c == CG ? scale.y : scale.z);
    return (raw_at(in, mirror(x, w), mirror(y, h), w) - lev.x) * s;
}

// A stream's batch stacks frames one after another: frame get_global_id(2)
// (0 in 2-dimensional launches) is w x h samples from its own offset.
#if PACKED == 0
#define FRAME_IN(w, h) ((size_t)(w) * (h))
#else
#define FRAME_IN(w, h) ((size_t)(w) * (h) / 2 * 3)
#endif
#define TO_FRAME(in, out, och, w, h) \
    do { \
        size_t z_ = get_global_id(2); \
        in += z_ * FRAME_IN(w, h); \
        out += z_ * (size_t)(w) * (h) * (och); \
    } while (0)

// Window access: N(px + dx, py + dy) for the quad pixel (px, py).
#define N(i, j) n[RAD + (j)][RAD + (i)]

#if METHOD == 2
// Hamilton-Adams green at a red/blue site (a, b) of the window, blended by
// inverse squared gradients (as reference::edge_green).
inline float edge_green(float n[WIN][WIN], int a, int b, float full)
{
    float c = N(a, b);
    float w = N(a - 1, b), e = N(a + 1, b), no = N(a, b - 1), s = N(a, b + 1);
    float lh = 2.0f * c - N(a - 2, b) - N(a + 2, b);
    float lv = 2.0f * c - N(a, b - 2) - N(a, b + 2);
    float gh = 0.5f * (w + e) + 0.25f * lh;
    float gv = 0.5f * (no + s) + 0.25f * lv;
    float nw = N(a - 1, b - 1), ne = N(a + 1, b - 1), sw = N(a - 1, b + 1), se = N(a + 1, b + 1);
    float dh = fabs(w - e) + fabs(lh) + 0.5f * (fabs(nw - ne) + fabs(sw - se))
        + 0.25f * (fabs(no - N(a + 2, b - 1)) + fabs(s - N(a - 2, b + 1))
                   + fabs(no - N(a - 2, b - 1)) + fabs(s - N(a + 2, b + 1)));
    float dv = fabs(no - s) + fabs(lv) + 0.5f * (fabs(nw - sw) + fabs(ne - se))
        + 0.25f * (fabs(w - N(a - 1, b + 2)) + fabs(e - N(a + 1, b - 2))
                   + fabs(w - N(a - 1, b - 2)) + fabs(e - N(a + 1, b + 2)));
    float eps = 4e-6f * full;
    float wh = 1.0f / ((dh + eps) * (dh + eps));
    float wv = 1.0f / ((dv + eps) * (dv + eps));
    return (wh * gh + wv * gv) / (wh + wv);
}
#endif

// The four pixels of the quad from the window: rgb[py][px].
inline void quad(float n[WIN][WIN], float3 rgb[2][2], float full)
{
#if METHOD == 2
    // Green at offsets -1..2 around the quad.
    float g[4][4];
#pragma unroll
    for (int b = -1; b <= 2; b++) {
#pragma unroll
        for (int a = -1; a <= 2; a++) {
            g[b + 1][a + 1] = COLOUR(a & 1, b & 1) == CG ? N(a, b) : edge_green(n, a, b, full);
        }
    }
#define GR(a, b) g[(b) + 1][(a) + 1]
#define D(a, b) (N(a, b) - GR(a, b))
#endif
#pragma unroll
    for (int py = 0; py < 2; py++) {
#pragma unroll
        for (int px = 0; px < 2; px++) {
            int c = COLOUR(px, py);
            float v[3];
            float c0 = N(px, py);
#if METHOD == 0
            if (c == CG) {
                int hc = COLOUR(px + 1, py);
                v[c] = c0;
                v[hc] = 0.5f * (N(px - 1, py) + N(px + 1, py));
                v[CR + CB - hc] = 0.5f * (N(px, py - 1) + N(px, py + 1));
            } else {
                v[c] = c0;
                v[CG] = 0.25f * (N(px - 1, py) + N(px + 1, py) + N(px, py - 1) + N(px, py + 1));
                v[CR + CB - c] = 0.25f * (N(px - 1, py - 1) + N(px + 1, py - 1)
                                          + N(px - 1, py + 1) + N(px + 1, py + 1));
            }
#elif METHOD == 1
            float diag = N(px - 1, py - 1) + N(px + 1, py - 1) + N(px - 1, py + 1) + N(px + 1, py + 1);
            float h2 = N(px - 2, py) + N(px + 2, py), v2 = N(px, py - 2) + N(px, py + 2);
            float h1 = N(px - 1, py) + N(px + 1, py), v1 = N(px, py - 1) + N(px, py + 1);
            v[c] = c0;
            if (c == CG) {
                int hc = COLOUR(px + 1, py);
                v[hc] = (5.0f * c0 + 4.0f * h1 - h2 - diag + 0.5f * v2) * 0.125f;
                v[CR + CB - hc] = (5.0f * c0 + 4.0f * v1 - v2 - diag + 0.5f * h2) * 0.125f;
            } else {
                float ring2 = h2 + v2;
                v[CG] = (4.0f * c0 + 2.0f * (h1 + v1) - ring2) * 0.125f;
                v[CR + CB - c] = (6.0f * c0 + 2.0f * diag - 1.5f * ring2) * 0.125f;
            }
#else
            float gg = GR(px, py);
            v[CG] = gg;
            if (c == CG) {
                int hc = COLOUR(px + 1, py);
                v[hc] = gg + 0.5f * (D(px - 1, py) + D(px + 1, py));
                v[CR + CB - hc] = gg + 0.5f * (D(px, py - 1) + D(px, py + 1));
            } else {
                v[c] = c0;
                v[CR + CB - c] = gg + 0.25f * (D(px - 1, py - 1) + D(px + 1, py - 1)
                                               + D(px - 1, py + 1) + D(px + 1, py + 1));
            }
#endif
            rgb[py][px] = (float3)(v[0], v[1], v[2]);
        }
    }
}

// Rounds and saturates a vector of the store's width (convert_T_sat_rte).
#if OUT_FLOAT && defined(CLAMP_HI)
// Float output for a pipeline whose stage type is an integer one: the
// samples saturate to 0..CLAMP_HI as the integer store would, unrounded.
#define OUTV8(v) clamp((v), 0.0f, CLAMP_HI)
#define OUTV3(v) clamp((v), 0.0f, CLAMP_HI)
#elif OUT_FLOAT
#define OUTV8(v) (v)
#define OUTV3(v) (v)
#else
#define OUTV8(v) CAT(CAT(convert_, TOUT), 8_sat_rte)(v)
#define OUTV3(v) CAT(CAT(convert_, TOUT), 3_sat_rte)(v)
#endif

// Writes the quad's two rows at (x, y) with one vector store per row (RGBA)
// or two 3-vector stores (RGB).
inline void store_quad(__global TOUT* out, int och, float3 rgb[2][2], int x, int y, int w,
                       float alpha)
{
#pragma unroll
    for (int py = 0; py < 2; py++) {
        int i = (y + py) * w + x;
        if (och == 4) {
            float8 v = (float8)(rgb[py][0], alpha, rgb[py][1], alpha);
            vstore8(OUTV8(v), 0, out + i * 4);
        } else {
            vstore3(OUTV3(rgb[py][0]), i, out);
            vstore3(OUTV3(rgb[py][1]), i + 1, out);
        }
    }
}

// Global loads: each work-item reads its own WIN x WIN window.
__kernel void demosaic_direct(__global const T* in, __global TOUT* out, int och, int w, int h,
                              float4 lev, float4 scale)
{
    TO_FRAME(in, out, och, w, h);
    int qx = get_global_id(0), qy = get_global_id(1);
    if (qx >= w / 2 || qy >= h / 2) return;
    int x = 2 * qx, y = 2 * qy;
    float n[WIN][WIN];
#pragma unroll
    for (int j = 0; j < WIN; j++) {
#pragma unroll
        for (int i = 0; i < WIN; i++) {
            n[j][i] = level_at(in, x - RAD + i, y - RAD + j, w, h, lev, scale);
        }
    }
    float3 rgb[2][2];
    quad(n, rgb, lev.y);
    store_quad(out, och, rgb, x, y, w, lev.y);
}

#ifdef TX
// The work-group's tile: (2 TX + 2 RAD) x (2 TY + 2 RAD) levelled samples.
#define TW (2 * TX + 2 * RAD)
#define TH (2 * TY + 2 * RAD)

__kernel __attribute__((reqd_work_group_size(TX, TY, 1)))
void demosaic_tile(__global const T* in, __global TOUT* out, int och, int w, int h,
                   float4 lev, float4 scale)
{
    __local float tile[TH * TW];
    TO_FRAME(in, out, och, w, h);
    int lx = get_local_id(0), ly = get_local_id(1);
    int x0 = 2 * TX * GROUP_ID(0) - RAD, y0 = 2 * TY * GROUP_ID(1) - RAD;
    for (int k = ly * TX + lx; k < TW * TH; k += TX * TY) {
        int tx = k % TW, ty = k / TW;
        tile[k] = level_at(in, x0 + tx, y0 + ty, w, h, lev, scale);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int qx = get_global_id(0), qy = get_global_id(1);
    if (qx >= w / 2 || qy >= h / 2) return;
    float n[WIN][WIN];
#pragma unroll
    for (int j = 0; j < WIN; j++) {
#pragma unroll
        for (int i = 0; i < WIN; i++) {
            n[j][i] = tile[(2 * ly + j) * TW + 2 * lx + i];
        }
    }
    float3 rgb[2][2];
    quad(n, rgb, lev.y);
    store_quad(out, och, rgb, 2 * qx, 2 * qy, w, lev.y);
}
#endif
