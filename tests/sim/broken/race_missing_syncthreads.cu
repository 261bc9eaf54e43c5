// sim --grid 2 --block 128 --arg 0=f32:iota:256 --arg 1=f32:zeros:256
// An exchange through shared memory without the `__syncthreads()` between
// the writes and the reads: each thread reads the element its left
// neighbour writes.
extern "C" __global__ void race_missing_syncthreads(const float* x, float* out) {
    __shared__ float tile[128];
    unsigned t = threadIdx.x, i = blockIdx.x * 128 + t;
    tile[t] = x[i];
    if (t > 0) out[i] = tile[t - 1]; //~ S0030 ld.shared
}
