// sim --grid 2 --block 128 --arg 0=f32:iota:256 --arg 1=f32:zeros:1
// A reduction in registers: shuffles within each warp, one partial per
// warp through shared memory behind a barrier, one atomic per block.
extern "C" __global__ void warp_reduce_shuffle(const float* x, float* out) {
    __shared__ float part[4];
    unsigned t = threadIdx.x;
    float v = x[blockIdx.x * 128 + t];
    for (unsigned d = 16; d > 0; d >>= 1) v += __shfl_down_sync(0xffffffffu, v, d);
    if (t % 32 == 0) part[t / 32] = v;
    __syncthreads();
    if (t == 0) atomicAdd(out, part[0] + part[1] + part[2] + part[3]);
}
