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
