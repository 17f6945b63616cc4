// copy.cl: the plain copy kernel that bandwidth figures are measured against.
// 16 bytes per work-item, fully coalesced. `n` counts float4 elements.
__kernel void copy_f4(__global const float4* in, __global float4* out, int n)
{
    int i = get_global_id(0);
    if (i < n)
        out[i] = in[i];
}
