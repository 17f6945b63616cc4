// histogram.cl: per-channel histograms with exact integer counts.
// Options: LWS (work-group size), PER_ITEM (pixels per work-item of
// local_private), HIST_LEN (CH * bins, local_private only: its local
// array, so a program is built per bin count).
//
// counts holds CH lists of `bins` uints, channel-major. A sample v counts
// when lo <= v <= hi (NaN never does), in bin
//   min((int)floor((v - lo) * scale), bins - 1),   scale = bins / (hi - lo)
// rounded to f32 by the host: the same two f32 operations as the Rust
// paths, so every path puts every sample in the same bin. The clamp puts
// v == hi (and a product rounded up to `bins`) in the last bin.
//
// Positions come from get_global_id (which includes a launch's global
// offset), and partial histograms merge into `counts` with atomics, so a
// launch split into chunks of whole work-groups counts every pixel once.

// Channel k of a FLOATN pixel.
#if CH == 1
#define SAMPLE(p, k) (p)
#elif CH == 3
#define SAMPLE(p, k) ((k) == 0 ? (p).x : (k) == 1 ? (p).y : (p).z)
#else
#define SAMPLE(p, k) ((k) == 0 ? (p).x : (k) == 1 ? (p).y : (k) == 2 ? (p).z : (p).w)
#endif

// The bin of v, or -1 when v is outside [lo, hi] or NaN.
inline int bin_of(float v, float lo, float hi, float scale, int bins)
{
    if (!(v >= lo && v <= hi)) return -1;
    return min((int)floor((v - lo) * scale), bins - 1);
}

// Zeroes `n` counts.
__kernel void histogram_zero(__global uint* counts, int n)
{
    int i = get_global_id(0);
    if (i < n) counts[i] = 0;
}

// One pixel per work-item, one global atomic per sample.
__kernel void histogram_global_atomics(__global const T* in, int n, float lo, float hi,
                                       float scale, int bins, __global uint* counts)
{
    int i = get_global_id(0);
    if (i >= n) return;
    FLOATN p = TO_FLOATN(LOADP(in, i));
    for (int k = 0; k < CH; k++) {
        int b = bin_of(SAMPLE(p, k), lo, hi, scale, bins);
        if (b >= 0) atomic_inc(&counts[k * bins + b]);
    }
}

// A work-group's private histogram in local memory (local atomics), over
// LWS * PER_ITEM consecutive pixels (strided by LWS, so loads coalesce),
// then added to `counts` with one global atomic per non-empty bin.
#ifdef BYTE_BINS
// local_private for uchar samples whose bin is the byte itself (256 bins
// per channel; the host checks every level with the f32 formula and then
// defines BYTE_BINS). The group's tile is LWS * BYTE_ITEM consecutive
// pixels, read as uint4 words of 16 samples (sample b of the image is
// channel b % CH; a tile starts at a multiple of 16 bytes), with no float
// math.
#define QUADS (BYTE_ITEM * CH / 16)
#if (BYTE_ITEM * CH) % 16 != 0
#error "BYTE_ITEM * CH must be a multiple of 16"
#endif
#if CH == 3
#define CH_OF(b) ((b) % 3)
#else
#define CH_OF(b) ((b) & (CH - 1))
#endif

#if CH == 1 || CH == 4
// Bank slots (gray and RGBA). Local memory has 32 banks of 32-bit words,
// and a warp's atomics on words of one bank take one pass each, so random
// bins cost about 3.5 passes per instruction. Here every count (channel c,
// bin v) has SLOTS = 32 / CH words, v * 32 + c * SLOTS + s, one per bank,
// and a work-item of lane L (lid % 32) only uses those of its own bank:
// in step k of a 4-sample word it counts sample (k + L) % 4, of channel
// c = that byte's channel, in slot s = L / CH (RGBA) or L (gray). The 32
// lanes of an instruction then hit 32 different banks (RGBA: the 8 lanes
// with the same L % 4 have the same channel and different slots), whatever
// the bins, and never the same word, so a flat image costs no more than a
// random one. 32 KiB; the slots of a count are summed at the merge.
#define SLOTS (32 / CH)
#define HIST_WORDS (256 * 32)
#define LANE_SLOT(L, c) ((c) * SLOTS + (L) / CH)
// Word w turned so that its byte k is sample (k + L) % 4.
#define COUNT_WORD(h, w)                                                \
    {                                                                   \
        uint r_ = rotate((w), turn);                                    \
        for (int k_ = 0; k_ < 4; k_++)                                  \
            atomic_inc(&(h)[(((r_ >> (8 * k_)) & 255u) << 5) + slot[k_]]);       \
    }

__kernel void histogram_local_private(__global const T* in, int n, float lo, float hi,
                                      float scale, int bins, __global uint* counts)
{
    __local uint4 hist4[HIST_WORDS / 4];
    __local uint* hist = (__local uint*)hist4;
    int lid = get_local_id(0);
    for (int j = lid; j < HIST_WORDS / 4; j += LWS) hist4[j] = (uint4)(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    int lane = lid % 32;
    // A right turn by lane % 4 bytes, and per step k the slot of sample
    // (k + lane) % 4.
    uint turn = (32 - 8 * (lane % 4)) % 32;
    int slot[4];
    for (int k = 0; k < 4; k++) slot[k] = LANE_SLOT(lane, CH == 4 ? (k + lane) % 4 : 0);
    __global const uchar* bytes = (__global const uchar*)in;
    size_t total = (size_t)n * CH;
    // The group's tile from its global position: chunked launches agree.
    size_t first = (get_global_id(0) - lid) * (size_t)(BYTE_ITEM * CH);
    __global const uint4* quads = (__global const uint4*)(bytes + first);
    for (int r0 = 0; r0 < QUADS; r0 += UNROLL) {
        uint4 v[UNROLL];
        for (int u = 0; u < UNROLL; u++) {
            size_t q = (size_t)(r0 + u) * LWS + lid;
            if (r0 + u < QUADS && first + 16 * q + 16 <= total) v[u] = quads[q];
        }
        for (int u = 0; u < UNROLL; u++) {
            size_t q = (size_t)(r0 + u) * LWS + lid;
            size_t b0 = first + 16 * q;
            if (r0 + u >= QUADS) break;
            if (b0 + 16 <= total) {
                COUNT_WORD(hist, v[u].x)
                COUNT_WORD(hist, v[u].y)
                COUNT_WORD(hist, v[u].z)
                COUNT_WORD(hist, v[u].w)
            } else {
                for (size_t b = b0; b < total && b < b0 + 16; b++)
                    atomic_inc(&hist[((uint)bytes[b] << 5) + LANE_SLOT(lane, CH_OF(b))]);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Count (c, v): its SLOTS words are uint4s (v * 32 + c * SLOTS) / 4 + i.
    // Neighbouring work-items start at different uint4s of their row, so a
    // warp's loads spread over every bank.
    for (int p = lid; p < CH * 256; p += LWS) {
#if CH == 4
        int c = p % 4, v = p / 4;
        int q = v * 8 + c * 2;
        uint4 a = hist4[q + v % 2] + hist4[q + 1 - v % 2];
#else
        int c = 0, v = p;
        uint4 a = (uint4)(0);
        for (int i = 0; i < 8; i++) a += hist4[v * 8 + (i + v) % 8];
#endif
        uint s = a.x + a.y + a.z + a.w;
        if (s) atomic_add(&counts[c * 256 + v], s);
    }
}
#else
// RGB: COPIES sub-histograms; work-item lid counts into copy lid % COPIES,
// each padded by one count so that a bin's copies sit in different banks:
// fewer same-address local atomics when neighbouring pixels are alike.
#define BYTE_LEN (HIST_LEN + 1)
// The four samples of word w, whose first sample is channel c0.
#define COUNT_WORD(h, w, c0)                                            \
    for (int k_ = 0; k_ < 4; k_++)                                      \
        atomic_inc(&(h)[CH_OF((c0) + k_) * 256 + (((w) >> (8 * k_)) & 255u)]);

__kernel void histogram_local_private(__global const T* in, int n, float lo, float hi,
                                      float scale, int bins, __global uint* counts)
{
    __local uint hist[COPIES * BYTE_LEN];
    int lid = get_local_id(0);
    for (int j = lid; j < COPIES * BYTE_LEN; j += LWS) hist[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    __local uint* mine = hist + (lid % COPIES) * BYTE_LEN;
    __global const uchar* bytes = (__global const uchar*)in;
    size_t total = (size_t)n * CH;
    // The group's tile from its global position: chunked launches agree.
    size_t first = (get_global_id(0) - lid) * (size_t)(BYTE_ITEM * CH);
    __global const uint4* quads = (__global const uint4*)(bytes + first);
    for (int r0 = 0; r0 < QUADS; r0 += UNROLL) {
        uint4 v[UNROLL];
        for (int u = 0; u < UNROLL; u++) {
            size_t q = (size_t)(r0 + u) * LWS + lid;
            if (r0 + u < QUADS && first + 16 * q + 16 <= total) v[u] = quads[q];
        }
        for (int u = 0; u < UNROLL; u++) {
            size_t q = (size_t)(r0 + u) * LWS + lid;
            size_t b0 = first + 16 * q;
            if (r0 + u >= QUADS) break;
            if (b0 + 16 <= total) {
                int c0 = CH_OF(b0);
                COUNT_WORD(mine, v[u].x, c0)
                COUNT_WORD(mine, v[u].y, c0 + 4)
                COUNT_WORD(mine, v[u].z, c0 + 8)
                COUNT_WORD(mine, v[u].w, c0 + 12)
            } else {
                for (size_t b = b0; b < total && b < b0 + 16; b++)
                    atomic_inc(&mine[CH_OF(b) * 256 + bytes[b]]);
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = lid; j < HIST_LEN; j += LWS) {
        uint c = 0;
        for (int r = 0; r < COPIES; r++) c += hist[r * BYTE_LEN + j];
        if (c) atomic_add(&counts[j], c);
    }
}
#endif
#elif defined(HIST_LEN)
#if PER_ITEM % (4 * UNROLL) != 0
#error "PER_ITEM must be a multiple of 4 * UNROLL"
#endif
// Counts gray sample v.
#define COUNT_GRAY(v)                                                   \
    {                                                                   \
        int b_ = bin_of((v), lo, hi, scale, bins);                      \
        if (b_ >= 0) atomic_inc(&hist[b_]);                             \
    }
__kernel void histogram_local_private(__global const T* in, int n, float lo, float hi,
                                      float scale, int bins, __global uint* counts)
{
    __local uint hist[HIST_LEN];
    int lid = get_local_id(0);
    int total = CH * bins;
    for (int j = lid; j < total; j += LWS) hist[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    // The group's tile from its global position: chunked launches agree.
    size_t first = (get_global_id(0) - lid) * PER_ITEM;
#if CH == 1
    // Gray: four samples per aligned vector load (quad q is samples
    // 4q..4q+3; a tile starts at a multiple of 4, PER_ITEM being one), a
    // partial last quad sample by sample. UNROLL loads go out before the
    // atomics that the compiler would not move them across.
    size_t q0 = first / 4;
    for (int r0 = 0; r0 < PER_ITEM / 4; r0 += UNROLL) {
        float4 p[UNROLL];
        for (int u = 0; u < UNROLL; u++) {
            size_t q = q0 + (size_t)(r0 + u) * LWS + lid;
            if (4 * q + 4 <= (size_t)n) p[u] = convert_float4(((__global const CAT(T, 4)*)in)[q]);
        }
        for (int u = 0; u < UNROLL; u++) {
            size_t q = q0 + (size_t)(r0 + u) * LWS + lid;
            if (4 * q + 4 <= (size_t)n) {
                COUNT_GRAY(p[u].x) COUNT_GRAY(p[u].y) COUNT_GRAY(p[u].z) COUNT_GRAY(p[u].w)
            } else {
                for (size_t i = 4 * q; i < (size_t)n; i++) COUNT_GRAY(convert_float(in[i]))
            }
        }
    }
#else
    // Loads go out UNROLL at a time, before the atomics that the compiler
    // would not move them across: more bytes in flight per work-item.
    for (int r0 = 0; r0 < PER_ITEM; r0 += UNROLL) {
        FLOATN p[UNROLL];
        for (int u = 0; u < UNROLL; u++) {
            size_t i = first + (size_t)(r0 + u) * LWS + lid;
            if (i < (size_t)n) p[u] = TO_FLOATN(LOADP(in, i));
        }
        for (int u = 0; u < UNROLL; u++) {
            size_t i = first + (size_t)(r0 + u) * LWS + lid;
            if (i < (size_t)n) {
                for (int k = 0; k < CH; k++) {
                    int b = bin_of(SAMPLE(p[u], k), lo, hi, scale, bins);
                    if (b >= 0) atomic_inc(&hist[k * bins + b]);
                }
            }
        }
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = lid; j < total; j += LWS) {
        uint c = hist[j];
        if (c) atomic_add(&counts[j], c);
    }
}
#endif
