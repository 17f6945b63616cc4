// common.cl: prepended to every program.
//
// Every program is built with -D options that fix its pixel type:
//   T   the sample type of the input (uchar, ushort, float)
//   CH  samples per pixel (1, 3, 4)
// Buffers are plain arrays of T with CH interleaved samples per pixel, so a
// pixel is loaded with vloadN, which needs no alignment beyond that of T.

// The work-group's index in the whole range. A launch may be split into
// chunks that each start at a global offset (watchdog-safe dispatch,
// src/backend/opencl/launch.rs), and get_group_id counts from 0 in every
// chunk, while get_global_id includes the offset; offsets are whole groups.
// Kernels locate their data with get_global_id or GROUP_ID, never with
// get_group_id alone.
#define GROUP_ID(d) (get_group_id(d) + get_global_offset(d) / get_local_size(d))

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if CH == 1
#define VEC(t) t
#define LOADP(p, i) ((p)[(i)])
#define STOREP(v, p, i) ((p)[(i)] = (v))
// Widen a float4 to the pixel's float vector and back.
#define F4_TO_N(v) ((v).x)
#define N_TO_F4(v) ((float4)((v), 0.0f, 0.0f, 0.0f))
#elif CH == 3
#define VEC(t) CAT(t, 3)
#define LOADP(p, i) vload3((i), (p))
#define STOREP(v, p, i) vstore3((v), (i), (p))
#define F4_TO_N(v) ((v).xyz)
#define N_TO_F4(v) ((float4)((v), 0.0f))
#elif CH == 4
#define VEC(t) CAT(t, 4)
#define LOADP(p, i) vload4((i), (p))
#define STOREP(v, p, i) vstore4((v), (i), (p))
#define F4_TO_N(v) (v)
#define N_TO_F4(v) (v)
#else
#error "CH must be 1, 3 or 4"
#endif

// The pixel type and its float counterpart.
#define PIX VEC(T)
#define FLOATN VEC(float)
#define TO_FLOATN(v) CAT(convert_, FLOATN)(v)

// Pixel i of a buffer `p` of PIX (reduce, stats). vload4 promises only
// the sample's alignment, so a compiler may split it into four loads
// (NVIDIA's does for uchar4); a 4-channel pixel of a buffer (the buffer's
// start is aligned far more) is aligned to its whole size, so it loads as
// one vector.
#if CH == 4
#define LOADPIX(p, i) (((__global const PIX*)(p))[(i)])
#else
#define LOADPIX(p, i) LOADP(p, i)
#endif
