// histogram.cl: per-channel histograms with exact integer counts.
// Options: LWS (work-group size), PER_ITEM (pixels per work-item of
// local_private, a host choice per image), HIST_LEN (local_private's local array, so a program is
// built per bin count: CH * bins, or bins with ONE_CHANNEL; HALF_COUNTS
// keeps them in 16-bit halves; LEVEL_SHIFT, TOP and LAST bin u16 by a
// shift;
// u8 samples take BYTE_BINS instead, one
// program for every bin count).
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
// then added to `counts` with one global atomic per non-empty bin (per
// non-empty level for u8, unless SHARED_BINS).
#ifdef BYTE_BINS
// local_private for uchar samples (the host defines BYTE_BINS for them):
// a group counts each channel's 256 levels, the byte itself, with no float
// math, and its merge adds level v's count into bin_of(v), whatever the
// bins (as the rayon path, `levels.rs`, and OpenCV's calcHist on 8-bit
// images do). With bins of their own (4096 bins of u8 RGB in 48 KiB of
// local memory) RGB and RGBA did not fit and fell to global atomics: 1 %
// of copy on the H200. The group's tile is
// LWS * BYTE_ITEM consecutive pixels (it starts at a multiple of 16
// bytes); byte b of the image is channel b % CH. A work-item reads uint4
// chunks of 16 bytes, chunk q of the tile at q * LWS + lid, so a warp's
// loads are 512 consecutive bytes.
//
// Bank slots. Local memory has 32 banks of 32-bit words, and a warp's
// atomics on different words of one bank take one pass each (random bins:
// about 3.5 passes per instruction). Here bin v has a row of 32 words,
// v * 32 + bank, and the work-item of lane L (lid % 32) counts a sample of
// channel c only in its bank for c, so the 32 lanes of an atomic
// instruction hit 32 banks and 32 different words whatever the bins (a
// flat image costs no more than a random one):
// - gray: bank L.
// - RGBA: in step k of a word, lane L counts byte (k + L) % 4 (its word
//   turned right by L % 4 bytes), of channel c = (k + L) % 4, in bank
//   c * 8 + L / 4: the 8 lanes of a channel have 8 different banks.
// - RGB: 16 = 1 (mod 3), so byte k of the chunks that one load
//   instruction brings to a warp is channel (X + k + L) % 3 for lane L,
//   X the same for the whole warp: in each step the lanes of one channel
//   have one value of L % 3, and count in slot s = L / 3 (0..10), bank
//   c * 11 + s. That would be 33 banks: (2, 10), used by lanes 30 and 31
//   only, is a 16-bit count in the high half of the word of (1, 10) (bank
//   21) for lane 30 and of (0, 10) (bank 10) for lane 31. Lanes 30 and 31
//   hold channels c and c + 1 (mod 3) in a step, so the one of those two
//   words that one of them writes is never the other's. Each half counts
//   at most the 2 * LWS / 32 work-items of lanes 30 and 31 times 6 samples
//   of a chunk (checked below).
// 32 KiB; a count's words (halves) are summed at the merge.
#define CHUNKS (BYTE_ITEM * CH / 16)
#if (BYTE_ITEM * CH) % 16 != 0
#error "BYTE_ITEM * CH must be a multiple of 16"
#endif
#if CH == 3 && 2 * (LWS / 32) * CHUNKS * 6 > 65535
#error "RGB's 16-bit counts of slot 10 could overflow"
#endif
#define HIST_WORDS (256 * 32)

#ifdef SHARED_BINS
// Neighbouring levels share bins (the host defines SHARED_BINS then): the
// group's level counts go to the first CH * 256 words of the slots (kept
// in registers until every work-item has read the slots), and each bin's
// first level adds its run of levels with one atomic, rather than up to
// 256 atomics a group on one word (one bin: 262144 on one address at
// 8192x8192 gray). A work-item holds at most CH level counts.
#if LWS < 256
#error "SHARED_BINS keeps at most CH level counts a work-item"
#endif
#define ADD_LEVEL(c, v, s)                                              \
    {                                                                   \
        mine[held] = (s);                                               \
        where[held] = (c) * 256 + (v);                                  \
        held++;                                                         \
    }
#else
// Adds the group's count s of level v of channel c to its bin.
#define ADD_LEVEL(c, v, s)                                              \
    if (s) {                                                            \
        int b_ = bin_of((float)(v), lo, hi, scale, bins);               \
        if (b_ >= 0) atomic_add(&counts[(c) * bins + b_], (s));         \
    }
#endif

// Lane `lane`'s bank for channel c, and the amount that counts one sample
// there (1, or 1 << 16 for RGB's high halves).
inline int lane_bank(int lane, int c)
{
#if CH == 1
    return lane;
#elif CH == 4
    return c * 8 + lane / 4;
#else
    int s = lane / 3;
    return c == 2 && s == 10 ? (lane == 30 ? 21 : 10) : c * 11 + s;
#endif
}
inline uint lane_inc(int lane, int c)
{
    return CH == 3 && c == 2 && lane >= 30 ? 1u << 16 : 1u;
}

// Counts byte `v` (a uint) in bank `bk` by `inc`.
#define COUNT_BYTE(v, bk, inc) atomic_add(&hist[((v) << 5) + (bk)], (inc))
#if CH == 1
#define COUNT_WORD(w, j0)                                               \
    for (int k_ = 0; k_ < 4; k_++) COUNT_BYTE(((w) >> (8 * k_)) & 255u, lane, 1u);
#elif CH == 4
#define COUNT_WORD(w, j0)                                               \
    {                                                                   \
        uint r_ = rotate((w), turn);                                    \
        for (int k_ = 0; k_ < 4; k_++)                                  \
            COUNT_BYTE((r_ >> (8 * k_)) & 255u, bank[k_], 1u);          \
    }
#else
// Byte k of a chunk is in class (j0 + k) % 3 (j0: the word's first byte):
// channel (c0 + j) % 3 for a chunk starting at channel c0.
#define COUNT_WORD(w, j0)                                               \
    for (int k_ = 0; k_ < 4; k_++)                                      \
        COUNT_BYTE(((w) >> (8 * k_)) & 255u, rb[((j0) + k_) % 3], ri[((j0) + k_) % 3]);
#endif
#if CH == 3
// Channel c0 is that of the chunk's first byte (b0 % 3 = (first % 3 + q) % 3).
#define COUNT_CHUNK(a, q)                                               \
    {                                                                   \
        int c0_ = (int)((first3 + (q) % 3) % 3);                        \
        int rb[3] = {c0_ == 0 ? bank[0] : c0_ == 1 ? bank[1] : bank[2], \
                     c0_ == 0 ? bank[1] : c0_ == 1 ? bank[2] : bank[0], \
                     c0_ == 0 ? bank[2] : c0_ == 1 ? bank[0] : bank[1]}; \
        uint ri[3] = {c0_ == 0 ? inc[0] : c0_ == 1 ? inc[1] : inc[2],   \
                      c0_ == 0 ? inc[1] : c0_ == 1 ? inc[2] : inc[0],   \
                      c0_ == 0 ? inc[2] : c0_ == 1 ? inc[0] : inc[1]};  \
        COUNT_WORD(a.x, 0) COUNT_WORD(a.y, 1) COUNT_WORD(a.z, 2) COUNT_WORD(a.w, 0) \
    }
#else
#define COUNT_CHUNK(a, q) COUNT_WORD(a.x, 0) COUNT_WORD(a.y, 0) COUNT_WORD(a.z, 0) COUNT_WORD(a.w, 0)
#endif

__kernel void histogram_local_private(__global const T* in, int n, float lo, float hi,
                                      float scale, int bins, __global uint* counts)
{
    __local uint4 hist4[HIST_WORDS / 4];
#ifdef SHARED_BINS
    uint mine[CH];
    int where[CH], held = 0;
#endif
    __local uint* hist = (__local uint*)hist4;
    int lid = get_local_id(0);
    for (int j = lid; j < HIST_WORDS / 4; j += LWS) hist4[j] = (uint4)(0);
    barrier(CLK_LOCAL_MEM_FENCE);
    int lane = lid % 32;
    // bank[j], inc[j]: RGBA, for step j of a turned word (channel
    // (j + lane) % 4); RGB, for channel j; gray counts in bank `lane`.
    int bank[CH];
    uint inc[CH];
    for (int j = 0; j < CH; j++) {
        int c = CH == 4 ? (j + lane) % 4 : j;
        bank[j] = lane_bank(lane, c);
        inc[j] = lane_inc(lane, c);
    }
#if CH == 4
    uint turn = (32 - 8 * (lane % 4)) % 32;
#endif
    __global const uchar* bytes = (__global const uchar*)in;
    size_t total = (size_t)n * CH;
    // The group's tile from its global position: chunked launches agree.
    size_t first = (get_global_id(0) - lid) * (size_t)(BYTE_ITEM * CH);
    __global const uint4* quads = (__global const uint4*)(bytes + first);
    uint first3 = (uint)(first % 3);
    for (int r0 = 0; r0 < CHUNKS; r0 += UNROLL) {
        uint4 v[UNROLL];
        for (int u = 0; u < UNROLL; u++) {
            uint q = (uint)((r0 + u) * LWS + lid);
            if (r0 + u < CHUNKS && first + 16 * (size_t)q + 16 <= total) v[u] = quads[q];
        }
        for (int u = 0; u < UNROLL; u++) {
            uint q = (uint)((r0 + u) * LWS + lid);
            size_t b0 = first + 16 * (size_t)q;
            if (r0 + u >= CHUNKS) break;
            if (b0 + 16 <= total) {
                COUNT_CHUNK(v[u], q)
            } else {
                for (size_t b = b0; b < total && b < b0 + 16; b++) {
                    int c = (int)(b % CH);
                    atomic_add(&hist[((uint)bytes[b] << 5) + lane_bank(lane, c)], lane_inc(lane, c));
                }
            }
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    // Bin v's row is uint4s v * 8 .. v * 8 + 7. Neighbouring work-items
    // start at different uint4s of their rows, so a warp's loads spread
    // over every bank.
#if CH == 4
    for (int p = lid; p < CH * 256; p += LWS) {
        // Count (c, v): banks c * 8 .. c * 8 + 7, uint4s v * 8 + c * 2 + 0, 1.
        int c = p % 4, v = p / 4;
        int q = v * 8 + c * 2;
        uint4 a = hist4[q + v % 2] + hist4[q + 1 - v % 2];
        uint s = a.x + a.y + a.z + a.w;
        ADD_LEVEL(c, v, s)
    }
#elif CH == 1
    for (int v = lid; v < 256; v += LWS) {
        uint4 a = (uint4)(0);
        for (int i = 0; i < 8; i++) a += hist4[v * 8 + (i + v) % 8];
        uint s = a.x + a.y + a.z + a.w;
        ADD_LEVEL(0, v, s)
    }
#else
    for (int v = lid; v < 256; v += LWS) {
        // Bank b holds channel b / 11; banks 10 and 21 hold channel 2's
        // (2, 10) in their high halves.
        uint s0 = 0, s1 = 0, s2 = 0;
        for (int i = 0; i < 8; i++) {
            int j = (i + v) % 8;
            uint4 a = hist4[v * 8 + j];
            uint w[4] = {a.x, a.y, a.z, a.w};
            for (int e = 0; e < 4; e++) {
                int b = 4 * j + e;
                bool halves = b == 10 || b == 21;
                uint low = halves ? w[e] & 0xFFFFu : w[e];
                s0 += b < 11 ? low : 0u;
                s1 += b >= 11 && b < 22 ? low : 0u;
                s2 += (b >= 22 ? low : 0u) + (halves ? w[e] >> 16 : 0u);
            }
        }
        ADD_LEVEL(0, v, s0)
        ADD_LEVEL(1, v, s1)
        ADD_LEVEL(2, v, s2)
    }
#endif
#ifdef SHARED_BINS
    // A bin's levels are a run (bin_of is monotone in v over the range), so
    // its count is a difference of the level counts' prefix sums: the
    // run's last level adds the sum through it, and its first level takes
    // off the sum before it (modulo 2^32, so the bin's total is exact
    // whatever order the atomics land in). Each channel's 256 counts are
    // scanned in 8 steps between two buffers of the slots. A loop over
    // each bin's run from its first level took 49 us at 8192x8192 u8 gray
    // in 2 bins against 32 us in 256 (H200, docs/results/2026-11-29-s48-gpu.md).
    __local uint* lev = hist;
    __local uint* next = hist + 4 * 256;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < held; k++) lev[where[k]] = mine[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int d = 1; d < 256; d *= 2) {
        for (int p = lid; p < CH * 256; p += LWS) next[p] = lev[p] + (p % 256 >= d ? lev[p - d] : 0u);
        barrier(CLK_LOCAL_MEM_FENCE);
        __local uint* t = lev;
        lev = next;
        next = t;
    }
    for (int p = lid; p < CH * 256; p += LWS) {
        int c = p / 256, v = p % 256;
        int b = bin_of((float)v, lo, hi, scale, bins);
        if (b < 0) continue;
        if ((v == 255 || bin_of((float)(v + 1), lo, hi, scale, bins) != b) && lev[p])
            atomic_add(&counts[c * bins + b], lev[p]);
        if (v > 0 && bin_of((float)(v - 1), lo, hi, scale, bins) != b && lev[p - 1])
            atomic_sub(&counts[c * bins + b], lev[p - 1]);
    }
#endif
}
#elif defined(HIST_LEN)
// Gray samples per 16-byte load: 8 of ushort, else 4 (float; uchar takes
// the byte path). u16 in 8-byte loads of 4 read 49-50 % of copy on the
// H200, where f32's 16-byte ones read 77 % (8192x8192, s47).
#define GN_ushort 8
#define GN_float 4
#define GN_uchar 4
#define GN CAT(GN_, T)
#if PER_ITEM % (GN * UNROLL) != 0
#error "PER_ITEM must be a multiple of GN * UNROLL"
#endif
#ifdef HALF_COUNTS
// Two 16-bit counts a word, count j in half j % 2 of word j / 2: twice
// the bins in the same local memory (4096 bins of u16 RGBA took 4.9 ms in
// global atomics on the H200). A group counts at most LWS * PER_ITEM
// samples of a channel, so a half cannot carry into its neighbour.
#if LWS * PER_ITEM > 65535
#error "16-bit counts could overflow"
#endif
#define HIST_WORDS ((HIST_LEN + 1) / 2)
#define COUNT_AT(j) atomic_add(&hist[(j) >> 1], 1u << (((j) & 1) << 4))
#else
#define HIST_WORDS HIST_LEN
#define COUNT_AT(j) atomic_inc(&hist[j])
#endif
#ifdef LEVEL_SHIFT
// u16 samples whose bin is min(v >> LEVEL_SHIFT, LAST) for every level
// v <= TOP, and none above (the host checks the levels against the f32
// formula, Binning::level_shift): integer lanes and a shift, no float
// math.
#define QUADV CAT(uint, GN)
#define TO_QUADV CAT(convert_, QUADV)
#define PIXV VEC(uint)
#define TO_PIXV CAT(convert_, VEC(uint))
#define TO_SCALAR(v) ((uint)(v))
#define BIN(v) ((v) <= TOP ? min((int)((v) >> LEVEL_SHIFT), LAST) : -1)
#else
#define QUADV CAT(float, GN)
#define TO_QUADV CAT(convert_, QUADV)
#define PIXV FLOATN
#define TO_PIXV TO_FLOATN
#define TO_SCALAR(v) convert_float(v)
#define BIN(v) bin_of((v), lo, hi, scale, bins)
#endif
// Counts gray sample v, and the GN samples of a load.
#define COUNT_GRAY(v)                                                   \
    {                                                                   \
        int b_ = BIN(v);                                                \
        if (b_ >= 0) COUNT_AT(b_);                                      \
    }
#define COUNT4(p) COUNT_GRAY((p).s0) COUNT_GRAY((p).s1) COUNT_GRAY((p).s2) COUNT_GRAY((p).s3)
#if GN == 8
#define COUNT_LOAD(p) COUNT4((p).lo) COUNT4((p).hi)
#else
#define COUNT_LOAD(p) COUNT4(p)
#endif
__kernel void histogram_local_private(__global const T* in, int n, float lo, float hi,
                                      float scale, int bins, __global uint* counts)
{
    __local uint hist[HIST_WORDS];
    int lid = get_local_id(0);
#ifdef ONE_CHANNEL
    // The group counts channel k0 alone (dimension 1 of the launch), so
    // that more bins than the channels' together fit still fit one
    // channel's: each channel's groups read the whole pixels.
    int k0 = get_global_id(1), k1 = k0 + 1, total = bins;
#else
    int k0 = 0, k1 = CH, total = CH * bins;
#endif
#ifdef HALF_COUNTS
    int words = (total + 1) / 2;
#else
    int words = total;
#endif
    for (int j = lid; j < words; j += LWS) hist[j] = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    // The group's tile from its global position: chunked launches agree.
    size_t first = (get_global_id(0) - lid) * PER_ITEM;
#if CH == 1
    // Gray: GN samples per aligned vector load (load q is samples
    // GN q .. GN q + GN - 1; a tile starts at a multiple of GN, PER_ITEM
    // being one), a partial last load sample by sample. UNROLL loads go
    // out before the atomics that the compiler would not move them across.
    size_t q0 = first / GN;
    for (int r0 = 0; r0 < PER_ITEM / GN; r0 += UNROLL) {
        QUADV p[UNROLL];
        for (int u = 0; u < UNROLL; u++) {
            size_t q = q0 + (size_t)(r0 + u) * LWS + lid;
            if (GN * q + GN <= (size_t)n) p[u] = TO_QUADV(((__global const CAT(T, GN)*)in)[q]);
        }
        for (int u = 0; u < UNROLL; u++) {
            size_t q = q0 + (size_t)(r0 + u) * LWS + lid;
            if (GN * q + GN <= (size_t)n) {
                COUNT_LOAD(p[u])
            } else {
                for (size_t i = GN * q; i < (size_t)n; i++) COUNT_GRAY(TO_SCALAR(in[i]))
            }
        }
    }
#else
    // Loads go out UNROLL at a time, before the atomics that the compiler
    // would not move them across: more bytes in flight per work-item.
    for (int r0 = 0; r0 < PER_ITEM; r0 += UNROLL) {
        PIXV p[UNROLL];
        for (int u = 0; u < UNROLL; u++) {
            size_t i = first + (size_t)(r0 + u) * LWS + lid;
            if (i < (size_t)n) p[u] = TO_PIXV(LOADP(in, i));
        }
        for (int u = 0; u < UNROLL; u++) {
            size_t i = first + (size_t)(r0 + u) * LWS + lid;
            if (i < (size_t)n) {
                for (int k = k0; k < k1; k++) {
                    int b = BIN(SAMPLE(p[u], k));
                    if (b >= 0) COUNT_AT((k - k0) * bins + b);
                }
            }
        }
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    __global uint* out = counts + k0 * bins;
    for (int j = lid; j < words; j += LWS) {
        uint c = hist[j];
#ifdef HALF_COUNTS
        // A high half is only counted where 2 j + 1 < total.
        if (c & 0xFFFFu) atomic_add(&out[2 * j], c & 0xFFFFu);
        if (c >> 16) atomic_add(&out[2 * j + 1], c >> 16);
#else
        if (c) atomic_add(&out[j], c);
#endif
    }
}
#endif
