// gaussian/fir.cl: fir_local, the exact separable FIR (the reference's
// taps, radius r <= FIR_RMAX), row segments and column tiles staged in
// local memory. MIRROR selects the mirror border, else replicate.

#ifndef FIR_RMAX
#error "FIR_RMAX must be passed with -D"
#endif
#ifndef FIR_LX
#error "FIR_LX must be passed with -D"
#endif
#ifndef FIR_TX
#error "FIR_TX must be passed with -D"
#endif
#ifndef FIR_TY
#error "FIR_TY must be passed with -D"
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

// Separable FIR, horizontal: a FIR_LX-wide segment of one row plus r pixels
// on each side is staged in local memory and every tap reads from there.
__kernel void gaussian_fir_local_rows(__global const W* in, __global W* out, int width,
                                      int height, __global const float* taps, int r)
{
    __local W tile[FIR_LX + 2 * FIR_RMAX];
    int lx = get_local_id(0);
    int x0 = GROUP_ID(0) * FIR_LX;
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
// A stream's batch stacks frames of `height` rows: frame get_global_id(2)
// (0 in 2-dimensional launches) is filtered alone, its own rows bordered.
__kernel void gaussian_fir_local_cols(__global const W* in, __global W* out, int width,
                                      int height, __global const float* taps, int r)
{
    __local W tile[FIR_TY + 2 * FIR_RMAX][FIR_TX];
    size_t frame = get_global_id(2) * (size_t)width * height;
    in += frame;
    out += frame;
    int lx = get_local_id(0), ly = get_local_id(1);
    int x = get_global_id(0);
    int y0 = GROUP_ID(1) * FIR_TY;
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

// fir_tiles: both directions in one pass, straight from the user's samples
// (T, CH 1 or 4; RGB runs on the float4 working image) to theirs. A
// work-group owns FIR_TW columns and a strip of FIR_SH rows and walks
// down the strip in bands of FIR_B rows:
//   1. stage the band's input rows, FIR_RX pixels of halo each side, in S
//      (column-major, stride FIR_B + 1: a warp's lanes are consecutive
//      rows, so the row pass reads consecutive words);
//   2. filter the band's rows, FIR_K adjacent outputs per work-item from a
//      window of FIR_K + 2 FIR_RX samples in registers, into the ring H
//      (row-major, 2 FIR_RY + FIR_B rows: the columns' window);
//   3. filter down the columns, FIR_K adjacent rows per work-item from a
//      window of FIR_K + 2 FIR_RY rows, and store the band.
// The strip starts by filtering its first 2 FIR_RY rows (the rows above
// the first output and as many below it). The radii are compile-time, so
// the tap loops unroll and every tap is a constant operand; the taps are
// not folded (a folded pair costs an add and a multiply-add, no fewer
// instructions than two multiply-adds). Each output sums its taps in
// fir_local's order.
#ifdef FIR_RX
#ifndef FIR_RY
#error "FIR_RY must be passed with -D"
#endif
#ifndef FIR_TW
#error "FIR_TW must be passed with -D"
#endif
#ifndef FIR_B
#error "FIR_B must be passed with -D"
#endif
#ifndef FIR_K
#error "FIR_K must be passed with -D"
#endif
#ifndef FIR_SH
#error "FIR_SH must be passed with -D"
#endif

#define FT_WG (FIR_B * FIR_TW / FIR_K)
#define FT_SW (FIR_TW + 2 * FIR_RX)   // staged row width
#define FT_SS (FIR_B + 1)             // S's column stride
#define FT_RING (2 * FIR_RY + FIR_B)  // H's rows
#define FT_HS (FIR_TW + 1)            // H's row stride

// A work-item's share of a band's staging: S's entries lid + j FT_WG.
#define FT_NPT ((FIR_B * FT_SW + FT_WG - 1) / FT_WG)
// Fetch the next band's input into registers before filtering the current
// band's columns, so the loads' latency overlaps that arithmetic: on tiles
// of 8 outputs per work-item whose share is at most 16 pixels. On an H200
// at 8192x8192 (docs/results/2026-11-27-s30-lead.md), fetched ahead
// against fetched just before staging: f32 RGBA sigma 1 (a share of 11)
// 0.67 against 0.72 ms, gray sigma 2 0.415 against 0.439; but sigma 3 (a
// share of 17) 2.24 against 1.76, sigma 4 (4-output tiles) 3.65 against 3.03.
#ifndef FT_PREFETCH
#define FT_PREFETCH (FIR_K == 8 && FT_NPT <= 16)
#endif

// The input as loaded (the user's pixel, converted to W when staged).
#if CH == 4
#define FT_RAW PIX
#define FT_FETCH(p, i) LOADPIX(p, i)
#define FT_STORE(v, p, i) (((__global PIX*)(p))[i] = NARROW(v))
#else
#define FT_RAW PIX
#define FT_FETCH(p, i) LOADP(p, i)
#define FT_STORE(v, p, i) STOREP(NARROW(v), p, i)
#endif

// Loads input rows y .. y + n - 1 (n <= FIR_B) of the strip's columns,
// FIR_RX pixels of halo each side, into the work-item's share `p`.
inline void fir_tiles_fetch(__global const T* in, int width, int height, int x0, int y, int n,
                            FT_RAW* p)
{
    int lid = get_local_id(0);
    // No `#pragma unroll` on this loop or the staging one: NVIDIA's
    // compiler unrolls them anyway (the same times on an H100), and PoCL
    // took twice as long to build the program with it.
    for (int j = 0; j < FT_NPT; j++) {
        int i = lid + j * FT_WG;
        if (i < n * FT_SW) {
            int row = i / FT_SW, c = i - row * FT_SW;
            size_t at = (size_t)border_index(y + row, height) * width;
            p[j] = FT_FETCH(in, at + border_index(x0 - FIR_RX + c, width));
        }
    }
}

// Stages the n rows fetched into `p` in S, filters them along the rows and
// puts them in H, the first at ring slot `slot` (the next ones after it,
// wrapping).
inline void fir_tiles_rows(const FT_RAW* p, int n, int slot, __constant float* tx, __local W* S,
                           __local W* H)
{
    int lid = get_local_id(0);
    // S's last readers finished before the barrier that ended the last
    // call, H's (the column pass) before the barrier below.
    for (int j = 0; j < FT_NPT; j++) {
        int i = lid + j * FT_WG;
        if (i < n * FT_SW) {
            int row = i / FT_SW, c = i - row * FT_SW;
            S[c * FT_SS + row] = TO_W(p[j]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int row = lid % FIR_B, g = lid / FIR_B;
    if (row < n) {
        W acc[FIR_K];
#pragma unroll
        for (int i = 0; i < FIR_K; i++)
            acc[i] = 0.0f;
        __local const W* s = S + g * FIR_K * FT_SS + row;
#pragma unroll
        for (int k = 0; k < FIR_K + 2 * FIR_RX; k++) {
            W v = s[k * FT_SS];
#pragma unroll
            for (int i = 0; i < FIR_K; i++)
                if (k - i >= 0 && k - i <= 2 * FIR_RX)
                    acc[i] += tx[k - i] * v;
        }
        int r = slot + row;
        __local W* h = H + (r >= FT_RING ? r - FT_RING : r) * FT_HS + g * FIR_K;
#pragma unroll
        for (int i = 0; i < FIR_K; i++)
            h[i] = acc[i];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

// Launch: (ceil(width / FIR_TW) * FT_WG, ceil(height / FIR_SH), frames)
// work-items in groups of (FT_WG, 1, 1). tx, ty: the rows' and the
// columns' 2 r + 1 taps (a radius 0 is the single tap 1: that direction
// is left alone). A stream's batch stacks frames of `height` rows: frame
// get_global_id(2) is filtered alone, its own rows bordered.
__kernel __attribute__((reqd_work_group_size(FT_WG, 1, 1)))
void gaussian_fir_tiles_both(__global const T* in, __global T* out, int width, int height,
                             __constant float* tx, __constant float* ty)
{
    __local W S[FT_SW * FT_SS];
    __local W H[FT_RING * FT_HS];
    size_t frame = get_global_id(2) * (size_t)width * height * CH;
    in += frame;
    out += frame;
    int lid = get_local_id(0);
    int x0 = GROUP_ID(0) * FIR_TW, y0 = GROUP_ID(1) * FIR_SH;
    int yend = min(y0 + FIR_SH, height);
    FT_RAW p[FT_NPT];
    // Ring slot of row y: (y - (y0 - FIR_RY)) mod FT_RING.
    for (int y = y0 - FIR_RY; y < y0 + FIR_RY; y += FIR_B) {
        int n = min(FIR_B, y0 + FIR_RY - y);
        fir_tiles_fetch(in, width, height, x0, y, n, p);
        fir_tiles_rows(p, n, y - y0 + FIR_RY, tx, S, H);
    }
#if FT_PREFETCH
    fir_tiles_fetch(in, width, height, x0, y0 + FIR_RY, FIR_B, p);
#endif
    int x = lid % FIR_TW, rb = lid / FIR_TW * FIR_K;
    for (int yo = y0; yo < yend; yo += FIR_B) {
        // Rows yo + FIR_RY .. + FIR_B - 1 complete the window of rows
        // yo - FIR_RY .. yo + FIR_B + FIR_RY - 1.
        int slot = (yo - y0 + 2 * FIR_RY) % FT_RING;
#if !FT_PREFETCH
        fir_tiles_fetch(in, width, height, x0, yo + FIR_RY, FIR_B, p);
#endif
        fir_tiles_rows(p, FIR_B, slot, tx, S, H);
#if FT_PREFETCH
        if (yo + FIR_B < yend)
            fir_tiles_fetch(in, width, height, x0, yo + FIR_B + FIR_RY, FIR_B, p);
#endif
        W acc[FIR_K];
#pragma unroll
        for (int i = 0; i < FIR_K; i++)
            acc[i] = 0.0f;
        int base = (yo - y0 + rb) % FT_RING;
#pragma unroll
        for (int k = 0; k < FIR_K + 2 * FIR_RY; k++) {
            int r = base + k;
            W v = H[(r >= FT_RING ? r - FT_RING : r) * FT_HS + x];
#pragma unroll
            for (int i = 0; i < FIR_K; i++)
                if (k - i >= 0 && k - i <= 2 * FIR_RY)
                    acc[i] += ty[k - i] * v;
        }
        if (x0 + x < width) {
#pragma unroll
            for (int i = 0; i < FIR_K; i++)
                if (yo + rb + i < yend)
                    FT_STORE(acc[i], out, (size_t)(yo + rb + i) * width + x0 + x);
        }
    }
}
#endif
