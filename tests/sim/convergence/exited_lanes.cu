// sim --grid 2 --block 64 --arg 0=u32:iota:100 --arg 1=u32:zeros:100 --arg 2=u32:90
// Threads past the end return; the lanes that stay use the full mask,
// which names the lanes that exited: those count as arrived (Volta and
// later). Lane 0 of each warp broadcasts, all vote and reduce.
__global__ void exited_lanes(const unsigned* x, unsigned* out, unsigned n) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    unsigned v = x[i];
    unsigned first = __shfl_sync(0xffffffffu, v, 0);
    unsigned big = __ballot_sync(0xffffffffu, v >= 80);
    unsigned sum = __reduce_add_sync(0xffffffffu, v);
    __syncwarp();
    out[i] = first + __popc(big) * 10000u + sum * 100000u;
}
