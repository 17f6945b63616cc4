// deband.cl: f3kdb's banding reduction with a counter-based RNG.
//
// Every function below repeats src/ops/deband/math.rs with the same integer
// operations (no float anywhere), so each variant's output is the CPU
// path's, byte for byte. Options:
//   SAMPLES   2 (f3kdb's column mode) or 4 (its square mode)
//   YCC_FWD   the nine RGB -> YCbCr16 coefficients (FWD_SHIFT fraction bits)
//   YCC_INV   the five YCbCr16 -> RGB coefficients, YCC_INV_SHIFT fraction bits
// Kernel arguments in the order: images, w, h, range, threshold, grain
// amplitude (fine steps), seed key, and the type's largest value.

#ifndef SAMPLES
#error "SAMPLES must be defined (2 or 4)"
#endif

#define Y_MAX 32640
#define C_MAX 16320
#define FWD_SHIFT 15
#define AVG_BIAS (1 << 14)

// lowbias32 (math.rs: mix).
inline uint mix(uint x)
{
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}

inline uint pixel_hash(uint key, int x, int y)
{
    return mix(mix(key ^ (uint)y) ^ (uint)x);
}

inline uint stream(uint h, uint s)
{
    return mix(h ^ (s * 0x9e3779b9u));
}

inline int grain(uint h, int c, int amp)
{
    return (int)mul_hi(stream(h, 2u + (uint)c), (uint)(2 * amp)) - amp;
}

// The linear indices of the reference pixels of (x, y), clamped into the
// image (math.rs: offsets, references).
inline void references(uint h, int x, int y, int w, int hgt, int range, int* idx)
{
    uint o = stream(h, 1u);
    uint n = (uint)(2 * range + 1);
    int a = (int)(((o >> 16) * n) >> 16) - range;
    int b = (int)(((o & 0xffffu) * n) >> 16) - range;
#define AT(k, dx, dy) idx[k] = clamp(y + (dy), 0, hgt - 1) * w + clamp(x + (dx), 0, w - 1)
#if SAMPLES == 2
    AT(0, 0, a);
    AT(1, 0, -a);
#else
    AT(0, a, b);
    AT(1, b, -a);
    AT(2, -a, -b);
    AT(3, -b, a);
#endif
#undef AT
}

// math.rs: rgb_sample, with the references in r[0..SAMPLES], at quarter steps
// (math.rs: RGB_FINE_SHIFT = 2) until the final rounding.
inline int rgb_sample(int p, const int* r, int thr, int g, int full)
{
    int all = 1, sum = 0;
    for (int k = 0; k < SAMPLES; k++) {
        int d = r[k] - p;
        all &= (d < thr) & (d > -thr);
        sum += r[k];
    }
    int fine = all ? sum * (4 / SAMPLES) : p * 4;
    return (clamp(fine + g, 0, full * 4) + 2) >> 2;
}

// One pixel per work-item, scalar loads of T: any type and channel count.
__kernel void deband_direct(__global const T* in, __global T* out, int w, int h,
                            int range, int thr, int amp, uint key, int full)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) {
        return;
    }
    uint hash = pixel_hash(key, x, y);
    int idx[SAMPLES];
    references(hash, x, y, w, h, range, idx);
    int i = y * w + x;
    for (int c = 0; c < (CH == 1 ? 1 : 3); c++) {
        int r[SAMPLES];
        for (int k = 0; k < SAMPLES; k++) {
            r[k] = in[idx[k] * CH + c];
        }
        int v = rgb_sample(in[i * CH + c], r, thr, grain(hash, c, amp), full);
        out[i * CH + c] = (T)v;
    }
    if (CH == 4) {
        out[i * CH + 3] = in[i * CH + 3];
    }
}

// RGBA8 as one aligned uchar4 load per pixel (T = uchar, CH = 4 only).
__kernel void deband_rgba8(__global const uchar4* in, __global uchar4* out, int w, int h,
                           int range, int thr, int amp, uint key, int full)
{
    int x = get_global_id(0), y = get_global_id(1);
    if (x >= w || y >= h) {
        return;
    }
    uint hash = pixel_hash(key, x, y);
    int idx[SAMPLES];
    references(hash, x, y, w, h, range, idx);
    int4 ref[SAMPLES];
    for (int k = 0; k < SAMPLES; k++) {
        ref[k] = convert_int4(in[idx[k]]);
    }
    int4 p = convert_int4(in[y * w + x]);
    int r[SAMPLES];
#define PLANE(c, s)                                                  \
    for (int k = 0; k < SAMPLES; k++) {                              \
        r[k] = ref[k].s;                                             \
    }                                                                \
    p.s = rgb_sample(p.s, r, thr, grain(hash, c, amp), full)
    PLANE(0, x);
    PLANE(1, y);
    PLANE(2, z);
#undef PLANE
    out[y * w + x] = convert_uchar4(p);
}

// ---- space=ycc: RGB -> YCbCr16 (short y, cb, cr) -> filter -> RGB ----

#ifndef YCC_FWD
#error "YCC_FWD, YCC_INV and YCC_INV_SHIFT must be defined"
#endif
__constant int fwd[9] = {YCC_FWD};
__constant int inv[5] = {YCC_INV};

// math.rs: YccCoefficients::to_ycc.
inline int3 to_ycc(int3 c)
{
    int rnd = 1 << (FWD_SHIFT - 1);
    int y = fwd[0] * c.x + fwd[1] * c.y + fwd[2] * c.z;
    int cb = fwd[3] * c.x + fwd[4] * c.y + fwd[5] * c.z;
    int cr = fwd[6] * c.x + fwd[7] * c.y + fwd[8] * c.z;
    return (int3)(clamp((y + rnd) >> FWD_SHIFT, 0, Y_MAX),
                  clamp(((cb + (C_MAX << FWD_SHIFT) + rnd) >> FWD_SHIFT) - C_MAX, -C_MAX, C_MAX),
                  clamp(((cr + (C_MAX << FWD_SHIFT) + rnd) >> FWD_SHIFT) - C_MAX, -C_MAX, C_MAX));
}

// math.rs: YccCoefficients::to_rgb.
inline int3 to_rgb(int3 v, int full)
{
    int base = inv[0] * v.x + (full << YCC_INV_SHIFT) + (1 << (YCC_INV_SHIFT - 1));
    int3 s = (int3)(base + inv[1] * v.z, base + inv[2] * v.y + inv[3] * v.z, base + inv[4] * v.y);
    return clamp((s >> YCC_INV_SHIFT) - full, 0, full);
}

// math.rs: ycc_sample on the three planes at once.
inline int3 ycc_filter(int3 p, const int3* r, int thr, uint hash, int amp)
{
    int3 all = (int3)(-1), sum = (int3)(0);
    for (int k = 0; k < SAMPLES; k++) {
        int3 d = r[k] - p;
        all &= (d < thr) & (d > -thr);
        sum += r[k];
    }
    int3 avg = ((sum + SAMPLES * AVG_BIAS + SAMPLES / 2) >> (SAMPLES == 2 ? 1 : 2)) - AVG_BIAS;
    int3 g = (int3)(grain(hash, 0, amp), grain(hash, 1, amp), grain(hash, 2, amp));
    return clamp(select(p, avg, all) + g, (int3)(0, -C_MAX, -C_MAX), (int3)(Y_MAX, C_MAX, C_MAX));
}

// The three layouts of n YCbCr16 pixels, as loads and stores of pixel i:
// short3 packed (6 bytes, vload3), short4 padded (8 bytes, one aligned
// vector access), and SoA (three planes of n shorts, three scalar accesses).
#define LOAD_short3(p, i, n) convert_int3(vload3((i), (p)))
#define STORE_short3(v, p, i, n) vstore3(convert_short3(v), (i), (p))
#define LOAD_short4(p, i, n) convert_int3(((__global const short4*)(p))[i].xyz)
#define STORE_short4(v, p, i, n) (((__global short4*)(p))[i] = (short4)(convert_short3(v), 0))
#define LOAD_soa(p, i, n) (int3)((int)(p)[i], (int)(p)[(i) + (n)], (int)(p)[(i) + 2 * (n)])
#define STORE_soa(v, p, i, n) ((p)[i] = (short)(v).x, (p)[(i) + (n)] = (short)(v).y, \
                               (p)[(i) + 2 * (n)] = (short)(v).z)

// Per layout: `_to` converts a T image of CH (3 or 4) channels, `deband_ycc_L`
// filters (one pixel per work-item, layout in, layout out), `_from` converts
// back, copying alpha from the original image.
#define YCC_KERNELS(L)                                                                         \
    __kernel void deband_ycc_##L##_to(__global const T* in, __global short* ycc, int n)        \
    {                                                                                          \
        int i = get_global_id(0);                                                              \
        if (i < n) {                                                                           \
            int3 c = (int3)((int)in[i * CH], (int)in[i * CH + 1], (int)in[i * CH + 2]);          \
            STORE_##L(to_ycc(c), ycc, i, n);                                                   \
        }                                                                                      \
    }                                                                                          \
    __kernel void deband_ycc_##L(__global const short* src, __global short* dst, int w, int h, \
                                 int range, int thr, int amp, uint key, int full)              \
    {                                                                                          \
        int x = get_global_id(0), y = get_global_id(1);                                        \
        if (x >= w || y >= h) {                                                                \
            return;                                                                            \
        }                                                                                      \
        int n = w * h;                                                                         \
        uint hash = pixel_hash(key, x, y);                                                     \
        int idx[SAMPLES];                                                                      \
        references(hash, x, y, w, h, range, idx);                                              \
        int3 r[SAMPLES];                                                                       \
        for (int k = 0; k < SAMPLES; k++) {                                                    \
            r[k] = LOAD_##L(src, idx[k], n);                                                   \
        }                                                                                      \
        int i = y * w + x;                                                                     \
        int3 v = ycc_filter(LOAD_##L(src, i, n), r, thr, hash, amp);                           \
        STORE_##L(v, dst, i, n);                                                               \
    }                                                                                          \
    __kernel void deband_ycc_##L##_from(__global const short* ycc, __global const T* in,      \
                                        __global T* out, int n, int full)                      \
    {                                                                                          \
        int i = get_global_id(0);                                                              \
        if (i < n) {                                                                           \
            int3 c = to_rgb(LOAD_##L(ycc, i, n), full);                                        \
            out[i * CH] = (T)c.x;                                                              \
            out[i * CH + 1] = (T)c.y;                                                          \
            out[i * CH + 2] = (T)c.z;                                                          \
            if (CH == 4) {                                                                     \
                out[i * CH + 3] = in[i * CH + 3];                                              \
            }                                                                                  \
        }                                                                                      \
    }

YCC_KERNELS(short3)
YCC_KERNELS(short4)
YCC_KERNELS(soa)
