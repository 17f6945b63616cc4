// ptx.cl: NVIDIA inline-PTX helpers, listed first by the variants whose
// table entries require an NVIDIA device (reduce's x_shfl, stats'
// vec4_dp4a). PTX is NVIDIA's dialect: no other device builds this file.

// c + the dot product of a's and b's four unsigned bytes (dp4a against
// 0x01010101 adds a word's four bytes; exact into a u32 accumulator while
// the caller's bound on the count holds).
inline uint dp4a(uint a, uint b, uint c)
{
    uint d;
    asm("dp4a.u32.u32 %0, %1, %2, %3;" : "=r"(d) : "r"(a), "r"(b), "r"(c));
    return d;
}

// Lane (own lane ^ m)'s word v; every lane of the warp must execute it.
inline uint shfl_xor(uint v, int m)
{
    uint r;
    asm volatile("shfl.sync.bfly.b32 %0, %1, %2, 0x1f, 0xffffffff;" : "=r"(r) : "r"(v), "r"(m));
    return r;
}

inline float shfl_xor_f(float v, int m)
{
    return as_float(shfl_xor(as_uint(v), m));
}

inline ulong shfl_xor_ul(ulong v, int m)
{
    return ((ulong)shfl_xor((uint)(v >> 32), m) << 32) | shfl_xor((uint)v, m);
}

// Makes this work-item's earlier global writes and atomics visible to the
// whole device before its later ones.
inline void fence_device(void)
{
    asm volatile("membar.gl;" ::: "memory");
}
