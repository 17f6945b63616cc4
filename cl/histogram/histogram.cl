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
#ifdef HIST_LEN
#if PER_ITEM % UNROLL != 0
#error "PER_ITEM must be a multiple of UNROLL"
#endif
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
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int j = lid; j < total; j += LWS) {
        uint c = hist[j];
        if (c) atomic_add(&counts[j], c);
    }
}
#endif
