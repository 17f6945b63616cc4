// transpose.cl: out (height x width) = transpose of in (width x height).
// Options: TILE (tile edge, local variants), ROWS (work-group rows, local_x4).

// One work-item per pixel. Reads are coalesced, writes are strided by
// `height` pixels: every store touches a different memory segment.
__kernel void transpose_naive(__global const T* in, __global T* out, int width, int height)
{
    int x = get_global_id(0);
    int y = get_global_id(1);
    if (x < width && y < height)
        STOREP(LOADP(in, y * width + x), out, x * height + y);
}

#ifdef TILE
// A TILE x TILE work-group stages a tile in local memory; both the global
// read and the global write are along rows. The +1 column of padding puts
// the elements of a tile column in different local-memory banks.
__kernel void transpose_local(__global const T* in, __global T* out, int width, int height)
{
    __local PIX tile[TILE][TILE + 1];
    int lx = get_local_id(0), ly = get_local_id(1);
    int bx = GROUP_ID(0) * TILE, by = GROUP_ID(1) * TILE;
    int x = bx + lx, y = by + ly;
    if (x < width && y < height)
        tile[ly][lx] = LOADP(in, y * width + x);
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = by + lx, oy = bx + ly;  // ox < height, oy < width in the output
    if (ox < height && oy < width)
        STOREP(tile[lx][ly], out, oy * height + ox);
}

// As transpose_local, without padding: element (r, c) of the tile is kept
// at column (c + r) % TILE, so a tile column is spread over all banks and
// the tile needs no extra local memory.
__kernel void transpose_local_diag(__global const T* in, __global T* out, int width, int height)
{
    __local PIX tile[TILE][TILE];
    int lx = get_local_id(0), ly = get_local_id(1);
    int bx = GROUP_ID(0) * TILE, by = GROUP_ID(1) * TILE;
    int x = bx + lx, y = by + ly;
    if (x < width && y < height)
        tile[ly][(lx + ly) % TILE] = LOADP(in, y * width + x);
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = by + lx, oy = bx + ly;
    if (ox < height && oy < width)
        STOREP(tile[lx][(ly + lx) % TILE], out, oy * height + ox);
}

#ifdef ROWS
// A TILE x ROWS work-group moves a TILE x TILE tile: each work-item copies
// TILE / ROWS pixels, so fewer, longer-lived work-items hide more latency
// and the index arithmetic is amortised.
__kernel void transpose_local_x4(__global const T* in, __global T* out, int width, int height)
{
    __local PIX tile[TILE][TILE + 1];
    int lx = get_local_id(0), ly = get_local_id(1);
    int bx = GROUP_ID(0) * TILE, by = GROUP_ID(1) * TILE;
    int x = bx + lx;
    if (x < width) {
        for (int j = ly; j < TILE; j += ROWS) {
            int y = by + j;
            if (y < height)
                tile[j][lx] = LOADP(in, y * width + x);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    int ox = by + lx;
    if (ox < height) {
        for (int j = ly; j < TILE; j += ROWS) {
            int oy = bx + j;
            if (oy < width)
                STOREP(tile[lx][j], out, oy * height + ox);
        }
    }
}
#endif
#endif
