// sort.cl: ascending sorts of u32 words (the host maps f32, i32 and u32
// keys to words whose unsigned order is the keys' order; src/ops/sort/keys.rs).
// Options: PAIRS (1: each word carries a u32 index, and ties between equal
// words go by index, so the sort is stable), L (work-group size), and for
// the radix kernels ITEMS (words per work-item).
//
// Watchdog chunking may split a launch with a global work offset: the
// bitonic kernels find their elements from get_global_id, which includes
// it, and the radix kernels add get_global_offset(0) / L to their group id.

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
// LSD radix sort, 4 bits per pass (8 passes), blocks of B words per group.
#define B (L * ITEMS)
#define DIGITS 16
#define DIGIT(w) (((w) >> shift) & (DIGITS - 1))

// This group's number, with a launch's global work offset.
inline uint group_no(void)
{
    return GROUP_ID(0);
}

// hist[d * groups + g] = how many words of block g have digit d.
__kernel void sort_radix_count(__global const uint* keys, int n, int shift,
                               __global uint* hist, int groups)
{
    __local uint h[DIGITS];
    uint lid = get_local_id(0), g = group_no();
    if (lid < DIGITS)
        h[lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    size_t base = (size_t)g * B;
    for (int e = 0; e < ITEMS; e++) {
        size_t i = base + e * L + lid;
        if (i < (size_t)n)
            atomic_inc(&h[DIGIT(keys[i])]);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < DIGITS && g < (uint)groups)
        hist[lid * groups + g] = h[lid];
}

// Exclusive prefix sums of hist[0..total) by one work-group: each
// work-item sums a contiguous segment, the segment sums are scanned in
// local memory, and each segment is rewritten from its start. Digit-major
// order makes each entry the first output position of its (digit, block).
__kernel void sort_radix_scan(__global uint* hist, int total)
{
    __local uint sums[L];
    uint lid = get_local_id(0);
    uint per = ((uint)total + L - 1) / L;
    uint s0 = min(lid * per, (uint)total), s1 = min(s0 + per, (uint)total);
    uint s = 0;
    for (uint i = s0; i < s1; i++)
        s += hist[i];
    sums[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    // Hillis-Steele inclusive scan of the L sums.
    for (uint d = 1; d < L; d <<= 1) {
        uint v = lid >= d ? sums[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        sums[lid] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint acc = sums[lid] - s;
    for (uint i = s0; i < s1; i++) {
        uint t = hist[i];
        hist[i] = acc;
        acc += t;
    }
}

// Stable scatter of block g: the block is staged in local memory
// (coalesced reads); work-item t owns words t*ITEMS .. t*ITEMS+ITEMS-1 of
// it, so the block's order is the order of (work-item, word). cnt[d][t]
// counts digit d in work-item t; its exclusive scan in digit-major order
// gives each (digit, work-item) its offset inside the block's run of that
// digit. With iota, the indices are the input positions (the first pass).
__kernel void sort_radix_scatter(__global const uint* keys, __global const uint* idx, int n,
                                 int shift, __global const uint* hist, int groups, int iota,
                                 __global uint* okeys, __global uint* oidx)
{
    __local uint lk[B];
#if PAIRS
    __local uint li[B];
#endif
    __local ushort cnt[DIGITS * L];
    __local uint part[L];
    uint lid = get_local_id(0), g = group_no();
    size_t base = (size_t)g * B;
    uint valid = base < (size_t)n ? min((size_t)B, (size_t)n - base) : 0;
    for (int e = 0; e < ITEMS; e++) {
        uint i = e * L + lid;
        if (i < valid) {
            lk[i] = keys[base + i];
#if PAIRS
            li[i] = iota ? (uint)(base + i) : idx[base + i];
#endif
        }
    }
    for (int d = 0; d < DIGITS; d++)
        cnt[d * L + lid] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    uint mine = lid * ITEMS;
    for (int e = 0; e < ITEMS; e++)
        if (mine + e < valid)
            cnt[DIGIT(lk[mine + e]) * L + lid]++;
    barrier(CLK_LOCAL_MEM_FENCE);
    // Exclusive scan of cnt (DIGITS * L entries): DIGITS consecutive
    // entries per work-item, then the L partial sums.
    uint s = 0;
    for (int e = 0; e < DIGITS; e++)
        s += cnt[lid * DIGITS + e];
    part[lid] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < L; d <<= 1) {
        uint v = lid >= d ? part[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        part[lid] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    uint acc = part[lid] - s;
    for (int e = 0; e < DIGITS; e++) {
        uint t = cnt[lid * DIGITS + e];
        cnt[lid * DIGITS + e] = (ushort)acc;
        acc += t;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (g >= (uint)groups)
        return;
    // Each digit's next output position for this work-item's words.
    uint next[DIGITS];
    for (int d = 0; d < DIGITS; d++)
        next[d] = hist[d * groups + g] + cnt[d * L + lid] - cnt[d * L];
    for (int e = 0; e < ITEMS; e++) {
        if (mine + e >= valid)
            break;
        uint w = lk[mine + e];
        uint o = next[DIGIT(w)]++;
        okeys[o] = w;
#if PAIRS
        oidx[o] = li[mine + e];
#endif
    }
}
#endif
