// sort.cl: ascending sorts of u32 words (the host maps f32, i32 and u32
// keys to words whose unsigned order is the keys' order; src/ops/sort/keys.rs).
// Options: PAIRS (1: each word carries a u32 index, and ties between equal
// words go by index, so the sort is stable), L (work-group size), and for
// the radix kernels ITEMS (words per work-item of a tile; halved with PAIRS).
//
// Watchdog chunking may split a launch with a global work offset: the
// bitonic kernels find their elements from get_global_id, which includes
// it, and the radix kernels use GROUP_ID (cl/common.cl), which adds
// get_global_offset(0) / L to the group id.

#ifndef PAIRS
#error "PAIRS must be defined"
#endif
#ifndef L
#error "L (the work-group size) must be defined"
#endif

#if PAIRS
#define GREATER(ka, ia, kb, ib) ((ka) > (kb) || ((ka) == (kb) && (ia) > (ib)))
#else
#define GREATER(ka, ia, kb, ib) ((ka) > (kb))
#endif

// keys[0..total) = in[0..n) followed by padding that sorts last (all ones,
// and with PAIRS an index of all ones, above every real index); with
// PAIRS, idx = 0, 1, 2, ... (without, idx is not touched).
__kernel void sort_init(__global const uint* in, int n, __global uint* keys,
                        __global uint* idx, int total)
{
    int i = get_global_id(0);
    if (i >= total)
        return;
    keys[i] = i < n ? in[i] : 0xffffffffu;
#if PAIRS
    idx[i] = i < n ? (uint)i : 0xffffffffu;
#endif
}

// dst[0..n) = src[0..n).
__kernel void sort_copy(__global const uint* src, __global uint* dst, int n)
{
    int i = get_global_id(0);
    if (i < n)
        dst[i] = src[i];
}

// One compare-exchange of the bitonic network: step j of merge stage k,
// one work-item per pair (global size: total / 2). Used for j >= 2L.
__kernel void sort_bitonic_step(__global uint* keys, __global uint* idx, int k, int j)
{
    uint t = get_global_id(0), uj = (uint)j;
    uint i = 2 * (t & ~(uj - 1)) + (t & (uj - 1));
    uint p = i + uj;
    bool up = (i & (uint)k) == 0;
    uint a = keys[i], b = keys[p];
#if PAIRS
    uint ia = idx[i], ib = idx[p];
#else
    uint ia = 0, ib = 0;
#endif
    if (GREATER(a, ia, b, ib) == up) {
        keys[i] = b;
        keys[p] = a;
#if PAIRS
        idx[i] = ib;
        idx[p] = ia;
#endif
    }
}

// Every step j < 2L of stages k0, 2 k0, ..., k1 on one block of 2L words
// in local memory (global size: total / 2): k0 = 2, k1 = 2L sorts each
// block (alternately up and down, ready for the next stage); k0 = k1 = k
// finishes stage k after its global steps. The seed's fusion: log2(2L)
// steps per stage cost one read and one write of the data instead of one each.
__kernel void sort_bitonic_local(__global uint* keys, __global uint* idx, int k0, int k1)
{
    __local uint lk[2 * L];
#if PAIRS
    __local uint li[2 * L];
#endif
    uint lid = get_local_id(0);
    uint base = (get_global_id(0) - lid) * 2;
    lk[lid] = keys[base + lid];
    lk[lid + L] = keys[base + lid + L];
#if PAIRS
    li[lid] = idx[base + lid];
    li[lid + L] = idx[base + lid + L];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = (uint)k0; k <= (uint)k1; k <<= 1) {
        for (uint j = min(k / 2, (uint)L); j > 0; j >>= 1) {
            uint i = 2 * (lid & ~(j - 1)) + (lid & (j - 1));
            uint p = i + j;
            bool up = ((base + i) & k) == 0;
            uint a = lk[i], b = lk[p];
#if PAIRS
            uint ia = li[i], ib = li[p];
#else
            uint ia = 0, ib = 0;
#endif
            if (GREATER(a, ia, b, ib) == up) {
                lk[i] = b;
                lk[p] = a;
#if PAIRS
                li[i] = ib;
                li[p] = ia;
#endif
            }
            barrier(CLK_LOCAL_MEM_FENCE);
        }
    }
    keys[base + lid] = lk[lid];
    keys[base + lid + L] = lk[lid + L];
#if PAIRS
    idx[base + lid] = li[lid];
    idx[base + lid + L] = li[lid + L];
#endif
}

#ifdef ITEMS
// LSD radix sort, 8 bits per pass (4 passes over the 32-bit words), in
// tiles of B words per work-group: ITEMS words per work-item, half as
// many with PAIRS (each word's index travels beside it), so a tile takes
// the same local memory either way. Per pass: sort_radix_count (each
// tile's digit counts), sort_radix_reduce / _top / _down (their exclusive
// prefix sums in digit-major order: where each tile's words of each digit
// go) and sort_radix_scatter (the tile ranked in local memory, then
// written out in runs of equal digits).
#if L != 256
#error "the radix kernels need L = 256 (one work-item per digit)"
#endif
#define RADIX 256
#if PAIRS
#define PER (ITEMS / 2)
#else
#define PER ITEMS
#endif
#define B (L * PER)
#if B > 65535
#error "the packed 16-bit counters of sort_radix_scatter need tiles under 2^16 words"
#endif
#if PER % 4 != 0
#error "sort_radix_count reads its tile in uint4 vectors: PER must be a multiple of 4"
#endif
#define DIGIT(w) (((w) >> shift) & (RADIX - 1))
// A local index with one spare word after every 32: the runs that one
// work-item reads (PER tile words, 8 counters) then start in different
// banks across a warp (on devices with 32 banks of 4 bytes).
#define PAD(i) ((i) + ((i) >> 5))

// hist[g * RADIX + d] = how many words of tile g have digit d. The tile is
// read in uint4 vectors (its start is a multiple of 4 words; the words
// past n in the last vector are skipped one by one). Work-item lid counts
// into copy lid % 8 of the local histogram (stride 9 words per digit), so
// a warp whose words share a digit spreads its atomics over 8 banks
// instead of serialising them on one word.
__kernel void sort_radix_count(__global const uint* keys, int n, int shift,
                               __global uint* hist, int groups)
{
    __local uint h[9 * RADIX];
    uint lid = get_local_id(0), g = GROUP_ID(0);
    if (g >= (uint)groups)
        return;
    for (int c = 0; c < 9; c++)
        h[c * RADIX + lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t base = (size_t)g * B;
    __local uint* mine = h + (lid & 7);
#pragma unroll
    for (int e = 0; e < PER / 4; e++) {
        size_t i = base + 4 * (e * L + lid);
        if (i + 4 <= (size_t)n) {
            uint4 w = ((__global const uint4*)keys)[i / 4];
            atomic_inc(&mine[DIGIT(w.x) * 9]);
            atomic_inc(&mine[DIGIT(w.y) * 9]);
            atomic_inc(&mine[DIGIT(w.z) * 9]);
            atomic_inc(&mine[DIGIT(w.w) * 9]);
        } else {
            for (size_t j = i; j < (size_t)n && j < i + 4; j++)
                atomic_inc(&mine[DIGIT(keys[j]) * 9]);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint s = 0;
    for (int c = 0; c < 8; c++)
        s += h[lid * 9 + c];
    hist[(size_t)g * RADIX + lid] = s;
}

// The scan of hist in digit-major order runs over blocks of `per` tiles
// (about sqrt(groups) blocks of sqrt(groups) tiles, so every walk below is
// short): sums[b * RADIX + d] = the words of digit d in block b's tiles.
// One work-item per digit, so each step reads a coalesced row. The walks
// here and below load CHUNK rows before they use any, so that many loads
// are in flight instead of one latency per row.
#define CHUNK 16
__kernel void sort_radix_reduce(__global const uint* hist, int groups, int per,
                                __global uint* sums, int blocks)
{
    uint d = get_local_id(0), b = GROUP_ID(0);
    if (b >= (uint)blocks)
        return;
    uint t0 = b * (uint)per, t1 = min(t0 + (uint)per, (uint)groups);
    uint s = 0;
    for (uint t = t0; t < t1; t += CHUNK) {
#pragma unroll
        for (uint j = 0; j < CHUNK; j++)
            s += t + j < t1 ? hist[(size_t)(t + j) * RADIX + d] : 0;
    }
    sums[b * RADIX + d] = s;
}

// Exclusive prefix sum over the work-group (one value per work-item);
// *total gets the sum. Hillis-Steele over two buffers of L words in tmp,
// one barrier per step; tmp is free again on return.
inline uint group_scan(uint v, __local uint* tmp, uint* total)
{
    uint lid = get_local_id(0);
    __local uint* a = tmp;
    __local uint* b = tmp + L;
    a[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < L; d <<= 1) {
        b[lid] = lid >= d ? a[lid] + a[lid - d] : a[lid];
        barrier(CLK_LOCAL_MEM_FENCE);
        __local uint* t = a;
        a = b;
        b = t;
    }
    uint inclusive = a[lid];
    *total = a[L - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return inclusive - v;
}

// Rows t0 .. t1-1 of column d of a table of RADIX columns become their
// exclusive prefix sums, starting at acc, CHUNK rows at a time.
inline void walk_scan(__global uint* table, uint d, uint t0, uint t1, uint acc)
{
    for (uint t = t0; t < t1; t += CHUNK) {
        uint c[CHUNK];
#pragma unroll
        for (uint j = 0; j < CHUNK; j++)
            c[j] = t + j < t1 ? table[(size_t)(t + j) * RADIX + d] : 0;
#pragma unroll
        for (uint j = 0; j < CHUNK; j++) {
            if (t + j < t1)
                table[(size_t)(t + j) * RADIX + d] = acc;
            acc += c[j];
        }
    }
}

// One work-group: sums[b * RADIX + d] becomes the first output position
// of the words of digit d in block b: every word of a smaller digit, then
// digit d's words in the blocks before b.
__kernel void sort_radix_top(__global uint* sums, int blocks)
{
    __local uint tmp[2 * L];
    uint d = get_local_id(0), n = 0, all;
    for (uint b = 0; b < (uint)blocks; b += CHUNK) {
#pragma unroll
        for (uint j = 0; j < CHUNK; j++)
            n += b + j < (uint)blocks ? sums[(b + j) * RADIX + d] : 0;
    }
    walk_scan(sums, d, 0, (uint)blocks, group_scan(n, tmp, &all));
}

// hist[t * RADIX + d] becomes the first output position of tile t's words
// of digit d: block b's start, then the counts of the block's earlier tiles.
__kernel void sort_radix_down(__global uint* hist, int groups, int per,
                              __global const uint* sums, int blocks)
{
    uint d = get_local_id(0), b = GROUP_ID(0);
    if (b >= (uint)blocks)
        return;
    uint t0 = b * (uint)per, t1 = min(t0 + (uint)per, (uint)groups);
    walk_scan(hist, d, t0, t1, sums[b * RADIX + d]);
}

// One stable split of the tile by the 4 bits of each word at `bit`.
// Work-item lid holds tile words lid*PER .. lid*PER+PER-1 (k, with their
// indices in v) and stores each at its place in lk (and li), in the
// order (4-bit digit, position). Each work-item has 16 counters packed
// two to a word: digit c in the low half of cnt[c * L + lid], digit c + 8
// in the high half (a tile has under 2^16 words, so halves never carry).
// One exclusive scan of the 8 L words in (c, work-item) order ranks both
// halves at once; adding the low halves' total to the high halves puts
// digits 8..15 after 0..7.
inline void split(uint* k, uint* v, int bit, __local uint* lk, __local uint* li,
                  __local uint* cnt, __local uint* tmp)
{
    uint lid = get_local_id(0);
    for (int c = 0; c < 8; c++)
        cnt[PAD(c * L + lid)] = 0;
    uint r[PER];
#pragma unroll
    for (int e = 0; e < PER; e++) {
        uint d = (k[e] >> bit) & 15;
        uint a = PAD((d & 7) * L + lid), s = (d >> 3) * 16;
        uint c = cnt[a];
        r[e] = (c >> s) & 0xffff;
        cnt[a] = c + (1u << s);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint w[8], sum = 0;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        w[j] = cnt[PAD(lid * 8 + j)];
        sum += w[j];
    }
    uint total, acc = group_scan(sum, tmp, &total);
    acc += (total & 0xffff) << 16;
#pragma unroll
    for (int j = 0; j < 8; j++) {
        cnt[PAD(lid * 8 + j)] = acc;
        acc += w[j];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int e = 0; e < PER; e++) {
        uint d = (k[e] >> bit) & 15;
        uint p = ((cnt[PAD((d & 7) * L + lid)] >> ((d >> 3) * 16)) & 0xffff) + r[e];
        lk[PAD(p)] = k[e];
#if PAIRS
        li[PAD(p)] = v[e];
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

// Stable scatter of tile g (hist: the output positions from
// sort_radix_down). The tile is staged in local memory (coalesced reads;
// past n, all-ones words, which rank last), sorted there by its 8-bit
// digit in two stable 4-bit splits, and written out: work-item lid takes
// tile positions e*L + lid, so consecutive work-items write consecutive
// words of each digit's run. With iota, the indices are the input
// positions (the first pass).
__kernel void sort_radix_scatter(__global const uint* keys, __global const uint* idx, int n,
                                 int shift, __global const uint* hist, int groups, int iota,
                                 __global uint* okeys, __global uint* oidx)
{
    __local uint lk[PAD(B)];
#if PAIRS
    __local uint li[PAD(B)];
#else
    __local uint* li = lk;
#endif
    __local uint cnt[PAD(8 * L)];
    __local uint tmp[2 * L];
    uint lid = get_local_id(0), g = GROUP_ID(0);
    if (g >= (uint)groups)
        return;
    size_t base = (size_t)g * B;
    uint valid = (uint)min((size_t)B, (size_t)n - base);
    uint off = hist[(size_t)g * RADIX + lid];
#pragma unroll
    for (int e = 0; e < PER; e++) {
        uint i = e * L + lid;
        lk[PAD(i)] = i < valid ? keys[base + i] : 0xffffffffu;
#if PAIRS
        li[PAD(i)] = iota ? (uint)(base + i) : i < valid ? idx[base + i] : 0;
#endif
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    uint k[PER], v[PER];
    for (int nib = 0; nib < 2; nib++) {
#pragma unroll
        for (int e = 0; e < PER; e++) {
            k[e] = lk[PAD(lid * PER + e)];
            v[e] = PAIRS ? li[PAD(lid * PER + e)] : 0;
        }
        split(k, v, shift + 4 * nib, lk, li, cnt, tmp);
    }
    // tmp[d] = where digit d's run starts in the tile (digits absent from
    // the tile are never read), then its offset from the output position.
#pragma unroll
    for (int e = 0; e < PER; e++) {
        uint p = e * L + lid;
        uint d = DIGIT(lk[PAD(p)]);
        if (p == 0 || DIGIT(lk[PAD(p - 1)]) != d)
            tmp[d] = p;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    tmp[lid] = off - tmp[lid];
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (int e = 0; e < PER; e++) {
        uint p = e * L + lid;
        if (p < valid) {
            uint w = lk[PAD(p)];
            uint o = tmp[DIGIT(w)] + p;
            okeys[o] = w;
#if PAIRS
            oidx[o] = li[PAD(p)];
#endif
        }
    }
}
#endif
